//! Arrow interchange: [`DataFrame::from_record_batch`] and [`DataFrame::to_record_batch`], and
//! the type mapping between [`FrameDType`] and Arrow's `DataType`.
//!
//! Where it runs: on the host, by necessity. A `RecordBatch` lives in host memory, so a batch
//! becomes a frame by one host-to-device copy per buffer (values, offsets, bytes, validity), and
//! a frame becomes a batch by one device-to-host copy of each. Two layouts differ and are
//! converted on the host during that copy: Arrow packs booleans to bits while gpukit keeps one
//! byte per `bool`, and Arrow's `Utf8` (`i32` offsets) is widened to the `LargeUtf8` layout
//! (`i64` offsets) that string columns use. A sliced Arrow array (non-zero offset) is rebased to
//! start at row 0.
//!
//! Supported Arrow types: `Boolean`, `Int32`, `Int64`, `UInt32`, `UInt64`, `Float32`, `Float64`,
//! `Utf8`, `LargeUtf8`, `Utf8View`, `Date32`, `Timestamp(unit, None)`, and `Null` (an all-null
//! column, read as strings). Anything else is an error naming the column and the type.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array as ArrowArray, ArrayRef, ArrowPrimitiveType, BooleanArray, LargeStringArray,
    PrimitiveArray, RecordBatch, RecordBatchOptions,
};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Schema, TimeUnit as ArrowTimeUnit};
use gpukit::{Array, Device};

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::dtype::{FrameDType, TimeUnit};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

/// The Arrow type a column of `dtype` becomes in a `RecordBatch` (strings: `LargeUtf8`).
pub fn arrow_data_type(dtype: FrameDType) -> DataType {
    match dtype {
        FrameDType::Bool => DataType::Boolean,
        FrameDType::Int32 => DataType::Int32,
        FrameDType::Int64 => DataType::Int64,
        FrameDType::UInt32 => DataType::UInt32,
        FrameDType::UInt64 => DataType::UInt64,
        FrameDType::Float32 => DataType::Float32,
        FrameDType::Float64 => DataType::Float64,
        FrameDType::Utf8 => DataType::LargeUtf8,
        FrameDType::Date => DataType::Date32,
        FrameDType::Timestamp(u) => DataType::Timestamp(arrow_unit(u), None),
    }
}

/// The column type an Arrow type is read as, or an error naming `column` and the type when the
/// frame has no such type.
pub fn frame_dtype(column: &str, data_type: &DataType) -> Result<FrameDType> {
    Ok(match data_type {
        DataType::Boolean => FrameDType::Bool,
        DataType::Int32 => FrameDType::Int32,
        DataType::Int64 => FrameDType::Int64,
        DataType::UInt32 => FrameDType::UInt32,
        DataType::UInt64 => FrameDType::UInt64,
        DataType::Float32 => FrameDType::Float32,
        DataType::Float64 => FrameDType::Float64,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
            FrameDType::Utf8
        }
        DataType::Date32 => FrameDType::Date,
        DataType::Timestamp(u, None) => FrameDType::Timestamp(frame_unit(*u)),
        DataType::Timestamp(_, Some(tz)) => {
            return Err(FrameError::Type(format!(
                "column `{column}` has Arrow type {data_type}: timestamps with a time zone \
                 (`{tz}`) are not supported; convert them to zone-less UTC timestamps first"
            )))
        }
        other => {
            return Err(FrameError::Type(format!(
                "column `{column}` has Arrow type {other}, which frames do not support \
                 (supported: Boolean, Int32, Int64, UInt32, UInt64, Float32, Float64, Utf8, \
                 LargeUtf8, Utf8View, Date32, Timestamp without a time zone)"
            )))
        }
    })
}

fn arrow_unit(u: TimeUnit) -> ArrowTimeUnit {
    match u {
        TimeUnit::Second => ArrowTimeUnit::Second,
        TimeUnit::Millisecond => ArrowTimeUnit::Millisecond,
        TimeUnit::Microsecond => ArrowTimeUnit::Microsecond,
        TimeUnit::Nanosecond => ArrowTimeUnit::Nanosecond,
    }
}

