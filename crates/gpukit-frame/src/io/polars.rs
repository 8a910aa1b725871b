//! Polars interop (cargo feature `polars`): [`DataFrame::from_polars`] and
//! [`DataFrame::to_polars`].
//!
//! Where it runs: on the host. A Polars frame lives in host memory, so its columns are gathered
//! into one host buffer each and copied to the device (and back the other way). The feature
//! builds only `polars-core` (the crate that defines the `DataFrame` that `polars::prelude`
//! re-exports, so a notebook's `polars` frames are these), with `default-features = false` and
//! only `dtype-date` and `dtype-datetime`.
//!
//! Types: Polars `Boolean`, `Int32`, `Int64`, `UInt32`, `UInt64`, `Float32`, `Float64`,
//! `String`, `Date` and `Datetime(unit, None)` map to the frame types of the same names.
//! Polars has no seconds unit, so a `datetime[s]` column becomes `Datetime(Milliseconds)` (its
//! values times 1000). Other Polars types (small integers, time-zoned datetimes, lists,
//! categoricals, ...) are an error naming the column and type.

use polars::prelude as pl;
use polars::prelude::{IntoColumn, NamedFrom};

use gpukit::{Array, Device};

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData, ColumnElement};
use crate::dtype::TimeUnit;
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

fn polars_err(column: &str, e: pl::PolarsError) -> FrameError {
    FrameError::Type(format!("column `{column}`: {e}"))
}

/// Values (nulls as the type's default) and validity of an iterator of options, on `device`.
fn gather<T: ColumnElement + Default>(
    name: &str,
    it: impl Iterator<Item = Option<T>>,
    wrap: impl FnOnce(Array<T>) -> ColumnData,
    device: &Device,
) -> Result<Column> {
    let (mut values, mut valid) = (Vec::new(), Vec::new());
    for v in it {
        valid.push(v.is_some());
        values.push(v.unwrap_or_default());
    }
    let n = values.len();
    let validity = if valid.iter().all(|v| *v) {
        None
    } else {
        Some(Bitmap::from_bools_on(&valid, device)?)
    };
    Column::new(
        name,
        wrap(Array::from_vec_on(values, [n], device)?),
        validity,
    )
}

fn from_series(s: &pl::Series, device: &Device) -> Result<Column> {
    let name = s.name().as_str();
    let e = |err| polars_err(name, err);
    match s.dtype() {
        pl::DataType::Boolean => {
            gather(name, s.bool().map_err(e)?.iter(), ColumnData::Bool, device)
        }
        pl::DataType::Int32 => gather(name, s.i32().map_err(e)?.iter(), ColumnData::Int32, device),
        pl::DataType::Int64 => gather(name, s.i64().map_err(e)?.iter(), ColumnData::Int64, device),
        pl::DataType::UInt32 => {
            gather(name, s.u32().map_err(e)?.iter(), ColumnData::UInt32, device)
        }
        pl::DataType::UInt64 => {
            gather(name, s.u64().map_err(e)?.iter(), ColumnData::UInt64, device)
        }
        pl::DataType::Float32 => gather(
            name,
            s.f32().map_err(e)?.iter(),
            ColumnData::Float32,
            device,
        ),
        pl::DataType::Float64 => gather(
            name,
            s.f64().map_err(e)?.iter(),
            ColumnData::Float64,
            device,
        ),
        pl::DataType::Date => gather(
            name,
            s.date().map_err(e)?.physical().iter(),
            ColumnData::Date,
            device,
        ),
        pl::DataType::Datetime(tu, None) => {
            let unit = match tu {
                pl::TimeUnit::Milliseconds => TimeUnit::Millisecond,
                pl::TimeUnit::Microseconds => TimeUnit::Microsecond,
                pl::TimeUnit::Nanoseconds => TimeUnit::Nanosecond,
            };
            gather(
                name,
                s.datetime().map_err(e)?.physical().iter(),
                |a| ColumnData::Timestamp(a, unit),
                device,
            )
        }
        pl::DataType::String => {
            let ca = s.str().map_err(e)?;
            let mut offsets = Vec::with_capacity(ca.len() + 1);
            let mut bytes = Vec::new();
            let mut valid = Vec::with_capacity(ca.len());
            offsets.push(0i64);
            for v in ca.iter() {
                valid.push(v.is_some());
                bytes.extend_from_slice(v.unwrap_or("").as_bytes());
                offsets.push(bytes.len() as i64);
            }
            let (rows, nbytes) = (valid.len(), bytes.len());
            let validity = if valid.iter().all(|v| *v) {
                None
            } else {
                Some(Bitmap::from_bools_on(&valid, device)?)
            };
            let data = ColumnData::Utf8(Utf8Data::from_parts_unchecked(
                Array::from_vec_on(offsets, [rows + 1], device)?,
                Array::from_vec_on(bytes, [nbytes], device)?,
            ));
            Column::new(name, data, validity)
        }
        other => Err(FrameError::Type(format!(
            "column `{name}` has Polars type {other}, which frames do not support (supported: \
             bool, i32, i64, u32, u64, f32, f64, str, date, datetime without a time zone)"
        ))),
    }
}

/// `values` with `None` where `valid` is false.
fn options<T>(values: Vec<T>, valid: &Option<Vec<bool>>) -> Vec<Option<T>> {
    match valid {
        None => values.into_iter().map(Some).collect(),
        Some(b) => values
            .into_iter()
            .zip(b)
            .map(|(v, ok)| ok.then_some(v))
            .collect(),
    }
}

