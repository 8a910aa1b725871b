//! Arguments of shape operations as NumPy users write them: a new shape that may hold one `-1`
//! (`reshape([10_000, -1, 5])`), and an axis that may count from the end (`expand_dims(-1)`).

use super::layout::{infer_shape, normalize_axis};
use crate::array::IntoShape;
use crate::error::Result;

/// A requested shape for `reshape`: every [`IntoShape`] (`[3, 4]`, `(3, 4)`, `12`, `vec![..]`)
/// and the same forms with signed lengths where one length may be `-1`, inferred from the
/// array's size as in NumPy: `[10_000, -1, 5]`, `(-1, 4)`, `-1`. (Integer literals alone are
/// signed; a `usize` variable next to a `-1` needs `n as isize`.)
pub trait NewShape {
    /// The dimensions for an array of `size` elements (whose shape is `from`, for errors).
    fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>>;
}

impl<S: IntoShape> NewShape for S {
    fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
        let shape = self.into_shape();
        let signed: Vec<isize> = shape
            .iter()
            .map(|&d| d.min(isize::MAX as usize) as isize)
            .collect();
        infer_shape(&signed, size, from)
    }
}

macro_rules! signed_shapes {
    ($($t:ty),*) => {$(
        impl<const N: usize> NewShape for [$t; N] {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                infer_shape(&self.map(|d| d as isize), size, from)
            }
        }
        impl NewShape for &[$t] {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                let v: Vec<isize> = self.iter().map(|&d| d as isize).collect();
                infer_shape(&v, size, from)
            }
        }
        impl NewShape for Vec<$t> {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                self.as_slice().resolve(size, from)
            }
        }
        impl NewShape for $t {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                infer_shape(&[self as isize], size, from)
            }
        }
        impl NewShape for ($t, $t) {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                infer_shape(&[self.0 as isize, self.1 as isize], size, from)
            }
        }
        impl NewShape for ($t, $t, $t) {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                infer_shape(&[self.0 as isize, self.1 as isize, self.2 as isize], size, from)
            }
        }
        impl NewShape for ($t, $t, $t, $t) {
            fn resolve(self, size: usize, from: &[usize]) -> Result<Vec<usize>> {
                infer_shape(
                    &[self.0 as isize, self.1 as isize, self.2 as isize, self.3 as isize],
                    size,
                    from,
                )
            }
        }
    )*};
}

signed_shapes!(isize, i32, i64);

/// An axis argument: a `usize`, or a signed integer that counts from the end when negative
/// (`-1` is the last axis), as in NumPy.
pub trait AxisIndex {
    /// The axis as an index into `ndim` axes, or an error naming `what` and the range.
    fn resolve(self, ndim: usize, what: &str) -> Result<usize>;
}

impl AxisIndex for usize {
    fn resolve(self, ndim: usize, what: &str) -> Result<usize> {
        normalize_axis(self.min(isize::MAX as usize) as isize, ndim, what)
    }
}

macro_rules! signed_axes {
    ($($t:ty),*) => {$(
        impl AxisIndex for $t {
            fn resolve(self, ndim: usize, what: &str) -> Result<usize> {
                normalize_axis(self as isize, ndim, what)
            }
        }
    )*};
}

signed_axes!(isize, i32, i64);

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: impl NewShape, size: usize) -> Result<Vec<usize>> {
        s.resolve(size, &[size])
    }

    #[test]
    fn shapes_with_and_without_minus_one() {
        let n: usize = 4;
        assert_eq!(r([3, 4], 12).unwrap(), vec![3, 4]);
        assert_eq!(r([3, -1], 12).unwrap(), vec![3, 4]);
        assert_eq!(r([n, 3], 12).unwrap(), vec![4, 3]);
        assert_eq!(r((-1, 2, 2), 12).unwrap(), vec![3, 2, 2]);
        assert_eq!(r(-1, 12).unwrap(), vec![12]);
        assert_eq!(r(12, 12).unwrap(), vec![12]);
        assert_eq!(r(vec![2i64, -1], 12).unwrap(), vec![2, 6]);
        assert_eq!(r((), 1).unwrap(), Vec::<usize>::new());
        assert!(r([5, -1], 12).is_err());
        assert!(r([5, 5], 12).is_err());
    }

    #[test]
    fn axes_count_from_the_end() {
        assert_eq!(AxisIndex::resolve(-1, 3, "t").unwrap(), 2);
        assert_eq!(AxisIndex::resolve(0usize, 3, "t").unwrap(), 0);
        assert!(AxisIndex::resolve(3usize, 3, "t").is_err());
        assert!(AxisIndex::resolve(usize::MAX, 3, "t").is_err());
        assert!(AxisIndex::resolve(-4i64, 3, "t").is_err());
    }
}
