//! `sort`, `argsort`, `sort_axis` and `argsort_axis` on a CUDA device against the CPU backend:
//! bit for bit (the same keys on both: NaN canonical and last, -0.0 before +0.0 in `sort`) and
//! index for index (`argsort` is stable on both, so its result is unique), for every numeric
//! dtype, on random rows with NaN, duplicates, -0.0, empty and one-element rows; rows that fit a
//! block's shared memory and rows that take the global-memory merge; the lab's (10_000, 5_000)
//! float64 array; every axis of 3-d arrays; and the errors.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side's own properties (sorted, a
//! permutation, stable) are tested beside the code (`src/array/sort/tests.rs`).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device, Numeric};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Random values with frequent duplicates, NaN, signed zeros and extremes.
trait Pick: Numeric + std::fmt::Debug {
    fn pick(rng: &mut StdRng) -> Self;
    /// The same value, bit for bit.
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! pick_int {
    ($($t:ty),*) => {$(
        impl Pick for $t {
            fn pick(rng: &mut StdRng) -> $t {
                match rng.random_range(0..10) {
                    0 => <$t>::MAX,
                    1 => <$t>::MIN,
                    2..=5 => rng.random_range(0..4) as $t,
                    _ => rng.random(),
                }
            }
            fn same(a: $t, b: $t) -> bool { a == b }
        }
    )*};
}
pick_int!(u8, i32, i64, u32, u64);

macro_rules! pick_float {
    ($($t:ty),*) => {$(
        impl Pick for $t {
            fn pick(rng: &mut StdRng) -> $t {
                match rng.random_range(0..12) {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => 0.0,
                    3 => -0.0,
                    4 => <$t>::INFINITY,
                    5 => <$t>::NEG_INFINITY,
                    6..=7 => rng.random_range(-3..3) as $t,
                    _ => rng.random_range(-1e6..1e6),
                }
            }
            fn same(a: $t, b: $t) -> bool { a.to_bits() == b.to_bits() }
        }
    )*};
}
pick_float!(f32, f64);

/// Sorts `v` (of `shape`) along `axis` on the GPU and on the CPU and compares both results.
fn compare<T: Pick>(dev: &Device, v: &[T], shape: &[usize], axis: isize, what: &str) {
    let g = Array::from_vec_on(v.to_vec(), shape.to_vec(), dev).unwrap();
    let c = Array::from_vec_on(v.to_vec(), shape.to_vec(), &Device::Cpu).unwrap();
    let gs = g.sort_axis(axis).unwrap();
    let cs = c.sort_axis(axis).unwrap();
    assert_eq!(gs.shape(), shape, "{what}");
    assert_eq!(gs.device(), *dev, "{what}");
    let (gv, cv) = (gs.to_vec().unwrap(), cs.to_vec().unwrap());
    if let Some(k) = (0..gv.len()).find(|&k| !T::same(gv[k], cv[k])) {
        panic!(
            "{what}: sort along {axis} of {shape:?} differs at {k}: gpu {:?} cpu {:?}",
            gv[k], cv[k]
        );
    }
    let gi = g.argsort_axis(axis).unwrap();
    assert_eq!(gi.shape(), shape, "{what}");
    let (gi, ci) = (
        gi.to_vec().unwrap(),
        c.argsort_axis(axis).unwrap().to_vec().unwrap(),
    );
    if let Some(k) = (0..gi.len()).find(|&k| gi[k] != ci[k]) {
        panic!(
            "{what}: argsort along {axis} of {shape:?} differs at {k}: gpu {} cpu {}",
            gi[k], ci[k]
        );
    }
}

fn random<T: Pick>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::pick(rng)).collect()
}

/// Random 2-d shapes (empty and one-element rows included) along the last axis.
fn rows_like_the_cpu<T: Pick>(dev: &Device, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut shapes = vec![
        vec![0usize],
        vec![1],
        vec![2],
        vec![0, 5],
        vec![5, 0],
        vec![7, 1],
        vec![1, 7],
        vec![3, 2048],
        vec![2, 2049],
        vec![1000, 3],
        vec![4, 5000],
    ];
    for _ in 0..12 {
        shapes.push(vec![rng.random_range(1..50), rng.random_range(0..1500)]);
    }
    for shape in shapes {
        let n = shape.iter().product();
        let v = random::<T>(&mut rng, n);
        compare(dev, &v, &shape, -1, std::any::type_name::<T>());
    }
}

