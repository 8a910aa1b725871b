//! cuBLAS through cudarc: one handle per device, created at first use and bound to the device's
//! one stream, and the element types it multiplies ([`BlasElement`]).
//!
//! libcublas is probed ([`super::probe::cublas_probe`]) before cudarc is asked for it, so a
//! missing library is an [`Error::Cuda`] naming it, never cudarc's panic.

use super::{driver_err, probe, CudaBackend};
use crate::element::Float;
use crate::error::{Error, Result};
use cudarc::cublas::result::CublasError;
use cudarc::cublas::{CudaBlas, Gemm, StridedBatchedConfig};
use cudarc::driver::{CudaView, CudaViewMut};
use std::sync::Arc;

mod sealed {
    /// Only gpukit implements [`super::BlasElement`].
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Element types that matrix products accept on both backends: `f32` and `f64` (cuBLAS
/// `sgemm`/`dgemm` on a GPU, ndarray's `matrixmultiply` on the CPU). Sealed.
pub trait BlasElement: Float + ndarray::LinalgScalar + sealed::Sealed {
    /// cuBLAS's strided batched GEMM of this type (column-major, as cuBLAS sees memory).
    ///
    /// # Safety
    /// The views must hold every element that `cfg` describes.
    #[doc(hidden)]
    unsafe fn gemm_strided_batched(
        blas: &CudaBlas,
        cfg: StridedBatchedConfig<Self>,
        a: &CudaView<'_, Self>,
        b: &CudaView<'_, Self>,
        c: &mut CudaViewMut<'_, Self>,
    ) -> std::result::Result<(), CublasError>;
}

macro_rules! blas_element {
    ($($t:ty),*) => {$(
        impl BlasElement for $t {
            unsafe fn gemm_strided_batched(
                blas: &CudaBlas,
                cfg: StridedBatchedConfig<Self>,
                a: &CudaView<'_, Self>,
                b: &CudaView<'_, Self>,
                c: &mut CudaViewMut<'_, Self>,
            ) -> std::result::Result<(), CublasError> {
                // SAFETY: passed on from the caller.
                unsafe { <CudaBlas as Gemm<$t>>::gemm_strided_batched(blas, cfg, a, b, c) }
            }
        }
    )*};
}
blas_element!(f32, f64);

impl CudaBackend {
    /// The device's cuBLAS handle (created at the first call, on the device's stream), or an
    /// error saying why cuBLAS cannot be used (libcublas missing, the handle not created).
    pub(crate) fn blas(&self) -> Result<Arc<CudaBlas>> {
        self.ensure_usable()?;
        probe::cublas_probe().map_err(Error::Cuda)?;
        let mut slot = self.blas.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(blas) = slot.as_ref() {
            return Ok(blas.clone());
        }
        self.context()
            .bind_to_thread()
            .map_err(|e| driver_err("making the context current for cuBLAS", e))?;
        let blas = CudaBlas::new(self.stream().clone())
            .map(Arc::new)
            .map_err(|e| {
                cublas_err(
                    &format!("creating a cuBLAS handle on cuda:{}", self.ordinal()),
                    e,
                )
            })?;
        *slot = Some(blas.clone());
        Ok(blas)
    }
}

/// A cuBLAS status as an [`Error::Cuda`] saying what was being done.
pub(crate) fn cublas_err(what: &str, e: CublasError) -> Error {
    Error::Cuda(format!("cuBLAS failed {what}: {e:?}"))
}
