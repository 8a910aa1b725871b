//! The CUDA backend of the decompositions: cuSOLVER on the device's stream, one call per matrix
//! of a batch (workspace sized once for the batch), every status and `devInfo` checked.
//!
//! Why this file is long: every decomposition's call sequence (sizes, workspace, layout of its
//! results) sits here beside the others, so they can be read and checked against each other.
//!
//! cuSOLVER is column-major. A C-order `m x n` matrix `A` is, in the column-major view of the
//! same memory, `Aᵀ` (`n x m`, leading dimension `n`). So: `det`, `inv` and the LU of `solve`
//! factor `Aᵀ` as it lies (`inv` solves `Aᵀ X = I`, whose column-major `X = A⁻ᵀ` is `A⁻¹` in C
//! order; `solve` uses the transposed solve, `A X = B`); `eigh` reads the upper triangle of
//! `Aᵀ`, which is NumPy's lower triangle of `A`; `svd` of a wide or square `A` is `gesvdj` of
//! the tall `Aᵀ = U' Σ V'ᵀ`, and then `A = V' Σ U'ᵀ`: cuSOLVER's `U'` read in C order is `Vᵀ`
//! with no copy, and its `V'` is rearranged into `U`. Only `V'` (or `U'` of a tall `A`) for
//! `svd`, a tall `A` itself, `A` for `qr`, right-hand sides with several columns and the
//! eigenvectors are rearranged, by one small kernel (`array/kernels/layout.rs`).

use super::cpu::SvdJob;
use crate::array::kernels::layout::{to_c_order, ColMajor};
use crate::array::kernels::set_diagonal;
use crate::backend::cuda::solver::{cusolver_err, CusolverElement, GesvdjParams};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::cusolver::sys::{
    cublasFillMode_t, cublasOperation_t, cusolverDnHandle_t, cusolverEigMode_t,
};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::ffi::c_int;

/// What went wrong in one matrix of a batch, from cuSOLVER's `devInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Info {
    /// `U[i, i]` of the LU factorisation of matrix `batch` is exactly 0.
    Singular { batch: usize, index: usize },
    /// The iteration did not converge for matrix `batch`.
    NoConvergence { batch: usize },
}

/// A dimension as cuSOLVER's `int`, or an error naming it.
fn dim(what: &str, v: usize) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| {
        Error::Shape(format!(
            "{what} = {v} is larger than cuSOLVER accepts ({})",
            c_int::MAX
        ))
    })
}

/// The device address of `s` from element `at`, as cuSOLVER's pointer.
fn at<T>(b: &CudaBackend, s: &CudaSlice<T>, at: usize) -> *mut T {
    let (p, _) = s.device_ptr(b.stream());
    (p + (at * std::mem::size_of::<T>()) as u64) as *mut T
}

/// The device address of `s` from element `at`, for writing.
fn at_mut<T>(b: &CudaBackend, s: &mut CudaSlice<T>, at: usize) -> *mut T {
    let (p, _) = s.device_ptr_mut(b.stream());
    (p + (at * std::mem::size_of::<T>()) as u64) as *mut T
}

/// A status as a `Result`, saying what was being done.
fn check(what: &str, status: cudarc::cusolver::sys::cusolverStatus_t) -> Result<()> {
    status.result().map_err(|e| cusolver_err(what, e))
}

/// Device buffers of at least one element (the driver rejects empty allocations).
fn alloc<T: Element>(b: &CudaBackend, len: usize) -> Result<CudaSlice<T>> {
    // SAFETY: every buffer allocated here is written by cuSOLVER or the layout kernel before it
    // is read (or it is workspace, which cuSOLVER owns while it runs).
    unsafe { b.alloc::<T>(len.max(1)) }
}

/// A copy of the first `len` elements of `src` (cuSOLVER overwrites its input).
fn copy_of<T: Element>(b: &CudaBackend, src: &CudaSlice<T>, len: usize) -> Result<CudaSlice<T>> {
    let mut dst = alloc::<T>(b, len)?;
    if len > 0 {
        b.stream()
            .memcpy_dtod(&src.slice(0..len), &mut dst.slice_mut(0..len))
            .map_err(|e| driver_err("copying a matrix for cuSOLVER", e))?;
    }
    Ok(dst)
}

