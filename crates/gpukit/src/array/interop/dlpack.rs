//! DLPack export and import (through dlpark): device, dtype, shape and strides honoured.
//!
//! Export ([`Array::into_dlpack`], [`Array::into_dlpack_legacy`]) moves the array into the
//! managed tensor, which owns it until the consumer calls the tensor's deleter: the buffer
//! stays alive (and counted by [`memory_stats`](crate::memory_stats)) as long as the tensor.
//! Nothing is copied.
//!
//! Import ([`Array::from_dlpack`]) takes any managed tensor, of either ABI, whose layout a gpukit
//! array can hold: on the CPU or a CUDA device, of a gpukit element type, C-contiguous, aligned.
//! Anything else is refused with an error saying what, never read in a layout it does not
//! have. CUDA memory is wrapped without a copy and the tensor is kept (its deleter runs when
//! the array is dropped). A CPU tensor from another library is copied once, because a CPU
//! array owns a `Vec`; a tensor that gpukit exported itself gives its array back, uncopied.

use super::raw::check_address;
use super::{is_c_contiguous, rust_name, Foreign};
use crate::array::{checked_size, Array, Storage};
use crate::backend::cuda::CudaBackend;
use crate::device::Device;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use cudarc::driver::DevicePtr;
use dlpark::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType};
use dlpark::metadata::Dynamic;
use dlpark::{DlpackFlags, Managed, ManagedTensorBase};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Mutex;

/// The DLPack data type of a gpukit element type.
pub(crate) fn dl_dtype(d: DType) -> DLDataType {
    match d {
        DType::Bool => DLDataType::BOOL,
        DType::U8 => DLDataType::U8,
        DType::I32 => DLDataType::I32,
        DType::I64 => DLDataType::I64,
        DType::U32 => DLDataType::U32,
        DType::U64 => DLDataType::U64,
        DType::F32 => DLDataType::F32,
        DType::F64 => DLDataType::F64,
        DType::Complex64 => DLDataType::C64,
        DType::Complex128 => DLDataType::C128,
    }
}

/// The gpukit element type of a DLPack data type, if there is one (scalars only: one lane).
pub(crate) fn gpukit_dtype(dt: DLDataType) -> Option<DType> {
    [
        DType::Bool,
        DType::U8,
        DType::I32,
        DType::I64,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::Complex64,
        DType::Complex128,
    ]
    .into_iter()
    .find(|&d| {
        let want = dl_dtype(d);
        want.code.0 == dt.code.0 && want.bits == dt.bits && want.lanes == dt.lanes
    })
}

/// A DLPack data type in words, e.g. `float16` or `int32x4 (4 lanes)`.
fn describe_dtype(dt: DLDataType) -> String {
    let code = match dt.code {
        DLDataTypeCode::INT => "int",
        DLDataTypeCode::UINT => "uint",
        DLDataTypeCode::FLOAT => "float",
        DLDataTypeCode::BFLOAT => "bfloat",
        DLDataTypeCode::COMPLEX => "complex",
        DLDataTypeCode::BOOL => "bool",
        DLDataTypeCode::OPAQUEHANDLE => "opaque handle",
        DLDataTypeCode(c) if c >= DLDataTypeCode::FLOAT8_E3M4.0 => "low-precision float",
        _ => "unknown type",
    };
    if dt.lanes == 1 {
        format!("{code}{} (type code {})", dt.bits, dt.code.0)
    } else {
        format!("{code}{}x{} ({} lanes)", dt.bits, dt.lanes, dt.lanes)
    }
}

/// A DLPack device type by its header name.
fn describe_device(d: DLDevice) -> String {
    let name = match d.device_type {
        DLDeviceType::CPU => "kDLCPU",
        DLDeviceType::CUDA => "kDLCUDA",
        DLDeviceType::CUDAHOST => "kDLCUDAHost (pinned host memory)",
        DLDeviceType::OPENCL => "kDLOpenCL",
        DLDeviceType::VULKAN => "kDLVulkan",
        DLDeviceType::METAL => "kDLMetal",
        DLDeviceType::VPI => "kDLVPI",
        DLDeviceType::ROCM => "kDLROCM",
        DLDeviceType::ROCMHOST => "kDLROCMHost",
        DLDeviceType::EXTDEV => "kDLExtDev",
        DLDeviceType::CUDAMANAGED => "kDLCUDAManaged (managed memory)",
        DLDeviceType::ONEAPI => "kDLOneAPI",
        DLDeviceType::WEBGPU => "kDLWebGPU",
        DLDeviceType::HEXAGON => "kDLHexagon",
        _ => "an unknown device type",
    };
    format!(
        "{name} (device type {}, id {})",
        d.device_type.0, d.device_id
    )
}

