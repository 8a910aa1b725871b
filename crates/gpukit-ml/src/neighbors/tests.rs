//! The neighbour estimators on the CPU backend against a straightforward host search (direct
//! `Σ (q − r)²` for every pair, sorted by distance then index) on random data.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn cpu() -> Device {
    Device::Cpu
}

fn random(r: &mut StdRng, n: usize, d: usize) -> Vec<f64> {
    (0..n * d).map(|_| r.random_range(-1.0..1.0)).collect()
}

/// Host reference: the `k` nearest rows of each query, `(distance, index)` sorted.
fn reference(
    refs: &[f64],
    q: &[f64],
    d: usize,
    k: usize,
    metric: Metric,
) -> Vec<Vec<(f64, usize)>> {
    let n = refs.len() / d;
    q.chunks(d)
        .map(|qr| {
            let mut all: Vec<(f64, usize)> = (0..n)
                .map(|j| {
                    let r = &refs[j * d..(j + 1) * d];
                    let dist = match metric {
                        Metric::Euclidean => qr
                            .iter()
                            .zip(r)
                            .map(|(a, b)| (a - b) * (a - b))
                            .sum::<f64>()
                            .sqrt(),
                        Metric::Cosine => {
                            let dot: f64 = qr.iter().zip(r).map(|(a, b)| a * b).sum();
                            let na = qr.iter().map(|a| a * a).sum::<f64>().sqrt();
                            let nb = r.iter().map(|b| b * b).sum::<f64>().sqrt();
                            if na == 0.0 || nb == 0.0 {
                                1.0
                            } else {
                                1.0 - dot / (na * nb)
                            }
                        }
                    };
                    (dist, j)
                })
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            all.truncate(k);
            all
        })
        .collect()
}

fn check_search(
    n: usize,
    m: usize,
    d: usize,
    k: usize,
    metric: Metric,
    batch: Option<usize>,
    seed: u64,
) {
    let mut r = StdRng::seed_from_u64(seed);
    let refs = random(&mut r, n, d);
    let q = random(&mut r, m, d);
    let y = Array::<i64>::zeros_on(n, &cpu()).unwrap();
    let mut knn = KNeighborsClassifier::new(k.min(n)).metric(metric);
    if let Some(b) = batch {
        knn = knn.batch_bytes(b);
    }
    knn.fit(
        &Array::from_vec_on(refs.clone(), [n, d], &cpu()).unwrap(),
        &y,
    )
    .unwrap();
    let (dist, idx) = knn
        .kneighbors(&Array::from_vec_on(q.clone(), [m, d], &cpu()).unwrap(), k)
        .unwrap();
    assert_eq!((dist.shape(), idx.shape()), (&[m, k][..], &[m, k][..]));
    let (dist, idx) = (dist.to_vec().unwrap(), idx.to_vec().unwrap());
    let want = reference(&refs, &q, d, k, metric);
    for (i, row) in want.iter().enumerate() {
        for (s, &(wd, wi)) in row.iter().enumerate() {
            assert_eq!(
                idx[i * k + s],
                wi as i64,
                "query {i} rank {s} (n {n}, k {k}, {metric:?})"
            );
            assert!(
                (dist[i * k + s] - wd).abs() < 1e-9,
                "query {i} rank {s}: {} vs {wd}",
                dist[i * k + s]
            );
        }
    }
}

#[test]
fn kneighbors_equal_a_host_search() {
    check_search(50, 20, 3, 1, Metric::Euclidean, None, 1);
    check_search(700, 30, 8, 5, Metric::Euclidean, None, 2);
    check_search(3000, 12, 16, 17, Metric::Euclidean, None, 3);
    check_search(20_000, 4, 4, 1, Metric::Euclidean, None, 4);
    check_search(400, 9, 5, 128, Metric::Euclidean, None, 5);
    check_search(128, 5, 5, 128, Metric::Euclidean, None, 6);
    check_search(2000, 25, 6, 7, Metric::Cosine, None, 7);
}

#[test]
fn batched_queries_give_the_same_neighbours() {
    // 5000 references × 8 bytes = 40 000 bytes per query row: one query per batch.
    check_search(5000, 7, 4, 3, Metric::Euclidean, Some(40_000), 8);
    check_search(5000, 23, 4, 3, Metric::Cosine, Some(100_000), 9);
}

