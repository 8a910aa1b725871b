//! gpukit arrays in and out of frames without copies where the layout matches.
//!
//! Which paths copy:
//! - [`Column::from_array`] and [`DataFrame::from_arrays`] take the arrays over as the columns'
//!   values: no copy (every numeric and `bool` array has the column layout already).
//! - [`Column::values`] borrows a column's array: no copy.
//! - [`Column::into_array`] gives the column's array back: no copy. A column with nulls is an
//!   error there (an array cannot hold nulls); [`Column::into_parts`] keeps the bitmap.
//! - [`Column::to_array`] copies the values on their device (gpukit arrays are not reference
//!   counted, so a second owner needs a second buffer).
//! - String columns have no gpukit array of their own; their offsets and bytes are arrays
//!   ([`crate::Utf8Data::offsets`], [`crate::Utf8Data::bytes`]), borrowed without a copy.

use gpukit::Array;

use crate::column::{Column, ColumnElement};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;

impl Column {
    /// The values as the gpukit array they are stored in (no copy). Dates give their `i32`
    /// days and timestamps their `i64` counts. An error naming the column when its type is not
    /// `T`, or when it holds nulls (use [`Column::into_parts`] to keep the bitmap).
    pub fn into_array<T: ColumnElement>(self) -> Result<Array<T>> {
        self.values::<T>()?;
        if self.null_count() > 0 {
            return Err(FrameError::Input(format!(
                "column `{}` has {} nulls, which an array cannot hold; use into_parts to keep \
                 its validity bitmap",
                self.name(),
                self.null_count()
            )));
        }
        let (_, data, _) = self.into_parts();
        T::take(data).ok_or_else(|| FrameError::Type("internal: column type changed".into()))
    }

    /// A copy of the values as a new gpukit array on the same device (nulls keep their
    /// unspecified slot values). An error naming the column when its type is not `T`.
    pub fn to_array<T: ColumnElement>(&self) -> Result<Array<T>> {
        Ok(self.values::<T>()?.try_clone()?)
    }
}

impl DataFrame {
    /// A frame whose columns are `arrays` (1-D, one height, one device) named `names`, taken
    /// over without a copy. For arrays of several types, build each with
    /// [`Column::from_array`] and call [`DataFrame::new`].
    pub fn from_arrays<T: ColumnElement, S: AsRef<str>>(
        names: &[S],
        arrays: Vec<Array<T>>,
    ) -> Result<DataFrame> {
        if names.len() != arrays.len() {
            return Err(FrameError::Length(format!(
                "{} names given for {} arrays",
                names.len(),
                arrays.len()
            )));
        }
        DataFrame::new(
            names
                .iter()
                .zip(arrays)
                .map(|(n, a)| Column::from_array(n.as_ref(), a))
                .collect::<Result<_>>()?,
        )
    }

    /// The frame's columns as arrays of `T` in order, without copies. An error naming the first
    /// column that is not `T` or holds nulls.
    pub fn into_arrays<T: ColumnElement>(self) -> Result<Vec<Array<T>>> {
        for c in self.columns() {
            c.values::<T>()?;
        }
        self.into_columns()
            .into_iter()
            .map(Column::into_array)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bitmap, ColumnData};
    use gpukit::Device;

    #[test]
    fn arrays_go_in_and_out_without_copies() {
        let cpu = Device::Cpu;
        let a = Array::from_slice_on(&[1.0f32, 2.0], &cpu).unwrap();
        let b = Array::from_slice_on(&[3.0f32, 4.0], &cpu).unwrap();
        let f = DataFrame::from_arrays(&["a", "b"], vec![a, b]).unwrap();
        assert_eq!(f.shape(), (2, 2));
        let arrays = f.into_arrays::<f32>().unwrap();
        assert_eq!(arrays[1].to_vec().unwrap(), [3.0, 4.0]);
        let e = DataFrame::from_arrays(&["a"], arrays)
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 names given for 2 arrays"), "{e}");
    }

    #[test]
    fn into_array_refuses_nulls_and_wrong_types() {
        let cpu = Device::Cpu;
        let c = Column::new(
            "n",
            ColumnData::Int64(Array::from_slice_on(&[1i64, 0], &cpu).unwrap()),
            Some(Bitmap::from_bools_on(&[true, false], &cpu).unwrap()),
        )
        .unwrap();
        assert_eq!(c.to_array::<i64>().unwrap().to_vec().unwrap(), [1, 0]);
        let e = c.clone().into_array::<f64>().unwrap_err().to_string();
        assert!(e.contains("column `n` is i64, not float64"), "{e}");
        let e = c.into_array::<i64>().unwrap_err().to_string();
        assert!(e.contains("column `n` has 1 nulls"), "{e}");
        let d = Column::new(
            "d",
            ColumnData::Date(Array::from_slice_on(&[5i32], &cpu).unwrap()),
            None,
        )
        .unwrap();
        assert_eq!(d.into_array::<i32>().unwrap().to_vec().unwrap(), [5]);
    }
}
