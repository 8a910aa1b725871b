//! Rolling windows over numeric columns, as pandas' and Polars' `rolling(window, min_periods,
//! center)`: `.sum()`, `.mean()`, `.min()`, `.max()` and a user window function
//! ([`Rolling::apply`]) written as a `#[kernel]`.
//!
//! Everything runs on the column's device. The values are widened to `f64` on the device
//! (`astype`), and the results are `f64` columns (as pandas', whatever the input type). Nulls
//! are skipped; a row whose window holds fewer than `min_periods` valid values is null.
//!
//! **How** (van Herk / Gil-Werman): the rows are cut into chunks of `window` rows; one thread
//! per chunk scans it forwards and backwards, storing running sums (Kahan-compensated), valid
//! counts, minima and maxima. A window of at most `window` rows touches at most two adjacent
//! chunks, so one thread per row combines the backward scan at the window's start with the
//! forward scan at its end. The work is O(rows) whatever the window, and each partial sum
//! covers at most `window` values: unlike differences of global prefix sums there is no
//! cancellation between large prefixes, and a NaN or infinity affects only the windows that
//! contain it. Sums are therefore within a few ulps of the exact sum of the window's values
//! (times the window's condition number). `min`/`max` ignore NaN values (as `f64::min`; the
//! scans start from NaN, the identity of `f64::min`), so a window whose values are all NaN gives
//! NaN. Polars' `rolling_min`/`rolling_max` instead give NaN for any window holding a NaN.
//!
//! ```
//! use gpukit::Device;
//! use gpukit_frame::{Column, rolling::RollingOptions};
//!
//! # fn main() -> gpukit_frame::Result<()> {
//! let requests = Column::from_slice_on("requests", &[1i64, 2, 3, 4, 5], &Device::Cpu)?;
//! let mean = requests.rolling(RollingOptions::new(2)).mean()?;
//! let v = mean.values::<f64>()?.to_vec()?;
//! assert_eq!(&v[1..], [1.5, 2.5, 3.5, 4.5]);
//! assert_eq!(mean.null_count(), 1); // row 0 has one value, fewer than min_periods = 2
//! let centered = requests
//!     .rolling(RollingOptions::new(3).min_periods(1).center(true))
//!     .max()?;
//! assert_eq!(centered.values::<f64>()?.to_vec()?, [2.0, 3.0, 4.0, 5.0, 5.0]);
//! # Ok(())
//! # }
//! ```

use gpukit::prelude::*;
use gpukit::LaunchConfig;

use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};

/// Threads per block of the rolling kernels.
const THREADS: u32 = 256;

/// A launch over `n` items (at least one block; kernels use grid-stride loops).
fn config(n: usize) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(THREADS as usize).clamp(1, 65_535) as u32;
    Ok(LaunchConfig::new(blocks, THREADS)?)
}

/// The shape of a rolling window, as pandas' `rolling(window, min_periods, center)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollingOptions {
    /// Rows per window (at least 1).
    pub window: usize,
    /// Fewest valid (non-null) values a window needs for a result; fewer gives null. From 1 to
    /// `window`.
    pub min_periods: usize,
    /// `false`: the window ends at the row (rows `i - window + 1 ..= i`); `true`: it is centred
    /// on the row (rows `i - window / 2 .. i - window / 2 + window`, as pandas and Polars).
    pub center: bool,
}

impl RollingOptions {
    /// A trailing window of `window` rows that needs all of them valid (pandas' and Polars'
    /// default `min_periods = window`).
    pub fn new(window: usize) -> RollingOptions {
        RollingOptions {
            window,
            min_periods: window,
            center: false,
        }
    }

    /// The same with another `min_periods`.
    pub fn min_periods(mut self, min_periods: usize) -> RollingOptions {
        self.min_periods = min_periods;
        self
    }

    /// The same, centred on each row or not.
    pub fn center(mut self, center: bool) -> RollingOptions {
        self.center = center;
        self
    }
}

/// A rolling window over a column, made by [`Column::rolling`]; its methods compute one
/// statistic per row.
#[derive(Debug, Clone, Copy)]
pub struct Rolling<'a> {
    column: &'a Column,
    options: RollingOptions,
}

impl Column {
    /// A rolling window over this column (numeric types); see [`Rolling`] and the
    /// [module documentation](crate::rolling).
    pub fn rolling(&self, options: RollingOptions) -> Rolling<'_> {
        Rolling {
            column: self,
            options,
        }
    }
}

pub(crate) mod apply;
#[cfg(test)]
mod tests;

pub use apply::WindowArgs;

/// The operations of [`window_scans`] and [`window_combine`].
const SUM: u32 = 0;
const MEAN: u32 = 1;
const MIN: u32 = 2;
const MAX: u32 = 3;

