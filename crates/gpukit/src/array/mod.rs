//! `Array<T>`: an n-dimensional, C-contiguous array that owns its buffer on one device.
//!
//! Submodules, one concept each: `storage` (host or device buffer), `construct` (zeros, arange,
//! from ndarray, ...), `transfer` (to_device, to_host, reshape, astype), `pinned` (pinned host
//! buffers and their copies), `ops` (elementwise arithmetic and operators), `math` (unary
//! functions, comparisons), `reduce` (sum, mean, min, max), `axis` (axis arguments, keepdims),
//! `reduce_axis` (reductions along an axis, var/std, arg-reductions, cumsum), `select` (where,
//! boolean masks), `ufuncs` (NumPy's other elementwise functions, clip, maximum), `random`
//! (seedable random arrays: cuRAND on the GPU, ChaCha8 on the CPU), `display` (CuPy-like repr and the
//! evcxr display hook), `kernels/` (the built-in CUDA kernels), `kernel_args` (arrays as
//! kernel arguments), `vectorize` (the `#[vectorize]` runtime), `warm_up` (compiling the
//! built-in kernels ahead of use), `interop/` (cudarc, DLPack, candle and raw device pointers),
//! `linalg/` (matrix products: cuBLAS on a GPU, ndarray on the CPU), `sort/` (sort and argsort
//! along any axis: bitonic sorts in shared memory on a GPU, rayon on the CPU), `complex` (complex
//! arrays' parts and arithmetic), `fft/` (Fourier transforms: cuFFT on a GPU, rustfft on the CPU), `view/`
//! (strided views: transpose, slicing, reshape, broadcasting, concatenate/stack).

mod axis;
mod capture;
mod complex;
mod construct;
mod display;
pub mod fft;
mod interop;
mod kernel_args;
pub(crate) mod kernels;
pub mod linalg;
mod math;
mod op;
mod ops;
mod pinned;
pub mod random;
mod reduce;
mod reduce_axis;
mod select;
mod sort;
mod storage;
mod transfer;
mod ufuncs;
pub(crate) mod vectorize;
pub(crate) mod view;
mod warm_up;

pub use axis::{keepdims, AxisArg, IntoAxis};
pub use construct::IntoShape;
pub use ops::{IntoRhs, Rhs};
pub use pinned::PinnedBuffer;
pub use view::{
    concatenate, stack, ArrayView, ArrayViewMut, AsView, AxisIndex, IntoViewOperand, NewShape,
    ViewOperand,
};

pub(crate) use storage::Storage;

use crate::device::memory;
use crate::device::Device;
use crate::element::{DType, Element};
use crate::error::{Error, Result};

/// An n-dimensional, C-contiguous array on one device (a CUDA GPU or the CPU).
///
/// Created on the default device ([`crate::default_device`]) by [`Array::zeros`],
/// [`Array::arange`], [`Array::from_vec`], ... or on a given one with the `_on` variants.
/// Work on CUDA arrays is queued asynchronously on the device's stream, as in CuPy;
/// [`Array::to_host`] and [`Array::synchronize`] wait for it.
pub struct Array<T: Element> {
    shape: Vec<usize>,
    storage: Storage<T>,
    /// Bytes registered with the allocation tracker (released on drop).
    tracked: usize,
    /// What keeps the buffer alive when another library owns it (a DLPack tensor, the owner of
    /// a raw pointer); `None` when gpukit allocated it. A foreign buffer is never freed by gpukit
    /// and not counted by the allocation tracker.
    foreign: Option<interop::Foreign>,
}

/// Number of elements of `shape`, or a shape error when it overflows `usize`.
pub(crate) fn checked_size(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::Shape(format!("shape {shape:?} has too many elements")))
}

impl<T: Element> Array<T> {
    /// Wraps a buffer as an array of `shape` (the buffer must hold at least `shape`'s size;
    /// CPU buffers exactly that many).
    pub(crate) fn from_storage(shape: Vec<usize>, storage: Storage<T>) -> Result<Array<T>> {
        let size = checked_size(&shape)?;
        if let Storage::Cpu(_) = &storage {
            crate::backend::cpu_capture::forbid_in_capture(
                "creating an array (a new array or a temporary)",
            )?;
        }
        let ok = match &storage {
            Storage::Cpu(v) => v.len() == size,
            Storage::Cuda { slice, .. } => slice.len() >= size,
        };
        if !ok {
            return Err(Error::Shape(format!(
                "a buffer of {} element(s) cannot hold shape {shape:?} ({size} element(s))",
                storage.capacity()
            )));
        }
        let tracked = size * std::mem::size_of::<T>();
        memory::track_alloc(storage.device(), tracked);
        Ok(Array {
            shape,
            storage,
            tracked,
            foreign: None,
        })
    }

