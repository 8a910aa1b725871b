//! Pinned (page-locked) host buffers and the array copies that use them.
//!
//! Ordinary host memory can be paged out, so the GPU's copy engines cannot read or write it
//! directly; every copy of it goes through an intermediate pinned buffer. A [`PinnedBuffer`]
//! is pinned from the start: copies between it and a GPU run at the full rate of the link, and
//! a copy to the device does not make the host wait. gpukit already stages large copies of
//! ordinary memory through pinned buffers of its own; a `PinnedBuffer` saves that extra
//! host-side copy when the same host data goes back and forth many times.

use super::{checked_size, Array, IntoShape, Storage};
use crate::backend::cpu;
use crate::backend::cuda::pinned::PinnedAlloc;
use crate::backend::cuda::{staging, CudaBackend};
use crate::device::{default_device, Device};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use std::marker::PhantomData;
use std::sync::Arc;

/// A host buffer of `len` elements in page-locked ("pinned") memory, for fast copies to and
/// from a GPU: [`Array::from_pinned`], [`Array::copy_from_pinned`], [`Array::to_pinned`],
/// [`Array::copy_to_pinned`].
///
/// Made for one device ([`PinnedBuffer::zeros_on`]); for the CPU device it is ordinary memory
/// (nothing to pin), so code using it runs unchanged without a GPU. It dereferences to a slice.
/// Pinned memory cannot be swapped out: allocate a few large buffers and reuse them rather than
/// making many (allocating pins every page, which takes a while).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let mut host = PinnedBuffer::<f64>::zeros(1000)?;   // pinned where a GPU is in use
/// host.as_mut_slice()[0] = 1.5;
/// let a = Array::from_pinned(&host, [10, 100])?;      // host -> device
/// let b = (&a * 2.0)?;
/// b.copy_to_pinned(&mut host)?;                       // device -> host, reusing the buffer
/// assert_eq!(host[0], 3.0);
/// # Ok(())
/// # }
/// ```
pub struct PinnedBuffer<T: Element> {
    len: usize,
    mem: Mem<T>,
}

enum Mem<T> {
    /// Page-locked memory for a CUDA device, with the backend of that device.
    Pinned {
        alloc: PinnedAlloc,
        backend: Arc<CudaBackend>,
        _elements: PhantomData<T>,
    },
    /// Ordinary memory (for the CPU device).
    Host(Vec<T>),
}

impl<T: Element> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if let Mem::Pinned { backend, .. } = &self.mem {
            if backend.is_lost() {
                // Freed with the destroyed context (see `Array`'s drop): never free it again.
                if let Mem::Pinned { alloc, .. } =
                    std::mem::replace(&mut self.mem, Mem::Host(Vec::new()))
                {
                    std::mem::forget(alloc);
                }
            }
        }
    }
}

impl<T: Element> PinnedBuffer<T> {
    /// `len` zeros in pinned memory for the default device.
    pub fn zeros(len: usize) -> Result<PinnedBuffer<T>> {
        Self::zeros_on(len, &default_device())
    }

