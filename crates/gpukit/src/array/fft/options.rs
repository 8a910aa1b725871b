//! NumPy's `norm=` and `axes=` for the transforms: [`Norm`] ("backward", "ortho", "forward"),
//! the `_norm` forms of the 1-D transforms, [`fftn_axes`]/[`ifftn_axes`] over any axes, and
//! the cropping or zero-padding of a half spectrum that `irfft` with `n` does.
//!
//! Both backends share this code: a norm is a scale applied after the backend's transform, and
//! a transform over axes that are not the last ones moves them last (one strided copy), runs,
//! and moves them back (another).

use super::{c2c, check_axes, irfft_n, rfft, FftFloat};
use crate::array::view::delegate::Contiguous;
use crate::array::view::layout::normalize_axis;
use crate::array::{concatenate, Array, ArrayView, AsView};
use crate::element::{Complex, Element};
use crate::error::{Error, Result};
use ndarray::SliceInfoElem;

/// NumPy's `norm=` of the transforms: which direction is scaled, and by what, for `N`
/// transformed points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Norm {
    /// The forward transform unscaled, the inverse divided by `N` (NumPy's default).
    #[default]
    Backward,
    /// Both directions divided by `√N` (a unitary transform).
    Ortho,
    /// The forward transform divided by `N`, the inverse unscaled.
    Forward,
}

impl std::str::FromStr for Norm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Norm> {
        match s {
            "backward" => Ok(Norm::Backward),
            "ortho" => Ok(Norm::Ortho),
            "forward" => Ok(Norm::Forward),
            other => Err(Error::Other(format!(
                "fft: invalid norm {other:?}; expected \"backward\", \"ortho\" or \"forward\""
            ))),
        }
    }
}

impl Norm {
    /// The factor to apply after a transform of `points` points that was scaled the
    /// "backward" way (`inverse`: divided by `points`).
    fn rescale(self, points: usize, inverse: bool) -> f64 {
        let n = points as f64;
        match (self, inverse) {
            (Norm::Backward, _) => 1.0,
            (Norm::Ortho, false) => 1.0 / n.sqrt(),
            (Norm::Ortho, true) => n.sqrt(),
            (Norm::Forward, false) => 1.0 / n,
            (Norm::Forward, true) => n,
        }
    }
}

/// What a `norm` argument may be: a [`Norm`] or NumPy's string for it.
pub trait IntoNorm {
    /// The norm, or an error naming a bad string.
    fn into_norm(self) -> Result<Norm>;
}

impl IntoNorm for Norm {
    fn into_norm(self) -> Result<Norm> {
        Ok(self)
    }
}

impl IntoNorm for &str {
    fn into_norm(self) -> Result<Norm> {
        self.parse()
    }
}

/// `a` scaled by `f` (nothing done for 1).
fn scaled<T: FftFloat>(mut a: Array<Complex<T>>, f: f64) -> Result<Array<Complex<T>>> {
    if f != 1.0 {
        a.scale_in_place(f)?;
    }
    Ok(a)
}

/// The FFT along the last axis with NumPy's `norm` (`fft.fft(a, norm=...)`).
pub fn fft_norm<T: FftFloat>(
    a: &(impl AsView<Complex<T>> + ?Sized),
    norm: impl IntoNorm,
) -> Result<Array<Complex<T>>> {
    let norm = norm.into_norm()?;
    let a = a.as_view();
    let n = a.shape().last().copied().unwrap_or(0);
    scaled(super::fft(&a)?, norm.rescale(n, false))
}

/// The inverse FFT along the last axis with NumPy's `norm` (`fft.ifft(a, norm=...)`).
pub fn ifft_norm<T: FftFloat>(
    a: &(impl AsView<Complex<T>> + ?Sized),
    norm: impl IntoNorm,
) -> Result<Array<Complex<T>>> {
    let norm = norm.into_norm()?;
    let a = a.as_view();
    let n = a.shape().last().copied().unwrap_or(0);
    scaled(super::ifft(&a)?, norm.rescale(n, true))
}

/// The FFT of real signals along the last axis with NumPy's `norm` (`fft.rfft(a, norm=...)`).
pub fn rfft_norm<T: FftFloat>(
    a: &(impl AsView<T> + ?Sized),
    norm: impl IntoNorm,
) -> Result<Array<Complex<T>>> {
    let norm = norm.into_norm()?;
    let a = a.as_view();
    let n = a.shape().last().copied().unwrap_or(0);
    scaled(rfft(&a)?, norm.rescale(n, false))
}