/// The handle, with the device's context current on this thread.
fn handle(b: &CudaBackend) -> Result<std::sync::Arc<cudarc::cusolver::DnHandle>> {
    let h = b.solver()?;
    b.context()
        .bind_to_thread()
        .map_err(|e| driver_err("making the context current for cuSOLVER", e))?;
    Ok(h)
}

/// Reads the `devInfo` of every matrix (this waits for the stream) and returns the first
/// failure. A negative value is a wrong argument, a gpukit bug: an error naming the routine.
fn infos(b: &CudaBackend, info: &CudaSlice<i32>, count: usize, routine: &str) -> Result<Vec<i32>> {
    let v = b.download(info, count)?;
    if let Some(bad) = v.iter().find(|&&i| i < 0) {
        return Err(Error::Other(format!(
            "internal: cuSOLVER {routine} rejected its argument {} (a gpukit bug)",
            -bad
        )));
    }
    Ok(v)
}

/// The first matrix whose LU has a zero pivot, from `getrf`'s infos.
fn first_singular(v: &[i32]) -> Option<Info> {
    v.iter().position(|&i| i > 0).map(|batch| Info::Singular {
        batch,
        index: v[batch] as usize - 1,
    })
}

/// LU factorisations (`getrf`) of the `batch` column-major `n x n` matrices in `lu` (in
/// place), their pivots and infos.
fn getrf<T: CusolverElement + Element>(
    b: &CudaBackend,
    h: cusolverDnHandle_t,
    lu: &mut CudaSlice<T>,
    batch: usize,
    n: usize,
) -> Result<(CudaSlice<i32>, CudaSlice<i32>)> {
    let ni = dim("n", n)?;
    let mut lwork: c_int = 0;
    // SAFETY: a live handle; `lu` holds at least one n x n matrix (batch >= 1).
    check("sizing getrf's workspace", unsafe {
        T::getrf_buffer_size(h, ni, ni, at_mut(b, lu, 0), ni, &mut lwork)
    })?;
    let mut work = alloc::<T>(b, lwork as usize)?;
    let mut ipiv = alloc::<i32>(b, batch * n)?;
    let mut info = alloc::<i32>(b, batch)?;
    for i in 0..batch {
        // SAFETY: matrix i (n * n elements at i * n * n), n pivots at i * n, one info; the
        // workspace of `lwork` elements.
        check("in getrf (LU factorisation)", unsafe {
            T::getrf(
                h,
                ni,
                ni,
                at_mut(b, lu, i * n * n),
                ni,
                at_mut(b, &mut work, 0),
                at_mut(b, &mut ipiv, i * n) as *mut c_int,
                at_mut(b, &mut info, i) as *mut c_int,
            )
        })?;
    }
    Ok((ipiv, info))
}

