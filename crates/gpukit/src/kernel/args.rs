//! Kernel arguments: what a launch accepts for each parameter, erased to one type.
//!
//! Device arrays ([`Array`](crate::Array)) are the fast path: their buffer is passed as is. Host arrays
//! (ndarray arrays of any dimension and storage, `Vec`s, slices) are accepted too, as Numba
//! accepts NumPy arrays: on a CUDA launch they are copied to the device and, when passed as
//! `&mut`, copied back after the kernel has finished.

use crate::backend::cuda::CudaBackend;
use crate::device::Device;
use crate::element::{DType, Element};
use ndarray::{ArrayBase, Data, DataMut, Dimension};
use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

/// One launch argument, type-erased: a device array, a host array or a scalar.
pub struct KernelArg<'a> {
    pub(crate) repr: ArgRepr<'a>,
}

/// The forms an argument takes.
pub(crate) enum ArgRepr<'a> {
    /// A scalar's bits (the value occupies the first `dtype.size()` bytes).
    Scalar { dtype: DType, bits: u64 },
    /// A gpukit array, borrowed for the launch.
    Device(DeviceArg<'a>),
    /// A host array, copied or used in place depending on the device.
    Host(HostArg<'a>),
}

/// A borrowed gpukit array (built by the array layer).
pub(crate) struct DeviceArg<'a> {
    pub(crate) dtype: DType,
    pub(crate) mutable: bool,
    pub(crate) shape: &'a [usize],
    pub(crate) buf: DeviceBuf<'a>,
}

/// Where a gpukit array's elements are.
pub(crate) enum DeviceBuf<'a> {
    /// Host memory of a CPU array.
    Cpu(*mut u8),
    /// A CUDA device pointer and the backend that owns it.
    Cuda {
        backend: &'a Arc<CudaBackend>,
        ptr: u64,
    },
}

impl DeviceArg<'_> {
    pub(crate) fn device(&self) -> Device {
        match &self.buf {
            DeviceBuf::Cpu(_) => Device::Cpu,
            DeviceBuf::Cuda { backend, .. } => backend.device(),
        }
    }
}

/// A host array: contiguous C-order data (the caller's own memory, or a staging copy of a
/// non-contiguous ndarray) and, for `&mut` arguments, how to write a staging copy back.
pub(crate) struct HostArg<'a> {
    pub(crate) dtype: DType,
    pub(crate) mutable: bool,
    pub(crate) shape: Vec<usize>,
    pub(crate) ptr: *mut u8,
    /// Keeps a staging copy alive.
    _staging: Option<Box<dyn Any>>,
    /// Copies the (possibly updated) contiguous data back into the caller's array.
    write_back: Option<Box<dyn FnOnce(*const u8) + 'a>>,
    _borrow: PhantomData<&'a mut ()>,
}

impl HostArg<'_> {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Number of bytes.
    pub(crate) fn nbytes(&self) -> usize {
        self.len() * self.dtype.size()
    }

    /// Finishes a `&mut` argument after the kernel ran (a no-op for data used in place, and
    /// for a second call).
    pub(crate) fn finish(&mut self) {
        if let Some(w) = self.write_back.take() {
            w(self.ptr);
        }
    }
}

/// The argument list of one launch, one [`KernelArg`] per parameter in order: a `Vec` or an
/// array. An array (`[a, b, c]`) keeps the list on the stack, so a launch allocates nothing.
pub trait LaunchArgs<'a> {
    /// The arguments, in parameter order.
    fn as_mut_args(&mut self) -> &mut [KernelArg<'a>];
}

impl<'a> LaunchArgs<'a> for Vec<KernelArg<'a>> {
    #[inline]
    fn as_mut_args(&mut self) -> &mut [KernelArg<'a>] {
        self
    }
}

impl<'a, const N: usize> LaunchArgs<'a> for [KernelArg<'a>; N] {
    #[inline]
    fn as_mut_args(&mut self) -> &mut [KernelArg<'a>] {
        self
    }
}

