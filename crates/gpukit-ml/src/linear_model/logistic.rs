//! [`LogisticRegression`]: L2-penalised logistic regression, binary (sigmoid) or multinomial
//! (softmax), fitted by Newton's method on the device ([`super::newton`]).
//!
//! Why Newton and not L-BFGS: with the handful of features these models see (tens), the
//! Hessian is a small `(p·m) x (p·m)` matrix built by GEMMs over the data, and Newton converges
//! in about ten passes to the optimum within rounding, where L-BFGS takes hundreds of passes
//! to a looser tolerance. Each pass costs a few GEMMs and one `(n, p·m)` temporary.

use gpukit::{concatenate, s, Array, Element};

use super::labels::{one_hot, take};
use super::newton::{minimise, Problem};
use crate::error::{MlError, Result};
use crate::gram::LinalgFloat;
use crate::input::{Features, Targets};
use crate::labels::distinct as classes;
use crate::metrics::accuracy_score;
use crate::prepare::{on_device, prediction_features, training_features, training_targets};

/// The learned parameters.
#[derive(Debug)]
struct LogisticFit<T: LinalgFloat> {
    /// `(m, d)`: one row (binary) or one per class.
    coef: Array<T>,
    /// `(d, m)`: the transpose, for predictions.
    coef_t: Array<T>,
    /// `(m,)`.
    intercept: Array<T>,
    /// `(K,)`, ascending.
    classes: Array<i64>,
    n_iter: usize,
}

/// Logistic regression with an L2 penalty (scikit-learn's and cuML's `LogisticRegression` with
/// `penalty="l2"`): two classes by the sigmoid of one linear function, more by the softmax of
/// one per class (scikit-learn's multinomial). It minimises `C · Σᵢ loss + ½|w|²` (the
/// intercepts unpenalised) by Newton's method on the features' device; see
/// [`super::newton`] for the objective and the stopping rule.
///
/// Class labels are `i64`, any values; [`LogisticRegression::classes`] lists them ascending,
/// and `predict_proba`'s columns follow that order. Ties between classes (equal scores) go to
/// the first in that order, as NumPy's `argmax` (binary: a score of exactly 0 predicts the
/// first class, as scikit-learn).
///
/// ```
/// use gpukit::prelude::*;
/// use gpukit_ml::linear_model::LogisticRegression;
/// # fn main() -> gpukit_ml::Result<()> {
/// # if !gpukit::linalg::cpu_available() && gpukit::default_device() == Device::Cpu { return Ok(()); }
/// let x = Array::from_vec(vec![-2.0f64, -1.0, -0.5, 0.5, 1.0, 2.0], [6, 1])?;
/// let y = Array::from_vec(vec![0i64, 0, 1, 0, 1, 1], 6)?;
/// let mut model = LogisticRegression::new().c(10.0);
/// model.fit(&x, &y)?;
/// assert_eq!(model.predict(&x)?.to_vec()?, vec![0, 0, 0, 1, 1, 1]);
/// let p = model.predict_proba(&x)?; // (6, 2): P(class 0), P(class 1)
/// assert_eq!(p.shape(), &[6, 2]);
/// assert!((model.score(&x, &y)? - 4.0 / 6.0).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LogisticRegression<T: LinalgFloat = f64> {
    c: f64,
    fit_intercept: bool,
    max_iter: usize,
    tol: f64,
    fitted: Option<LogisticFit<T>>,
}

impl<T: LinalgFloat> Default for LogisticRegression<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: LinalgFloat> LogisticRegression<T> {
    const NAME: &'static str = "LogisticRegression";

    /// An unfitted model with scikit-learn's defaults: `C = 1.0`, an intercept,
    /// `max_iter = 100`, `tol = 1e-4`.
    pub fn new() -> Self {
        LogisticRegression {
            c: 1.0,
            fit_intercept: true,
            max_iter: 100,
            tol: 1e-4,
            fitted: None,
        }
    }

    /// The inverse penalty strength `C > 0` (default 1.0; larger fits the data more closely).
    pub fn c(mut self, c: f64) -> Self {
        self.c = c;
        self
    }

    /// Whether to fit (unpenalised) intercepts (default `true`).
    pub fn fit_intercept(mut self, on: bool) -> Self {
        self.fit_intercept = on;
        self
    }

