//! Matrix decompositions with NumPy's names and shapes: `svd`, `svdvals`, `solve`, `inv`,
//! `det`, `slogdet`, `qr` (reduced), `eigh`, `lstsq`, for `f32` and `f64`, on a matrix or a
//! batch of matrices (`(..., m, n)`): cuSOLVER on a CUDA device, faer on the CPU (feature
//! `linalg`).
//!
//! Files: `cuda` (cuSOLVER: how C-order arrays meet a column-major library), `cpu` (faer, one
//! matrix at a time), `slogdet`, `lstsq` (through `svd`), `tests` (CPU results against ndarray
//! products; GPU tests are in `tests/solver_gpu.rs`).

mod cpu;
mod cuda;
mod lstsq;
#[cfg(test)]
mod lstsq_tests;
mod slogdet;
#[cfg(test)]
mod tests;

pub use lstsq::{lstsq, Lstsq};
pub use slogdet::{slogdet, SlogDet};

use super::plan::fmt_shape;
use super::MatmulElement;
use crate::array::{Array, Storage};
use crate::backend::cuda::solver::CusolverElement;
use crate::backend::cuda::CudaBackend;
use crate::element::Element;
use crate::error::{Error, Result};
use cpu::{CpuFail, CpuSolver, SvdJob};
use cudarc::driver::CudaSlice;
use std::sync::Arc;

/// Element types of the decompositions: `f32` and `f64` (cuSOLVER's `S` and `D` routines on a
/// GPU, faer on the CPU). Sealed: implemented by gpukit only.
pub trait SolverElement:
    MatmulElement + CusolverElement + CpuSolver + std::ops::Neg<Output = Self>
{
}
impl SolverElement for f32 {}
impl SolverElement for f64 {}

/// The singular value decomposition `a = u · diag(s) · vt` ([`svd`]).
#[derive(Debug)]
pub struct Svd<T: Element> {
    /// Left singular vectors, in columns: `(..., m, m)` (full) or `(..., m, k)` (reduced).
    pub u: Array<T>,
    /// Singular values, descending: `(..., k)`, `k = min(m, n)`.
    pub s: Array<T>,
    /// Right singular vectors, in rows: `(..., n, n)` (full) or `(..., k, n)` (reduced).
    pub vt: Array<T>,
}

/// The reduced QR decomposition `a = q · r` ([`qr`]).
#[derive(Debug)]
pub struct Qr<T: Element> {
    /// Orthonormal columns: `(..., m, k)`, `k = min(m, n)`.
    pub q: Array<T>,
    /// Upper triangular (trapezoidal when `m < n`): `(..., k, n)`.
    pub r: Array<T>,
}

/// The eigendecomposition of a symmetric matrix ([`eigh`]).
#[derive(Debug)]
pub struct Eigh<T: Element> {
    /// Eigenvalues in ascending order: `(..., n)`.
    pub eigenvalues: Array<T>,
    /// Unit eigenvectors, in columns (`eigenvectors[.., :, i]` belongs to `eigenvalues[.., i]`):
    /// `(..., n, n)`.
    pub eigenvectors: Array<T>,
}

/// The batch shape, batch size, rows and columns of an array of matrices, or an error naming
/// its shape.
fn matrices<T: Element>(what: &str, a: &Array<T>) -> Result<(Vec<usize>, usize, usize, usize)> {
    a.storage().ensure_usable()?;
    let s = a.shape();
    if s.len() < 2 {
        return Err(Error::Shape(format!(
            "{what}: expected a matrix or a batch of matrices (at least 2 dimensions), got \
             shape {}",
            fmt_shape(s)
        )));
    }
    let batch_shape = s[..s.len() - 2].to_vec();
    let batch = batch_shape.iter().product();
    Ok((batch_shape, batch, s[s.len() - 2], s[s.len() - 1]))
}

