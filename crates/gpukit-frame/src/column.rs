//! A named column: values on a device ([`ColumnData`], one variant per storage type) and an
//! optional validity [`Bitmap`] (absent = no nulls). A null row's value slot holds an
//! unspecified value of the column's type (0 for numbers, an empty string for text), as in Arrow.

use gpukit::{Array, Device, Element};

use crate::bitmap::Bitmap;
use crate::dtype::{FrameDType, TimeUnit};
use crate::error::{FrameError, Result};
use crate::strings::Utf8Data;

/// A column's values on a device, one variant per storage type.
#[derive(Debug, Clone)]
pub enum ColumnData {
    /// `bool` values, one byte each (gpukit's `Array<bool>`; Arrow packs them to bits on export).
    Bool(Array<bool>),
    /// `i32` values.
    Int32(Array<i32>),
    /// `i64` values.
    Int64(Array<i64>),
    /// `u32` values.
    UInt32(Array<u32>),
    /// `u64` values.
    UInt64(Array<u64>),
    /// `f32` values.
    Float32(Array<f32>),
    /// `f64` values.
    Float64(Array<f64>),
    /// UTF-8 strings.
    Utf8(Utf8Data),
    /// Days since 1970-01-01.
    Date(Array<i32>),
    /// Counts of `TimeUnit` since the epoch.
    Timestamp(Array<i64>, TimeUnit),
}

/// Applies `$body` to the `Array` inside any non-string variant (bound as `$a`), or evaluates
/// `$utf8` (with the strings bound as `$s`) for a string column.
macro_rules! with_values {
    ($data:expr, $a:ident => $body:expr, $s:ident => $utf8:expr) => {
        match $data {
            ColumnData::Bool($a) => $body,
            ColumnData::Int32($a) => $body,
            ColumnData::Int64($a) => $body,
            ColumnData::UInt32($a) => $body,
            ColumnData::UInt64($a) => $body,
            ColumnData::Float32($a) => $body,
            ColumnData::Float64($a) => $body,
            ColumnData::Date($a) => $body,
            ColumnData::Timestamp($a, _) => $body,
            ColumnData::Utf8($s) => $utf8,
        }
    };
}

