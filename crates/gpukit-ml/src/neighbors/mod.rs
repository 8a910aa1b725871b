//! k-nearest neighbours, brute force on the device (cuML's and scikit-learn's
//! `KNeighborsClassifier` / `KNeighborsRegressor`).
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit_ml::neighbors::KNeighborsClassifier;
//!
//! # fn main() -> gpukit_ml::Result<()> {
//! let x = Array::from_vec(vec![0.0f64, 0.0, 0.1, 0.0, 5.0, 5.0, 5.1, 5.0], [4, 2])?;
//! let y = Array::from_vec(vec![0i64, 0, 1, 1], 4)?;
//! let mut knn = KNeighborsClassifier::new(1);
//! knn.fit(&x, &y)?;
//! let q = Array::from_vec(vec![0.2f64, 0.1, 4.9, 5.2], [2, 2])?;
//! assert_eq!(knn.predict(&q)?.to_vec()?, vec![0, 1]);
//! # Ok(())
//! # }
//! ```
//!
//! # How it works
//!
//! `fit` keeps the training rows transposed on their device (and their squared norms, or for
//! cosine the unit rows). A query batch then costs one GEMM, `‖q‖² + ‖r‖² − 2·q·r` clamped at
//! 0 (the squared Euclidean distance to every training row), and a top-k selection kernel that
//! reads that block once (per-thread sorted lists over interleaved strands of the row, then
//! merge passes; see `kernels/topk.rs`), then a vote (or a mean) kernel.
//!
//! - **Ties**: neighbours at equal distance are ordered by training row index, the smaller
//!   first; a vote tie goes to the smallest class label. The GEMM form rounds differently from
//!   a direct `Σ (q − r)²`, so two training rows at distances equal to within rounding may
//!   swap places between backends or against such a reference.
//! - **Memory**: queries run in batches whose distance block (`rows × n_train` values) fits
//!   [`block_cap`]: 1 GiB or a quarter of the free device memory on a GPU, 256 MiB on
//!   the CPU backend; [`KNeighborsClassifier::batch_bytes`] changes it.
//! - **Limits**: `n_neighbors` ≤ [`MAX_K`] (128) and ≤ the number of training rows.

mod search;
#[cfg(test)]
mod tests;

pub use crate::kernels::topk::MAX_K;
pub use crate::memory::{block_cap, CPU_BLOCK_BYTES, GPU_BLOCK_BYTES};

use gpukit::prelude::*;

use crate::check::{fit_features, query_features};
use crate::error::{MlError, Result};
use crate::float::{Gather, MlFloat};
use crate::input::{check_rows, Features, Targets};
use crate::labels;
use search::Index;

/// The distance between rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    /// `‖a − b‖` (the default).
    #[default]
    Euclidean,
    /// `1 − a·b / (‖a‖ ‖b‖)`; a zero row is at distance 1 from everything.
    Cosine,
}

/// How neighbours weigh in a vote or a mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weights {
    /// Every neighbour counts 1 (the default).
    #[default]
    Uniform,
    /// A neighbour counts `1 / distance`; neighbours at distance 0, where a query has any,
    /// count 1 and the others 0.
    Distance,
}

/// The settings shared by both estimators.
#[derive(Debug, Clone, Copy)]
struct Settings {
    n_neighbors: usize,
    metric: Metric,
    weights: Weights,
    batch_bytes: Option<usize>,
}

impl Settings {
    fn new(n_neighbors: usize) -> Settings {
        Settings {
            n_neighbors,
            metric: Metric::Euclidean,
            weights: Weights::Uniform,
            batch_bytes: None,
        }
    }

    /// The training rows as a search index, after the checks of a `fit`.
    fn index<T: MlFloat>(
        &self,
        what: &'static str,
        x: &Array<T>,
        n_targets: usize,
    ) -> Result<Index<T>> {
        check_rows(what, x.shape()[0], n_targets, "the targets")?;
        let n = x.shape()[0];
        if self.n_neighbors == 0 || self.n_neighbors > n || self.n_neighbors > MAX_K {
            return Err(MlError::Parameter {
                what,
                name: "n_neighbors",
                detail: format!(
                    "{} neighbours asked, but it must be at least 1, at most the {n} training \
                     rows and at most {MAX_K}",
                    self.n_neighbors
                ),
            });
        }
        Index::build(x, self.metric)
    }

    /// `kneighbors` on a fitted index.
    fn search<T: MlFloat>(
        &self,
        what: &'static str,
        index: &Index<T>,
        x: &(impl Features<T> + ?Sized),
        k: usize,
    ) -> Result<(Array<T>, Array<i64>)> {
        let dev = index.device();
        let q = query_features(what, x, index.dim(), &dev)?;
        let cap = block_cap(&dev, self.batch_bytes);
        index.search(what, &q, k, cap)
    }
}

