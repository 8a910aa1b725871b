//! The ML rows of issue 18 ("Speed"): gpukit-ml on the device against scikit-learn
//! (benches/sklearn_twin.py, every CPU core) and linfa (`ml_linfa.rs`, feature `linfa`) on the
//! same data (`ml_data`: a formula of the index, built on the host and copied to the device
//! before the timed calls).
//!
//! `gpukit-bench ml [--side gpukit|linfa] [--knn-refs N] [--knn-queries Q] [--kmeans-rows N]
//! [--ridge-rows N] [--reps R] [--warmup W] [--only knn,kmeans,ridge] [--preds PATH]
//! [--dry-run]`.
//!
//! Rows (the same names and results on every side, so benches/ml_collect.py can compare):
//! - `knn classify`: `KNeighborsClassifier::<f32>::new(5)`, fit on the `--knn-refs` (1M)
//!   reference rows and predict the `--knn-queries` (100k) query rows, 64 features, float32.
//!   The timed call is fit + predict (fit keeps the references and their labels). The
//!   predictions go to `--preds` (little-endian `i64`).
//! - `kmeans fit`: `KMeans::<f64>::new(100).max_iter(20).tol(0.0)` from the first 100 rows as
//!   initial centers, on `--kmeans-rows` (1M) x 64 float64. Result: centers, inertia, n_iter.
//! - `ridge fit`: `Ridge::<f64>::new().alpha(1.0)` (fit_intercept) on `--ridge-rows` (10M) x 64
//!   float64. Result: coef, intercept.
//! - `ridge predict`: `predict` of the same rows. Result: sum, sum of |.| and 16 sampled values.
//!
//! Timing: the host clock from just before the call to the return of `gpukit::synchronize()`,
//! `warmup` untimed calls, then `reps` timed ones. The results are read back after the timed
//! calls. Memory: gpukit's `memory_stats` (live and peak so far) and `pool_stats`, and the
//! process's host VmRSS / VmHWM, as the frame rows report.

use std::path::PathBuf;
use std::time::Instant;

use gpukit::prelude::*;
use gpukit::{memory_stats, pool_stats};
use gpukit_ml::cluster::KMeans;
use gpukit_ml::linear_model::Ridge;
use gpukit_ml::neighbors::KNeighborsClassifier;

use crate::json::Json;
use crate::ml_data::{self, DIMS};

/// Neighbours of the KNN row.
pub const K: usize = 5;
/// Clusters of the KMeans row.
pub const CLUSTERS: usize = ml_data::KMEANS_BLOBS as usize;
/// Lloyd iterations of the KMeans row.
pub const ITERS: usize = 20;
/// Ridge's penalty.
pub const ALPHA: f64 = 1.0;
/// How many ridge predictions a result reports.
pub const SAMPLES: usize = 16;

/// What `gpukit-bench ml` runs.
#[derive(Debug, Clone)]
pub struct MlOpts {
    /// Reference rows of the KNN row.
    pub knn_refs: usize,
    /// Queries classified (the timed ones).
    pub knn_queries: usize,
    /// Rows of the KMeans data.
    pub kmeans_rows: usize,
    /// Rows of the Ridge data.
    pub ridge_rows: usize,
    /// Untimed calls before the timed ones.
    pub warmup: usize,
    /// Timed calls per row.
    pub reps: usize,
    /// Which rows (`knn`, `kmeans`, `ridge`; None: all).
    pub only: Option<String>,
    /// Where the KNN predictions go (little-endian i64).
    pub preds: Option<PathBuf>,
}

impl MlOpts {
    /// The sizes (the CPU sides take fewer KNN queries: `--knn-queries`).
    pub fn full() -> MlOpts {
        MlOpts {
            knn_refs: 1_000_000,
            knn_queries: 100_000,
            kmeans_rows: 1_000_000,
            ridge_rows: 10_000_000,
            warmup: 1,
            reps: 3,
            only: None,
            preds: None,
        }
    }

    /// Small sizes for a dry run on the CPU backend.
    pub fn dry() -> MlOpts {
        MlOpts {
            knn_refs: 3000,
            knn_queries: 300,
            kmeans_rows: 2000,
            ridge_rows: 5000,
            warmup: 1,
            reps: 2,
            only: None,
            preds: None,
        }
    }

    /// Whether the row family `what` (`knn`, `kmeans`, `ridge`) runs.
    pub fn wants(&self, what: &str) -> bool {
        self.only
            .as_deref()
            .is_none_or(|o| o.split(',').any(|s| s.trim() == what))
    }
}

/// A boxed error: gpukit's, gpukit-ml's and linfa's errors convert into it.
pub type R<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The rows the ridge predict row reports (the same on every side).
pub fn sample_indices(n: usize) -> Vec<usize> {
    if n <= 1 {
        return vec![0];
    }
    let mut v: Vec<usize> = (0..SAMPLES).map(|i| i * (n - 1) / (SAMPLES - 1)).collect();
    v.dedup();
    v
}

