//! Vector and matrix norms (`gpukit::linalg::norm`, `norm_ord`), from the array operations
//! (elementwise, reductions, matmul) on either backend; only the spectral and nuclear norms need
//! singular values ([`super::svdvals`]).

use super::plan::fmt_shape;
use super::solver::{svdvals, SolverElement};
use crate::array::Array;
use crate::element::Element;
use crate::error::{Error, Result};

/// Which norm [`norm_ord`] computes: NumPy's `ord` argument of `linalg.norm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormOrd {
    /// Frobenius norm of a matrix, `sqrt(Σ a²)` (`ord="fro"`).
    Fro,
    /// Nuclear norm of a matrix, the sum of its singular values (`ord="nuc"`).
    Nuc,
    /// Vector: `Σ |x|`; matrix: the largest column sum of `|a|` (`ord=1`).
    One,
    /// Vector: `sqrt(Σ x²)`; matrix: the largest singular value (`ord=2`).
    Two,
    /// Vector: `max |x|`; matrix: the largest row sum of `|a|` (`ord=inf`).
    Inf,
    /// Vector: `min |x|`; matrix: the smallest row sum of `|a|` (`ord=-inf`).
    NegInf,
}

/// The 2-norm of all elements of `a`, whatever its shape: NumPy's `linalg.norm(a)` (the
/// Euclidean norm of a vector, the Frobenius norm of a matrix), `sqrt(Σ a²)`, as a value on the
/// host. 0 for an empty array. Works on both backends without any feature.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let x = Array::from_vec(vec![3.0f32, 4.0], 2)?;
/// assert_eq!(gpukit::linalg::norm(&x)?, 5.0);
/// # Ok(())
/// # }
/// ```
pub fn norm<T: SolverElement>(a: &Array<T>) -> Result<T> {
    if a.size() == 0 {
        return Ok(<T as Element>::zero());
    }
    Ok((a * a)?.sum()?.elem_sqrt())
}

/// The norm `ord` of a vector (1-d) or a matrix (2-d), as NumPy's `linalg.norm(a, ord)`:
/// see [`NormOrd`] for each. [`NormOrd::Two`] and [`NormOrd::Nuc`] of a matrix need its
/// singular values ([`super::svdvals`]: cuSOLVER on a GPU, faer on the CPU with feature
/// `linalg`); the others are elementwise operations, sums and products on either backend.
/// An `ord` that NumPy does not define for the dimension (`Fro` of a vector), other dimensions,
/// and `Inf`/`NegInf` of an empty array are [`Error::Shape`].
///
/// ```
/// use gpukit::prelude::*;
/// use gpukit::linalg::{norm_ord, NormOrd};
/// # fn main() -> gpukit::Result<()> {
/// let x = Array::from_vec(vec![3.0f64, -4.0], 2)?;
/// assert_eq!(norm_ord(&x, NormOrd::One)?, 7.0);
/// assert_eq!(norm_ord(&x, NormOrd::Inf)?, 4.0);
/// let a = Array::from_vec(vec![1.0f64, -2.0, 3.0, 4.0], [2, 2])?;
/// assert_eq!(norm_ord(&a, NormOrd::One)?, 6.0);  // columns: 1 + 3, 2 + 4
/// assert_eq!(norm_ord(&a, NormOrd::Inf)?, 7.0);  // rows: 1 + 2, 3 + 4
/// # Ok(())
/// # }
/// ```
pub fn norm_ord<T: SolverElement>(a: &Array<T>, ord: NormOrd) -> Result<T> {
    let bad = |why: &str| {
        Err(Error::Shape(format!(
            "norm of an array of shape {} with ord {ord:?}: {why}",
            fmt_shape(a.shape())
        )))
    };
    let extreme = |v: &Array<T>, max: bool| -> Result<T> {
        if v.size() == 0 {
            return bad("the maximum or minimum of no elements is undefined");
        }
        if max {
            v.max()
        } else {
            v.min()
        }
    };
    match (a.ndim(), ord) {
        (1, NormOrd::One) => a.abs()?.sum(),
        (1, NormOrd::Two) | (2, NormOrd::Fro) => norm(a),
        (1, NormOrd::Inf) => extreme(&a.abs()?, true),
        (1, NormOrd::NegInf) => extreme(&a.abs()?, false),
        (1, _) => bad("Fro and Nuc are matrix norms; use One, Two, Inf or NegInf for vectors"),
        (2, NormOrd::One | NormOrd::Inf | NormOrd::NegInf) => {
            let (m, n) = (a.shape()[0], a.shape()[1]);
            let abs = a.abs()?;
            let dev = a.device();
            let sums = if ord == NormOrd::One {
                Array::ones_on([1, m], &dev)?.matmul(&abs)? // column sums, (1, n)
            } else {
                abs.matmul(&Array::ones_on([n, 1], &dev)?)? // row sums, (m, 1)
            };
            extreme(&sums, ord != NormOrd::NegInf)
        }
        (2, NormOrd::Two | NormOrd::Nuc) => {
            let s = svdvals(a)?;
            if s.size() == 0 {
                return Ok(<T as Element>::zero());
            }
            if ord == NormOrd::Two {
                s.max()
            } else {
                s.sum()
            }
        }
        _ => bad("norm_ord takes a vector (1-d) or a matrix (2-d); norm(a) takes any shape"),
    }
}
