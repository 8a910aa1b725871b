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
//! - [`column`](mod@column): [`Column`], a named column: [`ColumnData`] plus an optional validity [`Bitmap`].
//! - [`frame`]: [`DataFrame`], columns of one height with unique names.
//!
//! Built on those (each its own concept):
//! - [`select`]: choosing columns and rows (`select`, `drop`, `rename`, `with_column`, `head`,
//!   `tail`, `slice`), on the device.
//! - [`display`]: text and HTML tables (only the shown rows leave the device).
//! - [`io`]: CSV (parsed on the host with arrow-csv), Arrow `RecordBatch`, gpukit arrays, and
//!   Polars (feature `polars`).
//! - [`datasets`]: generated data, such as Wikipedia-pageview-like logs and a Dask-like time series.
//! - [`str_ops`]: string operations, `col.str().to_uppercase()` (device kernels).
//! - [`rolling`]: rolling-window statistics and user window kernels (device kernels).
//! - [`udf`]: user `#[kernel]`/`#[vectorize]` functions over columns (`apply_rows`).
//! - [`group_by`]: `group_by(..).agg(..)`, `value_counts`, `unique`, `n_unique` on the device.
//! - [`describe`]: `describe()`, summary statistics on the device.
//! - [`ops`]: row operations (take, filter, compare, sort, join) and [`expr`], filter expressions.

pub mod bitmap;
pub mod column;
pub mod datasets;
pub mod describe;
pub mod display;
pub mod dtype;
pub mod error;
pub mod expr;
pub mod frame;
pub mod group_by;
pub mod io;
pub mod ops;
pub mod rolling;
pub mod select;
pub mod str_ops;
pub mod strings;
pub mod udf;
mod validity;

pub use bitmap::Bitmap;
pub use column::{Column, ColumnData};
pub use display::{display_options, set_display_options, DisplayOptions};
pub use dtype::{FrameDType, TimeUnit};
pub use error::{FrameError, Result};
pub use expr::{col, lit, Expr};
pub use frame::DataFrame;
pub use io::csv::{read_csv, read_csv_from, write_csv, write_csv_to, CsvOptions};
pub use ops::join::JoinHow;
pub use rolling::RollingOptions;
pub use str_ops::StrNamespace;
pub use strings::Utf8Data;

/// What a notebook imports: `use gpukit_frame::prelude::*;`.
pub mod prelude {
    pub use crate::group_by::{Agg, GroupBy};
    pub use crate::{col, lit, Expr, JoinHow};
    pub use crate::{
        read_csv, read_csv_from, write_csv, write_csv_to, Bitmap, Column, ColumnData, CsvOptions,
        DataFrame, FrameDType, FrameError, RollingOptions, TimeUnit, Utf8Data,
    };
}

#[cfg(test)]
mod kernels_nvrtc;
