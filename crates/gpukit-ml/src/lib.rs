//! GPU machine learning for Rust notebooks, in the spirit of cuML (and scikit-learn, whose
//! names cuML keeps): models whose work runs on a gpukit device — a CUDA GPU, or the CPU
//! backend, which gives the same results — with `fit`, `predict` and readable parameters.
//!
//! The crate is separate from gpukit so that a notebook that does not train models does not
//! pay for it (`%crate gpukit-ml` in a notebook).
//!
//! Layers, bottom up (each module uses only those above it in this list):
//! - [`error`]: [`MlError`] and [`Result`].
//! - [`input`]: [`Features`] and [`Targets`], what every model takes (gpukit arrays, ndarray,
//!   and with feature `frame` gpukit-frame columns), checked for shape and finite values.

pub mod error;
pub mod input;

pub use error::{MlError, Result};
pub use input::{Features, Targets};
