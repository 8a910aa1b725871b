//! What a chart can be drawn from: gpukit arrays (on any device), ndarray arrays and views,
//! slices, arrays and `Vec`s of numbers, all turned into `f64` values once on the host.

use crate::array::Array;
use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayBase, Data, Dimension};

/// A number a chart can show: every primitive integer and float type, and `bool` (0 or 1).
pub trait PlotElement: Copy {
    /// Whether the type is a float: integer RGB images are in `0..=255`, float ones in `[0, 1]`.
    const IS_FLOAT: bool;
    /// The value as `f64` (as Rust's `as` converts it).
    fn to_plot_f64(self) -> f64;
}

macro_rules! plot_element {
    ($float:expr => $($t:ty),*) => {$(
        impl PlotElement for $t {
            const IS_FLOAT: bool = $float;
            fn to_plot_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}

plot_element!(false => u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);
plot_element!(true => f32, f64);

impl PlotElement for bool {
    const IS_FLOAT: bool = false;
    fn to_plot_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
}

/// Values ready to plot: the numbers in row-major order and the shape they came in.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotValues {
    /// The shape: `[len]` for a slice or `Vec`, the array's shape for an array.
    pub shape: Vec<usize>,
    /// The values, row-major (C order), as `f64`.
    pub values: Vec<f64>,
    /// Whether the source elements were floats (see [`PlotElement::IS_FLOAT`]).
    pub is_float: bool,
}

impl PlotValues {
    fn new<T: PlotElement>(shape: Vec<usize>, values: impl Iterator<Item = T>) -> PlotValues {
        PlotValues {
            shape,
            values: values.map(PlotElement::to_plot_f64).collect(),
            is_float: T::IS_FLOAT,
        }
    }
}

/// Data a chart can be drawn from.
///
/// Implemented for gpukit [`Array`]s (a device array is copied to the host once), ndarray
/// arrays and views of any dimension, slices, fixed-size arrays and `Vec`s of any
/// [`PlotElement`], and references to all of these.
pub trait PlotData {
    /// The values on the host, as `f64`, with their shape.
    fn plot_values(&self) -> Result<PlotValues>;
}

impl<T: PlotElement> PlotData for [T] {
    fn plot_values(&self) -> Result<PlotValues> {
        Ok(PlotValues::new(vec![self.len()], self.iter().copied()))
    }
}

impl<T: PlotElement> PlotData for Vec<T> {
    fn plot_values(&self) -> Result<PlotValues> {
        self.as_slice().plot_values()
    }
}

impl<T: PlotElement, const N: usize> PlotData for [T; N] {
    fn plot_values(&self) -> Result<PlotValues> {
        self.as_slice().plot_values()
    }
}

impl<S, D, T> PlotData for ArrayBase<S, D>
where
    S: Data<Elem = T>,
    D: Dimension,
    T: PlotElement,
{
    fn plot_values(&self) -> Result<PlotValues> {
        // `iter` walks in logical (row-major) order whatever the memory layout.
        Ok(PlotValues::new(self.shape().to_vec(), self.iter().copied()))
    }
}

impl<T: Element + PlotElement> PlotData for Array<T> {
    fn plot_values(&self) -> Result<PlotValues> {
        let host = self.to_vec()?;
        Ok(PlotValues::new(self.shape().to_vec(), host.into_iter()))
    }
}

impl<P: PlotData + ?Sized> PlotData for &P {
    fn plot_values(&self) -> Result<PlotValues> {
        (**self).plot_values()
    }
}

/// The values of one-dimensional data (a 2-D array with a single row or column counts too),
/// or a clear error naming `what` (`"x"`, `"y"`, `"values"`).
pub(crate) fn values_1d(data: &(impl PlotData + ?Sized), what: &str) -> Result<Vec<f64>> {
    let v = data.plot_values()?;
    let non_trivial = v.shape.iter().filter(|&&n| n != 1).count();
    if non_trivial > 1 {
        return Err(Error::Shape(format!(
            "{what} must be one-dimensional; it has shape {:?}",
            v.shape
        )));
    }
    if v.values.is_empty() {
        return Err(Error::Shape(format!(
            "{what} is empty: there is nothing to plot"
        )));
    }
    Ok(v.values)
}

/// Checks that `x` and `y` have the same length and at least one point where both are finite.
pub(crate) fn check_pairs(x: &[f64], y: &[f64]) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::Shape(format!(
            "x has {} values but y has {}; they must have the same length",
            x.len(),
            y.len()
        )));
    }
    if !x.iter().zip(y).any(|(a, b)| a.is_finite() && b.is_finite()) {
        return Err(Error::Other(format!(
            "no point to plot: none of the {} (x, y) pairs has both values finite \
             (they are NaN or infinite)",
            x.len()
        )));
    }
    Ok(())
}

