//! The linear models and PCA on the first CUDA device against the same models on the CPU
//! backend (whose results are checked against host references beside the code:
//! `src/linear_model/tests.rs`, `src/decomposition/tests.rs`), in `f32` and `f64`, plus
//! `aᵀ·b` through cuBLAS without a transpose, and a tall fit of the benchmark's shape
//! (2M x 64) against the known coefficients.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device, Element};
use gpukit_ml::gram::{gram, t_matmul};
use gpukit_ml::{LinalgFloat, LinearRegression, LogisticRegression, MlError, Ridge, PCA};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn values(seed: u64, n: usize) -> Vec<f64> {
    let mut r = StdRng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(-1.0..1.0)).collect()
}

fn on<T: Element>(v: &[f64], shape: &[usize], device: &Device) -> Array<T> {
    Array::from_vec_on(v.iter().map(|&x| T::from_f64(x)).collect(), shape, device).unwrap()
}

fn host<T: Element>(a: &Array<T>) -> Vec<f64> {
    a.to_vec()
        .unwrap()
        .into_iter()
        .map(|v| v.to_f64())
        .collect()
}

/// Asserts `|a - b| <= tol · max(1, max|b|)` elementwise.
#[track_caller]
fn close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let worst = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(
        worst <= tol * scale,
        "{what}: differs by {worst} (scale {scale})"
    );
}

/// Regression data `(n, d)` with offsets per column and `y = x·w + 3 + noise`.
fn regression(seed: u64, n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = values(seed, n * d);
    for (i, v) in x.iter_mut().enumerate() {
        *v += (i % d) as f64;
    }
    let noise = values(seed + 1, n);
    let y = (0..n)
        .map(|i| {
            (0..d).map(|j| x[i * d + j] * (j as f64 - 2.0)).sum::<f64>() + 3.0 + 0.1 * noise[i]
        })
        .collect();
    (x, y)
}

fn t_matmul_matches<T: LinalgFloat>(gpu: &Device, tol: f64) {
    for (n, p, q) in [
        (1, 1, 1),
        (7, 3, 5),
        (1000, 64, 64),
        (4097, 17, 2),
        (3, 0, 2),
        (0, 4, 4),
    ] {
        let a = values(n as u64 + 1, n * p);
        let b = values(n as u64 + 2, n * q);
        let cpu = t_matmul(
            &on::<T>(&a, &[n, p], &Device::Cpu),
            &on::<T>(&b, &[n, q], &Device::Cpu),
        )
        .unwrap();
        let dev = t_matmul(&on::<T>(&a, &[n, p], gpu), &on::<T>(&b, &[n, q], gpu)).unwrap();
        assert_eq!(dev.shape(), &[p, q]);
        assert_eq!(dev.device(), *gpu);
        close(
            &host(&dev),
            &host(&cpu),
            tol,
            &format!("aᵀ·b {n}x{p}, {n}x{q}"),
        );
        let g = gram(&on::<T>(&a, &[n, p], gpu)).unwrap();
        let gc = gram(&on::<T>(&a, &[n, p], &Device::Cpu)).unwrap();
        close(&host(&g), &host(&gc), tol, "gram");
    }
}

#[test]
fn t_matmul_on_the_gpu_equals_the_cpu() {
    let Some((gpu, _turn)) = gpu() else { return };
    t_matmul_matches::<f64>(&gpu, 1e-12);
    t_matmul_matches::<f32>(&gpu, 1e-4);
}