/// One thread per chunk of `w` rows: forward (`pre_*`) and backward (`suf_*`) running
/// Kahan sums, valid counts, minima and maxima within the chunk. Row `j` is valid when
/// `has_bits` is 0 or bit `j` of `bits` is 1.
#[kernel]
pub(crate) fn window_scans(
    x: &[f64],
    bits: &[u8],
    has_bits: u32,
    w: usize,
    pre_sum: &mut [f64],
    pre_cnt: &mut [u32],
    pre_min: &mut [f64],
    pre_max: &mut [f64],
    suf_sum: &mut [f64],
    suf_cnt: &mut [u32],
    suf_min: &mut [f64],
    suf_max: &mut [f64],
) {
    let n = x.len();
    let chunks = (n + w - 1) / w;
    for c in (grid(1)..chunks).step_by(gridsize(1)) {
        let a = c * w;
        let b = (a + w).min(n);
        let mut s = 0.0f64;
        let mut comp = 0.0f64;
        let mut cnt: u32 = 0;
        let mut lo = f64::NAN;
        let mut hi = f64::NAN;
        for j in a..b {
            let mut ok = true;
            if has_bits == 1 {
                ok = ((bits[j / 8] as u32) >> ((j % 8) as u32)) & 1 == 1;
            }
            if ok {
                let v = x[j];
                let y = v - comp;
                let t = s + y;
                comp = if t.is_finite() { (t - s) - y } else { 0.0 };
                s = t;
                cnt += 1;
                lo = lo.min(v);
                hi = hi.max(v);
            }
            pre_sum[j] = s;
            pre_cnt[j] = cnt;
            pre_min[j] = lo;
            pre_max[j] = hi;
        }
        s = 0.0;
        comp = 0.0;
        cnt = 0;
        lo = f64::NAN;
        hi = f64::NAN;
        for j in (a..b).rev() {
            let mut ok = true;
            if has_bits == 1 {
                ok = ((bits[j / 8] as u32) >> ((j % 8) as u32)) & 1 == 1;
            }
            if ok {
                let v = x[j];
                let y = v - comp;
                let t = s + y;
                comp = if t.is_finite() { (t - s) - y } else { 0.0 };
                s = t;
                cnt += 1;
                lo = lo.min(v);
                hi = hi.max(v);
            }
            suf_sum[j] = s;
            suf_cnt[j] = cnt;
            suf_min[j] = lo;
            suf_max[j] = hi;
        }
    }
}

/// Rows `starts[i] .. ends[i]` of row `i`'s window, clipped to the column.
#[kernel]
pub(crate) fn window_bounds(w: usize, center: u32, starts: &mut [i64], ends: &mut [i64]) {
    let n = starts.len() as i64;
    for i in (grid(1)..starts.len()).step_by(gridsize(1)) {
        let mut s = i as i64 + 1 - w as i64;
        if center == 1 {
            s = i as i64 - (w / 2) as i64;
        }
        let e = s + w as i64;
        starts[i] = s.max(0);
        ends[i] = e.min(n);
    }
}

/// One thread per row: the window's statistic `op` from the chunk scans, and `valid[i]` = 1
/// when the window holds at least `min_periods` valid values.
#[kernel]
pub(crate) fn window_combine(
    starts: &[i64],
    ends: &[i64],
    w: usize,
    min_periods: u32,
    op: u32,
    pre_sum: &[f64],
    pre_cnt: &[u32],
    pre_min: &[f64],
    pre_max: &[f64],
    suf_sum: &[f64],
    suf_cnt: &[u32],
    suf_min: &[f64],
    suf_max: &[f64],
    out: &mut [f64],
    valid: &mut [u8],
) {
    let n = out.len();
    for i in (grid(1)..n).step_by(gridsize(1)) {
        let s = starts[i] as usize;
        let last = ends[i] as usize - 1;
        let mut sum = 0.0f64;
        let mut cnt: u32 = 0;
        let mut lo = f64::INFINITY;
        let mut hi = -f64::INFINITY;
        if s / w != last / w {
            sum = suf_sum[s] + pre_sum[last];
            cnt = suf_cnt[s] + pre_cnt[last];
            lo = suf_min[s].min(pre_min[last]);
            hi = suf_max[s].max(pre_max[last]);
        } else if s % w == 0 {
            sum = pre_sum[last];
            cnt = pre_cnt[last];
            lo = pre_min[last];
            hi = pre_max[last];
        } else {
            // The window ends at its chunk's end (the column's last row).
            sum = suf_sum[s];
            cnt = suf_cnt[s];
            lo = suf_min[s];
            hi = suf_max[s];
        }
        let mut r = sum;
        if op == 1 {
            r = sum / (cnt as f64);
        } else if op == 2 {
            r = lo;
        } else if op == 3 {
            r = hi;
        }
        if cnt >= min_periods && cnt > 0 {
            out[i] = r;
            valid[i] = 1;
        } else {
            out[i] = 0.0;
            valid[i] = 0;
        }
    }
}

