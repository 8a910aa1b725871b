//! Ordinary least squares ([`LinearRegression`]) and ridge regression ([`Ridge`]) through the
//! normal equations, on the device where the features lie.
//!
//! With `fit_intercept` (the default) the features and targets are centered on the device
//! (`x - mean`, `y - mean`), so the intercept is not penalised and the Gram matrix is that of
//! the centered data (no cancellation from large means). Then `G = Xcᵀ·Xc` is one GEMM of
//! `(d x n)(n x d)` read from `Xc` as it lies ([`crate::gram`]), `b = Xcᵀ·yc` another, and the
//! `d x d` system is solved on the device:
//! - [`Ridge`]: `(G + αI) w = b` with `gpukit::linalg::solve` (LU; `G + αI` is symmetric
//!   positive definite for `α > 0`).
//! - [`LinearRegression`]: `w = G⁺ b` with `gpukit::linalg::lstsq` (SVD of the small `G`,
//!   singular values at or below `rcond · s_max` dropped). `G⁺ Xᵀ y = X⁺ y`, so this is the
//!   minimum-norm least-squares solution that scikit-learn's `LinearRegression` (LAPACK's
//!   `gelsd` on `X`) returns, also when columns are collinear and `XᵀX` is singular. Forming
//!   `G` squares `X`'s condition number: directions of `X` whose singular value is below about
//!   `sqrt(rcond) · s_max` count as absent (for `f64` about 1e-7 relative; fine for data with
//!   that much signal, and the price of reading the data only once).
//!
//! The intercept is then `ȳ - x̄·w`.

use gpukit::linalg::{lstsq, solve};
use gpukit::{Array, Element};

use crate::error::{MlError, Result};
use crate::gram::{gram, t_matmul, LinalgFloat};
use crate::input::{Features, Targets};
use crate::metrics::r2_score;
use crate::prepare::{
    check_finite_targets, on_device, prediction_features, training_features, training_targets,
};

/// The learned parameters of a linear regression.
#[derive(Debug)]
struct LinearFit<T: LinalgFloat> {
    /// `(n_features,)`, on the training device.
    coef: Array<T>,
    intercept: T,
}

/// How the `d x d` normal equations are solved.
#[derive(Clone, Copy, Debug)]
enum Solver {
    /// `lstsq(G, b, rcond)`: minimum norm, any rank.
    MinimumNorm(Option<f64>),
    /// `solve(G + alpha I, b)`.
    Ridge(f64),
}

/// Fits `w` and the intercept on `x`'s device.
fn fit_linear<T: LinalgFloat>(
    what: &'static str,
    x: &(impl Features<T> + ?Sized),
    y: &(impl Targets<T> + ?Sized),
    fit_intercept: bool,
    solver: Solver,
) -> Result<LinearFit<T>> {
    let (x, n, d) = training_features(what, x)?;
    let device = x.device();
    let y = training_targets(what, y, n, &device)?;
    check_finite_targets(what, &y)?;
    let (xc, yc, x_mean, y_mean) = if fit_intercept {
        let x_mean = x.mean_axis(0)?;
        let y_mean = y.mean()?;
        let xc = (&*x - &x_mean)?;
        let yc = (&*y - y_mean)?;
        (xc, yc, Some(x_mean), y_mean)
    } else {
        (x.into_owned(), y.into_owned(), None, <T as Element>::zero())
    };
    let g = gram(&xc)?;
    let b = t_matmul(&xc, &yc.into_shape([n, 1])?)?;
    drop(xc);
    let w = match solver {
        Solver::MinimumNorm(rcond) => lstsq(&g, &b, rcond)?.x,
        Solver::Ridge(alpha) => {
            let mut a = g;
            if alpha > 0.0 {
                let eye = (Array::<T>::eye_on(d, &device)? * <T as Element>::from_f64(alpha))?;
                a.add_in_place(&eye)?;
            }
            solve(&a, &b)?
        }
    };
    let coef = w.into_shape([d])?;
    let intercept = match x_mean {
        Some(m) => y_mean - m.dot(&coef)?.item()?,
        None => <T as Element>::zero(),
    };
    Ok(LinearFit { coef, intercept })
}