    /// `len` zeros in pinned memory for `device` (ordinary memory for [`Device::Cpu`]).
    /// Failing to allocate is [`Error::OutOfMemory`].
    pub fn zeros_on(len: usize, device: &Device) -> Result<PinnedBuffer<T>> {
        let mem = match device {
            Device::Cpu => Mem::Host(cpu::alloc_filled(len, T::zero())?),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
                    Error::OutOfMemory {
                        device: "host (pinned)".into(),
                        requested: usize::MAX,
                        free: cpu::available_memory().unwrap_or(0),
                    }
                })?;
                let alloc = PinnedAlloc::new(backend.stream(), bytes)?;
                // SAFETY: fresh memory of `bytes` bytes owned here; zero bits are a valid T.
                unsafe { staging::par_zero(alloc.ptr(), bytes) };
                Mem::Pinned {
                    alloc,
                    backend,
                    _elements: PhantomData,
                }
            }
        };
        Ok(PinnedBuffer { len, mem })
    }

    /// A copy of `data` in pinned memory for the default device.
    pub fn from_slice(data: &[T]) -> Result<PinnedBuffer<T>> {
        Self::from_slice_on(data, &default_device())
    }

    /// A copy of `data` in pinned memory for `device`.
    pub fn from_slice_on(data: &[T], device: &Device) -> Result<PinnedBuffer<T>> {
        let mut b = Self::zeros_on(data.len(), device)?;
        b.as_mut_slice().copy_from_slice(data);
        Ok(b)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the memory is page-locked (false for a buffer made for the CPU device).
    pub fn is_pinned(&self) -> bool {
        matches!(self.mem, Mem::Pinned { .. })
    }

    /// The device the buffer was made for.
    pub fn device(&self) -> Device {
        match &self.mem {
            Mem::Pinned { backend, .. } => backend.device(),
            Mem::Host(_) => Device::Cpu,
        }
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        match &self.mem {
            // SAFETY: `len` initialised elements (zeroed at allocation, then only written
            // through this type); copies to the device only read them.
            Mem::Pinned { alloc, .. } => unsafe {
                std::slice::from_raw_parts(alloc.ptr() as *const T, self.len)
            },
            Mem::Host(v) => v,
        }
    }

    /// The elements, for writing. Waits first for copies to the device that still read them
    /// (an error while waiting is kept for the device's next synchronisation).
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.mem {
            Mem::Pinned { alloc, backend, .. } => {
                if let Err(e) = alloc.wait_idle() {
                    backend.set_pending_error(e);
                }
                // SAFETY: as in `as_slice`; borrowed exclusively, and no copy reads it now.
                unsafe { std::slice::from_raw_parts_mut(alloc.ptr() as *mut T, self.len) }
            }
            Mem::Host(v) => v,
        }
    }

    fn check_len(&self, n: usize, what: &str) -> Result<()> {
        if n != self.len {
            return Err(Error::Shape(format!(
                "{what}: the pinned buffer holds {} element(s), the array {n}",
                self.len
            )));
        }
        Ok(())
    }
}

impl<T: Element> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Element> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Element> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PinnedBuffer<{}>(len {}, {}, {})",
            T::DTYPE,
            self.len,
            if self.is_pinned() {
                "pinned"
            } else {
                "pageable"
            },
            self.device()
        )
    }
}

impl<T: Element> Array<T> {
    /// A copy of a pinned buffer as an array of `shape` (holding exactly `buf.len()` elements),
    /// on the default device. On a GPU the copy runs at the link's full rate and the host does
    /// not wait for it (the buffer waits before it is written again).
    pub fn from_pinned(buf: &PinnedBuffer<T>, shape: impl IntoShape) -> Result<Array<T>> {
        Self::from_pinned_on(buf, shape, &default_device())
    }

    /// [`Array::from_pinned`] on `device`.
    pub fn from_pinned_on(
        buf: &PinnedBuffer<T>,
        shape: impl IntoShape,
        device: &Device,
    ) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        if n != buf.len() {
            return Err(Error::Shape(format!(
                "a pinned buffer of {} element(s) cannot have shape {shape:?} ({n} element(s))",
                buf.len()
            )));
        }
        match device {
            Device::Cpu => Array::from_storage(shape, Storage::Cpu(buf.as_slice().to_vec())),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                // SAFETY: fully written by the copy below (or empty, never read).
                let mut slice = unsafe { backend.alloc::<T>(n)? };
                copy_in(&backend, buf, &mut slice)?;
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
        }
    }

    /// Overwrites this array's elements (C order) with a pinned buffer's, which must hold as
    /// many; asynchronous on a GPU, like [`Array::from_pinned`].
    pub fn copy_from_pinned(&mut self, buf: &PinnedBuffer<T>) -> Result<()> {
        buf.check_len(self.size(), "copy_from_pinned")?;
        match self.storage_mut() {
            Storage::Cpu(v) => v.copy_from_slice(buf.as_slice()),
            Storage::Cuda { backend, slice } => copy_in(backend, buf, slice)?,
        }
        Ok(())
    }

    /// The elements copied into a new pinned buffer made for this array's device (waits and
    /// reports errors like [`Array::to_host`]). Allocating pinned memory is slow: to copy
    /// repeatedly, make the buffer once and use [`Array::copy_to_pinned`].
    pub fn to_pinned(&self) -> Result<PinnedBuffer<T>> {
        let mut buf = PinnedBuffer::zeros_on(self.size(), &self.device())?;
        self.copy_to_pinned(&mut buf)?;
        Ok(buf)
    }

    /// Copies the elements (C order) into a pinned buffer that holds exactly as many, waits for
    /// the copy and reports errors of the device's queued work like [`Array::to_host`].
    pub fn copy_to_pinned(&self, buf: &mut PinnedBuffer<T>) -> Result<()> {
        buf.check_len(self.size(), "copy_to_pinned")?;
        let n = self.size();
        match self.storage() {
            Storage::Cpu(v) => buf.as_mut_slice().copy_from_slice(v),
            Storage::Cuda { backend, slice } => match &mut buf.mem {
                Mem::Pinned { alloc, .. } => {
                    let (src, _record) = slice.device_ptr(backend.stream());
                    backend.copy_dtoh_pinned(src, alloc, n * std::mem::size_of::<T>())?;
                }
                Mem::Host(v) => backend.download_into(slice, 0, v)?,
            },
        }
        self.device().synchronize()
    }
}