fn frame_unit(u: ArrowTimeUnit) -> TimeUnit {
    match u {
        ArrowTimeUnit::Second => TimeUnit::Second,
        ArrowTimeUnit::Millisecond => TimeUnit::Millisecond,
        ArrowTimeUnit::Microsecond => TimeUnit::Microsecond,
        ArrowTimeUnit::Nanosecond => TimeUnit::Nanosecond,
    }
}

/// One column's values gathered on the host, one `Vec` per storage type.
enum HostValues {
    Bool(Vec<bool>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    UInt32(Vec<u32>),
    UInt64(Vec<u64>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    Utf8 { offsets: Vec<i64>, bytes: Vec<u8> },
    Date(Vec<i32>),
    Timestamp(Vec<i64>, TimeUnit),
}

/// Gathers one column from any number of Arrow arrays (the batches of a CSV file, or one
/// batch) on the host, then moves it to a device in one copy per buffer.
pub(crate) struct ColumnBuilder {
    name: String,
    data_type: DataType,
    values: HostValues,
    validity: BooleanBufferBuilder,
    nulls: usize,
}

impl ColumnBuilder {
    /// A builder for a column of Arrow type `data_type`, or an error naming the column when the
    /// type is not supported.
    pub(crate) fn new(name: &str, data_type: &DataType) -> Result<ColumnBuilder> {
        let values = match frame_dtype(name, data_type)? {
            FrameDType::Bool => HostValues::Bool(Vec::new()),
            FrameDType::Int32 => HostValues::Int32(Vec::new()),
            FrameDType::Int64 => HostValues::Int64(Vec::new()),
            FrameDType::UInt32 => HostValues::UInt32(Vec::new()),
            FrameDType::UInt64 => HostValues::UInt64(Vec::new()),
            FrameDType::Float32 => HostValues::Float32(Vec::new()),
            FrameDType::Float64 => HostValues::Float64(Vec::new()),
            FrameDType::Utf8 => HostValues::Utf8 {
                offsets: vec![0],
                bytes: Vec::new(),
            },
            FrameDType::Date => HostValues::Date(Vec::new()),
            FrameDType::Timestamp(u) => HostValues::Timestamp(Vec::new(), u),
        };
        Ok(ColumnBuilder {
            name: name.to_string(),
            data_type: data_type.clone(),
            values,
            validity: BooleanBufferBuilder::new(0),
            nulls: 0,
        })
    }

    /// Appends the rows of `array`, which must have the builder's Arrow type.
    pub(crate) fn append(&mut self, array: &dyn ArrowArray) -> Result<()> {
        if array.data_type() != &self.data_type {
            return Err(FrameError::Type(format!(
                "column `{}`: expected Arrow type {} but a batch holds {}",
                self.name,
                self.data_type,
                array.data_type()
            )));
        }
        let len = array.len();
        match array.logical_nulls() {
            Some(n) => {
                self.nulls += n.null_count();
                self.validity.append_buffer(n.inner());
            }
            None => self.validity.append_n(len, true),
        }
        match &mut self.values {
            HostValues::Bool(v) => v.extend(array.as_boolean().values().iter()),
            HostValues::Int32(v) => extend::<Int32Type>(v, array),
            HostValues::Int64(v) => extend::<Int64Type>(v, array),
            HostValues::UInt32(v) => extend::<UInt32Type>(v, array),
            HostValues::UInt64(v) => extend::<UInt64Type>(v, array),
            HostValues::Float32(v) => extend::<Float32Type>(v, array),
            HostValues::Float64(v) => extend::<Float64Type>(v, array),
            HostValues::Date(v) => extend::<Date32Type>(v, array),
            HostValues::Timestamp(v, u) => match u {
                TimeUnit::Second => extend::<TimestampSecondType>(v, array),
                TimeUnit::Millisecond => extend::<TimestampMillisecondType>(v, array),
                TimeUnit::Microsecond => extend::<TimestampMicrosecondType>(v, array),
                TimeUnit::Nanosecond => extend::<TimestampNanosecondType>(v, array),
            },
            HostValues::Utf8 { offsets, bytes } => match array.data_type() {
                DataType::Utf8 => {
                    let a = array.as_string::<i32>();
                    let o = a.value_offsets();
                    append_strings(offsets, bytes, a.values(), o[0] as usize, &o[1..], |x| {
                        x as i64
                    });
                }
                DataType::LargeUtf8 => {
                    let a = array.as_string::<i64>();
                    let o = a.value_offsets();
                    append_strings(offsets, bytes, a.values(), o[0] as usize, &o[1..], |x| x);
                }
                DataType::Utf8View => {
                    for s in array.as_string_view().iter() {
                        bytes.extend_from_slice(s.unwrap_or("").as_bytes());
                        offsets.push(bytes.len() as i64);
                    }
                }
                _ => {
                    // `Null`: every row is null and empty.
                    let end = bytes.len() as i64;
                    offsets.extend(std::iter::repeat_n(end, len));
                }
            },
        }
        Ok(())
    }

    /// Appends the rows gathered by `other` (a builder of the same column type, e.g. for a later
    /// chunk of the same file).
    pub(crate) fn extend(&mut self, other: ColumnBuilder) -> Result<()> {
        let mut other = other;
        let bits = other.validity.finish();
        self.validity.append_buffer(&bits);
        self.nulls += other.nulls;
        match (&mut self.values, other.values) {
            (HostValues::Bool(a), HostValues::Bool(b)) => a.extend(b),
            (HostValues::Int32(a), HostValues::Int32(b)) => a.extend(b),
            (HostValues::Int64(a), HostValues::Int64(b)) => a.extend(b),
            (HostValues::UInt32(a), HostValues::UInt32(b)) => a.extend(b),
            (HostValues::UInt64(a), HostValues::UInt64(b)) => a.extend(b),
            (HostValues::Float32(a), HostValues::Float32(b)) => a.extend(b),
            (HostValues::Float64(a), HostValues::Float64(b)) => a.extend(b),
            (HostValues::Date(a), HostValues::Date(b)) => a.extend(b),
            (HostValues::Timestamp(a, _), HostValues::Timestamp(b, _)) => a.extend(b),
            (
                HostValues::Utf8 { offsets, bytes },
                HostValues::Utf8 {
                    offsets: o,
                    bytes: b,
                },
            ) => {
                let base = bytes.len() as i64;
                offsets.extend(o[1..].iter().map(|x| x + base));
                bytes.extend(b);
            }
            _ => {
                return Err(FrameError::Type(format!(
                    "column `{}`: joining host columns of different types",
                    self.name
                )))
            }
        }
        Ok(())
    }

    /// The column on `device`: one copy per buffer.
    pub(crate) fn finish(mut self, device: &Device) -> Result<Column> {
        let len = self.validity.len();
        let validity = if self.nulls > 0 {
            let bits = self.validity.finish();
            Some(Bitmap::from_packed_host(bits.values(), len, device)?)
        } else {
            None
        };
        let data = match self.values {
            HostValues::Bool(v) => ColumnData::Bool(Array::from_slice_on(&v, device)?),
            HostValues::Int32(v) => ColumnData::Int32(Array::from_vec_on(v, [len], device)?),
            HostValues::Int64(v) => ColumnData::Int64(Array::from_vec_on(v, [len], device)?),
            HostValues::UInt32(v) => ColumnData::UInt32(Array::from_vec_on(v, [len], device)?),
            HostValues::UInt64(v) => ColumnData::UInt64(Array::from_vec_on(v, [len], device)?),
            HostValues::Float32(v) => ColumnData::Float32(Array::from_vec_on(v, [len], device)?),
            HostValues::Float64(v) => ColumnData::Float64(Array::from_vec_on(v, [len], device)?),
            HostValues::Date(v) => ColumnData::Date(Array::from_vec_on(v, [len], device)?),
            HostValues::Timestamp(v, u) => {
                ColumnData::Timestamp(Array::from_vec_on(v, [len], device)?, u)
            }
            HostValues::Utf8 { offsets, bytes } => {
                let nbytes = bytes.len();
                ColumnData::Utf8(Utf8Data::from_parts_unchecked(
                    Array::from_vec_on(offsets, [len + 1], device)?,
                    Array::from_vec_on(bytes, [nbytes], device)?,
                ))
            }
        };
        Column::new(self.name, data, validity)
    }
}

/// Appends the values of a primitive Arrow array (already offset to its first row).
fn extend<T: ArrowPrimitiveType>(v: &mut Vec<T::Native>, array: &dyn ArrowArray) {
    v.extend_from_slice(array.as_primitive::<T>().values());
}

/// Appends strings given as Arrow offsets (`first`, then the end of each row) into `values`,
/// rebased onto the bytes gathered so far.
fn append_strings<O: Copy>(
    offsets: &mut Vec<i64>,
    bytes: &mut Vec<u8>,
    values: &[u8],
    first: usize,
    ends: &[O],
    widen: impl Fn(O) -> i64,
) {
    let base = bytes.len() as i64 - first as i64;
    let last = ends.last().map_or(first, |e| widen(*e) as usize);
    bytes.extend_from_slice(&values[first..last]);
    offsets.extend(ends.iter().map(|e| widen(*e) + base));
}

impl Column {
    /// A column named `name` from an Arrow array, copied to `device`. An error naming the
    /// column and type when the Arrow type is not supported (see the module doc).
    pub fn from_arrow(name: &str, array: &dyn ArrowArray, device: &Device) -> Result<Column> {
        let mut b = ColumnBuilder::new(name, array.data_type())?;
        b.append(array)?;
        b.finish(device)
    }

    /// The column as an Arrow array, copied to the host (strings as `LargeUtf8`, booleans
    /// packed to bits, nulls as a validity buffer).
    pub fn to_arrow(&self) -> Result<ArrayRef> {
        let len = self.len();
        let nulls = match self.validity() {
            Some(b) => Some(NullBuffer::new(BooleanBuffer::new(
                Buffer::from_vec(b.bits().to_vec()?),
                0,
                len,
            ))),
            None => None,
        };
        fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>, n: Option<NullBuffer>) -> ArrayRef {
            Arc::new(PrimitiveArray::<T>::new(v.into(), n))
        }
        Ok(match self.data() {
            ColumnData::Bool(a) => Arc::new(BooleanArray::new(
                a.to_vec()?.into_iter().collect::<BooleanBuffer>(),
                nulls,
            )),
            ColumnData::Int32(a) => prim::<Int32Type>(a.to_vec()?, nulls),
            ColumnData::Int64(a) => prim::<Int64Type>(a.to_vec()?, nulls),
            ColumnData::UInt32(a) => prim::<UInt32Type>(a.to_vec()?, nulls),
            ColumnData::UInt64(a) => prim::<UInt64Type>(a.to_vec()?, nulls),
            ColumnData::Float32(a) => prim::<Float32Type>(a.to_vec()?, nulls),
            ColumnData::Float64(a) => prim::<Float64Type>(a.to_vec()?, nulls),
            ColumnData::Date(a) => prim::<Date32Type>(a.to_vec()?, nulls),
            ColumnData::Timestamp(a, u) => {
                let v = a.to_vec()?;
                match u {
                    TimeUnit::Second => prim::<TimestampSecondType>(v, nulls),
                    TimeUnit::Millisecond => prim::<TimestampMillisecondType>(v, nulls),
                    TimeUnit::Microsecond => prim::<TimestampMicrosecondType>(v, nulls),
                    TimeUnit::Nanosecond => prim::<TimestampNanosecondType>(v, nulls),
                }
            }
            ColumnData::Utf8(s) => {
                let offsets = OffsetBuffer::new(s.offsets().to_vec()?.into());
                let bytes = Buffer::from_vec(s.bytes().to_vec()?);
                Arc::new(
                    LargeStringArray::try_new(offsets, bytes, nulls)
                        .map_err(|e| FrameError::Input(format!("column `{}`: {e}", self.name())))?,
                )
            }
        })
    }
}

impl DataFrame {
    /// A frame of the batch's columns (names from its schema), copied to `device`. An error
    /// naming the column and type when a column's Arrow type is not supported.
    pub fn from_record_batch(batch: &RecordBatch, device: &Device) -> Result<DataFrame> {
        let schema = batch.schema();
        let columns = schema
            .fields()
            .iter()
            .zip(batch.columns())
            .map(|(f, a)| Column::from_arrow(f.name(), a.as_ref(), device))
            .collect::<Result<Vec<_>>>()?;
        DataFrame::new(columns)
    }

