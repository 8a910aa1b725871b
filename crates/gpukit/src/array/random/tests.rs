//! CPU tests of `gpukit::random` (the GPU ones are in `tests/random_gpu.rs`).

use super::cpu::CHUNK;
use super::*;

const CPU: Device = Device::Cpu;

fn vec<T: Element>(a: Result<Array<T>>) -> Vec<T> {
    a.unwrap().to_vec().unwrap()
}

#[test]
fn same_seed_same_values_different_seed_different() {
    let (mut a, mut b, mut c) = (Generator::new(9), Generator::new(9), Generator::new(10));
    let x = vec(a.uniform_on(0.0f64, 1.0, 1000, &CPU));
    assert_eq!(x, vec(b.uniform_on(0.0f64, 1.0, 1000, &CPU)));
    assert_ne!(x, vec(c.uniform_on(0.0f64, 1.0, 1000, &CPU)));
    // The next draw of a generator differs from its first.
    let y = vec(a.uniform_on(0.0f64, 1.0, 1000, &CPU));
    assert_ne!(x, y);
    assert_eq!(y, vec(b.uniform_on(0.0f64, 1.0, 1000, &CPU)));
    let n1 = vec(a.normal_on(0.0f32, 1.0, 777, &CPU));
    assert_eq!(n1, vec(b.normal_on(0.0f32, 1.0, 777, &CPU)));
    let i1 = vec(a.integers_on(-3i64, 1000, 500, &CPU));
    assert_eq!(i1, vec(b.integers_on(-3i64, 1000, 500, &CPU)));
    assert_eq!(a, b);
    assert_eq!(a.seed(), 9);
}

#[test]
fn seeded_free_functions_match_a_generator() {
    seed(123);
    let x = vec(uniform_on(0.0f32, 1.0, 10, &CPU));
    let y = vec(integers_on(0u32, 9, 10, &CPU));
    let mut g = default_rng(123);
    assert_eq!(x, vec(g.uniform_on(0.0f32, 1.0, 10, &CPU)));
    assert_eq!(y, vec(g.integers_on(0u32, 9, 10, &CPU)));
}

#[test]
fn uniform_values_stay_in_range() {
    let mut g = Generator::new(1);
    for (l, h) in [
        (0.0, 1.0),
        (-5.0, -4.999),
        (1e6, 1e6 + 1.0),
        (-1e300, 1e300),
    ] {
        let v = vec(g.uniform_on(l, h, 100_000, &CPU));
        assert!(v.iter().all(|x| (l..h).contains(x)), "[{l}, {h})");
    }
    let v = vec(g.uniform_on(1.0f32, 1.0000001, 100_000, &CPU));
    assert!(v.iter().all(|x| (1.0..1.0000001f32).contains(x)));
}

#[test]
fn integer_values_stay_in_range_and_cover_it() {
    let mut g = Generator::new(2);
    let v = vec(g.integers_on(-3i32, 4, 10_000, &CPU));
    assert!(v.iter().all(|x| (-3..4).contains(x)));
    for k in -3..4 {
        assert!(v.contains(&k), "{k} never drawn");
    }
    let v = vec(g.integers_on(u64::MAX - 2, u64::MAX, 1000, &CPU));
    assert!(v.iter().all(|&x| x == u64::MAX - 2 || x == u64::MAX - 1));
    let v = vec(g.integers_on(i64::MIN, i64::MAX, 1000, &CPU));
    assert!(v.iter().any(|&x| x < 0) && v.iter().any(|&x| x > 0));
    let v = vec(g.integers_on(7u32, 8, 100, &CPU));
    assert!(v.iter().all(|&x| x == 7));
}

/// Mean and standard deviation of `v`.
fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[test]
fn normal_moments_match() {
    let mut g = Generator::new(3);
    let v = vec(g.normal_on(2.0f64, 3.0, 1_000_000, &CPU));
    let (m, s) = moments(&v);
    // Standard error of the mean: 3 / 1000; of the std: about 3 / 1414.
    assert!((m - 2.0).abs() < 0.015, "mean {m}");
    assert!((s - 3.0).abs() < 0.015, "std {s}");
    let v: Vec<f64> = vec(g.normal_on(-1.0f32, 0.5, 1_000_000, &CPU))
        .into_iter()
        .map(f64::from)
        .collect();
    let (m, s) = moments(&v);
    assert!(
        (m + 1.0).abs() < 0.005 && (s - 0.5).abs() < 0.005,
        "{m} {s}"
    );
    let z = vec(g.normal_on(4.0f64, 0.0, 10, &CPU));
    assert!(z.iter().all(|&x| x == 4.0));
}

