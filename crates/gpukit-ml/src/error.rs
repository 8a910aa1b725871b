//! Errors of model fitting and prediction: each names the model, the parameter or the shapes
//! involved.

/// The result of a machine-learning call.
pub type Result<T, E = MlError> = std::result::Result<T, E>;

/// What went wrong in a machine-learning call. A model that returns one keeps the state it had
/// before the call (a failed `fit` leaves a fitted model fitted to its old data).
#[derive(Debug, thiserror::Error)]
pub enum MlError {
    /// `predict`, `transform` or a learned parameter asked of a model that was never fitted.
    #[error("{model} is not fitted yet: call `fit` first")]
    NotFitted {
        /// The model, e.g. `KNeighborsClassifier`.
        model: &'static str,
    },
    /// Inputs whose shapes do not fit together (rows of features and targets, features of
    /// training and prediction data).
    #[error("shape mismatch in {what}: {detail}")]
    Shape {
        /// The call, e.g. `KNeighborsClassifier::fit`.
        what: &'static str,
        /// The shapes involved.
        detail: String,
    },
    /// A parameter out of its range (`n_neighbors` larger than the training set, a test
    /// fraction outside (0, 1), ...).
    #[error("invalid parameter `{name}` for {what}: {detail}")]
    Parameter {
        /// The call.
        what: &'static str,
        /// The parameter's name.
        name: &'static str,
        /// What is wrong with its value.
        detail: String,
    },
    /// A NaN or infinite value in the input, with the first row and column where it is.
    #[error("{what}: the input has a non-finite value ({value}) at row {row}, column {column}")]
    NonFinite {
        /// The call.
        what: &'static str,
        /// Row of the first non-finite value.
        row: usize,
        /// Column of the first non-finite value.
        column: usize,
        /// The value, printed.
        value: String,
    },
    /// An error from gpukit (device, memory, kernel launch, a linear-algebra routine).
    #[error(transparent)]
    Gpu(#[from] gpukit::Error),
}
