//! Joining arrays: `concatenate` along an existing axis, `stack` along a new one (NumPy's
//! names), and `flatten`. Each input (an array or a view) is copied once into its block of the
//! result by the strided copy.

use super::layout::{c_strides, Layout};
use super::shape_arg::AxisIndex;
use super::{materialize, AsView};
use crate::array::Array;
use crate::element::Element;
use crate::error::{Error, Result};

/// The arrays (or views) joined along an existing axis (NumPy's `concatenate`; a negative axis
/// counts from the end). Every input must have the result's shape except along `axis`, and all
/// must live on one device; an error names the first that does not.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::<i32>::zeros_on([2, 3], &Device::Cpu)?;
/// let b = Array::<i32>::ones_on([1, 3], &Device::Cpu)?;
/// let c = concatenate(&[&a, &b], 0)?;            // shape [3, 3]
/// assert_eq!(c.shape(), &[3, 3]);
/// let d = concatenate(&[a.t(), b.t()], -1)?;     // views too: shape [3, 3]
/// assert_eq!(d.to_vec()?, vec![0, 0, 1, 0, 0, 1, 0, 0, 1]);
/// # Ok(()) }
/// ```
pub fn concatenate<T: Element, V: AsView<T>>(
    arrays: &[V],
    axis: impl AxisIndex,
) -> Result<Array<T>> {
    let views: Vec<_> = arrays.iter().map(|a| a.as_view()).collect();
    let Some(first) = views.first() else {
        return Err(Error::Shape(
            "concatenate: needs at least one array".to_string(),
        ));
    };
    let ndim = first.ndim();
    if ndim == 0 {
        return Err(Error::Shape(
            "concatenate: 0-dimensional arrays cannot be concatenated (use stack)".to_string(),
        ));
    }
    let axis = axis.resolve(ndim, "concatenate")?;
    let device = first.device();
    let mut shape = first.shape().to_vec();
    shape[axis] = 0;
    for (k, v) in views.iter().enumerate() {
        if v.device() != device {
            return Err(Error::DeviceMismatch(format!(
                "concatenate: array 0 lives on {device} and array {k} on {}",
                v.device()
            )));
        }
        let same =
            v.ndim() == ndim && (0..ndim).all(|d| d == axis || v.shape()[d] == first.shape()[d]);
        if !same {
            return Err(Error::Shape(format!(
                "concatenate along axis {axis}: array 0 has shape {:?} and array {k} has shape \
                 {:?}; all but axis {axis} must match",
                first.shape(),
                v.shape()
            )));
        }
        shape[axis] += v.shape()[axis];
    }
    // `empty` leaves the elements unset; the blocks below cover every one of them.
    let mut out = Array::<T>::empty_on(shape.clone(), &device)?;
    let strides = c_strides(&shape);
    let mut at = 0usize;
    for v in &views {
        let len = v.shape()[axis];
        let mut block_shape = shape.clone();
        block_shape[axis] = len;
        let block = Layout {
            shape: block_shape,
            strides: strides.clone(),
            offset: at * strides[axis].max(0) as usize,
        };
        materialize::copy_into(v, &mut out, &block)?;
        at += len;
    }
    Ok(out)
}

/// The arrays (or views), all of one shape, joined along a new axis (NumPy's `stack`;
/// `axis` in `0..=ndim`, negative counts from the end).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::<f32>::zeros_on(3, &Device::Cpu)?;
/// let b = Array::<f32>::ones_on(3, &Device::Cpu)?;
/// assert_eq!(stack(&[&a, &b], 0)?.shape(), &[2, 3]);
/// assert_eq!(stack(&[&a, &b], -1)?.shape(), &[3, 2]);
/// # Ok(()) }
/// ```
pub fn stack<T: Element, V: AsView<T>>(arrays: &[V], axis: impl AxisIndex) -> Result<Array<T>> {
    let views: Vec<_> = arrays.iter().map(|a| a.as_view()).collect();
    let Some(first) = views.first() else {
        return Err(Error::Shape("stack: needs at least one array".to_string()));
    };
    let axis = axis.resolve(first.ndim() + 1, "stack")?;
    for (k, v) in views.iter().enumerate() {
        if v.shape() != first.shape() {
            return Err(Error::Shape(format!(
                "stack: array 0 has shape {:?} and array {k} has shape {:?}; all must match",
                first.shape(),
                v.shape()
            )));
        }
    }
    let expanded: Vec<_> = views
        .iter()
        .map(|v| v.expand_dims(axis))
        .collect::<Result<_>>()?;
    concatenate(&expanded, axis)
}

impl<T: Element> Array<T> {
    /// The elements in C order as a new one-dimensional array (NumPy's `flatten`: always a
    /// copy; [`Array::ravel`] is the view, `into_shape(-1)` the consuming form).
    pub fn flatten(&self) -> Result<Array<T>> {
        self.reshape([self.size()])
    }

    /// `arrays` joined along `axis` (see [`concatenate`]).
    pub fn concatenate<V: AsView<T>>(arrays: &[V], axis: impl AxisIndex) -> Result<Array<T>> {
        concatenate(arrays, axis)
    }

    /// `arrays` joined along a new axis (see [`stack`]).
    pub fn stack<V: AsView<T>>(arrays: &[V], axis: impl AxisIndex) -> Result<Array<T>> {
        stack(arrays, axis)
    }
}
