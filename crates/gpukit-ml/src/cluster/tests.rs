//! KMeans on the CPU backend against a straightforward host Lloyd (direct distances, the same
//! stopping rule and empty-cluster rule) from the same initial centres, on random blobs.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn cpu() -> Device {
    Device::Cpu
}

/// Blobs around `k` random centres in `[-10, 10)^d`, spread `std`.
fn blobs(r: &mut StdRng, n: usize, d: usize, k: usize, std: f64) -> (Vec<f64>, Vec<usize>) {
    let centres: Vec<f64> = (0..k * d).map(|_| r.random_range(-10.0..10.0)).collect();
    let mut x = Vec::with_capacity(n * d);
    let mut truth = Vec::with_capacity(n);
    for _ in 0..n {
        let c = r.random_range(0..k);
        truth.push(c);
        for j in 0..d {
            let noise: f64 = (0..12).map(|_| r.random_range(-0.5..0.5)).sum::<f64>();
            x.push(centres[c * d + j] + std * noise);
        }
    }
    (x, truth)
}

struct HostFit {
    centers: Vec<f64>,
    labels: Vec<usize>,
    inertia: f64,
    n_iter: usize,
}

fn host_assign(x: &[f64], c: &[f64], d: usize) -> (Vec<usize>, Vec<f64>) {
    let k = c.len() / d;
    x.chunks(d)
        .map(|p| {
            let mut best = (0, f64::INFINITY);
            for j in 0..k {
                let s: f64 = p
                    .iter()
                    .zip(&c[j * d..(j + 1) * d])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                if s < best.1 {
                    best = (j, s);
                }
            }
            best
        })
        .unzip()
}