    /// The most Newton steps (default 100; ten or so are usual).
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    /// Stop when no entry of the objective's gradient exceeds `tol` in size (default 1e-4).
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    fn check_parameters(&self, what: &'static str) -> Result<()> {
        let bad = |name, detail: String| Err(MlError::Parameter { what, name, detail });
        if !(self.c.is_finite() && self.c > 0.0) {
            return bad("c", format!("must be finite and > 0, got {}", self.c));
        }
        if self.max_iter == 0 {
            return bad("max_iter", "must be at least 1".into());
        }
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            return bad("tol", format!("must be finite and >= 0, got {}", self.tol));
        }
        Ok(())
    }

    /// Fits the model on features `x` `(n_samples, n_features)` and labels `y` `(n_samples,)`,
    /// on `x`'s device. Errors: bad parameters, empty or non-finite features, row counts that
    /// differ, fewer than two classes; a failed fit leaves the model as it was.
    pub fn fit(
        &mut self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<i64> + ?Sized),
    ) -> Result<&mut Self> {
        let what = "LogisticRegression::fit";
        self.check_parameters(what)?;
        let (x, n, d) = training_features(what, x)?;
        let device = x.device();
        let y = training_targets(what, y, n, &device)?;
        let classes = classes(&y)?;
        let k = classes.len();
        if k < 2 {
            return Err(MlError::Parameter {
                what,
                name: "y",
                detail: format!(
                    "needs samples of at least two classes, got only {:?}",
                    classes.to_vec()?
                ),
            });
        }
        let xa = if self.fit_intercept {
            let ones = Array::<T>::ones_on([n, 1], &device)?;
            concatenate(&[x.view(), ones.view()], 1)?
        } else {
            x.into_owned()
        };
        let targets = if k == 2 {
            let top = classes.to_vec()?[1];
            y.eq(top)?.astype::<T>()?.into_shape([n, 1])?
        } else {
            one_hot::<T>(&y, &classes)?
        };
        let m = targets.shape()[1];
        let targets_f64 = targets.astype::<f64>()?;
        let problem = Problem {
            xa: &xa,
            targets: &targets,
            targets_f64: &targets_f64,
            d,
            intercept: self.fit_intercept,
            inv_cn: 1.0 / (self.c * n as f64),
        };
        let out = minimise(&problem, self.max_iter, self.tol)?;
        drop(targets_f64);
        drop(targets);
        drop(xa);
        let w = Array::from_vec_on(
            out.w.iter().map(|&v| <T as Element>::from_f64(v)).collect(),
            [out.w.len() / m, m],
            &device,
        )?;
        let coef_t = w.slice(s![0..d, ..])?.copy()?;
        let coef = coef_t.t().copy()?;
        let intercept = if self.fit_intercept {
            w.slice(s![d..d + 1, ..])?.copy()?.into_shape([m])?
        } else {
            Array::zeros_on([m], &device)?
        };
        self.fitted = Some(LogisticFit {
            coef,
            coef_t,
            intercept,
            classes,
            n_iter: out.n_iter,
        });
        Ok(self)
    }

    fn fitted(&self) -> Result<&LogisticFit<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The coefficients: `(1, n_features)` for two classes (those of the second class, as
    /// scikit-learn), `(n_classes, n_features)` for more.
    pub fn coef(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.coef)
    }

    /// The intercepts: `(1,)` for two classes, `(n_classes,)` for more (they sum to zero).
    pub fn intercept(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.intercept)
    }

    /// The class labels seen in training, ascending.
    pub fn classes(&self) -> Result<&Array<i64>> {
        Ok(&self.fitted()?.classes)
    }

    /// The Newton steps the fit took.
    pub fn n_iter(&self) -> Result<usize> {
        Ok(self.fitted()?.n_iter)
    }

    /// The linear scores `x·coefᵀ + intercept`: `(n_samples, 1)` for two classes (positive
    /// means the second class), `(n_samples, n_classes)` for more; on `x`'s device.
    pub fn decision_function(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        self.scores("LogisticRegression::decision_function", x)
    }

    fn scores(&self, what: &'static str, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let fit = self.fitted()?;
        let d = fit.coef.shape()[1];
        let x = prediction_features(what, x, d)?;
        let device = x.device();
        let m = fit.intercept.len();
        if x.shape()[0] == 0 {
            return Ok(Array::zeros_on([0, m], &device)?);
        }
        let coef_t = on_device(&fit.coef_t, &device)?;
        let intercept = on_device(&fit.intercept, &device)?;
        Ok(gpukit::linalg::matmul_add(
            &x,
            &coef_t,
            &intercept,
            <T as Element>::one(),
            <T as Element>::one(),
        )?)
    }

    /// The predicted class of each row of `x`, on `x`'s device.
    pub fn predict(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<i64>> {
        let fit = self.fitted()?;
        let z = self.scores("LogisticRegression::predict", x)?;
        let n = z.shape()[0];
        let idx = if fit.intercept.len() == 1 {
            z.gt(<T as Element>::zero())?
                .astype::<i64>()?
                .into_shape([n])?
        } else {
            z.argmax_axis(1)?
        };
        let classes = on_device(&fit.classes, &z.device())?;
        take(&classes, &idx)
    }

    /// Class probabilities `(n_samples, n_classes)`, columns in the order of
    /// [`LogisticRegression::classes`], on `x`'s device.
    pub fn predict_proba(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let fit = self.fitted()?;
        let z = self.scores("LogisticRegression::predict_proba", x)?;
        if fit.intercept.len() == 1 {
            let half = <T as Element>::from_f64(0.5);
            let p1 = (((&z * half)?.tanh()? + <T as Element>::one())? * half)?;
            let p0 = (p1.neg()? + <T as Element>::one())?;
            Ok(concatenate(&[p0.view(), p1.view()], 1)?)
        } else {
            let mx = z.max_axis(gpukit::keepdims(1))?;
            let e = (&z - &mx)?.exp()?;
            let s = e.sum_axis(gpukit::keepdims(1))?;
            Ok((&e / &s)?)
        }
    }

    /// The fraction of rows of `x` whose predicted class is `y`'s (scikit-learn's `score`).
    pub fn score(
        &self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<i64> + ?Sized),
    ) -> Result<f64> {
        let pred = self.predict(x)?;
        let y = training_targets("LogisticRegression::score", y, pred.len(), &pred.device())?;
        accuracy_score(&*y, &pred)
    }
}
