//! The linear models on the CPU backend against references written here in `f64`: normal
//! equations by Gaussian elimination for the regressions; for the logistic regression the
//! gradient of scikit-learn's objective at the fitted optimum (≈ 0), and a plain Newton method
//! with the Hessian summed sample by sample on the host.

use gpukit::{Array, Device};

use super::{LinearRegression, LogisticRegression, Ridge};
use crate::error::MlError;
use crate::gram::LinalgFloat;
use crate::test_support::{cpu_array, host, max_diff, rng, solve, uniform};

/// Random regression data: `x` `(n, d)` with column scales and offsets, `y = x·w + 3 + noise`.
fn regression_data(seed: u64, n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let mut x = uniform(&mut r, n * d);
    for (i, v) in x.iter_mut().enumerate() {
        let j = i % d;
        *v = *v * (1.0 + j as f64) + 2.0 * j as f64;
    }
    let w: Vec<f64> = (0..d).map(|j| j as f64 - 1.5).collect();
    let noise = uniform(&mut r, n);
    let y = (0..n)
        .map(|i| (0..d).map(|j| x[i * d + j] * w[j]).sum::<f64>() + 3.0 + 0.1 * noise[i])
        .collect();
    (x, y)
}

/// The reference ridge solution (alpha 0: least squares) with an optional intercept.
fn reference_ridge(
    x: &[f64],
    y: &[f64],
    n: usize,
    d: usize,
    alpha: f64,
    icpt: bool,
) -> (Vec<f64>, f64) {
    let xm: Vec<f64> = (0..d)
        .map(|j| {
            if icpt {
                (0..n).map(|i| x[i * d + j]).sum::<f64>() / n as f64
            } else {
                0.0
            }
        })
        .collect();
    let ym = if icpt {
        y.iter().sum::<f64>() / n as f64
    } else {
        0.0
    };
    let mut g = vec![0.0; d * d];
    let mut b = vec![0.0; d];
    for i in 0..n {
        for j in 0..d {
            let xj = x[i * d + j] - xm[j];
            b[j] += xj * (y[i] - ym);
            for l in 0..d {
                g[j * d + l] += xj * (x[i * d + l] - xm[l]);
            }
        }
    }
    for j in 0..d {
        g[j * d + j] += alpha;
    }
    let w = solve(&g, &b, d);
    let b0 = ym - (0..d).map(|j| xm[j] * w[j]).sum::<f64>();
    (w, b0)
}

fn check_regression<T: LinalgFloat>(tol: f64) {
    let (n, d) = (300, 6);
    let (xv, yv) = regression_data(7, n, d);
    let x = cpu_array::<T>(&xv, &[n, d]);
    let y = cpu_array::<T>(&yv, &[n]);
    for icpt in [true, false] {
        let mut ols = LinearRegression::<T>::new().fit_intercept(icpt);
        ols.fit(&x, &y).unwrap();
        let (w, b) = reference_ridge(&xv, &yv, n, d, 0.0, icpt);
        assert!(
            max_diff(&host(ols.coef().unwrap()), &w) < tol,
            "ols coef, intercept {icpt}"
        );
        assert!((ols.intercept().unwrap().to_f64() - b).abs() < tol * 10.0);
        for alpha in [0.5, 50.0] {
            let mut ridge = Ridge::<T>::new().alpha(alpha).fit_intercept(icpt);
            ridge.fit(&x, &y).unwrap();
            let (w, b) = reference_ridge(&xv, &yv, n, d, alpha, icpt);
            assert!(
                max_diff(&host(ridge.coef().unwrap()), &w) < tol,
                "ridge {alpha} {icpt}"
            );
            assert!((ridge.intercept().unwrap().to_f64() - b).abs() < tol * 10.0);
            // predictions and R² against the host formulas
            let pred = host(&ridge.predict(&x).unwrap());
            let expect: Vec<f64> = (0..n)
                .map(|i| (0..d).map(|j| xv[i * d + j] * w[j]).sum::<f64>() + b)
                .collect();
            assert!(max_diff(&pred, &expect) < tol * 100.0);
            let ym = yv.iter().sum::<f64>() / n as f64;
            let ss_res: f64 = yv.iter().zip(&expect).map(|(a, p)| (a - p).powi(2)).sum();
            let ss_tot: f64 = yv.iter().map(|a| (a - ym).powi(2)).sum();
            let r2 = ridge.score(&x, &y).unwrap();
            assert!((r2 - (1.0 - ss_res / ss_tot)).abs() < tol * 10.0, "{r2}");
        }
    }
}