fn to_series(c: &Column) -> Result<pl::Series> {
    let name: pl::PlSmallStr = c.name().into();
    let valid = c.validity().map(Bitmap::to_bools).transpose()?;
    let cast = |s: pl::Series, t: pl::DataType| s.cast(&t).map_err(|e| polars_err(c.name(), e));
    Ok(match c.data() {
        ColumnData::Bool(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::Int32(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::Int64(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::UInt32(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::UInt64(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::Float32(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::Float64(a) => pl::Series::new(name, options(a.to_vec()?, &valid)),
        ColumnData::Date(a) => cast(
            pl::Series::new(name, options(a.to_vec()?, &valid)),
            pl::DataType::Date,
        )?,
        ColumnData::Timestamp(a, u) => {
            let (values, tu) = match u {
                TimeUnit::Second => (
                    a.to_vec()?
                        .into_iter()
                        .map(|v| v.saturating_mul(1000))
                        .collect(),
                    pl::TimeUnit::Milliseconds,
                ),
                TimeUnit::Millisecond => (a.to_vec()?, pl::TimeUnit::Milliseconds),
                TimeUnit::Microsecond => (a.to_vec()?, pl::TimeUnit::Microseconds),
                TimeUnit::Nanosecond => (a.to_vec()?, pl::TimeUnit::Nanoseconds),
            };
            cast(
                pl::Series::new(name, options(values, &valid)),
                pl::DataType::Datetime(tu, None),
            )?
        }
        ColumnData::Utf8(s) => pl::Series::new(name, options(s.to_strings()?, &valid)),
    })
}

impl DataFrame {
    /// A frame of a Polars frame's columns, copied to `device`. An error naming the column and
    /// type for a Polars type frames do not have (see the module doc).
    pub fn from_polars(frame: &pl::DataFrame, device: &Device) -> Result<DataFrame> {
        let columns = frame
            .columns()
            .iter()
            .map(|c| from_series(c.as_materialized_series(), device))
            .collect::<Result<Vec<_>>>()?;
        DataFrame::new(columns)
    }

    /// The frame as a Polars frame, copied to the host.
    pub fn to_polars(&self) -> Result<pl::DataFrame> {
        let columns = self
            .columns()
            .iter()
            .map(|c| to_series(c).map(IntoColumn::into_column))
            .collect::<Result<Vec<_>>>()?;
        pl::DataFrame::new(self.height(), columns)
            .map_err(|e| FrameError::Input(format!("building a Polars frame: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polars_frame() -> pl::DataFrame {
        let s = |name: &str, v: Vec<Option<i64>>| pl::Series::new(name.into(), v);
        let cols = vec![
            pl::Series::new("b".into(), vec![Some(true), None, Some(false)]),
            pl::Series::new("i32".into(), vec![Some(1i32), Some(-2), None]),
            s("i64", vec![None, Some(i64::MIN), Some(3)]),
            pl::Series::new("u32".into(), vec![1u32, 2, u32::MAX]),
            pl::Series::new("u64".into(), vec![Some(0u64), None, Some(u64::MAX)]),
            pl::Series::new("f32".into(), vec![Some(0.5f32), None, Some(-1.0)]),
            pl::Series::new("f64".into(), vec![Some(1e300f64), Some(-0.0), None]),
            pl::Series::new("s".into(), vec![Some("Zürich"), None, Some("日本語")]),
            pl::Series::new("d".into(), vec![Some(0i32), Some(19_753), None])
                .cast(&pl::DataType::Date)
                .unwrap(),
            s("t", vec![Some(1), None, Some(-1)])
                .cast(&pl::DataType::Datetime(pl::TimeUnit::Microseconds, None))
                .unwrap(),
        ];
        pl::DataFrame::new(3, cols.into_iter().map(IntoColumn::into_column).collect()).unwrap()
    }

    #[test]
    fn every_type_round_trips_with_nulls() {
        let p = polars_frame();
        let f = DataFrame::from_polars(&p, &Device::Cpu).unwrap();
        assert_eq!(f.shape(), (3, 10));
        assert_eq!(f.column("s").unwrap().null_count(), 1);
        assert_eq!(
            f.dtypes()[9],
            crate::FrameDType::Timestamp(TimeUnit::Microsecond)
        );
        let back = f.to_polars().unwrap();
        assert!(back.equals_missing(&p), "{back}\n{p}");
    }

    #[test]
    fn empty_frames_and_seconds_and_errors() {
        let empty = pl::DataFrame::new(0, vec![]).unwrap();
        assert_eq!(
            DataFrame::from_polars(&empty, &Device::Cpu)
                .unwrap()
                .shape(),
            (0, 0)
        );
        let none: Vec<Option<&str>> = vec![];
        let zero =
            pl::DataFrame::new(0, vec![pl::Series::new("s".into(), none).into_column()]).unwrap();
        let f = DataFrame::from_polars(&zero, &Device::Cpu).unwrap();
        assert_eq!(f.shape(), (0, 1));
        assert!(f.to_polars().unwrap().equals_missing(&zero));

        let secs = Column::new(
            "t",
            ColumnData::Timestamp(
                Array::from_slice_on(&[2i64], &Device::Cpu).unwrap(),
                TimeUnit::Second,
            ),
            None,
        )
        .unwrap();
        let p = DataFrame::new(vec![secs]).unwrap().to_polars().unwrap();
        let t = p.column("t").unwrap().as_materialized_series();
        assert_eq!(
            t.dtype(),
            &pl::DataType::Datetime(pl::TimeUnit::Milliseconds, None)
        );
        assert_eq!(t.datetime().unwrap().physical().get(0), Some(2000));

        let nulls = pl::Series::new_null("nothing".into(), 1);
        let p = pl::DataFrame::new(1, vec![nulls.into_column()]).unwrap();
        let e = DataFrame::from_polars(&p, &Device::Cpu)
            .unwrap_err()
            .to_string();
        assert!(e.contains("column `nothing` has Polars type null"), "{e}");
    }
}