#[test]
fn equal_distances_go_to_the_smaller_index() {
    // integer points: the GEMM form is exact, so ties are real ties
    let refs = vec![
        1.0f64, 0.0, 0.0, 1.0, 1.0, 0.0, -1.0, 0.0, 0.0, -1.0, 2.0, 2.0, 0.0, 1.0,
    ];
    let n = refs.len() / 2;
    let x = Array::from_vec_on(refs.clone(), [n, 2], &cpu()).unwrap();
    let y = Array::from_vec_on(vec![5i64, 3, 5, 3, 3, 9, 7], n, &cpu()).unwrap();
    let mut knn = KNeighborsClassifier::new(4);
    knn.fit(&x, &y).unwrap();
    let q = Array::from_vec_on(vec![0.0f64, 0.0], [1, 2], &cpu()).unwrap();
    let (dist, idx) = knn.kneighbors(&q, 6).unwrap();
    assert_eq!(idx.to_vec().unwrap(), vec![0, 1, 2, 3, 4, 6]);
    assert_eq!(dist.to_vec().unwrap(), vec![1.0; 6]);
    // the 4 nearest are rows 0..4 with labels 5, 3, 5, 3: a tie between 3 and 5 → 3
    assert_eq!(knn.predict(&q).unwrap().to_vec().unwrap(), vec![3]);
    assert_eq!(knn.classes().unwrap(), vec![3, 5, 7, 9]);
    let p = knn.predict_proba(&q).unwrap().to_vec().unwrap();
    assert_eq!(p, vec![0.5, 0.5, 0.0, 0.0]);
}

/// Host vote: weights per class, the largest wins, ties to the smallest label.
fn host_vote(
    nb: &[(f64, usize)],
    labels: &[i64],
    classes: &[i64],
    weighted: bool,
) -> (i64, Vec<f64>) {
    let zero = weighted && nb.iter().any(|p| p.0 == 0.0);
    let mut w = vec![0.0; classes.len()];
    for &(d, j) in nb {
        let wt = if !weighted {
            1.0
        } else if zero {
            f64::from(u8::from(d == 0.0))
        } else {
            1.0 / d
        };
        w[classes.iter().position(|&c| c == labels[j]).unwrap()] += wt;
    }
    let total: f64 = w.iter().sum();
    let mut best = 0;
    for c in 1..w.len() {
        if w[c] > w[best] {
            best = c;
        }
    }
    (classes[best], w.iter().map(|v| v / total).collect())
}

#[test]
fn predictions_equal_a_host_vote() {
    let mut r = StdRng::seed_from_u64(12);
    let (n, m, d) = (900, 150, 6);
    let refs = random(&mut r, n, d);
    let q = random(&mut r, m, d);
    let labels: Vec<i64> = (0..n).map(|_| [2, -7, 40][r.random_range(0..3)]).collect();
    let classes = vec![-7, 2, 40];
    let x = Array::from_vec_on(refs.clone(), [n, d], &cpu()).unwrap();
    let y = Array::from_vec_on(labels.clone(), n, &cpu()).unwrap();
    let qa = Array::from_vec_on(q.clone(), [m, d], &cpu()).unwrap();
    for (k, weights) in [
        (4, Weights::Uniform),
        (7, Weights::Distance),
        (1, Weights::Uniform),
    ] {
        let mut knn = KNeighborsClassifier::new(k).weights(weights);
        knn.fit(&x, &y).unwrap();
        let pred = knn.predict(&qa).unwrap().to_vec().unwrap();
        let proba = knn.predict_proba(&qa).unwrap().to_vec().unwrap();
        let want = reference(&refs, &q, d, k, Metric::Euclidean);
        for (i, nb) in want.iter().enumerate() {
            let (label, p) = host_vote(nb, &labels, &classes, weights == Weights::Distance);
            assert_eq!(pred[i], label, "query {i}, k {k}");
            for c in 0..3 {
                assert!((proba[i * 3 + c] - p[c]).abs() < 1e-9);
            }
        }
        let score = knn
            .score(&qa, &Array::from_vec_on(pred.clone(), m, &cpu()).unwrap())
            .unwrap();
        assert_eq!(score, 1.0);
    }
    // on its own training rows with k = 1 every row finds itself
    let mut knn = KNeighborsClassifier::new(1);
    knn.fit(&x, &y).unwrap();
    assert_eq!(knn.score(&x, &y).unwrap(), 1.0);
}