fn host_lloyd(x: &[f64], d: usize, init: &[f64], max_iter: usize, tol: f64) -> HostFit {
    let n = x.len() / d;
    let k = init.len() / d;
    let mut means = vec![0.0; d];
    for p in x.chunks(d) {
        for j in 0..d {
            means[j] += p[j] / n as f64;
        }
    }
    let mut var = 0.0;
    for p in x.chunks(d) {
        for j in 0..d {
            var += (p[j] - means[j]) * (p[j] - means[j]) / n as f64;
        }
    }
    let tol_abs = tol * var / d as f64;
    let mut c = init.to_vec();
    let mut n_iter = 0;
    for _ in 0..max_iter {
        let (mut labels, dist) = host_assign(x, &c, d);
        let mut sums = vec![0.0; k * d];
        let mut counts = vec![0i64; k];
        for (i, p) in x.chunks(d).enumerate() {
            counts[labels[i]] += 1;
            for j in 0..d {
                sums[labels[i] * d + j] += p[j];
            }
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
        let empty: Vec<usize> = (0..k).filter(|&e| counts[e] == 0).collect();
        for (&e, &i) in empty.iter().zip(&order) {
            let old = labels[i];
            for j in 0..d {
                sums[old * d + j] -= x[i * d + j];
                sums[e * d + j] = x[i * d + j];
            }
            counts[old] -= 1;
            counts[e] = 1;
            labels[i] = e;
        }
        let mut new = c.clone();
        for e in 0..k {
            if counts[e] > 0 {
                for j in 0..d {
                    new[e * d + j] = sums[e * d + j] / counts[e] as f64;
                }
            }
        }
        let shift: f64 = new.iter().zip(&c).map(|(a, b)| (a - b) * (a - b)).sum();
        c = new;
        n_iter += 1;
        if shift <= tol_abs {
            break;
        }
    }
    let (labels, dist) = host_assign(x, &c, d);
    HostFit {
        centers: c,
        labels,
        inertia: dist.iter().sum(),
        n_iter,
    }
}

fn compare(x: &[f64], d: usize, init: &[f64], max_iter: usize, block: Option<usize>) {
    let n = x.len() / d;
    let k = init.len() / d;
    let xa = Array::from_vec_on(x.to_vec(), [n, d], &cpu()).unwrap();
    let mut km = KMeans::new(k)
        .max_iter(max_iter)
        .initial_centers(Array::from_vec_on(init.to_vec(), [k, d], &cpu()).unwrap());
    if let Some(b) = block {
        km = km.block_bytes(b);
    }
    km.fit(&xa).unwrap();
    let want = host_lloyd(x, d, init, max_iter, 1e-4);
    assert_eq!(km.n_iter().unwrap(), want.n_iter);
    let labels = km.labels().unwrap().to_vec().unwrap();
    assert_eq!(
        labels,
        want.labels.iter().map(|&l| l as i64).collect::<Vec<_>>()
    );
    for (a, b) in km
        .cluster_centers()
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .zip(&want.centers)
    {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    assert!((km.inertia().unwrap() - want.inertia).abs() < 1e-8 * want.inertia.max(1.0));
    assert_eq!(km.predict(&xa).unwrap().to_vec().unwrap(), labels);
}

#[test]
fn lloyd_equals_a_host_lloyd_from_the_same_centres() {
    let mut r = StdRng::seed_from_u64(21);
    for (n, d, k, std) in [(400, 2, 3, 1.0), (1500, 5, 8, 3.0), (300, 3, 1, 1.0)] {
        let (x, _) = blobs(&mut r, n, d, k, std);
        let init: Vec<f64> = (0..k)
            .flat_map(|i| x[i * 7 * d..i * 7 * d + d].to_vec())
            .collect();
        compare(&x, d, &init, 300, None);
        compare(&x, d, &init, 2, None);
        // chunks of 64 rows (k rows of 8 bytes per point)
        compare(&x, d, &init, 300, Some(64 * k * 8));
    }
}

#[test]
fn an_empty_cluster_gets_the_farthest_point() {
    let mut r = StdRng::seed_from_u64(22);
    let (x, _) = blobs(&mut r, 600, 2, 3, 1.0);
    // the third centre is far from everything: empty at the first step
    let init = vec![x[0], x[1], x[2], x[3], 1e4, 1e4];
    compare(&x, 2, &init, 300, None);
}

#[test]
fn kmeans_plus_plus_finds_separated_blobs() {
    let mut r = StdRng::seed_from_u64(23);
    let (n, d, k) = (3000, 4, 6);
    let (x, truth) = blobs(&mut r, n, d, k, 0.05);
    let xa = Array::from_vec_on(x.clone(), [n, d], &cpu()).unwrap();
    let mut best_pp = f64::INFINITY;
    for init in [KMeansInit::KMeansPlusPlus, KMeansInit::Random] {
        let mut best: Option<(f64, Vec<i64>)> = None;
        for seed in 0..4 {
            let mut km = KMeans::new(k).init(init).random_state(seed);
            km.fit(&xa).unwrap();
            let inertia = km.inertia().unwrap();
            if best.as_ref().is_none_or(|b| inertia < b.0) {
                best = Some((inertia, km.labels().unwrap().to_vec().unwrap()));
            }
            // seeded: the same again
            let mut again = KMeans::new(k).init(init).random_state(seed);
            again.fit(&xa).unwrap();
            assert_eq!(again.inertia().unwrap(), inertia);
        }
        let (inertia, labels) = best.unwrap();
        if init == KMeansInit::Random {
            // random rows may start two centres in one blob; the result is still a local optimum
            assert!(inertia >= best_pp * (1.0 - 1e-9));
            assert!(labels.iter().all(|&l| (0..k as i64).contains(&l)));
            continue;
        }
        best_pp = inertia;
        // the same partition as the truth, up to renaming
        let mut map = vec![None; k];
        for (t, &l) in truth.iter().zip(&labels) {
            assert_eq!(*map[*t].get_or_insert(l), l, "{init:?}: blob {t} split");
        }
        assert!(
            inertia < n as f64 * d as f64 * 0.05 * 0.05 * 1.5,
            "{init:?}: {inertia}"
        );
    }
}

#[test]
fn f32_follows_f64() {
    let mut r = StdRng::seed_from_u64(24);
    let (x, _) = blobs(&mut r, 800, 3, 4, 0.5);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut a = KMeans::<f64>::new(4).random_state(3);
    a.fit(&Array::from_vec_on(x, [800, 3], &cpu()).unwrap())
        .unwrap();
    let mut b = KMeans::<f32>::new(4).random_state(3);
    b.fit(&Array::from_vec_on(x32, [800, 3], &cpu()).unwrap())
        .unwrap();
    assert_eq!(
        a.labels().unwrap().to_vec().unwrap(),
        b.labels().unwrap().to_vec().unwrap()
    );
    assert!((a.inertia().unwrap() - b.inertia().unwrap()).abs() < 1e-3 * a.inertia().unwrap());
}

#[test]
fn bad_input_is_an_error() {
    let c = cpu();
    let x = Array::from_vec_on(vec![0.0f64, 1.0, 2.0, 3.0], [2, 2], &c).unwrap();
    let km = KMeans::<f64>::new(2);
    assert!(matches!(km.labels(), Err(MlError::NotFitted { .. })));
    assert!(matches!(km.predict(&x), Err(MlError::NotFitted { .. })));
    let e = KMeans::new(3).fit(&x).err().unwrap().to_string();
    assert!(e.contains("n_clusters") && e.contains("2 rows"), "{e}");
    assert!(KMeans::new(0).fit(&x).is_err());
    assert!(KMeans::new(1).max_iter(0).fit(&x).is_err());
    assert!(KMeans::new(1).tol(-1.0).fit(&x).is_err());
    let nan = Array::from_vec_on(vec![0.0f64, 1.0, f64::NAN, 3.0], [2, 2], &c).unwrap();
    assert!(matches!(
        KMeans::new(1).fit(&nan),
        Err(MlError::NonFinite { row: 1, .. })
    ));
    let bad_init = Array::<f64>::zeros_on([2, 3], &c).unwrap();
    assert!(KMeans::new(2)
        .initial_centers(bad_init)
        .fit(&x)
        .unwrap_err()
        .to_string()
        .contains("(2, 2)"));
    let mut km = KMeans::new(1);
    km.fit(&x).unwrap();
    let wide = Array::<f64>::zeros_on([1, 3], &c).unwrap();
    assert!(km
        .predict(&wide)
        .unwrap_err()
        .to_string()
        .contains("fitted on 2 features"));
}

#[test]
fn degenerate_data_still_fits() {
    let c = cpu();
    // all rows equal: every centre is that row, inertia 0, no NaN
    let same = Array::from_vec_on(vec![2.0f64; 5 * 3], [5, 3], &c).unwrap();
    for init in [KMeansInit::KMeansPlusPlus, KMeansInit::Random] {
        let mut km = KMeans::new(3).init(init);
        km.fit(&same).unwrap();
        assert_eq!(km.inertia().unwrap(), 0.0);
        assert!(km
            .cluster_centers()
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .all(|&v| v == 2.0));
    }
    // as many clusters as rows: each row its own centre
    let x = Array::from_vec_on(vec![0.0f64, 0.0, 5.0, 5.0, -3.0, 4.0], [3, 2], &c).unwrap();
    let mut km = KMeans::new(3);
    km.fit(&x).unwrap();
    assert_eq!(km.inertia().unwrap(), 0.0);
    let mut l = km.labels().unwrap().to_vec().unwrap();
    l.sort();
    assert_eq!(l, vec![0, 1, 2]);
}
