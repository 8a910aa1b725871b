//! The checks every model runs on its input before any work: a 2-D, non-empty, finite feature
//! matrix; at predict time also the training feature count and the model's device (a query on
//! another device is copied there).

use std::borrow::Cow;

use gpukit::{Array, Device, Float};

use crate::error::{MlError, Result};
use crate::input::{check_finite, matrix, Features};

/// The features of a `fit`: 2-D, at least one row and one column, finite.
pub(crate) fn fit_features<'a, T: Float>(
    what: &'static str,
    x: &'a (impl Features<T> + ?Sized),
) -> Result<Cow<'a, Array<T>>> {
    let x = x.features(what)?;
    let (n, d) = matrix(what, x.shape())?;
    if n == 0 || d == 0 {
        return Err(MlError::Shape {
            what,
            detail: format!(
                "the features are empty (shape ({n}, {d})): need at least one row and one column"
            ),
        });
    }
    check_finite(what, &x)?;
    Ok(x)
}

/// The features of a `predict` (or `transform`, `kneighbors`) of a model fitted on `d`
/// features on `device`: 2-D, at least one row, `d` columns, finite, on `device`.
pub(crate) fn query_features<'a, T: Float>(
    what: &'static str,
    x: &'a (impl Features<T> + ?Sized),
    d: usize,
    device: &Device,
) -> Result<Cow<'a, Array<T>>> {
    let x = x.features(what)?;
    let (n, dx) = matrix(what, x.shape())?;
    if n == 0 {
        return Err(MlError::Shape {
            what,
            detail: format!("the features are empty (shape ({n}, {dx})): need at least one row"),
        });
    }
    if dx != d {
        return Err(MlError::Shape {
            what,
            detail: format!("the model was fitted on {d} features, but this input has {dx}"),
        });
    }
    check_finite(what, &x)?;
    if x.device() != *device {
        return Ok(Cow::Owned(x.to_device(device)?));
    }
    Ok(x)
}
