//! Frames in and out: CSV files ([`csv`]), Arrow `RecordBatch`es ([`arrow`]), gpukit arrays
//! ([`arrays`]) and, with the `polars` feature, Polars `DataFrame`s (`polars`).
//!
//! Everything that parses or formats text runs on the host (there is no fast, maintained GPU CSV
//! parser to build on); the columns then move to their device in one copy each, and the other
//! direction copies each column to the host once.

pub mod arrays;
pub mod arrow;
pub mod csv;
#[cfg(feature = "polars")]
pub mod polars;
