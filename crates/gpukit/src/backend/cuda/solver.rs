//! cuSOLVER (dense, through cudarc): one handle per device, created at first use and bound to
//! the device's one stream, and the LAPACK-style routines gpukit calls for `f32` and `f64`
//! ([`CusolverElement`]: LU, QR, SVD, symmetric eigenvalues).
//!
//! libcusolver is probed ([`super::probe::cusolver_probe`]) before cudarc is asked for it, so
//! a missing library is an [`Error::Cuda`] naming it, never cudarc's panic.
//!
//! cuSOLVER is column-major, like LAPACK; the array layer decides what each C-order buffer is
//! in that view (see `array/linalg/solver/cuda.rs`).

use super::{driver_err, probe, CudaBackend};
use crate::error::{Error, Result};
use cudarc::cusolver::result::CusolverError;
use cudarc::cusolver::sys::{
    self, cublasFillMode_t, cublasOperation_t, cusolverDnHandle_t, cusolverEigMode_t,
    cusolverStatus_t,
};
use cudarc::cusolver::DnHandle;
use std::ffi::{c_int, c_schar};
use std::sync::Arc;

mod sealed {
    /// Only gpukit implements [`super::CusolverElement`].
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The cuSOLVER dense routines of one element type (`S…` for `f32`, `D…` for `f64`), with
/// cuSOLVER's own signatures. Sealed; used by gpukit's linear algebra only.
///
/// # Safety
/// Every method is a raw cuSOLVER call: the pointers must be device memory of the handle's
/// device holding what the routine reads and writes (cuSOLVER's documentation of each routine).
#[doc(hidden)]
#[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
pub trait CusolverElement: Copy + sealed::Sealed {
    /// `getrf_bufferSize`.
    unsafe fn getrf_buffer_size(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        lwork: *mut c_int,
    ) -> cusolverStatus_t;
    /// `getrf`: LU with partial pivoting.
    unsafe fn getrf(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        work: *mut Self,
        ipiv: *mut c_int,
        info: *mut c_int,
    ) -> cusolverStatus_t;
    /// `getrs`: solves with an LU from `getrf`.
    unsafe fn getrs(
        h: cusolverDnHandle_t,
        trans: cublasOperation_t,
        n: c_int,
        nrhs: c_int,
        a: *const Self,
        lda: c_int,
        ipiv: *const c_int,
        b: *mut Self,
        ldb: c_int,
        info: *mut c_int,
    ) -> cusolverStatus_t;
    /// `geqrf_bufferSize`.
    unsafe fn geqrf_buffer_size(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        lwork: *mut c_int,
    ) -> cusolverStatus_t;
    /// `geqrf`: Householder QR.
    unsafe fn geqrf(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        tau: *mut Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> cusolverStatus_t;
    /// `orgqr_bufferSize`.
    unsafe fn orgqr_buffer_size(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        k: c_int,
        a: *const Self,
        lda: c_int,
        tau: *const Self,
        lwork: *mut c_int,
    ) -> cusolverStatus_t;
    /// `orgqr`: Q from `geqrf`'s reflectors.
    unsafe fn orgqr(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        k: c_int,
        a: *mut Self,
        lda: c_int,
        tau: *const Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> cusolverStatus_t;
    /// `gesvd_bufferSize`.
    unsafe fn gesvd_buffer_size(
        h: cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        lwork: *mut c_int,
    ) -> cusolverStatus_t;
    /// `gesvd`: SVD by bidiagonalisation and QR iteration (needs `m >= n`).
    unsafe fn gesvd(
        h: cusolverDnHandle_t,
        jobu: c_schar,
        jobvt: c_schar,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        s: *mut Self,
        u: *mut Self,
        ldu: c_int,
        vt: *mut Self,
        ldvt: c_int,
        work: *mut Self,
        lwork: c_int,
        rwork: *mut Self,
        info: *mut c_int,
    ) -> cusolverStatus_t;
    /// `gesvdj_bufferSize`.
    unsafe fn gesvdj_buffer_size(
        h: cusolverDnHandle_t,
        jobz: cusolverEigMode_t,
        econ: c_int,
        m: c_int,
        n: c_int,
        a: *const Self,
        lda: c_int,
        s: *const Self,
        u: *const Self,
        ldu: c_int,
        v: *const Self,
        ldv: c_int,
        lwork: *mut c_int,
        params: sys::gesvdjInfo_t,
    ) -> cusolverStatus_t;
    /// `gesvdj`: SVD by one-sided Jacobi rotations (any `m`, `n`; returns `V`, not `Vᵀ`).
    unsafe fn gesvdj(
        h: cusolverDnHandle_t,
        jobz: cusolverEigMode_t,
        econ: c_int,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        s: *mut Self,
        u: *mut Self,
        ldu: c_int,
        v: *mut Self,
        ldv: c_int,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
        params: sys::gesvdjInfo_t,
    ) -> cusolverStatus_t;
    /// `syevd_bufferSize`.
    unsafe fn syevd_buffer_size(
        h: cusolverDnHandle_t,
        jobz: cusolverEigMode_t,
        uplo: cublasFillMode_t,
        n: c_int,
        a: *const Self,
        lda: c_int,
        w: *const Self,
        lwork: *mut c_int,
    ) -> cusolverStatus_t;
    /// `syevd`: symmetric eigenvalues (ascending) and eigenvectors, divide and conquer.
    unsafe fn syevd(
        h: cusolverDnHandle_t,
        jobz: cusolverEigMode_t,
        uplo: cublasFillMode_t,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        w: *mut Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> cusolverStatus_t;
}

macro_rules! cusolver_element {
    ($t:ty, $getrf_bs:ident, $getrf:ident, $getrs:ident, $geqrf_bs:ident, $geqrf:ident,
     $orgqr_bs:ident, $orgqr:ident, $gesvd_bs:ident, $gesvd:ident, $gesvdj_bs:ident,
     $gesvdj:ident, $syevd_bs:ident, $syevd:ident) => {
        impl CusolverElement for $t {
            unsafe fn getrf_buffer_size(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                lwork: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$getrf_bs(h, m, n, a, lda, lwork) }
            }
            unsafe fn getrf(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                work: *mut Self,
                ipiv: *mut c_int,
                info: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$getrf(h, m, n, a, lda, work, ipiv, info) }
            }
            unsafe fn getrs(
                h: cusolverDnHandle_t,
                trans: cublasOperation_t,
                n: c_int,
                nrhs: c_int,
                a: *const Self,
                lda: c_int,
                ipiv: *const c_int,
                b: *mut Self,
                ldb: c_int,
                info: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$getrs(h, trans, n, nrhs, a, lda, ipiv, b, ldb, info) }
            }
            unsafe fn geqrf_buffer_size(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                lwork: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$geqrf_bs(h, m, n, a, lda, lwork) }
            }
            unsafe fn geqrf(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                tau: *mut Self,
                work: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$geqrf(h, m, n, a, lda, tau, work, lwork, info) }
            }
            unsafe fn orgqr_buffer_size(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                k: c_int,
                a: *const Self,
                lda: c_int,
                tau: *const Self,
                lwork: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$orgqr_bs(h, m, n, k, a, lda, tau, lwork) }
            }
            unsafe fn orgqr(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                k: c_int,
                a: *mut Self,
                lda: c_int,
                tau: *const Self,
                work: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$orgqr(h, m, n, k, a, lda, tau, work, lwork, info) }
            }
            unsafe fn gesvd_buffer_size(
                h: cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                lwork: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$gesvd_bs(h, m, n, lwork) }
            }
            unsafe fn gesvd(
                h: cusolverDnHandle_t,
                jobu: c_schar,
                jobvt: c_schar,
                m: c_int,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                s: *mut Self,
                u: *mut Self,
                ldu: c_int,
                vt: *mut Self,
                ldvt: c_int,
                work: *mut Self,
                lwork: c_int,
                rwork: *mut Self,
                info: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe {
                    sys::$gesvd(
                        h, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info,
                    )
                }
            }
            unsafe fn gesvdj_buffer_size(
                h: cusolverDnHandle_t,
                jobz: cusolverEigMode_t,
                econ: c_int,
                m: c_int,
                n: c_int,
                a: *const Self,
                lda: c_int,
                s: *const Self,
                u: *const Self,
                ldu: c_int,
                v: *const Self,
                ldv: c_int,
                lwork: *mut c_int,
                params: sys::gesvdjInfo_t,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe {
                    sys::$gesvdj_bs(
                        h, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, lwork, params,
                    )
                }
            }
            unsafe fn gesvdj(
                h: cusolverDnHandle_t,
                jobz: cusolverEigMode_t,
                econ: c_int,
                m: c_int,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                s: *mut Self,
                u: *mut Self,
                ldu: c_int,
                v: *mut Self,
                ldv: c_int,
                work: *mut Self,
                lwork: c_int,
                info: *mut c_int,
                params: sys::gesvdjInfo_t,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe {
                    sys::$gesvdj(
                        h, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, work, lwork, info, params,
                    )
                }
            }
            unsafe fn syevd_buffer_size(
                h: cusolverDnHandle_t,
                jobz: cusolverEigMode_t,
                uplo: cublasFillMode_t,
                n: c_int,
                a: *const Self,
                lda: c_int,
                w: *const Self,
                lwork: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$syevd_bs(h, jobz, uplo, n, a, lda, w, lwork) }
            }
            unsafe fn syevd(
                h: cusolverDnHandle_t,
                jobz: cusolverEigMode_t,
                uplo: cublasFillMode_t,
                n: c_int,
                a: *mut Self,
                lda: c_int,
                w: *mut Self,
                work: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> cusolverStatus_t {
                // SAFETY: passed on from the caller.
                unsafe { sys::$syevd(h, jobz, uplo, n, a, lda, w, work, lwork, info) }
            }
        }
    };
}

