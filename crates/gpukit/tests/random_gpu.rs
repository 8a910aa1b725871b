//! `gpukit::random`, `Array::eye` and `Array::empty` on a CUDA device (cuRAND): determinism per
//! seed, ranges, distributions, empty shapes, and eye/empty against the CPU backend.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side of the same properties is
//! tested beside the code (`src/array/random/tests.rs`).

use gpukit::random::Generator;
use gpukit::{Array, Device, Element};

use gpukit::testing::serial_gpu_or_skip as gpu;

fn host<T: Element>(a: gpukit::Result<Array<T>>) -> Vec<T> {
    a.unwrap().to_vec().unwrap()
}

/// Mean and standard deviation of `v`.
fn moments(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = v.clone().count() as f64;
    let mean = v.clone().sum::<f64>() / n;
    let var = v.map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[test]
fn same_seed_same_arrays_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (mut a, mut b, mut c) = (Generator::new(11), Generator::new(11), Generator::new(12));
    for n in [1usize, 2, 7, 1000, 65_537] {
        let x = host(a.uniform_on(0.0f32, 1.0, n, &dev));
        assert_eq!(
            x,
            host(b.uniform_on(0.0f32, 1.0, n, &dev)),
            "uniform f32, {n}"
        );
        assert_ne!(
            x,
            host(c.uniform_on(0.0f32, 1.0, n, &dev)),
            "another seed, {n}"
        );
        let x = host(a.uniform_on(-2.0f64, 2.0, n, &dev));
        assert_eq!(x, host(b.uniform_on(-2.0f64, 2.0, n, &dev)));
        let x = host(a.normal_on(1.0f32, 2.0, n, &dev));
        assert_eq!(
            x,
            host(b.normal_on(1.0f32, 2.0, n, &dev)),
            "normal f32, {n}"
        );
        let x = host(a.normal_on(1.0f64, 2.0, n, &dev));
        assert_eq!(
            x,
            host(b.normal_on(1.0f64, 2.0, n, &dev)),
            "normal f64, {n}"
        );
        let x = host(a.integers_on(-9i32, 9, n, &dev));
        assert_eq!(x, host(b.integers_on(-9i32, 9, n, &dev)));
        let x = host(a.integers_on(0u64, 1 << 50, n, &dev));
        assert_eq!(x, host(b.integers_on(0u64, 1 << 50, n, &dev)));
    }
    // Successive draws differ; draws from other generators in between change nothing.
    let mut d = Generator::new(5);
    let first = host(d.uniform_on(0.0f64, 1.0, 100, &dev));
    let second = host(d.uniform_on(0.0f64, 1.0, 100, &dev));
    assert_ne!(first, second);
    let mut e = Generator::new(5);
    assert_eq!(first, host(e.uniform_on(0.0f64, 1.0, 100, &dev)));
    let _ = host(Generator::new(99).normal_on(0.0f64, 1.0, 333, &dev));
    assert_eq!(second, host(e.uniform_on(0.0f64, 1.0, 100, &dev)));
    // The GPU stream is not the CPU stream (documented).
    let cpu = host(Generator::new(5).uniform_on(0.0f64, 1.0, 100, &Device::Cpu));
    assert_ne!(first, cpu);
}

#[test]
fn uniform_values_stay_in_range_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut g = Generator::new(1);
    for (l, h) in [
        (0.0, 1.0),
        (-5.0, -4.999),
        (1e6, 1e6 + 1.0),
        (-1e300, 1e300),
    ] {
        let v = host(g.uniform_on(l, h, 1_000_000, &dev));
        assert!(v.iter().all(|x| (l..h).contains(x)), "[{l}, {h})");
    }
    for (l, h) in [(0.0f32, 1.0f32), (1.0, 1.0000001), (-3.0, 7.0)] {
        let v = host(g.uniform_on(l, h, 1_000_000, &dev));
        assert!(v.iter().all(|x| (l..h).contains(x)), "[{l}, {h}) f32");
    }
    let v = host(g.uniform_on(-1.0f64, 3.0, 1_000_000, &dev));
    let (m, s) = moments(v.iter().copied());
    assert!((m - 1.0).abs() < 0.01, "mean {m}");
    assert!((s - 4.0 / 12f64.sqrt()).abs() < 0.01, "std {s}");
}