impl ColumnData {
    /// The logical type.
    pub fn dtype(&self) -> FrameDType {
        match self {
            ColumnData::Bool(_) => FrameDType::Bool,
            ColumnData::Int32(_) => FrameDType::Int32,
            ColumnData::Int64(_) => FrameDType::Int64,
            ColumnData::UInt32(_) => FrameDType::UInt32,
            ColumnData::UInt64(_) => FrameDType::UInt64,
            ColumnData::Float32(_) => FrameDType::Float32,
            ColumnData::Float64(_) => FrameDType::Float64,
            ColumnData::Utf8(_) => FrameDType::Utf8,
            ColumnData::Date(_) => FrameDType::Date,
            ColumnData::Timestamp(_, u) => FrameDType::Timestamp(*u),
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        with_values!(self, a => a.size(), s => s.len())
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device the values live on.
    pub fn device(&self) -> Device {
        with_values!(self, a => a.device(), s => s.device())
    }

    /// A deep copy on the same device (an error instead of `clone`'s panic when the device is
    /// out of memory).
    pub fn try_clone(&self) -> Result<ColumnData> {
        Ok(match self {
            ColumnData::Utf8(s) => ColumnData::Utf8(Utf8Data::from_parts_unchecked(
                s.offsets().try_clone()?,
                s.bytes().try_clone()?,
            )),
            ColumnData::Bool(a) => ColumnData::Bool(a.try_clone()?),
            ColumnData::Int32(a) => ColumnData::Int32(a.try_clone()?),
            ColumnData::Int64(a) => ColumnData::Int64(a.try_clone()?),
            ColumnData::UInt32(a) => ColumnData::UInt32(a.try_clone()?),
            ColumnData::UInt64(a) => ColumnData::UInt64(a.try_clone()?),
            ColumnData::Float32(a) => ColumnData::Float32(a.try_clone()?),
            ColumnData::Float64(a) => ColumnData::Float64(a.try_clone()?),
            ColumnData::Date(a) => ColumnData::Date(a.try_clone()?),
            ColumnData::Timestamp(a, u) => ColumnData::Timestamp(a.try_clone()?, *u),
        })
    }

    /// A copy on `device`.
    pub fn to_device(&self, device: &Device) -> Result<ColumnData> {
        Ok(match self {
            ColumnData::Bool(a) => ColumnData::Bool(a.to_device(device)?),
            ColumnData::Int32(a) => ColumnData::Int32(a.to_device(device)?),
            ColumnData::Int64(a) => ColumnData::Int64(a.to_device(device)?),
            ColumnData::UInt32(a) => ColumnData::UInt32(a.to_device(device)?),
            ColumnData::UInt64(a) => ColumnData::UInt64(a.to_device(device)?),
            ColumnData::Float32(a) => ColumnData::Float32(a.to_device(device)?),
            ColumnData::Float64(a) => ColumnData::Float64(a.to_device(device)?),
            ColumnData::Utf8(s) => ColumnData::Utf8(s.to_device(device)?),
            ColumnData::Date(a) => ColumnData::Date(a.to_device(device)?),
            ColumnData::Timestamp(a, u) => ColumnData::Timestamp(a.to_device(device)?, *u),
        })
    }
}

/// Element types that are a column's values as they are: `Array<T>` becomes the matching
/// [`ColumnData`] variant without a copy.
pub trait ColumnElement: Element {
    /// Wraps an array of this type.
    fn wrap(values: Array<Self>) -> ColumnData;
    /// The array inside `data` when it holds this type (dates hold `i32`, timestamps `i64`).
    fn unwrap(data: &ColumnData) -> Option<&Array<Self>>;
    /// The array inside `data`, taken out without a copy, when it holds this type.
    fn take(data: ColumnData) -> Option<Array<Self>>;
}

macro_rules! column_element {
    ($t:ty, $variant:ident $(, $extra:ident)?) => {
        impl ColumnElement for $t {
            fn wrap(values: Array<$t>) -> ColumnData {
                ColumnData::$variant(values)
            }
            fn unwrap(data: &ColumnData) -> Option<&Array<$t>> {
                match data {
                    ColumnData::$variant(a) => Some(a),
                    $(ColumnData::$extra(a, ..) => Some(a),)?
                    _ => None,
                }
            }
            fn take(data: ColumnData) -> Option<Array<$t>> {
                match data {
                    ColumnData::$variant(a) => Some(a),
                    $(ColumnData::$extra(a, ..) => Some(a),)?
                    _ => None,
                }
            }
        }
    };
}

column_element!(bool, Bool);
column_element!(i32, Int32, Date);
column_element!(i64, Int64, Timestamp);
column_element!(u32, UInt32);
column_element!(u64, UInt64);
column_element!(f32, Float32);
column_element!(f64, Float64);

/// A named column of a frame.
#[derive(Debug, Clone)]
pub struct Column {
    name: String,
    data: ColumnData,
    validity: Option<Bitmap>,
}

impl Column {
    /// A column of `data` with nulls where `validity` has 0 bits (`None`: no nulls). An error if
    /// the values are not 1-D, or the bitmap covers another number of rows or lives on another
    /// device.
    pub fn new(
        name: impl Into<String>,
        data: ColumnData,
        validity: Option<Bitmap>,
    ) -> Result<Column> {
        let name = name.into();
        if let Some(shape) =
            with_values!(&data, a => (a.ndim() != 1).then(|| a.shape().to_vec()), _s => None)
        {
            return Err(FrameError::Length(format!(
                "column `{name}`: values must be 1-D, got shape {shape:?}"
            )));
        }
        if let Some(v) = &validity {
            if v.len() != data.len() {
                return Err(FrameError::Length(format!(
                    "column `{name}` has {} rows but its validity bitmap covers {}",
                    data.len(),
                    v.len()
                )));
            }
            if v.device() != data.device() {
                return Err(FrameError::Input(format!(
                    "column `{name}`: values on {} but validity on {}",
                    data.device(),
                    v.device()
                )));
            }
        }
        // A bitmap without nulls says nothing: drop it so "no nulls" has one form.
        let validity = validity.filter(|v| v.null_count() > 0);
        Ok(Column {
            name,
            data,
            validity,
        })
    }

    /// A column over a 1-D gpukit array, without a copy and without nulls.
    pub fn from_array<T: ColumnElement>(
        name: impl Into<String>,
        values: Array<T>,
    ) -> Result<Column> {
        Column::new(name, T::wrap(values), None)
    }

    /// A column of host values copied to `device`.
    pub fn from_slice_on<T: ColumnElement>(
        name: impl Into<String>,
        values: &[T],
        device: &Device,
    ) -> Result<Column> {
        Column::from_array(name, Array::from_slice_on(values, device)?)
    }

    /// A string column copied to `device`.
    pub fn from_strs_on<S: AsRef<str>>(
        name: impl Into<String>,
        values: &[S],
        device: &Device,
    ) -> Result<Column> {
        Column::new(
            name,
            ColumnData::Utf8(Utf8Data::from_strs_on(values, device)?),
            None,
        )
    }

    /// The column's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same column under another name (no copy of the values on the device).
    pub fn renamed(mut self, name: impl Into<String>) -> Column {
        self.name = name.into();
        self
    }

    /// The values.
    pub fn data(&self) -> &ColumnData {
        &self.data
    }

    /// The validity bitmap, `None` when no row is null.
    pub fn validity(&self) -> Option<&Bitmap> {
        self.validity.as_ref()
    }

    /// The logical type.
    pub fn dtype(&self) -> FrameDType {
        self.data.dtype()
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of null rows.
    pub fn null_count(&self) -> usize {
        self.validity.as_ref().map_or(0, Bitmap::null_count)
    }

    /// The device the column lives on.
    pub fn device(&self) -> Device {
        self.data.device()
    }

    /// The values as a gpukit array of `T` (no copy), or a type error naming the column's type.
    pub fn values<T: ColumnElement>(&self) -> Result<&Array<T>> {
        T::unwrap(&self.data).ok_or_else(|| {
            FrameError::Type(format!(
                "column `{}` is {}, not {}",
                self.name,
                self.dtype(),
                T::DTYPE.numpy_name()
            ))
        })
    }

    /// The name, values and validity, taken apart (no copy).
    pub fn into_parts(self) -> (String, ColumnData, Option<Bitmap>) {
        (self.name, self.data, self.validity)
    }

    /// A deep copy on the same device (an error instead of `clone`'s panic when the device is
    /// out of memory).
    pub fn try_clone(&self) -> Result<Column> {
        Ok(Column {
            name: self.name.clone(),
            data: self.data.try_clone()?,
            validity: self.validity.as_ref().map(Bitmap::try_clone).transpose()?,
        })
    }

    /// A copy on `device`.
    pub fn to_device(&self, device: &Device) -> Result<Column> {
        Ok(Column {
            name: self.name.clone(),
            data: self.data.to_device(device)?,
            validity: self
                .validity
                .as_ref()
                .map(|v| v.to_device(device))
                .transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_become_columns_without_a_copy_and_keep_their_type() {
        let a = Array::from_slice_on(&[1.5f64, 2.5], &Device::Cpu).unwrap();
        let c = Column::from_array("x", a).unwrap();
        assert_eq!(
            (c.name(), c.dtype(), c.len(), c.null_count()),
            ("x", FrameDType::Float64, 2, 0)
        );
        assert_eq!(c.values::<f64>().unwrap().to_vec().unwrap(), [1.5, 2.5]);
        let e = c.values::<i64>().unwrap_err().to_string();
        assert!(e.contains("column `x` is f64, not int64"), "{e}");
        let d = Column::new(
            "d",
            ColumnData::Date(Array::from_slice_on(&[0i32], &Device::Cpu).unwrap()),
            None,
        )
        .unwrap();
        assert_eq!(d.values::<i32>().unwrap().to_vec().unwrap(), [0]);
    }

    #[test]
    fn validity_must_match_the_rows() {
        let cpu = Device::Cpu;
        let data = ColumnData::Int64(Array::from_slice_on(&[1i64, 2, 3], &cpu).unwrap());
        let two = Bitmap::from_bools_on(&[true, false], &cpu).unwrap();
        let e = Column::new("n", data.clone(), Some(two))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("column `n` has 3 rows but its validity bitmap covers 2"),
            "{e}"
        );
        let all_valid = Bitmap::from_bools_on(&[true; 3], &cpu).unwrap();
        assert!(Column::new("n", data.clone(), Some(all_valid))
            .unwrap()
            .validity()
            .is_none());
        let one_null = Bitmap::from_bools_on(&[true, false, true], &cpu).unwrap();
        assert_eq!(
            Column::new("n", data, Some(one_null)).unwrap().null_count(),
            1
        );
        let m = Array::<f32>::zeros_on((2, 2), &cpu).unwrap();
        assert!(Column::from_array("m", m)
            .unwrap_err()
            .to_string()
            .contains("1-D"));
    }
}
