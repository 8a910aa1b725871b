//! CPU-backend tests of the axis reductions, against ndarray where it has the function
//! (`sum_axis`, `mean_axis`, `var_axis`, `std_axis`, `fold_axis`) and against plain loops.

use super::*;
use crate::array::axis::keepdims;
use crate::device::Device;
use ndarray::{ArrayD, Axis, IxDyn};

/// A deterministic "random" array of `shape` with values in [-5, 5).
fn sample(shape: &[usize], seed: u64) -> ArrayD<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ArrayD::from_shape_fn(IxDyn(shape), |_| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 10.0 - 5.0
    })
}

fn cpu(a: &ArrayD<f64>) -> Array<f64> {
    Array::from_ndarray_on(a, &Device::Cpu).unwrap()
}

fn close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-9 * w.abs().max(1.0);
        assert!(
            g == w || (g - w).abs() <= tol || (g.is_nan() && w.is_nan()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

const SHAPES: [&[usize]; 8] = [
    &[7],
    &[1],
    &[0],
    &[3, 4],
    &[2, 3, 5],
    &[4, 0, 3],
    &[1, 1, 300],
    &[70_000, 2],
];

#[test]
fn sum_mean_var_std_match_ndarray() {
    for (n, shape) in SHAPES.iter().enumerate() {
        let h = sample(shape, n as u64);
        let a = cpu(&h);
        for ax in 0..shape.len() {
            let what = format!("shape {shape:?} axis {ax}");
            let want = h.sum_axis(Axis(ax));
            close(
                &a.sum_axis(ax).unwrap().to_vec().unwrap(),
                want.as_slice().unwrap(),
                &what,
            );
            assert_eq!(a.sum_axis(ax).unwrap().shape(), want.shape(), "{what}");
            let kd = a.sum_axis(keepdims(ax)).unwrap();
            let mut kshape = shape.to_vec();
            kshape[ax] = 1;
            assert_eq!(kd.shape(), &kshape[..], "{what} keepdims");
            if shape[ax] > 0 {
                let mean = h.mean_axis(Axis(ax)).unwrap();
                close(
                    &a.mean_axis(ax).unwrap().to_vec().unwrap(),
                    mean.as_slice().unwrap(),
                    &what,
                );
                for ddof in [0usize, 1] {
                    if shape[ax] > ddof {
                        let var = h.var_axis(Axis(ax), ddof as f64);
                        close(
                            &a.var_axis(ax, ddof).unwrap().to_vec().unwrap(),
                            var.as_slice().unwrap(),
                            &format!("{what} var ddof {ddof}"),
                        );
                        let std = h.std_axis(Axis(ax), ddof as f64);
                        close(
                            &a.std_axis(ax, ddof).unwrap().to_vec().unwrap(),
                            std.as_slice().unwrap(),
                            &format!("{what} std ddof {ddof}"),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn min_max_prod_match_fold_axis() {
    for (n, shape) in SHAPES.iter().enumerate() {
        let h = sample(shape, 100 + n as u64);
        let a = cpu(&h);
        for ax in 0..shape.len() {
            let what = format!("shape {shape:?} axis {ax}");
            let prod = h.fold_axis(Axis(ax), 1.0, |&acc, &x| acc * x);
            close(
                &a.prod_axis(ax).unwrap().to_vec().unwrap(),
                prod.as_slice().unwrap(),
                &what,
            );
            if shape[ax] == 0 && !prod.is_empty() {
                assert!(matches!(a.min_axis(ax), Err(Error::Shape(_))), "{what}");
                assert!(matches!(a.argmax_axis(ax), Err(Error::Shape(_))), "{what}");
                continue;
            }
            let min = h.fold_axis(Axis(ax), f64::INFINITY, |&acc, &x| acc.min(x));
            let max = h.fold_axis(Axis(ax), f64::NEG_INFINITY, |&acc, &x| acc.max(x));
            close(
                &a.min_axis(ax).unwrap().to_vec().unwrap(),
                min.as_slice().unwrap(),
                &what,
            );
            close(
                &a.max_axis(ax).unwrap().to_vec().unwrap(),
                max.as_slice().unwrap(),
                &what,
            );
            // argmax: the value at the index is the max.
            let am = a.argmax_axis(ax).unwrap();
            assert_eq!(am.shape(), max.shape(), "{what}");
            for (idx, (&i, &m)) in am.to_vec().unwrap().iter().zip(max.iter()).enumerate() {
                let mut pos = ndarray::IxDyn(&vec![0; shape.len()]);
                let mut rest = idx;
                let mut k = shape.len();
                while k > 0 {
                    k -= 1;
                    if k == ax {
                        continue;
                    }
                    pos[k] = rest % shape[k];
                    rest /= shape[k];
                }
                pos[ax] = i as usize;
                assert_eq!(h[&pos], m, "{what} argmax at {idx}");
            }
        }
    }
}

#[test]
fn nan_and_ties_follow_numpy() {
    let nan = f64::NAN;
    let a = Array::from_vec_on(
        vec![3.0, 1.0, nan, 1.0, nan, 0.5, 2.0, 2.0],
        [2, 4],
        &Device::Cpu,
    )
    .unwrap();
    assert!(a.max_axis(1).unwrap().to_vec().unwrap()[0].is_nan());
    assert!(a.min_axis(1).unwrap().to_vec().unwrap()[1].is_nan());
    assert_eq!(a.argmin_axis(1).unwrap().to_vec().unwrap(), vec![2, 0]);
    assert_eq!(a.argmax_axis(1).unwrap().to_vec().unwrap(), vec![2, 0]);
    assert_eq!(a.argmax().unwrap(), 2);
    let t = Array::from_vec_on(vec![1i32, 5, 5, 0, 0, 5], [6], &Device::Cpu).unwrap();
    assert_eq!(t.argmax().unwrap(), 1, "first of ties");
    assert_eq!(t.argmin().unwrap(), 3);
    assert_eq!(t.argmax_axis(-1).unwrap().to_vec().unwrap(), vec![1]);
    assert!(matches!(
        Array::<f32>::zeros_on([0], &Device::Cpu).unwrap().argmin(),
        Err(Error::Shape(_))
    ));
}

#[test]
fn counts_any_all_and_whole_array_forms() {
    let a = Array::from_vec_on(vec![0i64, 2, 0, 0, -1, 3], [2, 3], &Device::Cpu).unwrap();
    assert_eq!(
        a.count_nonzero_axis(0).unwrap().to_vec().unwrap(),
        vec![0, 2, 1]
    );
    assert_eq!(
        a.count_nonzero_axis(1).unwrap().to_vec().unwrap(),
        vec![1, 2]
    );
    assert_eq!(
        a.any_axis(0).unwrap().to_vec().unwrap(),
        vec![false, true, true]
    );
    assert_eq!(a.all_axis(1).unwrap().to_vec().unwrap(), vec![false, false]);
    assert_eq!(a.all_axis(keepdims(0)).unwrap().shape(), &[1, 3]);
    assert!(a.any().unwrap() && !a.all().unwrap());
    assert_eq!(a.prod().unwrap(), 0);
    let b = Array::from_vec_on(vec![true, true, false], [3], &Device::Cpu).unwrap();
    assert!(b.any().unwrap() && !b.all().unwrap());
    let e = Array::<f32>::zeros_on([0, 4], &Device::Cpu).unwrap();
    assert!(!e.any().unwrap() && e.all().unwrap());
    assert_eq!(e.sum_axis(0).unwrap().to_vec().unwrap(), vec![0.0; 4]);
    assert_eq!(e.prod_axis(0).unwrap().to_vec().unwrap(), vec![1.0; 4]);
    assert!(e
        .mean_axis(0)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|x| x.is_nan()));
    let h = sample(&[40, 30], 5);
    let x = cpu(&h);
    let n = h.len() as f64;
    let mean = h.sum() / n;
    let var = h.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    close(&[x.var(1).unwrap()], &[var], "var");
    close(&[x.std(1).unwrap()], &[var.sqrt()], "std");
}

#[test]
fn cumsum_along_axes() {
    let a = Array::<i32>::arange_on(0, 12, &Device::Cpu)
        .unwrap()
        .reshape([3, 4])
        .unwrap();
    assert_eq!(
        a.cumsum_axis(0).unwrap().to_vec().unwrap(),
        vec![0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21]
    );
    assert_eq!(
        a.cumsum_axis(-1).unwrap().to_vec().unwrap(),
        vec![0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38]
    );
    let flat = a.cumsum().unwrap();
    assert_eq!(flat.shape(), &[12]);
    assert_eq!(flat.to_vec().unwrap()[11], 66);
    for shape in SHAPES {
        let h = sample(shape, 9);
        let x = cpu(&h);
        for ax in 0..shape.len() {
            let mut want = h.clone();
            want.accumulate_axis_inplace(Axis(ax), |&prev, cur| *cur += prev);
            let got = x.cumsum_axis(ax).unwrap();
            assert_eq!(got.shape(), want.shape());
            close(
                &got.to_vec().unwrap(),
                want.as_slice().unwrap(),
                &format!("{shape:?} {ax}"),
            );
        }
    }
}

#[test]
fn axis_errors_name_axis_and_shape() {
    let a = Array::<f64>::zeros_on([2, 3], &Device::Cpu).unwrap();
    let e = a.sum_axis(2).unwrap_err().to_string();
    assert!(e.contains("axis 2") && e.contains("[2, 3]"), "{e}");
    assert!(a.mean_axis(-3).is_err());
    assert!(a.cumsum_axis(5).is_err());
    let s = Array::<f64>::zeros_on([], &Device::Cpu).unwrap();
    assert!(s.sum_axis(0).is_err());
}