#[test]
fn regressions_match_the_normal_equations_f64() {
    check_regression::<f64>(1e-9);
}

#[test]
fn regressions_match_the_normal_equations_f32() {
    check_regression::<f32>(2e-3);
}

#[test]
fn least_squares_on_collinear_columns_is_the_minimum_norm_solution() {
    // Column 2 = column 0 + column 1: XᵀX is singular. The minimum-norm solution is
    // orthogonal to the null direction (1, 1, -1) and fits as well as the two-column fit.
    let n = 50;
    let mut r = rng(3);
    let a = uniform(&mut r, n * 2);
    let x: Vec<f64> = (0..n)
        .flat_map(|i| [a[2 * i], a[2 * i + 1], a[2 * i] + a[2 * i + 1]])
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 1.0 + 2.0 * a[2 * i] - a[2 * i + 1])
        .collect();
    let mut m = LinearRegression::<f64>::new();
    m.fit(&cpu_array::<f64>(&x, &[n, 3]), &cpu_array::<f64>(&y, &[n]))
        .unwrap();
    let w = host(m.coef().unwrap());
    assert!((w[0] + w[1] - w[2]).abs() < 1e-6, "{w:?}");
    // w0 + w2 = 2, w1 + w2 = -1 with w2 = w0 + w1 ... the minimum norm: w = (5/3, -4/3, 1/3)
    assert!(
        max_diff(&w, &[5.0 / 3.0, -4.0 / 3.0, 1.0 / 3.0]) < 1e-6,
        "{w:?}"
    );
    assert!((m.intercept().unwrap() - 1.0).abs() < 1e-6);
    assert!(
        (m.score(&cpu_array::<f64>(&x, &[n, 3]), &cpu_array::<f64>(&y, &[n]))
            .unwrap()
            - 1.0)
            .abs()
            < 1e-9
    );
}

#[test]
fn regressions_take_ndarray_inputs() {
    let x = ndarray::array![[0.0f64], [1.0], [2.0], [3.0]];
    let y = ndarray::array![1.0f64, 3.0, 5.0, 7.0];
    let mut m = LinearRegression::new();
    m.fit(&x, &y).unwrap();
    assert!((m.coef().unwrap().to_vec().unwrap()[0] - 2.0).abs() < 1e-12);
    let p = m.predict(&ndarray::array![[10.0f64]]).unwrap();
    assert!((p.to_vec().unwrap()[0] - 21.0).abs() < 1e-10);
}

#[test]
fn regressions_reject_bad_input() {
    let cpu = Device::Cpu;
    let x = Array::from_vec_on(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2], &cpu).unwrap();
    let y = Array::from_vec_on(vec![1.0f64, 2.0, 3.0], 3, &cpu).unwrap();
    let m = Ridge::<f64>::new();
    assert!(matches!(
        m.predict(&x),
        Err(MlError::NotFitted { model: "Ridge" })
    ));
    assert!(matches!(m.coef(), Err(MlError::NotFitted { .. })));
    let mut m = Ridge::<f64>::new().alpha(-1.0);
    assert!(matches!(
        m.fit(&x, &y),
        Err(MlError::Parameter { name: "alpha", .. })
    ));
    let mut m = LinearRegression::<f64>::new();
    let short = Array::from_vec_on(vec![1.0f64, 2.0], 2, &cpu).unwrap();
    let e = m.fit(&x, &short).unwrap_err().to_string();
    assert!(e.contains("3 rows") && e.contains("2"), "{e}");
    let nan = Array::from_vec_on(vec![1.0f64, 2.0, f64::NAN, 4.0, 5.0, 6.0], [3, 2], &cpu).unwrap();
    assert!(matches!(
        m.fit(&nan, &y),
        Err(MlError::NonFinite {
            row: 1,
            column: 0,
            ..
        })
    ));
    let ynan = Array::from_vec_on(vec![1.0f64, f64::INFINITY, 3.0], 3, &cpu).unwrap();
    assert!(matches!(
        m.fit(&x, &ynan),
        Err(MlError::NonFinite { row: 1, .. })
    ));
    let empty = Array::<f64>::zeros_on([0, 2], &cpu).unwrap();
    let y0 = Array::<f64>::zeros_on([0], &cpu).unwrap();
    assert!(matches!(m.fit(&empty, &y0), Err(MlError::Shape { .. })));
    m.fit(&x, &y).unwrap();
    let wide = Array::<f64>::zeros_on([2, 3], &cpu).unwrap();
    let e = m.predict(&wide).unwrap_err().to_string();
    assert!(e.contains("fitted on 2 features, got 3"), "{e}");
    assert!(matches!(m.predict(&nan), Err(MlError::NonFinite { .. })));
    // a failed fit keeps the old model
    assert!(m.fit(&nan, &y).is_err());
    assert!(m.coef().is_ok());
    assert_eq!(m.predict(&empty).unwrap().shape(), &[0]);
}