#[test]
fn every_dtype_sorts_as_on_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    rows_like_the_cpu::<f64>(&dev, 1);
    rows_like_the_cpu::<f32>(&dev, 2);
    rows_like_the_cpu::<i32>(&dev, 3);
    rows_like_the_cpu::<i64>(&dev, 4);
    rows_like_the_cpu::<u32>(&dev, 5);
    rows_like_the_cpu::<u64>(&dev, 6);
    rows_like_the_cpu::<u8>(&dev, 7);
}

#[test]
fn rows_longer_than_shared_memory_merge_in_global_memory() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(11);
    // f64 argsort holds 16384 per block on an H100 (12 bytes each), sort 16384 (8 bytes), f32
    // sort 32768: these rows take one to several merge stages in global memory
    for (rows, len) in [
        (3usize, 16_385usize),
        (2, 40_000),
        (1, 100_000),
        (5, 70_001),
    ] {
        let v = random::<f64>(&mut rng, rows * len);
        compare(&dev, &v, &[rows, len], -1, "f64 long rows");
        let v = random::<f32>(&mut rng, rows * len);
        compare(&dev, &v, &[rows, len], -1, "f32 long rows");
        let v = random::<u8>(&mut rng, rows * len);
        compare(&dev, &v, &[rows, len], -1, "u8 long rows");
    }
    let v = random::<i64>(&mut rng, 1 << 20);
    compare(&dev, &v, &[1 << 20], -1, "i64, one row of 2^20");
}

#[test]
fn every_axis_of_3d_arrays() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(21);
    for shape in [
        [2usize, 3, 4],
        [1, 1, 1],
        [5, 1, 7],
        [0, 3, 2],
        [33, 65, 17],
        [3, 1000, 40],
    ] {
        let n = shape.iter().product();
        let v = random::<f64>(&mut rng, n);
        let w = random::<i32>(&mut rng, n);
        let b = random::<u8>(&mut rng, n);
        for axis in [-3isize, -2, -1, 0, 1, 2] {
            compare(&dev, &v, &shape, axis, "f64 3-d");
            compare(&dev, &w, &shape, axis, "i32 3-d");
            compare(&dev, &b, &shape, axis, "u8 3-d");
        }
    }
}

#[test]
fn the_lab_array_sorts_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (rows, len) = (10_000usize, 5_000usize);
    let a = gpukit::random::Generator::new(3)
        .uniform_on(0.0f64, 1.0, (rows, len), &dev)
        .unwrap();
    let host = a.to_vec().unwrap();
    let s = a.sort().unwrap().to_vec().unwrap();
    let i = a.argsort().unwrap().to_vec().unwrap();
    for r in (0..rows).step_by(97).chain([rows - 1]) {
        let row = &host[r * len..(r + 1) * len];
        let mut want = row.to_vec();
        want.sort_by(f64::total_cmp);
        assert_eq!(&s[r * len..(r + 1) * len], &want[..], "row {r}");
        let idx = &i[r * len..(r + 1) * len];
        let gathered: Vec<f64> = idx.iter().map(|&k| row[k as usize]).collect();
        assert_eq!(gathered, want, "argsort of row {r}");
    }
    // the whole result against the CPU backend
    compare(&dev, &host, &[rows, len], -1, "lab array");
}

#[test]
fn bad_axes_are_errors_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let a = Array::<f32>::zeros_on((2, 3), &dev).unwrap();
    for axis in [2isize, -3] {
        let e = a.sort_axis(axis).unwrap_err().to_string();
        assert!(
            e.contains(&format!("axis {axis}")) && e.contains("[2, 3]"),
            "{e}"
        );
        let e = a.argsort_axis(axis).unwrap_err().to_string();
        assert!(
            e.contains(&format!("axis {axis}")) && e.contains("[2, 3]"),
            "{e}"
        );
    }
    let scalar = Array::<f64>::zeros_on((), &dev).unwrap();
    assert!(scalar.sort().is_err() && scalar.argsort().is_err());
    // the device still works
    let ok = Array::from_vec_on(vec![2.0f32, 1.0], 2, &dev).unwrap();
    assert_eq!(ok.sort().unwrap().to_vec().unwrap(), [1.0, 2.0]);
}
