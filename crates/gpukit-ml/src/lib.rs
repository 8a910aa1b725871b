//! GPU machine learning for Rust notebooks, in the spirit of cuML (and scikit-learn, whose
//! names cuML keeps): models whose work runs on a gpukit device — a CUDA GPU, or the CPU
//! backend, which gives the same results — with `fit`, `predict` and readable parameters.
//!
//! The crate is separate from gpukit so that a notebook that does not train models does not
//! pay for it (`%crate gpukit-ml` in a notebook).
//!
//! The course's chapter 7 pipeline (cuML's `train_test_split`, `StandardScaler`,
//! `KNeighborsClassifier`, `accuracy_score`):
//!
//! ```
//! use gpukit_ml::datasets::diabetes;
//! use gpukit_ml::metrics::{accuracy_score, confusion_matrix};
//! use gpukit_ml::model_selection::{train_test_split, SplitOptions, TestSize};
//! use gpukit_ml::neighbors::KNeighborsClassifier;
//! use gpukit_ml::preprocessing::StandardScaler;
//!
//! # fn main() -> gpukit_ml::Result<()> {
//! let (x, y) = diabetes(0)?; // 768 × 8 features, outcome 0/1, on the default device
//! let opts = SplitOptions { test_size: TestSize::Fraction(0.2), random_state: 1, stratify: true, shuffle: true };
//! let (x_train, x_test, y_train, y_test) = train_test_split(&x, &y, opts)?;
//! let mut scaler = StandardScaler::new();
//! let x_train = scaler.fit_transform(&x_train)?;
//! let x_test = scaler.transform(&x_test)?;
//! let mut knn = KNeighborsClassifier::new(3);
//! knn.fit(&x_train, &y_train)?;
//! let pred = knn.predict(&x_test)?;
//! let accuracy = accuracy_score(&y_test, &pred)?;
//! let (cm, labels) = confusion_matrix(&y_test, &pred)?;
//! assert_eq!((labels, cm.sum()?), (vec![0, 1], 154));
//! assert!(accuracy > 0.6, "{accuracy}");
//! # Ok(())
//! # }
//! ```
//!
//! Layers, bottom up (each module uses only those above it in this list):
//! - [`error`][]: [`MlError`] and [`Result`].
//! - [`input`][]: [`Features`] and [`Targets`], what every model takes (gpukit arrays, ndarray,
//!   and with feature `frame` gpukit-frame columns), checked for shape and finite values.
//! - `check`: the input checks models share (non-empty, finite, feature count, device).
//! - `kernels/`: the device kernels (`#[kernel]`, one per element type): row gathers, top-k
//!   selection, neighbour votes, k-means steps, label codes and confusion counts.
//! - [`float`][]: [`MlFloat`] (`f32`, `f64`) and [`Gather`], the element types and the per-type
//!   kernel dispatch.
//! - `rng`: the host's seeded generator (splits, k-means initial draws, the diabetes table).
//! - [`memory`][]: how large a temporary block may be ([`memory::block_cap`]).
//! - [`labels`][]: distinct labels and label codes on the device.
//! - [`datasets`][]: the diabetes-like table, `make_classification`, `make_blobs`.
//! - [`model_selection`][]: `train_test_split`.
//! - [`preprocessing`][]: `StandardScaler`.
//! - [`metrics`][]: `accuracy_score`, `confusion_matrix`, `r2_score`.
//! - [`neighbors`][]: `KNeighborsClassifier`, `KNeighborsRegressor` (brute force: GEMM + top-k).
//! - [`cluster`][]: `KMeans` (k-means++ and Lloyd).
//! - `prepare` (private): inputs checked for fitting and prediction, on one device.
//! - [`gram`]: `aᵀ·b` of tall matrices as one GEMM without a transpose; [`LinalgFloat`].
//!
//! Models (each uses the modules above, none another model):
//! - [`linear_model`]: [`LinearRegression`], [`Ridge`] (normal equations),
//!   [`LogisticRegression`] (Newton's method).
//! - [`decomposition`]: principal component analysis, [`PCA`].
//!
//! Interop: `linfa` (feature `linfa`): linfa `Dataset`s in and out; with feature `linfa-tests`
//! the tests also compare the models with linfa's (`tests_linfa`).
//!
//! Decompositions (`gpukit::linalg`) run on a CUDA device through cuSOLVER; on the CPU backend
//! they need gpukit's faer, through this crate's feature `linalg`.

pub mod decomposition;
pub mod error;
pub mod gram;
pub mod input;
pub mod linear_model;
#[cfg(feature = "linfa")]
pub mod linfa;
mod prepare;
#[cfg(test)]
mod test_support;
#[cfg(all(test, feature = "linfa-tests"))]
mod tests_linfa;

mod check;
pub(crate) mod kernels;

pub mod float;
mod rng;

pub mod labels;
pub mod memory;

pub mod datasets;
pub mod metrics;
pub mod model_selection;
pub mod preprocessing;

pub mod cluster;
pub mod neighbors;

pub use decomposition::PCA;
pub use error::{MlError, Result};
pub use float::{Gather, MlFloat};
pub use gram::LinalgFloat;
pub use input::{Features, Targets};
pub use linear_model::{LinearRegression, LogisticRegression, Ridge};
