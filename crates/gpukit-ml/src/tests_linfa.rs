//! The models here against linfa's on random data (feature `linfa-tests`, CPU backend): the
//! datasets go through [`crate::linfa`] both ways.
//!
//! - `LinearRegression` = linfa-linear's OLS.
//! - `Ridge(alpha)` against linfa-elasticnet's ridge with `penalty = alpha / n` (it minimises
//!   `|y - Xw|² / 2n + penalty |w|² / 2`) by coordinate descent, which on this data stops
//!   short of the optimum (duality gap about 17, whatever the tolerance and iterations): ours
//!   must reach an objective at least as low and lie near linfa's answer. (The exact optimum
//!   is checked against the normal equations in `linear_model::tests`.)
//! - `LogisticRegression(C)` = linfa-logistic with `alpha = 1 / C` (it minimises
//!   `Σ loss + alpha |w|² / 2` by L-BFGS), binary and multinomial.
//! - `PCA` = linfa-reduction's `Pca` (an SVD): components up to sign, singular values, mean,
//!   projections. (linfa's `explained_variance` divides by `n_components - 1`, not
//!   `n_samples - 1`, so it is not compared.)

use gpukit::{Array, Device};
use linfa::prelude::*;

use crate::linfa::{from_linfa_on, linfa_ndarray as nd, to_linfa, to_linfa_records};
use crate::test_support::{host, max_diff, rng, uniform};
use crate::{LinearRegression, LogisticRegression, Ridge, PCA};

fn regression_dataset(seed: u64, n: usize, d: usize) -> ::linfa::Dataset<f64, f64, nd::Ix1> {
    let mut r = rng(seed);
    let x = uniform(&mut r, n * d);
    let noise = uniform(&mut r, n);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            (0..d).map(|j| x[i * d + j] * (j as f64 - 1.0)).sum::<f64>() + 2.0 + 0.3 * noise[i]
        })
        .collect();
    ::linfa::Dataset::new(
        nd::Array2::from_shape_vec((n, d), x).unwrap(),
        nd::Array1::from_vec(y),
    )
}

#[test]
fn least_squares_and_ridge_match_linfa() {
    let (n, d) = (400, 5);
    let ds = regression_dataset(1, n, d);
    let (x, y) = from_linfa_on(&ds, &Device::Cpu).unwrap();
    let mut ours = LinearRegression::<f64>::new();
    ours.fit(&x, &y).unwrap();
    let theirs = linfa_linear::LinearRegression::new().fit(&ds).unwrap();
    assert!(
        max_diff(
            &host(ours.coef().unwrap()),
            theirs.params().as_slice().unwrap()
        ) < 1e-9
    );
    assert!((ours.intercept().unwrap() - theirs.intercept()).abs() < 1e-9);
    let pred = to_linfa_records(&x).map(|r| theirs.predict(&r)).unwrap();
    assert!(max_diff(&host(&ours.predict(&x).unwrap()), pred.as_slice().unwrap()) < 1e-9);

    for alpha in [1.0, 40.0] {
        let mut ours = Ridge::<f64>::new().alpha(alpha);
        ours.fit(&x, &y).unwrap();
        let theirs = linfa_elasticnet::ElasticNet::<f64>::ridge()
            .penalty(alpha / n as f64)
            .fit(&ds)
            .unwrap();
        let w = host(ours.coef().unwrap());
        let obj = |w: &[f64], b: f64| {
            let r: f64 = (0..n)
                .map(|i| {
                    (ds.targets[i] - b - (0..d).map(|j| ds.records[[i, j]] * w[j]).sum::<f64>())
                        .powi(2)
                })
                .sum();
            r + alpha * w.iter().map(|v| v * v).sum::<f64>()
        };
        // linfa-elasticnet's coordinate descent stops short of the ridge optimum here (its
        // duality gap stays about 17): ours must score at least as well on the ridge objective
        // and lie close to its answer.
        let (o, t) = (
            obj(&w, ours.intercept().unwrap()),
            obj(theirs.hyperplane().as_slice().unwrap(), theirs.intercept()),
        );
        assert!(
            o <= t * (1.0 + 1e-12),
            "alpha {alpha}: ridge objective {o} vs linfa's {t}"
        );
        assert!(
            max_diff(&w, theirs.hyperplane().as_slice().unwrap()) < 0.05,
            "alpha {alpha}"
        );
        assert!((ours.intercept().unwrap() - theirs.intercept()).abs() < 0.2);
    }
}

fn classification_dataset(
    seed: u64,
    n: usize,
    d: usize,
    k: usize,
) -> ::linfa::Dataset<f64, i64, nd::Ix1> {
    let mut r = rng(seed);
    let centers = uniform(&mut r, k * d);
    let noise = uniform(&mut r, n * d);
    let x: Vec<f64> = (0..n * d)
        .map(|idx| 1.2 * centers[(idx / d % k) * d + idx % d] + noise[idx])
        .collect();
    let y: Vec<i64> = (0..n).map(|i| (i % k) as i64).collect();
    ::linfa::Dataset::new(
        nd::Array2::from_shape_vec((n, d), x).unwrap(),
        nd::Array1::from_vec(y),
    )
}