// ---------------------------------------------------------------------------------------------
// Logistic regression

/// Random classification data: `k` classes around shifted centers, `d` features.
fn classification_data(seed: u64, n: usize, d: usize, labels: &[i64]) -> (Vec<f64>, Vec<i64>) {
    let mut r = rng(seed);
    let k = labels.len();
    let centers = uniform(&mut r, k * d);
    let noise = uniform(&mut r, n * d);
    let mut x = vec![0.0; n * d];
    let mut y = vec![0; n];
    for i in 0..n {
        let c = i % k;
        y[i] = labels[c];
        for j in 0..d {
            x[i * d + j] = 1.5 * centers[c * d + j] + noise[i * d + j];
        }
    }
    (x, y)
}

/// Scikit-learn's objective divided by `C n` (see `newton.rs`), for parameters `w` `(p, m)`
/// (intercept row last), with its gradient, computed per sample on the host.
fn objective(
    x: &[f64],
    t: &[Vec<f64>],
    n: usize,
    d: usize,
    m: usize,
    c: f64,
    w: &[f64],
) -> (f64, Vec<f64>) {
    let p = d + 1;
    let mut f = 0.0;
    let mut g = vec![0.0; p * m];
    for i in 0..n {
        let xi = |j: usize| if j < d { x[i * d + j] } else { 1.0 };
        let z: Vec<f64> = (0..m)
            .map(|k| (0..p).map(|j| xi(j) * w[j * m + k]).sum())
            .collect();
        let (loss, prob): (f64, Vec<f64>) = if m == 1 {
            let s = 1.0 / (1.0 + (-z[0]).exp());
            ((1.0 + z[0].exp()).ln() - t[i][0] * z[0], vec![s])
        } else {
            let mx = z.iter().cloned().fold(f64::MIN, f64::max);
            let se: f64 = z.iter().map(|v| (v - mx).exp()).sum();
            let lse = mx + se.ln();
            let tz: f64 = (0..m).map(|k| t[i][k] * z[k]).sum();
            (lse - tz, z.iter().map(|v| (v - mx).exp() / se).collect())
        };
        f += loss / n as f64;
        for j in 0..p {
            for k in 0..m {
                g[j * m + k] += xi(j) * (prob[k] - t[i][k]) / n as f64;
            }
        }
    }
    let inv = 1.0 / (c * n as f64);
    for i in 0..d * m {
        f += 0.5 * inv * w[i] * w[i];
        g[i] += inv * w[i];
    }
    (f, g)
}

/// A plain Newton method on the host: the Hessian summed sample by sample
/// (`xᵢxᵢᵀ ⊗ (diag(pᵢ) - pᵢpᵢᵀ)`), Gaussian elimination, halving steps. For the softmax with
/// intercepts it adds `½(Σ_k b_k)²`, zero at scikit-learn's optimum, which singles it out.
fn reference_newton(x: &[f64], t: &[Vec<f64>], n: usize, d: usize, m: usize, c: f64) -> Vec<f64> {
    let p = d + 1;
    let pm = p * m;
    let sum_term = m > 1;
    let full = |w: &[f64]| {
        let (mut f, mut g) = objective(x, t, n, d, m, c, w);
        if sum_term {
            let sb: f64 = w[d * m..].iter().sum();
            f += 0.5 * sb * sb;
            g[d * m..].iter_mut().for_each(|v| *v += sb);
        }
        (f, g)
    };
    let mut w = vec![0.0; pm];
    for _ in 0..100 {
        let (f, g) = full(&w);
        if g.iter().fold(0.0f64, |a, v| a.max(v.abs())) < 1e-13 {
            break;
        }
        let mut h = vec![0.0; pm * pm];
        for i in 0..n {
            let xi = |j: usize| if j < d { x[i * d + j] } else { 1.0 };
            let z: Vec<f64> = (0..m)
                .map(|k| (0..p).map(|j| xi(j) * w[j * m + k]).sum())
                .collect();
            let (pr, dp): (Vec<f64>, Vec<Vec<f64>>) = if m == 1 {
                let s = 1.0 / (1.0 + (-z[0]).exp());
                (vec![s], vec![vec![s * (1.0 - s)]])
            } else {
                let mx = z.iter().cloned().fold(f64::MIN, f64::max);
                let se: f64 = z.iter().map(|v| (v - mx).exp()).sum();
                let pr: Vec<f64> = z.iter().map(|v| (v - mx).exp() / se).collect();
                let dp = (0..m)
                    .map(|k| {
                        (0..m)
                            .map(|q| if k == q { pr[k] } else { 0.0 } - pr[k] * pr[q])
                            .collect()
                    })
                    .collect();
                (pr, dp)
            };
            let _ = pr;
            for j in 0..p {
                for l in 0..p {
                    let xx = xi(j) * xi(l) / n as f64;
                    for k in 0..m {
                        for q in 0..m {
                            h[(j * m + k) * pm + l * m + q] += xx * dp[k][q];
                        }
                    }
                }
            }
        }
        let inv = 1.0 / (c * n as f64);
        for i in 0..d * m {
            h[i * pm + i] += inv;
        }
        if sum_term {
            for k in 0..m {
                for q in 0..m {
                    h[(d * m + k) * pm + d * m + q] += 1.0;
                }
            }
        }
        let neg: Vec<f64> = g.iter().map(|v| -v).collect();
        let delta = solve(&h, &neg, pm);
        let slope: f64 = g.iter().zip(&delta).map(|(a, b)| a * b).sum();
        let mut s = 1.0;
        loop {
            let trial: Vec<f64> = w.iter().zip(&delta).map(|(a, b)| a + s * b).collect();
            if full(&trial).0 <= f + 1e-4 * s * slope {
                w = trial;
                break;
            }
            s *= 0.5;
            if s < 1e-10 {
                return w;
            }
        }
    }
    w
}

