//! Views: an array's elements seen through another shape, order or selection without copying
//! them (`ArrayView`), and the shape operations that make them (transpose, permute, slicing with
//! steps, reshape, squeeze, expand_dims, broadcast_to).
//!
//! A view borrows its array and holds a strided [`Layout`] (shape, strides, offset). Nothing is
//! copied until a result needs its own buffer: [`ArrayView::copy`] runs one strided copy kernel
//! (on a GPU) or one parallel pass (on the CPU); elementwise operators read views directly, and
//! every other array operation is a method of the view too (`delegate`: the view is used in
//! place when it is its whole array in C order, else copied once by the strided copy first).
//! [`ArrayViewMut`] (`a.slice_mut(s![..])?`) writes into the parent: `assign`, `fill`.
//!
//! A view borrows its array, so a notebook (evcxr) cannot keep one in a variable from one cell to
//! the next: use it within the cell (`let c = a.t().copy()?;`, `(&a.t() + &b)?`, or a `{ .. }`
//! block), or keep the copy.
//!
//! Files: `layout` (the index arithmetic), `shape_arg` (shapes with `-1`, axes that may be
//! negative), `materialize` (strided copies on both backends), `cpu` (strided loops on the
//! host), `ops` (elementwise arithmetic and comparisons on views and broadcasting between
//! arrays), `join` (concatenate, stack, flatten), `delegate` (every other array method on
//! views), `assign` (writable views: slice assignment), `tests`.

mod assign;
mod cpu;
pub(crate) mod delegate;
#[cfg(test)]
mod delegate_tests;
mod join;
pub(crate) mod layout;
mod materialize;
pub(crate) mod ops;
mod shape_arg;
#[cfg(test)]
mod tests;

pub use assign::ArrayViewMut;
pub use join::{concatenate, stack};
pub use ops::{IntoViewOperand, ViewOperand};
pub use shape_arg::{AxisIndex, NewShape};

pub(crate) use layout::{c_strides, Layout};

use super::Array;
use crate::device::Device;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use ndarray::SliceInfoElem;

/// A borrowed, possibly strided view of an [`Array`]'s elements: a transpose, a slice with
/// steps, a reshape, a broadcast. Made by [`Array::view`], [`Array::t`], [`Array::slice`], ...;
/// copied into a new C-contiguous array by [`ArrayView::copy`].
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::<f64>::arange_on(0.0, 6.0, &Device::Cpu)?.into_shape([2, 3])?;
/// let t = a.t();                                 // shape [3, 2], nothing copied
/// assert_eq!(t.copy()?.to_vec()?, vec![0., 3., 1., 4., 2., 5.]);
/// let every_other = a.slice(s![.., ..;2])?;      // columns 0 and 2
/// assert_eq!(every_other.to_vec()?, vec![0., 2., 3., 5.]);
/// // Every array operation takes a view directly:
/// assert_eq!(a.slice(s![.., 1..;2])?.sum()?, 1. + 4.);
/// assert_eq!(a.t().sqrt()?.shape(), &[3, 2]);
/// assert_eq!((&a.t() * 2.0)?.to_vec()?, vec![0., 6., 2., 8., 4., 10.]);
/// # Ok(()) }
/// ```
pub struct ArrayView<'a, T: Element> {
    base: &'a Array<T>,
    layout: Layout,
}

impl<T: Element> Clone for ArrayView<'_, T> {
    fn clone(&self) -> Self {
        ArrayView {
            base: self.base,
            layout: self.layout.clone(),
        }
    }
}

/// Things that can be seen as a view: arrays and views (by value or by reference), so that
/// [`concatenate`], [`stack`] and the view operators take either.
pub trait AsView<T: Element> {
    /// The elements as a view.
    fn as_view(&self) -> ArrayView<'_, T>;
}

impl<T: Element> AsView<T> for Array<T> {
    fn as_view(&self) -> ArrayView<'_, T> {
        self.view()
    }
}

impl<T: Element> AsView<T> for ArrayView<'_, T> {
    fn as_view(&self) -> ArrayView<'_, T> {
        ArrayView {
            base: self.base,
            layout: self.layout.clone(),
        }
    }
}

impl<T: Element, V: AsView<T> + ?Sized> AsView<T> for &V {
    fn as_view(&self) -> ArrayView<'_, T> {
        (**self).as_view()
    }
}

