//! Errors of frame operations: each names the column, row or shapes involved.

/// The result of a frame operation.
pub type Result<T, E = FrameError> = std::result::Result<T, E>;

/// What went wrong in a frame operation. Nothing the caller held is changed when one is
/// returned.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A column name that the frame does not have.
    #[error("no column named `{name}` (the frame has: {available})")]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The frame's column names, comma-separated.
        available: String,
    },
    /// Two columns with one name in a frame.
    #[error("duplicate column name `{0}`")]
    DuplicateColumn(String),
    /// Columns of different heights in one frame, or operands of different lengths.
    #[error("length mismatch: {0}")]
    Length(String),
    /// An operation that does not apply to a column's type (or two columns' types).
    #[error("type mismatch: {0}")]
    Type(String),
    /// Malformed input (a CSV row, a schema, an Arrow array), with where it is.
    #[error("invalid input: {0}")]
    Input(String),
    /// An error from gpukit (device, memory, kernel launch).
    #[error(transparent)]
    Gpu(#[from] gpukit::Error),
}
