//! One aggregation over grouped rows, on the device: the column's values (and validity) are
//! gathered into group order, then reduced in two levels (pieces of at most 256 rows, then each
//! group's pieces; see `segments`). Integer sums accumulate in 64 bits; float sums, means and
//! standard deviations in `f64`, in a fixed order (no float atomics), so results are the same
//! bits on every run and on both backends. `min`/`max` pick a position per piece, then per group. `min`/`max`/`first` find a row per group and gather it (any type, strings
//! included); `n_unique` ranks (group, value) pairs and counts each group's distinct ones.

use gpukit::Array;

use super::agg::{Agg, AggKind};
use super::gather::{pack, take_column, valid_bytes};
use super::kernels::{cfg, gb_at_least, gb_count_firsts, gb_seg_len};
use super::keys::Groups;
use super::rank::{column_codes, combine, dense_rank, string_codes};
use super::segments;
use super::typed::{go, rows_at, GroupElem};
use crate::column::{Column, ColumnData};
use crate::error::Result;

/// A `u32` column of `n` zeros filled by a per-group kernel.
fn u32_zeros(groups: &Groups, col_dev: &gpukit::Device) -> Result<Array<u32>> {
    Ok(Array::<u32>::zeros_on(groups.n_groups, col_dev)?)
}

/// Rows per group (nulls included), `u32`.
pub(crate) fn group_lens(groups: &Groups, dev: &gpukit::Device) -> Result<Array<u32>> {
    let mut out = u32_zeros(groups, dev)?;
    go!(gb_seg_len, groups.n_groups, &groups.starts, &mut out);
    Ok(out)
}

/// Column `col` (`None` for `len`) aggregated per group by `agg`; the type was checked.
pub(crate) fn aggregate(
    groups: &Groups,
    col: Option<&Column>,
    agg: &Agg,
    dev: &gpukit::Device,
) -> Result<Column> {
    let name = agg.output_name();
    let g = groups.n_groups;
    let Some(col) = col else {
        return Column::from_array(name, group_lens(groups, dev)?);
    };
    let valid_sorted = || u8::gather(&valid_bytes(col)?, &groups.perm);
    match agg.kind() {
        AggKind::Len => Column::from_array(name, group_lens(groups, dev)?),
        AggKind::Count => {
            let v = valid_sorted()?;
            Column::from_array(name, segments::count(&v, &groups.pieces)?.astype::<u32>()?)
        }
        AggKind::First => {
            let rows = rows_at(&groups.perm, &groups.starts, g)?;
            take_column(col, &rows, None, name)
        }
        AggKind::NUnique => {
            let (vcodes, bound) = column_codes(col)?;
            let pairs = combine(&groups.codes, g as u64, &vcodes, bound)?;
            let r = dense_rank(&pairs)?;
            let group_of = u64::gather(&groups.codes, &r.perm)?;
            let mut out = u32_zeros(groups, dev)?;
            go!(
                gb_count_firsts,
                col.len(),
                &r.sorted_codes,
                &group_of,
                &mut out
            );
            Column::from_array(name, out)
        }
        AggKind::Min | AggKind::Max => {
            let max = agg.kind() == AggKind::Max;
            let v = valid_sorted()?;
            let (pos, found) = match col.data() {
                ColumnData::Bool(a) => extreme(&a.astype::<u8>()?, groups, &v, max)?,
                ColumnData::Int32(a) | ColumnData::Date(a) => extreme(a, groups, &v, max)?,
                ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => extreme(a, groups, &v, max)?,
                ColumnData::UInt32(a) => extreme(a, groups, &v, max)?,
                ColumnData::UInt64(a) => extreme(a, groups, &v, max)?,
                ColumnData::Float32(a) => extreme(a, groups, &v, max)?,
                ColumnData::Float64(a) => extreme(a, groups, &v, max)?,
                ColumnData::Utf8(s) => extreme(&string_codes(s)?.0, groups, &v, max)?,
            };
            let rows = rows_at(&groups.perm, &pos, g)?;
            take_column(col, &rows, Some(&found), name)
        }
        AggKind::Sum => {
            let v = valid_sorted()?;
            let data = match col.data() {
                ColumnData::Bool(a) => ColumnData::UInt32(sum(&a.astype::<u8>()?, groups, &v)?),
                ColumnData::Int32(a) => ColumnData::Int64(sum(a, groups, &v)?),
                ColumnData::Int64(a) => ColumnData::Int64(sum(a, groups, &v)?),
                ColumnData::UInt32(a) => ColumnData::UInt64(sum(a, groups, &v)?),
                ColumnData::UInt64(a) => ColumnData::UInt64(sum(a, groups, &v)?),
                ColumnData::Float32(a) => ColumnData::Float32(sum(a, groups, &v)?.astype::<f32>()?),
                ColumnData::Float64(a) => ColumnData::Float64(sum(a, groups, &v)?),
                _ => return Err(agg.type_error(col.dtype())),
            };
            Column::new(name, data, None)
        }
        AggKind::Mean | AggKind::Std => {
            let v = valid_sorted()?;
            let (cnt, mean, std) = match col.data() {
                ColumnData::Bool(a) => moments(&a.astype::<u8>()?, groups, &v)?,
                ColumnData::Int32(a) => moments(a, groups, &v)?,
                ColumnData::Int64(a) => moments(a, groups, &v)?,
                ColumnData::UInt32(a) => moments(a, groups, &v)?,
                ColumnData::UInt64(a) => moments(a, groups, &v)?,
                ColumnData::Float32(a) => moments(a, groups, &v)?,
                ColumnData::Float64(a) => moments(a, groups, &v)?,
                _ => return Err(agg.type_error(col.dtype())),
            };
            let (values, need) = if agg.kind() == AggKind::Mean {
                (mean, 1i64)
            } else {
                (std, 2i64)
            };
            let mut ok = Array::<u8>::zeros_on(g, dev)?;
            go!(gb_at_least, g, &cnt, need, &mut ok);
            Column::new(name, ColumnData::Float64(values), pack(&ok)?)
        }
    }
}

fn extreme<T: GroupElem>(
    a: &Array<T>,
    groups: &Groups,
    valid_sorted: &Array<u8>,
    max: bool,
) -> Result<(Array<i64>, Array<u8>)> {
    let sorted = T::gather(a, &groups.perm)?;
    segments::extreme(&sorted, valid_sorted, &groups.pieces, max)
}

fn sum<T: GroupElem>(
    a: &Array<T>,
    groups: &Groups,
    valid_sorted: &Array<u8>,
) -> Result<Array<T::Acc>> {
    let sorted = T::gather(a, &groups.perm)?;
    segments::sum(&sorted, valid_sorted, &groups.pieces)
}

fn moments<T: GroupElem>(
    a: &Array<T>,
    groups: &Groups,
    valid_sorted: &Array<u8>,
) -> Result<(Array<i64>, Array<f64>, Array<f64>)> {
    let sorted = T::gather(a, &groups.perm)?;
    segments::moments(&sorted, valid_sorted, &groups.pieces)
}
