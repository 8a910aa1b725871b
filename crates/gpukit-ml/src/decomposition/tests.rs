//! PCA on the CPU backend against a reference written here: the covariance matrix's
//! eigenvectors by Jacobi rotations in `f64`, signs fixed as scikit-learn's `svd_flip`.

use gpukit::{Array, Device};

use super::PCA;
use crate::error::MlError;
use crate::gram::LinalgFloat;
use crate::test_support::{cpu_array, host, max_diff, rng, symmetric_eigen, uniform};

/// Correlated random data `(n, d)`: uniform noise mixed by a fixed matrix, plus offsets.
fn data(seed: u64, n: usize, d: usize) -> Vec<f64> {
    let mut r = rng(seed);
    let z = uniform(&mut r, n * d);
    let mix = uniform(&mut r, d * d);
    (0..n * d)
        .map(|idx| {
            let (i, j) = (idx / d, idx % d);
            let v: f64 = (0..d)
                .map(|l| z[i * d + l] * mix[l * d + j] * (1.0 + l as f64))
                .sum();
            v + 10.0 * j as f64
        })
        .collect()
}

/// (components as rows, variances, total variance, mean) of the reference PCA.
fn reference(x: &[f64], n: usize, d: usize) -> (Vec<Vec<f64>>, Vec<f64>, f64, Vec<f64>) {
    let mean: Vec<f64> = (0..d)
        .map(|j| (0..n).map(|i| x[i * d + j]).sum::<f64>() / n as f64)
        .collect();
    let mut cov = vec![0.0; d * d];
    for i in 0..n {
        for a in 0..d {
            for b in 0..d {
                cov[a * d + b] +=
                    (x[i * d + a] - mean[a]) * (x[i * d + b] - mean[b]) / (n - 1) as f64;
            }
        }
    }
    let total = (0..d).map(|j| cov[j * d + j]).sum();
    let (vals, mut vecs) = symmetric_eigen(&cov, d);
    for v in vecs.iter_mut() {
        let big = (0..d).fold(0, |b, j| if v[j].abs() > v[b].abs() { j } else { b });
        if v[big] < 0.0 {
            v.iter_mut().for_each(|e| *e = -*e);
        }
    }
    (vecs, vals, total, mean)
}

fn check_pca<T: LinalgFloat>(n: usize, d: usize, k: usize, tol: f64) {
    let xv = data(n as u64 * 31 + d as u64, n, d);
    let x = cpu_array::<T>(&xv, &[n, d]);
    let mut pca = PCA::<T>::new().n_components(k);
    let z = pca.fit_transform(&x).unwrap();
    let (vecs, vals, total, mean) = reference(&xv, n, d);
    let comps = host(pca.components().unwrap());
    assert_eq!(pca.components().unwrap().shape(), &[k, d]);
    for i in 0..k {
        assert!(
            max_diff(&comps[i * d..(i + 1) * d], &vecs[i]) < tol,
            "component {i} ({n}x{d})"
        );
    }
    let ev = host(pca.explained_variance().unwrap());
    assert!(max_diff(&ev, &vals[..k]) < tol * vals[0], "{ev:?} {vals:?}");
    let ratio: Vec<f64> = vals[..k].iter().map(|v| v / total).collect();
    assert!(max_diff(&host(pca.explained_variance_ratio().unwrap()), &ratio) < tol);
    let sv: Vec<f64> = vals[..k]
        .iter()
        .map(|v| (v * (n - 1) as f64).sqrt())
        .collect();
    assert!(max_diff(&host(pca.singular_values().unwrap()), &sv) < tol * sv[0]);
    assert!(max_diff(&host(pca.mean().unwrap()), &mean) < tol * 10.0);
    // transform = centered data times the reference components
    let zr: Vec<f64> = (0..n * k)
        .map(|idx| {
            let (i, c) = (idx / k, idx % k);
            (0..d).map(|j| (xv[i * d + j] - mean[j]) * vecs[c][j]).sum()
        })
        .collect();
    assert!(max_diff(&host(&z), &zr) < tol * 100.0);
}

#[test]
fn pca_of_tall_data_matches_the_covariance_eigenvectors() {
    check_pca::<f64>(200, 5, 5, 1e-9);
    check_pca::<f64>(200, 5, 2, 1e-9);
    check_pca::<f32>(200, 5, 3, 2e-3);
}

#[test]
fn pca_of_wide_data_matches_too() {
    // n < d: the SVD route; the centered data has rank n - 1, so compare the first n - 1.
    check_pca::<f64>(6, 9, 5, 1e-9);
    check_pca::<f32>(6, 9, 4, 2e-3);
}

#[test]
fn inverse_transform_undoes_transform_with_all_components() {
    let (n, d) = (40, 4);
    let xv = data(2, n, d);
    let x = cpu_array::<f64>(&xv, &[n, d]);
    for whiten in [false, true] {
        let mut pca = PCA::<f64>::new().whiten(whiten);
        let z = pca.fit_transform(&x).unwrap();
        if whiten {
            // whitened components have unit variance
            let var = host(&z.var_axis(0, 1).unwrap());
            assert!(max_diff(&var, &[1.0; 4]) < 1e-9, "{var:?}");
        }
        let back = host(&pca.inverse_transform(&z).unwrap());
        assert!(max_diff(&back, &xv) < 1e-9);
    }
}

#[test]
fn pca_rejects_bad_input() {
    let cpu = Device::Cpu;
    let x = Array::from_vec_on(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 7.0], [3, 2], &cpu).unwrap();
    let pca = PCA::<f64>::new();
    assert!(matches!(
        pca.transform(&x),
        Err(MlError::NotFitted { model: "PCA" })
    ));
    let mut pca = PCA::<f64>::new().n_components(3);
    let e = pca.fit(&x).unwrap_err().to_string();
    assert!(
        e.contains("n_components") && e.contains("= 2, got 3"),
        "{e}"
    );
    let one = Array::from_vec_on(vec![1.0f64, 2.0], [1, 2], &cpu).unwrap();
    assert!(matches!(
        PCA::<f64>::new().fit(&one),
        Err(MlError::Shape { .. })
    ));
    let nan = Array::from_vec_on(vec![1.0f64, f64::NAN, 3.0, 4.0], [2, 2], &cpu).unwrap();
    assert!(matches!(
        PCA::<f64>::new().fit(&nan),
        Err(MlError::NonFinite { .. })
    ));
    let mut pca = PCA::<f64>::new().n_components(1);
    pca.fit(&x).unwrap();
    let wide = Array::<f64>::zeros_on([2, 3], &cpu).unwrap();
    assert!(matches!(pca.transform(&wide), Err(MlError::Shape { .. })));
    let z2 = Array::<f64>::zeros_on([2, 2], &cpu).unwrap();
    let e = pca.inverse_transform(&z2).unwrap_err().to_string();
    assert!(e.contains("fitted on 1 features, got 2"), "{e}");
}
