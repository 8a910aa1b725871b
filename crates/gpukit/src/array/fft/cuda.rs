//! The GPU backend of `gpukit::fft`: cuFFT plans (cached per shape by the CUDA backend) run
//! out of place on the device's stream, from the input array into a new one.
//!
//! Axes of length 1 are left out of the plans (transforming them changes nothing, and the
//! signals' layout is the same without them); a transform whose every axis has length 1 is a
//! copy or a conversion, with no cuFFT call.

use super::FftFloat;
use crate::array::{Array, Storage};
use crate::backend::cuda::{CudaBackend, FftKind};
use crate::element::{Complex, DType, Element};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// The kinds for `T`: (complex ↔ complex, real → complex, complex → real).
fn kinds<T: Element>() -> (FftKind, FftKind, FftKind) {
    if T::DTYPE == DType::F32 {
        (FftKind::C2C, FftKind::R2C, FftKind::C2R)
    } else {
        (FftKind::Z2Z, FftKind::D2Z, FftKind::Z2D)
    }
}

/// The buffer and backend of a CUDA array.
fn cuda_parts<U: Element>(a: &Array<U>) -> Result<(&Arc<CudaBackend>, &CudaSlice<U>)> {
    match a.storage() {
        Storage::Cuda { backend, slice } => Ok((backend, slice)),
        Storage::Cpu(_) => Err(Error::Other("internal: a CPU array reached cuFFT".into())),
    }
}

/// A new CUDA buffer of `n` elements of `U`, written in full by the transform queued next.
fn output<U: Element>(backend: &CudaBackend, n: usize) -> Result<CudaSlice<U>> {
    // SAFETY: every element is written by the cuFFT transform queued right after (an empty
    // array's one-element buffer is never read).
    unsafe { backend.alloc::<U>(n) }
}

/// `batch` complex transforms of `dims`, unscaled.
pub(super) fn c2c<T: FftFloat>(
    a: &Array<Complex<T>>,
    dims: &[usize],
    batch: usize,
    inverse: bool,
) -> Result<Array<Complex<T>>> {
    let dims: Vec<usize> = dims.iter().copied().filter(|&d| d != 1).collect();
    if dims.is_empty() {
        return a.try_clone();
    }
    let (backend, slice) = cuda_parts(a)?;
    backend.ensure_usable()?;
    let mut out = output::<Complex<T>>(backend, a.size())?;
    {
        let (src, _rec_in) = slice.device_ptr(backend.stream());
        let (dst, _rec_out) = out.device_ptr_mut(backend.stream());
        // SAFETY: `src` holds `batch` signals of `dims` (the array's shape), `dst` as many;
        // a C2C/Z2Z transform out of place leaves its input unchanged.
        unsafe { backend.cufft_exec(kinds::<T>().0, &dims, batch, src, dst, inverse)? };
    }
    Array::from_storage(
        a.shape().to_vec(),
        Storage::Cuda {
            backend: backend.clone(),
            slice: out,
        },
    )
}

/// `batch` real signals of `n` points → `shape` (the last axis `n / 2 + 1`).
pub(super) fn rfft<T: FftFloat>(
    a: &Array<T>,
    shape: Vec<usize>,
    n: usize,
    batch: usize,
) -> Result<Array<Complex<T>>> {
    if n == 1 {
        // One point: its transform is itself.
        return a.to_complex()?.into_shape(shape);
    }
    let (backend, slice) = cuda_parts(a)?;
    backend.ensure_usable()?;
    let size = shape.iter().product();
    let mut out = output::<Complex<T>>(backend, size)?;
    {
        let (src, _rec_in) = slice.device_ptr(backend.stream());
        let (dst, _rec_out) = out.device_ptr_mut(backend.stream());
        // SAFETY: `src` holds `batch` real signals of `n`, `dst` `batch` half spectra of
        // `n / 2 + 1`; an R2C/D2Z transform out of place leaves its input unchanged.
        unsafe { backend.cufft_exec(kinds::<T>().1, &[n], batch, src, dst, false)? };
    }
    let backend = backend.clone();
    Array::from_storage(
        shape,
        Storage::Cuda {
            backend,
            slice: out,
        },
    )
}

/// `batch` half spectra → `shape` (the last axis `n` real points), scaled by `1 / n`.
pub(super) fn irfft<T: FftFloat>(
    a: &Array<Complex<T>>,
    shape: Vec<usize>,
    n: usize,
    batch: usize,
) -> Result<Array<T>> {
    if n == 1 {
        // One point: the real part of the one value (the scale 1 / n is 1).
        return a.re()?.into_shape(shape);
    }
    // cuFFT's C2R overwrites its input: it works on a copy.
    let scratch = a.try_clone()?;
    let (backend, slice) = cuda_parts(&scratch)?;
    let size: usize = shape.iter().product();
    let mut out = output::<T>(backend, size)?;
    {
        let (src, _rec_in) = slice.device_ptr(backend.stream());
        let (dst, _rec_out) = out.device_ptr_mut(backend.stream());
        // SAFETY: `src` (a scratch copy cuFFT may overwrite) holds `batch` half spectra of
        // `n / 2 + 1`, `dst` `batch` real signals of `n`.
        unsafe { backend.cufft_exec(kinds::<T>().2, &[n], batch, src, dst, true)? };
    }
    let backend = backend.clone();
    let mut out = Array::from_storage(
        shape,
        Storage::Cuda {
            backend,
            slice: out,
        },
    )?;
    out.mul_in_place(<T as Element>::from_f64(1.0 / n as f64))?;
    Ok(out)
}
