//! GPU DataFrames on gpukit: named columns whose values live on a gpukit device (a CUDA GPU or
//! the CPU backend) in Apache Arrow's layout, and the pandas/Polars operations over them.
//!
//! The crate is separate from gpukit so that a notebook that does not use frames does not pay
//! for their dependencies (Arrow's CSV reader, optionally Polars).
//!
//! Layers, bottom up (each module uses only those above it in this list):
//! - [`error`]: [`FrameError`] and [`Result`].
//! - [`dtype`]: [`FrameDType`], the logical type of a column.
//! - [`bitmap`]: [`Bitmap`], Arrow's validity bitmap (one bit per row, 1 = valid) on a device.
//! - [`strings`]: [`Utf8Data`], a string column's offsets and bytes on a device.
//! - [`column`]: [`Column`], a named column: [`ColumnData`] plus an optional validity [`Bitmap`].
//! - [`frame`]: [`DataFrame`], columns of one height with unique names.
//! - [`ops`]: row operations (take, filter, compare, sort, join) and [`expr`], filter expressions.

pub mod bitmap;
pub mod column;
pub mod dtype;
pub mod error;
pub mod expr;
pub mod frame;
pub mod ops;
pub mod strings;

pub use bitmap::Bitmap;
pub use column::{Column, ColumnData};
pub use dtype::{FrameDType, TimeUnit};
pub use error::{FrameError, Result};
pub use expr::{col, lit, Expr};
pub use frame::DataFrame;
pub use ops::join::JoinHow;
pub use strings::Utf8Data;

/// What a notebook imports: `use gpukit_frame::prelude::*;`.
pub mod prelude {
    pub use crate::{col, lit, Expr, JoinHow};
    pub use crate::{
        Bitmap, Column, ColumnData, DataFrame, FrameDType, FrameError, TimeUnit, Utf8Data,
    };
}