impl<'a> KernelArg<'a> {
    /// A scalar parameter, by value (at most 8 bytes: a `Complex<f64>` scalar does not compile;
    /// pass its `re` and `im` as two `f64` parameters).
    pub fn scalar<T: Element>(v: T) -> KernelArg<'static> {
        const {
            assert!(
                std::mem::size_of::<T>() <= 8,
                "a scalar kernel argument is at most 8 bytes: pass a Complex<f64>'s re and im \
                 as two f64 arguments"
            )
        };
        let mut bits = 0u64;
        // SAFETY: plain data of at most 8 bytes (checked at compile time above).
        unsafe { (&mut bits as *mut u64 as *mut T).write(v) };
        KernelArg {
            repr: ArgRepr::Scalar {
                dtype: T::DTYPE,
                bits,
            },
        }
    }

    /// A device array's buffer: what the array layer passes for a gpukit array
    /// (`KernelArg::array`, `KernelArg::array_mut`).
    pub(crate) fn device_buffer(
        dtype: DType,
        mutable: bool,
        shape: &'a [usize],
        buf: DeviceBuf<'a>,
    ) -> KernelArg<'a> {
        KernelArg {
            repr: ArgRepr::Device(DeviceArg {
                dtype,
                mutable,
                shape,
                buf,
            }),
        }
    }

    /// Contiguous host data used in place (read-only).
    fn host<T: Element>(data: &'a [T], shape: Vec<usize>) -> KernelArg<'a> {
        Self::host_parts::<T>(data.as_ptr() as *mut u8, shape, false, None, None)
    }

    /// Contiguous host data used in place (writable).
    fn host_mut<T: Element>(data: &'a mut [T], shape: Vec<usize>) -> KernelArg<'a> {
        Self::host_parts::<T>(data.as_mut_ptr() as *mut u8, shape, true, None, None)
    }

    fn host_parts<T: Element>(
        ptr: *mut u8,
        shape: Vec<usize>,
        mutable: bool,
        staging: Option<Box<dyn Any>>,
        write_back: Option<Box<dyn FnOnce(*const u8) + 'a>>,
    ) -> KernelArg<'a> {
        KernelArg {
            repr: ArgRepr::Host(HostArg {
                dtype: T::DTYPE,
                mutable,
                shape,
                ptr,
                _staging: staging,
                write_back,
                _borrow: PhantomData,
            }),
        }
    }

    /// The element type.
    pub(crate) fn dtype(&self) -> DType {
        match &self.repr {
            ArgRepr::Scalar { dtype, .. } => *dtype,
            ArgRepr::Device(d) => d.dtype,
            ArgRepr::Host(h) => h.dtype,
        }
    }

    /// The value of a 64-bit unsigned scalar (how `usize` parameters are passed), else `None`.
    pub(crate) fn scalar_bits(&self) -> Option<u64> {
        match self.repr {
            ArgRepr::Scalar {
                dtype: DType::U64,
                bits,
            } => Some(bits),
            _ => None,
        }
    }

    /// The shape, or `None` for a scalar.
    pub(crate) fn shape(&self) -> Option<&[usize]> {
        match &self.repr {
            ArgRepr::Scalar { .. } => None,
            ArgRepr::Device(d) => Some(d.shape),
            ArgRepr::Host(h) => Some(&h.shape),
        }
    }

    /// Whether the kernel may write through this argument.
    pub(crate) fn is_mut(&self) -> bool {
        match &self.repr {
            ArgRepr::Scalar { .. } => false,
            ArgRepr::Device(d) => d.mutable,
            ArgRepr::Host(h) => h.mutable,
        }
    }

    /// Short description for error messages: `a float32 array of shape [3, 4] on cuda:0`.
    pub(crate) fn describe(&self) -> String {
        match &self.repr {
            ArgRepr::Scalar { dtype, .. } => format!("a {dtype} scalar"),
            ArgRepr::Device(d) => format!(
                "a {} array of shape {:?} on {}",
                d.dtype,
                d.shape,
                d.device()
            ),
            ArgRepr::Host(h) => format!("a host {} array of shape {:?}", h.dtype, h.shape),
        }
    }
}

