//! User functions over rows, the course's `apply_rows`/`forall` UDFs: a learner writes a
//! `#[kernel]` or `#[vectorize]` function in Rust over column arrays and gets a new column.
//!
//! Columns are gpukit arrays on the device (`col.values::<i64>()?`, no copy), so any kernel or
//! array operation works on them directly. The helpers here do the bookkeeping around it:
//! checking types, allocating the output on the column's device, choosing a launch
//! configuration, and carrying nulls over (an output row is null where an input row is null;
//! the kernel still runs there, on the unspecified value Arrow keeps in a null slot).
//!
//! - [`Column::map_array`]: a `#[vectorize]` function (or any array operation) over one column.
//! - [`Column::map_kernel`]: a `#[kernel]` from one column to a new one.
//! - [`DataFrame::apply_rows`]: a `#[kernel]` over several named columns of a frame, adding
//!   (or replacing) an output column, as cuDF's `df.apply_rows(kernel, incols, outcols)`.
//!
//! Everything runs where the columns are: the kernel's CUDA translation on a GPU, its native
//! CPU twin on the CPU backend.
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit_frame::{Column, DataFrame};
//!
//! /// `forall`-style: one thread per row, guarded by the length.
//! #[kernel]
//! fn bytes_per_request(bytes: &[i64], requests: &[i64], out: &mut [f64]) {
//!     let i = grid(1);
//!     if i < out.len() {
//!         out[i] = if requests[i] > 0 { bytes[i] as f64 / requests[i] as f64 } else { 0.0 };
//!     }
//! }
//!
//! /// `@vectorize`-style: a scalar function applied to every element.
//! #[vectorize]
//! fn log_requests(r: f64) -> f64 {
//!     (r + 1.0).ln()
//! }
//!
//! # fn main() -> gpukit_frame::Result<()> {
//! let cpu = Device::Cpu;
//! let df = DataFrame::new(vec![
//!     Column::from_slice_on("requests", &[4i64, 0, 10], &cpu)?,
//!     Column::from_slice_on("bytes", &[400i64, 0, 2500], &cpu)?,
//! ])?;
//! let df = df.apply_rows(&["bytes", "requests"], "avg_bytes", |cfg, cols, out| {
//!     Ok(bytes_per_request.launch(cfg, cols.values::<i64>("bytes")?, cols.values::<i64>("requests")?, out)?)
//! })?;
//! assert_eq!(df.column("avg_bytes")?.values::<f64>()?.to_vec()?, [100.0, 0.0, 250.0]);
//!
//! let as_f64 = df.column("requests")?.map_array(|r: &Array<i64>| r.astype::<f64>())?;
//! let logged = as_f64.map_array(|r: &Array<f64>| log_requests(r))?;
//! assert!((logged.values::<f64>()?.to_vec()?[2] - 11f64.ln()).abs() < 1e-12);
//! # Ok(())
//! # }
//! ```

use gpukit::prelude::*;
use gpukit::LaunchConfig;

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnElement};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;

/// Threads per block of a UDF launch; the grid covers every row once (`grid(1) < len`).
pub const UDF_THREADS: u32 = 256;

/// The launch configuration UDF helpers pass to the user's kernel for `n` rows: one thread per
/// row, 256 per block (a kernel guarded by `if i < out.len()` or using a grid-stride loop
/// works with it).
pub fn rows_launch_config(n: usize) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(UDF_THREADS as usize).max(1);
    let blocks = u32::try_from(blocks).map_err(|_| {
        FrameError::Input(format!("{n} rows are too many for one launch of a row UDF"))
    })?;
    Ok(LaunchConfig::new(blocks, UDF_THREADS)?)
}

/// The validity of rows valid in every one of `columns` (ANDed on the device).
fn all_valid(columns: &[&Column]) -> Result<Option<Bitmap>> {
    let mut acc: Option<Bitmap> = None;
    for c in columns {
        let Some(v) = c.validity() else { continue };
        acc = Some(match acc {
            None => v.clone(),
            Some(a) => crate::validity::and(&a, v)?,
        });
    }
    Ok(acc)
}