/// Checks that `values` has at least one finite value.
pub(crate) fn check_finite(values: &[f64], what: &str) -> Result<()> {
    if values.iter().any(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(Error::Other(format!(
            "{what} has no finite value to plot (all {} are NaN or infinite)",
            values.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_gives_f64_values_in_row_major_order() {
        let v = vec![1u8, 2, 3];
        assert_eq!(v.plot_values().unwrap().values, [1.0, 2.0, 3.0]);
        assert!(!v.plot_values().unwrap().is_float);
        assert_eq!([1.5f32, 2.5].plot_values().unwrap().values, [1.5, 2.5]);
        assert!([1.5f32].plot_values().unwrap().is_float);
        assert_eq!(v[1..].plot_values().unwrap().values, [2.0, 3.0]);
        assert_eq!([true, false].plot_values().unwrap().values, [1.0, 0.0]);
        let by_ref: &Vec<u8> = &v;
        assert_eq!(by_ref.plot_values().unwrap().shape, [3]);

        let a = ndarray::Array2::from_shape_vec((2, 3), (0..6).collect::<Vec<i64>>()).unwrap();
        let t = a.t();
        let pv = t.plot_values().unwrap();
        assert_eq!(pv.shape, [3, 2]);
        assert_eq!(pv.values, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }

    #[test]
    fn gpukit_arrays_are_copied_to_the_host() {
        let a = Array::<f32>::arange(0.0, 4.0).unwrap();
        let pv = a.plot_values().unwrap();
        assert_eq!(pv.values, [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(pv.shape, [4]);
        let m = Array::<i32>::zeros((2, 2)).unwrap();
        assert_eq!(m.plot_values().unwrap().shape, [2, 2]);
    }

    #[test]
    fn one_dimensional_checks_are_clear() {
        let col = ndarray::Array2::<f64>::zeros((4, 1));
        assert_eq!(values_1d(&col, "y").unwrap().len(), 4);
        let m = ndarray::Array2::<f64>::zeros((2, 3));
        let e = values_1d(&m, "y").unwrap_err().to_string();
        assert!(
            e.contains("y must be one-dimensional") && e.contains("[2, 3]"),
            "{e}"
        );
        let empty: Vec<f64> = vec![];
        let e = values_1d(&empty, "x").unwrap_err().to_string();
        assert!(e.contains("x is empty"), "{e}");
    }

    #[test]
    fn pairs_need_equal_lengths_and_a_finite_point() {
        let e = check_pairs(&[1.0, 2.0], &[1.0]).unwrap_err().to_string();
        assert!(e.contains("x has 2 values but y has 1"), "{e}");
        let e = check_pairs(&[1.0, f64::NAN], &[f64::NAN, 2.0]).unwrap_err();
        assert!(e.to_string().contains("no point to plot"), "{e}");
        check_pairs(&[1.0, f64::NAN], &[1.0, 2.0]).unwrap();
        let e = check_finite(&[f64::NAN, f64::INFINITY], "x").unwrap_err();
        assert!(e.to_string().contains("all 2 are NaN"), "{e}");
    }
}