    /// Wraps a buffer that another library owns as an array of `shape`: `owner` keeps it alive
    /// and is dropped when the array is, after gpukit's queued work on the device has finished.
    /// The buffer itself is never freed by gpukit (a CUDA slice is leaked, not freed), and it is
    /// not counted by the allocation tracker. Only CUDA buffers can be foreign: a `Storage::Cpu`
    /// is a `Vec` of Rust's allocator and is freed as usual (CPU imports copy into one).
    pub(crate) fn from_foreign(
        shape: Vec<usize>,
        storage: Storage<T>,
        owner: interop::Foreign,
    ) -> Result<Array<T>> {
        // Built first, so that an error below drops it the foreign way (leaked, owner released).
        let array = Array {
            shape,
            storage,
            tracked: 0,
            foreign: Some(owner),
        };
        let size = checked_size(&array.shape)?;
        if array.storage.capacity() < size {
            return Err(Error::Shape(format!(
                "a foreign buffer of {} element(s) cannot hold shape {:?} ({size} element(s))",
                array.storage.capacity(),
                array.shape
            )));
        }
        Ok(array)
    }

    /// Whether another library owns the buffer (see [`Array::from_foreign`]).
    pub(crate) fn is_foreign(&self) -> bool {
        self.foreign.is_some()
    }

    /// The buffer.
    pub(crate) fn storage(&self) -> &Storage<T> {
        &self.storage
    }

    /// The buffer, for writing (kernels with `&mut` parameters, in-place operators).
    pub(crate) fn storage_mut(&mut self) -> &mut Storage<T> {
        &mut self.storage
    }

    /// The dimensions, e.g. `[3, 4]` for a 3x4 matrix (empty for a 0-d array).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// Length of the first dimension (the number of elements of a 0-d array: 1).
    pub fn len(&self) -> usize {
        self.shape.first().copied().unwrap_or(1)
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.size() == 0
    }

    /// Bytes occupied by the elements.
    pub fn nbytes(&self) -> usize {
        self.size() * std::mem::size_of::<T>()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// The device the array lives on.
    pub fn device(&self) -> Device {
        self.storage.device()
    }

    /// Waits for all queued work on this array's device and reports any error it raised.
    pub fn synchronize(&self) -> Result<()> {
        self.device().synchronize()
    }
}

impl<T: Element> Drop for Array<T> {
    fn drop(&mut self) {
        if self.foreign.is_none() {
            memory::track_free(self.storage.device(), self.tracked);
        }
        if self.foreign.is_none() && self.storage.ensure_usable().is_ok() {
            // A live graph that replays work on this buffer keeps it.
            self.give_buffer_to_graph();
        }
        if let Storage::Cuda { backend, .. } = &self.storage {
            let lost = backend.is_lost();
            if !lost && self.foreign.is_some() {
                // The owner (dropped with the `foreign` field, after this) may free the memory at
                // once: gpukit's queued work on it must be done first. A failure here is a fault
                // that the device's next use reports.
                let _ = backend.stream().synchronize();
            }
            if lost || self.foreign.is_some() {
                // Lost: the memory went with the destroyed context; freeing the stale address now
                // could free memory of the device's new context. Foreign: its owner frees it.
                // Either way, let the handle go unfreed.
                if let Storage::Cuda { slice, .. } =
                    std::mem::replace(&mut self.storage, Storage::Cpu(Vec::new()))
                {
                    let _ = slice.leak();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_can_cross_threads() {
        fn check<A: Send + Sync>() {}
        check::<Array<f32>>();
        check::<Array<bool>>();
    }

    #[test]
    fn from_storage_checks_the_buffer() {
        let e = Array::from_storage(vec![2, 3], Storage::Cpu(vec![0.0f64; 5])).unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e}");
        let huge = checked_size(&[usize::MAX, 2]).unwrap_err();
        assert!(matches!(huge, Error::Shape(_)));
        let a = Array::from_storage(vec![2, 3], Storage::Cpu(vec![1u8; 6])).unwrap();
        let Ok((shape, storage)) = a.into_parts() else {
            panic!("a gpukit-owned array comes apart")
        };
        assert_eq!((shape, storage.capacity()), (vec![2, 3], 6));
    }
}