impl Column {
    /// A new column from `f` applied to this column's values (for example a `#[vectorize]`
    /// function or gpukit array arithmetic), with this column's name and nulls. An error
    /// names the column when its type is not `T` or `f` returns another number of rows.
    pub fn map_array<T: ColumnElement, U: ColumnElement>(
        &self,
        f: impl FnOnce(&Array<T>) -> gpukit::Result<Array<U>>,
    ) -> Result<Column> {
        let out = f(self.values::<T>()?)?;
        if out.ndim() != 1 || out.size() != self.len() {
            return Err(FrameError::Length(format!(
                "map_array on column `{}`: the function returned shape {:?} for {} rows",
                self.name(),
                out.shape(),
                self.len()
            )));
        }
        Column::new(self.name(), U::wrap(out), self.validity().cloned())
    }

    /// A new column written by a kernel: `launch(config, values, out)` launches it over this
    /// column's values and a zeroed output of as many rows on the same device (skipped for
    /// an empty column). Name and nulls are kept.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit_frame::Column;
    ///
    /// #[kernel]
    /// fn is_big(requests: &[i64], out: &mut [bool]) {
    ///     let i = grid(1);
    ///     if i < out.len() {
    ///         out[i] = requests[i] >= 100;
    ///     }
    /// }
    ///
    /// # fn main() -> gpukit_frame::Result<()> {
    /// let col = Column::from_slice_on("requests", &[5i64, 120], &Device::Cpu)?;
    /// let big = col.map_kernel(|cfg, r: &Array<i64>, out: &mut Array<bool>| is_big.launch(cfg, r, out))?;
    /// assert_eq!(big.values::<bool>()?.to_vec()?, [false, true]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn map_kernel<T: ColumnElement, U: ColumnElement>(
        &self,
        launch: impl FnOnce(LaunchConfig, &Array<T>, &mut Array<U>) -> gpukit::Result<()>,
    ) -> Result<Column> {
        let values = self.values::<T>()?;
        let mut out = Array::<U>::zeros_on(self.len(), &self.device())?;
        if !self.is_empty() {
            launch(rows_launch_config(self.len())?, values, &mut out)?;
        }
        Column::new(self.name(), U::wrap(out), self.validity().cloned())
    }
}

/// The input columns of [`DataFrame::apply_rows`], by name.
pub struct RowInputs<'a> {
    columns: Vec<&'a Column>,
}

