//! The speed workloads on the default device (a GPU where there is one), timed:
//! KNN classification of 100k queries against 1M × 64 references (k = 5, f32) and KMeans on
//! 1M × 64 points (100 clusters, 20 iterations, f32). For a CPU comparison the same KNN runs on
//! the CPU backend for a subset of the queries (time scaled up to all of them) and its
//! predictions are compared with the device's for that subset.
//!
//! `cargo run --release -p gpukit-ml --example ml_speed [queries] [references] [cpu_queries]`
//! (defaults 100000 1000000 200). Prints one line per measurement.

use std::time::Instant;

use gpukit::{s, Array, Device};
use gpukit_ml::cluster::{KMeans, KMeansInit};
use gpukit_ml::datasets::make_classification_on;
use gpukit_ml::neighbors::KNeighborsClassifier;

fn main() -> gpukit_ml::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let m = args.first().copied().unwrap_or(100_000);
    let n = args.get(1).copied().unwrap_or(1_000_000);
    let cpu_m = args.get(2).copied().unwrap_or(200).min(m);
    let (d, k) = (64, 5);
    let dev = gpukit::default_device();
    println!("device: {dev}");

    let (x, y) = make_classification_on::<f32>(n + m, d, 10, 42, &dev)?;
    let refs = x.slice(s![..n, ..])?.copy()?;
    let labels = y.slice(s![..n])?.copy()?;
    let queries = x.slice(s![n.., ..])?.copy()?;
    let mut knn = KNeighborsClassifier::<f32>::new(k);
    knn.fit(&refs, &labels)?;
    knn.predict(&queries.slice(s![..cpu_m.max(1), ..])?.copy()?)?; // compile and warm up
    dev.synchronize()?;
    let t = Instant::now();
    let pred = knn.predict(&queries)?;
    dev.synchronize()?;
    let gpu_s = t.elapsed().as_secs_f64();
    println!("knn {dev}: {m} queries x {n} refs x {d}, k {k}: {gpu_s:.3} s");

    if dev.is_cuda() && cpu_m > 0 {
        let cpu = Device::Cpu;
        let mut cknn = KNeighborsClassifier::<f32>::new(k);
        cknn.fit(&refs.to_device(&cpu)?, &labels.to_device(&cpu)?)?;
        let sub = queries.slice(s![..cpu_m, ..])?.copy()?.to_device(&cpu)?;
        let t = Instant::now();
        let cpred = cknn.predict(&sub)?;
        let cpu_s = t.elapsed().as_secs_f64() * m as f64 / cpu_m as f64;
        let gsub = pred.slice(s![..cpu_m])?.to_vec()?;
        let same = gsub
            .iter()
            .zip(cpred.to_vec()?)
            .filter(|(a, b)| **a == *b)
            .count();
        println!(
            "knn cpu backend ({} threads): {cpu_s:.3} s for all {m} queries (scaled from {cpu_m}); \
             {same}/{cpu_m} predictions equal the device's; device speed-up {:.1}x",
            rayon_threads(),
            cpu_s / gpu_s
        );
    }

    let (xk, _) = make_classification_on::<f32>(n, d, 10, 7, &dev)?;
    let mut warm = KMeans::<f32>::new(100).max_iter(1).init(KMeansInit::Random);
    warm.fit(&xk.slice(s![..10_000, ..])?.copy()?)?;
    dev.synchronize()?;
    let t = Instant::now();
    let mut km = KMeans::<f32>::new(100)
        .max_iter(20)
        .tol(0.0)
        .init(KMeansInit::KMeansPlusPlus)
        .random_state(0);
    km.fit(&xk)?;
    dev.synchronize()?;
    println!(
        "kmeans {dev}: {n} x {d}, 100 clusters, {} iterations (k-means++ init included): {:.3} s, inertia {:.6e}",
        km.n_iter()?,
        t.elapsed().as_secs_f64(),
        km.inertia()?
    );
    let _: &Array<f32> = km.cluster_centers()?;
    Ok(())
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