cusolver_element!(
    f32,
    cusolverDnSgetrf_bufferSize,
    cusolverDnSgetrf,
    cusolverDnSgetrs,
    cusolverDnSgeqrf_bufferSize,
    cusolverDnSgeqrf,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr,
    cusolverDnSgesvd_bufferSize,
    cusolverDnSgesvd,
    cusolverDnSgesvdj_bufferSize,
    cusolverDnSgesvdj,
    cusolverDnSsyevd_bufferSize,
    cusolverDnSsyevd
);
cusolver_element!(
    f64,
    cusolverDnDgetrf_bufferSize,
    cusolverDnDgetrf,
    cusolverDnDgetrs,
    cusolverDnDgeqrf_bufferSize,
    cusolverDnDgeqrf,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr,
    cusolverDnDgesvd_bufferSize,
    cusolverDnDgesvd,
    cusolverDnDgesvdj_bufferSize,
    cusolverDnDgesvdj,
    cusolverDnDsyevd_bufferSize,
    cusolverDnDsyevd
);

impl CudaBackend {
    /// The device's cuSOLVER dense handle (created at the first call, on the device's stream),
    /// or an error saying why cuSOLVER cannot be used (libcusolver missing, no handle).
    pub(crate) fn solver(&self) -> Result<Arc<DnHandle>> {
        self.ensure_usable()?;
        probe::cusolver_probe().map_err(Error::Cuda)?;
        let mut slot = self.solver.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(handle) = slot.as_ref() {
            return Ok(handle.clone());
        }
        self.context()
            .bind_to_thread()
            .map_err(|e| driver_err("making the context current for cuSOLVER", e))?;
        let handle = DnHandle::new(self.stream().clone())
            .map(Arc::new)
            .map_err(|e| {
                cusolver_err(
                    &format!("creating a cuSOLVER handle on cuda:{}", self.ordinal()),
                    e,
                )
            })?;
        *slot = Some(handle.clone());
        Ok(handle)
    }
}