/// `X` (C order, `batch x n x k`) with `A X = B` for the C-order matrices in `a` and the
/// right-hand sides in `rhs` (`batch x n x k`, or one `n x k` for every matrix when
/// `rhs_shared`).
pub(super) fn solve<T: CusolverElement + Element>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    rhs: &CudaSlice<T>,
    rhs_shared: bool,
    batch: usize,
    n: usize,
    k: usize,
) -> Result<std::result::Result<CudaSlice<T>, Info>> {
    let h = handle(b)?;
    let mut lu = copy_of(b, a, batch * n * n)?;
    let (ipiv, info) = getrf(b, h.cu(), &mut lu, batch, n)?;
    // The right-hand sides in column-major order (a single column already is).
    let mut x = alloc::<T>(b, batch * n * k)?;
    let src_batch = if rhs_shared { 1 } else { batch };
    for i in 0..(if rhs_shared { batch } else { 1 }) {
        let src = ColMajor {
            batch: src_batch,
            rows: k,
            cols: n,
            ld: k,
            stride: n * k,
            offset: 0,
        };
        to_c_order(b, rhs, src, &mut x, i * n * k, false)?;
    }
    let (ni, ki) = (dim("n", n)?, dim("columns of b", k)?);
    let mut info_s = alloc::<i32>(b, batch)?;
    for i in 0..batch {
        // SAFETY: the LU and pivots of matrix i, its n x k right-hand sides (leading
        // dimension n) at i * n * k, one info.
        check("in getrs (solving with the LU factors)", unsafe {
            T::getrs(
                h.cu(),
                cublasOperation_t::CUBLAS_OP_T,
                ni,
                ki,
                at(b, &lu, i * n * n),
                ni,
                at(b, &ipiv, i * n) as *const c_int,
                at_mut(b, &mut x, i * n * k),
                ni,
                at_mut(b, &mut info_s, i) as *mut c_int,
            )
        })?;
    }
    if let Some(bad) = first_singular(&infos(b, &info, batch, "getrf")?) {
        return Ok(Err(bad));
    }
    infos(b, &info_s, batch, "getrs")?;
    if k == 1 {
        return Ok(Ok(x));
    }
    let mut out = alloc::<T>(b, batch * n * k)?;
    let src = ColMajor {
        batch,
        rows: n,
        cols: k,
        ld: n,
        stride: n * k,
        offset: 0,
    };
    to_c_order(b, &x, src, &mut out, 0, false)?;
    Ok(Ok(out))
}

/// The inverses (C order) of the `batch` C-order `n x n` matrices in `a`.
pub(super) fn inv<T: CusolverElement + Element>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    batch: usize,
    n: usize,
) -> Result<std::result::Result<CudaSlice<T>, Info>> {
    let h = handle(b)?;
    let mut lu = copy_of(b, a, batch * n * n)?;
    let (ipiv, info) = getrf(b, h.cu(), &mut lu, batch, n)?;
    // Identity matrices as the right-hand sides: one made by `eye`'s kernel, copied per matrix.
    let mut eye = b.alloc_zeros::<T>(n * n)?;
    set_diagonal(b, &mut eye, n, T::one())?;
    let mut x = alloc::<T>(b, batch * n * n)?;
    for i in 0..batch {
        b.stream()
            .memcpy_dtod(
                &eye.slice(0..n * n),
                &mut x.slice_mut(i * n * n..(i + 1) * n * n),
            )
            .map_err(|e| driver_err("copying an identity matrix for cuSOLVER", e))?;
    }
    let ni = dim("n", n)?;
    let mut info_s = alloc::<i32>(b, batch)?;
    for i in 0..batch {
        // SAFETY: as in `solve`, with n right-hand sides.
        check("in getrs (inverting with the LU factors)", unsafe {
            T::getrs(
                h.cu(),
                cublasOperation_t::CUBLAS_OP_N,
                ni,
                ni,
                at(b, &lu, i * n * n),
                ni,
                at(b, &ipiv, i * n) as *const c_int,
                at_mut(b, &mut x, i * n * n),
                ni,
                at_mut(b, &mut info_s, i) as *mut c_int,
            )
        })?;
    }
    if let Some(bad) = first_singular(&infos(b, &info, batch, "getrf")?) {
        return Ok(Err(bad));
    }
    infos(b, &info_s, batch, "getrs")?;
    Ok(Ok(x))
}

/// The determinants of the `batch` C-order `n x n` matrices in `a`, on the host (`det(Aᵀ)` =
/// `det(A)`: the product of the LU's diagonal, negated once per row swap).
pub(super) fn det<
    T: CusolverElement + Element + std::ops::Mul<Output = T> + std::ops::Neg<Output = T>,
>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    batch: usize,
    n: usize,
) -> Result<Vec<T>> {
    let (diag, swaps) = lu_diagonals(b, a, batch, n)?;
    let prod = |i: usize| {
        diag[i * n..(i + 1) * n]
            .iter()
            .fold(T::one(), |d, &u| d * u)
    };
    let sign = |i: usize, d: T| if swaps[i] % 2 == 1 { -d } else { d };
    Ok((0..batch).map(|i| sign(i, prod(i))).collect())
}

