//! Where an array's elements live: a host `Vec` or a CUDA buffer.

use crate::backend::cuda::CudaBackend;
use crate::device::Device;
use crate::element::Element;
use cudarc::driver::CudaSlice;
use std::sync::Arc;

/// The buffer behind an [`Array`](crate::Array).
///
/// A CUDA buffer may be longer than the array (an empty array still holds one element, since
/// the driver rejects empty allocations); the array's `size()` is the number of valid elements.
pub(crate) enum Storage<T: Element> {
    /// Elements in host memory, used by the CPU backend.
    Cpu(Vec<T>),
    /// Elements in the memory of one CUDA device.
    Cuda {
        /// The device's backend (context and stream).
        backend: Arc<CudaBackend>,
        /// The device buffer.
        slice: CudaSlice<T>,
    },
}

impl<T: Element> Storage<T> {
    /// The device the elements live on.
    pub(crate) fn device(&self) -> Device {
        match self {
            Storage::Cpu(_) => Device::Cpu,
            Storage::Cuda { backend, .. } => backend.device(),
        }
    }

    /// An error when the buffer lived on a CUDA device that a fault has since destroyed (see
    /// `backend::cuda::fault`); `Ok` otherwise.
    pub(crate) fn ensure_usable(&self) -> crate::error::Result<()> {
        match self {
            Storage::Cpu(_) => Ok(()),
            Storage::Cuda { backend, .. } => backend.ensure_usable(),
        }
    }

    /// Number of elements the buffer holds.
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Storage::Cpu(v) => v.len(),
            Storage::Cuda { slice, .. } => slice.len(),
        }
    }
}