fn check_logistic<T: LinalgFloat>(labels: &[i64], c: f64, tol: f64) {
    let (n, d) = (240, 3);
    let (xv, yv) = classification_data(11 + labels.len() as u64, n, d, labels);
    let x = cpu_array::<T>(&xv, &[n, d]);
    let y = Array::from_vec_on(yv.clone(), n, &Device::Cpu).unwrap();
    let mut model = LogisticRegression::<T>::new().c(c).tol(1e-10);
    model.fit(&x, &y).unwrap();
    let mut sorted = labels.to_vec();
    sorted.sort();
    assert_eq!(model.classes().unwrap().to_vec().unwrap(), sorted);
    let k = labels.len();
    let m = if k == 2 { 1 } else { k };
    let t: Vec<Vec<f64>> = yv
        .iter()
        .map(|&l| {
            if m == 1 {
                vec![(l == sorted[1]) as i32 as f64]
            } else {
                sorted.iter().map(|&s| (s == l) as i32 as f64).collect()
            }
        })
        .collect();
    let coef = host(model.coef().unwrap());
    let icpt = host(model.intercept().unwrap());
    assert_eq!(model.coef().unwrap().shape(), &[m, d]);
    let mut w = vec![0.0; (d + 1) * m];
    for k in 0..m {
        for j in 0..d {
            w[j * m + k] = coef[k * d + j];
        }
        w[d * m + k] = icpt[k];
    }
    // optimality: the gradient of the penalised objective vanishes
    let (_, g) = objective(&xv, &t, n, d, m, c, &w);
    let gmax = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(gmax < tol, "gradient at the fit: {gmax}");
    // the same optimum as a different optimiser
    let reference = reference_newton(&xv, &t, n, d, m, c);
    assert!(max_diff(&w, &reference) < tol * 1e3, "{w:?}\n{reference:?}");
    if m > 1 {
        assert!(
            icpt.iter().sum::<f64>().abs() < tol * 1e3,
            "intercepts sum to zero"
        );
    }
    // probabilities, predictions and the score agree with each other and the host
    let proba = host(&model.predict_proba(&x).unwrap());
    let pred = model.predict(&x).unwrap().to_vec().unwrap();
    let mut hits = 0;
    for i in 0..n {
        let row = &proba[i * k..(i + 1) * k];
        assert!((row.iter().sum::<f64>() - 1.0).abs() < tol * 100.0);
        let best = (0..k).fold(0, |b, c| if row[c] > row[b] { c } else { b });
        assert_eq!(pred[i], sorted[best]);
        hits += (pred[i] == yv[i]) as usize;
    }
    let acc = model.score(&x, &y).unwrap();
    assert!((acc - hits as f64 / n as f64).abs() < 1e-12);
    assert!(acc > 0.5, "{acc}");
    assert!(model.n_iter().unwrap() >= 1);
}

#[test]
fn binary_logistic_regression_reaches_the_penalised_optimum() {
    check_logistic::<f64>(&[4, -2], 1.0, 1e-9);
    check_logistic::<f64>(&[0, 1], 100.0, 1e-9);
    check_logistic::<f32>(&[0, 1], 1.0, 1e-4);
}