impl Rolling<'_> {
    /// The column's values as `f64` on its device, after checking the options and the type.
    pub(crate) fn values(&self, op: &str) -> Result<Array<f64>> {
        let c = self.column;
        let o = self.options;
        if o.window == 0 {
            return Err(FrameError::Input(format!(
                "rolling {op} on column `{}`: the window must be at least 1 row",
                c.name()
            )));
        }
        if o.min_periods == 0 || o.min_periods > o.window {
            return Err(FrameError::Input(format!(
                "rolling {op} on column `{}`: min_periods must be from 1 to the window ({}), got {}",
                c.name(),
                o.window,
                o.min_periods
            )));
        }
        if o.min_periods > u32::MAX as usize {
            return Err(FrameError::Input(format!(
                "rolling {op} on column `{}`: min_periods {} is too large",
                c.name(),
                o.min_periods
            )));
        }
        Ok(match c.data() {
            ColumnData::Int32(a) => a.astype::<f64>()?,
            ColumnData::Int64(a) => a.astype::<f64>()?,
            ColumnData::UInt32(a) => a.astype::<f64>()?,
            ColumnData::UInt64(a) => a.astype::<f64>()?,
            ColumnData::Float32(a) => a.astype::<f64>()?,
            ColumnData::Float64(a) => a.clone(),
            _ => {
                return Err(FrameError::Type(format!(
                    "rolling {op}: column `{}` is {}, not a number",
                    c.name(),
                    c.dtype()
                )))
            }
        })
    }

    /// The validity bits (or a one-byte placeholder) and whether there are any.
    pub(crate) fn bits(&self) -> Result<(Array<u8>, u32)> {
        Ok(match self.column.validity() {
            Some(b) => (b.bits().clone(), 1),
            None => (Array::<u8>::zeros_on(1, &self.column.device())?, 0),
        })
    }

    /// Window bounds of every row.
    pub(crate) fn bounds(&self, n: usize, device: &Device) -> Result<(Array<i64>, Array<i64>)> {
        let mut starts = Array::<i64>::zeros_on(n, device)?;
        let mut ends = Array::<i64>::zeros_on(n, device)?;
        if n > 0 {
            window_bounds.launch(
                config(n)?,
                self.options.window,
                u32::from(self.options.center),
                &mut starts,
                &mut ends,
            )?;
        }
        Ok((starts, ends))
    }

    pub(crate) fn statistic(&self, name: &str, op: u32) -> Result<Column> {
        let x = self.values(name)?;
        let n = x.size();
        let device = x.device();
        let w = self.options.window.min(n.max(1));
        let (bits, has_bits) = self.bits()?;
        let (starts, ends) = self.bounds(n, &device)?;
        let zf = || Array::<f64>::zeros_on(n, &device);
        let zc = || Array::<u32>::zeros_on(n, &device);
        let (mut ps, mut pc, mut pmin, mut pmax) = (zf()?, zc()?, zf()?, zf()?);
        let (mut ss, mut sc, mut smin, mut smax) = (zf()?, zc()?, zf()?, zf()?);
        let mut out = zf()?;
        let mut valid = Array::<u8>::zeros_on(n, &device)?;
        if n > 0 {
            window_scans.launch(
                config(n.div_ceil(w))?,
                &x,
                &bits,
                has_bits,
                w,
                &mut ps,
                &mut pc,
                &mut pmin,
                &mut pmax,
                &mut ss,
                &mut sc,
                &mut smin,
                &mut smax,
            )?;
            window_combine.launch(
                config(n)?,
                &starts,
                &ends,
                w,
                self.options.min_periods as u32,
                op,
                &ps,
                &pc,
                &pmin,
                &pmax,
                &ss,
                &sc,
                &smin,
                &smax,
                &mut out,
                &mut valid,
            )?;
        }
        Column::new(
            self.column.name(),
            ColumnData::Float64(out),
            crate::validity::from_flags(&valid, None)?,
        )
    }

    /// The sum of each window's valid values (`f64`; null below `min_periods`).
    pub fn sum(&self) -> Result<Column> {
        self.statistic("sum", SUM)
    }

    /// The mean of each window's valid values (`f64`; null below `min_periods`).
    pub fn mean(&self) -> Result<Column> {
        self.statistic("mean", MEAN)
    }

    /// The smallest of each window's valid values (`f64`; NaN values are ignored).
    pub fn min(&self) -> Result<Column> {
        self.statistic("min", MIN)
    }

    /// The largest of each window's valid values (`f64`; NaN values are ignored).
    pub fn max(&self) -> Result<Column> {
        self.statistic("max", MAX)
    }
}
