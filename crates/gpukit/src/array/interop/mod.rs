//! Zero-copy interop: one buffer, seen by gpukit and by another library.
//!
//! | file | path | copies? |
//! |---|---|---|
//! | `cudarc` | [`Array::cuda_view`] / [`Array::cuda_view_mut`] / [`Array::cuda_slice`] (cudarc views of an array, with the stream to use them on); [`Array::from_cudarc`] / [`Array::into_cudarc`] (a `CudaSlice` becomes an array and back) | never |
//! | `raw` | [`Array::as_device_ptr`]; `unsafe` [`Array::from_raw_device_ptr`] (any device address, with an owner that keeps it alive) | never |
//! | `dlpack` (feature `dlpack`, default) | [`Array::into_dlpack`]; [`Array::from_dlpack`] | CUDA: never. CPU: export never; import of another library's tensor copies once (a CPU array owns a `Vec`), of gpukit's own export never |
//! | `candle` (feature `candle`) | [`Array::into_candle`], [`Array::to_candle`], [`Array::from_candle`] | CPU tensors only (see the file): `into_candle` never, the other two once |
//!
//! All CUDA work gpukit does on a device is queued on one stream ([`Device::cuda_stream`]).
//! Work another library queues on gpukit memory must go on that stream too, or be synchronised
//! with it; the functions here say where they wait.
//!
//! [`Device::cuda_stream`]: crate::Device::cuda_stream

mod cudarc;
mod raw;

#[cfg(feature = "candle")]
mod candle;
#[cfg(feature = "dlpack")]
pub(crate) mod dlpack;

#[cfg(doc)]
use super::Array;

/// Whatever keeps a buffer that another library owns alive while a gpukit array uses it (a
/// DLPack tensor, the owner given to [`Array::from_raw_device_ptr`]). It is only ever dropped.
pub(crate) struct Foreign(#[allow(dead_code)] Box<dyn Send>);

// SAFETY: nothing ever reads the boxed value through a shared reference (the field is private
// and only dropped), so sharing a `&Foreign` between threads shares nothing; `Send` covers the
// drop on whichever thread drops the array.
unsafe impl Sync for Foreign {}

impl Foreign {
    /// Keeps `owner` until the array that holds this is dropped.
    pub(crate) fn new(owner: impl Send + 'static) -> Foreign {
        Foreign(Box::new(owner))
    }
}

/// The Rust name of an element type, for messages.
#[cfg(any(feature = "dlpack", feature = "candle"))]
pub(crate) fn rust_name(d: crate::element::DType) -> &'static str {
    use crate::element::DType;
    match d {
        DType::Bool => "bool",
        DType::U8 => "u8",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U32 => "u32",
        DType::U64 => "u64",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::Complex64 => "Complex<f32>",
        DType::Complex128 => "Complex<f64>",
    }
}

/// The C-contiguous strides (in elements) of `shape`.
#[cfg(feature = "dlpack")]
pub(crate) fn c_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
    }
    strides
}

/// Whether `strides` (in elements, as DLPack and candle give them) address `shape` in C order
/// without gaps. The stride of a dimension of length 1 is never used to address an element, so
/// it may be anything (PyTorch and others leave such strides unnormalised); an empty shape has
/// no elements to misread.
#[cfg(feature = "dlpack")]
pub(crate) fn is_c_contiguous(shape: &[usize], strides: &[i64]) -> bool {
    if shape.len() != strides.len() {
        return false;
    }
    if shape.contains(&0) {
        return true;
    }
    let expected = c_strides(shape);
    shape
        .iter()
        .zip(strides)
        .zip(&expected)
        .all(|((&len, &got), &want)| len == 1 || i64::try_from(want).is_ok_and(|w| w == got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "dlpack")]
    #[test]
    fn c_strides_of_shapes() {
        assert_eq!(c_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(c_strides(&[5]), vec![1]);
        assert!(c_strides(&[]).is_empty());
    }

    #[cfg(feature = "dlpack")]
    #[test]
    fn contiguity_ignores_only_what_addresses_nothing() {
        assert!(is_c_contiguous(&[2, 3], &[3, 1]));
        // Transposed, strided, broadcast and reversed layouts are not C-contiguous.
        assert!(!is_c_contiguous(&[2, 3], &[1, 2]));
        assert!(!is_c_contiguous(&[2, 3], &[6, 2]));
        assert!(!is_c_contiguous(&[2, 3], &[0, 1]));
        assert!(!is_c_contiguous(&[3], &[-1]));
        // A length-1 dimension's stride addresses nothing; an empty array has nothing to address.
        assert!(is_c_contiguous(&[1, 3], &[7, 1]));
        assert!(is_c_contiguous(&[3, 1], &[1, 99]));
        assert!(is_c_contiguous(&[2, 0], &[5, -3]));
        assert!(!is_c_contiguous(&[2, 3], &[3]));
    }

    #[test]
    fn the_owner_is_dropped_with_the_array() {
        use crate::array::{Array, Storage};
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        struct Counted(Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let a = Array::from_foreign(
            vec![2],
            Storage::Cpu(vec![1i32, 2]),
            Foreign::new(Counted(drops.clone())),
        )
        .unwrap();
        assert!(a.is_foreign());
        // A foreign array never comes apart into a storage that would free its buffer.
        let a = a.into_parts().err().expect("a foreign array stays whole");
        let a = a.into_shape([1, 2]).unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // A buffer too small for the shape is refused, and its owner released.
        let e = Array::from_foreign(
            vec![3],
            Storage::Cpu(vec![1i32, 2]),
            Foreign::new(Counted(drops.clone())),
        )
        .expect_err("too small");
        assert!(matches!(e, crate::Error::Shape(_)), "{e}");
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }
}
