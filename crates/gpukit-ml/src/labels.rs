//! Class labels on the device: the sorted distinct labels of an array, and each label's code
//! (its position among them). Classifiers keep codes `0..n_classes`; metrics count pairs of
//! codes.

use gpukit::prelude::*;

use crate::error::Result;
use crate::kernels::{labels as k, stride_grid};

/// The distinct values of `y`, sorted ascending, on `y`'s device (a sort, a flag per run
/// start, a masked copy).
pub fn distinct(y: &Array<i64>) -> Result<Array<i64>> {
    if y.is_empty() {
        return Ok(Array::zeros_on(0, &y.device())?);
    }
    let sorted = y.flatten()?.sort()?;
    let mut flags = Array::<bool>::empty_on(sorted.size(), &y.device())?;
    let (b, t) = stride_grid(sorted.size());
    launch!(k::run_starts[b, t](&sorted, &mut flags))?;
    Ok(sorted.masked(&flags)?)
}

/// The code of every label of `y` in the sorted distinct `table` (`-1` where absent).
pub fn codes(y: &Array<i64>, table: &Array<i64>) -> Result<Array<i64>> {
    let mut out = Array::<i64>::empty_on(y.shape().to_vec(), &y.device())?;
    if y.size() > 0 {
        let (b, t) = stride_grid(y.size());
        launch!(k::label_codes[b, t](y, table, &mut out))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_labels_and_codes() {
        let cpu = Device::Cpu;
        let y = Array::from_vec_on(vec![5i64, -1, 5, 3, 3, 9, -1], 7, &cpu).unwrap();
        let t = distinct(&y).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![-1, 3, 5, 9]);
        let c = codes(&y, &t).unwrap();
        assert_eq!(c.to_vec().unwrap(), vec![2, 0, 2, 1, 1, 3, 0]);
        let other = Array::from_vec_on(vec![4i64, 9], 2, &cpu).unwrap();
        assert_eq!(codes(&other, &t).unwrap().to_vec().unwrap(), vec![-1, 3]);
        let empty = Array::<i64>::zeros_on(0, &cpu).unwrap();
        assert_eq!(distinct(&empty).unwrap().size(), 0);
    }
}
