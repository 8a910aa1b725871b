//! `slogdet`: the sign and the natural logarithm of the absolute value of determinants, as
//! NumPy's `linalg.slogdet` — read from the LU factorisation's diagonal (cuSOLVER's `getrf` on a
//! GPU, faer on the CPU), summing logarithms so that large matrices neither overflow nor
//! underflow where `det` would.

use super::{cpu_error, cuda, square, SolverElement};
use crate::array::{Array, Storage};
use crate::element::Element;
use crate::error::Result;

/// The result of [`slogdet`]: `det(a) = sign * exp(logabsdet)`.
#[derive(Debug)]
pub struct SlogDet<T: Element> {
    /// 1 or -1 (0 for a singular matrix), with the batch shape of `a`.
    pub sign: Array<T>,
    /// `ln |det(a)|` (-inf for a singular matrix), with the batch shape of `a`.
    pub logabsdet: Array<T>,
}

/// The sign and `ln |det|` of `a` (`(n, n)`, giving 0-d arrays, or `(..., n, n)`, giving the
/// batch shape), as NumPy's `linalg.slogdet`: a singular matrix gives sign 0 and
/// `logabsdet = -inf` (no error); a `0 x 0` matrix sign 1 and 0. cuSOLVER's `getrf` on a GPU
/// (the diagonal is summed on the host), faer on the CPU (feature `linalg`).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [2, 2])?;   // det = -2
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let r = gpukit::linalg::slogdet(&a)?;
/// assert_eq!(r.sign.item()?, -1.0);
/// assert!((r.logabsdet.item()? - 2f64.ln()).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
pub fn slogdet<T: SolverElement>(a: &Array<T>) -> Result<SlogDet<T>> {
    let what = "slogdet";
    let (bs, batch, n) = square(what, a)?;
    let dev = a.device();
    if batch == 0 || n == 0 {
        return Ok(SlogDet {
            sign: Array::from_vec_on(vec![<T as Element>::one(); batch], bs.clone(), &dev)?,
            logabsdet: Array::from_vec_on(vec![<T as Element>::zero(); batch], bs, &dev)?,
        });
    }
    let (diag, odd): (Vec<T>, Vec<bool>) = match a.storage() {
        Storage::Cpu(v) => {
            let mut diag = Vec::with_capacity(batch * n);
            let mut odd = Vec::with_capacity(batch);
            for (i, mat) in v.chunks(n * n).enumerate() {
                let (d, o) =
                    T::lu_diagonal_one(mat, n).map_err(|f| cpu_error(what, a.shape(), i, f))?;
                diag.extend(d);
                odd.push(o);
            }
            (diag, odd)
        }
        Storage::Cuda { backend, slice } => {
            let (diag, swaps) = cuda::lu_diagonals(backend, slice, batch, n)?;
            (diag, swaps.into_iter().map(|s| s % 2 == 1).collect())
        }
    };
    let mut sign = Vec::with_capacity(batch);
    let mut logabs = Vec::with_capacity(batch);
    for (i, d) in diag.chunks(n).enumerate() {
        let (mut s, mut l) = (if odd[i] { -1.0 } else { 1.0 }, 0.0f64);
        for &u in d {
            let u = Element::to_f64(u);
            if u == 0.0 {
                (s, l) = (0.0, f64::NEG_INFINITY);
                break;
            }
            if u < 0.0 {
                s = -s;
            }
            l += u.abs().ln();
        }
        sign.push(<T as Element>::from_f64(s));
        logabs.push(<T as Element>::from_f64(l));
    }
    Ok(SlogDet {
        sign: Array::from_vec_on(sign, bs.clone(), &dev)?,
        logabsdet: Array::from_vec_on(logabs, bs, &dev)?,
    })
}
