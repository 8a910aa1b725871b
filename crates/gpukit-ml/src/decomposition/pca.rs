//! [`PCA`]: principal component analysis of the centered data, on the device where it lies.
//!
//! Two routes to the same decomposition, chosen by shape:
//! - tall data (`n_samples >= n_features`, the usual case): the eigendecomposition
//!   (`gpukit::linalg::eigh`) of the small `d x d` matrix `XcᵀXc`, one GEMM over the data
//!   ([`crate::gram`]); eigenvalue `λ` gives the singular value `sqrt(λ)` of `Xc`. Forming
//!   `XcᵀXc` squares the condition number: components whose singular value is below about
//!   `sqrt(eps) · s_max` (1e-8 relative in `f64`) lose their relative accuracy, the price of
//!   one pass over the data instead of an SVD of the whole `n x d` matrix.
//! - wide data: the reduced SVD (`gpukit::linalg::svd`) of `Xc` itself.
//!
//! Signs are fixed as scikit-learn's `svd_flip` with `u_based_decision=False`: the entry of
//! largest absolute value of each component is positive (the first such entry on a tie), so
//! both backends and both routes give the same components.

use gpukit::linalg::{eigh, svd};
use gpukit::{Array, Element};

use crate::error::{MlError, Result};
use crate::gram::{gram, LinalgFloat};
use crate::input::Features;
use crate::prepare::{on_device, prediction_features, training_features};

/// What `fit` learns.
#[derive(Debug)]
struct PcaFit<T: LinalgFloat> {
    /// `(k, d)`, rows are unit vectors.
    components: Array<T>,
    /// `(d, k)`.
    components_t: Array<T>,
    /// `(d,)`.
    mean: Array<T>,
    /// `(k,)` each: variances (`ddof = 1`), their share of the total, singular values.
    explained_variance: Array<T>,
    explained_variance_ratio: Array<T>,
    singular_values: Array<T>,
    /// `(k,)`: `sqrt(explained_variance)`, the whitening scale.
    scale: Array<T>,
}

/// Principal component analysis (scikit-learn's and cuML's `PCA`): the directions of largest
/// variance of the data, by the eigendecomposition of `XcᵀXc` for tall data or the SVD of the
/// centered data for wide (see the module comment; signs fixed as scikit-learn's `svd_flip`).
///
/// ```
/// use gpukit::prelude::*;
/// use gpukit_ml::decomposition::PCA;
/// # fn main() -> gpukit_ml::Result<()> {
/// # if !gpukit::linalg::cpu_available() && gpukit::default_device() == Device::Cpu { return Ok(()); }
/// // Points on the line y = 2x: one component carries all the variance.
/// let x = Array::from_vec(vec![0.0f64, 0.0, 1.0, 2.0, 2.0, 4.0, 3.0, 6.0], [4, 2])?;
/// let mut pca = PCA::new().n_components(1);
/// let z = pca.fit_transform(&x)?;
/// assert_eq!(z.shape(), &[4, 1]);
/// let c = pca.components()?.to_vec()?;
/// assert!((c[0] - 1.0 / 5f64.sqrt()).abs() < 1e-12 && (c[1] - 2.0 / 5f64.sqrt()).abs() < 1e-12);
/// assert!((pca.explained_variance_ratio()?.to_vec()?[0] - 1.0).abs() < 1e-12);
/// let back = pca.inverse_transform(&z)?.to_vec()?;
/// assert!(back.iter().zip(x.to_vec()?).all(|(a, b)| (a - b).abs() < 1e-12));
/// # Ok(())
/// # }
/// ```
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug)]
pub struct PCA<T: LinalgFloat = f64> {
    n_components: Option<usize>,
    whiten: bool,
    fitted: Option<PcaFit<T>>,
}

impl<T: LinalgFloat> Default for PCA<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: LinalgFloat> PCA<T> {
    const NAME: &'static str = "PCA";

    /// An unfitted PCA keeping `min(n_samples, n_features)` components, without whitening.
    pub fn new() -> Self {
        PCA {
            n_components: None,
            whiten: false,
            fitted: None,
        }
    }

    /// Keep `k` components (`1 <= k <= min(n_samples, n_features)`, checked at `fit`).
    pub fn n_components(mut self, k: usize) -> Self {
        self.n_components = Some(k);
        self
    }

    /// Scale the transformed components to unit variance (default `false`).
    pub fn whiten(mut self, on: bool) -> Self {
        self.whiten = on;
        self
    }

