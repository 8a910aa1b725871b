//! Moving and reshaping arrays: to_device, to_host, to_vec, clones, reshape, astype.

use super::{checked_size, kernels, Array, Storage};
use crate::backend::cuda::CudaBackend;
use crate::device::memory;
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use std::mem::ManuallyDrop;

impl<T: Element> Array<T> {
    /// A copy of this array on `device` (a plain copy when it already lives there).
    ///
    /// Large copies between host and GPU are staged through pinned buffers by several threads,
    /// near the link's rate; [`PinnedBuffer`](crate::PinnedBuffer) skips the staging copy.
    pub fn to_device(&self, device: &Device) -> Result<Array<T>> {
        if *device == self.device() {
            return self.try_clone();
        }
        match (self.storage(), device) {
            (Storage::Cpu(v), Device::Cuda(i)) => {
                let backend = CudaBackend::get(*i)?;
                let slice = backend.upload(v)?;
                Array::from_storage(self.shape().to_vec(), Storage::Cuda { backend, slice })
            }
            _ => {
                let data = self.read_elements()?;
                Array::from_host(data, self.shape().to_vec(), device)
            }
        }
    }

    /// The elements copied to host memory as an ndarray array of the same shape.
    ///
    /// Waits for the work queued on the array's device and returns any error it raised
    /// (or an error left by an in-place operator).
    pub fn to_host(&self) -> Result<ndarray::ArrayD<T>> {
        let data = self.to_vec()?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(self.shape()), data)
            .map_err(|e| Error::Shape(e.to_string()))
    }

    /// The elements in C order, copied to the host (synchronising like [`Array::to_host`]).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let data = self.read_elements()?;
        self.device().synchronize()?;
        Ok(data)
    }

    /// The only element of a one-element array (NumPy's `item()`), synchronising like
    /// [`Array::to_host`]; an error for any other size.
    pub fn item(&self) -> Result<T> {
        if self.size() != 1 {
            return Err(Error::Shape(format!(
                "item() needs exactly one element; this array has shape {:?}",
                self.shape()
            )));
        }
        Ok(self.to_vec()?[0])
    }

    /// Copies the elements to the host without consuming the device's pending errors
    /// (used by display, which must not swallow an error meant for the cell's end).
    pub(crate) fn read_elements(&self) -> Result<Vec<T>> {
        match self.storage() {
            Storage::Cpu(v) => {
                crate::backend::cpu_capture::forbid_in_capture("reading an array on the host")?;
                Ok(v.clone())
            }
            Storage::Cuda { backend, slice } => backend.download(slice, self.size()),
        }
    }

    /// A deep copy on the same device.
    pub fn try_clone(&self) -> Result<Array<T>> {
        let n = self.size();
        match self.storage() {
            Storage::Cpu(v) => Array::from_storage(self.shape().to_vec(), Storage::Cpu(v.clone())),
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the copy kernel queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                kernels::copy(backend, slice, &mut out, n)?;
                Array::from_storage(
                    self.shape().to_vec(),
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }

    /// A copy with a new shape holding the same number of elements (C order); one length may
    /// be `-1`, inferred from the size as in NumPy (`a.reshape([10_000, -1, 5])`). This borrows
    /// the array, so it copies; [`Array::into_shape`] (which consumes it) and
    /// `a.view().reshape(..)` (a view) never copy.
    pub fn reshape(&self, shape: impl super::NewShape) -> Result<Array<T>> {
        let shape = shape.resolve(self.size(), self.shape())?;
        self.try_clone()?.into_shape(shape)
    }

    /// This array with a new shape holding the same number of elements, without copying (one
    /// length may be `-1`, as in [`Array::reshape`]).
    pub fn into_shape(self, shape: impl super::NewShape) -> Result<Array<T>> {
        let shape = shape.resolve(self.size(), self.shape())?;
        self.check_reshape(&shape)?;
        let mut me = self;
        // Same number of elements: the buffer, its tracked bytes and any foreign owner stay.
        me.shape = shape;
        Ok(me)
    }

    /// The same as [`Array::into_shape`] (the consuming, copy-free reshape).
    pub fn into_reshape(self, shape: impl super::NewShape) -> Result<Array<T>> {
        self.into_shape(shape)
    }

    fn check_reshape(&self, shape: &[usize]) -> Result<()> {
        let n = checked_size(shape)?;
        if n != self.size() {
            return Err(Error::Shape(format!(
                "cannot reshape an array of shape {:?} ({} elements) to {shape:?} ({n} elements)",
                self.shape(),
                self.size()
            )));
        }
        Ok(())
    }

    /// Takes the array apart (its buffer leaves the allocation tracker), or gives it back
    /// unchanged when another library owns its buffer: such a buffer must stay with its owner,
    /// never become a `Storage` that frees it.
    pub(crate) fn into_parts(self) -> std::result::Result<(Vec<usize>, Storage<T>), Array<T>> {
        if self.is_foreign() {
            return Err(self);
        }
        let me = ManuallyDrop::new(self);
        memory::track_free(me.storage().device(), me.tracked);
        // SAFETY: `me` is never used or dropped again; each field is read exactly once (the
        // `foreign` field is `None`, so nothing is left behind).
        unsafe { Ok((std::ptr::read(&me.shape), std::ptr::read(&me.storage))) }
    }

    /// The elements converted to `U` as Rust's `as` does (floats to integers truncate and
    /// saturate, NaN becomes 0; nonzero becomes `true`), on the same device.
    ///
    /// Complex arrays convert only to and from `f32`, `f64` and the other complex type (to a
    /// real type: the real part, as NumPy's `astype`); other pairs are an error on every device.
    pub fn astype<U: Element>(&self) -> Result<Array<U>> {
        super::kernels::complex::check_cast(T::DTYPE, U::DTYPE)?;
        let n = self.size();
        match self.storage() {
            Storage::Cpu(v) => {
                let mut out = vec![U::zero(); n];
                crate::backend::cpu::map(v, &mut out, |&x| U::cast_from(x));
                Array::from_storage(self.shape().to_vec(), Storage::Cpu(out))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the cast kernel queued right after.
                let mut out = unsafe { backend.alloc::<U>(n)? };
                kernels::cast(backend, slice, &mut out, n)?;
                Array::from_storage(
                    self.shape().to_vec(),
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }
}

impl<T: Element> Clone for Array<T> {
    /// A deep copy on the same device.
    ///
    /// # Panics
    /// If the device cannot allocate the copy; [`Array::try_clone`] returns that as an error.
    fn clone(&self) -> Self {
        match self.try_clone() {
            Ok(a) => a,
            Err(e) => panic!("Array::clone failed: {e} (use try_clone to handle this)"),
        }
    }
}