/// What a read-only array parameter (`&[T]`, `&View2<T>`, `&View3<T>`) accepts: `&Array<T>`,
/// `&ndarray::ArrayBase<_, _>` of any dimension, `&Vec<T>`, `&[T]` (and their `&mut` forms).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of `{T}` elements",
    label = "expected an array of `{T}`",
    note = "pass `&Array<{T}>` (the fast path), or a host `&ndarray::Array<{T}, _>`, `&Vec<{T}>` or `&[{T}]`; convert other element types with `.astype::<{T}>()`"
)]
pub trait SliceArg<'a, T: Element> {
    /// The argument, type-erased.
    fn into_kernel_arg(self) -> KernelArg<'a>;
}

/// What a writable array parameter (`&mut [T]`, `&mut View2<T>`, ...) accepts: `&mut Array<T>`,
/// `&mut ndarray::ArrayBase<_, _>`, `&mut Vec<T>`, `&mut [T]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a writable kernel parameter of `{T}` elements",
    label = "expected `&mut` an array of `{T}`",
    note = "the kernel writes to this parameter: pass `&mut Array<{T}>`, or a host `&mut ndarray::Array<{T}, _>`, `&mut Vec<{T}>` or `&mut [{T}]`"
)]
pub trait SliceMutArg<'a, T: Element> {
    /// The argument, type-erased.
    fn into_kernel_arg(self) -> KernelArg<'a>;
}

impl<'a, T: Element> SliceArg<'a, T> for &'a mut Vec<T> {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        KernelArg::host(self, vec![self.len()])
    }
}

impl<'a, T: Element> SliceArg<'a, T> for &'a mut [T] {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        let n = self.len();
        KernelArg::host(self, vec![n])
    }
}

impl<'a, T, S, D> SliceArg<'a, T> for &'a mut ArrayBase<S, D>
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    fn into_kernel_arg(self) -> KernelArg<'a> {
        SliceArg::<'a, T>::into_kernel_arg(&*self)
    }
}

impl<'a, T: Element> SliceArg<'a, T> for &'a Vec<T> {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        KernelArg::host(self, vec![self.len()])
    }
}

impl<'a, T: Element> SliceArg<'a, T> for &'a [T] {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        KernelArg::host(self, vec![self.len()])
    }
}

impl<'a, T: Element> SliceMutArg<'a, T> for &'a mut Vec<T> {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        let n = self.len();
        KernelArg::host_mut(self, vec![n])
    }
}

impl<'a, T: Element> SliceMutArg<'a, T> for &'a mut [T] {
    fn into_kernel_arg(self) -> KernelArg<'a> {
        let n = self.len();
        KernelArg::host_mut(self, vec![n])
    }
}

impl<'a, T, S, D> SliceArg<'a, T> for &'a ArrayBase<S, D>
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    fn into_kernel_arg(self) -> KernelArg<'a> {
        let shape = self.shape().to_vec();
        match self.as_slice() {
            Some(data) => KernelArg::host(data, shape),
            None => {
                let mut staging: Vec<T> = self.iter().copied().collect();
                let ptr = staging.as_mut_ptr() as *mut u8;
                KernelArg::host_parts::<T>(ptr, shape, false, Some(Box::new(staging)), None)
            }
        }
    }
}

impl<'a, T, S, D> SliceMutArg<'a, T> for &'a mut ArrayBase<S, D>
where
    T: Element,
    S: DataMut<Elem = T>,
    D: Dimension,
{
    fn into_kernel_arg(self) -> KernelArg<'a> {
        let shape = self.shape().to_vec();
        if self.is_standard_layout() {
            let data = self
                .as_slice_mut()
                .expect("a standard-layout array is one contiguous slice");
            return KernelArg::host_mut(data, shape);
        }
        let mut staging: Vec<T> = self.iter().copied().collect();
        let n = staging.len();
        let ptr = staging.as_mut_ptr() as *mut u8;
        let write_back = move |src: *const u8| {
            // SAFETY: `src` is the staging buffer (n elements of T, alive until `finish` ends).
            let src = unsafe { std::slice::from_raw_parts(src as *const T, n) };
            for (dst, v) in self.iter_mut().zip(src) {
                *dst = *v;
            }
        };
        KernelArg::host_parts::<T>(
            ptr,
            shape,
            true,
            Some(Box::new(staging)),
            Some(Box::new(write_back)),
        )
    }
}

