//! linfa's side of the ML rows (issue 18): `gpukit-bench ml --side linfa`, in a build with
//! feature `linfa` (linfa 0.8 on ndarray 0.16, CPU only). Same data (`ml_data`), rows, timing
//! and result fields as `ml_rows` (gpukit) and benches/sklearn_twin.py.
//!
//! - `knn classify`: linfa has no k-NN classifier; linfa-nn's `LinearSearch` index (brute force,
//!   squared L2) finds each query's 5 nearest references (`k_nearest`, single-threaded per
//!   query: it pushes every reference into a binary heap), the harness spreads the queries over
//!   every core with rayon and votes (most frequent class, ties to the smallest, as gpukit-ml and
//!   scikit-learn). Timed: building the index + every query + the votes. Only the first
//!   `--knn-queries` queries (1000 by default in ml_run.sh); the collector compares queries/s.
//! - `kmeans fit`: linfa-clustering's `KMeans` (`n_runs(1)`, `max_n_iterations(20)`,
//!   `KMeansInit::Precomputed(first 100 rows)`, L2). Its assignment step runs on every core
//!   (ndarray's rayon), its update step on one. It is not Lloyd's algorithm: its update is
//!   "m_k-means" (each new center is the mean of its points *and the old center*), so its
//!   centers differ from scikit-learn's and gpukit-ml's by design; the row says so
//!   (`algorithm`), and the collector shows its time without a checked ratio. linfa requires a tolerance above 0: the smallest
//!   positive `f64` is given, so it stops early only when the centers no longer move. linfa
//!   does not report its iteration count (`n_iter` is null); its inertia is the mean over rows
//!   of the assignment before the last update, so the row's inertia is computed here (untimed)
//!   from the final centers, as scikit-learn and gpukit-ml define it.
//! - `ridge fit`: linfa has no ridge regression of its own; linfa-elasticnet's elastic net is
//!   ridge by coordinate descent when its L1 share is 0. Its objective is `1/(2n)|y - Xw|² +
//!   penalty·l1_ratio·|w|₁ + penalty·(1 - l1_ratio)/2·|w|²`, so `penalty = alpha / n`.
//!   `l1_ratio` is 1e-9, not 0: linfa stops when its duality gap is below `tolerance · |y|²`,
//!   and with no L1 part that "gap" is the primal objective, which never gets there (every
//!   fit ran all of `max_iterations`); the L1 term it adds moves each coefficient by about
//!   `1e-9 · alpha / (n/3)`, far below the check's 1e-6. Tolerance 1e-8 (linfa's relative
//!   coefficient change that triggers the gap test; at 1e-10 the gap test never passed): at
//!   5000 rows, 13 sweeps and coefficients within 1e-12 of gpukit-ml's. At 100k rows (a
//!   trial of the same settings on uncentred data) its stopping test did not pass within 1000
//!   sweeps, so the sweeps are capped at 20 (`MAX_SWEEPS`; linfa's default is 1000, which at
//!   10M rows would take far longer than the device call): the collector's coefficient check
//!   says whether 20 sweeps were enough. linfa-elasticnet's
//!   intercept only centres y, not x, so the harness centres x (into a column-major copy:
//!   coordinate descent reads columns) and y first, fits without intercept, and sets the
//!   intercept `ȳ - x̄·w`; all of that is timed. The row reports linfa's sweep count
//!   (`n_steps`).
//! - `ridge predict`: linfa's `predict` of a model with the same coefficients (`x·w + b`).

use std::time::Instant;

use linfa::prelude::*;
use linfa::DatasetBase;
use linfa_clustering::{KMeans, KMeansInit};
use linfa_elasticnet::ElasticNet;
use linfa_nn::distance::L2Dist;
use linfa_nn::{LinearSearch, NearestNeighbour};
use ndarray016::{Array1, Array2, Axis, ShapeBuilder};
use rayon::prelude::*;

use crate::json::Json;
use crate::ml_data::{self, DIMS};
use crate::ml_rows::{
    kmeans_result, knn_result, ms, predict_result, row_json, time, write_preds, MlOpts, ALPHA,
    CLUSTERS, ITERS, K, R,
};

