//! Frames of one schema joined row-wise on one device (Polars' `pl.concat`, vertical).
//!
//! Values are copied to the target device and joined there with gpukit's `concatenate`. A
//! string column's offsets are rebased on the host (each partition's offsets shifted by the
//! bytes before it) and its bytes joined on the device; validity bitmaps, where any partition
//! has nulls, are rebuilt on the host.

use super::check_schemas;
use gpukit::{Array, Device, Element};
use gpukit_frame::{Bitmap, Column, ColumnData, DataFrame, FrameError, Result, Utf8Data};

/// `frames` (at least one, all with the same columns in the same order and types) one after
/// the other, as one frame on `device`.
///
/// ```
/// use gpukit::Device;
/// use gpukit_frame::{Column, DataFrame};
/// # fn main() -> gpukit_frame::Result<()> {
/// let cpu = Device::Cpu;
/// let a = DataFrame::new(vec![Column::from_strs_on("s", &["a", "bc"], &cpu)?])?;
/// let b = DataFrame::new(vec![Column::from_strs_on("s", &["d"], &cpu)?])?;
/// let ab = gpukit_multi::frame::concat(&[&a, &b], &cpu)?;
/// assert_eq!(ab.height(), 3);
/// # Ok(()) }
/// ```
pub fn concat(frames: &[&DataFrame], device: &Device) -> Result<DataFrame> {
    check_schemas(frames.iter().copied())?;
    let first = frames[0];
    let mut out = Vec::with_capacity(first.width());
    for (c, col0) in first.columns().iter().enumerate() {
        let cols: Vec<&Column> = frames.iter().map(|f| &f.columns()[c]).collect();
        let data = concat_data(&cols, device)?;
        let validity = if cols.iter().any(|c| c.validity().is_some()) {
            let mut bools = Vec::with_capacity(data.len());
            for c in &cols {
                match c.validity() {
                    Some(v) => bools.extend(v.to_bools()?),
                    None => bools.extend(std::iter::repeat_n(true, c.len())),
                }
            }
            Some(Bitmap::from_bools_on(&bools, device)?)
        } else {
            None
        };
        out.push(Column::new(col0.name(), data, validity)?);
    }
    DataFrame::new(out)
}

fn join<T: Element>(arrays: Vec<&Array<T>>, device: &Device) -> Result<Array<T>> {
    let moved = arrays
        .into_iter()
        .map(|a| {
            if a.device() == *device {
                a.try_clone()
            } else {
                a.to_device(device)
            }
        })
        .collect::<gpukit::Result<Vec<_>>>()?;
    let refs: Vec<&Array<T>> = moved.iter().collect();
    Ok(gpukit::concatenate(&refs, 0)?)
}

/// Picks the arrays of one variant out of every column's data (the schemas were checked).
macro_rules! pick {
    ($cols:expr, $variant:ident $(, $unit:ident)?) => {
        $cols
            .iter()
            .map(|c| match c.data() {
                ColumnData::$variant(a $(, $unit)?) => Ok(a),
                other => Err(FrameError::Type(format!(
                    "column `{}` is {} in one partition and {} in another",
                    c.name(),
                    stringify!($variant),
                    other.dtype()
                ))),
            })
            .collect::<Result<Vec<_>>>()?
    };
}

fn concat_data(cols: &[&Column], device: &Device) -> Result<ColumnData> {
    Ok(match cols[0].data() {
        ColumnData::Bool(_) => ColumnData::Bool(join(pick!(cols, Bool), device)?),
        ColumnData::Int32(_) => ColumnData::Int32(join(pick!(cols, Int32), device)?),
        ColumnData::Int64(_) => ColumnData::Int64(join(pick!(cols, Int64), device)?),
        ColumnData::UInt32(_) => ColumnData::UInt32(join(pick!(cols, UInt32), device)?),
        ColumnData::UInt64(_) => ColumnData::UInt64(join(pick!(cols, UInt64), device)?),
        ColumnData::Float32(_) => ColumnData::Float32(join(pick!(cols, Float32), device)?),
        ColumnData::Float64(_) => ColumnData::Float64(join(pick!(cols, Float64), device)?),
        ColumnData::Date(_) => ColumnData::Date(join(pick!(cols, Date), device)?),
        ColumnData::Timestamp(_, unit) => {
            ColumnData::Timestamp(join(pick!(cols, Timestamp, _u), device)?, *unit)
        }
        ColumnData::Utf8(_) => {
            let parts = pick!(cols, Utf8);
            let mut offsets = vec![0i64];
            let mut base = 0i64;
            for s in &parts {
                let o = s.offsets().to_vec()?;
                offsets.extend(o[1..].iter().map(|x| x - o[0] + base));
                base += o[o.len() - 1] - o[0];
            }
            let bytes = join(parts.iter().map(|s| s.bytes()).collect(), device)?;
            let n = offsets.len();
            let offsets = Array::from_vec_on(offsets, vec![n], device)?;
            ColumnData::Utf8(Utf8Data::from_parts_unchecked(offsets, bytes))
        }
    })
}
