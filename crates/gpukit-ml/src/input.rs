//! What every model takes: a feature matrix (`(n_samples, n_features)`) and, to fit a
//! supervised model, a target vector (`n_samples` labels or values). Both come as gpukit arrays
//! (used where they lie, on their own device), as ndarray arrays (copied to the default device),
//! or, with feature `frame`, as gpukit-frame columns.

use std::borrow::Cow;

use gpukit::{Array, Element, Float};

use crate::error::{MlError, Result};

/// A feature matrix: `n_samples` rows of `n_features` values.
pub trait Features<T: Float> {
    /// The features as an `(n_samples, n_features)` gpukit array, borrowed when it already is
    /// one (on its own device), else copied to the default device; `what` names the call in
    /// the error returned for a shape that is not 2-D.
    fn features(&self, what: &'static str) -> Result<Cow<'_, Array<T>>>;
}

/// A target vector: one label (classification) or value (regression) per sample.
pub trait Targets<L: Element> {
    /// The targets as an `(n_samples,)` gpukit array, borrowed when it already is one, else
    /// copied to the default device; `what` names the call in the error for a shape that is
    /// not 1-D.
    fn targets(&self, what: &'static str) -> Result<Cow<'_, Array<L>>>;
}

impl<T: Float> Features<T> for Array<T> {
    fn features(&self, what: &'static str) -> Result<Cow<'_, Array<T>>> {
        matrix(what, self.shape())?;
        Ok(Cow::Borrowed(self))
    }
}

impl<T: Float, S: ndarray::Data<Elem = T>> Features<T> for ndarray::ArrayBase<S, ndarray::Ix2> {
    fn features(&self, _what: &'static str) -> Result<Cow<'_, Array<T>>> {
        Ok(Cow::Owned(Array::from_ndarray(self)?))
    }
}

impl<L: Element> Targets<L> for Array<L> {
    fn targets(&self, what: &'static str) -> Result<Cow<'_, Array<L>>> {
        if self.shape().len() != 1 {
            return Err(MlError::Shape {
                what,
                detail: format!(
                    "targets must be 1-D (n_samples,), got shape {:?}",
                    self.shape()
                ),
            });
        }
        Ok(Cow::Borrowed(self))
    }
}

impl<L: Element, S: ndarray::Data<Elem = L>> Targets<L> for ndarray::ArrayBase<S, ndarray::Ix1> {
    fn targets(&self, _what: &'static str) -> Result<Cow<'_, Array<L>>> {
        Ok(Cow::Owned(Array::from_ndarray(self)?))
    }
}

/// A frame column's values as `T` (numeric columns only, without nulls), for the frame inputs
/// below; `what` names the call in the errors.
#[cfg(feature = "frame")]
fn frame_column<T: Element>(what: &'static str, c: &gpukit_frame::Column) -> Result<Array<T>> {
    use gpukit_frame::ColumnData as D;
    if c.null_count() > 0 {
        return Err(MlError::Parameter {
            what,
            name: "features",
            detail: format!(
                "column `{}` has {} null(s): fill or drop them before fitting",
                c.name(),
                c.null_count()
            ),
        });
    }
    Ok(match c.data() {
        D::Int32(a) => a.astype::<T>()?,
        D::Int64(a) => a.astype::<T>()?,
        D::UInt32(a) => a.astype::<T>()?,
        D::UInt64(a) => a.astype::<T>()?,
        D::Float32(a) => a.astype::<T>()?,
        D::Float64(a) => a.astype::<T>()?,
        _ => {
            return Err(MlError::Parameter {
                what,
                name: "features",
                detail: format!(
                    "column `{}` is {}, not numeric: select the numeric columns first",
                    c.name(),
                    c.dtype()
                ),
            })
        }
    })
}

/// A frame's columns, all numeric and without nulls, as the columns of an `(n_rows,
/// n_columns)` matrix on the frame's device (each converted to `T`, then stacked: one copy).
/// A string, date, bool or nullable column is an error naming it; `df.select(..)` the feature
/// columns first.
#[cfg(feature = "frame")]
impl<T: Float> Features<T> for gpukit_frame::DataFrame {
    fn features(&self, what: &'static str) -> Result<Cow<'_, Array<T>>> {
        if self.width() == 0 {
            return Err(MlError::Shape {
                what,
                detail: "the frame has no columns".into(),
            });
        }
        let cols = self
            .columns()
            .iter()
            .map(|c| frame_column::<T>(what, c))
            .collect::<Result<Vec<_>>>()?;
        Ok(Cow::Owned(Array::stack(
            &cols.iter().collect::<Vec<_>>(),
            1,
        )?))
    }
}

/// A numeric frame column without nulls as targets (converted to `L`: labels from an integer
/// column, values from a float column).
#[cfg(feature = "frame")]
impl<L: Element> Targets<L> for gpukit_frame::Column {
    fn targets(&self, what: &'static str) -> Result<Cow<'_, Array<L>>> {
        Ok(Cow::Owned(frame_column::<L>(what, self)?))
    }
}

/// `(n_samples, n_features)` of a feature shape, or an error naming `what` when it is not 2-D.
pub fn matrix(what: &'static str, shape: &[usize]) -> Result<(usize, usize)> {
    match shape {
        [n, d] => Ok((*n, *d)),
        _ => Err(MlError::Shape {
            what,
            detail: format!("features must be 2-D (n_samples, n_features), got shape {shape:?}"),
        }),
    }
}

/// An error naming `what` and the first non-finite value (row, column) of `x` (2-D), if any.
/// The check runs on `x`'s device; only when it finds something is the position looked up.
pub fn check_finite<T: Float>(what: &'static str, x: &Array<T>) -> Result<()> {
    if x.isfinite()?.all()? {
        return Ok(());
    }
    let (_, d) = matrix(what, x.shape())?;
    let values = x.to_vec()?;
    let (i, v) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !Element::to_f64(**v).is_finite())
        .expect("isfinite().all() was false, so a non-finite value exists");
    Err(MlError::NonFinite {
        what,
        row: i / d.max(1),
        column: i % d.max(1),
        value: format!("{}", Element::to_f64(*v)),
    })
}

/// An error naming `what` unless `x` has `n` rows (the targets' length, say).
pub fn check_rows(what: &'static str, x_rows: usize, n: usize, of: &str) -> Result<()> {
    if x_rows == n {
        return Ok(());
    }
    Err(MlError::Shape {
        what,
        detail: format!("the features have {x_rows} rows but {of} has {n}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "frame")]
    #[test]
    fn frames_are_features_and_columns_targets() {
        use gpukit_frame::{Column, DataFrame};
        let cpu = gpukit::Device::Cpu;
        let df = DataFrame::new(vec![
            Column::from_slice_on("a", &[1i64, 2, 3], &cpu).unwrap(),
            Column::from_slice_on("b", &[0.5f32, 1.5, 2.5], &cpu).unwrap(),
        ])
        .unwrap();
        let x = Features::<f64>::features(&df, "fit").unwrap();
        assert_eq!(x.shape(), &[3, 2]);
        assert_eq!(x.to_vec().unwrap(), vec![1.0, 0.5, 2.0, 1.5, 3.0, 2.5]);
        let y = Targets::<i64>::targets(&df.columns()[0], "fit").unwrap();
        assert_eq!(y.to_vec().unwrap(), vec![1, 2, 3]);
        let s =
            DataFrame::new(vec![Column::from_strs_on("s", &["x", "y"], &cpu).unwrap()]).unwrap();
        let e = Features::<f64>::features(&s, "KMeans::fit")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`s`") && e.contains("not numeric"), "{e}");
    }

    #[test]
    fn arrays_and_ndarrays_are_features() {
        let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2]).unwrap();
        assert_eq!(a.features("t").unwrap().shape(), &[3, 2]);
        let nd = ndarray::array![[1.0f32, 2.0], [3.0, 4.0]];
        assert_eq!(nd.features("t").unwrap().shape(), &[2, 2]);
        let v = Array::from_vec(vec![1.0f64, 2.0], [2]).unwrap();
        let e = v.features("KMeans::fit").unwrap_err().to_string();
        assert!(e.contains("KMeans::fit") && e.contains("2-D"), "{e}");
        assert!(Targets::<f64>::targets(&a, "fit").is_err());
        assert_eq!(v.targets("fit").unwrap().shape(), &[2]);
    }

    #[test]
    fn non_finite_values_are_found_with_their_place() {
        let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, f64::NAN, 5.0, 6.0], [3, 2]).unwrap();
        let e = check_finite("Ridge::fit", &a).unwrap_err().to_string();
        assert!(e.contains("row 1, column 1") && e.contains("NaN"), "{e}");
        let ok = Array::from_vec(vec![1.0f64, 2.0], [1, 2]).unwrap();
        assert!(check_finite("Ridge::fit", &ok).is_ok());
        assert!(check_rows("fit", 3, 4, "y")
            .unwrap_err()
            .to_string()
            .contains("3 rows"));
    }
}
