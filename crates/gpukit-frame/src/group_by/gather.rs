//! Rows of a column picked by index, on its device: what the aggregations use to build key
//! columns (the first row of each group), `first`, `min`/`max` (the row holding the extreme)
//! and `unique`. Numbers and booleans go through one gather kernel; strings through three
//! (byte lengths, a `cumsum` for the new offsets, a copy of each row's bytes); validity is
//! unpacked to one byte per row, gathered and packed again.
//!
//! (frame-rows' `take` is the public form of this; this one stays private to aggregation.)

use gpukit::Array;

use super::kernels::{
    cfg, gb_offsets_from_sums, gb_pack_bits, gb_take_str_bytes, gb_take_str_lens, gb_unpack_bits,
};
use super::typed::{all_valid, go, last, GroupElem};
use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::error::Result;
use crate::strings::Utf8Data;

/// One byte per row of `col`, 1 where it holds a value.
pub(crate) fn valid_bytes(col: &Column) -> Result<Array<u8>> {
    let n = col.len();
    match col.validity() {
        None => all_valid(n, &col.device()),
        Some(b) => {
            let mut out = Array::<u8>::zeros_on(n, &col.device())?;
            go!(gb_unpack_bits, n, b.bits(), &mut out);
            Ok(out)
        }
    }
}

/// A validity bitmap from one byte per row (`None` when every row is valid).
pub(crate) fn pack(valid: &Array<u8>) -> Result<Option<Bitmap>> {
    let n = valid.size();
    let nbytes = Bitmap::bytes_for(n);
    let mut bits = Array::<u8>::zeros_on(nbytes, &valid.device())?;
    go!(gb_pack_bits, nbytes, valid, &mut bits);
    let b = Bitmap::from_packed(bits, n)?;
    Ok((b.null_count() > 0).then_some(b))
}

/// The strings of rows `idx`.
fn take_strings(s: &Utf8Data, idx: &Array<i64>) -> Result<Utf8Data> {
    let m = idx.size();
    let dev = s.device();
    let mut lens = Array::<i64>::zeros_on(m, &dev)?;
    go!(gb_take_str_lens, m, s.offsets(), idx, &mut lens);
    let mut offsets = Array::<i64>::zeros_on(m + 1, &dev)?;
    let total = if m > 0 {
        let sums = lens.cumsum()?;
        go!(gb_offsets_from_sums, m, &sums, &mut offsets);
        last(&sums)? as usize
    } else {
        0
    };
    let mut bytes = Array::<u8>::zeros_on(total, &dev)?;
    go!(
        gb_take_str_bytes,
        m,
        s.offsets(),
        s.bytes(),
        idx,
        &offsets,
        &mut bytes
    );
    Ok(Utf8Data::from_parts_unchecked(offsets, bytes))
}

/// The values of rows `idx` (every index in range).
pub(crate) fn take_data(data: &ColumnData, idx: &Array<i64>) -> Result<ColumnData> {
    Ok(match data {
        ColumnData::Bool(a) => {
            ColumnData::Bool(u8::gather(&a.astype::<u8>()?, idx)?.astype::<bool>()?)
        }
        ColumnData::Int32(a) => ColumnData::Int32(i32::gather(a, idx)?),
        ColumnData::Int64(a) => ColumnData::Int64(i64::gather(a, idx)?),
        ColumnData::UInt32(a) => ColumnData::UInt32(u32::gather(a, idx)?),
        ColumnData::UInt64(a) => ColumnData::UInt64(u64::gather(a, idx)?),
        ColumnData::Float32(a) => ColumnData::Float32(f32::gather(a, idx)?),
        ColumnData::Float64(a) => ColumnData::Float64(f64::gather(a, idx)?),
        ColumnData::Date(a) => ColumnData::Date(i32::gather(a, idx)?),
        ColumnData::Timestamp(a, u) => ColumnData::Timestamp(i64::gather(a, idx)?, *u),
        ColumnData::Utf8(s) => ColumnData::Utf8(take_strings(s, idx)?),
    })
}

/// Rows `idx` of `col` under `name`, null where the source row is null or `also_valid` is 0.
pub(crate) fn take_column(
    col: &Column,
    idx: &Array<i64>,
    also_valid: Option<&Array<u8>>,
    name: &str,
) -> Result<Column> {
    let data = take_data(col.data(), idx)?;
    let mut valid = match col.validity() {
        Some(_) => Some(u8::gather(&valid_bytes(col)?, idx)?),
        None => None,
    };
    if let Some(extra) = also_valid {
        valid = Some(match valid {
            Some(v) => v.minimum(extra)?,
            None => extra.clone(),
        });
    }
    let validity = match valid {
        Some(v) => pack(&v)?,
        None => None,
    };
    Column::new(name, data, validity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit::Device;

    #[test]
    fn rows_are_taken_with_their_nulls() {
        let cpu = Device::Cpu;
        let s = Column::new(
            "s",
            ColumnData::Utf8(Utf8Data::from_strs_on(&["a", "", "日本", "xyz"], &cpu).unwrap()),
            Some(Bitmap::from_bools_on(&[true, false, true, true], &cpu).unwrap()),
        )
        .unwrap();
        let idx = Array::from_slice_on(&[3i64, 1, 2, 2, 0], &cpu).unwrap();
        let extra = Array::from_slice_on(&[1u8, 1, 1, 0, 1], &cpu).unwrap();
        let t = take_column(&s, &idx, Some(&extra), "t").unwrap();
        let ColumnData::Utf8(u) = t.data() else {
            panic!()
        };
        assert_eq!(u.to_strings().unwrap(), ["xyz", "", "日本", "日本", "a"]);
        assert_eq!(
            t.validity().unwrap().to_bools().unwrap(),
            [true, false, true, false, true]
        );
        let empty = Array::<i64>::zeros_on(0, &cpu).unwrap();
        assert_eq!(take_column(&s, &empty, None, "e").unwrap().len(), 0);
    }
}