impl<T: Element> Array<T> {
    /// The whole array as a view (C-contiguous; nothing copied).
    pub fn view(&self) -> ArrayView<'_, T> {
        ArrayView {
            base: self,
            layout: Layout::contiguous(self.shape()),
        }
    }

    /// The transpose (axes reversed, NumPy's `a.T`), as a view: nothing is copied until
    /// [`ArrayView::copy`] (one tiled transpose kernel on a GPU).
    pub fn t(&self) -> ArrayView<'_, T> {
        self.view().t()
    }

    /// The transpose (axes reversed), as a view; the same as [`Array::t`].
    pub fn transpose(&self) -> ArrayView<'_, T> {
        self.view().t()
    }

    /// The axes reordered (NumPy's `transpose(axes)`): axis `k` of the view is axis `axes[k]`
    /// of the array. An error unless `axes` is a permutation of `0..ndim`.
    pub fn permute(&self, axes: &[usize]) -> Result<ArrayView<'_, T>> {
        self.view().permute(axes)
    }

    /// A selection with ranges, steps and indices on any axis, as a view (nothing copied),
    /// written with the `s!` macro (ndarray's, re-exported by the prelude): `a.slice(s![1..3,
    /// ..;2])`, `a.slice(s![.., -1])`, `a.slice(s![..;-1, NewAxis])`. Ranges are clamped to the
    /// axis as in NumPy; an index out of range or a step of 0 is an error. A negative step walks
    /// the range from its end, as in ndarray (`s![1..4;-1]` selects 3, 2, 1). Slicing a leading
    /// axis of a contiguous array gives a contiguous view, still without a copy.
    pub fn slice(&self, info: impl AsRef<[SliceInfoElem]>) -> Result<ArrayView<'_, T>> {
        self.view().slice(info)
    }

    /// The array without its axes of length 1, as a view.
    pub fn squeeze(&self) -> ArrayView<'_, T> {
        self.view().squeeze()
    }

    /// The array without axis `axis` (which must have length 1), as a view.
    pub fn squeeze_axis(&self, axis: impl AxisIndex) -> Result<ArrayView<'_, T>> {
        self.view().squeeze_axis(axis)
    }

    /// The array with a new axis of length 1 at `axis` (`0..=ndim`, negative counts from the
    /// end as in NumPy), as a view.
    pub fn expand_dims(&self, axis: impl AxisIndex) -> Result<ArrayView<'_, T>> {
        self.view().expand_dims(axis)
    }

    /// The array stretched to `shape` by NumPy's broadcasting rules, as a view (stretched axes
    /// have stride 0: nothing is repeated in memory).
    pub fn broadcast_to(&self, shape: impl super::IntoShape) -> Result<ArrayView<'_, T>> {
        self.view().broadcast_to(shape)
    }

    /// The elements in C order as a one-dimensional view (NumPy's `ravel`; an array is always
    /// contiguous, so this never copies).
    pub fn ravel(&self) -> ArrayView<'_, T> {
        let mut v = self.view();
        v.layout = Layout::contiguous(&[self.size()]);
        v
    }

    /// A copy in C order (NumPy's `copy()`; the same as [`Array::try_clone`]).
    pub fn copy(&self) -> Result<Array<T>> {
        self.try_clone()
    }
}