fn refuse(why: impl std::fmt::Display) -> Error {
    Error::Other(format!("DLPack import: {why}"))
}

/// What a gpukit export's managed tensor owns: the array, until the tensor's deleter runs (or
/// [`Array::from_dlpack`] takes it back).
struct Exported<T: Element> {
    array: Mutex<Option<Array<T>>>,
}

impl<T: Element> Drop for Exported<T> {
    fn drop(&mut self) {
        exports()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(self as *const Self as usize));
    }
}

/// gpukit's live exports: the address of each one's [`Exported`] (the tensor's `manager_ctx`)
/// to the address of its managed tensor and the element type. Deliberately one table per copy
/// of gpukit (not process-wide): only the copy that made an export reads its context back.
fn exports() -> &'static Mutex<HashMap<usize, (usize, TypeId)>> {
    static EXPORTS: std::sync::OnceLock<Mutex<HashMap<usize, (usize, TypeId)>>> =
        std::sync::OnceLock::new();
    EXPORTS.get_or_init(|| Mutex::new(HashMap::new()))
}

impl<T: Element> Array<T> {
    /// The array as a DLPack tensor (the versioned ABI of DLPack 1.x), without a copy.
    ///
    /// The tensor owns the array: its buffer lives until the tensor's deleter runs (dropping
    /// the [`dlpark::versioned::Dlpack`], or the consumer calling it), whatever happens to
    /// other arrays. Device `kDLCPU` or `kDLCUDA` with the device number, the element type
    /// (`bool` as DLPack's 8-bit bool), the shape and explicit C-contiguous strides; writable.
    /// For a CUDA array, gpukit's queued work on the device is waited for first, so a consumer
    /// may use the data on any stream. For a tensor that leaves the original usable too, export
    /// a copy: `a.try_clone()?.into_dlpack()`.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let a = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], &Device::Cpu)?;
    /// let tensor = a.into_dlpack()?;
    /// let view = tensor.validate().unwrap();
    /// assert_eq!(view.shape(), &[2, 3]);
    /// assert_eq!(view.strides(), Some(&[3i64, 1][..]));
    /// let back = Array::<f32>::from_dlpack(tensor)?; // gpukit's own export: no copy
    /// assert_eq!(back.to_vec()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_dlpack(self) -> Result<dlpark::versioned::Dlpack> {
        self.export()
    }

    /// As [`Array::into_dlpack`], in the legacy ABI (`DLManagedTensor`, DLPack before 1.0),
    /// for consumers that only take that one.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let a = Array::<i64>::arange_on(0, 5, &Device::Cpu)?;
    /// let tensor = a.into_dlpack_legacy()?;
    /// assert_eq!(tensor.validate().unwrap().num_elements(), 5);
    /// assert_eq!(Array::<i64>::from_dlpack(tensor)?.sum()?, 10);
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_dlpack_legacy(self) -> Result<dlpark::legacy::Dlpack> {
        self.export()
    }

    fn export<M: ManagedTensorBase>(self) -> Result<Managed<M>> {
        let (device, data) = match self.storage() {
            Storage::Cpu(v) => (DLDevice::CPU, v.as_ptr() as *mut std::ffi::c_void),
            Storage::Cuda { backend, slice } => {
                backend.ensure_usable()?;
                backend.stream().synchronize().map_err(|e| {
                    backend.fault_err("waiting for gpukit's work before a DLPack export", e)
                })?;
                let (ptr, _sync) = slice.device_ptr(backend.stream());
                let id = i32::try_from(backend.ordinal())
                    .map_err(|_| Error::Other("a CUDA device number beyond i32".into()))?;
                (DLDevice::cuda(id), ptr as usize as *mut std::ffi::c_void)
            }
        };
        let shape = self
            .shape()
            .iter()
            .map(|&d| i64::try_from(d))
            .collect::<std::result::Result<Vec<i64>, _>>()
            .map_err(|_| Error::Shape(format!("shape {:?} does not fit DLPack", self.shape())))?;
        let context = Box::new(Exported {
            array: Mutex::new(Some(self)),
        });
        let context_addr = &*context as *const Exported<T> as usize;
        let mut initialized = Dynamic::compact(shape)
            .initialize_as::<M>(context)
            .map_err(|e| Error::Other(format!("DLPack export: {e}")))?;
        initialized
            .set_data(data)
            .set_device(device)
            .set_dtype(dl_dtype(T::DTYPE));
        // SAFETY: the data pointer addresses the array's elements in C order (explicit compact
        // strides, written by `Dynamic::compact`), on the device named; the array lives in the
        // tensor's context until its deleter runs; no flags claim anything.
        let tensor = unsafe { initialized.finish() };
        exports()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(context_addr, (tensor.as_ptr() as usize, TypeId::of::<T>()));
        Ok(tensor)
    }

    /// A DLPack tensor (either ABI) as a gpukit array: device, dtype, shape and strides are
    /// checked, and what an array cannot hold is refused with an error naming the problem.
    ///
    /// * Device: `kDLCPU`, or `kDLCUDA` of a device gpukit can use (others, pinned host and
    ///   managed memory included, are refused).
    /// * Element type: exactly `T` (a tensor of another type is refused, not converted).
    /// * Layout: C-contiguous (the stride of a length-1 dimension is ignored); the data
    ///   pointer plus `byte_offset` aligned for `T`. Transposed, strided, broadcast or reversed
    ///   tensors are refused: make them contiguous on the producer's side first.
    /// * CUDA tensors: the driver must confirm that the elements lie in one allocation of that
    ///   device's memory; a tensor marked read-only is refused (gpukit arrays are writable).
    ///   The memory is wrapped without a copy, and the tensor (so the producer's memory) is
    ///   kept until the array is dropped, after gpukit's work on it has finished. The producer
    ///   must have finished writing it (DLPack's C interface carries no stream). Not counted by
    ///   [`memory_stats`](crate::memory_stats): gpukit did not allocate it.
    /// * CPU tensors of another library are copied once into a new array, and the tensor is
    ///   released at once (`bool` bytes other than 0 read as `true`). A tensor made by
    ///   [`Array::into_dlpack`] (or `_legacy`) of this gpukit gives its array back, uncopied.
    ///
    /// The tensor is consumed either way (errors release it). Its data is read as its producer
    /// declared it: whoever made the [`Managed`] tensor vouched, in `unsafe` code, that the data
    /// pointer addresses the elements described.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit::dlpark::{ffi::{DLDataType, DLDevice}, metadata::Dynamic};
    /// # fn main() -> gpukit::Result<()> {
    /// // A column-major 2x2 tensor of another library: strides [1, 2].
    /// let mut data = vec![1.0f64, 3.0, 2.0, 4.0];
    /// let ptr = data.as_mut_ptr().cast();
    /// let mut t = Dynamic::new([2i64, 2], [1i64, 2]).initialize(Box::new(data)).unwrap();
    /// t.set_data(ptr).set_device(DLDevice::CPU).set_dtype(DLDataType::F64);
    /// let tensor = unsafe { t.finish() };
    /// let e = Array::<f64>::from_dlpack(tensor).err().unwrap();
    /// assert!(e.to_string().contains("not C-contiguous"), "{e}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_dlpack<M: ManagedTensorBase + 'static>(tensor: Managed<M>) -> Result<Array<T>> {
        let (shape, device, data, byte_offset) = {
            let t = tensor
                .validate()
                .map_err(|e| refuse(format!("the tensor's description is invalid: {e}")))?;
            let device = t.device();
            if device.device_type != DLDeviceType::CPU && device.device_type != DLDeviceType::CUDA {
                return Err(refuse(format!(
                    "the tensor is on {}; gpukit arrays live on the CPU (kDLCPU) or a CUDA \
                     device (kDLCUDA)",
                    describe_device(device)
                )));
            }
            match gpukit_dtype(t.dtype()) {
                None => {
                    return Err(refuse(format!(
                        "the tensor holds {}, which no gpukit element type is (gpukit has \
                         bool, u8, i32, i64, u32, u64, f32, f64)",
                        describe_dtype(t.dtype())
                    )))
                }
                Some(d) if d != T::DTYPE => {
                    return Err(refuse(format!(
                        "the tensor holds {d}, not {} as Array<{}> does; import it as \
                         Array<{}>, then convert with astype",
                        T::DTYPE,
                        rust_name(T::DTYPE),
                        rust_name(d)
                    )))
                }
                Some(_) => {}
            }
            let shape = t
                .shape()
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<std::result::Result<Vec<usize>, _>>()
                .map_err(|_| refuse(format!("shape {:?} has a negative length", t.shape())))?;
            if let Some(strides) = t.strides() {
                if !is_c_contiguous(&shape, strides) {
                    return Err(refuse(format!(
                        "strides {strides:?} (in elements) of shape {shape:?} are not \
                         C-contiguous (that would be {:?}); gpukit arrays are C-contiguous, so \
                         make the tensor contiguous before exporting it",
                        super::c_strides(&shape)
                    )));
                }
            }
            (shape, device, t.data_ptr() as usize as u64, t.byte_offset())
        };
        let size = checked_size(&shape)?;
        if let Some(array) = take_own_export::<T, M>(&tensor, &shape) {
            return Ok(array);
        }
        let addr = data
            .checked_add(byte_offset)
            .ok_or_else(|| refuse("the data pointer plus byte_offset overflows"))?;
        let bytes = size
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| refuse(format!("shape {shape:?} has too many bytes")))?;
        if device.device_type == DLDeviceType::CPU {
            if size > 0 {
                check_address(addr, std::mem::align_of::<T>(), "the tensor's data")
                    .map_err(refuse)?;
            }
            let elements = if size == 0 {
                Vec::new()
            } else {
                // SAFETY: the DLPack contract (vouched for by the tensor's maker): `addr`
                // addresses `size` elements (`bytes` bytes), C-contiguous as checked, alive
                // while `tensor` is. Read as bytes, so no value is assumed valid for `T`.
                let raw = unsafe { std::slice::from_raw_parts(addr as usize as *const u8, bytes) };
                elements_from_bytes::<T>(raw)
            };
            drop(tensor);
            return Array::from_host(elements, shape, &Device::Cpu);
        }
        let ordinal = usize::try_from(device.device_id)
            .map_err(|_| refuse(format!("CUDA device id {} is negative", device.device_id)))?;
        let backend = CudaBackend::get(ordinal)?;
        backend.ensure_usable()?;
        if size == 0 {
            drop(tensor);
            return Array::zeros_on(shape, &Device::Cuda(ordinal));
        }
        if tensor.flags().contains(DlpackFlags::READ_ONLY) {
            return Err(refuse(
                "the tensor is marked read-only, and a gpukit array over it would be writable; \
                 export a writable tensor, or import a copy",
            ));
        }
        check_address(addr, std::mem::align_of::<T>(), "the tensor's data").map_err(refuse)?;
        backend.check_device_range(addr, bytes, "DLPack import: the tensor's data")?;
        // SAFETY: `size` elements of `T` at `addr`, inside one allocation of this device (the
        // driver says so), C-contiguous (checked), kept alive by `tensor`, which the array holds
        // and releases after synchronising; the array leaks this slice instead of freeing it.
        let slice = unsafe { backend.stream().upgrade_device_ptr::<T>(addr, size) };
        Array::from_foreign(
            shape,
            Storage::Cuda { backend, slice },
            Foreign::new(tensor),
        )
    }
}