/// The diagonals of the LU factorisations (`getrf`, partial pivoting) of the `batch` C-order
/// `n x n` matrices in `a` (`batch * n` values, on the host) and each factorisation's number of
/// row swaps (`det` and `slogdet` are read from them).
pub(super) fn lu_diagonals<T: CusolverElement + Element>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    batch: usize,
    n: usize,
) -> Result<(Vec<T>, Vec<usize>)> {
    let h = handle(b)?;
    let mut lu = copy_of(b, a, batch * n * n)?;
    let (ipiv, info) = getrf(b, h.cu(), &mut lu, batch, n)?;
    let mut diag = alloc::<T>(b, batch * n)?;
    let src = ColMajor {
        batch,
        rows: 1,
        cols: n,
        ld: n + 1,
        stride: n * n,
        offset: 0,
    };
    to_c_order(b, &lu, src, &mut diag, 0, false)?;
    infos(b, &info, batch, "getrf")?; // a singular matrix has a 0 on its diagonal
    let (diag, ipiv) = (b.download(&diag, batch * n)?, b.download(&ipiv, batch * n)?);
    let swaps = (0..batch)
        .map(|i| (0..n).filter(|&j| ipiv[i * n + j] != j as i32 + 1).count())
        .collect();
    Ok((diag, swaps))
}

/// SVDs of the `batch` C-order `m x n` matrices in `a`: `(U, S, Vᵀ)` in C order (`U` and `Vᵀ`
/// empty for [`SvdJob::Values`]), or the first matrix that did not converge.
pub(super) type SvdOut<T> = (CudaSlice<T>, CudaSlice<T>, CudaSlice<T>);

/// See [`SvdOut`]: `gesvdj` (one-sided Jacobi; on an H100 a quarter faster than `gesvd` for a
/// 1000 x 1000 `f64`, and as accurate) of `Aᵀ` (wide or square `A`, as it lies) or of `A` (tall
/// `A`, rearranged), so that cuSOLVER always sees `rows >= cols`.
pub(super) fn svd<T: CusolverElement + Element>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    batch: usize,
    m: usize,
    n: usize,
    job: SvdJob,
) -> Result<std::result::Result<SvdOut<T>, Info>> {
    let h = handle(b)?;
    let k = m.min(n);
    let tall = m > n;
    // The column-major matrix X cuSOLVER sees: rows >= cols.
    let (rows, cols) = if tall { (m, n) } else { (n, m) };
    let mut x = if tall {
        let mut x = alloc::<T>(b, batch * m * n)?;
        let src = ColMajor {
            batch,
            rows: n,
            cols: m,
            ld: n,
            stride: m * n,
            offset: 0,
        };
        to_c_order(b, a, src, &mut x, 0, false)?; // A in column-major order
        x
    } else {
        copy_of(b, a, batch * m * n)? // Aᵀ in column-major order, as it lies
    };
    // X = U' S V'ᵀ with U' rows x ucols (cols: economy, rows: full) and V' cols x cols.
    let vectors = job != SvdJob::Values;
    let (mode, econ, ucols) = match job {
        SvdJob::Values => (cusolverEigMode_t::CUSOLVER_EIG_MODE_NOVECTOR, 1, 0),
        SvdJob::Reduced => (cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR, 1, cols),
        SvdJob::Full => (cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR, 0, rows),
    };
    let mut s = alloc::<T>(b, batch * k)?;
    // Even without vectors `gesvdj` writes into U' and V' (measured: a one-element V' let it
    // overwrite the next buffer), so both always have their economy size at least.
    let ucols = ucols.max(cols);
    let mut u = alloc::<T>(b, batch * rows * ucols)?;
    let mut v = alloc::<T>(b, batch * cols * cols)?;
    let mut info = alloc::<i32>(b, batch)?;
    let (ri, ci) = (dim("rows", rows)?, dim("columns", cols)?);
    let params = GesvdjParams::new()?;
    let mut lwork: c_int = 0;
    // SAFETY: a live handle; the buffers are sized as the call below uses them.
    check("sizing gesvdj's workspace", unsafe {
        T::gesvdj_buffer_size(
            h.cu(),
            mode,
            econ,
            ri,
            ci,
            at_mut(b, &mut x, 0),
            ri,
            at_mut(b, &mut s, 0),
            at_mut(b, &mut u, 0),
            ri,
            at_mut(b, &mut v, 0),
            ci,
            &mut lwork,
            params.raw(),
        )
    })?;
    let mut work = alloc::<T>(b, lwork as usize)?;
    for i in 0..batch {
        let (uo, vo) = (i * rows * ucols, i * cols * cols);
        // SAFETY: matrix i (rows x cols, leading dimension rows), k singular values, U'
        // (rows x ucols) and V' (cols x cols), the workspace of `lwork` elements, one info.
        check("in gesvdj (singular value decomposition)", unsafe {
            T::gesvdj(
                h.cu(),
                mode,
                econ,
                ri,
                ci,
                at_mut(b, &mut x, i * m * n),
                ri,
                at_mut(b, &mut s, i * k),
                at_mut(b, &mut u, uo),
                ri,
                at_mut(b, &mut v, vo),
                ci,
                at_mut(b, &mut work, 0),
                lwork,
                at_mut(b, &mut info, i) as *mut c_int,
                params.raw(),
            )
        })?;
    }
    if let Some(batch) = infos(b, &info, batch, "gesvdj")?
        .iter()
        .position(|&i| i > 0)
    {
        return Ok(Err(Info::NoConvergence { batch }));
    }
    if !vectors {
        return Ok(Ok((u, s, v)));
    }
    // A column-major p x q matrix (per batch) rearranged into C order.
    let c_order = |src: &CudaSlice<T>, p: usize, q: usize| -> Result<CudaSlice<T>> {
        let mut out = alloc::<T>(b, batch * p * q)?;
        let layout = ColMajor {
            batch,
            rows: p,
            cols: q,
            ld: p,
            stride: p * q,
            offset: 0,
        };
        to_c_order(b, src, layout, &mut out, 0, false)?;
        Ok(out)
    };
    if !tall {
        // X = Aᵀ, so A = V' S U'ᵀ: U = V' (m x m, rearranged); Vᵀ = U'ᵀ, which is U' read in
        // C order (ucols x n).
        return Ok(Ok((c_order(&v, m, m)?, s, u)));
    }
    // X = A: U = U' (m x ucols, rearranged); Vᵀ = V'ᵀ, which is V' read in C order (n x n).
    Ok(Ok((c_order(&u, m, ucols)?, s, v)))
}