/// The L1 share of linfa-elasticnet's penalty (see the module documentation: 0 never stops).
const L1_RATIO: f64 = 1e-9;
/// linfa-elasticnet's tolerance.
const TOLERANCE: f64 = 1e-8;
/// The most coordinate-descent sweeps (see the module documentation).
const MAX_SWEEPS: u32 = 20;

/// The `device` field of linfa's rows.
fn device() -> String {
    format!(
        "cpu ({} rayon threads; linfa 0.8)",
        rayon::current_num_threads()
    )
}

/// The class with the most votes among `labels` (ties: the smallest class).
fn vote(labels: impl Iterator<Item = i64>) -> i64 {
    let mut counts = [0usize; ml_data::KNN_CLASSES as usize];
    for l in labels {
        counts[l as usize] += 1;
    }
    let best = counts.iter().copied().max().unwrap_or(0);
    counts.iter().position(|&c| c == best).unwrap_or(0) as i64
}

/// Runs linfa's rows, handing each row's JSON line to `emit`.
pub fn run(opts: &MlOpts, emit: &mut dyn FnMut(Json)) -> R<()> {
    let side = "linfa";
    let dev = device();
    let (w, reps) = (opts.warmup, opts.reps);
    let gen = |what: &str, t: Instant| eprintln!("{side}: {what} built in {:.2} s", ms(t) / 1e3);

    if opts.wants("knn") {
        let (n, q) = (opts.knn_refs, opts.knn_queries);
        let t = Instant::now();
        let (x, y) = ml_data::knn_rows(0, n);
        let (xq, yq) = ml_data::knn_rows(n, q);
        let x = Array2::from_shape_vec((n, DIMS), x)?;
        let xq = Array2::from_shape_vec((q, DIMS), xq)?;
        gen(&format!("knn data ({n} refs, {q} queries)"), t);
        let (times, pred) = time(w, reps, || {
            let index = LinearSearch::new().from_batch(&x, L2Dist)?;
            let pred: Vec<i64> = (0..q)
                .into_par_iter()
                .map(|i| {
                    let near = index.k_nearest(xq.row(i), K)?;
                    Ok(vote(near.iter().map(|(_, j)| y[*j])))
                })
                .collect::<std::result::Result<_, linfa_nn::NnError>>()?;
            Ok(pred)
        })?;
        if let Some(p) = &opts.preds {
            write_preds(p, &pred)?;
        }
        emit(row_json(
            side,
            "knn classify",
            n,
            &times,
            &format!("linfa-nn LinearSearch (L2) k_nearest(5) per query, queries over rayon, vote: {q} queries"),
            &dev,
            knn_result(&pred, &yq, &opts.preds),
            vec![("queries", Json::Int(q as i64)), ("refs", Json::Int(n as i64))],
        ));
    }

    if opts.wants("kmeans") {
        let n = opts.kmeans_rows;
        let t = Instant::now();
        let x = Array2::from_shape_vec((n, DIMS), ml_data::kmeans_rows(n))?;
        let init = x.slice(ndarray016::s![..CLUSTERS, ..]).to_owned();
        let data = DatasetBase::from(x.clone());
        gen(&format!("kmeans data ({n} rows)"), t);
        let (times, m) = time(w, reps, || {
            let m = KMeans::params(CLUSTERS)
                .n_runs(1)
                .max_n_iterations(ITERS as u64)
                .tolerance(f64::MIN_POSITIVE)
                .init_method(KMeansInit::Precomputed(init.clone()))
                .fit(&data)?;
            Ok(m)
        })?;
        let centers = m.centroids();
        let inertia = inertia(&x, centers);
        let mut result = kmeans_result(None, inertia, &centers.iter().copied().collect::<Vec<_>>());
        if let Json::Obj(fields) = &mut result {
            fields.push(("algorithm", Json::Str("m_k-means".into())));
        }
        emit(row_json(
            side,
            "kmeans fit",
            n,
            &times,
            "linfa-clustering KMeans(100), n_runs 1, 20 iterations, Precomputed(first 100 rows), float64",
            &dev,
            result,
            vec![],
        ));
    }

    if opts.wants("ridge") {
        let n = opts.ridge_rows;
        let t = Instant::now();
        let (hx, hy) = ml_data::ridge_rows(n);
        let x = Array2::from_shape_vec((n, DIMS), hx)?;
        let y = Array1::from_vec(hy);
        gen(&format!("ridge data ({n} rows)"), t);
        let (times, (coef, intercept, steps)) = time(w, reps, || ridge_fit(&x, &y))?;
        emit(row_json(
            side,
            "ridge fit",
            n,
            &times,
            "centre x (column-major copy) and y, linfa-elasticnet l1_ratio 1e-9, penalty alpha/n, tolerance 1e-8, no intercept; intercept = ȳ - x̄·w",
            &dev,
            Json::Obj(vec![
                ("coef", Json::nums(coef.as_slice().unwrap_or(&[]))),
                ("intercept", Json::Num(intercept)),
                ("n_steps", Json::Int(steps as i64)),
            ]),
            vec![],
        ));
        // A model with these coefficients: linfa's fitted ElasticNet has no public constructor,
        // so predict is the same arithmetic linfa's `predict` does (`x.dot(w) + b`).
        let (times, p) = time(w, reps, || Ok(x.dot(&coef) + intercept))?;
        emit(row_json(
            side,
            "ridge predict",
            n,
            &times,
            "x.dot(w) + b with ndarray 0.16 (linfa-elasticnet's predict), float64",
            &dev,
            predict_result(p.as_slice().unwrap_or(&[])),
            vec![],
        ));
    }
    Ok(())
}

