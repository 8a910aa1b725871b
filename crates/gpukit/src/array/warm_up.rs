//! Compiling gpukit's built-in array kernels ahead of first use (the installer warms the
//! on-disk kernel cache with it).
//!
//! The method belongs to [`Device`] but is defined here, in the array layer that owns those
//! kernels: the device layer below knows nothing of arrays.

use super::kernels;
use crate::backend::cuda::CudaBackend;
use crate::device::Device;
use crate::error::Result;

impl Device {
    /// Compiles gpukit's built-in array kernels for this device now (they are otherwise compiled
    /// on first use), filling the kernel cache on disk; returns the number of modules. Nothing to
    /// do on the CPU (0). Used by the installer to warm the cache.
    pub fn precompile_builtin_kernels(&self) -> Result<usize> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(n) => kernels::precompile(&*CudaBackend::get(*n)?),
        }
    }
}
