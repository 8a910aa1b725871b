//! Linear models (scikit-learn's and cuML's `linear_model`): [`LinearRegression`], [`Ridge`]
//! and [`LogisticRegression`], fitted and applied on the device where the features lie.
//!
//! Files: `least_squares` (ordinary least squares
//! and ridge by the normal equations), `labels` (classes, one-hot rows, the label gather
//! kernel), `newton` (the penalised logistic objective and Newton's method), `logistic` (the
//! classifier), `tests` (CPU results against references written in the tests).

mod labels;
mod least_squares;
mod logistic;
mod newton;
#[cfg(test)]
mod tests;

pub use least_squares::{LinearRegression, Ridge};
pub use logistic::LogisticRegression;