    /// The frame as an Arrow `RecordBatch`, copied to the host. Every field is nullable;
    /// strings are `LargeUtf8`.
    pub fn to_record_batch(&self) -> Result<RecordBatch> {
        let fields: Vec<Field> = self
            .columns()
            .iter()
            .map(|c| Field::new(c.name(), arrow_data_type(c.dtype()), true))
            .collect();
        let arrays = self
            .columns()
            .iter()
            .map(Column::to_arrow)
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(self.height()));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)
            .map_err(|e| FrameError::Input(format!("building a RecordBatch: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray, TimestampMillisecondArray};

    fn batch_of(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn every_type_round_trips_with_nulls() {
        let cpu = Device::Cpu;
        let n = |v: Vec<bool>| Some(NullBuffer::from(v));
        let batch = batch_of(vec![
            (
                "b",
                Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])) as _,
            ),
            (
                "i32",
                Arc::new(PrimitiveArray::<Int32Type>::from(vec![
                    Some(-1),
                    Some(2),
                    None,
                ])) as _,
            ),
            (
                "i64",
                Arc::new(Int64Array::from(vec![None, Some(i64::MAX), Some(3)])) as _,
            ),
            (
                "u32",
                Arc::new(PrimitiveArray::<UInt32Type>::new(
                    vec![1, 2, u32::MAX].into(),
                    None,
                )) as _,
            ),
            (
                "u64",
                Arc::new(PrimitiveArray::<UInt64Type>::new(
                    vec![0, 7, 9].into(),
                    n(vec![true, false, true]),
                )) as _,
            ),
            (
                "f32",
                Arc::new(PrimitiveArray::<Float32Type>::from(vec![
                    Some(1.5f32),
                    None,
                    Some(-0.25),
                ])) as _,
            ),
            (
                "f64",
                Arc::new(PrimitiveArray::<Float64Type>::from(vec![
                    Some(f64::NAN),
                    Some(2.0),
                    None,
                ])) as _,
            ),
            (
                "s",
                Arc::new(StringArray::from(vec![
                    Some("Zürich"),
                    None,
                    Some("日本語"),
                ])) as _,
            ),
            (
                "ls",
                Arc::new(LargeStringArray::from(vec![Some(""), Some("x"), None])) as _,
            ),
            (
                "d",
                Arc::new(PrimitiveArray::<Date32Type>::from(vec![
                    Some(0),
                    Some(19000),
                    None,
                ])) as _,
            ),
            (
                "ts",
                Arc::new(TimestampMillisecondArray::from(vec![
                    Some(1),
                    None,
                    Some(-5),
                ])) as _,
            ),
        ]);
        let f = DataFrame::from_record_batch(&batch, &cpu).unwrap();
        assert_eq!(f.shape(), (3, 11));
        use FrameDType::*;
        assert_eq!(
            f.dtypes(),
            [
                Bool,
                Int32,
                Int64,
                UInt32,
                UInt64,
                Float32,
                Float64,
                Utf8,
                Utf8,
                Date,
                Timestamp(TimeUnit::Millisecond)
            ]
        );
        assert_eq!(f.column("b").unwrap().null_count(), 1);
        assert_eq!(f.column("u32").unwrap().null_count(), 0);
        assert_eq!(f.column("s").unwrap().data().dtype(), FrameDType::Utf8);
        let back = f.to_record_batch().unwrap();
        assert_eq!(back.num_rows(), 3);
        for (i, field) in batch.schema().fields().iter().enumerate() {
            let (orig, got) = (batch.column(i), back.column(i));
            // Utf8 comes back as LargeUtf8; compare the values.
            if field.data_type() == &DataType::Utf8 {
                let o: Vec<_> = orig.as_string::<i32>().iter().collect();
                let g: Vec<_> = got.as_string::<i64>().iter().collect();
                assert_eq!(o, g);
            } else if field.name() == "f64" {
                let g = got.as_primitive::<Float64Type>();
                assert!(g.value(0).is_nan() && g.value(1) == 2.0 && g.is_null(2));
            } else {
                assert_eq!(orig.to_data(), got.to_data(), "column {}", field.name());
            }
        }
    }

    #[test]
    fn sliced_arrays_are_rebased_and_bool_bits_become_bytes() {
        let cpu = Device::Cpu;
        let s = StringArray::from(vec![Some("a"), Some("bb"), None, Some("dddd"), Some("é")]);
        let sliced = s.slice(1, 4);
        let c = Column::from_arrow("s", &sliced, &cpu).unwrap();
        let ColumnData::Utf8(u) = c.data() else {
            panic!()
        };
        assert_eq!(u.offsets().to_vec().unwrap(), [0, 2, 2, 6, 8]);
        assert_eq!(u.to_strings().unwrap(), ["bb", "", "dddd", "é"]);
        assert_eq!(
            c.validity().unwrap().to_bools().unwrap(),
            [true, false, true, true]
        );
        let bools = BooleanArray::from(vec![
            true, false, true, true, false, true, true, true, false, true,
        ]);
        let b = Column::from_arrow("b", &bools.slice(3, 7), &cpu).unwrap();
        assert_eq!(
            b.values::<bool>().unwrap().to_vec().unwrap(),
            [true, false, true, true, true, false, true]
        );
    }

    #[test]
    fn empty_and_one_row_frames_round_trip() {
        let cpu = Device::Cpu;
        let empty = DataFrame::new(vec![]).unwrap();
        let b = empty.to_record_batch().unwrap();
        assert_eq!((b.num_rows(), b.num_columns()), (0, 0));
        let zero_rows = DataFrame::new(vec![
            Column::from_strs_on::<&str>("s", &[], &cpu).unwrap(),
            Column::from_slice_on::<f64>("x", &[], &cpu).unwrap(),
        ])
        .unwrap();
        let b = zero_rows.to_record_batch().unwrap();
        assert_eq!((b.num_rows(), b.num_columns()), (0, 2));
        let again = DataFrame::from_record_batch(&b, &cpu).unwrap();
        assert_eq!(again.shape(), (0, 2));
        let one = DataFrame::new(vec![Column::from_slice_on("x", &[4i64], &cpu).unwrap()]).unwrap();
        let back = DataFrame::from_record_batch(&one.to_record_batch().unwrap(), &cpu).unwrap();
        assert_eq!(
            back.column("x")
                .unwrap()
                .values::<i64>()
                .unwrap()
                .to_vec()
                .unwrap(),
            [4]
        );
    }

    #[test]
    fn unsupported_types_name_the_column_and_type() {
        let cpu = Device::Cpu;
        let small = PrimitiveArray::<arrow_array::types::Int8Type>::from(vec![1i8]);
        let batch = batch_of(vec![("tiny", Arc::new(small) as _)]);
        let e = DataFrame::from_record_batch(&batch, &cpu)
            .unwrap_err()
            .to_string();
        assert!(e.contains("column `tiny` has Arrow type Int8"), "{e}");
        let tz = TimestampMillisecondArray::from(vec![1]).with_timezone("UTC");
        let e = Column::from_arrow("when", &tz, &cpu)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("column `when`") && e.contains("time zone"),
            "{e}"
        );
    }
}
