//! Checked model inputs: features and targets for fitting and prediction, on one device (what
//! the linear models and PCA share).

use std::borrow::Cow;

use gpukit::{Array, Device, Element, Float};

use crate::check::fit_features;
use crate::error::{MlError, Result};
use crate::input::{check_finite, check_rows, matrix, Features, Targets};

/// `x` checked for fitting ([`crate::check::fit_features`]: 2-D, at least one row and one
/// column, finite). Returns it with `(n_samples, n_features)`.
pub(crate) fn training_features<'a, T: Float>(
    what: &'static str,
    x: &'a (impl Features<T> + ?Sized),
) -> Result<(Cow<'a, Array<T>>, usize, usize)> {
    let x = fit_features(what, x)?;
    let (n, d) = (x.shape()[0], x.shape()[1]);
    Ok((x, n, d))
}

/// `y` for `n` samples, moved to `device` when it lies elsewhere (an ndarray `y` is copied to
/// the default device, which need not be the features' device).
pub(crate) fn training_targets<'a, L: Element>(
    what: &'static str,
    y: &'a (impl Targets<L> + ?Sized),
    n: usize,
    device: &Device,
) -> Result<Cow<'a, Array<L>>> {
    let y = y.targets(what)?;
    check_rows(what, n, y.len(), "the targets")?;
    if y.device() == *device {
        Ok(y)
    } else {
        Ok(Cow::Owned(y.to_device(device)?))
    }
}

/// An error unless every target value is finite.
pub(crate) fn check_finite_targets<T: Float>(what: &'static str, y: &Array<T>) -> Result<()> {
    if y.isfinite()?.all()? {
        return Ok(());
    }
    let values = y.to_vec()?;
    let (i, v) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !v.to_f64().is_finite())
        .expect("isfinite().all() was false, so a non-finite value exists");
    Err(MlError::NonFinite {
        what,
        row: i,
        column: 0,
        value: format!("{}", v.to_f64()),
    })
}

/// `x` checked for prediction by a model fitted on `d` features: 2-D, `d` columns, finite.
pub(crate) fn prediction_features<'a, T: Float>(
    what: &'static str,
    x: &'a (impl Features<T> + ?Sized),
    d: usize,
) -> Result<Cow<'a, Array<T>>> {
    let x = x.features(what)?;
    let (_, dx) = matrix(what, x.shape())?;
    if dx != d {
        return Err(MlError::Shape {
            what,
            detail: format!("the model was fitted on {d} features, got {dx}"),
        });
    }
    check_finite(what, &x)?;
    Ok(x)
}

/// `a` on `device` (borrowed when it is already there).
pub(crate) fn on_device<'a, T: Element>(
    a: &'a Array<T>,
    device: &Device,
) -> Result<Cow<'a, Array<T>>> {
    if a.device() == *device {
        Ok(Cow::Borrowed(a))
    } else {
        Ok(Cow::Owned(a.to_device(device)?))
    }
}
