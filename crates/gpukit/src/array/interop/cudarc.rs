//! cudarc views of gpukit arrays, and cudarc slices as gpukit arrays: no copy either way.
//!
//! gpukit keeps every array of a CUDA device in a cudarc `CudaSlice` of its context, and queues
//! all of its work on one stream of that context ([`Device::cuda_stream`]). A view lent out here
//! is that same memory; work queued through it on that stream is ordered with gpukit's work,
//! as if gpukit had queued it. Work on any other stream must be synchronised by the caller
//! (gpukit's context has cudarc's cross-stream event tracking turned off).

use crate::array::{Array, IntoShape, Storage};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
use std::sync::Arc;

impl Device {
    /// The cudarc stream on which gpukit queues all of its work on this CUDA device.
    ///
    /// cudarc calls on gpukit memory (through [`Array::cuda_view`], say) made on this stream
    /// run in order with gpukit's kernels and copies; on any other stream they need explicit
    /// synchronisation. A CPU device has no stream: [`Error::NeedsGpu`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let stream = device.cuda_stream()?;
    /// let slice = stream.alloc_zeros::<f32>(4).map_err(|e| Error::Cuda(e.to_string()))?;
    /// let a = Array::from_cudarc(slice, 4)?; // gpukit's own stream: no copy, no wait
    /// assert_eq!(a.to_vec()?, vec![0.0; 4]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn cuda_stream(&self) -> Result<Arc<CudaStream>> {
        Ok(self.cuda_backend("a cudarc stream")?.stream().clone())
    }

    /// The cudarc context gpukit uses on this CUDA device: the device's primary context, the
    /// one the CUDA runtime (and so PyTorch, CuPy, ...) uses too. A CPU device has none:
    /// [`Error::NeedsGpu`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let ctx = device.cuda_context()?;
    /// assert_eq!(ctx.ordinal(), 0);
    /// assert!(ctx.is_primary());
    /// # Ok(())
    /// # }
    /// ```
    pub fn cuda_context(&self) -> Result<Arc<CudaContext>> {
        Ok(self.cuda_backend("a cudarc context")?.context().clone())
    }

    /// This device's backend, or [`Error::NeedsGpu`] naming `what` for the CPU.
    fn cuda_backend(&self, what: &str) -> Result<Arc<CudaBackend>> {
        match self {
            Device::Cpu => Err(Error::NeedsGpu { what: what.into() }),
            Device::Cuda(n) => {
                let backend = CudaBackend::get(*n)?;
                backend.ensure_usable()?;
                Ok(backend)
            }
        }
    }
}

impl<T: Element> Array<T> {
    /// The backend and slice of a CUDA array, or [`Error::NeedsGpu`] naming `what`.
    fn cuda_parts(&self, what: &str) -> Result<(&Arc<CudaBackend>, &CudaSlice<T>)> {
        match self.storage() {
            Storage::Cpu(_) => Err(Error::NeedsGpu {
                what: format!("{what} (this array is on the CPU)"),
            }),
            Storage::Cuda { backend, slice } => {
                backend.ensure_usable()?;
                Ok((backend, slice))
            }
        }
    }

    /// The array's device buffer as a cudarc slice, without a copy.
    ///
    /// Use it on [`Device::cuda_stream`] (or synchronise with it). The slice can be longer
    /// than the array: an empty array still holds one element, since CUDA allocates nothing
    /// smaller. [`Array::cuda_view`] has exactly [`Array::size`] elements. A CPU array has no
    /// device buffer: [`Error::NeedsGpu`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit::cudarc::driver::DevicePtr;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let a = Array::<f64>::ones_on(8, &device)?;
    /// let stream = device.cuda_stream()?;
    /// let (ptr, _sync) = a.cuda_slice()?.device_ptr(&stream);
    /// assert_eq!(ptr, a.as_device_ptr()?); // the same memory
    /// # Ok(())
    /// # }
    /// ```
    pub fn cuda_slice(&self) -> Result<&CudaSlice<T>> {
        Ok(self.cuda_parts("a cudarc slice")?.1)
    }

