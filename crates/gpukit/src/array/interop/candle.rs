//! candle tensors (feature `candle`): CPU arrays to CPU tensors and back.
//!
//! Only the CPU side exists. candle's CUDA backend (its `cuda` feature) cannot be built into
//! the same program as gpukit: it turns on cudarc's `dynamic-linking`, which cudarc refuses
//! next to the `dynamic-loading` that gpukit needs to run (and fall back to the CPU) on
//! machines without a driver, and it compiles candle's kernels with nvcc at build time. Without
//! that backend there is no candle CUDA tensor to share memory with, so a CUDA array is
//! refused here, with the explicit device-to-host copy to make instead; DLPack
//! ([`Array::into_dlpack`]) and cudarc ([`Array::cuda_view`]) are the zero-copy paths for CUDA
//! memory.
//!
//! | call | copies |
//! |---|---|
//! | [`Array::into_candle`] | never: the array's `Vec` becomes the tensor's storage |
//! | [`Array::to_candle`] | once (the array stays) |
//! | [`Array::from_candle`] | once: a candle tensor shares its storage behind a lock, so its elements are gathered (in C order, whatever its strides) into the new array |

use crate::array::{Array, Storage};
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use candle_core::{Tensor, WithDType};

fn candle_err(what: &str, e: candle_core::Error) -> Error {
    Error::Other(format!("candle: {what}: {e}"))
}

/// The refusal for an array on a CUDA device.
fn cuda_refused(device: Device) -> Error {
    Error::Other(format!(
        "candle: this array is on {device}, and gpukit's candle interop has CPU tensors only \
         (candle's CUDA backend cannot be built beside gpukit's cudarc); copy it to the host \
         first with `.to_device(&Device::Cpu)?`, or share the GPU memory without a copy through \
         DLPack (`into_dlpack`) or cudarc (`cuda_view`)"
    ))
}