/// What a fitted classifier keeps.
struct ClassifierFit<T: MlFloat> {
    index: Index<T>,
    /// Class code (`0..n_classes`) of every training row.
    codes: Array<i64>,
    /// The distinct training labels, sorted, on the device.
    classes: Array<i64>,
}

/// k-nearest-neighbours classification: the majority label among the `n_neighbors` closest
/// training rows (see the [module documentation](self) for the algorithm and tie rules).
pub struct KNeighborsClassifier<T: MlFloat = f64> {
    settings: Settings,
    fitted: Option<ClassifierFit<T>>,
}

impl<T: MlFloat> std::fmt::Debug for KNeighborsClassifier<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KNeighborsClassifier")
            .field("n_neighbors", &self.settings.n_neighbors)
            .field("metric", &self.settings.metric)
            .field("weights", &self.settings.weights)
            .field("fitted", &self.fitted.is_some())
            .finish()
    }
}

impl<T: MlFloat> KNeighborsClassifier<T> {
    const NAME: &'static str = "KNeighborsClassifier";

    /// A classifier voting among `n_neighbors` neighbours (Euclidean, uniform weights).
    pub fn new(n_neighbors: usize) -> KNeighborsClassifier<T> {
        KNeighborsClassifier {
            settings: Settings::new(n_neighbors),
            fitted: None,
        }
    }

    /// The distance (Euclidean by default). Takes effect at the next `fit`.
    pub fn metric(mut self, metric: Metric) -> Self {
        self.settings.metric = metric;
        self
    }

    /// How neighbours weigh (uniform by default).
    pub fn weights(mut self, weights: Weights) -> Self {
        self.settings.weights = weights;
        self
    }

    /// The cap in bytes on one batch's distance block (default: [`block_cap`]).
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.settings.batch_bytes = Some(bytes);
        self
    }

    /// The number of neighbours.
    pub fn n_neighbors(&self) -> usize {
        self.settings.n_neighbors
    }

    /// Remembers the training rows `x` (`(n, d)`) and their labels `y` (`(n,)`), on `x`'s
    /// device. Errors for empty or non-finite `x`, a row-count mismatch, or `n_neighbors`
    /// outside `1..=min(n, 128)`.
    pub fn fit(
        &mut self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<i64> + ?Sized),
    ) -> Result<&mut Self> {
        const WHAT: &str = "KNeighborsClassifier::fit";
        let x = fit_features(WHAT, x)?;
        let y = y.targets(WHAT)?;
        let index = self.settings.index(WHAT, &x, y.size())?;
        let y = if y.device() != x.device() {
            std::borrow::Cow::Owned(y.to_device(&x.device())?)
        } else {
            y
        };
        let classes = labels::distinct(&y)?;
        let codes = labels::codes(&y, &classes)?;
        self.fitted = Some(ClassifierFit {
            index,
            codes,
            classes,
        });
        Ok(self)
    }

    fn fit_ref(&self) -> Result<&ClassifierFit<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The distinct training labels, sorted (the columns of [`predict_proba`](Self::predict_proba)).
    pub fn classes(&self) -> Result<Vec<i64>> {
        Ok(self.fit_ref()?.classes.to_vec()?)
    }

    /// The `k` nearest training rows of every row of `x`: `(distances, indices)`, both
    /// `(n_queries, k)`, each row by increasing distance (ties: smaller index first).
    pub fn kneighbors(
        &self,
        x: &(impl Features<T> + ?Sized),
        k: usize,
    ) -> Result<(Array<T>, Array<i64>)> {
        let f = self.fit_ref()?;
        self.settings
            .search("KNeighborsClassifier::kneighbors", &f.index, x, k)
    }

    /// Class probabilities `(n_queries, n_classes)` and predicted codes.
    fn vote(
        &self,
        what: &'static str,
        x: &(impl Features<T> + ?Sized),
    ) -> Result<(Array<T>, Array<i64>)> {
        let f = self.fit_ref()?;
        let k = self.settings.n_neighbors;
        let (dist, idx) = self.settings.search(what, &f.index, x, k)?;
        let m = idx.shape()[0];
        let dev = f.index.device();
        let n_classes = f.classes.size();
        let mut proba = Array::<T>::zeros_on([m, n_classes], &dev)?;
        let mut pred = Array::<i64>::empty_on(m, &dev)?;
        let weighted = self.settings.weights == Weights::Distance;
        T::vote(
            &idx, &dist, &f.codes, k, n_classes, weighted, &mut proba, &mut pred,
        )?;
        Ok((proba, pred))
    }

    /// The predicted label of every row of `x` (`(n_queries,)`, on the model's device).
    pub fn predict(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<i64>> {
        let (_, codes) = self.vote("KNeighborsClassifier::predict", x)?;
        Ok(i64::take_rows(&self.fit_ref()?.classes, &codes)?)
    }

    /// The weight share of every class among each row's neighbours, `(n_queries,
    /// n_classes)`, columns in [`classes`](Self::classes) order.
    pub fn predict_proba(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        Ok(self.vote("KNeighborsClassifier::predict_proba", x)?.0)
    }

    /// The accuracy of `predict(x)` against `y`.
    pub fn score(
        &self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<i64> + ?Sized),
    ) -> Result<f64> {
        let pred = self.predict(x)?;
        crate::metrics::accuracy_score(&*y.targets("KNeighborsClassifier::score")?, &pred)
    }
}