/// Ridge with an unpenalised intercept through linfa-elasticnet: (coef, intercept, coordinate
/// descent sweeps).
fn ridge_fit(x: &Array2<f64>, y: &Array1<f64>) -> R<(Array1<f64>, f64, u32)> {
    let n = x.nrows();
    let x_mean = x.mean_axis(Axis(0)).ok_or("no rows")?;
    let y_mean = y.mean().ok_or("no rows")?;
    let mut xc = Array2::<f64>::zeros((n, DIMS).f());
    xc.axis_iter_mut(Axis(1))
        .into_par_iter()
        .enumerate()
        .for_each(|(j, mut col)| {
            let m = x_mean[j];
            for (c, v) in col.iter_mut().zip(x.column(j)) {
                *c = v - m;
            }
        });
    let yc = y.mapv(|v| v - y_mean);
    let data = DatasetBase::new(xc, yc);
    let model = ElasticNet::params()
        .penalty(ALPHA / n as f64)
        .l1_ratio(L1_RATIO)
        .with_intercept(false)
        .tolerance(TOLERANCE)
        .max_iterations(MAX_SWEEPS)
        .fit(&data)?;
    let coef = model.hyperplane().clone();
    let intercept = y_mean - x_mean.dot(&coef);
    Ok((coef, intercept, model.n_steps()))
}

/// The sum over rows of the squared distance to the nearest center.
fn inertia(x: &Array2<f64>, centers: &Array2<f64>) -> f64 {
    x.axis_iter(Axis(0))
        .into_par_iter()
        .map(|row| {
            centers
                .axis_iter(Axis(0))
                .map(|c| {
                    row.iter()
                        .zip(c)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn votes_break_ties_to_the_smallest_class() {
        assert_eq!(vote([3, 1, 3, 1, 2].into_iter()), 1);
        assert_eq!(vote([4, 4, 9, 9, 9].into_iter()), 9);
    }

    #[test]
    fn linfa_side_runs_small() {
        let mut opts = MlOpts::dry();
        opts.knn_refs = 500;
        opts.knn_queries = 20;
        opts.kmeans_rows = 300;
        opts.ridge_rows = 400;
        opts.warmup = 0;
        opts.reps = 1;
        let mut rows = Vec::new();
        run(&opts, &mut |j| rows.push(j.render())).unwrap();
        assert_eq!(rows.len(), 4);
        assert!(rows[1].contains("\"n_iter\":null"));
    }
}
