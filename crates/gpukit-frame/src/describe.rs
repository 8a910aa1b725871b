//! [`DataFrame::describe`]: summary statistics of the numeric and boolean columns, in Polars'
//! layout — a `statistic` string column (`count`, `null_count`, `mean`, `std`, `min`, `25%`,
//! `50%`, `75%`, `max`) and one `f64` column per described column.
//!
//! The reductions run on the device with the group-by kernels (the whole column as one group):
//! count, mean and standard deviation (ddof = 1, `f64`, in a fixed order), the minimum and maximum
//! (nulls and NaN skipped), and the percentiles from a stable sort of the column's codes
//! (nulls first, NaN last). Only the nine numbers per column come back to the host.
//!
//! Percentiles use Polars' default interpolation for `describe`, `nearest`: the value at sorted
//! position `round(q * (count - 1))` among the non-null values (`round` half away from zero).
//! Booleans are described as 0/1 (count, nulls, mean, min, max) without standard deviation and
//! percentiles (null there), as Polars. Other columns (strings, dates, timestamps) are left
//! out: a column here has one type, and Polars describes those with strings.

use gpukit::{Array, Device};

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::error::Result;
use crate::frame::DataFrame;
use crate::group_by::{column_codes, moments, pieces, valid_bytes, GroupElem};

/// The row names of [`DataFrame::describe`], in order.
pub const DESCRIBE_STATISTICS: [&str; 9] = [
    "count",
    "null_count",
    "mean",
    "std",
    "min",
    "25%",
    "50%",
    "75%",
    "max",
];

/// The percentiles `describe` reports.
const PERCENTILES: [f64; 3] = [0.25, 0.5, 0.75];

impl DataFrame {
    /// Summary statistics of every numeric and boolean column (see the module docs): a frame
    /// of 9 rows with a `statistic` column first. A statistic that does not exist (the mean of
    /// no values, the deviation of fewer than two) is null.
    pub fn describe(&self) -> Result<DataFrame> {
        let dev = self.device().unwrap_or(Device::Cpu);
        let mut out = vec![Column::from_strs_on(
            "statistic",
            &DESCRIBE_STATISTICS,
            &dev,
        )?];
        for col in self.columns() {
            let stats = match col.data() {
                ColumnData::Bool(a) => describe_values(col, &a.astype::<u8>()?, false)?,
                ColumnData::Int32(a) => describe_values(col, a, true)?,
                ColumnData::Int64(a) => describe_values(col, a, true)?,
                ColumnData::UInt32(a) => describe_values(col, a, true)?,
                ColumnData::UInt64(a) => describe_values(col, a, true)?,
                ColumnData::Float32(a) => describe_values(col, a, true)?,
                ColumnData::Float64(a) => describe_values(col, a, true)?,
                _ => continue,
            };
            let values: Vec<f64> = stats.iter().map(|s| s.unwrap_or(0.0)).collect();
            let valid: Vec<bool> = stats.iter().map(Option::is_some).collect();
            out.push(Column::new(
                col.name(),
                ColumnData::Float64(Array::from_slice_on(&values, &dev)?),
                Some(Bitmap::from_bools_on(&valid, &dev)?),
            )?);
        }
        DataFrame::new(out)
    }
}

/// The values at `idx` of `vals`, as `f64` on the host.
fn values_at<T: GroupElem>(vals: &Array<T>, idx: &Array<i64>) -> Result<Vec<f64>> {
    Ok(T::gather(vals, idx)?.astype::<f64>()?.to_vec()?)
}

