//! The linear models' scores, computed on the device: R² (regression), accuracy
//! (classification).

use gpukit::{Array, Float};

use crate::error::Result;

/// The coefficient of determination `1 - Σ(y - ŷ)² / Σ(y - ȳ)²`, as scikit-learn's `r2_score`
/// (for a constant `y`: 1.0 when predicted exactly, else 0.0).
pub(crate) fn r2<T: Float>(y: &Array<T>, pred: &Array<T>) -> Result<f64> {
    let resid = (y - pred)?.square()?.sum()?.to_f64();
    let mean = y.mean()?;
    let total = (y - mean)?.square()?.sum()?.to_f64();
    if total == 0.0 {
        return Ok(if resid == 0.0 { 1.0 } else { 0.0 });
    }
    Ok(1.0 - resid / total)
}

/// The fraction of equal labels.
pub(crate) fn accuracy(y: &Array<i64>, pred: &Array<i64>) -> Result<f64> {
    if y.is_empty() {
        return Ok(0.0);
    }
    Ok(y.eq(pred)?.count_nonzero()? as f64 / y.len() as f64)
}