/// Elements of type `T` from their bytes (native byte order); a `bool` is `true` for any
/// nonzero byte, so no byte pattern is ever misread as an invalid `bool`.
fn elements_from_bytes<T: Element>(raw: &[u8]) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    if T::DTYPE == DType::Bool {
        return raw
            .iter()
            .map(|&b| T::from_i128(i128::from(b != 0)))
            .collect();
    }
    raw.chunks_exact(size)
        .map(|chunk| {
            // SAFETY: `chunk` holds `size_of::<T>()` bytes, and every bit pattern is a valid
            // value of the numeric element types (bool is handled above).
            unsafe { std::ptr::read_unaligned(chunk.as_ptr() as *const T) }
        })
        .collect()
}

/// The array of a tensor that this gpukit exported, taken back out of it, or `None` when the
/// tensor is another library's (or one of ours of another element type or shape).
fn take_own_export<T: Element, M: ManagedTensorBase>(
    tensor: &Managed<M>,
    shape: &[usize],
) -> Option<Array<T>> {
    let managed = tensor.as_ptr();
    // SAFETY: `tensor` owns a valid managed tensor; reading its context pointer reads nothing
    // behind it.
    let context = unsafe { (*managed).manager_ctx() } as usize;
    let table = exports().lock().unwrap_or_else(|p| p.into_inner());
    let &(own_managed, type_id) = table.get(&context)?;
    if own_managed != managed as usize || type_id != TypeId::of::<T>() {
        return None;
    }
    // SAFETY: the table holds `context` only while the `Exported<T>` there is alive (its drop
    // removes it, and needs this lock), it was registered with this very managed tensor, which
    // `tensor` owns and so keeps alive, and `T` is the type it was made with.
    let exported = unsafe { &*(context as *const Exported<T>) };
    let mut slot = exported.array.lock().unwrap_or_else(|p| p.into_inner());
    if slot.as_ref().is_some_and(|a| a.shape() == shape) {
        slot.take()
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