impl<T: LinalgFloat> LinearFit<T> {
    fn predict(&self, what: &'static str, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let x = prediction_features(what, x, self.coef.len())?;
        let device = x.device();
        let coef = on_device(&self.coef, &device)?;
        let n = x.shape()[0];
        if n == 0 {
            return Ok(Array::zeros_on([0], &device)?);
        }
        let bias = Array::full_on((), self.intercept, &device)?;
        Ok(gpukit::linalg::matmul_add(
            &x,
            &coef,
            &bias,
            <T as Element>::one(),
            <T as Element>::one(),
        )?)
    }

    fn score(
        &self,
        what: &'static str,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<f64> {
        let pred = self.predict(what, x)?;
        let y = training_targets(what, y, pred.len(), &pred.device())?;
        r2_score(&*y, &pred)
    }
}

/// Ordinary least squares: the `w`, `b` minimising `|y - X·w - b|²` (scikit-learn's and cuML's
/// `LinearRegression`), by the normal equations on the features' device (see the module
/// comment: one pass over the data, then a small SVD; rank-deficient `X` gives the
/// minimum-norm solution).
///
/// ```
/// use gpukit::prelude::*;
/// use gpukit_ml::linear_model::LinearRegression;
/// # fn main() -> gpukit_ml::Result<()> {
/// # if !gpukit::linalg::cpu_available() && gpukit::default_device() == Device::Cpu { return Ok(()); }
/// // y = 1 + 2·x0 - x1
/// let x = Array::from_vec(vec![0.0f64, 0.0, 1.0, 0.0, 0.0, 1.0, 2.0, 3.0], [4, 2])?;
/// let y = Array::from_vec(vec![1.0f64, 3.0, 0.0, 2.0], 4)?;
/// let mut model = LinearRegression::new();
/// model.fit(&x, &y)?;
/// let w = model.coef()?.to_vec()?;
/// assert!((w[0] - 2.0).abs() < 1e-10 && (w[1] + 1.0).abs() < 1e-10);
/// assert!((model.intercept()? - 1.0).abs() < 1e-10);
/// assert!((model.score(&x, &y)? - 1.0).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LinearRegression<T: LinalgFloat = f64> {
    fit_intercept: bool,
    rcond: Option<f64>,
    fitted: Option<LinearFit<T>>,
}

impl<T: LinalgFloat> Default for LinearRegression<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: LinalgFloat> LinearRegression<T> {
    const NAME: &'static str = "LinearRegression";

    /// An unfitted model with an intercept.
    pub fn new() -> Self {
        LinearRegression {
            fit_intercept: true,
            rcond: None,
            fitted: None,
        }
    }

    /// Whether to fit an intercept (default `true`); without, the line goes through the origin.
    pub fn fit_intercept(mut self, on: bool) -> Self {
        self.fit_intercept = on;
        self
    }

    /// Relative cut-off for the Gram matrix's singular values (`lstsq`'s `rcond`; default
    /// NumPy's, machine epsilon times the number of features).
    pub fn rcond(mut self, rcond: f64) -> Self {
        self.rcond = Some(rcond);
        self
    }

    /// Fits the model on features `x` `(n_samples, n_features)` and targets `y`
    /// `(n_samples,)`, on `x`'s device. Errors: empty or non-finite input, row counts that
    /// differ; a failed fit leaves the model as it was.
    pub fn fit(
        &mut self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<&mut Self> {
        if let Some(r) = self.rcond {
            if !(r.is_finite() && r >= 0.0) {
                return Err(MlError::Parameter {
                    what: "LinearRegression::fit",
                    name: "rcond",
                    detail: format!("must be finite and >= 0, got {r}"),
                });
            }
        }
        let fit = fit_linear(
            "LinearRegression::fit",
            x,
            y,
            self.fit_intercept,
            Solver::MinimumNorm(self.rcond),
        )?;
        self.fitted = Some(fit);
        Ok(self)
    }

    fn fitted(&self) -> Result<&LinearFit<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The coefficients `w`, `(n_features,)`, on the training device.
    pub fn coef(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.coef)
    }