impl<T: Element + WithDType> Array<T> {
    /// The array as a candle CPU tensor of the same shape, without a copy: the array's
    /// elements become the tensor's storage. The array is consumed either way; an array on a
    /// CUDA device is refused (see the module notes; `a.to_device(&Device::Cpu)?` first makes
    /// the one host copy explicit). Element types both sides have: `u8`, `u32`, `i32`, `i64`,
    /// `f32`, `f64`.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let a = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], &Device::Cpu)?;
    /// let t = a.into_candle()?;
    /// assert_eq!(t.dims(), &[2, 2]);
    /// assert_eq!(t.to_vec2::<f32>().unwrap(), vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_candle(self) -> Result<Tensor> {
        let device = self.device();
        match self.into_parts() {
            Ok((shape, Storage::Cpu(v))) => Tensor::from_vec(v, shape, &candle_core::Device::Cpu)
                .map_err(|e| candle_err("making the tensor", e)),
            Ok((_, Storage::Cuda { .. })) => Err(cuda_refused(device)),
            // No CPU array wraps foreign memory today (CPU imports copy); should one ever,
            // its elements are copied rather than taken from their owner.
            Err(array) => array.to_candle(),
        }
    }

    /// A candle CPU tensor holding a copy of the array's elements (one copy; the array stays
    /// as it is). An array on a CUDA device is refused, as for [`Array::into_candle`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let a = Array::<i64>::arange_on(0, 6, &Device::Cpu)?.into_shape([3, 2])?;
    /// let t = a.to_candle()?;
    /// assert_eq!(t.sum_all().unwrap().to_scalar::<i64>().unwrap(), a.sum()?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_candle(&self) -> Result<Tensor> {
        match self.storage() {
            Storage::Cpu(v) => {
                Tensor::from_slice(&v[..self.size()], self.shape(), &candle_core::Device::Cpu)
                    .map_err(|e| candle_err("making the tensor", e))
            }
            Storage::Cuda { .. } => Err(cuda_refused(self.device())),
        }
    }

    /// A CPU array holding a copy of a candle CPU tensor's elements, in C order whatever the
    /// tensor's strides (one copy: candle keeps a tensor's storage shared behind a lock, so it
    /// cannot be taken over). The tensor's element type must be `T` (it is not converted).
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit::candle_core::{Device as CandleDevice, Tensor};
    /// # fn main() -> gpukit::Result<()> {
    /// let t = Tensor::arange(0f64, 6.0, &CandleDevice::Cpu).unwrap().reshape((2, 3)).unwrap();
    /// let transposed = t.t().unwrap(); // strided: gathered in C order
    /// let a = Array::<f64>::from_candle(&transposed)?;
    /// assert_eq!(a.shape(), &[3, 2]);
    /// assert_eq!(a.to_vec()?, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// assert!(Array::<f32>::from_candle(&t).is_err()); // f64 tensor, f32 array
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_candle(tensor: &Tensor) -> Result<Array<T>> {
        if tensor.dtype() != <T as WithDType>::DTYPE {
            return Err(Error::Other(format!(
                "candle: the tensor holds {:?}, not {:?} as Array<{}> does; convert it with \
                 `to_dtype` first",
                tensor.dtype(),
                <T as WithDType>::DTYPE,
                super::rust_name(<T as Element>::DTYPE)
            )));
        }
        if !tensor.device().is_cpu() {
            return Err(Error::Other(format!(
                "candle: the tensor is on {:?}; gpukit's candle interop has CPU tensors only",
                tensor.device().location()
            )));
        }
        let shape = tensor.dims().to_vec();
        let (storage, layout) = tensor.storage_and_layout();
        let candle_core::Storage::Cpu(cpu) = &*storage else {
            return Err(Error::Other(
                "candle: the tensor's storage is not in host memory".into(),
            ));
        };
        let all = cpu
            .as_slice::<T>()
            .map_err(|e| candle_err("reading the tensor", e))?;
        let elements: Vec<T> = match layout.contiguous_offsets() {
            Some((start, end)) => all.get(start..end).map(<[T]>::to_vec),
            None => tensor
                .strided_index()
                .map(|i| all.get(i).copied())
                .collect::<Option<Vec<T>>>(),
        }
        .ok_or_else(|| {
            Error::Other("candle: the tensor's layout reaches past its storage".into())
        })?;
        drop(storage);
        Array::from_host(elements, shape, &Device::Cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_candle_moves_the_buffer() {
        let a = Array::from_vec_on(vec![1u32, 2, 3, 4, 5, 6], [2, 3], &Device::Cpu).unwrap();
        let Storage::Cpu(v) = a.storage() else {
            panic!("a CPU array")
        };
        let ptr = v.as_ptr() as usize;
        let t = a.into_candle().unwrap();
        let (storage, _) = t.storage_and_layout();
        let candle_core::Storage::Cpu(cpu) = &*storage else {
            panic!("a CPU tensor")
        };
        assert_eq!(cpu.as_slice::<u32>().unwrap().as_ptr() as usize, ptr);
        drop(storage);
        assert_eq!(
            t.to_vec2::<u32>().unwrap(),
            vec![vec![1, 2, 3], vec![4, 5, 6]]
        );
        // And back: one copy, same values and shape.
        let back = Array::<u32>::from_candle(&t).unwrap();
        assert_eq!(back.shape(), &[2, 3]);
        assert_eq!(back.to_vec().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn strided_and_offset_tensors_are_gathered_in_c_order() {
        let t = Tensor::arange(0i64, 12, &candle_core::Device::Cpu)
            .unwrap()
            .reshape((3, 4))
            .unwrap();
        // Columns 1..3 of rows 1..3: an offset, strided view.
        let view = t.narrow(0, 1, 2).unwrap().narrow(1, 1, 2).unwrap();
        let a = Array::<i64>::from_candle(&view).unwrap();
        assert_eq!(
            (a.shape(), a.to_vec().unwrap()),
            (&[2usize, 2][..], vec![5, 6, 9, 10])
        );
        let row = t.narrow(0, 2, 1).unwrap(); // contiguous, with an offset
        assert_eq!(
            Array::<i64>::from_candle(&row).unwrap().to_vec().unwrap(),
            vec![8, 9, 10, 11]
        );
    }

    #[test]
    fn element_types_must_match() {
        let t = Tensor::new(&[1.0f32, 2.0], &candle_core::Device::Cpu).unwrap();
        let e = Array::<f64>::from_candle(&t).err().unwrap().to_string();
        assert!(e.contains("F32") && e.contains("Array<f64>"), "{e}");
        let empty = Array::<f32>::zeros_on([0, 3], &Device::Cpu).unwrap();
        let t = empty.to_candle().unwrap();
        assert_eq!(t.dims(), &[0, 3]);
        assert_eq!(Array::<f32>::from_candle(&t).unwrap().shape(), &[0, 3]);
    }
}
