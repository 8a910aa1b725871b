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
//! (times the window's condition number). `min`/`max` ignore NaN values (as `f64::min`).
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

use crate::bitmap::Bitmap;
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

/// The operations of [`window_scans`] and [`window_combine`].
const SUM: u32 = 0;
const MEAN: u32 = 1;
const MIN: u32 = 2;
const MAX: u32 = 3;

/// One thread per chunk of `w` rows: forward (`pre_*`) and backward (`suf_*`) running
/// Kahan sums, valid counts, minima and maxima within the chunk. Row `j` is valid when
/// `has_bits` is 0 or bit `j` of `bits` is 1.
#[kernel]
fn window_scans(
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
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for j in a..b {
            let mut ok = true;
            if has_bits == 1 {
                ok = ((bits[j / 8] as u32) >> ((j % 8) as u32)) & 1 == 1;
            }
            if ok {
                let v = x[j];
                let y = v - comp;
                let t = s + y;
                comp = (t - s) - y;
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
        lo = f64::INFINITY;
        hi = f64::NEG_INFINITY;
        for j in (a..b).rev() {
            let mut ok = true;
            if has_bits == 1 {
                ok = ((bits[j / 8] as u32) >> ((j % 8) as u32)) & 1 == 1;
            }
            if ok {
                let v = x[j];
                let y = v - comp;
                let t = s + y;
                comp = (t - s) - y;
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
fn window_bounds(w: usize, center: u32, starts: &mut [i64], ends: &mut [i64]) {
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
fn window_combine(
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
        let mut hi = f64::NEG_INFINITY;
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

/// One thread per output byte: Arrow validity bits from per-row flags.
#[kernel]
fn pack_flags(flags: &[u8], bits: &mut [u8]) {
    let n = flags.len();
    for j in (grid(1)..bits.len()).step_by(gridsize(1)) {
        let mut byte: u32 = 0;
        for r in 0..8 {
            let row = j * 8 + r;
            if row < n && flags[row] != 0 {
                byte |= 1 << (r as u32);
            }
        }
        bits[j] = byte as u8;
    }
}

/// The bitmap of rows whose flag is non-zero (built on the device; its null count is read
/// back once).
fn bitmap_of(flags: &Array<u8>) -> Result<Option<Bitmap>> {
    let n = flags.size();
    if n == 0 {
        return Ok(None);
    }
    let nbytes = Bitmap::bytes_for(n);
    let mut bits = Array::<u8>::zeros_on(nbytes, &flags.device())?;
    pack_flags.launch(config(nbytes)?, flags, &mut bits)?;
    Ok(Some(Bitmap::from_packed(bits, n)?))
}

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
fn unpack_flags(bits: &[u8], has_bits: u32, flags: &mut [u8]) {
    for j in (grid(1)..flags.len()).step_by(gridsize(1)) {
        let mut ok: u8 = 1;
        if has_bits == 1 {
            ok = (((bits[j / 8] as u32) >> ((j % 8) as u32)) & 1) as u8;
        }
        flags[j] = ok;
    }
}

impl Rolling<'_> {
    /// The column's values as `f64` on its device, after checking the options and the type.
    fn values(&self, op: &str) -> Result<Array<f64>> {
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
    fn bits(&self) -> Result<(Array<u8>, u32)> {
        Ok(match self.column.validity() {
            Some(b) => (b.bits().clone(), 1),
            None => (Array::<u8>::zeros_on(1, &self.column.device())?, 0),
        })
    }

    /// Window bounds of every row.
    fn bounds(&self, n: usize, device: &Device) -> Result<(Array<i64>, Array<i64>)> {
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

    fn statistic(&self, name: &str, op: u32) -> Result<Column> {
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
            bitmap_of(&valid)?,
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
    ///         let mut hi = f64::NEG_INFINITY;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// The naive window loop: pandas' definition, with the window's valid values summed in
    /// order.
    fn naive(x: &[f64], valid: &[bool], o: RollingOptions, op: u32) -> Vec<Option<f64>> {
        let n = x.len() as i64;
        (0..n)
            .map(|i| {
                let s = if o.center {
                    i - (o.window / 2) as i64
                } else {
                    i + 1 - o.window as i64
                };
                let e = (s + o.window as i64).min(n);
                let vals: Vec<f64> = (s.max(0)..e)
                    .filter(|&j| valid[j as usize])
                    .map(|j| x[j as usize])
                    .collect();
                if vals.len() < o.min_periods {
                    return None;
                }
                let sum: f64 = vals.iter().sum();
                Some(match op {
                    SUM => sum,
                    MEAN => sum / vals.len() as f64,
                    MIN => vals.iter().copied().fold(f64::INFINITY, f64::min),
                    _ => vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                })
            })
            .collect()
    }

    fn host(c: &Column) -> Vec<Option<f64>> {
        let v = c.values::<f64>().unwrap().to_vec().unwrap();
        let ok = c
            .validity()
            .map_or(vec![true; v.len()], |b| b.to_bools().unwrap());
        v.into_iter().zip(ok).map(|(x, k)| k.then_some(x)).collect()
    }

    fn close(got: &[Option<f64>], want: &[Option<f64>], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            match (g, w) {
                (Some(g), Some(w)) => assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{what} row {i}: {g} vs {w}"
                ),
                _ => assert_eq!(g.is_some(), w.is_some(), "{what} row {i}: {g:?} vs {w:?}"),
            }
        }
    }

    #[test]
    fn statistics_match_a_naive_loop_on_random_windows_with_nulls() {
        let mut rng = StdRng::seed_from_u64(17);
        for trial in 0..120 {
            let n = match trial % 6 {
                0 => 0,
                1 => 1,
                _ => rng.random_range(2..200),
            };
            let window = rng.random_range(1..(n.max(1) + 5));
            let o = RollingOptions::new(window)
                .min_periods(rng.random_range(1..=window))
                .center(rng.random_bool(0.5));
            let x: Vec<i64> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
            let valid: Vec<bool> = (0..n).map(|_| rng.random_range(0..4) != 0).collect();
            let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            let cpu = Device::Cpu;
            let col = Column::new(
                "requests",
                ColumnData::Int64(Array::from_slice_on(&x, &cpu).unwrap()),
                Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
            )
            .unwrap();
            let r = col.rolling(o);
            let what = |s: &str| format!("{s} n={n} {o:?}");
            close(
                &host(&r.sum().unwrap()),
                &naive(&xf, &valid, o, SUM),
                &what("sum"),
            );
            close(
                &host(&r.mean().unwrap()),
                &naive(&xf, &valid, o, MEAN),
                &what("mean"),
            );
            close(
                &host(&r.min().unwrap()),
                &naive(&xf, &valid, o, MIN),
                &what("min"),
            );
            close(
                &host(&r.max().unwrap()),
                &naive(&xf, &valid, o, MAX),
                &what("max"),
            );
            assert_eq!(r.mean().unwrap().name(), "requests");
        }
    }

    #[test]
    fn float_columns_without_nulls_and_precision() {
        // Large values around small ones: a window's sum stays exact where global prefix sums
        // would cancel.
        let x: Vec<f64> = (0..1000)
            .map(|i| if i < 500 { 1e15 } else { 0.1 })
            .collect();
        let col = Column::from_slice_on("x", &x, &Device::Cpu).unwrap();
        let o = RollingOptions::new(3);
        let got = host(&col.rolling(o).sum().unwrap());
        close(&got, &naive(&x, &[true; 1000], o, SUM), "sum");
        assert!((got[999].unwrap() - 0.3).abs() < 1e-15);
        let f: Vec<f32> = vec![1.5, -2.0, 4.0];
        let c32 = Column::from_slice_on("f", &f, &Device::Cpu).unwrap();
        let m = host(
            &c32.rolling(RollingOptions::new(2).min_periods(1))
                .max()
                .unwrap(),
        );
        assert_eq!(m, [Some(1.5), Some(1.5), Some(4.0)]);
    }

    #[test]
    fn bad_options_and_types_are_errors_naming_the_column() {
        let cpu = Device::Cpu;
        let col = Column::from_slice_on("requests", &[1i64, 2], &cpu).unwrap();
        let e = col
            .rolling(RollingOptions::new(0))
            .mean()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rolling mean on column `requests`: the window must be at least 1"),
            "{e}"
        );
        let e = col
            .rolling(RollingOptions::new(2).min_periods(3))
            .sum()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("min_periods must be from 1 to the window (2), got 3"),
            "{e}"
        );
        let e = col
            .rolling(RollingOptions::new(2).min_periods(0))
            .sum()
            .unwrap_err()
            .to_string();
        assert!(e.contains("got 0"), "{e}");
        let s = Column::from_strs_on("title", &["a"], &cpu).unwrap();
        let e = s
            .rolling(RollingOptions::new(1))
            .max()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rolling max: column `title` is str, not a number"),
            "{e}"
        );
    }

    /// A rolling user function: the number of valid values in each window, as a kernel.
    #[kernel]
    fn window_count(values: &[f64], valid: &[u8], starts: &[i64], ends: &[i64], out: &mut [f64]) {
        for i in (grid(1)..out.len()).step_by(gridsize(1)) {
            let mut c = 0.0f64;
            for j in (starts[i] as usize)..(ends[i] as usize) {
                if valid[j] == 1 && values[j] == values[j] {
                    c += 1.0;
                }
            }
            out[i] = c;
        }
    }

    #[test]
    fn apply_runs_a_user_kernel_over_windows() {
        let mut rng = StdRng::seed_from_u64(5);
        for n in [0usize, 1, 2, 50] {
            let x: Vec<f32> = (0..n).map(|_| rng.random_range(-5.0..5.0)).collect();
            let valid: Vec<bool> = (0..n).map(|_| rng.random_bool(0.7)).collect();
            let cpu = Device::Cpu;
            let col = Column::new(
                "v",
                ColumnData::Float32(Array::from_slice_on(&x, &cpu).unwrap()),
                Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
            )
            .unwrap();
            let o = RollingOptions::new(4).min_periods(2).center(true);
            let got = host(
                &col.rolling(o)
                    .apply(|cfg, w| {
                        window_count.launch(cfg, w.values, w.valid, w.starts, w.ends, w.out)
                    })
                    .unwrap(),
            );
            let ones = vec![1.0; n];
            close(&got, &naive(&ones, &valid, o, SUM), "count");
        }
    }
}