impl<'a, T: Element> ArrayView<'a, T> {
    /// The strided layout.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The viewed array.
    pub(crate) fn base(&self) -> &'a Array<T> {
        self.base
    }

    fn with(&self, layout: Layout) -> ArrayView<'a, T> {
        ArrayView {
            base: self.base,
            layout,
        }
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// Elements between neighbours along each axis (negative for reversed axes, 0 for
    /// broadcast ones), as NumPy's `strides` divided by the element size.
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.layout.shape.len()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.layout.size()
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.size() == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// The device of the viewed array.
    pub fn device(&self) -> Device {
        self.base.device()
    }

    /// Whether the elements are in C order without gaps (then [`ArrayView::copy`] is a plain
    /// copy and [`ArrayView::reshape`] always succeeds).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_c_contiguous()
    }

    /// The transpose (axes reversed), as a view.
    pub fn t(&self) -> ArrayView<'a, T> {
        self.with(self.layout.reversed())
    }

    /// The transpose (axes reversed), as a view; the same as [`ArrayView::t`].
    pub fn transpose(&self) -> ArrayView<'a, T> {
        self.t()
    }

    /// The axes reordered: axis `k` of the result is axis `axes[k]` of this view.
    pub fn permute(&self, axes: &[usize]) -> Result<ArrayView<'a, T>> {
        Ok(self.with(self.layout.permute(axes)?))
    }

    /// A selection of this view (see [`Array::slice`]).
    pub fn slice(&self, info: impl AsRef<[SliceInfoElem]>) -> Result<ArrayView<'a, T>> {
        Ok(self.with(self.layout.slice(info.as_ref())?))
    }

    /// The same elements in C order with a new shape (one length may be `-1`), without copying:
    /// an error when the view's strides do not allow that (a transpose flattened, say); then
    /// `view.copy()?.into_shape(..)` reshapes the copy.
    pub fn reshape(&self, shape: impl NewShape) -> Result<ArrayView<'a, T>> {
        let shape = shape.resolve(self.size(), self.shape())?;
        match self.layout.reshaped(&shape) {
            Some(l) => Ok(self.with(l)),
            None => Err(Error::Shape(format!(
                "a view of shape {:?} and strides {:?} cannot be reshaped to {shape:?} without \
                 a copy; use .copy()?.into_shape(..)",
                self.shape(),
                self.strides()
            ))),
        }
    }

    /// Without the axes of length 1, as a view.
    pub fn squeeze(&self) -> ArrayView<'a, T> {
        self.with(
            self.layout
                .squeezed(None)
                .expect("squeezing every axis of length 1 cannot fail"),
        )
    }

    /// Without axis `axis` (which must have length 1), as a view.
    pub fn squeeze_axis(&self, axis: impl AxisIndex) -> Result<ArrayView<'a, T>> {
        let a = axis.resolve(self.ndim(), "squeeze")?;
        Ok(self.with(self.layout.squeezed(Some(a))?))
    }

    /// With a new axis of length 1 at `axis` (`0..=ndim`; negative counts from the end).
    pub fn expand_dims(&self, axis: impl AxisIndex) -> Result<ArrayView<'a, T>> {
        let a = axis.resolve(self.ndim() + 1, "expand_dims")?;
        Ok(self.with(self.layout.with_axis(a)))
    }

    /// Stretched to `shape` by NumPy's broadcasting rules (stride 0 where stretched).
    pub fn broadcast_to(&self, shape: impl super::IntoShape) -> Result<ArrayView<'a, T>> {
        Ok(self.with(self.layout.broadcast_to(&shape.into_shape())?))
    }

    /// The elements copied into a new C-contiguous array on the same device (NumPy's `copy()`,
    /// CuPy's `ascontiguousarray`): one strided copy kernel on a GPU (tiled for transposes), one
    /// parallel pass on the CPU.
    pub fn copy(&self) -> Result<Array<T>> {
        materialize::to_array(self)
    }

    /// The same as [`ArrayView::copy`] (ndarray's name).
    pub fn to_owned(&self) -> Result<Array<T>> {
        self.copy()
    }

    /// The same as [`ArrayView::copy`]: a C-contiguous array of the view's elements.
    pub fn to_contiguous(&self) -> Result<Array<T>> {
        self.copy()
    }

    /// The elements in C order as a new one-dimensional array (NumPy's `flatten`: always a
    /// copy).
    pub fn flatten(&self) -> Result<Array<T>> {
        let n = self.size();
        self.copy()?.into_shape([n])
    }

    /// The elements in C order, copied to the host (synchronising like [`Array::to_vec`]).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        materialize::to_host_vec(self)
    }

    /// The elements copied to host memory as an ndarray array of the view's shape.
    pub fn to_host(&self) -> Result<ndarray::ArrayD<T>> {
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(self.shape()), self.to_vec()?)
            .map_err(|e| Error::Shape(e.to_string()))
    }
}

impl<T: Element> std::fmt::Display for ArrayView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.copy() {
            Ok(a) => write!(f, "{}", a.repr()),
            Err(e) => write!(f, "view(<unreadable: {e}>, shape={:?})", self.shape()),
        }
    }
}

impl<T: Element> std::fmt::Debug for ArrayView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ArrayView(shape={:?}, strides={:?}, offset={}, dtype={}, device={})",
            self.shape(),
            self.strides(),
            self.layout.offset,
            T::DTYPE,
            self.device()
        )
    }
}

impl<T: Element> ArrayView<'_, T> {
    /// Shows the view in a notebook (as the array [`ArrayView::copy`] gives).
    pub fn evcxr_display(&self) {
        match self.copy() {
            Ok(a) => a.evcxr_display(),
            Err(e) => println!(
                "EVCXR_BEGIN_CONTENT text/plain\nview(<unreadable: {e}>, shape={:?})\nEVCXR_END_CONTENT",
                self.shape()
            ),
        }
    }
}
