//! Feature scaling (scikit-learn's `StandardScaler`): each column shifted by its mean and
//! divided by its standard deviation, learned by `fit` and applied on the device.
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit_ml::preprocessing::StandardScaler;
//!
//! # fn main() -> gpukit_ml::Result<()> {
//! let x = Array::from_vec(vec![1.0f64, 10.0, 3.0, 10.0], [2, 2])?;
//! let mut sc = StandardScaler::new();
//! let z = sc.fit_transform(&x)?;
//! assert_eq!(z.to_vec()?, vec![-1.0, 0.0, 1.0, 0.0]); // column 2 is constant: scale 1
//! assert_eq!(sc.scale()?.to_vec()?, vec![1.0, 1.0]);
//! assert_eq!(sc.inverse_transform(&z)?.to_vec()?, x.to_vec()?);
//! # Ok(())
//! # }
//! ```

use gpukit::prelude::*;

use crate::check::{fit_features, query_features};
use crate::error::{MlError, Result};
use crate::float::MlFloat;
use crate::input::Features;

/// Standardises columns: `(x − mean) / scale`, with `mean` and `scale` (the population
/// standard deviation, `ddof = 0`) of the training columns. A column of zero variance gets
/// scale 1, as in scikit-learn, so it maps to 0 rather than NaN.
pub struct StandardScaler<T: MlFloat = f64> {
    with_mean: bool,
    with_std: bool,
    fitted: Option<(Array<T>, Array<T>)>,
}

impl<T: MlFloat> Default for StandardScaler<T> {
    fn default() -> Self {
        StandardScaler::new()
    }
}

impl<T: MlFloat> std::fmt::Debug for StandardScaler<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandardScaler")
            .field("with_mean", &self.with_mean)
            .field("with_std", &self.with_std)
            .field("fitted", &self.fitted.is_some())
            .finish()
    }
}

impl<T: MlFloat> StandardScaler<T> {
    const NAME: &'static str = "StandardScaler";

    /// A scaler that centres and scales.
    pub fn new() -> StandardScaler<T> {
        StandardScaler {
            with_mean: true,
            with_std: true,
            fitted: None,
        }
    }

    /// Whether to centre (default true); without, the mean is taken as 0.
    pub fn with_mean(mut self, on: bool) -> Self {
        self.with_mean = on;
        self
    }

    /// Whether to scale (default true); without, the scale is taken as 1.
    pub fn with_std(mut self, on: bool) -> Self {
        self.with_std = on;
        self
    }

    /// Learns each column's mean and standard deviation from `x` (`(n, d)`, finite).
    pub fn fit(&mut self, x: &(impl Features<T> + ?Sized)) -> Result<&mut Self> {
        let x = fit_features("StandardScaler::fit", x)?;
        let d = x.shape()[1];
        let dev = x.device();
        let mean = if self.with_mean {
            x.mean_axis(0)?
        } else {
            Array::zeros_on(d, &dev)?
        };
        let scale = if self.with_std {
            let std = x.var_axis(0, 0)?.sqrt()?;
            let zero = std.eq(<T as Element>::zero())?.astype::<T>()?;
            (&std + &zero)?
        } else {
            Array::ones_on(d, &dev)?
        };
        self.fitted = Some((mean, scale));
        Ok(self)
    }

    fn params(&self) -> Result<&(Array<T>, Array<T>)> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The column means learned by `fit` (zeros with `with_mean(false)`).
    pub fn mean(&self) -> Result<&Array<T>> {
        Ok(&self.params()?.0)
    }

    /// The column scales learned by `fit` (standard deviations, 1 for constant columns).
    pub fn scale(&self) -> Result<&Array<T>> {
        Ok(&self.params()?.1)
    }

    /// `(x − mean) / scale` for `x` with the training's number of columns.
    pub fn transform(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let (mean, scale) = self.params()?;
        let x = query_features("StandardScaler::transform", x, mean.size(), &mean.device())?;
        Ok(((&*x - mean)? / scale)?)
    }

    /// `fit(x)` then `transform(x)`.
    pub fn fit_transform(&mut self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        self.fit(x)?;
        self.transform(x)
    }

    /// `x · scale + mean`: back to the original units.
    pub fn inverse_transform(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let (mean, scale) = self.params()?;
        let x = query_features(
            "StandardScaler::inverse_transform",
            x,
            mean.size(),
            &mean.device(),
        )?;
        Ok(((&*x * scale)? + mean)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn scaling_matches_host_statistics() {
        let cpu = Device::Cpu;
        let mut r = StdRng::seed_from_u64(2);
        let (n, d) = (300, 5);
        let v: Vec<f64> = (0..n * d)
            .map(|i| {
                if i % d == 3 {
                    7.0
                } else {
                    r.random_range(-5.0..20.0) * (1 + i % d) as f64
                }
            })
            .collect();
        let x = Array::from_vec_on(v.clone(), [n, d], &cpu).unwrap();
        let mut sc = StandardScaler::new();
        let z = sc.fit_transform(&x).unwrap().to_vec().unwrap();
        for j in 0..d {
            let col: Vec<f64> = (0..n).map(|i| v[i * d + j]).collect();
            let m = col.iter().sum::<f64>() / n as f64;
            let s = (col.iter().map(|c| (c - m) * (c - m)).sum::<f64>() / n as f64).sqrt();
            let s = if s == 0.0 { 1.0 } else { s };
            for i in 0..n {
                assert!((z[i * d + j] - (v[i * d + j] - m) / s).abs() < 1e-9);
            }
        }
        let back = sc
            .inverse_transform(&Array::from_vec_on(z, [n, d], &cpu).unwrap())
            .unwrap();
        for (a, b) in back.to_vec().unwrap().iter().zip(&v) {
            assert!((a - b).abs() < 1e-9);
        }
        let f32x = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], &cpu).unwrap();
        let mut s32 = StandardScaler::<f32>::new().with_std(false);
        assert_eq!(
            s32.fit_transform(&f32x).unwrap().to_vec().unwrap(),
            vec![-1.0, -1.0, 1.0, 1.0]
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let cpu = Device::Cpu;
        let sc = StandardScaler::<f64>::new();
        let x = Array::from_vec_on(vec![1.0f64, 2.0], [1, 2], &cpu).unwrap();
        assert!(matches!(sc.transform(&x), Err(MlError::NotFitted { .. })));
        let mut sc = StandardScaler::<f64>::new();
        sc.fit(&x).unwrap();
        let wrong = Array::from_vec_on(vec![1.0f64, 2.0, 3.0], [1, 3], &cpu).unwrap();
        assert!(sc
            .transform(&wrong)
            .unwrap_err()
            .to_string()
            .contains("fitted on 2 features"));
        let nan = Array::from_vec_on(vec![1.0f64, f64::NAN], [1, 2], &cpu).unwrap();
        assert!(matches!(sc.fit(&nan), Err(MlError::NonFinite { .. })));
    }
}