fn regressions_match<T: LinalgFloat>(gpu: &Device, tol: f64) {
    let (n, d) = (20_000, 12);
    let (xv, yv) = regression(5, n, d);
    let (xc, yc) = (
        on::<T>(&xv, &[n, d], &Device::Cpu),
        on::<T>(&yv, &[n], &Device::Cpu),
    );
    let (xg, yg) = (on::<T>(&xv, &[n, d], gpu), on::<T>(&yv, &[n], gpu));
    for icpt in [true, false] {
        let mut a = LinearRegression::<T>::new().fit_intercept(icpt);
        let mut b = LinearRegression::<T>::new().fit_intercept(icpt);
        a.fit(&xc, &yc).unwrap();
        b.fit(&xg, &yg).unwrap();
        assert_eq!(b.coef().unwrap().device(), *gpu);
        close(
            &host(b.coef().unwrap()),
            &host(a.coef().unwrap()),
            tol,
            "ols coef",
        );
        close(
            &[b.intercept().unwrap().to_f64()],
            &[a.intercept().unwrap().to_f64()],
            tol,
            "ols b",
        );
        close(
            &host(&b.predict(&xg).unwrap()),
            &host(&a.predict(&xc).unwrap()),
            tol,
            "ols predict",
        );
        let (sa, sb) = (a.score(&xc, &yc).unwrap(), b.score(&xg, &yg).unwrap());
        assert!((sa - sb).abs() < tol, "R² {sa} vs {sb}");
        for alpha in [1.0, 1000.0] {
            let mut a = Ridge::<T>::new().alpha(alpha).fit_intercept(icpt);
            let mut b = Ridge::<T>::new().alpha(alpha).fit_intercept(icpt);
            a.fit(&xc, &yc).unwrap();
            b.fit(&xg, &yg).unwrap();
            close(
                &host(b.coef().unwrap()),
                &host(a.coef().unwrap()),
                tol,
                "ridge coef",
            );
            close(
                &[b.intercept().unwrap().to_f64()],
                &[a.intercept().unwrap().to_f64()],
                tol,
                "ridge b",
            );
            close(
                &host(&b.predict(&xg).unwrap()),
                &host(&a.predict(&xc).unwrap()),
                tol,
                "ridge predict",
            );
            // a model fitted on the GPU predicts CPU data too (its parameters are copied over)
            close(
                &host(&b.predict(&xc).unwrap()),
                &host(&a.predict(&xc).unwrap()),
                tol,
                "cross",
            );
        }
    }
}

#[test]
fn regressions_on_the_gpu_equal_the_cpu() {
    let Some((gpu, _turn)) = gpu() else { return };
    regressions_match::<f64>(&gpu, 1e-9);
    regressions_match::<f32>(&gpu, 2e-3);
}

fn tall_fit<T: LinalgFloat>(gpu: &Device, tol: f64) {
    // The benchmark's shape, smaller: 2M x 64, exact targets y = x·w + 0.5.
    let (n, d) = (2_000_000, 64);
    let x = gpukit::random::Generator::new(9)
        .uniform_on::<T>(T::from_f64(-1.0), T::from_f64(1.0), [n, d], gpu)
        .unwrap();
    let w: Vec<f64> = (0..d).map(|j| (j as f64 - 32.0) / 16.0).collect();
    let wa = on::<T>(&w, &[d], gpu);
    let y = (x.matmul(&wa).unwrap() + T::from_f64(0.5)).unwrap();
    let mut m = Ridge::<T>::new().alpha(0.0);
    m.fit(&x, &y).unwrap();
    close(&host(m.coef().unwrap()), &w, tol, "tall ridge coef");
    close(
        &[m.intercept().unwrap().to_f64()],
        &[0.5],
        tol,
        "tall ridge b",
    );
    let mut m = LinearRegression::<T>::new();
    m.fit(&x, &y).unwrap();
    close(&host(m.coef().unwrap()), &w, tol, "tall ols coef");
    assert!(m.score(&x, &y).unwrap() > 1.0 - tol);
}

#[test]
fn a_tall_fit_on_the_gpu_finds_the_coefficients() {
    let Some((gpu, _turn)) = gpu() else { return };
    tall_fit::<f64>(&gpu, 1e-9);
    tall_fit::<f32>(&gpu, 2e-3);
}

fn classes_data(seed: u64, n: usize, d: usize, labels: &[i64]) -> (Vec<f64>, Vec<i64>) {
    let k = labels.len();
    let centers = values(seed, k * d);
    let noise = values(seed + 1, n * d);
    let x = (0..n * d)
        .map(|idx| 1.5 * centers[(idx / d % k) * d + idx % d] + noise[idx])
        .collect();
    let y = (0..n).map(|i| labels[i % k]).collect();
    (x, y)
}

