//! k-means clustering on the device (cuML's and scikit-learn's `KMeans`).
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit_ml::cluster::KMeans;
//!
//! # fn main() -> gpukit_ml::Result<()> {
//! let x = Array::from_vec(vec![0.0f64, 0.0, 0.2, 0.1, 9.0, 9.0, 9.1, 8.8], [4, 2])?;
//! let mut km = KMeans::new(2).random_state(0);
//! km.fit(&x)?;
//! let labels = km.labels()?.to_vec()?;
//! assert_eq!(labels[0], labels[1]);
//! assert_ne!(labels[0], labels[2]);
//! assert!(km.inertia()? < 0.1);
//! # Ok(())
//! # }
//! ```
//!
//! # How it works
//!
//! - **Init**: k-means++ (Arthur and Vassilvitskii, 2007; one candidate per step, not
//!   scikit-learn's greedy variant): the first centre is a uniformly random row, each next one a
//!   row drawn with probability proportional to its squared distance to the nearest centre so
//!   far. The distances stay on the device and are updated by a kernel per new centre; the draw
//!   is a cumulative sum on the device and a count of the sums below a host-drawn threshold.
//!   `Random` takes `n_clusters` distinct random rows. Host draws come from a seeded generator
//!   (`random_state`).
//! - **Lloyd iterations**: distances `‖c‖² − 2·x·c` for all points and centres by one GEMM per
//!   chunk of rows, the nearest centre per point by a kernel (ties: the lower centre index),
//!   per-cluster sums as the product of a one-hot membership matrix with the points (a GEMM
//!   again) and cluster sizes by integer atomics. No float atomics: a run gives the same result
//!   every time on one device; the CPU backend and a GPU agree to within the GEMMs' rounding.
//! - **Empty clusters** get the point farthest from its centre (the next farthest for a second
//!   empty cluster, ...), moved out of its old cluster, as scikit-learn does.
//! - **Stopping**: after `max_iter` iterations, or when the squared centre shift summed over
//!   all centres is at most `tol × mean(column variances of x)` (scikit-learn's relative
//!   tolerance). The labels and inertia reported belong to the final centres.
//! - **Memory**: rows are processed in chunks whose `n_clusters × rows` blocks fit
//!   [`crate::memory::block_cap`].

mod lloyd;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use gpukit::prelude::*;

use crate::check::{fit_features, query_features};
use crate::error::{MlError, Result};
use crate::float::MlFloat;
use crate::input::Features;
use crate::memory::block_cap;
use lloyd::Chunks;

/// How [`KMeans`] picks its initial centres.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KMeansInit {
    /// k-means++ (the default): spread-out centres, drawn by distance.
    #[default]
    KMeansPlusPlus,
    /// `n_clusters` distinct rows chosen uniformly at random.
    Random,
}

/// What a fitted model keeps.
struct Fitted<T: MlFloat> {
    centers: Array<T>,
    labels: Array<i64>,
    inertia: f64,
    n_iter: usize,
}

/// k-means clustering: `n_clusters` centres that minimise the summed squared distance of every
/// row to its nearest centre (see the [module documentation](self)).
pub struct KMeans<T: MlFloat = f64> {
    n_clusters: usize,
    max_iter: usize,
    tol: f64,
    random_state: u64,
    init: KMeansInit,
    initial: Option<Array<T>>,
    block_bytes: Option<usize>,
    fitted: Option<Fitted<T>>,
}

impl<T: MlFloat> std::fmt::Debug for KMeans<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KMeans")
            .field("n_clusters", &self.n_clusters)
            .field("max_iter", &self.max_iter)
            .field("tol", &self.tol)
            .field("random_state", &self.random_state)
            .field("init", &self.init)
            .field("fitted", &self.fitted.is_some())
            .finish()
    }
}

impl<T: MlFloat> KMeans<T> {
    const NAME: &'static str = "KMeans";

    /// A model of `n_clusters` clusters: k-means++ init, at most 300 iterations, `tol` 1e-4,
    /// seed 0.
    pub fn new(n_clusters: usize) -> KMeans<T> {
        KMeans {
            n_clusters,
            max_iter: 300,
            tol: 1e-4,
            random_state: 0,
            init: KMeansInit::KMeansPlusPlus,
            initial: None,
            block_bytes: None,
            fitted: None,
        }
    }

    /// The most Lloyd iterations (default 300).
    pub fn max_iter(mut self, n: usize) -> Self {
        self.max_iter = n;
        self
    }

    /// The relative tolerance on the centre shift (default 1e-4; 0 stops only when the centres
    /// no longer move).
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// The seed of the initial centres (default 0).
    pub fn random_state(mut self, seed: u64) -> Self {
        self.random_state = seed;
        self
    }

