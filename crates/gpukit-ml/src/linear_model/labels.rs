//! Class labels on the device for the linear models: one-hot rows and class indices back to
//! labels (a `#[kernel]` gather). The sorted distinct labels are `crate::labels::distinct`.

use gpukit::prelude::*;

use crate::error::Result;

/// Threads per block of the gather.
const THREADS: usize = 256;

/// `out[i] = classes[idx[i]]` (grid-stride loop; indices come from an argmax, so in range).
#[kernel]
pub(crate) fn take_labels(classes: &[i64], idx: &[i64], out: &mut [i64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = classes[idx[i] as usize];
    }
}

/// `(n, k)` rows with 1 in the column of each sample's class (`classes` of length `k`).
pub(crate) fn one_hot<T: Float>(y: &Array<i64>, classes: &Array<i64>) -> Result<Array<T>> {
    let (n, k) = (y.len(), classes.len());
    let hit = y
        .view()
        .reshape([n, 1])?
        .eq(&classes.view().reshape([1, k])?)?;
    Ok(hit.astype::<T>()?)
}

/// `classes[idx]`, on `idx`'s device.
pub(crate) fn take(classes: &Array<i64>, idx: &Array<i64>) -> Result<Array<i64>> {
    let n = idx.len();
    let mut out = Array::<i64>::zeros_on(n, &idx.device())?;
    if n == 0 {
        return Ok(out);
    }
    let blocks = n.div_ceil(THREADS).clamp(1, 8192) as u32;
    launch!(take_labels[blocks, THREADS as u32](classes, idx, &mut out))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::distinct as classes;

    fn cpu(v: Vec<i64>) -> Array<i64> {
        let n = v.len();
        Array::from_vec_on(v, n, &Device::Cpu).unwrap()
    }

    #[test]
    fn classes_are_sorted_and_distinct() {
        let y = cpu(vec![3, -1, 3, 7, -1, 0, 7, 7]);
        assert_eq!(classes(&y).unwrap().to_vec().unwrap(), vec![-1, 0, 3, 7]);
        assert_eq!(classes(&cpu(vec![5])).unwrap().to_vec().unwrap(), vec![5]);
        assert!(classes(&cpu(vec![])).unwrap().is_empty());
    }

    #[test]
    fn one_hot_and_take_invert_each_other() {
        let y = cpu(vec![7, 3, 7, 0]);
        let c = classes(&y).unwrap();
        let h = one_hot::<f64>(&y, &c).unwrap();
        assert_eq!(h.shape(), &[4, 3]);
        assert_eq!(
            h.to_vec().unwrap(),
            vec![0., 0., 1., 0., 1., 0., 0., 0., 1., 1., 0., 0.]
        );
        let idx = h.argmax_axis(1).unwrap();
        assert_eq!(take(&c, &idx).unwrap().to_vec().unwrap(), vec![7, 3, 7, 0]);
    }

    #[test]
    fn the_gather_kernel_compiles_with_nvrtc() {
        gpukit::testing::assert_kernels_compile(&[&take_labels::INFO]);
    }
}
