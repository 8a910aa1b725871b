//! [`Rolling::apply`]: a user window function written as a `#[kernel]`, launched over the
//! column's values, validity and each row's window bounds (all on the column's device).

use gpukit::prelude::*;
use gpukit::LaunchConfig;

use super::{config, Rolling, SUM};
use crate::column::{Column, ColumnData};
use crate::error::Result;

/// What a rolling user function ([`Rolling::apply`]) receives: the column's values as `f64`,
/// per-row validity (1 = valid), each row's window bounds (`starts[i] .. ends[i]`, clipped to
/// the column) and the output to fill (one `f64` per row).
pub struct WindowArgs<'a> {
    /// The values, widened to `f64` (a null row's value is unspecified: test `valid`).
    pub values: &'a Array<f64>,
    /// 1 where the row holds a value, 0 where it is null.
    pub valid: &'a Array<u8>,
    /// The first row of each row's window.
    pub starts: &'a Array<i64>,
    /// One past the last row of each row's window.
    pub ends: &'a Array<i64>,
    /// One result per row, written by the kernel.
    pub out: &'a mut Array<f64>,
}

/// Per-row validity flags (1 valid) from a bitmap, or all 1.
#[kernel]
pub(crate) fn unpack_flags(bits: &[u8], has_bits: u32, flags: &mut [u8]) {
    for j in (grid(1)..flags.len()).step_by(gridsize(1)) {
        let mut ok: u8 = 1;
        if has_bits == 1 {
            ok = (((bits[j / 8] as u32) >> ((j % 8) as u32)) & 1) as u8;
        }
        flags[j] = ok;
    }
}

impl Rolling<'_> {
    /// A user window function: `launch` runs a `#[kernel]` over [`WindowArgs`] (values,
    /// validity, window bounds, output) with the launch configuration it is given (one thread
    /// per row, grid-stride safe). Rows whose window holds fewer than `min_periods` valid
    /// values are null in the result, whatever the kernel wrote there; the others keep the
    /// kernel's value.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// use gpukit_frame::{Column, rolling::RollingOptions};
    ///
    /// /// The spread (largest minus smallest valid value) of each row's window.
    /// #[kernel]
    /// fn window_spread(values: &[f64], valid: &[u8], starts: &[i64], ends: &[i64], out: &mut [f64]) {
    ///     for i in (grid(1)..out.len()).step_by(gridsize(1)) {
    ///         let mut lo = f64::INFINITY;
    ///         let mut hi = -f64::INFINITY;
    ///         for j in (starts[i] as usize)..(ends[i] as usize) {
    ///             if valid[j] == 1 {
    ///                 lo = lo.min(values[j]);
    ///                 hi = hi.max(values[j]);
    ///             }
    ///         }
    ///         out[i] = hi - lo;
    ///     }
    /// }
    ///
    /// # fn main() -> gpukit_frame::Result<()> {
    /// let col = Column::from_slice_on("requests", &[5i64, 1, 4, 9], &Device::Cpu)?;
    /// let spread = col.rolling(RollingOptions::new(2)).apply(|cfg, w| {
    ///     window_spread.launch(cfg, w.values, w.valid, w.starts, w.ends, w.out)
    /// })?;
    /// assert_eq!(spread.values::<f64>()?.to_vec()?[1..], [4.0, 3.0, 5.0]);
    /// assert_eq!(spread.null_count(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn apply(
        &self,
        launch: impl FnOnce(LaunchConfig, WindowArgs<'_>) -> gpukit::Result<()>,
    ) -> Result<Column> {
        let x = self.values("apply")?;
        let n = x.size();
        let device = x.device();
        let (bits, has_bits) = self.bits()?;
        let mut flags = Array::<u8>::zeros_on(n, &device)?;
        if n > 0 {
            unpack_flags.launch(config(n)?, &bits, has_bits, &mut flags)?;
        }
        let (starts, ends) = self.bounds(n, &device)?;
        let mut out = Array::<f64>::zeros_on(n, &device)?;
        if n > 0 {
            launch(
                config(n)?,
                WindowArgs {
                    values: &x,
                    valid: &flags,
                    starts: &starts,
                    ends: &ends,
                    out: &mut out,
                },
            )?;
        }
        // Which rows have enough valid values: the count statistic of the same windows.
        let counts = self.statistic("apply", SUM);
        let validity = counts?.validity().cloned();
        Column::new(self.column.name(), ColumnData::Float64(out), validity)
    }
}
