//! Random arrays on a CUDA device: cuRAND (Philox4x32-10) fills queued on the device's stream,
//! then the kernels of `array/kernels/random.rs` map them to the requested range.

use crate::array::kernels;
use crate::array::kernels::random::{ints_from_bits, uniform_in_place, words_per_int};
use crate::backend::cuda::{CudaBackend, CurandFill};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, DevicePtrMut};

/// The device address of `s`, for writing on `backend`'s stream.
fn address<T>(backend: &CudaBackend, s: &mut CudaSlice<T>) -> u64 {
    s.device_ptr_mut(backend.stream()).0
}

/// `n` uniform f32/f64 in `[low, high)` (checked by the caller).
pub(super) fn uniform<T: Element>(
    backend: &CudaBackend,
    n: usize,
    low: f64,
    high: f64,
    key: u64,
) -> Result<CudaSlice<T>> {
    let fill = match T::DTYPE {
        DType::F32 => CurandFill::UniformF32,
        DType::F64 => CurandFill::UniformF64,
        d => {
            return Err(Error::Other(format!(
                "random uniform: dtype {d} is not supported"
            )))
        }
    };
    // SAFETY: every element is written by the fill and the mapping queued right after.
    let mut slice = unsafe { backend.alloc::<T>(n)? };
    let ptr = address(backend, &mut slice);
    // SAFETY: `slice` holds `n` (or, for n == 0, at least one) values of the type `fill` makes,
    // and lives (freed in stream order) past the fill.
    unsafe { backend.curand_fill(ptr, n, fill, key, 0)? };
    uniform_in_place(backend, &mut slice, n, low, high)?;
    Ok(slice)
}

/// `n` normal f32/f64 (checked by the caller). cuRAND makes normals in pairs, so an odd `n`
/// fills one more element, which the buffer holds past the array's end.
pub(super) fn normal<T: Element>(
    backend: &CudaBackend,
    n: usize,
    mean: f64,
    std: f64,
    key: u64,
) -> Result<CudaSlice<T>> {
    let fill = match T::DTYPE {
        DType::F32 => CurandFill::NormalF32(mean as f32, std as f32),
        DType::F64 => CurandFill::NormalF64(mean, std),
        d => {
            return Err(Error::Other(format!(
                "random normal: dtype {d} is not supported"
            )))
        }
    };
    if std == 0.0 {
        // `mean` everywhere, without asking cuRAND for a degenerate distribution.
        // SAFETY: every element is written by the fill kernel queued right after.
        let mut slice = unsafe { backend.alloc::<T>(n)? };
        kernels::fill(backend, &mut slice, n, T::from_f64(mean))?;
        return Ok(slice);
    }
    let even = n + (n & 1);
    // SAFETY: every element is written by the fill queued right after.
    let mut slice = unsafe { backend.alloc::<T>(even)? };
    let ptr = address(backend, &mut slice);
    // SAFETY: `slice` holds `even` values of the type `fill` makes, alive past the fill.
    unsafe { backend.curand_fill(ptr, even, fill, key, 0)? };
    Ok(slice)
}

/// `n` integers in `[low, high)` of i32/i64/u32/u64 (checked by the caller): uniform 32-bit
/// words from cuRAND, two per 64 random bits, mapped by multiply-shift.
pub(super) fn integers<T: Element>(
    backend: &CudaBackend,
    n: usize,
    low: i128,
    high: i128,
    key: u64,
) -> Result<CudaSlice<T>> {
    let range = u64::try_from(high - low).map_err(|_| {
        Error::Other(format!(
            "random integers: the range [{low}, {high}) is wider than 2^64 values"
        ))
    })?;
    let words = n
        .checked_mul(words_per_int::<T>())
        .ok_or_else(|| Error::Shape(format!("random integers: {n} values are too many")))?;
    // SAFETY: every word is written by the fill below.
    let mut bits = unsafe { backend.alloc::<u64>(words)? };
    let ptr = address(backend, &mut bits);
    // SAFETY: `bits` holds `words` u64, i.e. `2 * words` u32 values, alive past the fill.
    unsafe { backend.curand_fill(ptr, 2 * words, CurandFill::Bits32, key, 0)? };
    // SAFETY: every element is written by the mapping kernel queued right after.
    let mut out = unsafe { backend.alloc::<T>(n)? };
    ints_from_bits(backend, &bits, &mut out, n, low as i64 as u64, range)?;
    Ok(out)
}
