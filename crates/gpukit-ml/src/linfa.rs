//! linfa interop (feature `linfa`): a linfa `Dataset` in as (features, targets) gpukit arrays,
//! and gpukit arrays out as a `Dataset`, so that a model here can be checked against linfa's,
//! the CPU ecosystem's reference.
//!
//! linfa 0.8 is built on ndarray 0.16 while gpukit uses 0.17: two distinct crates whose arrays
//! do not convert into each other. The values therefore pass through a flat vector in C order
//! and a shape (one host copy each way). [`linfa_ndarray`] re-exports linfa's ndarray for
//! naming its arrays.
//!
//! ```
//! use gpukit_ml::linfa::{from_linfa_on, linfa_ndarray as nd, to_linfa};
//! # fn main() -> gpukit_ml::Result<()> {
//! let ds = ::linfa::Dataset::new(nd::array![[1.0f64, 2.0], [3.0, 4.0]], nd::array![0i64, 1]);
//! let (x, y) = from_linfa_on(&ds, &gpukit::Device::Cpu)?;
//! assert_eq!(x.shape(), &[2, 2]);
//! assert_eq!(y.to_vec()?, vec![0, 1]);
//! let back = to_linfa(&x, &y)?;
//! assert_eq!(back.records, ds.records);
//! # Ok(())
//! # }
//! ```

use gpukit::{Array, Device, Element};
use ndarray016 as nd;

use crate::error::{MlError, Result};
use crate::input::matrix;

/// linfa's ndarray (0.16), re-exported to name the arrays of linfa datasets.
pub use ndarray016 as linfa_ndarray;

/// A linfa dataset's records `(n_samples, n_features)` and targets (`(n_samples,)`, or
/// `(n_samples, 1)` as linfa's default `Dataset` has) as gpukit arrays on the default device.
/// Errors: targets with several columns (one target per sample is what the models here fit).
pub fn from_linfa<F, L, S1, S2, D>(
    ds: &::linfa::DatasetBase<nd::ArrayBase<S1, nd::Ix2>, nd::ArrayBase<S2, D>>,
) -> Result<(Array<F>, Array<L>)>
where
    F: Element,
    L: Element,
    S1: nd::Data<Elem = F>,
    S2: nd::Data<Elem = L>,
    D: nd::Dimension,
{
    from_linfa_on(ds, &gpukit::default_device())
}

/// [`from_linfa`] onto `device`.
pub fn from_linfa_on<F, L, S1, S2, D>(
    ds: &::linfa::DatasetBase<nd::ArrayBase<S1, nd::Ix2>, nd::ArrayBase<S2, D>>,
    device: &Device,
) -> Result<(Array<F>, Array<L>)>
where
    F: Element,
    L: Element,
    S1: nd::Data<Elem = F>,
    S2: nd::Data<Elem = L>,
    D: nd::Dimension,
{
    let what = "from_linfa";
    let records = &ds.records;
    let (n, d) = records.dim();
    let targets = &ds.targets;
    let tshape = targets.shape();
    let single = match tshape {
        [m] => *m == n,
        [m, 1] => *m == n,
        _ => false,
    };
    if !single {
        return Err(MlError::Shape {
            what,
            detail: format!(
                "the targets must be one value per sample ({n},) or ({n}, 1), got {tshape:?}"
            ),
        });
    }
    let x = Array::from_vec_on(records.iter().copied().collect(), [n, d], device)?;
    let y = Array::from_vec_on(targets.iter().copied().collect(), [n], device)?;
    Ok((x, y))
}

/// Features `(n_samples, n_features)` as a linfa (ndarray 0.16) matrix on the host.
pub fn to_linfa_records<F: Element>(x: &Array<F>) -> Result<nd::Array2<F>> {
    let (n, d) = matrix("to_linfa_records", x.shape())?;
    nd::Array2::from_shape_vec((n, d), x.to_vec()?).map_err(|e| MlError::Shape {
        what: "to_linfa_records",
        detail: e.to_string(),
    })
}

/// A 1-D array (targets, predictions) as a linfa (ndarray 0.16) vector on the host.
pub fn to_linfa_targets<L: Element>(y: &Array<L>) -> Result<nd::Array1<L>> {
    if y.ndim() != 1 {
        return Err(MlError::Shape {
            what: "to_linfa_targets",
            detail: format!("targets must be 1-D, got shape {:?}", y.shape()),
        });
    }
    Ok(nd::Array1::from_vec(y.to_vec()?))
}

/// Features and targets as a linfa `Dataset` (records `(n, d)`, targets `(n,)`) on the host.
pub fn to_linfa<F: Element, L: Element>(
    x: &Array<F>,
    y: &Array<L>,
) -> Result<::linfa::Dataset<F, L, nd::Ix1>> {
    let records = to_linfa_records(x)?;
    let targets = to_linfa_targets(y)?;
    crate::input::check_rows("to_linfa", records.nrows(), targets.len(), "the targets")?;
    Ok(::linfa::Dataset::new(records, targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_round_trip() {
        let cpu = Device::Cpu;
        let ds = ::linfa::Dataset::new(
            nd::array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]],
            nd::array![[7i64], [8]],
        );
        let (x, y) = from_linfa_on(&ds, &cpu).unwrap();
        assert_eq!(x.shape(), &[2, 3]);
        assert_eq!(x.to_vec().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(y.to_vec().unwrap(), vec![7, 8]);
        let back = to_linfa(&x, &y).unwrap();
        assert_eq!(back.records, ds.records);
        assert_eq!(back.targets, nd::array![7i64, 8]);
        // a transposed (non-C-order) view converts in logical order
        let t = ds.records.t().to_owned();
        let (xt, _) =
            from_linfa_on(&::linfa::Dataset::new(t, nd::array![0i64, 1, 2]), &cpu).unwrap();
        assert_eq!(xt.to_vec().unwrap(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let ds = ::linfa::Dataset::new(
            nd::array![[1.0f64], [2.0]],
            nd::array![[1.0f64, 2.0], [3.0, 4.0]],
        );
        let e = from_linfa_on(&ds, &Device::Cpu).unwrap_err().to_string();
        assert!(e.contains("one value per sample"), "{e}");
        let x = Array::<f64>::zeros_on([3, 2], &Device::Cpu).unwrap();
        let y = Array::<i64>::zeros_on([2], &Device::Cpu).unwrap();
        assert!(to_linfa(&x, &y).is_err());
        assert!(to_linfa_targets(&x).is_err());
    }
}