#[test]
fn regression_is_the_neighbour_mean() {
    let mut r = StdRng::seed_from_u64(13);
    let (n, m, d) = (500, 40, 3);
    let refs = random(&mut r, n, d);
    let q = random(&mut r, m, d);
    let t: Vec<f64> = (0..n).map(|_| r.random_range(-10.0..10.0)).collect();
    let x = Array::from_vec_on(refs.clone(), [n, d], &cpu()).unwrap();
    let y = Array::from_vec_on(t.clone(), n, &cpu()).unwrap();
    for weights in [Weights::Uniform, Weights::Distance] {
        let mut reg = KNeighborsRegressor::new(5).weights(weights);
        reg.fit(&x, &y).unwrap();
        let got = reg
            .predict(&Array::from_vec_on(q.clone(), [m, d], &cpu()).unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        for (i, nb) in reference(&refs, &q, d, 5, Metric::Euclidean)
            .iter()
            .enumerate()
        {
            let (mut acc, mut tot) = (0.0, 0.0);
            for &(dd, j) in nb {
                let w = if weights == Weights::Uniform {
                    1.0
                } else {
                    1.0 / dd
                };
                acc += w * t[j];
                tot += w;
            }
            assert!((got[i] - acc / tot).abs() < 1e-9, "query {i}");
        }
    }
    let mut reg = KNeighborsRegressor::new(1);
    reg.fit(&x, &y).unwrap();
    assert!((reg.score(&x, &y).unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn f32_neighbours_match_up_to_rounding() {
    let mut r = StdRng::seed_from_u64(14);
    let (n, m, d, k) = (2000, 30, 8, 5);
    let refs = random(&mut r, n, d);
    let q = random(&mut r, m, d);
    let f = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
    let mut knn = KNeighborsClassifier::<f32>::new(k);
    knn.fit(
        &Array::from_vec_on(f(&refs), [n, d], &cpu()).unwrap(),
        &Array::<i64>::zeros_on(n, &cpu()).unwrap(),
    )
    .unwrap();
    let (dist, idx) = knn
        .kneighbors(&Array::from_vec_on(f(&q), [m, d], &cpu()).unwrap(), k)
        .unwrap();
    let (dist, idx) = (dist.to_vec().unwrap(), idx.to_vec().unwrap());
    for (i, row) in reference(&refs, &q, d, k, Metric::Euclidean)
        .iter()
        .enumerate()
    {
        for (s, &(wd, wi)) in row.iter().enumerate() {
            assert!((dist[i * k + s] as f64 - wd).abs() < 1e-4);
            let near_tie = row
                .iter()
                .any(|&(od, oj)| oj != wi && (od - wd).abs() < 1e-4);
            if !near_tie {
                assert_eq!(idx[i * k + s], wi as i64);
            }
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let c = cpu();
    let x = Array::from_vec_on(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], [3, 2], &c).unwrap();
    let y = Array::from_vec_on(vec![0i64, 1, 0], 3, &c).unwrap();
    let q = Array::from_vec_on(vec![0.5f64, 0.5], [1, 2], &c).unwrap();
    let knn = KNeighborsClassifier::<f64>::new(2);
    assert!(matches!(knn.predict(&q), Err(MlError::NotFitted { .. })));
    let e = KNeighborsClassifier::new(4)
        .fit(&x, &y)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("n_neighbors") && e.contains("3 training rows"),
        "{e}"
    );
    assert!(KNeighborsClassifier::new(0).fit(&x, &y).is_err());
    let short = Array::from_vec_on(vec![0i64, 1], 2, &c).unwrap();
    let e = KNeighborsClassifier::new(1)
        .fit(&x, &short)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("3 rows") && e.contains("2"), "{e}");
    let nan = Array::from_vec_on(vec![0.0f64, 1.0, f64::NAN, 3.0, 4.0, 5.0], [3, 2], &c).unwrap();
    let e = KNeighborsClassifier::new(1).fit(&nan, &y).err().unwrap();
    assert!(
        matches!(
            e,
            MlError::NonFinite {
                row: 1,
                column: 0,
                ..
            }
        ),
        "{e}"
    );
    let empty = Array::<f64>::zeros_on([0, 2], &c).unwrap();
    let e = KNeighborsClassifier::new(1)
        .fit(&empty, &Array::<i64>::zeros_on(0, &c).unwrap())
        .err()
        .unwrap();
    assert!(e.to_string().contains("empty"), "{e}");
    let mut knn = KNeighborsClassifier::new(2);
    knn.fit(&x, &y).unwrap();
    let wide = Array::from_vec_on(vec![0.5f64, 0.5, 0.5], [1, 3], &c).unwrap();
    assert!(knn
        .predict(&wide)
        .unwrap_err()
        .to_string()
        .contains("fitted on 2 features"));
    assert!(knn
        .predict(&empty)
        .unwrap_err()
        .to_string()
        .contains("empty"));
    let qnan = Array::from_vec_on(vec![f64::INFINITY, 0.5], [1, 2], &c).unwrap();
    assert!(matches!(knn.predict(&qnan), Err(MlError::NonFinite { .. })));
    assert!(knn
        .kneighbors(&q, 4)
        .unwrap_err()
        .to_string()
        .contains("n_neighbors"));
    let big = Array::<f64>::zeros_on([200, 2], &c).unwrap();
    let e = KNeighborsClassifier::new(129)
        .fit(&big, &Array::<i64>::zeros_on(200, &c).unwrap())
        .err()
        .unwrap();
    assert!(e.to_string().contains("128"), "{e}");
    let reg_nan = Array::from_vec_on(vec![0.0f64, f64::NAN, 1.0], 3, &c).unwrap();
    assert!(KNeighborsRegressor::new(1).fit(&x, &reg_nan).is_err());
}