/// Reduced QR of the `batch` C-order `m x n` matrices in `a`: `Q` (`m x k`) and `R`
/// (`k x n`, zeros below its diagonal) in C order, `k = min(m, n)`.
pub(super) fn qr<T: CusolverElement + Element>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    batch: usize,
    m: usize,
    n: usize,
) -> Result<(CudaSlice<T>, CudaSlice<T>)> {
    let h = handle(b)?;
    let k = m.min(n);
    let mut x = alloc::<T>(b, batch * m * n)?;
    let src = ColMajor {
        batch,
        rows: n,
        cols: m,
        ld: n,
        stride: m * n,
        offset: 0,
    };
    to_c_order(b, a, src, &mut x, 0, false)?; // A in column-major order (leading dimension m)
    let (mi, ni, ki) = (dim("m", m)?, dim("n", n)?, dim("min(m, n)", k)?);
    let mut tau = alloc::<T>(b, batch * k)?;
    let mut info = alloc::<i32>(b, batch)?;
    let mut lwork: c_int = 0;
    // SAFETY: a live handle; `x` holds at least one m x n matrix.
    check("sizing geqrf's workspace", unsafe {
        T::geqrf_buffer_size(h.cu(), mi, ni, at_mut(b, &mut x, 0), mi, &mut lwork)
    })?;
    let mut lwork_q: c_int = 0;
    // SAFETY: as above, with k reflectors.
    check("sizing orgqr's workspace", unsafe {
        T::orgqr_buffer_size(
            h.cu(),
            mi,
            ki,
            ki,
            at(b, &x, 0),
            mi,
            at(b, &tau, 0),
            &mut lwork_q,
        )
    })?;
    let mut work = alloc::<T>(b, lwork.max(lwork_q) as usize)?;
    for i in 0..batch {
        // SAFETY: matrix i (m x n, leading dimension m), its k coefficients, the workspace.
        check("in geqrf (QR factorisation)", unsafe {
            T::geqrf(
                h.cu(),
                mi,
                ni,
                at_mut(b, &mut x, i * m * n),
                mi,
                at_mut(b, &mut tau, i * k),
                at_mut(b, &mut work, 0),
                lwork,
                at_mut(b, &mut info, i) as *mut c_int,
            )
        })?;
    }
    // R: the first k rows of the factored matrices, upper triangle only.
    let mut r = alloc::<T>(b, batch * k * n)?;
    let src = ColMajor {
        batch,
        rows: k,
        cols: n,
        ld: m,
        stride: m * n,
        offset: 0,
    };
    to_c_order(b, &x, src, &mut r, 0, true)?;
    for i in 0..batch {
        // SAFETY: as for geqrf; Q's k columns overwrite the first k columns of matrix i.
        check("in orgqr (forming Q)", unsafe {
            T::orgqr(
                h.cu(),
                mi,
                ki,
                ki,
                at_mut(b, &mut x, i * m * n),
                mi,
                at(b, &tau, i * k),
                at_mut(b, &mut work, 0),
                lwork.max(lwork_q),
                at_mut(b, &mut info, i) as *mut c_int,
            )
        })?;
    }
    let mut q = alloc::<T>(b, batch * m * k)?;
    let src = ColMajor {
        batch,
        rows: m,
        cols: k,
        ld: m,
        stride: m * n,
        offset: 0,
    };
    to_c_order(b, &x, src, &mut q, 0, false)?;
    infos(b, &info, batch, "geqrf/orgqr")?;
    Ok((q, r))
}