    /// The intercept `b` (0 without `fit_intercept`).
    pub fn intercept(&self) -> Result<T> {
        Ok(self.fitted()?.intercept)
    }

    /// `X·w + b` for features `x` with the training data's number of columns, on `x`'s device.
    pub fn predict(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        self.fitted()?.predict("LinearRegression::predict", x)
    }

    /// R² of the predictions for `x` against `y` (1 is perfect; scikit-learn's `score`).
    pub fn score(
        &self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<f64> {
        self.fitted()?.score("LinearRegression::score", x, y)
    }
}

/// Ridge regression: the `w`, `b` minimising `|y - X·w - b|² + α|w|²` (scikit-learn's and
/// cuML's `Ridge`; the intercept is not penalised), by the normal equations `(XcᵀXc + αI) w =
/// Xcᵀyc` on the features' device: one GEMM over the data, then a `d x d` solve.
///
/// ```
/// use gpukit::prelude::*;
/// use gpukit_ml::linear_model::Ridge;
/// # fn main() -> gpukit_ml::Result<()> {
/// # if !gpukit::linalg::cpu_available() && gpukit::default_device() == Device::Cpu { return Ok(()); }
/// let x = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], [4, 1])?;
/// let y = Array::from_vec(vec![1.0f64, 3.0, 5.0, 7.0], 4)?;
/// let mut model = Ridge::new().alpha(5.0);
/// model.fit(&x, &y)?;
/// // Σ(x - x̄)² = 5, Σ(x - x̄)(y - ȳ) = 10: w = 10 / (5 + α) = 1
/// assert!((model.coef()?.to_vec()?[0] - 1.0).abs() < 1e-12);
/// assert!((model.intercept()? - 2.5).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Ridge<T: LinalgFloat = f64> {
    alpha: f64,
    fit_intercept: bool,
    fitted: Option<LinearFit<T>>,
}

impl<T: LinalgFloat> Default for Ridge<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: LinalgFloat> Ridge<T> {
    const NAME: &'static str = "Ridge";

    /// An unfitted model with `alpha = 1.0` and an intercept (scikit-learn's defaults).
    pub fn new() -> Self {
        Ridge {
            alpha: 1.0,
            fit_intercept: true,
            fitted: None,
        }
    }

    /// The penalty's strength `α >= 0` (default 1.0). `α = 0` is ordinary least squares by a
    /// plain solve, which fails on collinear features (use [`LinearRegression`] there).
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = alpha;
        self
    }

    /// Whether to fit an (unpenalised) intercept (default `true`).
    pub fn fit_intercept(mut self, on: bool) -> Self {
        self.fit_intercept = on;
        self
    }

    /// Fits the model on features `x` `(n_samples, n_features)` and targets `y`
    /// `(n_samples,)`, on `x`'s device. Errors: `alpha` negative or not finite, empty or
    /// non-finite input, row counts that differ, a singular system (only with `alpha = 0`).
    pub fn fit(
        &mut self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<&mut Self> {
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(MlError::Parameter {
                what: "Ridge::fit",
                name: "alpha",
                detail: format!("must be finite and >= 0, got {}", self.alpha),
            });
        }
        let fit = fit_linear(
            "Ridge::fit",
            x,
            y,
            self.fit_intercept,
            Solver::Ridge(self.alpha),
        )?;
        self.fitted = Some(fit);
        Ok(self)
    }

    fn fitted(&self) -> Result<&LinearFit<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The coefficients `w`, `(n_features,)`, on the training device.
    pub fn coef(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.coef)
    }

    /// The intercept `b` (0 without `fit_intercept`).
    pub fn intercept(&self) -> Result<T> {
        Ok(self.fitted()?.intercept)
    }

    /// `X·w + b` for features `x` with the training data's number of columns, on `x`'s device.
    pub fn predict(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        self.fitted()?.predict("Ridge::predict", x)
    }

    /// R² of the predictions for `x` against `y` (1 is perfect; scikit-learn's `score`).
    pub fn score(
        &self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<f64> {
        self.fitted()?.score("Ridge::score", x, y)
    }
}
