//! `lstsq`: least-squares solutions of `a · x ≈ b`, as NumPy's `linalg.lstsq`, through the
//! singular value decomposition (cuSOLVER's `gesvd` on a GPU, faer on the CPU): singular
//! values below `rcond · s_max` are treated as zero, so rank-deficient systems get the
//! minimum-norm solution, as with LAPACK's `gelsd` that NumPy calls.

use super::{svd, SolverElement};
use crate::array::linalg::plan::fmt_shape;
use crate::array::Array;
use crate::element::{DType, Element};
use crate::error::{Error, Result};

/// The result of [`lstsq`] (NumPy's tuple `(x, residuals, rank, s)`).
#[derive(Debug)]
pub struct Lstsq<T: Element> {
    /// The solution: `(n,)` for a vector `b`, `(n, k)` for `b` of `(m, k)`.
    pub x: Array<T>,
    /// Sums of squared residuals `|b - a · x|²` per column of `b` (`(k,)`, or `(1,)` for a
    /// vector `b`) when `a` has full column rank and more rows than columns; else empty `(0,)`.
    pub residuals: Array<T>,
    /// The effective rank of `a` (singular values above `rcond · s_max`).
    pub rank: usize,
    /// The singular values of `a`, descending (`(min(m, n),)`).
    pub s: Array<T>,
}

/// The least-squares solution `x` minimising `|b - a · x|` for a matrix `a` (`(m, n)`) and `b`
/// of `(m,)` or `(m, k)`, as NumPy's `linalg.lstsq(a, b, rcond)`. `rcond = None` takes NumPy's
/// default, the machine epsilon times `max(m, n)`; singular values at or below
/// `rcond · s_max` count as zero (the minimum-norm solution of a rank-deficient system).
/// Computed from `svd(a)` and two matrix products on `a`'s device (cuSOLVER and cuBLAS on a
/// GPU; faer, feature `linalg`, on the CPU).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// // The line y = c0 + c1 * t through (0, 1), (1, 3), (2, 5), (3, 7).
/// let a = Array::from_vec(vec![1.0f64, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0], [4, 2])?;
/// let y = Array::from_vec(vec![1.0f64, 3.0, 5.0, 7.0], 4)?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let fit = gpukit::linalg::lstsq(&a, &y, None)?;
/// let c = fit.x.to_vec()?;
/// assert!((c[0] - 1.0).abs() < 1e-12 && (c[1] - 2.0).abs() < 1e-12);
/// assert_eq!(fit.rank, 2);
/// assert!(fit.residuals.item()?.abs() < 1e-20);
/// # Ok(())
/// # }
/// ```
pub fn lstsq<T: SolverElement>(a: &Array<T>, b: &Array<T>, rcond: Option<f64>) -> Result<Lstsq<T>> {
    let what = "lstsq";
    a.storage().ensure_usable()?;
    b.storage().ensure_usable()?;
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch(format!(
            "`{what}`: a lives on {} and b on {}; move one with .to_device(&..)",
            a.device(),
            b.device()
        )));
    }
    if a.ndim() != 2 {
        return Err(Error::Shape(format!(
            "{what}: a must be a matrix (2 dimensions), got shape {}",
            fmt_shape(a.shape())
        )));
    }
    let (m, n) = (a.shape()[0], a.shape()[1]);
    let vector = b.ndim() == 1;
    if !(vector || b.ndim() == 2) || b.shape()[0] != m {
        return Err(Error::Shape(format!(
            "{what}: a has shape {} and b has shape {}; b must be ({m},) or ({m}, k)",
            fmt_shape(a.shape()),
            fmt_shape(b.shape())
        )));
    }
    let k = if vector { 1 } else { b.shape()[1] };
    let dev = a.device();
    let b2 = b.view().reshape([m, k])?;
    let kk = m.min(n);
    let (x, s, rank) = if kk == 0 || k == 0 {
        let s = Array::<T>::zeros_on([kk], &dev)?;
        (Array::<T>::zeros_on([n, k], &dev)?, s, 0)
    } else {
        let d = svd(a, false)?;
        let sv = d.s.to_vec()?;
        let eps = if T::DTYPE == DType::F32 {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        };
        let tol = rcond.unwrap_or(eps * m.max(n) as f64) * Element::to_f64(sv[0]);
        let inv: Vec<T> = sv
            .iter()
            .map(|&x| {
                let x = Element::to_f64(x);
                <T as Element>::from_f64(if x > tol { 1.0 / x } else { 0.0 })
            })
            .collect();
        let rank = inv.iter().filter(|x| Element::to_f64(**x) != 0.0).count();
        let inv = Array::from_vec_on(inv, [kk, 1], &dev)?;
        let utb = d.u.t().matmul(&b2)?; // (kk, k)
        let scaled = (&inv.view() * &utb)?; // each row divided by its singular value
        (d.vt.t().matmul(&scaled)?, d.s, rank)
    };
    let residuals = if rank == n && m > n {
        let fitted = if n == 0 {
            Array::<T>::zeros_on([m, k], &dev)?
        } else {
            a.matmul(&x)?
        };
        let r = (&b2 - &fitted)?;
        r.square()?.sum_axis(0)?
    } else {
        Array::<T>::zeros_on([0], &dev)?
    };
    let x = if vector { x.into_shape([n])? } else { x };
    Ok(Lstsq {
        x,
        residuals,
        rank,
        s,
    })
}
