//! Discrete Fourier transforms, as NumPy's `numpy.fft` (and CuPy's `cupy.fft`) compute them:
//! cuFFT on a GPU, rustfft on the CPU, the same results on both (to rounding).
//!
//! - [`fft`]/[`ifft`]: complex → complex along the last axis, batched over the leading ones.
//! - [`rfft`]/[`irfft`]: real → half spectrum (`n / 2 + 1` values on the last axis) and back.
//! - [`fft2`]/[`ifft2`]: the last two axes; [`fftn`]/[`ifftn`]: every axis (1 to 3 of them).
//!
//! Normalisation is NumPy's default ("backward"): forward transforms are unscaled, inverse
//! ones divide by the number of points transformed, so `ifft(&fft(&x)?)?` gives `x` back. The
//! `_norm` forms ([`fft_norm`], [`ifft_norm`], [`rfft_norm`], [`irfft_norm`]) and
//! [`fftn_axes`]/[`ifftn_axes`] (any axes, NumPy's `axes=`) take NumPy's `norm=` ("backward",
//! "ortho", "forward"). Every transform takes an array or a view (`fft::fft(&a.t())`); a view
//! that is not its whole array in C order is copied once (one strided copy) first.
//! Transforms keep the precision of their input: `Complex<f32>` (complex64) or `Complex<f64>`
//! (complex128); `Array::to_complex` turns a real array into a complex one. Every transformed
//! axis must have at least one element. On a GPU, cuFFT plans are cached per shape (16 per
//! device) and run on the device's stream; a machine without libcufft gets an `Err` naming it.
//!
//! ```
//! use gpukit::prelude::*;
//! let x = Array::from_vec_on(vec![1.0f64, 2.0, 3.0, 4.0], 4, &Device::Cpu)?.to_complex()?;
//! let f = fft::fft(&x)?;
//! assert_eq!(f.to_vec()?[0], Complex::new(10.0, 0.0));
//! let back = fft::ifft(&f)?.re()?;
//! assert!((back.to_vec()?[3] - 4.0).abs() < 1e-12);
//! let half = fft::rfft(&x.re()?)?; // 3 values: n / 2 + 1
//! assert_eq!(half.shape(), &[3]);
//! # Ok::<(), gpukit::Error>(())
//! ```

mod cpu;
mod cuda;
mod options;
#[cfg(test)]
mod tests;

pub use options::{
    fft_norm, fftn_axes, ifft_norm, ifftn_axes, irfft_norm, rfft_norm, IntoNorm, Norm,
};

use super::{Array, AsView, Storage};
use crate::element::{Complex, ComplexPart};
use crate::error::{Error, Result};

/// The real element types the transforms work in (`f32`, `f64`).
pub trait FftFloat: ComplexPart + rustfft::FftNum {}

impl FftFloat for f32 {}
impl FftFloat for f64 {}

/// The FFT of every signal along the last axis (NumPy's `fft.fft(a)`).
pub fn fft<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<Complex<T>>> {
    c2c("fft", &*a.as_view().contiguous()?, 1, false)
}

/// The inverse FFT along the last axis, divided by its length (NumPy's `fft.ifft(a)`).
pub fn ifft<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<Complex<T>>> {
    c2c("ifft", &*a.as_view().contiguous()?, 1, true)
}

/// The 2-D FFT over the last two axes, batched over any leading one (NumPy's `fft.fft2`).
pub fn fft2<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<Complex<T>>> {
    c2c("fft2", &*a.as_view().contiguous()?, 2, false)
}

/// The inverse of [`fft2`], divided by the number of points of the last two axes.
pub fn ifft2<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<Complex<T>>> {
    c2c("ifft2", &*a.as_view().contiguous()?, 2, true)
}

/// The n-D FFT over every axis of a 1-, 2- or 3-D array (NumPy's `fft.fftn`).
pub fn fftn<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<Complex<T>>> {
    let a = a.as_view().contiguous()?;
    c2c("fftn", &a, a.ndim(), false)
}

/// The inverse of [`fftn`], divided by the number of elements.
pub fn ifftn<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<Complex<T>>> {
    let a = a.as_view().contiguous()?;
    c2c("ifftn", &a, a.ndim(), true)
}