impl<'a> RowInputs<'a> {
    /// The values of input `name` as an array of `T` (no copy), or an error naming the column
    /// (not among the inputs, or not of type `T`).
    pub fn values<T: ColumnElement>(&self, name: &str) -> Result<&'a Array<T>> {
        self.column(name)?.values::<T>()
    }

    /// The input column `name`.
    pub fn column(&self, name: &str) -> Result<&'a Column> {
        self.columns
            .iter()
            .copied()
            .find(|c| c.name() == name)
            .ok_or_else(|| FrameError::UnknownColumn {
                name: name.to_string(),
                available: self
                    .columns
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

impl DataFrame {
    /// Runs a row kernel over the columns named in `inputs` and adds its result as column
    /// `output` (replacing a column of that name), as cuDF's `apply_rows`. `launch(config,
    /// inputs, out)` launches the kernel with the input arrays (`inputs.values::<T>(name)?`)
    /// and a zeroed output of one `U` per row on the frame's device; it is not called for a
    /// frame without rows. An output row is null where any input row is null. Unknown input
    /// names are an error listing the frame's columns.
    pub fn apply_rows<U: ColumnElement>(
        &self,
        inputs: &[&str],
        output: &str,
        launch: impl FnOnce(LaunchConfig, &RowInputs<'_>, &mut Array<U>) -> Result<()>,
    ) -> Result<DataFrame> {
        let columns = inputs
            .iter()
            .map(|name| self.column(name))
            .collect::<Result<Vec<_>>>()?;
        let n = self.height();
        let device = match self.device() {
            Some(d) => d,
            None => {
                return Err(FrameError::Input(format!(
                    "apply_rows to make `{output}`: the frame has no columns"
                )))
            }
        };
        let mut out = Array::<U>::zeros_on(n, &device)?;
        let row_inputs = RowInputs {
            columns: columns.clone(),
        };
        if n > 0 {
            launch(rows_launch_config(n)?, &row_inputs, &mut out)?;
        }
        let new = Column::new(output, U::wrap(out), all_valid(&columns)?)?;
        let mut all: Vec<Column> = self.columns().to_vec();
        match all.iter().position(|c| c.name() == output) {
            Some(i) => all[i] = new,
            None => all.push(new),
        }
        DataFrame::new(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[kernel]
    fn weighted(a: &[i64], b: &[f64], w: f64, out: &mut [f64]) {
        let i = grid(1);
        if i < out.len() {
            out[i] = a[i] as f64 * w + b[i];
        }
    }

    #[vectorize]
    fn halve(x: f64) -> f64 {
        x * 0.5
    }

    fn with_nulls(name: &str, col: Column, valid: &[bool]) -> Column {
        let bm = Bitmap::from_bools_on(valid, &Device::Cpu).unwrap();
        Column::new(name, col.data().clone(), Some(bm)).unwrap()
    }

    #[test]
    fn apply_rows_matches_a_host_loop_with_nulls() {
        let mut rng = StdRng::seed_from_u64(3);
        for n in [0usize, 1, 2, 257, 1000] {
            let a: Vec<i64> = (0..n).map(|_| rng.random_range(-50..50)).collect();
            let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let va: Vec<bool> = (0..n).map(|_| rng.random_bool(0.8)).collect();
            let vb: Vec<bool> = (0..n).map(|_| rng.random_bool(0.8)).collect();
            let cpu = Device::Cpu;
            let df = DataFrame::new(vec![
                with_nulls("a", Column::from_slice_on("a", &a, &cpu).unwrap(), &va),
                with_nulls("b", Column::from_slice_on("b", &b, &cpu).unwrap(), &vb),
            ])
            .unwrap();
            let out = df
                .apply_rows(&["a", "b"], "y", |cfg, ins, out| {
                    Ok(weighted.launch(
                        cfg,
                        ins.values::<i64>("a")?,
                        ins.values::<f64>("b")?,
                        2.5,
                        out,
                    )?)
                })
                .unwrap();
            assert_eq!(out.names(), ["a", "b", "y"]);
            let y = out.column("y").unwrap();
            let got = y.values::<f64>().unwrap().to_vec().unwrap();
            let ok = y
                .validity()
                .map_or(vec![true; n], |v| v.to_bools().unwrap());
            for i in 0..n {
                assert_eq!(ok[i], va[i] && vb[i], "row {i}");
                assert_eq!(got[i], a[i] as f64 * 2.5 + b[i], "row {i}");
            }
            // Replacing a column keeps the width.
            let again = out
                .apply_rows(&["y"], "y", |cfg, ins, o| {
                    let y = ins.values::<f64>("y")?;
                    Ok(weighted.launch(cfg, &Array::<i64>::zeros_on(n, &cpu)?, y, 0.0, o)?)
                })
                .unwrap();
            assert_eq!(again.width(), 3);
            let halved = y.map_array(|v: &Array<f64>| halve(v)).unwrap();
            let h = halved.values::<f64>().unwrap().to_vec().unwrap();
            assert!(h.iter().zip(&got).all(|(h, g)| *h == g * 0.5));
            assert_eq!(halved.null_count(), y.null_count());
        }
    }

    #[test]
    fn udf_errors_name_columns() {
        let cpu = Device::Cpu;
        let df = DataFrame::new(vec![
            Column::from_slice_on("requests", &[1i64], &cpu).unwrap()
        ])
        .unwrap();
        let e = df
            .apply_rows::<f64>(&["bytes"], "y", |_, _, _| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no column named `bytes` (the frame has: requests)"),
            "{e}"
        );
        let e = df
            .apply_rows::<f64>(&["requests"], "y", |_, ins, _| {
                ins.values::<f64>("requests").map(|_| ())
            })
            .unwrap_err()
            .to_string();
        assert!(e.contains("column `requests` is i64, not float64"), "{e}");
        let e = df
            .apply_rows::<f64>(&["requests"], "y", |_, ins, _| {
                ins.values::<i64>("x").map(|_| ())
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no column named `x` (the frame has: requests)"),
            "{e}"
        );
        let col = df.column("requests").unwrap();
        let e = col
            .map_array(|a: &Array<i64>| Array::<f64>::zeros_on(a.size() + 1, &cpu))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "map_array on column `requests`: the function returned shape [2] for 1 rows"
            ),
            "{e}"
        );
        let e = col
            .map_kernel(|_, _: &Array<f32>, _: &mut Array<f32>| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("column `requests` is i64, not float32"), "{e}");
        let empty = DataFrame::new(vec![]).unwrap();
        assert!(empty.apply_rows::<f64>(&[], "y", |_, _, _| Ok(())).is_err());
    }
}