/// As [`matrices`], for square matrices: `(batch shape, batch, n)`.
fn square<T: Element>(what: &str, a: &Array<T>) -> Result<(Vec<usize>, usize, usize)> {
    let (bs, batch, m, n) = matrices(what, a)?;
    if m != n {
        return Err(Error::Shape(format!(
            "{what}: expected square matrices, got shape {} ({m} x {n})",
            fmt_shape(a.shape())
        )));
    }
    Ok((bs, batch, n))
}

/// `base` followed by `dims`.
fn with(base: &[usize], dims: &[usize]) -> Vec<usize> {
    base.iter().chain(dims).copied().collect()
}

/// "" for a lone matrix, " (matrix 3 of the batch)" otherwise.
fn which(batch_shape: &[usize], i: usize) -> String {
    if batch_shape.is_empty() {
        String::new()
    } else {
        format!(" (matrix {i} of the batch, in C order)")
    }
}

/// The error of a CPU failure of `what` on `a`'s matrix `i`.
fn cpu_error(what: &str, shape: &[usize], i: usize, fail: CpuFail) -> Error {
    let batch_shape = &shape[..shape.len() - 2];
    match fail {
        CpuFail::Feature => Error::Other(format!(
            "{what} on the CPU backend needs gpukit's `linalg` feature (faer): build gpukit with \
             `--features linalg`, or in a notebook `:dep gpukit = {{ path = \"...\", features = \
             [\"linalg\"] }}`; on a CUDA device {what} uses cuSOLVER and needs no feature"
        )),
        CpuFail::Singular(k) => singular(what, shape, batch_shape, i, k),
        CpuFail::NoConvergence => no_convergence(what, shape, batch_shape, i),
    }
}

fn singular(what: &str, shape: &[usize], batch_shape: &[usize], i: usize, k: usize) -> Error {
    Error::LinAlg(format!(
        "{what}: singular matrix{}: a has shape {} and U[{k}, {k}] = 0 in its LU factorisation",
        which(batch_shape, i),
        fmt_shape(shape)
    ))
}

fn no_convergence(what: &str, shape: &[usize], batch_shape: &[usize], i: usize) -> Error {
    Error::LinAlg(format!(
        "{what} did not converge{} for a of shape {}",
        which(batch_shape, i),
        fmt_shape(shape)
    ))
}

/// The error of a cuSOLVER `devInfo` failure of `what` on `a`.
fn cuda_error(what: &str, shape: &[usize], info: cuda::Info) -> Error {
    let batch_shape = &shape[..shape.len() - 2];
    match info {
        cuda::Info::Singular { batch, index } => singular(what, shape, batch_shape, batch, index),
        cuda::Info::NoConvergence { batch } => no_convergence(what, shape, batch_shape, batch),
    }
}

/// A CUDA result array.
fn cuda_array<T: Element>(
    backend: &Arc<CudaBackend>,
    shape: Vec<usize>,
    slice: CudaSlice<T>,
) -> Result<Array<T>> {
    Array::from_storage(
        shape,
        Storage::Cuda {
            backend: backend.clone(),
            slice,
        },
    )
}

/// `batch` identity matrices `n x n` (C order) as one host vector.
fn identities<T: Element>(batch: usize, n: usize) -> Vec<T> {
    let mut v = vec![T::zero(); batch * n * n];
    for b in 0..batch {
        for d in 0..n {
            v[b * n * n + d * (n + 1)] = T::one();
        }
    }
    v
}

