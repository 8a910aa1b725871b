//! k-nearest neighbours on the first CUDA device against the same estimators on the CPU
//! backend (which `src/neighbors/tests.rs` checks against a host search): neighbours,
//! distances, votes, probabilities and means, Euclidean and cosine, f64 and f32, one batch and
//! many; then 1M × 64 references on the GPU alone, checked against a direct host search for a
//! few queries, with the search time printed.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use std::time::Instant;

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device};
use gpukit_ml::datasets::make_classification_on;
use gpukit_ml::neighbors::{KNeighborsClassifier, KNeighborsRegressor, Metric, Weights};
use gpukit_ml::MlFloat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn random<T: MlFloat>(r: &mut StdRng, n: usize, d: usize) -> Vec<T> {
    (0..n * d)
        .map(|_| T::from_f64(r.random_range(-1.0..1.0)))
        .collect()
}

/// Indices equal row by row, except at places where two candidates' CPU distances are within
/// `tie` (rounding may order those differently); distances within `tol`.
fn same_neighbours(cpu: (&[f64], &[i64]), gpu: (&[f64], &[i64]), k: usize, tie: f64, tol: f64) {
    let (cd, ci) = cpu;
    let (gd, gi) = gpu;
    assert_eq!(ci.len(), gi.len());
    for (i, (a, b)) in cd.iter().zip(gd).enumerate() {
        assert!(
            (a - b).abs() <= tol * a.abs().max(1.0),
            "distance {i}: cpu {a}, gpu {b}"
        );
    }
    for row in 0..ci.len() / k {
        for s in 0..k {
            let p = row * k + s;
            if ci[p] != gi[p] {
                let near = (0..k).any(|o| o != s && (cd[row * k + o] - cd[p]).abs() <= tie)
                    || (s + 1 == k && (gd[p] - cd[p]).abs() <= tie);
                assert!(
                    near,
                    "row {row} rank {s}: cpu index {}, gpu index {}",
                    ci[p], gi[p]
                );
            }
        }
    }
}

fn f64s<T: MlFloat>(a: &Array<T>) -> Vec<f64> {
    a.to_vec()
        .unwrap()
        .into_iter()
        .map(|v| v.to_f64())
        .collect()
}

/// CPU backend against `dev` on random data of `(n refs, m queries, d features, k)`.
fn compare_search<T: MlFloat>(
    dev: &Device,
    (n, m, d, k): (usize, usize, usize, usize),
    metric: Metric,
    batch: Option<usize>,
    seed: u64,
) {
    let mut r = StdRng::seed_from_u64(seed);
    let refs = random::<T>(&mut r, n, d);
    let q = random::<T>(&mut r, m, d);
    let labels: Vec<i64> = (0..n).map(|_| r.random_range(0..4) * 3 - 2).collect();
    let run = |device: &Device| {
        let mut knn = KNeighborsClassifier::<T>::new(k)
            .metric(metric)
            .weights(Weights::Distance);
        if let Some(b) = batch {
            knn = knn.batch_bytes(b);
        }
        knn.fit(
            &Array::from_vec_on(refs.clone(), [n, d], device).unwrap(),
            &Array::from_vec_on(labels.clone(), n, device).unwrap(),
        )
        .unwrap();
        let qa = Array::from_vec_on(q.clone(), [m, d], device).unwrap();
        let (dist, idx) = knn.kneighbors(&qa, k).unwrap();
        assert_eq!(dist.device(), *device);
        let pred = knn.predict(&qa).unwrap().to_vec().unwrap();
        let proba = f64s(&knn.predict_proba(&qa).unwrap());
        (f64s(&dist), idx.to_vec().unwrap(), pred, proba)
    };
    let (cd, ci, cp, cpr) = run(&Device::Cpu);
    let (gd, gi, gp, gpr) = run(dev);
    let eps = if T::DTYPE == gpukit::DType::F32 {
        1e-4
    } else {
        1e-10
    };
    same_neighbours((&cd, &ci), (&gd, &gi), k, eps, eps);
    if ci == gi {
        assert_eq!(cp, gp, "votes differ with identical neighbours");
        for (a, b) in cpr.iter().zip(&gpr) {
            assert!((a - b).abs() < eps.max(1e-6), "proba {a} vs {b}");
        }
    }
}

