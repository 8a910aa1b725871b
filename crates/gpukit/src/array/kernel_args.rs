//! gpukit arrays as kernel arguments: how an [`Array`] is passed to a `#[kernel]` or a raw
//! CUDA kernel. The kernel layer defines the argument traits ([`SliceArg`], [`SliceMutArg`],
//! [`RawArg`]) and the type-erased [`KernelArg`]; the array layer implements them for its own
//! type here, so the kernel layer never needs to know what an array is.

use super::{Array, Storage};
use crate::element::Element;
use crate::kernel::args::{DeviceBuf, KernelArg, RawArg, SliceArg, SliceMutArg};
use cudarc::driver::{DevicePtr, DevicePtrMut};

impl<'a> KernelArg<'a> {
    /// A gpukit array for a read-only parameter.
    pub fn array<T: Element>(a: &'a Array<T>) -> KernelArg<'a> {
        let buf = match a.storage() {
            Storage::Cpu(v) => DeviceBuf::Cpu(v.as_ptr() as *mut u8),
            Storage::Cuda { backend, slice } => {
                let (ptr, _record) = slice.device_ptr(backend.stream());
                DeviceBuf::Cuda { backend, ptr }
            }
        };
        KernelArg::device_buffer(T::DTYPE, false, a.shape(), buf)
    }

    /// A gpukit array for a writable parameter.
    pub fn array_mut<T: Element>(a: &'a mut Array<T>) -> KernelArg<'a> {
        // Split the borrow: the shape is read while the buffer is borrowed mutably.
        let shape: *const [usize] = a.shape();
        let buf = match a.storage_mut() {
            Storage::Cpu(v) => DeviceBuf::Cpu(v.as_mut_ptr() as *mut u8),
            Storage::Cuda { backend, slice } => {
                let (ptr, _record) = slice.device_ptr_mut(backend.stream());
                DeviceBuf::Cuda { backend, ptr }
            }
        };
        // SAFETY: the shape is a separate field of the array, not touched by `storage_mut`,
        // and lives as long as the borrow `'a`.
        KernelArg::device_buffer(T::DTYPE, true, unsafe { &*shape }, buf)
    }
}

impl<'a, T: Element> SliceArg<'a, T> for &'a Array<T> {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        KernelArg::array(self)
    }
}

impl<'a, T: Element> SliceArg<'a, T> for &'a mut Array<T> {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        KernelArg::array(self)
    }
}

impl<'a, T: Element> SliceMutArg<'a, T> for &'a mut Array<T> {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        KernelArg::array_mut(self)
    }
}

impl<'a, T: Element> RawArg<'a> for &'a Array<T> {
    fn into_raw_arg(self) -> KernelArg<'a> {
        SliceArg::<'a, T>::into_kernel_arg(self)
    }
}

impl<'a, T: Element> RawArg<'a> for &'a mut Array<T> {
    fn into_raw_arg(self) -> KernelArg<'a> {
        SliceMutArg::<'a, T>::into_kernel_arg(self)
    }
}