#[test]
fn integers_stay_in_range_and_are_flat_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut g = Generator::new(2);
    let v = host(g.integers_on(-3i32, 4, 10_000, &dev));
    assert!(v.iter().all(|x| (-3..4).contains(x)));
    (-3..4).for_each(|k| assert!(v.contains(&k), "{k} never drawn"));
    let v = host(g.integers_on(u64::MAX - 2, u64::MAX, 1000, &dev));
    assert!(v.iter().all(|&x| x == u64::MAX - 2 || x == u64::MAX - 1));
    let v = host(g.integers_on(i64::MIN, i64::MAX, 1000, &dev));
    assert!(v.iter().any(|&x| x < 0) && v.iter().any(|&x| x > 0));
    let v = host(g.integers_on(0u32, u32::MAX, 1000, &dev));
    assert!(v.iter().any(|&x| x > u32::MAX / 2) && v.iter().any(|&x| x < u32::MAX / 2));
    let v = host(g.integers_on(7u32, 8, 100, &dev));
    assert!(v.iter().all(|&x| x == 7));
    // Histograms of 10 values, 64-bit (128 random bits each) and 32-bit (64 bits each).
    let n = 1_000_000usize;
    let wide: Vec<usize> = host(g.integers_on(0i64, 10, n, &dev))
        .into_iter()
        .map(|x| x as usize)
        .collect();
    let narrow: Vec<usize> = host(g.integers_on(100u32, 110, n, &dev))
        .into_iter()
        .map(|x| x as usize - 100)
        .collect();
    for v in [wide, narrow] {
        let mut counts = vec![0usize; 10];
        v.iter().for_each(|&x| counts[x] += 1);
        let expected = (n / 10) as f64;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 27.9: the 99.9th percentile of chi-squared with 9 degrees of freedom.
        assert!(
            chi2 < 27.9,
            "chi2 {chi2} (9 degrees of freedom), counts {counts:?}"
        );
    }
}

#[test]
fn normal_moments_match_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut g = Generator::new(3);
    let v = host(g.normal_on(2.0f64, 3.0, 1_000_001, &dev));
    let (m, s) = moments(v.iter().copied());
    assert!(
        (m - 2.0).abs() < 0.015 && (s - 3.0).abs() < 0.015,
        "{m} {s}"
    );
    let v = host(g.normal_on(-1.0f32, 0.5, 1_000_000, &dev));
    let (m, s) = moments(v.iter().map(|&x| x as f64));
    assert!(
        (m + 1.0).abs() < 0.005 && (s - 0.5).abs() < 0.005,
        "{m} {s}"
    );
    assert!(v.iter().all(|x| x.is_finite()));
    let z = host(g.normal_on(4.0f64, 0.0, 11, &dev));
    assert!(z.iter().all(|&x| x == 4.0), "std 0: {z:?}");
}

#[test]
fn empty_and_odd_shapes_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut g = Generator::new(6);
    let a = g.uniform_on(0.0f64, 1.0, (0, 4), &dev).unwrap();
    assert_eq!((a.shape(), a.size()), (&[0usize, 4][..], 0));
    assert!(host(g.normal_on(0.0f32, 1.0, 0, &dev)).is_empty());
    assert!(host(g.integers_on(0i64, 3, 0, &dev)).is_empty());
    let a = g.normal_on(0.0f64, 1.0, (3, 5), &dev).unwrap();
    assert_eq!(a.shape(), &[3, 5]);
    assert_eq!(a.to_vec().unwrap().len(), 15);
    // Arithmetic on an odd-sized normal array (its buffer holds one value more) sees 15 values.
    assert!(a.sum().unwrap().is_finite());
    let s = g.uniform_on(0.0f32, 1.0, (), &dev).unwrap();
    assert_eq!((s.ndim(), s.size()), (0, 1));
    assert!(g.uniform_on(1.0f64, 0.0, 3, &dev).is_err());
    assert!(g.normal_on(0.0f64, -1.0, 3, &dev).is_err());
    assert!(g.integers_on(3i32, 3, 3, &dev).is_err());
    // The device is still healthy after the error cases.
    dev.synchronize().unwrap();
}

#[test]
fn eye_and_empty_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    for n in [0usize, 1, 2, 5, 300] {
        let g = host(Array::<f64>::eye_on(n, &dev));
        assert_eq!(
            g,
            host(Array::<f64>::eye_on(n, &Device::Cpu)),
            "f64 eye({n})"
        );
        let g = host(Array::<f32>::eye_on(n, &dev));
        assert_eq!(
            g,
            host(Array::<f32>::eye_on(n, &Device::Cpu)),
            "f32 eye({n})"
        );
        let g = host(Array::<u8>::eye_on(n, &dev));
        assert_eq!(g, host(Array::<u8>::eye_on(n, &Device::Cpu)), "u8 eye({n})");
        let g = host(Array::<bool>::eye_on(n, &dev));
        assert_eq!(
            g,
            host(Array::<bool>::eye_on(n, &Device::Cpu)),
            "bool eye({n})"
        );
        let g = host(Array::<i64>::eye_on(n, &dev));
        assert_eq!(g.iter().sum::<i64>(), n as i64);
    }
    for shape in [vec![0], vec![3], vec![4, 5], vec![2, 0, 3]] {
        let mut e = Array::<f32>::empty_on(shape.clone(), &dev).unwrap();
        assert_eq!((e.shape(), e.device()), (&shape[..], dev));
        e.fill(2.5).unwrap();
        assert!(host(Ok(e)).iter().all(|&x| x == 2.5));
        let b = Array::<bool>::empty_on(shape.clone(), &dev).unwrap();
        assert!(host(Ok(b)).iter().all(|&x| !x), "bool empty is zeroed");
    }
}
