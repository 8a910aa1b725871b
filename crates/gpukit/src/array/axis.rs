//! Axis arguments as NumPy users write them (`1`, `-1`, `ndarray::Axis(1)`, [`keepdims`]`(1)`)
//! and how an array splits around an axis: `(outer, len, inner)`, the shape of C-contiguous
//! data seen as "everything before the axis, the axis, everything after it".

use crate::error::{Error, Result};

/// An axis to work along: its number (negative counts from the end, as in NumPy) and whether
/// a reduction keeps it as a dimension of length 1 (NumPy's `keepdims=True`).
///
/// Made from `1`, `-1`, `ndarray::Axis(1)` or [`keepdims`]`(1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisArg {
    /// The axis; `-1` is the last.
    pub axis: isize,
    /// Whether the reduced axis stays as a dimension of length 1.
    pub keepdims: bool,
}

/// `axis`, kept as a dimension of length 1 by a reduction (NumPy's `keepdims=True`):
/// `a.sum_axis(keepdims(1))?` has shape `(rows, 1)` for a 2-d `a`.
pub fn keepdims(axis: impl IntoAxis) -> AxisArg {
    AxisArg {
        keepdims: true,
        ..axis.into_axis()
    }
}

/// Things usable as an axis: integers (negative from the end), `ndarray::Axis`, [`AxisArg`].
pub trait IntoAxis {
    /// The axis argument.
    fn into_axis(self) -> AxisArg;
}

impl IntoAxis for AxisArg {
    fn into_axis(self) -> AxisArg {
        self
    }
}

impl IntoAxis for ndarray::Axis {
    fn into_axis(self) -> AxisArg {
        AxisArg {
            axis: self.0 as isize,
            keepdims: false,
        }
    }
}

macro_rules! int_axis {
    ($($t:ty),*) => {$(
        impl IntoAxis for $t {
            fn into_axis(self) -> AxisArg {
                AxisArg { axis: self as isize, keepdims: false }
            }
        }
    )*};
}
int_axis!(i32, i64, isize, usize, u32);

/// An array's shape split around one of its axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// The axis, counted from the start.
    pub(crate) axis: usize,
    /// Product of the dimensions before the axis.
    pub(crate) outer: usize,
    /// Length of the axis.
    pub(crate) len: usize,
    /// Product of the dimensions after the axis.
    pub(crate) inner: usize,
    /// Shape of a reduction's result (the axis removed, or kept as 1 with `keepdims`).
    pub(crate) reduced: Vec<usize>,
}

/// `shape` split around `arg`, or a shape error naming the axis and the shape (`what`: the
/// operation, for the message).
pub(crate) fn split(shape: &[usize], arg: AxisArg, what: &str) -> Result<Split> {
    let ndim = shape.len() as isize;
    let axis = if arg.axis < 0 {
        arg.axis + ndim
    } else {
        arg.axis
    };
    if axis < 0 || axis >= ndim {
        return Err(Error::Shape(format!(
            "{what}: axis {} is out of bounds for an array of shape {shape:?} ({} dimension(s))",
            arg.axis,
            shape.len()
        )));
    }
    let axis = axis as usize;
    let mut reduced = shape.to_vec();
    if arg.keepdims {
        reduced[axis] = 1;
    } else {
        reduced.remove(axis);
    }
    Ok(Split {
        axis,
        outer: shape[..axis].iter().product(),
        len: shape[axis],
        inner: shape[axis + 1..].iter().product(),
        reduced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_around_an_axis() {
        let s = split(&[2, 3, 4], 1.into_axis(), "sum").unwrap();
        assert_eq!((s.axis, s.outer, s.len, s.inner), (1, 2, 3, 4));
        assert_eq!(s.reduced, vec![2, 4]);
        let s = split(&[2, 3, 4], keepdims(-1), "sum").unwrap();
        assert_eq!((s.axis, s.outer, s.len, s.inner), (2, 6, 4, 1));
        assert_eq!(s.reduced, vec![2, 3, 1]);
        let s = split(&[5], ndarray::Axis(0).into_axis(), "sum").unwrap();
        assert_eq!((s.outer, s.len, s.inner, s.reduced.len()), (1, 5, 1, 0));
    }

    #[test]
    fn bad_axes_are_errors_naming_the_shape() {
        for a in [2isize, -3, 7] {
            let e = split(&[2, 3], a.into_axis(), "sum").unwrap_err();
            let msg = e.to_string();
            assert!(matches!(e, Error::Shape(_)), "{msg}");
            assert!(
                msg.contains("[2, 3]") && msg.contains(&a.to_string()),
                "{msg}"
            );
        }
        assert!(split(&[], 0.into_axis(), "sum").is_err());
    }
}
