//! The CPU backend of `gpukit::fft`: rustfft (mixed radix, Rader and Bluestein, so every length
//! is fast), one axis at a time, signals in parallel with rayon.

use super::FftFloat;
use crate::element::{Complex, Element};
use crate::error::Result;
use rayon::prelude::*;
use rustfft::num_complex::Complex as Nc;
use rustfft::FftPlanner;

/// The transforms of `dims` of every signal of `a` (consecutive C-contiguous signals of
/// `dims`), unscaled.
pub(super) fn c2c<T: FftFloat>(
    a: &[Complex<T>],
    dims: &[usize],
    inverse: bool,
) -> Result<Vec<Complex<T>>> {
    let mut data: Vec<Nc<T>> = a.iter().map(|&z| z.into()).collect();
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let mut planner = FftPlanner::<T>::new();
    for axis in 0..dims.len() {
        let n = dims[axis];
        let inner: usize = dims[axis + 1..].iter().product();
        let plan = if inverse {
            planner.plan_fft_inverse(n)
        } else {
            planner.plan_fft_forward(n)
        };
        if inner == 1 {
            // The last axis: consecutive lines of n elements, several lines per task.
            let lines = (data.len() / n).div_ceil(rayon::current_num_threads() * 4);
            data.par_chunks_mut(n * lines.max(1))
                .for_each(|run| plan.process(run));
        } else {
            // Blocks of n x inner (one per index of the axes before): each transposed into
            // inner lines of n, transformed, and put back.
            data.par_chunks_mut(n * inner).for_each_init(
                || vec![Nc::new(zero::<T>(), zero::<T>()); n * inner],
                |line, block| {
                    for i in 0..n {
                        for j in 0..inner {
                            line[j * n + i] = block[i * inner + j];
                        }
                    }
                    plan.process(line);
                    for i in 0..n {
                        for j in 0..inner {
                            block[i * inner + j] = line[j * n + i];
                        }
                    }
                },
            );
        }
    }
    Ok(data.into_iter().map(Complex::from).collect())
}

/// `batch` real signals of `n` points → their `n / 2 + 1` non-negative frequencies.
pub(super) fn rfft<T: FftFloat>(a: &[T], n: usize, batch: usize) -> Result<Vec<Complex<T>>> {
    let m = n / 2 + 1;
    let plan = FftPlanner::<T>::new().plan_fft_forward(n);
    let mut out = vec![Complex::new(zero::<T>(), zero::<T>()); m * batch];
    out.par_chunks_mut(m)
        .zip(a.par_chunks(n))
        .for_each(|(o, x)| {
            let mut line: Vec<Nc<T>> = x.iter().map(|&v| Nc::new(v, zero::<T>())).collect();
            plan.process(&mut line);
            for (o, z) in o.iter_mut().zip(line) {
                *o = z.into();
            }
        });
    Ok(out)
}

/// `batch` half spectra of `n / 2 + 1` values → `n` real points each, scaled by `1 / n`.
pub(super) fn irfft<T: FftFloat>(a: &[Complex<T>], n: usize, batch: usize) -> Result<Vec<T>> {
    let m = n / 2 + 1;
    let plan = FftPlanner::<T>::new().plan_fft_inverse(n);
    let scale = <T as Element>::from_f64(1.0 / n as f64);
    let mut out = vec![zero::<T>(); n * batch];
    out.par_chunks_mut(n)
        .zip(a.par_chunks(m))
        .for_each(|(o, h)| {
            // The full Hermitian spectrum: X[n - k] = conj(X[k]); the zero frequency (and the
            // Nyquist one for even n) real, as a real signal's are.
            let mut line = vec![Nc::new(zero::<T>(), zero::<T>()); n];
            for k in 0..m {
                line[k] = h[k].into();
            }
            line[0].im = zero::<T>();
            if n.is_multiple_of(2) {
                line[n / 2].im = zero::<T>();
            }
            for k in 1..n.div_ceil(2) {
                line[n - k] = line[k].conj();
            }
            plan.process(&mut line);
            for (o, z) in o.iter_mut().zip(line) {
                *o = z.re * scale;
            }
        });
    Ok(out)
}

/// Zero of `T` (rustfft's traits have a `zero` too).
fn zero<T: FftFloat>() -> T {
    <T as Element>::zero()
}
