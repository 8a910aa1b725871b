//! Matrix decompositions of data (scikit-learn's and cuML's `decomposition`): [`PCA`].
//!
//! Files: `pca` (the model), `tests` (CPU results against a reference written in the tests).

mod pca;
#[cfg(test)]
mod tests;

pub use pca::PCA;