/// What a raw CUDA kernel ([`CudaKernel`](crate::CudaKernel)) accepts for each parameter:
/// gpukit arrays and host arrays (passed as a pointer to their first element) and scalars
/// (passed by value with their exact Rust type: `3.0f32` is a `float`, `7u64` an
/// `unsigned long long`, a `usize` an `unsigned long long`).
pub trait RawArg<'a> {
    /// The argument, type-erased.
    fn into_raw_arg(self) -> KernelArg<'a>;
}

macro_rules! raw_array_args {
    ($($ty:ty => $tr:ident),* $(,)?) => {$(
        impl<'a, T: Element> RawArg<'a> for $ty {
            fn into_raw_arg(self) -> KernelArg<'a> {
                $tr::<'a, T>::into_kernel_arg(self)
            }
        }
    )*};
}

raw_array_args!(
    &'a Vec<T> => SliceArg,
    &'a [T] => SliceArg,
    &'a mut Vec<T> => SliceMutArg,
    &'a mut [T] => SliceMutArg,
);

impl<'a, T: Element, S: Data<Elem = T>, D: Dimension> RawArg<'a> for &'a ArrayBase<S, D> {
    fn into_raw_arg(self) -> KernelArg<'a> {
        SliceArg::<'a, T>::into_kernel_arg(self)
    }
}

impl<'a, T: Element, S: DataMut<Elem = T>, D: Dimension> RawArg<'a> for &'a mut ArrayBase<S, D> {
    fn into_raw_arg(self) -> KernelArg<'a> {
        SliceMutArg::<'a, T>::into_kernel_arg(self)
    }
}

macro_rules! raw_scalar_args {
    ($($t:ty),*) => {$(
        impl RawArg<'_> for $t {
            fn into_raw_arg(self) -> KernelArg<'static> {
                KernelArg::scalar(self)
            }
        }
    )*};
}

raw_scalar_args!(f32, f64, i32, i64, u32, u64, u8, bool);

impl RawArg<'_> for usize {
    fn into_raw_arg(self) -> KernelArg<'static> {
        KernelArg::scalar(self as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keep_their_bits() {
        let a = KernelArg::scalar(1.5f32);
        match a.repr {
            ArgRepr::Scalar { dtype, bits } => {
                assert_eq!(dtype, DType::F32);
                assert_eq!(f32::from_bits(bits as u32), 1.5);
            }
            _ => panic!("not a scalar"),
        }
        assert_eq!(KernelArg::scalar(true).dtype(), DType::Bool);
        assert_eq!(7usize.into_raw_arg().dtype(), DType::U64);
    }

    #[test]
    fn non_contiguous_host_arrays_are_staged_and_written_back() {
        let mut a = ndarray::Array2::<i32>::zeros((3, 4));
        {
            let mut t = a.view_mut().reversed_axes();
            let arg = SliceMutArg::<i32>::into_kernel_arg(&mut t);
            assert_eq!(arg.shape(), Some(&[4usize, 3][..]));
            let ArgRepr::Host(mut h) = arg.repr else {
                panic!("not host")
            };
            // Write 0..12 in the transposed C order, as a kernel would.
            for i in 0..12 {
                unsafe { (h.ptr as *mut i32).add(i).write(i as i32) };
            }
            h.finish();
        }
        // t[[j, i]] == a[[i, j]] == 3 * j + i
        assert_eq!(a[[1, 2]], 7);
        assert_eq!(a[[2, 0]], 2);
    }
}