/// Milliseconds since `t`.
pub fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The process's resident and peak resident host memory in bytes (0 where /proc has none).
pub fn host_memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// `warmup` untimed calls, then `reps` timed ones of `f` (which must return finished work:
/// the gpukit side synchronises inside); the last result is kept.
pub fn time<T>(warmup: usize, reps: usize, mut f: impl FnMut() -> R<T>) -> R<(Vec<f64>, T)> {
    for _ in 0..warmup {
        drop(f()?);
    }
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps.max(1) {
        drop(last.take());
        let t = Instant::now();
        let r = f()?;
        times.push(ms(t));
        last = Some(r);
    }
    Ok((times, last.ok_or("no timed call")?))
}

/// One row's JSON line (benches/sklearn_twin.py's `row_json` writes the same fields).
#[allow(clippy::too_many_arguments)]
pub fn row_json(
    side: &str,
    op: &str,
    rows: usize,
    wall_ms: &[f64],
    note: &str,
    device: &str,
    result: Json,
    extra: Vec<(&'static str, Json)>,
) -> Json {
    let (rss, hwm) = host_memory();
    eprintln!(
        "{side}: ml {op}, {rows} rows: {:>10.3} ms (median of {})",
        crate::timing::median(wall_ms),
        wall_ms.len()
    );
    let mut fields = vec![
        ("side", Json::Str(side.into())),
        ("name", Json::Str(format!("ml {op}, {rows} rows"))),
        ("op", Json::Str(op.into())),
        ("rows", Json::Int(rows as i64)),
        ("unit", Json::Str("wall".into())),
        ("wall_ms", Json::nums(wall_ms)),
        ("note", Json::Str(note.into())),
        ("device", Json::Str(device.into())),
        ("host_rss_bytes", Json::Int(rss as i64)),
        ("host_peak_rss_bytes", Json::Int(hwm as i64)),
        ("result", result),
    ];
    fields.extend(extra);
    Json::Obj(fields)
}

/// Writes KNN predictions as little-endian `i64`.
pub fn write_preds(path: &std::path::Path, preds: &[i64]) -> R<()> {
    let bytes: Vec<u8> = preds.iter().flat_map(|p| p.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

/// The KNN result fields every side reports.
pub fn knn_result(preds: &[i64], truth: &[i64], preds_file: &Option<PathBuf>) -> Json {
    let correct = preds.iter().zip(truth).filter(|(p, t)| p == t).count();
    Json::Obj(vec![
        ("queries", Json::Int(preds.len() as i64)),
        ("k", Json::Int(K as i64)),
        (
            "accuracy",
            Json::Num(correct as f64 / preds.len().max(1) as f64),
        ),
        ("pred_sum", Json::Int(preds.iter().sum())),
        (
            "preds_file",
            Json::Str(
                preds_file
                    .as_ref()
                    .and_then(|p| p.file_name())
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
        ),
    ])
}

/// The KMeans result fields.
pub fn kmeans_result(n_iter: Option<usize>, inertia: f64, centers: &[f64]) -> Json {
    Json::Obj(vec![
        ("n_iter", n_iter.map_or(Json::Null, |n| Json::Int(n as i64))),
        ("inertia", Json::Num(inertia)),
        (
            "centers",
            Json::Arr(centers.chunks(DIMS).map(Json::nums).collect()),
        ),
    ])
}

/// The ridge predict result fields.
pub fn predict_result(p: &[f64]) -> Json {
    Json::Obj(vec![
        ("sum", Json::Num(p.iter().sum())),
        ("abs_sum", Json::Num(p.iter().map(|v| v.abs()).sum())),
        (
            "samples",
            Json::nums(
                &sample_indices(p.len())
                    .into_iter()
                    .map(|i| p[i])
                    .collect::<Vec<_>>(),
            ),
        ),
    ])
}

/// The memory fields of a gpukit row.
fn device_memory(device: &Device) -> Vec<(&'static str, Json)> {
    let mem = memory_stats(device);
    let pool = pool_stats(device);
    vec![
        ("device_live_bytes", Json::Int(mem.bytes as i64)),
        ("device_peak_bytes", Json::Int(mem.peak_bytes as i64)),
        ("pool_reserved_bytes", Json::Int(pool.reserved_bytes as i64)),
    ]
}

/// Runs gpukit-ml's rows on `device`, handing each row's JSON line to `emit`.
pub fn run(opts: &MlOpts, device: Device, side: &str, emit: &mut dyn FnMut(Json)) -> R<()> {
    set_default_device(device);
    let dev = device.to_string();
    let (w, reps) = (opts.warmup, opts.reps);
    let gen = |what: &str, t: Instant| eprintln!("{side}: {what} built in {:.2} s", ms(t) / 1e3);

    if opts.wants("knn") {
        let (n, q) = (opts.knn_refs, opts.knn_queries);
        let t = Instant::now();
        let (x, y) = ml_data::knn_rows(0, n);
        let (xq, yq) = ml_data::knn_rows(n, q);
        let x = Array::from_vec(x, [n, DIMS])?;
        let y = Array::from_vec(y, [n])?;
        let xq = Array::from_vec(xq, [q, DIMS])?;
        synchronize()?;
        gen(&format!("knn data ({n} refs, {q} queries)"), t);
        let (times, pred) = time(w, reps, || {
            let mut m = KNeighborsClassifier::<f32>::new(K);
            m.fit(&x, &y)?;
            let p = m.predict(&xq)?;
            synchronize()?;
            Ok(p)
        })?;
        let pred = pred.to_vec()?;
        if let Some(p) = &opts.preds {
            write_preds(p, &pred)?;
        }
        let mut extra = vec![
            ("queries", Json::Int(q as i64)),
            ("refs", Json::Int(n as i64)),
        ];
        extra.extend(device_memory(&device));
        emit(row_json(
            side,
            "knn classify",
            n,
            &times,
            &format!("KNeighborsClassifier::<f32>::new(5): fit + predict of {q} queries"),
            &dev,
            knn_result(&pred, &yq, &opts.preds),
            extra,
        ));
    }

    if opts.wants("kmeans") {
        let n = opts.kmeans_rows;
        let t = Instant::now();
        let host = ml_data::kmeans_rows(n);
        let init = host[..CLUSTERS * DIMS].to_vec();
        let x = Array::from_vec(host, [n, DIMS])?;
        synchronize()?;
        gen(&format!("kmeans data ({n} rows)"), t);
        let (times, m) = time(w, reps, || {
            let start = Array::from_vec(init.clone(), [CLUSTERS, DIMS])?;
            synchronize()?;
            let mut m = KMeans::<f64>::new(CLUSTERS)
                .max_iter(ITERS)
                .tol(0.0)
                .initial_centers(start);
            m.fit(&x)?;
            synchronize()?;
            Ok(m)
        })?;
        let centers = m.cluster_centers()?.to_vec()?;
        emit(row_json(
            side,
            "kmeans fit",
            n,
            &times,
            "KMeans::<f64>::new(100).max_iter(20).tol(0.0), initial centers = the first 100 rows",
            &dev,
            kmeans_result(Some(m.n_iter()?), m.inertia()?, &centers),
            device_memory(&device),
        ));
    }

    if opts.wants("ridge") {
        let n = opts.ridge_rows;
        let t = Instant::now();
        let (hx, hy) = ml_data::ridge_rows(n);
        let x = Array::from_vec(hx, [n, DIMS])?;
        let y = Array::from_vec(hy, [n])?;
        synchronize()?;
        gen(&format!("ridge data ({n} rows)"), t);
        let (times, m) = time(w, reps, || {
            let mut m = Ridge::<f64>::new().alpha(ALPHA);
            m.fit(&x, &y)?;
            synchronize()?;
            Ok(m)
        })?;
        let result = Json::Obj(vec![
            ("coef", Json::nums(&m.coef()?.to_vec()?)),
            ("intercept", Json::Num(m.intercept()?)),
        ]);
        emit(row_json(
            side,
            "ridge fit",
            n,
            &times,
            "Ridge::<f64>::new().alpha(1.0), fit_intercept",
            &dev,
            result,
            device_memory(&device),
        ));
        let (times, p) = time(w, reps, || {
            let p = m.predict(&x)?;
            synchronize()?;
            Ok(p)
        })?;
        let p = p.to_vec()?;
        emit(row_json(
            side,
            "ridge predict",
            n,
            &times,
            "predict of the training rows, float64",
            &dev,
            predict_result(&p),
            device_memory(&device),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dry_run_of_the_ml_rows_on_the_cpu_backend() {
        let path = std::env::temp_dir().join(format!("ml-rows-test-{}.i64", std::process::id()));
        let mut opts = MlOpts::dry();
        opts.knn_refs = 1000;
        opts.knn_queries = 50;
        opts.kmeans_rows = 400;
        opts.ridge_rows = 600;
        opts.warmup = 0;
        opts.reps = 1;
        opts.preds = Some(path.clone());
        let mut rows = Vec::new();
        run(&opts, Device::cpu(), "gpukit-dry-run", &mut |j| {
            rows.push(j.render())
        })
        .unwrap();
        let preds = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(preds.len(), 50 * 8);
        let ops: Vec<&str> = rows
            .iter()
            .map(|r| {
                r.split("\"op\":\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(
            ops,
            ["knn classify", "kmeans fit", "ridge fit", "ridge predict"]
        );
        assert!(rows.iter().all(|r| r.contains("\"result\":{")));
        assert!(rows[1].contains("\"n_iter\":"));
        // the data is learnable: most queries get their generating class
        let acc: f64 = rows[0]
            .split("\"accuracy\":")
            .nth(1)
            .unwrap()
            .split([',', '}'])
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(acc > 0.6, "accuracy {acc}");
    }

    #[test]
    fn sample_indices_cover_the_ends() {
        assert_eq!(sample_indices(1), [0]);
        let s = sample_indices(10_000_000);
        assert_eq!((s[0], *s.last().unwrap(), s.len()), (0, 9_999_999, SAMPLES));
        assert_eq!(sample_indices(5), [0, 1, 2, 3, 4]);
    }
}