#[test]
fn uniform_moments_match() {
    let mut g = Generator::new(4);
    let v = vec(g.uniform_on(-1.0f64, 3.0, 1_000_000, &CPU));
    let (m, s) = moments(&v);
    assert!((m - 1.0).abs() < 0.01, "mean {m}");
    assert!((s - 4.0 / 12f64.sqrt()).abs() < 0.01, "std {s}");
}

#[test]
fn integer_histogram_is_flat() {
    let mut g = Generator::new(5);
    let k = 10usize;
    let n = 1_000_000usize;
    let v = vec(g.integers_on(0i64, k as i64, n, &CPU));
    let mut counts = vec![0usize; k];
    v.iter().for_each(|&x| counts[x as usize] += 1);
    // Chi-squared with 9 degrees of freedom: 27.9 is its 99.9th percentile.
    let expected = (n / k) as f64;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 27.9, "chi2 {chi2}, counts {counts:?}");
}

#[test]
fn thread_count_does_not_change_the_values() {
    let n = 3 * CHUNK + 17;
    let draw = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut g = Generator::new(77);
            (
                vec(g.uniform_on(0.0f32, 1.0, n, &CPU)),
                vec(g.normal_on(0.0f64, 1.0, n, &CPU)),
                vec(g.integers_on(0u64, 1 << 40, n, &CPU)),
            )
        })
    };
    assert_eq!(draw(1), draw(4));
    // Chunks are distinct streams, not repeats of one.
    let (u, _, _) = draw(2);
    assert_ne!(u[..CHUNK], u[CHUNK..2 * CHUNK]);
}

#[test]
fn shapes_including_empty() {
    let mut g = Generator::new(6);
    let a = g.uniform_on(0.0f64, 1.0, (2, 3), &CPU).unwrap();
    assert_eq!(a.shape(), &[2, 3]);
    let e = g.normal_on(0.0f32, 1.0, (0, 5), &CPU).unwrap();
    assert_eq!((e.shape(), e.size()), (&[0usize, 5][..], 0));
    let e = g.integers_on(0i32, 5, 0, &CPU).unwrap();
    assert!(e.is_empty());
    let s = g.uniform_on(0.0f64, 1.0, (), &CPU).unwrap();
    assert_eq!((s.ndim(), s.size()), (0, 1));
}

#[test]
fn bad_arguments_are_errors_naming_the_values() {
    let mut g = Generator::new(0);
    let msg = |e: Error| e.to_string();
    let e = msg(g.uniform_on(2.0f64, 1.0, 3, &CPU).unwrap_err());
    assert!(e.contains("low = 2") && e.contains("high = 1"), "{e}");
    let e = msg(g.uniform_on(1.0f64, 1.0, 3, &CPU).unwrap_err());
    assert!(e.contains("low < high"), "{e}");
    let e = msg(g.uniform_on(f64::NAN, 1.0, 3, &CPU).unwrap_err());
    assert!(e.contains("NaN"), "{e}");
    let e = msg(g.uniform_on(-3e38f32, 3e38, 3, &CPU).unwrap_err());
    assert!(e.contains("high - low"), "{e}");
    let e = msg(g.normal_on(0.0f64, -1.0, 3, &CPU).unwrap_err());
    assert!(e.contains("std = -1"), "{e}");
    let e = msg(g.normal_on(0.0f64, f64::NAN, 3, &CPU).unwrap_err());
    assert!(e.contains("std = NaN"), "{e}");
    let e = msg(g.normal_on(f64::INFINITY, 1.0, 3, &CPU).unwrap_err());
    assert!(e.contains("mean = inf"), "{e}");
    let e = msg(g.integers_on(5i32, 5, 3, &CPU).unwrap_err());
    assert!(e.contains("low = 5, high = 5"), "{e}");
    let e = msg(g.integers_on(0u8, 5, 3, &CPU).unwrap_err());
    assert!(e.contains("uint8") || e.contains("u8"), "{e}");
    let e = msg(g.integers_on(0.0f64, 5.0, 3, &CPU).unwrap_err());
    assert!(e.contains("float64") || e.contains("f64"), "{e}");
    // A failed call draws nothing: the generator is where it was.
    assert_eq!(g, Generator::new(0));
}