/// `gesvdj`'s parameters (tolerance and sweeps at cuSOLVER's defaults: machine precision, 100
/// sweeps), destroyed on drop.
pub(crate) struct GesvdjParams(sys::gesvdjInfo_t);

impl GesvdjParams {
    /// Fresh parameters, or the error cuSOLVER gave.
    pub(crate) fn new() -> Result<GesvdjParams> {
        let mut p: sys::gesvdjInfo_t = std::ptr::null_mut();
        // SAFETY: writes a new parameter object to `p`.
        unsafe { sys::cusolverDnCreateGesvdjInfo(&mut p) }
            .result()
            .map_err(|e| cusolver_err("creating gesvdj's parameters", e))?;
        Ok(GesvdjParams(p))
    }

    /// The raw parameter object for a cuSOLVER call.
    pub(crate) fn raw(&self) -> sys::gesvdjInfo_t {
        self.0
    }
}

impl Drop for GesvdjParams {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once; cuSOLVER has copied what it needs.
        let _ = unsafe { sys::cusolverDnDestroyGesvdjInfo(self.0) };
    }
}

/// A cuSOLVER status as an [`Error::Cuda`] saying what was being done.
pub(crate) fn cusolver_err(what: &str, e: CusolverError) -> Error {
    Error::Cuda(format!("cuSOLVER failed {what}: {:?}", e.0))
}
