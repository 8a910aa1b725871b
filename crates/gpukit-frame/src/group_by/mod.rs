//! Group-by and aggregation, on the frame's device: `df.group_by(&["project"])?.agg(&[..])`,
//! `value_counts`, `unique`, `n_unique`, in Polars' spirit.
//!
//! ```
//! use gpukit::Device;
//! use gpukit_frame::group_by::Agg;
//! use gpukit_frame::{Column, DataFrame};
//! # fn main() -> gpukit_frame::Result<()> {
//! let cpu = Device::Cpu;
//! let df = DataFrame::new(vec![
//!     Column::from_strs_on("project", &["en", "de", "en"], &cpu)?,
//!     Column::from_slice_on("requests", &[3i64, 1, 4], &cpu)?,
//! ])?;
//! let out = df
//!     .group_by(&["project"])?
//!     .agg(&[Agg::len(), Agg::sum("requests"), Agg::mean("requests").alias("avg")])?;
//! assert_eq!(out.names(), ["project", "len", "requests", "avg"]);
//! assert_eq!(out.column("requests")?.values::<i64>()?.to_vec()?, [1, 7]); // de, en
//! # Ok(()) }
//! ```
//!
//! **What runs where.** Everything that touches rows runs in device kernels (CUDA on a GPU, the
//! same `#[kernel]` bodies natively on the CPU backend): ranking keys (gpukit's stable
//! `argsort`, adjacent-difference flags, `cumsum`), segment boundaries, gathers and the
//! per-group reductions. The host reads back only sizes: the number of groups, a string
//! column's longest row and byte totals.
//!
//! **How rows become groups.** Each key column becomes dense codes that order like its values
//! (strings by their UTF-8 bytes, ranked a few bytes per round: the code so far and the next
//! bytes packed into one `u64`); several keys are combined pairwise and ranked again. No hashing is involved, so
//! there are no hash collisions: two rows share a group exactly when their keys are equal.
//!
//! **Semantics** (Polars' where it defines them):
//! - The result has one row per group, key columns first (the values of the group's first
//!   row), then one column per aggregation, named as Polars names them: the source column's
//!   name, `len` for [`Agg::len`]; [`Agg::alias`] renames. Two outputs with one name are an error.
//! - **Group order: sorted by key** (ascending, nulls first, NaN after every number, strings by
//!   bytes), the same on every run and backend. Polars' default order is unspecified
//!   (`maintain_order=False`); sorting makes results deterministic and comparable.
//! - A null key is a group of its own; every NaN is one group; -0.0 and 0.0 are one group.
//! - Aggregations skip nulls, except [`Agg::len`] (rows, nulls included, Polars' `pl.len()`),
//!   [`Agg::first`] (the first row, null or not) and [`Agg::n_unique`] (null is a value).
//!   [`Agg::count`] counts non-null values (Polars' `pl.col(x).count()`).
//! - Sums of integers accumulate in 64 bits; means and standard deviations (ddof = 1) are `f64`.
//!   **Float results are deterministic**: a sort-based segmented reduction in a fixed order
//!   (pieces of at most 256 rows, each summed by one thread in row order, then each group's
//!   pieces in order; no float atomics), so the bits are the same on every run and on both
//!   backends. `min`/`max` (and `n_unique`'s count) are exact in any order; `min`/`max` walk a
//!   group in one thread.
//! - Unknown columns, empty key lists, and `sum`/`mean`/`std` of strings, dates or timestamps
//!   are errors naming the column and its type; nothing the caller holds changes.

pub mod agg;
mod aggregate;
mod gather;
mod kernels;
mod keys;
mod rank;
mod segments;
#[cfg(test)]
mod tests;
mod typed;
mod unique;

pub use agg::{Agg, AggKind};

use crate::column::Column;
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;

pub(crate) use gather::valid_bytes;
use keys::groups_of;
pub(crate) use rank::column_codes;
pub(crate) use segments::{moments, pieces};
pub(crate) use typed::GroupElem;

/// A frame split into groups by key columns; [`GroupBy::agg`] computes the result.
#[derive(Debug, Clone)]
pub struct GroupBy<'a> {
    frame: &'a DataFrame,
    keys: Vec<String>,
}

impl DataFrame {
    /// Groups the rows by the columns `keys` (one or more; any type), as Polars'
    /// `df.group_by(keys)`. An error for an unknown or repeated name or an empty list.
    pub fn group_by<S: AsRef<str>>(&self, keys: &[S]) -> Result<GroupBy<'_>> {
        if keys.is_empty() {
            return Err(FrameError::Input(
                "group_by needs at least one key column".to_string(),
            ));
        }
        let mut names: Vec<String> = Vec::with_capacity(keys.len());
        for k in keys {
            let k = k.as_ref();
            self.column(k)?;
            if names.iter().any(|n| n == k) {
                return Err(FrameError::Input(format!(
                    "group_by key `{k}` is named twice"
                )));
            }
            names.push(k.to_string());
        }
        Ok(GroupBy {
            frame: self,
            keys: names,
        })
    }
}

impl GroupBy<'_> {
    /// The key column names.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// One row per group (sorted by key): the key columns, then one column per aggregation.
    /// Every aggregation is checked (its column exists, its type fits, output names are
    /// unique) before any work starts.
    pub fn agg(&self, aggs: &[Agg]) -> Result<DataFrame> {
        let frame = self.frame;
        let mut inputs: Vec<Option<&Column>> = Vec::with_capacity(aggs.len());
        let mut names: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        for a in aggs {
            let col = match a.column() {
                Some(c) => {
                    let col = frame.column(c)?;
                    a.output_dtype(col.dtype())?;
                    Some(col)
                }
                None => None,
            };
            let name = a.output_name();
            if names.contains(&name) {
                return Err(FrameError::Input(format!(
                    "two output columns would be named `{name}`; give one a distinct name \
                     with .alias(..)"
                )));
            }
            names.push(name);
            inputs.push(col);
        }
        let keys: Vec<&Column> = self
            .keys
            .iter()
            .map(|k| frame.column(k))
            .collect::<Result<_>>()?;
        let dev = keys[0].device();
        let groups = groups_of(&keys)?;
        let mut out = Vec::with_capacity(keys.len() + aggs.len());
        for k in &keys {
            out.push(aggregate::aggregate(
                &groups,
                Some(k),
                &Agg::first(k.name()),
                &dev,
            )?);
        }
        for (a, col) in aggs.iter().zip(inputs) {
            out.push(aggregate::aggregate(&groups, col, a, &dev)?);
        }
        DataFrame::new(out)
    }
}