/// The singular value decomposition of `a` (a matrix `(m, n)` or a batch `(..., m, n)`), as
/// NumPy's `linalg.svd(a, full_matrices)`: `a = u · diag(s) · vt` with the singular values `s`
/// descending. `full_matrices = true` (NumPy's default) gives square `u` (`m x m`) and `vt`
/// (`n x n`); `false` the reduced form, `u` of `m x k` and `vt` of `k x n`, `k = min(m, n)`.
///
/// On a GPU: cuSOLVER's `gesvdj` (Jacobi). On the CPU: faer (feature `linalg`). Singular vectors are
/// unique only up to sign (and within repeated singular values), so the two backends may give
/// different `u` and `vt` for the same `a`; `s` and `u · diag(s) · vt` agree.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![3.0f64, 0.0, 0.0, 0.0, -2.0, 0.0], [2, 3])?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let svd = gpukit::linalg::svd(&a, false)?;
/// assert_eq!(svd.u.shape(), &[2, 2]);
/// assert_eq!(svd.vt.shape(), &[2, 3]);
/// let s = svd.s.to_vec()?;
/// assert!((s[0] - 3.0).abs() < 1e-12 && (s[1] - 2.0).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
pub fn svd<T: SolverElement>(a: &Array<T>, full_matrices: bool) -> Result<Svd<T>> {
    let job = if full_matrices {
        SvdJob::Full
    } else {
        SvdJob::Reduced
    };
    let (u, s, vt) = svd_parts("svd", a, job)?;
    Ok(Svd { u, s, vt })
}

/// The singular values of `a` (`(..., m, n)`), descending: NumPy's
/// `linalg.svd(a, compute_uv=False)` (`linalg.svdvals` in NumPy 2). Cheaper than [`svd`]: no
/// vectors are formed.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![0.0f32, 2.0, 1.0, 0.0], [2, 2])?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// assert_eq!(gpukit::linalg::svdvals(&a)?.to_vec()?, vec![2.0, 1.0]);
/// # Ok(())
/// # }
/// ```
pub fn svdvals<T: SolverElement>(a: &Array<T>) -> Result<Array<T>> {
    Ok(svd_parts("svdvals", a, SvdJob::Values)?.1)
}

/// `(u, s, vt)` of `a` for `job` (`u` and `vt` empty placeholders for `Values`).
fn svd_parts<T: SolverElement>(
    what: &str,
    a: &Array<T>,
    job: SvdJob,
) -> Result<(Array<T>, Array<T>, Array<T>)> {
    let (bs, batch, m, n) = matrices(what, a)?;
    let k = m.min(n);
    let (ur, vr) = match job {
        SvdJob::Full => (m, n),
        _ => (k, k),
    };
    let (ushape, sshape, vshape) = (with(&bs, &[m, ur]), with(&bs, &[k]), with(&bs, &[vr, n]));
    let dev = a.device();
    let placeholder = || Array::<T>::zeros_on([0], &dev);
    let vectors = job != SvdJob::Values;
    if batch == 0 || k == 0 {
        // Nothing to decompose: empty values; full vectors are identities, as in NumPy.
        let eye = |shape: Vec<usize>, r: usize| {
            Array::from_vec_on(identities::<T>(batch, r), shape, &dev)
        };
        let s = Array::zeros_on(sshape, &dev)?;
        return if !vectors {
            Ok((placeholder()?, s, placeholder()?))
        } else if job == SvdJob::Full {
            Ok((eye(ushape, m)?, s, eye(vshape, n)?))
        } else {
            Ok((
                Array::zeros_on(ushape, &dev)?,
                s,
                Array::zeros_on(vshape, &dev)?,
            ))
        };
    }
    match a.storage() {
        Storage::Cpu(v) => {
            let (mut u, mut s, mut vt) = (Vec::new(), Vec::new(), Vec::new());
            for (i, mat) in v.chunks(m * n).enumerate() {
                let (ui, si, vi) =
                    T::svd_one(mat, m, n, job).map_err(|f| cpu_error(what, a.shape(), i, f))?;
                u.extend(ui);
                s.extend(si);
                vt.extend(vi);
            }
            let s = Array::from_vec_on(s, sshape, &dev)?;
            if !vectors {
                return Ok((placeholder()?, s, placeholder()?));
            }
            Ok((
                Array::from_vec_on(u, ushape, &dev)?,
                s,
                Array::from_vec_on(vt, vshape, &dev)?,
            ))
        }
        Storage::Cuda { backend, slice } => {
            let (u, s, vt) = cuda::svd(backend, slice, batch, m, n, job)?
                .map_err(|info| cuda_error(what, a.shape(), info))?;
            let s = cuda_array(backend, sshape, s)?;
            if !vectors {
                return Ok((placeholder()?, s, placeholder()?));
            }
            Ok((
                cuda_array(backend, ushape, u)?,
                s,
                cuda_array(backend, vshape, vt)?,
            ))
        }
    }
}

