//! KMeans on the first CUDA device against the CPU backend (which `src/cluster/tests.rs`
//! checks against a host Lloyd): the same centres, labels and iterations from the same initial
//! centres, f64 and f32, in one chunk and many; k-means++ finding separated blobs; then
//! 1M × 64 points, 100 clusters, 20 iterations on the GPU, with the time printed.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use std::time::Instant;

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device};
use gpukit_ml::cluster::{KMeans, KMeansInit};
use gpukit_ml::datasets::{make_blobs_on, make_classification_on};
use gpukit_ml::MlFloat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Blobs on the host: `k` centres in `[-10, 10)^d`, spread `std`, and the true labels.
fn blobs(seed: u64, n: usize, d: usize, k: usize, std: f64) -> (Vec<f64>, Vec<usize>) {
    let mut r = StdRng::seed_from_u64(seed);
    let c: Vec<f64> = (0..k * d).map(|_| r.random_range(-10.0..10.0)).collect();
    let mut x = Vec::with_capacity(n * d);
    let mut t = Vec::with_capacity(n);
    for _ in 0..n {
        let l = r.random_range(0..k);
        t.push(l);
        for j in 0..d {
            x.push(c[l * d + j] + std * (r.random_range(-1.0..1.0) + r.random_range(-1.0..1.0)));
        }
    }
    (x, t)
}

fn fit<T: MlFloat>(
    x: &[f64],
    n: usize,
    d: usize,
    init: &[f64],
    k: usize,
    block: Option<usize>,
    dev: &Device,
) -> (Vec<f64>, Vec<i64>, f64, usize) {
    let conv = |v: &[f64]| v.iter().map(|&a| T::from_f64(a)).collect::<Vec<T>>();
    let mut km = KMeans::<T>::new(k)
        .initial_centers(Array::from_vec_on(conv(init), [k, d], &Device::Cpu).unwrap());
    if let Some(b) = block {
        km = km.block_bytes(b);
    }
    km.fit(&Array::from_vec_on(conv(x), [n, d], dev).unwrap())
        .unwrap();
    assert_eq!(km.labels().unwrap().device(), *dev);
    (
        km.cluster_centers()
            .unwrap()
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| v.to_f64())
            .collect(),
        km.labels().unwrap().to_vec().unwrap(),
        km.inertia().unwrap(),
        km.n_iter().unwrap(),
    )
}

fn compare<T: MlFloat>(
    dev: &Device,
    seed: u64,
    n: usize,
    d: usize,
    k: usize,
    block: Option<usize>,
    tol: f64,
) {
    let (x, _) = blobs(seed, n, d, k, 1.5);
    let init: Vec<f64> = (0..k)
        .flat_map(|i| x[i * 5 * d..i * 5 * d + d].to_vec())
        .collect();
    let (cc, cl, ci, cn) = fit::<T>(&x, n, d, &init, k, None, &Device::Cpu);
    let (gc, gl, gi, gn) = fit::<T>(&x, n, d, &init, k, block, dev);
    let differ = cl.iter().zip(&gl).filter(|(a, b)| a != b).count();
    assert!(
        differ <= n / 10_000,
        "{differ} labels differ (n {n}, k {k})"
    );
    if differ == 0 {
        assert_eq!(cn, gn, "iterations");
    }
    for (a, b) in cc.iter().zip(&gc) {
        assert!((a - b).abs() <= tol * a.abs().max(1.0), "centre {a} vs {b}");
    }
    assert!((ci - gi).abs() <= tol * ci, "inertia {ci} vs {gi}");
}

#[test]
fn lloyd_equals_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    // (the CPU halves run in the test's debug build: sizes stay modest)
    compare::<f64>(&dev, 1, 5000, 8, 6, None, 1e-9);
    compare::<f64>(&dev, 2, 8000, 16, 24, None, 1e-9);
    compare::<f64>(&dev, 3, 8000, 16, 24, Some(24 * 8 * 1000), 1e-9); // 8 chunks
    compare::<f32>(&dev, 4, 20_000, 16, 12, None, 1e-3);
}

#[test]
fn kmeans_plus_plus_finds_separated_blobs_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (n, d, k) = (30_000, 8, 10);
    let (x, truth) = blobs(5, n, d, k, 0.05);
    let xa = Array::from_vec_on(x, [n, d], &dev).unwrap();
    let mut best: Option<(f64, Vec<i64>)> = None;
    for seed in 0..3 {
        let mut km = KMeans::new(k)
            .init(KMeansInit::KMeansPlusPlus)
            .random_state(seed);
        km.fit(&xa).unwrap();
        let inertia = km.inertia().unwrap();
        if best.as_ref().is_none_or(|b| inertia < b.0) {
            best = Some((inertia, km.labels().unwrap().to_vec().unwrap()));
        }
        assert_eq!(
            km.predict(&xa).unwrap().to_vec().unwrap(),
            km.labels().unwrap().to_vec().unwrap()
        );
    }
    let (_, labels) = best.unwrap();
    let mut map = vec![None; k];
    for (t, &l) in truth.iter().zip(&labels) {
        assert_eq!(*map[*t].get_or_insert(l), l, "blob {t} split");
    }
    let (b, _) = make_blobs_on::<f32>(1000, 3, 4, 1.0, 1, &dev).unwrap();
    let mut km = KMeans::<f32>::new(4).init(KMeansInit::Random);
    km.fit(&b).unwrap();
    assert_eq!(km.cluster_centers().unwrap().shape(), &[4, 3]);
}

#[test]
fn a_million_points_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (n, d, k, iters) = (1_000_000, 64, 100, 20);
    let (x, _) = make_classification_on::<f32>(n, d, 10, 7, &dev).unwrap();
    let t0 = Instant::now();
    let mut km = KMeans::<f32>::new(k)
        .max_iter(iters)
        .tol(0.0)
        .init(KMeansInit::Random)
        .random_state(1);
    km.fit(&x).unwrap();
    dev.synchronize().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "KMeans f32: {n} points × {d} features, {k} clusters, {} iterations: {secs:.3} s",
        km.n_iter().unwrap()
    );
    assert_eq!(km.cluster_centers().unwrap().shape(), &[k, d]);
    assert!(km.inertia().unwrap().is_finite());
    let counts =
        km.labels()
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .fold(vec![0usize; k], |mut c, &l| {
                c[l as usize] += 1;
                c
            });
    assert!(counts.iter().all(|&c| c > 0), "every cluster keeps points");
}
