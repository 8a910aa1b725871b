//! The CUDA backend (cudarc).
use crate::error::Result;
use std::sync::Arc;

/// Number of usable CUDA devices, or why there are none.
pub(crate) fn probe() -> std::result::Result<usize, String> {
    Err("CUDA backend not built yet".into())
}

/// One CUDA device: context, stream, caches.
pub(crate) struct CudaBackend {}

impl CudaBackend {
    /// The backend of device `ordinal`.
    pub(crate) fn get(_ordinal: usize) -> Result<Arc<CudaBackend>> {
        Err(crate::error::Error::NoGpu("CUDA backend not built yet".into()))
    }
    /// Wait for queued work.
    pub(crate) fn synchronize(&self) -> Result<()> {
        crate::kernel::bounds::check_pending(self)
    }
}