    /// Fits the components to `x` `(n_samples, n_features)` on its device. Errors: fewer than
    /// two samples, non-finite values, `n_components` out of range.
    pub fn fit(&mut self, x: &(impl Features<T> + ?Sized)) -> Result<&mut Self> {
        let what = "PCA::fit";
        let (x, n, d) = training_features(what, x)?;
        if n < 2 {
            return Err(MlError::Shape {
                what,
                detail: format!("PCA needs at least two samples, got {n}"),
            });
        }
        let k = self.n_components.unwrap_or(n.min(d));
        if k == 0 || k > n.min(d) {
            return Err(MlError::Parameter {
                what,
                name: "n_components",
                detail: format!(
                    "must be between 1 and min(n_samples, n_features) = {}, got {k}",
                    n.min(d)
                ),
            });
        }
        let device = x.device();
        let mean = x.mean_axis(0)?;
        let xc = (&*x - &mean)?;
        // Host copies of the (d, r) directions (in columns) and r squared singular values,
        // descending, with the total sum of squares.
        let (dirs, r, sq, total): (Vec<f64>, usize, Vec<f64>, f64) = if n >= d {
            let g = gram(&xc)?;
            drop(xc);
            let total: f64 = {
                let gv = g.to_vec()?;
                (0..d).map(|i| gv[i * d + i].to_f64()).sum()
            };
            let e = eigh(&g)?;
            let vals: Vec<f64> = e.eigenvalues.to_vec()?.iter().map(|v| v.to_f64()).collect();
            let vecs: Vec<f64> = e
                .eigenvectors
                .to_vec()?
                .iter()
                .map(|v| v.to_f64())
                .collect();
            // Ascending -> descending: column d-1-i of the eigenvectors.
            let mut dirs = vec![0.0; d * d];
            for row in 0..d {
                for i in 0..d {
                    dirs[row * d + i] = vecs[row * d + (d - 1 - i)];
                }
            }
            let sq = (0..d).map(|i| vals[d - 1 - i].max(0.0)).collect();
            (dirs, d, sq, total)
        } else {
            let total = xc.square()?.sum()?.to_f64();
            let s = svd(&xc, false)?;
            drop(xc);
            let r = n.min(d);
            let vt: Vec<f64> = s.vt.to_vec()?.iter().map(|v| v.to_f64()).collect();
            let mut dirs = vec![0.0; d * r];
            for i in 0..r {
                for col in 0..d {
                    dirs[col * r + i] = vt[i * d + col];
                }
            }
            let sq = s.s.to_vec()?.iter().map(|v| v.to_f64().powi(2)).collect();
            (dirs, r, sq, total)
        };
        // The first k directions as rows, signs flipped (svd_flip on the components).
        let mut comp = vec![0.0f64; k * d];
        for i in 0..k {
            let col: Vec<f64> = (0..d).map(|row| dirs[row * r + i]).collect();
            let big = col
                .iter()
                .enumerate()
                .fold((0, 0.0f64), |best, (j, v)| {
                    if v.abs() > best.1 {
                        (j, v.abs())
                    } else {
                        best
                    }
                })
                .0;
            let sign = if col[big] < 0.0 { -1.0 } else { 1.0 };
            for (j, v) in col.iter().enumerate() {
                comp[i * d + j] = sign * v;
            }
        }
        let dof = (n - 1) as f64;
        let var: Vec<f64> = sq[..k].iter().map(|s| s / dof).collect();
        let total_var = total / dof;
        let ratio: Vec<f64> = var
            .iter()
            .map(|v| if total_var > 0.0 { v / total_var } else { 0.0 })
            .collect();
        let sv: Vec<f64> = sq[..k].iter().map(|s| s.sqrt()).collect();
        let scale: Vec<f64> = var
            .iter()
            .map(|v| if *v > 0.0 { v.sqrt() } else { 1.0 })
            .collect();
        let up = |v: &[f64], shape: &[usize]| -> Result<Array<T>> {
            Ok(Array::from_vec_on(
                v.iter().map(|&x| <T as Element>::from_f64(x)).collect(),
                shape,
                &device,
            )?)
        };
        let components = up(&comp, &[k, d])?;
        let components_t = components.t().copy()?;
        self.fitted = Some(PcaFit {
            components,
            components_t,
            mean,
            explained_variance: up(&var, &[k])?,
            explained_variance_ratio: up(&ratio, &[k])?,
            singular_values: up(&sv, &[k])?,
            scale: up(&scale, &[k])?,
        });
        Ok(self)
    }

    /// Fits on `x`, then returns its projection ([`PCA::transform`]).
    pub fn fit_transform(&mut self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        self.fit(x)?;
        self.transform(x)
    }

    fn fitted(&self) -> Result<&PcaFit<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// `(x - mean) · componentsᵀ` (divided by `sqrt(explained_variance)` when whitening):
    /// `(n_samples, n_components)` on `x`'s device.
    pub fn transform(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let fit = self.fitted()?;
        let x = prediction_features("PCA::transform", x, fit.mean.len())?;
        let device = x.device();
        let mean = on_device(&fit.mean, &device)?;
        let ct = on_device(&fit.components_t, &device)?;
        let z = (&*x - &*mean)?.matmul(&ct)?;
        if self.whiten {
            let scale = on_device(&fit.scale, &device)?;
            return Ok((&z / &*scale)?);
        }
        Ok(z)
    }

    /// Back from components to features: `z · components + mean` (`z` multiplied by
    /// `sqrt(explained_variance)` first when whitening); exact for the data's projection when
    /// all components are kept.
    pub fn inverse_transform(&self, z: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let fit = self.fitted()?;
        let z = prediction_features("PCA::inverse_transform", z, fit.components.shape()[0])?;
        let device = z.device();
        let c = on_device(&fit.components, &device)?;
        let mean = on_device(&fit.mean, &device)?;
        let z = if self.whiten {
            let scale = on_device(&fit.scale, &device)?;
            std::borrow::Cow::Owned((&*z * &*scale)?)
        } else {
            z
        };
        Ok(gpukit::linalg::matmul_add(
            &z,
            &c,
            &mean,
            <T as Element>::one(),
            <T as Element>::one(),
        )?)
    }

    /// The principal axes, `(n_components, n_features)`, one unit vector per row, by
    /// decreasing variance.
    pub fn components(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.components)
    }

    /// The variance along each component (`ddof = 1`), `(n_components,)`.
    pub fn explained_variance(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.explained_variance)
    }

    /// Each component's share of the data's total variance, `(n_components,)`.
    pub fn explained_variance_ratio(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.explained_variance_ratio)
    }

    /// The singular values of the centered data for the kept components, `(n_components,)`.
    pub fn singular_values(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.singular_values)
    }

    /// The per-feature mean of the training data, `(n_features,)`.
    pub fn mean(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.mean)
    }
}
