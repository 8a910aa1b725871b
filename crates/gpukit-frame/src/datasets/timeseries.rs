//! A random time series in the spirit of Dask's `dask.datasets.timeseries`: one row per second
//! with the columns
//!
//! | column | type | values |
//! |---|---|---|
//! | `timestamp` | `datetime[s]` | one per second from [`Timeseries::start`] (2000-01-01 by default) |
//! | `id` | `i64` | Poisson-like around 1000 (a normal with mean and variance 1000, rounded) |
//! | `name` | `str` | one of 26 first names ([`NAMES`]), uniformly |
//! | `x`, `y` | `f64` | uniform in [-1, 1) |
//!
//! The rows come in partitions of [`Timeseries::rows_per_partition`] rows (one day, 86 400, by
//! default): partition `i` covers the seconds after the previous one's and draws from its own
//! SplitMix64 stream seeded from `(seed, i)`, so every partition can be made on its own (on
//! any device, in any order, by any worker) and is the same each time. Generation runs on the
//! host; each column then moves to the device in one copy.
//!
//! ```
//! use gpukit::Device;
//! use gpukit_frame::datasets::timeseries::timeseries;
//! # fn main() -> gpukit_frame::Result<()> {
//! let ts = timeseries(30, 42);                  // 30 days: 2_592_000 rows
//! assert_eq!(ts.rows(), 2_592_000);
//! let day3 = ts.partition(3, &Device::Cpu)?;    // made alone, the same every time
//! assert_eq!(day3.names(), ["timestamp", "id", "name", "x", "y"]);
//! assert_eq!(day3.height(), 86_400);
//! let small = timeseries(4, 1).with_rows_per_partition(1000);
//! assert_eq!(small.frame(&Device::Cpu)?.height(), 4000);
//! # Ok(()) }
//! ```

use gpukit::Device;

use crate::column::{Column, ColumnData};
use crate::dtype::TimeUnit;
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

use super::splitmix::{mix, SplitMix64};

/// The first names of the `name` column, one per letter.
pub const NAMES: [&str; 26] = [
    "Alice", "Bob", "Charlie", "Dan", "Edith", "Frank", "George", "Hannah", "Ingrid", "Jerry",
    "Kevin", "Laura", "Michael", "Norbert", "Oliver", "Patricia", "Quinn", "Ray", "Sarah", "Tim",
    "Ursula", "Victor", "Wendy", "Xavier", "Yvonne", "Zelda",
];

/// 2000-01-01T00:00:00 UTC in seconds since the epoch.
pub const DEFAULT_START: i64 = 946_684_800;

/// Seconds in a day: the default partition length.
pub const SECONDS_PER_DAY: usize = 86_400;

/// A partitioned random time series (see the module documentation); [`timeseries`] makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeseries {
    n_partitions: usize,
    rows_per_partition: usize,
    start: i64,
    seed: u64,
}

/// `n_partitions` partitions of one day each (86 400 rows, one per second) from 2000-01-01,
/// drawn from `seed`.
pub fn timeseries(n_partitions: usize, seed: u64) -> Timeseries {
    Timeseries {
        n_partitions,
        rows_per_partition: SECONDS_PER_DAY,
        start: DEFAULT_START,
        seed,
    }
}

impl Timeseries {
    /// The same series with `rows` rows (seconds) in each partition.
    pub fn with_rows_per_partition(mut self, rows: usize) -> Timeseries {
        self.rows_per_partition = rows;
        self
    }

    /// The same series starting at `seconds` since 1970-01-01 UTC.
    pub fn with_start(mut self, seconds: i64) -> Timeseries {
        self.start = seconds;
        self
    }

    /// Number of partitions.
    pub fn n_partitions(&self) -> usize {
        self.n_partitions
    }

    /// Rows of each partition.
    pub fn rows_per_partition(&self) -> usize {
        self.rows_per_partition
    }