/// Two device buffers.
pub(super) type Pair<T> = (CudaSlice<T>, CudaSlice<T>);

/// Eigenvalues (ascending, `batch x n`) and eigenvectors (C order, in columns) of the `batch`
/// symmetric `n x n` matrices whose lower triangles (C order) are in `a`.
pub(super) fn eigh<T: CusolverElement + Element>(
    b: &CudaBackend,
    a: &CudaSlice<T>,
    batch: usize,
    n: usize,
) -> Result<std::result::Result<Pair<T>, Info>> {
    let h = handle(b)?;
    let mut x = copy_of(b, a, batch * n * n)?;
    let mut w = alloc::<T>(b, batch * n)?;
    let mut info = alloc::<i32>(b, batch)?;
    let ni = dim("n", n)?;
    let (jobz, uplo) = (
        cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR,
        cublasFillMode_t::CUBLAS_FILL_MODE_UPPER,
    );
    let mut lwork: c_int = 0;
    // SAFETY: a live handle; `x` and `w` hold at least one matrix and its n values.
    check("sizing syevd's workspace", unsafe {
        T::syevd_buffer_size(
            h.cu(),
            jobz,
            uplo,
            ni,
            at(b, &x, 0),
            ni,
            at(b, &w, 0),
            &mut lwork,
        )
    })?;
    let mut work = alloc::<T>(b, lwork as usize)?;
    for i in 0..batch {
        // SAFETY: matrix i (n x n), its n eigenvalues, the workspace, one info.
        check("in syevd (symmetric eigenvalues)", unsafe {
            T::syevd(
                h.cu(),
                jobz,
                uplo,
                ni,
                at_mut(b, &mut x, i * n * n),
                ni,
                at_mut(b, &mut w, i * n),
                at_mut(b, &mut work, 0),
                lwork,
                at_mut(b, &mut info, i) as *mut c_int,
            )
        })?;
    }
    if let Some(batch) = infos(b, &info, batch, "syevd")?.iter().position(|&i| i > 0) {
        return Ok(Err(Info::NoConvergence { batch }));
    }
    let mut v = alloc::<T>(b, batch * n * n)?;
    let src = ColMajor {
        batch,
        rows: n,
        cols: n,
        ld: n,
        stride: n * n,
        offset: 0,
    };
    to_c_order(b, &x, src, &mut v, 0, false)?;
    Ok(Ok((w, v)))
}
