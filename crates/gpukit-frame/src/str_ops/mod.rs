//! String column operations in the spirit of Polars' `.str` namespace: `col.str().to_uppercase()`.
//!
//! Every operation runs on the column's device: GPU kernels on a CUDA device, the same kernels'
//! native CPU twins on the CPU backend (all written in Rust with `#[kernel]`). An operation that
//! makes strings works as Arrow's variable-length layout asks: a kernel computes each row's
//! output length, gpukit's `cumsum` turns the lengths into offsets (an exclusive scan), and a
//! second kernel writes every row's bytes at its offset. The only host round trip is the total
//! byte count (one `i64`) that sizes the output. Nulls propagate: the output has the input's
//! validity (and [`StrNamespace::split_part`] adds nulls where a part is missing).
//!
//! | method | result | Polars |
//! |---|---|---|
//! | [`len_bytes`](StrNamespace::len_bytes), [`len_chars`](StrNamespace::len_chars) | `u32` | `str.len_bytes()`, `str.len_chars()` |
//! | [`to_uppercase`](StrNamespace::to_uppercase), [`to_lowercase`](StrNamespace::to_lowercase) | `str` | same names (case mapping: see [`case`]) |
//! | [`contains`](StrNamespace::contains), [`starts_with`](StrNamespace::starts_with), [`ends_with`](StrNamespace::ends_with) | `bool` | `str.contains(pat, literal=True)`, ... |
//! | [`replace`](StrNamespace::replace), [`replace_all`](StrNamespace::replace_all) | `str` | `str.replace(.., literal=True, n=1)`, `str.replace_all(.., literal=True)` |
//! | [`split_part`](StrNamespace::split_part), [`split_exact`](StrNamespace::split_exact) | `str` columns | `str.split_exact(by, n)` (fields unnested) |
//! | [`slice`](StrNamespace::slice) | `str` | `str.slice(offset, length)` (in characters) |
//!
//! Modules, one concept each: `launch` (grid sizes, offsets from lengths), `utf8` (decoding
//! and encoding helpers for kernels), `length`, `case` (with the generated `case_table`),
//! `find`, `replace`, `split`, `slice`.
//!
//! ```
//! use gpukit::Device;
//! use gpukit_frame::{Column, DataFrame};
//!
//! # fn main() -> gpukit_frame::Result<()> {
//! let df = DataFrame::new(vec![Column::from_strs_on(
//!     "page_title",
//!     &["Main_Page", "Zürich", "Special:Search"],
//!     &Device::Cpu,
//! )?])?;
//! let titles = df.column("page_title")?.str();
//! let upper = titles.to_uppercase()?.str().to_strings()?;
//! assert_eq!(upper[1].as_deref(), Some("ZÜRICH"));
//! let special = titles.starts_with("Special:")?;
//! assert_eq!(special.values::<bool>()?.to_vec()?, [false, false, true]);
//! let ns = titles.split_part(":", 0)?;
//! assert_eq!(ns.str().to_strings()?[2].as_deref(), Some("Special"));
//! # Ok(())
//! # }
//! ```

pub mod case;
mod case_table;
pub mod find;
pub(crate) mod launch;
pub mod length;
pub mod replace;
pub mod slice;
pub mod split;
mod utf8;

use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::strings::Utf8Data;

/// The string operations of one column, as Polars' `series.str()`; made by [`Column::str`].
/// Each operation checks that the column holds strings and returns a new column of the same
/// name (or an error naming the column and its type).
#[derive(Debug, Clone, Copy)]
pub struct StrNamespace<'a> {
    column: &'a Column,
}

impl Column {
    /// The string operations of this column (`col.str().to_uppercase()`); they return an error
    /// naming the column when it does not hold strings.
    pub fn str(&self) -> StrNamespace<'_> {
        StrNamespace { column: self }
    }
}

impl<'a> StrNamespace<'a> {
    /// The column the operations apply to.
    pub fn column(&self) -> &'a Column {
        self.column
    }

    /// The strings, or a type error naming the operation, the column and its type.
    pub(crate) fn utf8(&self, op: &str) -> Result<&'a Utf8Data> {
        match self.column.data() {
            ColumnData::Utf8(s) => Ok(s),
            _ => Err(FrameError::Type(format!(
                "str.{op}: column `{}` is {}, not str",
                self.column.name(),
                self.column.dtype()
            ))),
        }
    }

    /// A column of the same name and validity holding `data`.
    pub(crate) fn same_rows(&self, data: ColumnData) -> Result<Column> {
        Column::new(self.column.name(), data, self.column.validity().cloned())
    }

    /// Every row copied to the host, `None` for a null row (for checks and display).
    pub fn to_strings(&self) -> Result<Vec<Option<String>>> {
        let s = self.utf8("to_strings")?;
        let rows = s.to_strings()?;
        let valid = match self.column.validity() {
            Some(v) => v.to_bools()?,
            None => vec![true; rows.len()],
        };
        Ok(rows
            .into_iter()
            .zip(valid)
            .map(|(r, v)| v.then_some(r))
            .collect())
    }
}

/// An error for an empty literal where an operation needs at least one byte.
pub(crate) fn nonempty(op: &str, what: &str, value: &str, column: &Column) -> Result<()> {
    if value.is_empty() {
        return Err(FrameError::Input(format!(
            "str.{op} on column `{}`: the {what} must not be empty",
            column.name()
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testing;