    /// The first timestamp, in seconds since 1970-01-01 UTC.
    pub fn start(&self) -> i64 {
        self.start
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Rows of all partitions together.
    pub fn rows(&self) -> usize {
        self.n_partitions * self.rows_per_partition
    }

    /// Partition `i` on `device`; an error naming the count when `i` is not below
    /// [`Timeseries::n_partitions`].
    pub fn partition(&self, i: usize, device: &Device) -> Result<DataFrame> {
        if i >= self.n_partitions {
            return Err(FrameError::Input(format!(
                "timeseries partition {i} does not exist: the series has {} partitions",
                self.n_partitions
            )));
        }
        let n = self.rows_per_partition;
        let first = self.start + (i as i64) * (n as i64);
        let mut rng = SplitMix64(mix(self.seed ^ mix(i as u64 ^ 0x7469_6D65_7365_7269)));
        let timestamps: Vec<i64> = (0..n as i64).map(|s| first + s).collect();
        let mut ids = Vec::with_capacity(n);
        let mut offsets = Vec::with_capacity(n + 1);
        let mut bytes = Vec::with_capacity(n * 6);
        let mut xs = Vec::with_capacity(n);
        let mut ys = Vec::with_capacity(n);
        offsets.push(0i64);
        let sd = 1000f64.sqrt();
        for _ in 0..n {
            ids.push((1000.0 + sd * rng.normal()).round().max(0.0) as i64);
            let name = NAMES[(rng.next_u64() % NAMES.len() as u64) as usize];
            bytes.extend_from_slice(name.as_bytes());
            offsets.push(bytes.len() as i64);
            xs.push(rng.signed_unit());
            ys.push(rng.signed_unit());
        }
        let ts = gpukit::Array::from_vec_on(timestamps, vec![n], device)?;
        let names = Utf8Data::from_parts_unchecked(
            gpukit::Array::from_vec_on(offsets, vec![n + 1], device)?,
            gpukit::Array::from_vec_on(bytes.clone(), vec![bytes.len()], device)?,
        );
        DataFrame::new(vec![
            Column::new(
                "timestamp",
                ColumnData::Timestamp(ts, TimeUnit::Second),
                None,
            )?,
            Column::from_array("id", gpukit::Array::from_vec_on(ids, vec![n], device)?)?,
            Column::new("name", ColumnData::Utf8(names), None)?,
            Column::from_array("x", gpukit::Array::from_vec_on(xs, vec![n], device)?)?,
            Column::from_array("y", gpukit::Array::from_vec_on(ys, vec![n], device)?)?,
        ])
    }

    /// Every partition, one after the other, as one frame on `device` (for comparisons with a
    /// single device; a partitioned frame makes the partitions where they are used).
    pub fn frame(&self, device: &Device) -> Result<DataFrame> {
        if self.n_partitions == 0 {
            // no rows, the same columns
            let empty = Timeseries {
                n_partitions: 1,
                rows_per_partition: 0,
                ..*self
            };
            return empty.partition(0, device);
        }
        let parts = (0..self.n_partitions)
            .map(|i| self.partition(i, device))
            .collect::<Result<Vec<_>>>()?;
        if parts.len() == 1 {
            return Ok(parts.into_iter().next().expect("one partition"));
        }
        concat_on_host(&parts, device)
    }
}

/// Partitions of this module's schema joined on the host, then copied to `device`.
fn concat_on_host(parts: &[DataFrame], device: &Device) -> Result<DataFrame> {
    let mut ts = Vec::new();
    let mut ids = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for p in parts {
        ts.extend(p.column("timestamp")?.values::<i64>()?.to_vec()?);
        ids.extend(p.column("id")?.values::<i64>()?.to_vec()?);
        match p.column("name")?.data() {
            ColumnData::Utf8(s) => names.extend(s.to_strings()?),
            other => {
                return Err(FrameError::Type(format!(
                    "timeseries column `name` is {}, not a string",
                    other.dtype()
                )))
            }
        }
        xs.extend(p.column("x")?.values::<f64>()?.to_vec()?);
        ys.extend(p.column("y")?.values::<f64>()?.to_vec()?);
    }
    let n = ts.len();
    DataFrame::new(vec![
        Column::new(
            "timestamp",
            ColumnData::Timestamp(
                gpukit::Array::from_vec_on(ts, vec![n], device)?,
                TimeUnit::Second,
            ),
            None,
        )?,
        Column::from_slice_on("id", &ids, device)?,
        Column::from_strs_on("name", &names, device)?,
        Column::from_slice_on("x", &xs, device)?,
        Column::from_slice_on("y", &ys, device)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_reproducible_independent_and_consecutive() {
        let cpu = Device::Cpu;
        let ts = timeseries(3, 7).with_rows_per_partition(500);
        let a = ts.partition(1, &cpu).unwrap();
        let b = ts.partition(1, &cpu).unwrap();
        let x = |f: &DataFrame, c: &str| {
            f.column(c)
                .unwrap()
                .values::<f64>()
                .unwrap()
                .to_vec()
                .unwrap()
        };
        assert_eq!(x(&a, "x"), x(&b, "x"));
        assert_ne!(x(&a, "x"), x(&ts.partition(0, &cpu).unwrap(), "x"));
        assert_ne!(
            x(&a, "x"),
            x(
                &timeseries(3, 8)
                    .with_rows_per_partition(500)
                    .partition(1, &cpu)
                    .unwrap(),
                "x"
            )
        );
        let t = a
            .column("timestamp")
            .unwrap()
            .values::<i64>()
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(t[0], DEFAULT_START + 500);
        assert!(t.windows(2).all(|w| w[1] == w[0] + 1));
        assert_eq!(
            a.column("timestamp").unwrap().dtype(),
            crate::FrameDType::Timestamp(TimeUnit::Second)
        );
        let whole = ts.frame(&cpu).unwrap();
        assert_eq!(whole.height(), 1500);
        let wx = x(&whole, "x");
        assert_eq!(&wx[500..1000], &x(&a, "x")[..]);
    }

    #[test]
    fn values_have_the_documented_ranges() {
        let df = timeseries(1, 3)
            .with_rows_per_partition(20_000)
            .partition(0, &Device::Cpu)
            .unwrap();
        for c in ["x", "y"] {
            let v = df
                .column(c)
                .unwrap()
                .values::<f64>()
                .unwrap()
                .to_vec()
                .unwrap();
            assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            assert!(mean.abs() < 0.03, "{c} mean {mean}");
        }
        let ids = df
            .column("id")
            .unwrap()
            .values::<i64>()
            .unwrap()
            .to_vec()
            .unwrap();
        let mean = ids.iter().sum::<i64>() as f64 / ids.len() as f64;
        let var = ids.iter().map(|&i| (i as f64 - mean).powi(2)).sum::<f64>() / ids.len() as f64;
        assert!((mean - 1000.0).abs() < 2.0, "{mean}");
        assert!((var / 1000.0 - 1.0).abs() < 0.1, "{var}");
        let names = match df.column("name").unwrap().data() {
            ColumnData::Utf8(s) => s.to_strings().unwrap(),
            _ => unreachable!(),
        };
        for n in NAMES {
            assert!(names.iter().any(|m| m == n), "{n} never drawn");
        }
        assert!(names.iter().all(|m| NAMES.contains(&m.as_str())));
    }

    #[test]
    fn a_missing_partition_is_an_error_naming_the_count() {
        let e = timeseries(2, 0)
            .partition(2, &Device::Cpu)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 partitions"), "{e}");
        assert_eq!(timeseries(0, 0).frame(&Device::Cpu).unwrap().height(), 0);
    }
}