/// The solution `x` of `a · x = b`, as NumPy's `linalg.solve`: `a` is a square matrix
/// `(n, n)` or a batch `(..., n, n)`; `b` is a vector `(n,)` (the result is `(..., n)`) or
/// matrices `(..., n, k)` with `a`'s batch shape (a single `(n, k)` serves every matrix of the
/// batch), giving `(..., n, k)`.
///
/// LU with partial pivoting: cuSOLVER's `getrf`/`getrs` on a GPU, faer on the CPU (feature
/// `linalg`). A singular matrix (an exactly zero pivot, as LAPACK reports it) is an
/// [`Error::LinAlg`] naming the shape; a nearly singular one gives large values, as in NumPy.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![3.0f64, 1.0, 1.0, 2.0], [2, 2])?;
/// let b = Array::from_vec(vec![9.0f64, 8.0], 2)?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let x = gpukit::linalg::solve(&a, &b)?;                  // 3x + y = 9, x + 2y = 8
/// let x = x.to_vec()?;
/// assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
///
/// let singular = Array::from_vec(vec![1.0f64, 2.0, 2.0, 4.0], [2, 2])?;
/// let e = gpukit::linalg::solve(&singular, &b).unwrap_err();
/// assert!(e.to_string().contains("singular matrix"), "{e}");
/// # Ok(())
/// # }
/// ```
pub fn solve<T: SolverElement>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    let what = "solve";
    let (bs, batch, n) = square(what, a)?;
    b.storage().ensure_usable()?;
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch(format!(
            "`{what}`: a lives on {} and b on {}; move one with .to_device(&..)",
            a.device(),
            b.device()
        )));
    }
    let bad = || {
        Error::Shape(format!(
            "{what}: a has shape {} and b has shape {}; b must be ({n},), or (..., {n}, k) \
             with the batch shape of a, or ({n}, k)",
            fmt_shape(a.shape()),
            fmt_shape(b.shape())
        ))
    };
    let bsh = b.shape();
    let (k, shared, out_shape) = match bsh.len() {
        1 if bsh[0] == n => (1, true, with(&bs, &[n])),
        1 => return Err(bad()),
        d => {
            let (rows, k) = (bsh[d - 2], bsh[d - 1]);
            if rows != n {
                return Err(bad());
            }
            let shared = d == 2 && !bs.is_empty();
            if !shared && bsh[..d - 2] != bs[..] {
                return Err(bad());
            }
            (k, shared, with(&bs, &[n, k]))
        }
    };
    let size: usize = out_shape.iter().product();
    if size == 0 {
        return Array::zeros_on(out_shape, &a.device());
    }
    match (a.storage(), b.storage()) {
        (Storage::Cpu(av), Storage::Cpu(bv)) => {
            let mut x = Vec::with_capacity(size);
            for (i, mat) in av.chunks(n * n).enumerate() {
                let rhs = if shared {
                    &bv[..n * k]
                } else {
                    &bv[i * n * k..(i + 1) * n * k]
                };
                let mut xi = rhs.to_vec();
                T::solve_one(mat, n, &mut xi, k).map_err(|f| cpu_error(what, a.shape(), i, f))?;
                x.extend(xi);
            }
            Array::from_vec_on(x, out_shape, &a.device())
        }
        (Storage::Cuda { backend, slice }, Storage::Cuda { slice: bslice, .. }) => {
            let x = cuda::solve(backend, slice, bslice, shared, batch, n, k)?
                .map_err(|info| cuda_error(what, a.shape(), info))?;
            cuda_array(backend, out_shape, x)
        }
        _ => Err(Error::DeviceMismatch(format!(
            "`{what}`: a and b on different backends ({}, {})",
            a.device(),
            b.device()
        ))),
    }
}