/// The nine statistics of one column whose values are `vals`; `numeric` false (a boolean
/// column) leaves the standard deviation and the percentiles null, as Polars.
fn describe_values<T: GroupElem>(
    col: &Column,
    vals: &Array<T>,
    numeric: bool,
) -> Result<[Option<f64>; 9]> {
    let dev = col.device();
    let n = col.len();
    let nulls = col.null_count();
    let count = n - nulls;
    let mut s = [None; 9];
    s[0] = Some(count as f64);
    s[1] = Some(nulls as f64);
    if count == 0 {
        return Ok(s);
    }
    let starts = Array::from_slice_on(&[0i64, n as i64], &dev)?;
    let one_group = Array::<u64>::zeros_on(n, &dev)?;
    let valid = valid_bytes(col)?;
    let (_, mean, std) = moments(vals, &valid, &pieces(&starts, &one_group, 1)?)?;
    s[2] = Some(mean.to_vec()?[0]);
    s[3] = (numeric && count > 1).then_some(std.to_vec()?[0]);
    let (lo, _) = T::seg_extreme(vals, &valid, &starts, false)?;
    let (hi, _) = T::seg_extreme(vals, &valid, &starts, true)?;
    s[4] = Some(values_at(vals, &lo)?[0]);
    s[8] = Some(values_at(vals, &hi)?[0]);
    if numeric {
        let (codes, _) = column_codes(col)?;
        let order = codes.argsort()?;
        let pos: Vec<i64> = PERCENTILES
            .iter()
            .map(|q| nulls as i64 + (q * (count - 1) as f64).round() as i64)
            .collect();
        let rows = i64::gather(&order, &Array::from_slice_on(&pos, &dev)?)?;
        for (k, v) in values_at(vals, &rows)?.into_iter().enumerate() {
            s[5 + k] = Some(v);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
        let c = df.column(name).unwrap();
        let v = c.values::<f64>().unwrap().to_vec().unwrap();
        let ok = c
            .validity()
            .map(|b| b.to_bools().unwrap())
            .unwrap_or(vec![true; v.len()]);
        v.into_iter()
            .zip(ok)
            .map(|(v, ok)| ok.then_some(v))
            .collect()
    }

    #[test]
    fn describe_matches_polars_layout_and_values() {
        let cpu = Device::Cpu;
        let df = DataFrame::new(vec![
            Column::from_slice_on("a", &[1i64, 2, 3, 4, 5], &cpu).unwrap(),
            Column::new(
                "b",
                ColumnData::Float64(
                    Array::from_slice_on(&[1.0, 2.8, 0.0, 3.0, f64::NAN], &cpu).unwrap(),
                ),
                Some(Bitmap::from_bools_on(&[true, true, false, true, true], &cpu).unwrap()),
            )
            .unwrap(),
            Column::from_strs_on("s", &["x", "y", "z", "w", "v"], &cpu).unwrap(),
            Column::from_slice_on("t", &[true, false, true, true, false], &cpu).unwrap(),
        ])
        .unwrap();
        let d = df.describe().unwrap();
        assert_eq!(d.names(), ["statistic", "a", "b", "t"]);
        let ColumnData::Utf8(names) = d.column("statistic").unwrap().data() else {
            panic!()
        };
        assert_eq!(names.to_strings().unwrap(), DESCRIBE_STATISTICS);
        // Polars: pl.Series([1, 2, 3, 4, 5]).describe()
        let a = stats(&d, "a");
        let want = [5.0, 0.0, 3.0, 1.5811388300841898, 1.0, 2.0, 3.0, 4.0, 5.0];
        for (got, want) in a.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{a:?}");
        }
        // nulls skipped; NaN poisons the mean and sorts last; min/max skip NaN
        let b = stats(&d, "b");
        assert_eq!(b[0..2], [Some(4.0), Some(1.0)]);
        assert!(b[2].unwrap().is_nan() && b[3].unwrap().is_nan());
        assert_eq!(
            b[4..],
            [Some(1.0), Some(2.8), Some(3.0), Some(3.0), Some(3.0)]
        );
        let t = stats(&d, "t");
        assert_eq!(t[4], Some(0.0));
        assert_eq!(t[8], Some(1.0));
        assert_eq!(t[5..8], [None, None, None]);
        assert_eq!(t[3], None, "Polars gives booleans no standard deviation");
        assert!((t[2].unwrap() - 0.6).abs() < 1e-12);
    }

    #[test]
    fn describe_of_empty_and_all_null_columns() {
        let cpu = Device::Cpu;
        let empty =
            DataFrame::new(vec![Column::from_slice_on::<f64>("x", &[], &cpu).unwrap()]).unwrap();
        let d = empty.describe().unwrap();
        assert_eq!(stats(&d, "x")[..3], [Some(0.0), Some(0.0), None]);
        let nulls = DataFrame::new(vec![Column::new(
            "x",
            ColumnData::Int32(Array::from_slice_on(&[7i32, 8], &cpu).unwrap()),
            Some(Bitmap::from_bools_on(&[false, false], &cpu).unwrap()),
        )
        .unwrap()])
        .unwrap();
        let s = stats(&nulls.describe().unwrap(), "x");
        assert_eq!(s[..2], [Some(0.0), Some(2.0)]);
        assert!(s[2..].iter().all(Option::is_none));
        let one =
            DataFrame::new(vec![Column::from_slice_on("x", &[2.5f32], &cpu).unwrap()]).unwrap();
        let s = stats(&one.describe().unwrap(), "x");
        assert_eq!(s[2], Some(2.5));
        assert_eq!(s[3], None);
        assert_eq!(s[5..], [Some(2.5); 4]);
    }
}