#[test]
fn logistic_regression_matches_linfa_logistic() {
    let (n, d) = (300, 3);
    for (k, c) in [(2, 1.0), (2, 10.0), (3, 1.0), (4, 0.5)] {
        let ds = classification_dataset(k as u64 + 7, n, d, k);
        let (x, y) = from_linfa_on::<f64, i64, _, _, _>(&ds, &Device::Cpu).unwrap();
        let mut ours = LogisticRegression::<f64>::new().c(c).tol(1e-10);
        ours.fit(&x, &y).unwrap();
        let coef = host(ours.coef().unwrap());
        let icpt = host(ours.intercept().unwrap());
        let pred = ours.predict(&x).unwrap().to_vec().unwrap();
        if k == 2 {
            let theirs = linfa_logistic::LogisticRegression::default()
                .alpha(1.0 / c)
                .gradient_tolerance(1e-8)
                .max_iterations(10_000)
                .fit(&ds)
                .unwrap();
            // linfa's positive class may be either label: compare up to the sign
            let p = theirs.params().to_vec();
            let sign = if p[0] * coef[0] < 0.0 { -1.0 } else { 1.0 };
            let p: Vec<f64> = p.iter().map(|v| sign * v).collect();
            assert!(max_diff(&coef, &p) < 1e-4, "k {k} C {c}: {coef:?} vs {p:?}");
            assert!((icpt[0] - sign * theirs.intercept()).abs() < 1e-4);
            let tp = theirs.predict(&ds.records);
            let agree = tp.iter().zip(&pred).filter(|(a, b)| a == b).count();
            assert!(agree >= n - 1, "{agree} of {n} predictions agree");
        } else {
            let theirs = linfa_logistic::MultiLogisticRegression::default()
                .alpha(1.0 / c)
                .gradient_tolerance(1e-8)
                .max_iterations(10_000)
                .fit(&ds)
                .unwrap();
            // linfa: params (d, K) and intercept (K,) in the order of `classes()`
            let cls: Vec<i64> = theirs.classes().to_vec();
            let params = theirs.params();
            let b = theirs.intercept();
            for (col, &class) in cls.iter().enumerate() {
                let ours_row = &coef[class as usize * d..(class as usize + 1) * d];
                let theirs_row: Vec<f64> = (0..d).map(|j| params[[j, col]]).collect();
                assert!(
                    max_diff(ours_row, &theirs_row) < 1e-4,
                    "k {k} class {class}"
                );
                assert!((icpt[class as usize] - b[col]).abs() < 1e-4);
            }
            let tp = theirs.predict(&ds.records);
            let agree = tp.iter().zip(&pred).filter(|(a, b)| a == b).count();
            assert!(agree >= n - 1, "{agree} of {n} predictions agree");
        }
    }
}

#[test]
fn pca_matches_linfa_reduction() {
    let (n, d, k) = (250, 6, 3);
    let mut r = rng(4);
    let raw = uniform(&mut r, n * d);
    let x: Vec<f64> = raw
        .iter()
        .enumerate()
        .map(|(i, v)| v * (1.0 + (i % d) as f64) + 3.0)
        .collect();
    let ds = ::linfa::DatasetBase::from(nd::Array2::from_shape_vec((n, d), x).unwrap());
    let theirs = linfa_reduction::Pca::params(k).fit(&ds).unwrap();
    let xa =
        Array::from_vec_on(ds.records.iter().copied().collect(), [n, d], &Device::Cpu).unwrap();
    let mut ours = PCA::<f64>::new().n_components(k);
    let z = host(&ours.fit_transform(&xa).unwrap());
    let comps = host(ours.components().unwrap());
    let tz = theirs.predict(&ds.records);
    assert!(
        max_diff(
            &host(ours.singular_values().unwrap()),
            theirs.singular_values().as_slice().unwrap()
        ) < 1e-8
    );
    assert!(
        max_diff(
            &host(ours.mean().unwrap()),
            theirs.mean().as_slice().unwrap()
        ) < 1e-12
    );
    for c in 0..k {
        let tc: Vec<f64> = (0..d).map(|j| theirs.components()[[c, j]]).collect();
        let sign = if tc
            .iter()
            .zip(&comps[c * d..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            < 0.0
        {
            -1.0
        } else {
            1.0
        };
        let tc: Vec<f64> = tc.iter().map(|v| sign * v).collect();
        assert!(
            max_diff(&comps[c * d..(c + 1) * d], &tc) < 1e-8,
            "component {c}"
        );
        let ours_z: Vec<f64> = (0..n).map(|i| z[i * k + c]).collect();
        let theirs_z: Vec<f64> = (0..n).map(|i| sign * tz[[i, c]]).collect();
        assert!(max_diff(&ours_z, &theirs_z) < 1e-8, "projection {c}");
    }
    // and a dataset made by to_linfa feeds linfa as well
    let y = Array::<f64>::zeros_on([n], &Device::Cpu).unwrap();
    let back = to_linfa(&xa, &y).unwrap();
    assert_eq!(back.records, ds.records);
}