/// The inverse of `a` (`(n, n)` or `(..., n, n)`), as NumPy's `linalg.inv`: LU with partial
/// pivoting (cuSOLVER's `getrf`/`getrs` on a GPU, faer on the CPU with feature `linalg`). A
/// singular matrix is an [`Error::LinAlg`] naming the shape.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 4.0], [2, 2])?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// assert_eq!(gpukit::linalg::inv(&a)?.to_vec()?, vec![0.5, 0.0, 0.0, 0.25]);
/// # Ok(())
/// # }
/// ```
pub fn inv<T: SolverElement>(a: &Array<T>) -> Result<Array<T>> {
    let what = "inv";
    let (_, batch, n) = square(what, a)?;
    if a.size() == 0 {
        return Array::zeros_on(a.shape().to_vec(), &a.device());
    }
    match a.storage() {
        Storage::Cpu(v) => {
            let mut out = Vec::with_capacity(a.size());
            for (i, mat) in v.chunks(n * n).enumerate() {
                out.extend(T::inv_one(mat, n).map_err(|f| cpu_error(what, a.shape(), i, f))?);
            }
            Array::from_vec_on(out, a.shape().to_vec(), &a.device())
        }
        Storage::Cuda { backend, slice } => {
            let x = cuda::inv(backend, slice, batch, n)?
                .map_err(|info| cuda_error(what, a.shape(), info))?;
            cuda_array(backend, a.shape().to_vec(), x)
        }
    }
}

/// The determinant of `a` (`(n, n)`, giving a 0-d array, or `(..., n, n)`, giving the batch
/// shape), as NumPy's `linalg.det`: the product of the LU factorisation's diagonal, with the
/// sign of its row swaps (0 for a singular matrix, no error; 1 for a `0 x 0` one). Computed by
/// cuSOLVER's `getrf` on a GPU (the diagonal is multiplied on the host), faer on the CPU
/// (feature `linalg`).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [2, 2])?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let d = gpukit::linalg::det(&a)?.item()?;
/// assert!((d + 2.0).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
pub fn det<T: SolverElement>(a: &Array<T>) -> Result<Array<T>> {
    let what = "det";
    let (bs, batch, n) = square(what, a)?;
    let dev = a.device();
    if batch == 0 || n == 0 {
        return Array::from_vec_on(vec![<T as Element>::one(); batch], bs, &dev);
    }
    let d = match a.storage() {
        Storage::Cpu(v) => v
            .chunks(n * n)
            .enumerate()
            .map(|(i, mat)| T::det_one(mat, n).map_err(|f| cpu_error(what, a.shape(), i, f)))
            .collect::<Result<Vec<T>>>()?,
        Storage::Cuda { backend, slice } => cuda::det(backend, slice, batch, n)?,
    };
    Array::from_vec_on(d, bs, &dev)
}