    /// A read-only cudarc view of the array's [`Array::size`] elements (C order), without a
    /// copy, and the stream to use it on (gpukit's stream of the device, so the view's work is
    /// ordered with gpukit's). A CPU array has no device buffer: [`Error::NeedsGpu`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let a = Array::from_vec_on(vec![1u32, 2, 3], 3, &device)?;
    /// let (view, stream) = a.cuda_view()?;
    /// let host = stream.clone_dtoh(&view).map_err(|e| Error::Cuda(e.to_string()))?;
    /// assert_eq!(host, vec![1, 2, 3]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn cuda_view(&self) -> Result<(CudaView<'_, T>, Arc<CudaStream>)> {
        let n = self.size();
        let (backend, slice) = self.cuda_parts("a cudarc view")?;
        Ok((slice.slice(0..n), backend.stream().clone()))
    }

    /// A writable cudarc view of the array's [`Array::size`] elements (C order), without a
    /// copy, and the stream to use it on. What is written through it is what gpukit reads
    /// next: here cuBLAS (through cudarc) multiplies two gpukit matrices into a third.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit::cudarc::cublas::{sys::cublasOperation_t::CUBLAS_OP_N, CudaBlas, Gemm, GemmConfig};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// # if !unsafe { gpukit::cudarc::cublas::sys::is_culib_present() } { return Ok(()) }
    /// let (m, k, n) = (2, 3, 2);
    /// let a = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [m, k], &device)?;
    /// let b = Array::from_vec_on(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], [k, n], &device)?;
    /// let mut c = Array::<f32>::zeros_on([m, n], &device)?;
    /// {
    ///     let (a_view, stream) = a.cuda_view()?;
    ///     let (b_view, _) = b.cuda_view()?;
    ///     let (mut c_view, _) = c.cuda_view_mut()?;
    ///     let blas = CudaBlas::new(stream)?; // cuBLAS on gpukit's stream
    ///     // cuBLAS is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
    ///     let cfg = GemmConfig {
    ///         transa: CUBLAS_OP_N, transb: CUBLAS_OP_N,
    ///         m: n as i32, n: m as i32, k: k as i32,
    ///         alpha: 1.0f32, lda: n as i32, ldb: k as i32, beta: 0.0f32, ldc: n as i32,
    ///     };
    ///     // SAFETY: the three views hold k·n, m·k and m·n elements, as cfg says.
    ///     unsafe { blas.gemm(cfg, &b_view, &a_view, &mut c_view)? };
    /// }
    /// assert_eq!(c.to_vec()?, vec![4.0, 5.0, 10.0, 11.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn cuda_view_mut(&mut self) -> Result<(CudaViewMut<'_, T>, Arc<CudaStream>)> {
        let n = self.size();
        self.cuda_parts("a cudarc view")?;
        match self.storage_mut() {
            Storage::Cuda { backend, slice } => {
                let stream = backend.stream().clone();
                Ok((slice.slice_mut(0..n), stream))
            }
            Storage::Cpu(_) => Err(Error::NeedsGpu {
                what: "a cudarc view (this array is on the CPU)".into(),
            }),
        }
    }

    /// A cudarc slice as a gpukit array of `shape`, without a copy: gpukit owns (and frees)
    /// it from now on, and counts it in [`memory_stats`](crate::memory_stats).
    ///
    /// The slice must belong to the CUDA context gpukit uses on its device (the primary context:
    /// [`Device::cuda_context`], or any `CudaContext::new(n)`); memory of another context is
    /// refused with [`Error::DeviceMismatch`]. A slice allocated on [`Device::cuda_stream`] is
    /// taken as it is. One allocated on another stream is moved to gpukit's: gpukit's stream
    /// first waits for the work queued on that stream so far (no host wait, no copy), and
    /// gpukit frees it there later. `shape` must hold exactly `slice.len()` elements (or none).
    /// On an error the slice is dropped (freed).
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let stream = device.cuda_stream()?;
    /// let slice = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
    ///     .map_err(|e| Error::Cuda(e.to_string()))?;
    /// let a = Array::from_cudarc(slice, [2, 3])?;
    /// assert_eq!(a.sum()?, 21.0);
    /// assert!(Array::from_cudarc(stream.alloc_zeros::<f32>(5).unwrap(), [2, 3]).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_cudarc(slice: CudaSlice<T>, shape: impl IntoShape) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let size = super::super::checked_size(&shape)?;
        if size != slice.len() && size != 0 {
            return Err(Error::Shape(format!(
                "a CudaSlice of {} element(s) cannot be an array of shape {shape:?} ({size} \
                 element(s))",
                slice.len()
            )));
        }
        let ordinal = slice.ordinal();
        let backend = CudaBackend::get(ordinal)?;
        backend.ensure_usable()?;
        if **slice.context() != **backend.context() {
            return Err(Error::DeviceMismatch(format!(
                "this CudaSlice belongs to a CUDA context of cuda:{ordinal} other than the one \
                 gpukit uses there (the device's primary context, `Device::cuda_context()`), so \
                 gpukit cannot use or free its memory; allocate it on `device.cuda_stream()?`"
            )));
        }
        let slice = if **slice.stream() == **backend.stream() {
            slice
        } else {
            let stream = backend.stream();
            stream
                .join(slice.stream())
                .map_err(|e| driver_err("ordering gpukit's stream after the slice's stream", e))?;
            let len = slice.len();
            let ptr = slice.leak();
            // SAFETY: `ptr` is a live allocation of `len` elements of this context that nothing
            // else owns any more (`leak` gave it up without freeing it); gpukit's stream waits
            // for the work queued on the old one, and frees it on drop.
            unsafe { stream.upgrade_device_ptr::<T>(ptr, len) }
        };
        Array::from_storage(shape, Storage::Cuda { backend, slice })
    }

    /// The array's device buffer as a cudarc slice, without a copy: the caller owns it from
    /// now on (gpukit no longer counts it in [`memory_stats`](crate::memory_stats)). It lives on
    /// [`Device::cuda_stream`]; it may be longer than the array when the array is empty.
    ///
    /// The array is consumed either way. A CPU array ([`Error::NeedsGpu`]) and an array whose
    /// buffer another library owns (made by `Array::from_dlpack` or
    /// [`Array::from_raw_device_ptr`]: use [`Array::cuda_view`] for those) are refused.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let a = Array::<i32>::full_on(5, 7, &device)?;
    /// let slice = a.into_cudarc()?;
    /// let stream = device.cuda_stream()?;
    /// assert_eq!(stream.clone_dtoh(&slice).unwrap(), vec![7; 5]);
    /// let back = Array::from_cudarc(slice, 5)?; // and back, still no copy
    /// assert_eq!(back.to_vec()?, vec![7; 5]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_cudarc(self) -> Result<CudaSlice<T>> {
        self.cuda_parts("a cudarc slice")?;
        match self.into_parts() {
            Ok((_, Storage::Cuda { slice, .. })) => Ok(slice),
            Ok((_, Storage::Cpu(_))) => Err(Error::NeedsGpu {
                what: "a cudarc slice (this array is on the CPU)".into(),
            }),
            Err(_) => Err(Error::Other(
                "this array wraps memory that another library owns (a DLPack tensor or a raw \
                 pointer), so it cannot become a CudaSlice that would free it; borrow it with \
                 `cuda_view()` / `cuda_view_mut()` instead"
                    .into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_arrays_and_devices_have_no_cudarc_side() {
        let mut a = Array::from_vec_on(vec![1.0f32, 2.0], 2, &Device::Cpu).unwrap();
        for e in [
            a.cuda_slice().err(),
            a.cuda_view().err(),
            Device::Cpu.cuda_stream().err(),
            Device::Cpu.cuda_context().err(),
        ] {
            match e {
                Some(Error::NeedsGpu { what }) => assert!(what.starts_with("a cudarc"), "{what}"),
                other => panic!("expected NeedsGpu, got {other:?}"),
            }
        }
        assert!(matches!(a.cuda_view_mut(), Err(Error::NeedsGpu { .. })));
        assert!(matches!(a.into_cudarc(), Err(Error::NeedsGpu { .. })));
    }
}
