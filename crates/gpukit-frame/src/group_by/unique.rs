//! Distinct values of one column, on its device: [`Column::unique`], [`Column::n_unique`],
//! [`Column::value_counts`] (and [`DataFrame::value_counts`] by name). They group the column
//! by itself (see the module above); `value_counts` then orders the groups by count with one
//! more stable sort.

use gpukit::Array;

use super::aggregate::group_lens;
use super::gather::take_column;
use super::kernels::{cfg, gb_desc_key};
use super::keys::groups_of;
use super::typed::{go, rows_at, GroupElem};
use crate::column::Column;
use crate::error::Result;
use crate::frame::DataFrame;

impl Column {
    /// The number of distinct values, null counted as one (Polars' `n_unique`).
    pub fn n_unique(&self) -> Result<usize> {
        Ok(groups_of(&[self])?.n_groups)
    }

    /// The distinct values, **sorted** (nulls first, NaN last, strings by bytes), as Polars'
    /// `unique(maintain_order=False)` followed by `sort()` (Polars' own order is unspecified).
    pub fn unique(&self) -> Result<Column> {
        let g = groups_of(&[self])?;
        let rows = rows_at(&g.perm, &g.starts, g.n_groups)?;
        take_column(self, &rows, None, self.name())
    }

    /// Each distinct value (null included) and its number of rows, as Polars'
    /// `value_counts(sort=True)`: columns `<name>` and `count` (`u32`), by count descending,
    /// equal counts by value ascending (a deterministic tie order; Polars leaves it open).
    pub fn value_counts(&self) -> Result<DataFrame> {
        let g = groups_of(&[self])?;
        let dev = self.device();
        let counts = group_lens(&g, &dev)?;
        let mut key = Array::<u64>::zeros_on(g.n_groups, &dev)?;
        go!(gb_desc_key, g.n_groups, &counts, &mut key);
        let order = if g.n_groups > 0 {
            key.argsort()?
        } else {
            Array::<i64>::zeros_on(0, &dev)?
        };
        // the first row of each group, in count order
        let firsts = rows_at(&g.perm, &g.starts, g.n_groups)?;
        let rows = i64::gather(&firsts, &order)?;
        let values = take_column(self, &rows, None, self.name())?;
        let counts = u32::gather(&counts, &order)?;
        DataFrame::new(vec![values, Column::from_array("count", counts)?])
    }
}

impl DataFrame {
    /// [`Column::value_counts`] of the column `name` (an error naming it if there is none).
    pub fn value_counts(&self, name: &str) -> Result<DataFrame> {
        self.column(name)?.value_counts()
    }
}
