//! Raw device addresses: an array's, and any CUDA allocation as an array (`unsafe`).

use super::Foreign;
use crate::array::{checked_size, Array, IntoShape, Storage};
use crate::backend::cuda::CudaBackend;
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::DevicePtr;

impl<T: Element> Array<T> {
    /// The device address (a `CUdeviceptr`) of the array's first element, for CUDA libraries
    /// that take raw pointers. Elements follow in C order, [`Array::size`] of them.
    ///
    /// Getting the address is safe; using it is the caller's responsibility: it is valid while
    /// the array lives (moving the `Array` value does not move its buffer), work through it must
    /// be queued on [`Device::cuda_stream`] or synchronised with it, and writing through it
    /// while gpukit reads the array (or through an address of an array only borrowed shared)
    /// is a data race. A CPU array has no device address: [`Error::NeedsGpu`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let a = Array::<f32>::zeros_on(1024, &device)?;
    /// let ptr = a.as_device_ptr()?;
    /// assert_eq!(ptr % 4, 0);
    /// let same = a.into_shape([32, 32])?; // reshaping without a copy keeps the address
    /// assert_eq!(same.as_device_ptr()?, ptr);
    /// # Ok(())
    /// # }
    /// ```
    pub fn as_device_ptr(&self) -> Result<u64> {
        match self.storage() {
            Storage::Cpu(_) => Err(Error::NeedsGpu {
                what: "a device pointer (this array is on the CPU)".into(),
            }),
            Storage::Cuda { backend, slice } => {
                backend.ensure_usable()?;
                let (ptr, _sync) = slice.device_ptr(backend.stream());
                Ok(ptr)
            }
        }
    }

    /// An array of `shape` over device memory gpukit did not allocate, without a copy. `owner`
    /// is whatever keeps that memory alive (the `CudaSlice` it came from, another library's
    /// tensor, a guard that frees it, or `()` when it outlives the array anyway): gpukit never
    /// frees the memory itself, and drops `owner` when the array is dropped, after the work
    /// gpukit queued on the device has finished. The array is not counted by
    /// [`memory_stats`](crate::memory_stats), which counts what gpukit allocated.
    ///
    /// gpukit checks what the CUDA driver can tell: `device` is a CUDA device; `ptr` is
    /// non-null and aligned for `T`; it is device memory of `device` (not host, managed or
    /// another device's memory); the array's bytes lie inside one allocation. Errors drop
    /// `owner`. An empty `shape` gives an ordinary empty gpukit array (and drops `owner`).
    ///
    /// # Safety
    ///
    /// * `ptr` is the address of as many initialised values of `T` as `shape` has elements, in C order,
    ///   in memory of `device` allocated in this process in the device's primary context (the
    ///   one the CUDA runtime uses, and gpukit: [`Device::cuda_context`]); for `bool`, every byte
    ///   is 0 or 1.
    /// * The memory stays allocated, and is freed by no one, until `owner` is dropped.
    /// * While the array lives, work of others on that memory is ordered with gpukit's stream
    ///   ([`Device::cuda_stream`]): finished before gpukit's next use, or queued on that stream.
    ///   gpukit writes to it (in-place operators, kernels with `&mut` parameters) as to any of
    ///   its arrays.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit::cudarc::driver::DevicePtr;
    /// # fn main() -> gpukit::Result<()> {
    /// let Ok(device) = Device::cuda(0) else { return Ok(()) }; // needs a CUDA GPU
    /// let stream = device.cuda_stream()?;
    /// let slice = stream.clone_htod(&[1.0f64, 2.0, 3.0, 4.0]).map_err(|e| Error::Cuda(e.to_string()))?;
    /// let (ptr, _) = slice.device_ptr(&stream);
    /// // SAFETY: four f64 of cuda:0's primary context, freed when `slice` (the owner) is dropped.
    /// let a = unsafe { Array::<f64>::from_raw_device_ptr(ptr, [2, 2], &device, slice)? };
    /// assert_eq!(a.sum()?, 10.0);
    /// // gpukit refuses what the driver can tell is wrong: here, a misaligned address.
    /// let other = stream.alloc_zeros::<f64>(4).map_err(|e| Error::Cuda(e.to_string()))?;
    /// let (bad, _) = other.device_ptr(&stream);
    /// assert!(unsafe { Array::<f64>::from_raw_device_ptr(bad + 1, 2, &device, ()) }.is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub unsafe fn from_raw_device_ptr(
        ptr: u64,
        shape: impl IntoShape,
        device: &Device,
        owner: impl Send + 'static,
    ) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let size = checked_size(&shape)?;
        let Device::Cuda(ordinal) = *device else {
            return Err(Error::NeedsGpu {
                what: "an array over a raw device pointer".into(),
            });
        };
        let backend = CudaBackend::get(ordinal)?;
        backend.ensure_usable()?;
        if size == 0 {
            return Array::zeros_on(shape, device);
        }
        let bytes = size
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::Shape(format!("shape {shape:?} has too many bytes")))?;
        check_address(ptr, std::mem::align_of::<T>(), "a raw device pointer")?;
        backend.check_device_range(ptr, bytes, "a raw device pointer")?;
        // SAFETY: `ptr` holds `size` elements of this device's primary context (the caller's
        // contract, checked as far as the driver can); the array leaks this slice on drop
        // instead of freeing it, and `owner` keeps the memory alive until then.
        let slice = unsafe { backend.stream().upgrade_device_ptr::<T>(ptr, size) };
        Array::from_foreign(shape, Storage::Cuda { backend, slice }, Foreign::new(owner))
    }
}

/// Refuses a null or misaligned address (`align` bytes) that `what` gave.
pub(crate) fn check_address(ptr: u64, align: usize, what: &str) -> Result<()> {
    if ptr == 0 {
        return Err(Error::Other(format!(
            "{what} is null but the array has elements"
        )));
    }
    if !ptr.is_multiple_of(align as u64) {
        return Err(Error::Other(format!(
            "{what} at {ptr:#x} is not aligned to {align} bytes, as its element type needs"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn addresses_are_checked_before_the_driver_is_asked() {
        assert!(check_address(256, 8, "x").is_ok());
        let e = check_address(0, 4, "a raw device pointer").unwrap_err();
        assert!(e.to_string().contains("is null"), "{e}");
        let e = check_address(0x1002, 4, "a raw device pointer").unwrap_err();
        assert!(
            e.to_string().contains("0x1002 is not aligned to 4 bytes"),
            "{e}"
        );
    }

    #[test]
    fn cpu_arrays_have_no_device_address_and_errors_drop_the_owner() {
        let a = Array::from_vec_on(vec![1i64, 2], 2, &Device::Cpu).unwrap();
        assert!(matches!(a.as_device_ptr(), Err(Error::NeedsGpu { .. })));
        struct Counted(Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        // SAFETY: refused before the address is used.
        let e = unsafe {
            Array::<f32>::from_raw_device_ptr(0x1000, 4, &Device::Cpu, Counted(drops.clone()))
        }
        .expect_err("the CPU has no device memory");
        assert!(matches!(e, Error::NeedsGpu { .. }), "{e}");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}