fn logistic_match<T: LinalgFloat>(gpu: &Device, tol: f64) {
    let (n, d) = (30_000, 8);
    for labels in [&[3i64, -1][..], &[0, 1, 2, 3, 4]] {
        let (xv, yv) = classes_data(labels.len() as u64, n, d, labels);
        let xc = on::<T>(&xv, &[n, d], &Device::Cpu);
        let xg = on::<T>(&xv, &[n, d], gpu);
        let yc = Array::from_vec_on(yv.clone(), n, &Device::Cpu).unwrap();
        let yg = Array::from_vec_on(yv.clone(), n, gpu).unwrap();
        let mut a = LogisticRegression::<T>::new().tol(1e-8);
        let mut b = LogisticRegression::<T>::new().tol(1e-8);
        a.fit(&xc, &yc).unwrap();
        b.fit(&xg, &yg).unwrap();
        assert_eq!(
            b.classes().unwrap().to_vec().unwrap(),
            a.classes().unwrap().to_vec().unwrap()
        );
        close(
            &host(b.coef().unwrap()),
            &host(a.coef().unwrap()),
            tol,
            "logistic coef",
        );
        close(
            &host(b.intercept().unwrap()),
            &host(a.intercept().unwrap()),
            tol,
            "logistic b",
        );
        close(
            &host(&b.predict_proba(&xg).unwrap()),
            &host(&a.predict_proba(&xc).unwrap()),
            tol,
            "predict_proba",
        );
        let (pa, pb) = (
            a.predict(&xc).unwrap().to_vec().unwrap(),
            b.predict(&xg).unwrap().to_vec().unwrap(),
        );
        // labels may differ only where two classes' scores tie within rounding
        let differ = pa.iter().zip(&pb).filter(|(x, y)| x != y).count();
        assert!(differ <= n / 10_000, "{differ} predictions differ");
        let (sa, sb) = (a.score(&xc, &yc).unwrap(), b.score(&xg, &yg).unwrap());
        assert!((sa - sb).abs() <= differ as f64 / n as f64 + 1e-12);
        assert!(sb > 0.5, "accuracy {sb}");
    }
}

#[test]
fn logistic_regression_on_the_gpu_equals_the_cpu() {
    let Some((gpu, _turn)) = gpu() else { return };
    logistic_match::<f64>(&gpu, 1e-7);
    logistic_match::<f32>(&gpu, 2e-3);
}

fn pca_match<T: LinalgFloat>(gpu: &Device, tol: f64) {
    // tall (eigh of the Gram matrix) and wide (SVD of the data)
    for (n, d, k) in [(50_000, 10, 4), (8, 20, 5)] {
        let mut xv = values(n as u64, n * d);
        for (i, v) in xv.iter_mut().enumerate() {
            *v *= 1.0 + (i % d) as f64; // distinct variances
        }
        let xc = on::<T>(&xv, &[n, d], &Device::Cpu);
        let xg = on::<T>(&xv, &[n, d], gpu);
        let mut a = PCA::<T>::new().n_components(k);
        let mut b = PCA::<T>::new().n_components(k);
        let za = a.fit_transform(&xc).unwrap();
        let zb = b.fit_transform(&xg).unwrap();
        close(
            &host(b.components().unwrap()),
            &host(a.components().unwrap()),
            tol,
            "components",
        );
        close(
            &host(b.explained_variance().unwrap()),
            &host(a.explained_variance().unwrap()),
            tol,
            "variance",
        );
        close(
            &host(b.explained_variance_ratio().unwrap()),
            &host(a.explained_variance_ratio().unwrap()),
            tol,
            "ratio",
        );
        close(
            &host(b.singular_values().unwrap()),
            &host(a.singular_values().unwrap()),
            tol,
            "singular values",
        );
        close(
            &host(b.mean().unwrap()),
            &host(a.mean().unwrap()),
            tol,
            "mean",
        );
        close(&host(&zb), &host(&za), tol, "transform");
        close(
            &host(&b.inverse_transform(&zb).unwrap()),
            &host(&a.inverse_transform(&za).unwrap()),
            tol,
            "inverse_transform",
        );
    }
}

#[test]
fn pca_on_the_gpu_equals_the_cpu() {
    let Some((gpu, _turn)) = gpu() else { return };
    pca_match::<f64>(&gpu, 1e-8);
    pca_match::<f32>(&gpu, 2e-3);
}

#[test]
fn bad_input_on_the_gpu_is_an_error() {
    let Some((gpu, _turn)) = gpu() else { return };
    let x = on::<f64>(&[1.0, 2.0, f64::NAN, 4.0, 5.0, 6.0], &[3, 2], &gpu);
    let y = on::<f64>(&[1.0, 2.0, 3.0], &[3], &gpu);
    let e = Ridge::<f64>::new().fit(&x, &y).unwrap_err();
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
    let labels = Array::from_vec_on(vec![2i64, 2, 2], 3, &gpu).unwrap();
    let ok = on::<f64>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2], &gpu);
    let e = LogisticRegression::<f64>::new()
        .fit(&ok, &labels)
        .unwrap_err();
    assert!(e.to_string().contains("at least two classes"), "{e}");
    let e = PCA::<f64>::new().n_components(5).fit(&ok).unwrap_err();
    assert!(
        matches!(
            e,
            MlError::Parameter {
                name: "n_components",
                ..
            }
        ),
        "{e}"
    );
}