/// Copies all of `buf` into the start of a device buffer.
fn copy_in<T: Element>(
    backend: &CudaBackend,
    buf: &PinnedBuffer<T>,
    slice: &mut cudarc::driver::CudaSlice<T>,
) -> Result<()> {
    match &buf.mem {
        Mem::Pinned { alloc, .. } => {
            let (dst, _record) = slice.device_ptr_mut(backend.stream());
            backend.copy_htod_pinned(alloc, buf.len() * std::mem::size_of::<T>(), dst)
        }
        Mem::Host(v) => backend.upload_into(v, slice),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_buffers_round_trip_and_check_sizes() {
        let cpu = Device::Cpu;
        let mut buf = PinnedBuffer::<f64>::zeros_on(6, &cpu).unwrap();
        assert_eq!(
            (buf.len(), buf.is_empty(), buf.is_pinned()),
            (6, false, false)
        );
        assert_eq!(buf.device(), Device::Cpu);
        assert!(buf.iter().all(|&x| x == 0.0));
        buf.as_mut_slice()
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as f64 + 0.5);
        let a = Array::from_pinned_on(&buf, (2, 3), &cpu).unwrap();
        assert_eq!(a.shape(), &[2, 3]);
        assert_eq!(a.to_vec().unwrap(), buf.as_slice());

        let e = Array::from_pinned_on(&buf, 5, &cpu).unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e}");
        let mut small = PinnedBuffer::<f64>::zeros_on(5, &cpu).unwrap();
        let e = a.copy_to_pinned(&mut small).unwrap_err();
        assert!(
            e.to_string().contains("6") && e.to_string().contains("5"),
            "{e}"
        );
        let mut b = Array::<f64>::zeros_on(5, &cpu).unwrap();
        assert!(matches!(b.copy_from_pinned(&buf), Err(Error::Shape(_))));

        let doubled = (&a * 2.0).unwrap();
        let mut out = PinnedBuffer::<f64>::zeros_on(6, &cpu).unwrap();
        doubled.copy_to_pinned(&mut out).unwrap();
        assert_eq!(out[5], 11.0);
        let mut c = Array::<f64>::zeros_on([3, 2], &cpu).unwrap();
        c.copy_from_pinned(&out).unwrap();
        assert_eq!(c.to_vec().unwrap(), out.to_vec());
        assert_eq!(c.to_pinned().unwrap().as_slice(), out.as_slice());
        assert!(format!("{out:?}").contains("len 6"));
    }

    #[test]
    fn empty_and_from_slice() {
        let e = PinnedBuffer::<u8>::zeros_on(0, &Device::Cpu).unwrap();
        assert!(e.is_empty());
        let a = Array::from_pinned_on(&e, 0, &Device::Cpu).unwrap();
        assert_eq!(a.size(), 0);
        let b = PinnedBuffer::from_slice_on(&[true, false], &Device::Cpu).unwrap();
        assert_eq!(b.as_slice(), &[true, false]);
        let huge = PinnedBuffer::<f64>::zeros_on(usize::MAX / 4, &Device::Cpu).unwrap_err();
        assert!(matches!(huge, Error::OutOfMemory { .. }), "{huge}");
    }
}