/// The inverse of [`rfft`](super::rfft) with NumPy's `n` and `norm` (`fft.irfft(a, n, norm=...)`):
/// `n = None` gives `2 * (m - 1)` points for `m` values; otherwise the half spectrum is cropped
/// or zero-padded to `n / 2 + 1` values as in [`irfft_n`](super::irfft_n).
pub fn irfft_norm<T: FftFloat>(
    a: &(impl AsView<Complex<T>> + ?Sized),
    n: Option<usize>,
    norm: impl IntoNorm,
) -> Result<Array<T>> {
    let norm = norm.into_norm()?;
    let a = a.as_view();
    let mut out = match n {
        Some(n) => irfft_n(&a, n)?,
        None => super::irfft(&a)?,
    };
    let points = out.shape().last().copied().unwrap_or(0);
    let f = norm.rescale(points, true);
    if f != 1.0 {
        out.mul_in_place(<T as Element>::from_f64(f))?;
    }
    Ok(out)
}

/// The n-D FFT over `axes` (NumPy's `fft.fftn(a, axes=..., norm=...)`; negative axes count from
/// the end; each axis at most once; any number of them, an empty list copies `a`).
pub fn fftn_axes<T: FftFloat>(
    a: &(impl AsView<Complex<T>> + ?Sized),
    axes: &[isize],
    norm: impl IntoNorm,
) -> Result<Array<Complex<T>>> {
    over_axes("fftn", &a.as_view(), axes, norm.into_norm()?, false)
}

/// The inverse n-D FFT over `axes` (NumPy's `fft.ifftn(a, axes=..., norm=...)`).
pub fn ifftn_axes<T: FftFloat>(
    a: &(impl AsView<Complex<T>> + ?Sized),
    axes: &[isize],
    norm: impl IntoNorm,
) -> Result<Array<Complex<T>>> {
    over_axes("ifftn", &a.as_view(), axes, norm.into_norm()?, true)
}

/// The transform over `axes`, in groups of at most 3 (cuFFT's limit; the transform is
/// separable), each group moved to the end, transformed and moved back.
fn over_axes<T: FftFloat>(
    what: &str,
    a: &ArrayView<'_, Complex<T>>,
    axes: &[isize],
    norm: Norm,
    inverse: bool,
) -> Result<Array<Complex<T>>> {
    let nd = a.ndim();
    let mut chosen = Vec::with_capacity(axes.len());
    for &ax in axes {
        let k = normalize_axis(ax, nd, what)?;
        if chosen.contains(&k) {
            return Err(Error::Shape(format!(
                "{what}: axis {ax} is repeated in axes {axes:?}"
            )));
        }
        chosen.push(k);
    }
    let mut out = a.copy()?;
    let mut points = 1usize;
    for group in chosen.chunks(3) {
        for &k in group {
            if a.shape()[k] == 0 {
                return Err(Error::Shape(format!(
                    "{what}: invalid number of points: axis {k} of shape {:?} is empty",
                    a.shape()
                )));
            }
            points *= a.shape()[k];
        }
        // The group's axes last, in the order given; the others first, in order.
        let mut perm: Vec<usize> = (0..nd).filter(|k| !group.contains(k)).collect();
        perm.extend_from_slice(group);
        let moved = out.permute(&perm)?.contiguous()?;
        check_axes(what, moved.shape(), group.len())?;
        let done = c2c(what, &moved, group.len(), inverse)?;
        let mut back = vec![0usize; nd];
        for (i, &p) in perm.iter().enumerate() {
            back[p] = i;
        }
        out = done.permute(&back)?.copy()?;
    }
    if chosen.is_empty() {
        return Ok(out);
    }
    scaled(out, norm.rescale(points, inverse))
}

/// `a` with its last axis cropped or zero-padded to `m` values (what `irfft` with `n` reads).
pub(super) fn fit_last_axis<'a, T: FftFloat>(
    a: &ArrayView<'a, Complex<T>>,
    m: usize,
) -> Result<Contiguous<'a, Complex<T>>> {
    let nd = a.ndim();
    let have = a.shape()[nd - 1];
    if have == m {
        return a.contiguous();
    }
    let all = SliceInfoElem::Slice {
        start: 0,
        end: None,
        step: 1,
    };
    if have > m {
        let mut info = vec![all; nd - 1];
        info.push(SliceInfoElem::Slice {
            start: 0,
            end: Some(m as isize),
            step: 1,
        });
        return Ok(Contiguous::Owned(a.slice(info)?.copy()?));
    }
    let mut pad_shape = a.shape().to_vec();
    pad_shape[nd - 1] = m - have;
    let pad = Array::<Complex<T>>::zeros_on(pad_shape, &a.device())?;
    Ok(Contiguous::Owned(concatenate(
        &[a.clone(), pad.view()],
        -1isize,
    )?))
}