/// The FFT of real signals along the last axis, as its non-negative frequencies: `n / 2 + 1`
/// complex values for `n` points (NumPy's `fft.rfft(a)`).
pub fn rfft<T: FftFloat>(a: &(impl AsView<T> + ?Sized)) -> Result<Array<Complex<T>>> {
    let a = a.as_view().contiguous()?;
    let a: &Array<T> = &a;
    let n = check_axes("rfft", a.shape(), 1)?;
    let mut shape = a.shape().to_vec();
    let last = shape.len() - 1;
    shape[last] = n[0] / 2 + 1;
    let batch = batch_of(a.shape(), 1);
    match a.storage() {
        Storage::Cpu(v) => Array::from_storage(shape, Storage::Cpu(cpu::rfft(v, n[0], batch)?)),
        Storage::Cuda { .. } => cuda::rfft(a, shape, n[0], batch),
    }
}

/// The inverse of [`rfft`] for signals of even length: `m` values on the last axis give
/// `n = 2 * (m - 1)` real points (NumPy's `fft.irfft(a)`), divided by `n`.
pub fn irfft<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized)) -> Result<Array<T>> {
    let a = a.as_view();
    let m = a.shape().last().copied().unwrap_or(0);
    if m < 2 {
        return Err(Error::Shape(format!(
            "irfft: the last axis of shape {:?} needs at least 2 values for the default length \
             2 * (m - 1); use irfft_n to give the length",
            a.shape()
        )));
    }
    irfft_n(&a, 2 * (m - 1))
}

/// The inverse of [`rfft`] giving `n` real points along the last axis (NumPy's
/// `fft.irfft(a, n)`), divided by `n`. `n` real points use `n / 2 + 1` values of the last
/// axis: as in NumPy, a longer axis is cropped to them and a shorter one padded with zeros
/// (`n = 0` is an error). The imaginary parts of the zero frequency (and of the Nyquist one for
/// even `n`) are ignored, as they must be zero for a real signal.
pub fn irfft_n<T: FftFloat>(a: &(impl AsView<Complex<T>> + ?Sized), n: usize) -> Result<Array<T>> {
    let a = a.as_view();
    check_axes("irfft", a.shape(), 1)?;
    if n == 0 {
        return Err(Error::Shape(format!(
            "irfft: invalid number of points 0 for an array of shape {:?}",
            a.shape()
        )));
    }
    let a = options::fit_last_axis(&a, n / 2 + 1)?;
    let mut shape = a.shape().to_vec();
    let last = shape.len() - 1;
    shape[last] = n;
    let batch = batch_of(a.shape(), 1);
    match a.storage() {
        Storage::Cpu(v) => Array::from_storage(shape, Storage::Cpu(cpu::irfft(v, n, batch)?)),
        Storage::Cuda { .. } => cuda::irfft(&a, shape, n, batch),
    }
}

/// The transform over the last `axes` axes (`inverse`: scaled by 1 / their points).
fn c2c<T: FftFloat>(
    what: &str,
    a: &Array<Complex<T>>,
    axes: usize,
    inverse: bool,
) -> Result<Array<Complex<T>>> {
    let dims = check_axes(what, a.shape(), axes)?;
    let batch = batch_of(a.shape(), axes);
    let shape = a.shape().to_vec();
    let mut out = match a.storage() {
        Storage::Cpu(v) => Array::from_storage(shape, Storage::Cpu(cpu::c2c(v, &dims, inverse)?))?,
        Storage::Cuda { .. } => cuda::c2c(a, &dims, batch, inverse)?,
    };
    if inverse {
        let points: usize = dims.iter().product();
        out.scale_in_place(1.0 / points as f64)?;
    }
    Ok(out)
}

/// The sizes of the last `axes` axes of `shape`, or an error naming what is wrong: 1 to 3
/// axes, each with at least one element.
fn check_axes(what: &str, shape: &[usize], axes: usize) -> Result<Vec<usize>> {
    if axes == 0 || shape.len() < axes {
        return Err(Error::Shape(format!(
            "{what}: an array of shape {shape:?} has no {} axis to transform{}",
            if axes <= 1 {
                "last".to_string()
            } else {
                format!("last {axes}")
            },
            if shape.is_empty() {
                " (a 0-d array)"
            } else {
                ""
            }
        )));
    }
    if axes > 3 {
        return Err(Error::Shape(format!(
            "{what}: transforms over at most 3 axes at once (cuFFT's limit); shape {shape:?} \
             has {axes}"
        )));
    }
    let dims = shape[shape.len() - axes..].to_vec();
    if dims.contains(&0) {
        return Err(Error::Shape(format!(
            "{what}: invalid number of points: the transformed axes of shape {shape:?} must not \
             be empty"
        )));
    }
    Ok(dims)
}

/// Number of signals: the product of the axes before the last `axes`.
fn batch_of(shape: &[usize], axes: usize) -> usize {
    shape[..shape.len() - axes].iter().product()
}