#[test]
fn multinomial_logistic_regression_reaches_the_penalised_optimum() {
    check_logistic::<f64>(&[10, 5, -3], 1.0, 1e-9);
    check_logistic::<f64>(&[0, 1, 2, 3], 0.1, 1e-9);
    check_logistic::<f32>(&[0, 1, 2], 1.0, 1e-4);
}

/// `f32` fits of a large, nearly separable set (large coefficients held by a weak penalty: a
/// flat objective) land on the `f64` optimum within `f32`'s reach. The loss is summed in `f64`
/// for this (`newton.rs`); summed in `f32`, the line search stopped where rounding hid the
/// decrease, and the CUDA and CPU backends stopped 2% apart.
#[test]
fn f32_fits_of_a_flat_objective_reach_the_f64_optimum() {
    let (n, d) = (30_000, 8);
    for labels in [&[3i64, -1][..], &[0, 1, 2, 3, 4]] {
        let (xv, yv) = classification_data(labels.len() as u64, n, d, labels);
        let y = Array::from_vec_on(yv, n, &Device::Cpu).unwrap();
        let mut wide = LogisticRegression::<f64>::new().tol(1e-8);
        let mut narrow = LogisticRegression::<f32>::new().tol(1e-8);
        wide.fit(&cpu_array::<f64>(&xv, &[n, d]), &y).unwrap();
        narrow.fit(&cpu_array::<f32>(&xv, &[n, d]), &y).unwrap();
        let (a, b) = (host(wide.coef().unwrap()), host(narrow.coef().unwrap()));
        let scale = a.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let worst = max_diff(&a, &b);
        eprintln!(
            "{} classes: coef scale {scale:.3}, f32 vs f64 {worst:.2e}",
            labels.len()
        );
        assert!(worst <= 1e-3 * scale, "coef: f32 {b:?}\nf64 {a:?}");
        let (a, b) = (
            host(wide.intercept().unwrap()),
            host(narrow.intercept().unwrap()),
        );
        assert!(
            max_diff(&a, &b) <= 1e-3 * scale,
            "intercept: f32 {b:?}\nf64 {a:?}"
        );
    }
}

#[test]
fn logistic_regression_without_intercept() {
    let (n, d) = (120, 2);
    let (xv, yv) = classification_data(5, n, d, &[0, 1, 2]);
    let x = cpu_array::<f64>(&xv, &[n, d]);
    let y = Array::from_vec_on(yv, n, &Device::Cpu).unwrap();
    let mut m = LogisticRegression::<f64>::new()
        .fit_intercept(false)
        .tol(1e-10);
    m.fit(&x, &y).unwrap();
    assert_eq!(host(m.intercept().unwrap()), vec![0.0; 3]);
    // the coefficients of the classes sum to zero (the penalty's choice)
    let c = host(m.coef().unwrap());
    for j in 0..d {
        assert!((c[j] + c[d + j] + c[2 * d + j]).abs() < 1e-8);
    }
}

#[test]
fn logistic_regression_rejects_bad_input() {
    let cpu = Device::Cpu;
    let x = Array::from_vec_on(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2], &cpu).unwrap();
    let y = Array::from_vec_on(vec![1i64, 1, 1], 3, &cpu).unwrap();
    let mut m = LogisticRegression::<f64>::new();
    assert!(matches!(m.predict(&x), Err(MlError::NotFitted { .. })));
    let e = m.fit(&x, &y).unwrap_err().to_string();
    assert!(e.contains("at least two classes"), "{e}");
    let mut bad = LogisticRegression::<f64>::new().c(0.0);
    let y2 = Array::from_vec_on(vec![0i64, 1, 1], 3, &cpu).unwrap();
    assert!(matches!(
        bad.fit(&x, &y2),
        Err(MlError::Parameter { name: "c", .. })
    ));
    let short = Array::from_vec_on(vec![0i64, 1], 2, &cpu).unwrap();
    assert!(matches!(m.fit(&x, &short), Err(MlError::Shape { .. })));
    m.fit(&x, &y2).unwrap();
    let wide = Array::<f64>::zeros_on([1, 3], &cpu).unwrap();
    assert!(matches!(m.predict(&wide), Err(MlError::Shape { .. })));
    let empty = Array::<f64>::zeros_on([0, 2], &cpu).unwrap();
    assert_eq!(m.predict(&empty).unwrap().shape(), &[0]);
    assert_eq!(m.predict_proba(&empty).unwrap().shape(), &[0, 2]);
}