/// The reduced QR decomposition of `a` (`(m, n)` or `(..., m, n)`), as NumPy's `linalg.qr`
/// (`mode="reduced"`): `a = q · r`, `q` of `m x k` with orthonormal columns, `r` of `k x n`
/// upper triangular, `k = min(m, n)`. Householder reflections: cuSOLVER's `geqrf` and `orgqr`
/// on a GPU, faer on the CPU (feature `linalg`). The signs of `r`'s rows (and `q`'s columns)
/// may differ between the backends; `q · r` does not.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2])?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let qr = gpukit::linalg::qr(&a)?;
/// assert_eq!((qr.q.shape(), qr.r.shape()), (&[3, 2][..], &[2, 2][..]));
/// let back = qr.q.matmul(&qr.r)?.to_vec()?;
/// assert!(back.iter().zip(a.to_vec()?).all(|(x, y)| (x - y).abs() < 1e-12));
/// # Ok(())
/// # }
/// ```
pub fn qr<T: SolverElement>(a: &Array<T>) -> Result<Qr<T>> {
    let what = "qr";
    let (bs, batch, m, n) = matrices(what, a)?;
    let k = m.min(n);
    let (qshape, rshape) = (with(&bs, &[m, k]), with(&bs, &[k, n]));
    let dev = a.device();
    if batch == 0 || k == 0 {
        return Ok(Qr {
            q: Array::zeros_on(qshape, &dev)?,
            r: Array::zeros_on(rshape, &dev)?,
        });
    }
    match a.storage() {
        Storage::Cpu(v) => {
            let (mut q, mut r) = (Vec::new(), Vec::new());
            for (i, mat) in v.chunks(m * n).enumerate() {
                let (qi, ri) =
                    T::qr_one(mat, m, n).map_err(|f| cpu_error(what, a.shape(), i, f))?;
                q.extend(qi);
                r.extend(ri);
            }
            Ok(Qr {
                q: Array::from_vec_on(q, qshape, &dev)?,
                r: Array::from_vec_on(r, rshape, &dev)?,
            })
        }
        Storage::Cuda { backend, slice } => {
            let (q, r) = cuda::qr(backend, slice, batch, m, n)?;
            Ok(Qr {
                q: cuda_array(backend, qshape, q)?,
                r: cuda_array(backend, rshape, r)?,
            })
        }
    }
}

/// Eigenvalues (ascending) and eigenvectors of the symmetric matrix `a` (`(n, n)` or
/// `(..., n, n)`), as NumPy's `linalg.eigh` with its default `UPLO="L"`: only the lower
/// triangle of `a` is read. cuSOLVER's `syevd` on a GPU, faer on the CPU (feature `linalg`).
/// Eigenvectors are unique only up to sign (and within repeated eigenvalues).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![2.0f64, 1.0, 1.0, 2.0], [2, 2])?;
/// # if !gpukit::linalg::cpu_available() && a.device() == Device::Cpu { return Ok(()); }
/// let e = gpukit::linalg::eigh(&a)?;
/// let w = e.eigenvalues.to_vec()?;
/// assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
/// assert_eq!(e.eigenvectors.shape(), &[2, 2]);
/// # Ok(())
/// # }
/// ```
pub fn eigh<T: SolverElement>(a: &Array<T>) -> Result<Eigh<T>> {
    let what = "eigh";
    let (bs, batch, n) = square(what, a)?;
    let (wshape, vshape) = (with(&bs, &[n]), a.shape().to_vec());
    let dev = a.device();
    if batch == 0 || n == 0 {
        return Ok(Eigh {
            eigenvalues: Array::zeros_on(wshape, &dev)?,
            eigenvectors: Array::zeros_on(vshape, &dev)?,
        });
    }
    match a.storage() {
        Storage::Cpu(v) => {
            let (mut w, mut vecs) = (Vec::new(), Vec::new());
            for (i, mat) in v.chunks(n * n).enumerate() {
                let (wi, vi) = T::eigh_one(mat, n).map_err(|f| cpu_error(what, a.shape(), i, f))?;
                w.extend(wi);
                vecs.extend(vi);
            }
            Ok(Eigh {
                eigenvalues: Array::from_vec_on(w, wshape, &dev)?,
                eigenvectors: Array::from_vec_on(vecs, vshape, &dev)?,
            })
        }
        Storage::Cuda { backend, slice } => {
            let (w, v) = cuda::eigh(backend, slice, batch, n)?
                .map_err(|info| cuda_error(what, a.shape(), info))?;
            Ok(Eigh {
                eigenvalues: cuda_array(backend, wshape, w)?,
                eigenvectors: cuda_array(backend, vshape, v)?,
            })
        }
    }
}

/// Whether the decompositions ([`svd`], [`solve`], [`inv`], [`det`], [`qr`], [`eigh`]) work on
/// the CPU backend: gpukit was built with its `linalg` feature (faer). On a CUDA device they
/// always use cuSOLVER.
pub fn cpu_available() -> bool {
    cfg!(feature = "linalg")
}
