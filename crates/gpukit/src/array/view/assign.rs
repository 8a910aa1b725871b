//! Writing through a view: [`ArrayViewMut`] (made by [`Array::slice_mut`] and
//! [`Array::view_mut`]) and NumPy's slice assignment, `a[:2, ::2] = b` / `= x`, as
//! `a.slice_mut(s![..2, ..;2])?.assign(&b)?` / `.fill(x)?`. The values are written straight
//! into the parent array's buffer at the view's strided positions: one strided-copy kernel on a
//! GPU, one pass on the CPU. The right-hand side broadcasts to the view's shape as in NumPy.

use super::layout::Layout;
use super::{materialize, ArrayView, AsView, IntoViewOperand, ViewOperand};
use crate::array::op::BinOp;
use crate::array::Array;
use crate::element::{Element, Numeric};
use crate::error::Result;
use ndarray::SliceInfoElem;

/// A writable strided view of an [`Array`]'s elements (a slice with ranges, steps and
/// indices): what [`Array::slice_mut`] gives. Writes go into the parent array.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let mut a = Array::<f64>::zeros_on([3, 4], &Device::Cpu)?;
/// a.slice_mut(s![..2, ..;2])?.fill(1.0)?;                  // a[:2, ::2] = 1
/// let row = Array::from_vec_on(vec![5.0, 6.0, 7.0, 8.0], [4], &Device::Cpu)?;
/// a.slice_mut(s![2, ..])?.assign(&row)?;                    // a[2] = row
/// assert_eq!(
///     a.to_vec()?,
///     vec![1., 0., 1., 0., 1., 0., 1., 0., 5., 6., 7., 8.]
/// );
/// # Ok(()) }
/// ```
pub struct ArrayViewMut<'a, T: Element> {
    base: &'a mut Array<T>,
    layout: Layout,
}

impl<T: Element> Array<T> {
    /// The whole array as a writable view.
    pub fn view_mut(&mut self) -> ArrayViewMut<'_, T> {
        let layout = Layout::contiguous(self.shape());
        ArrayViewMut { base: self, layout }
    }

    /// A writable selection with ranges, steps and indices (the `s!` macro, as
    /// [`Array::slice`]): NumPy's `a[...] = values` is `a.slice_mut(s![...])?.assign(&values)?`
    /// and `a[...] = x` is `.fill(x)?`. An error for an index out of range or a step of 0.
    pub fn slice_mut(&mut self, info: impl AsRef<[SliceInfoElem]>) -> Result<ArrayViewMut<'_, T>> {
        let layout = Layout::contiguous(self.shape()).slice(info.as_ref())?;
        Ok(ArrayViewMut { base: self, layout })
    }
}

impl<T: Element> ArrayViewMut<'_, T> {
    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// Elements between neighbours along each axis of the parent's buffer.
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

    /// The same elements as a read-only view (every [`ArrayView`] method then applies).
    pub fn view(&self) -> ArrayView<'_, T> {
        ArrayView {
            base: &*self.base,
            layout: self.layout.clone(),
        }
    }

    /// A further selection of this view, still writable.
    pub fn slice_mut(&mut self, info: impl AsRef<[SliceInfoElem]>) -> Result<ArrayViewMut<'_, T>> {
        let layout = self.layout.slice(info.as_ref())?;
        Ok(ArrayViewMut {
            base: &mut *self.base,
            layout,
        })
    }

    /// The view's elements copied into a new C-contiguous array.
    pub fn copy(&self) -> Result<Array<T>> {
        self.view().copy()
    }

    /// The view's elements in C order, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.view().to_vec()
    }

    /// Writes `src` (an array or a view on the same device, broadcast to this view's shape by
    /// NumPy's rules, extra leading axes of length 1 dropped) into the view's positions of the
    /// parent array: NumPy's `a[...] = src`.
    /// An error naming both shapes when `src` does not broadcast, or naming both devices.
    pub fn assign(&mut self, src: impl AsView<T>) -> Result<()> {
        let mut src = src.as_view();
        // As NumPy: leading axes of length 1 beyond the view's dimensions are dropped.
        while src.ndim() > self.ndim() && src.shape()[0] == 1 {
            src = src.squeeze_axis(0usize)?;
        }
        self.base.storage().ensure_usable()?;
        src.base().storage().ensure_usable()?;
        let stretched = src.layout().broadcast_to(&self.layout.shape).map_err(|_| {
            crate::error::Error::Shape(format!(
                "assign: a value of shape {:?} cannot be broadcast to the view's shape {:?}",
                src.shape(),
                self.layout.shape
            ))
        })?;
        let src = ArrayView {
            base: src.base(),
            layout: stretched,
        };
        materialize::copy_into(&src, self.base, &self.layout)
    }

    /// Sets every element of the view (in the parent array) to `value`: NumPy's `a[...] = x`.
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.base.storage().ensure_usable()?;
        if self.layout.size() == 0 {
            return Ok(());
        }
        let one = Array::from_vec_on(vec![value], [1], &self.base.device())?;
        self.assign(&one)
    }
}

impl<T: Numeric> ArrayViewMut<'_, T> {
    fn op_in_place<'b>(&mut self, op: BinOp, rhs: impl IntoViewOperand<'b, T>) -> Result<()> {
        let result = match rhs.into_operand() {
            ViewOperand::View(v) => super::ops::binary(op, &self.view(), &v)?,
            ViewOperand::Scalar(s) => {
                let mut c = self.copy()?;
                c.binary_in_place(op, crate::array::Rhs::Scalar(s))?;
                c
            }
        };
        self.assign(&result)
    }

    /// `view += rhs` (an array, a view or a scalar broadcast to the view), written into the
    /// parent array.
    pub fn add_in_place<'b>(&mut self, rhs: impl IntoViewOperand<'b, T>) -> Result<()> {
        self.op_in_place(BinOp::Add, rhs)
    }

    /// `view -= rhs`, written into the parent array.
    pub fn sub_in_place<'b>(&mut self, rhs: impl IntoViewOperand<'b, T>) -> Result<()> {
        self.op_in_place(BinOp::Sub, rhs)
    }

    /// `view *= rhs`, written into the parent array.
    pub fn mul_in_place<'b>(&mut self, rhs: impl IntoViewOperand<'b, T>) -> Result<()> {
        self.op_in_place(BinOp::Mul, rhs)
    }

    /// `view /= rhs`, written into the parent array.
    pub fn div_in_place<'b>(&mut self, rhs: impl IntoViewOperand<'b, T>) -> Result<()> {
        self.op_in_place(BinOp::Div, rhs)
    }
}

impl<T: Element> std::fmt::Debug for ArrayViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ArrayViewMut(shape={:?}, strides={:?}, offset={}, dtype={})",
            self.layout.shape,
            self.layout.strides,
            self.layout.offset,
            T::DTYPE
        )
    }
}