#[test]
fn neighbours_and_votes_equal_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    compare_search::<f64>(&dev, (5000, 300, 16, 5), Metric::Euclidean, None, 1);
    compare_search::<f64>(&dev, (20_000, 64, 8, 1), Metric::Euclidean, None, 2);
    compare_search::<f64>(&dev, (3000, 40, 32, 128), Metric::Euclidean, None, 3);
    compare_search::<f64>(&dev, (4000, 100, 12, 9), Metric::Cosine, None, 4);
    compare_search::<f32>(&dev, (10_000, 100, 64, 5), Metric::Euclidean, None, 5);
    compare_search::<f32>(&dev, (8000, 77, 20, 17), Metric::Cosine, None, 6);
}

#[test]
fn batched_queries_equal_one_batch() {
    let Some((dev, _lock)) = gpu() else { return };
    // 10 000 references × 8 bytes: 3 queries per 240 000-byte batch
    compare_search::<f64>(
        &dev,
        (10_000, 50, 8, 4),
        Metric::Euclidean,
        Some(240_000),
        7,
    );
    compare_search::<f32>(&dev, (10_000, 50, 8, 4), Metric::Euclidean, Some(40_000), 8);
}

#[test]
fn regression_equals_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut r = StdRng::seed_from_u64(9);
    let (n, m, d) = (6000, 400, 10);
    let refs = random::<f64>(&mut r, n, d);
    let q = random::<f64>(&mut r, m, d);
    let t: Vec<f64> = (0..n).map(|_| r.random_range(-5.0..5.0)).collect();
    let run = |device: &Device| {
        let mut reg = KNeighborsRegressor::new(6).weights(Weights::Distance);
        reg.fit(
            &Array::from_vec_on(refs.clone(), [n, d], device).unwrap(),
            &Array::from_vec_on(t.clone(), n, device).unwrap(),
        )
        .unwrap();
        reg.predict(&Array::from_vec_on(q.clone(), [m, d], device).unwrap())
            .unwrap()
            .to_vec()
            .unwrap()
    };
    let (c, g) = (run(&Device::Cpu), run(&dev));
    for (a, b) in c.iter().zip(&g) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
}

#[test]
fn a_million_references_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (n, d, m, k) = (1_000_000, 64, 10_000, 5);
    let (x, y) = make_classification_on::<f32>(n + m, d, 10, 42, &dev).unwrap();
    let xs = x.slice(gpukit::s![..n, ..]).unwrap().copy().unwrap();
    let qs = x.slice(gpukit::s![n.., ..]).unwrap().copy().unwrap();
    let ys = y.slice(gpukit::s![..n]).unwrap().copy().unwrap();
    let mut knn = KNeighborsClassifier::<f32>::new(k);
    knn.fit(&xs, &ys).unwrap();
    knn.predict(&qs.slice(gpukit::s![..64, ..]).unwrap().copy().unwrap())
        .unwrap(); // warm-up
    dev.synchronize().unwrap();
    let t0 = Instant::now();
    let pred = knn.predict(&qs).unwrap();
    dev.synchronize().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "KNN f32: {m} queries × {n} references × {d} features, k = {k}: {:.3} s ({:.1} M distances/s)",
        secs,
        (m * n) as f64 / secs / 1e6
    );
    assert_eq!(pred.shape(), &[m]);
    // the first 3 queries against a direct host search in f64
    let host_x = xs.to_vec().unwrap();
    let host_q = qs.slice(gpukit::s![..3, ..]).unwrap().to_vec().unwrap();
    let (dist, idx) = knn
        .kneighbors(&qs.slice(gpukit::s![..3, ..]).unwrap().copy().unwrap(), k)
        .unwrap();
    let (dist, idx) = (dist.to_vec().unwrap(), idx.to_vec().unwrap());
    for qi in 0..3 {
        let qr = &host_q[qi * d..(qi + 1) * d];
        let mut best: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
        for j in 0..n {
            let r = &host_x[j * d..(j + 1) * d];
            let s: f64 = qr
                .iter()
                .zip(r)
                .map(|(a, b)| (*a as f64 - *b as f64).powi(2))
                .sum();
            if best.len() < k || s < best[k - 1].0 {
                best.push((s, j));
                best.sort_by(|a, b| a.0.total_cmp(&b.0));
                best.truncate(k);
            }
        }
        for s in 0..k {
            let want = best[s].0.sqrt();
            let got = dist[qi * k + s] as f64;
            assert!(
                (got - want).abs() < 1e-3 * want.max(1.0),
                "query {qi} rank {s}: {got} vs {want}"
            );
            if idx[qi * k + s] != best[s].1 as i64 {
                let near = best
                    .iter()
                    .any(|&(o, j)| j != best[s].1 && (o.sqrt() - want).abs() < 1e-3);
                assert!(
                    near,
                    "query {qi} rank {s}: index {} vs {}",
                    idx[qi * k + s],
                    best[s].1
                );
            }
        }
    }
}