    /// How to pick the initial centres (default k-means++).
    pub fn init(mut self, init: KMeansInit) -> Self {
        self.init = init;
        self
    }

    /// Start from these centres (`(n_clusters, n_features)`) instead of drawing them (as
    /// scikit-learn's `init=array`); they move to the data's device at `fit`.
    pub fn initial_centers(mut self, centers: Array<T>) -> Self {
        self.initial = Some(centers);
        self
    }

    /// The cap in bytes on one chunk's `n_clusters × rows` blocks (default:
    /// [`crate::memory::block_cap`]).
    pub fn block_bytes(mut self, bytes: usize) -> Self {
        self.block_bytes = Some(bytes);
        self
    }

    fn parameter(name: &'static str, detail: String) -> MlError {
        MlError::Parameter {
            what: "KMeans::fit",
            name,
            detail,
        }
    }

    /// Clusters the rows of `x` (`(n, d)`, finite, `n ≥ n_clusters`) on `x`'s device.
    pub fn fit(&mut self, x: &(impl Features<T> + ?Sized)) -> Result<&mut Self> {
        const WHAT: &str = "KMeans::fit";
        let x = fit_features(WHAT, x)?;
        let (n, d) = (x.shape()[0], x.shape()[1]);
        let k = self.n_clusters;
        if k == 0 || k > n {
            return Err(Self::parameter(
                "n_clusters",
                format!("{k} clusters asked of {n} rows; need 1 ≤ n_clusters ≤ n_samples"),
            ));
        }
        if self.max_iter == 0 {
            return Err(Self::parameter("max_iter", "must be at least 1".into()));
        }
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            return Err(Self::parameter(
                "tol",
                format!("must be finite and at least 0, got {}", self.tol),
            ));
        }
        let dev = x.device();
        let centers = match &self.initial {
            Some(c) => {
                if c.shape() != [k, d] {
                    return Err(MlError::Shape {
                        what: WHAT,
                        detail: format!(
                            "initial centres of shape {:?}, but {k} clusters of {d} features \
                             need ({k}, {d})",
                            c.shape()
                        ),
                    });
                }
                crate::input::check_finite(WHAT, c)?;
                c.to_device(&dev)?
            }
            None => match self.init {
                KMeansInit::KMeansPlusPlus => lloyd::kmeans_plus_plus(&x, k, self.random_state)?,
                KMeansInit::Random => lloyd::random_rows(&x, k, self.random_state)?,
            },
        };
        let cap = block_cap(&dev, self.block_bytes);
        let chunks = Chunks::new(Cow::Borrowed(&*x), k, cap)?;
        let tol_abs = self.tol * x.var_axis(0, 0)?.mean()?.to_f64();
        let (centers, n_iter) = chunks.lloyd(centers, self.max_iter, tol_abs)?;
        let (labels, dmin) = chunks.assign_all(&centers)?;
        let inertia = dmin.astype::<f64>()?.sum()?;
        self.fitted = Some(Fitted {
            centers,
            labels,
            inertia,
            n_iter,
        });
        Ok(self)
    }

    /// `fit(x)`, then the labels of its rows.
    pub fn fit_predict(&mut self, x: &(impl Features<T> + ?Sized)) -> Result<Array<i64>> {
        self.fit(x)?;
        Ok(self.labels()?.try_clone()?)
    }

    fn fitted(&self) -> Result<&Fitted<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The centres, `(n_clusters, n_features)`.
    pub fn cluster_centers(&self) -> Result<&Array<T>> {
        Ok(&self.fitted()?.centers)
    }

    /// The cluster of every training row, `(n_samples,)`.
    pub fn labels(&self) -> Result<&Array<i64>> {
        Ok(&self.fitted()?.labels)
    }

    /// The summed squared distance of the training rows to their centres.
    pub fn inertia(&self) -> Result<f64> {
        Ok(self.fitted()?.inertia)
    }

    /// The Lloyd iterations run.
    pub fn n_iter(&self) -> Result<usize> {
        Ok(self.fitted()?.n_iter)
    }

    /// The nearest centre of every row of `x` (ties: the lower centre index).
    pub fn predict(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<i64>> {
        let f = self.fitted()?;
        let dev = f.centers.device();
        let x = query_features("KMeans::predict", x, f.centers.shape()[1], &dev)?;
        let cap = block_cap(&dev, self.block_bytes);
        let chunks = Chunks::new(x, f.centers.shape()[0], cap)?;
        Ok(chunks.assign_all(&f.centers)?.0)
    }
}