/// What a fitted regressor keeps.
struct RegressorFit<T: MlFloat> {
    index: Index<T>,
    targets: Array<T>,
}

/// k-nearest-neighbours regression: the mean target of the `n_neighbors` closest training rows
/// (see the [module documentation](self) for the algorithm and tie rules).
pub struct KNeighborsRegressor<T: MlFloat = f64> {
    settings: Settings,
    fitted: Option<RegressorFit<T>>,
}

impl<T: MlFloat> std::fmt::Debug for KNeighborsRegressor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KNeighborsRegressor")
            .field("n_neighbors", &self.settings.n_neighbors)
            .field("metric", &self.settings.metric)
            .field("weights", &self.settings.weights)
            .field("fitted", &self.fitted.is_some())
            .finish()
    }
}

impl<T: MlFloat> KNeighborsRegressor<T> {
    const NAME: &'static str = "KNeighborsRegressor";

    /// A regressor averaging over `n_neighbors` neighbours (Euclidean, uniform weights).
    pub fn new(n_neighbors: usize) -> KNeighborsRegressor<T> {
        KNeighborsRegressor {
            settings: Settings::new(n_neighbors),
            fitted: None,
        }
    }

    /// The distance (Euclidean by default). Takes effect at the next `fit`.
    pub fn metric(mut self, metric: Metric) -> Self {
        self.settings.metric = metric;
        self
    }

    /// How neighbours weigh (uniform by default).
    pub fn weights(mut self, weights: Weights) -> Self {
        self.settings.weights = weights;
        self
    }

    /// The cap in bytes on one batch's distance block (default: [`block_cap`]).
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.settings.batch_bytes = Some(bytes);
        self
    }

    /// The number of neighbours.
    pub fn n_neighbors(&self) -> usize {
        self.settings.n_neighbors
    }

    /// Remembers the training rows `x` (`(n, d)`) and their targets `y` (`(n,)`), on `x`'s
    /// device. Errors as [`KNeighborsClassifier::fit`], and for non-finite targets.
    pub fn fit(
        &mut self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<&mut Self> {
        const WHAT: &str = "KNeighborsRegressor::fit";
        let x = fit_features(WHAT, x)?;
        let y = y.targets(WHAT)?;
        let index = self.settings.index(WHAT, &x, y.size())?;
        let targets = y.to_device(&x.device())?;
        crate::input::check_finite(WHAT, &targets.reshape([targets.size(), 1])?)?;
        self.fitted = Some(RegressorFit { index, targets });
        Ok(self)
    }

    fn fit_ref(&self) -> Result<&RegressorFit<T>> {
        self.fitted
            .as_ref()
            .ok_or(MlError::NotFitted { model: Self::NAME })
    }

    /// The `k` nearest training rows of every row of `x` (as
    /// [`KNeighborsClassifier::kneighbors`]).
    pub fn kneighbors(
        &self,
        x: &(impl Features<T> + ?Sized),
        k: usize,
    ) -> Result<(Array<T>, Array<i64>)> {
        let f = self.fit_ref()?;
        self.settings
            .search("KNeighborsRegressor::kneighbors", &f.index, x, k)
    }

    /// The predicted value of every row of `x` (`(n_queries,)`, on the model's device).
    pub fn predict(&self, x: &(impl Features<T> + ?Sized)) -> Result<Array<T>> {
        let f = self.fit_ref()?;
        let k = self.settings.n_neighbors;
        let (dist, idx) = self
            .settings
            .search("KNeighborsRegressor::predict", &f.index, x, k)?;
        let mut out = Array::<T>::empty_on(idx.shape()[0], &f.index.device())?;
        let weighted = self.settings.weights == Weights::Distance;
        T::neighbor_mean(&idx, &dist, &f.targets, k, weighted, &mut out)?;
        Ok(out)
    }

    /// The coefficient of determination R² of `predict(x)` against `y`.
    pub fn score(
        &self,
        x: &(impl Features<T> + ?Sized),
        y: &(impl Targets<T> + ?Sized),
    ) -> Result<f64> {
        let pred = self.predict(x)?;
        crate::metrics::r2_score(&*y.targets("KNeighborsRegressor::score")?, &pred)
    }
}
