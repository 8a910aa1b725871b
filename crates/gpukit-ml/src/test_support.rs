//! Host references for the model tests: random data and small dense linear algebra in `f64`,
//! written plainly (Gaussian elimination, Jacobi's eigenvalue method).

use gpukit::{Array, Device, Element};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A seeded generator.
pub(crate) fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `n` values uniform in [-1, 1).
pub(crate) fn uniform(r: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n).map(|_| r.random_range(-1.0..1.0)).collect()
}

/// A host vector as a CPU array of `T` with `shape`.
pub(crate) fn cpu_array<T: Element>(v: &[f64], shape: &[usize]) -> Array<T> {
    Array::from_vec_on(
        v.iter().map(|&x| T::from_f64(x)).collect(),
        shape,
        &Device::Cpu,
    )
    .unwrap()
}

/// An array's values as `f64`.
pub(crate) fn host<T: Element>(a: &Array<T>) -> Vec<f64> {
    a.to_vec()
        .unwrap()
        .into_iter()
        .map(|v| v.to_f64())
        .collect()
}

/// Solves the `k x k` system `a x = b` (row-major) by Gaussian elimination with partial pivoting.
pub(crate) fn solve(a: &[f64], b: &[f64], k: usize) -> Vec<f64> {
    let mut m: Vec<Vec<f64>> = (0..k)
        .map(|i| {
            let mut row = a[i * k..(i + 1) * k].to_vec();
            row.push(b[i]);
            row
        })
        .collect();
    for c in 0..k {
        let p = (c..k)
            .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
            .unwrap();
        m.swap(c, p);
        let pivot = m[c].clone();
        for row in m.iter_mut().skip(c + 1) {
            let f = row[c] / pivot[c];
            for (v, p) in row.iter_mut().zip(&pivot).skip(c) {
                *v -= f * p;
            }
        }
    }
    let mut x = vec![0.0; k];
    for c in (0..k).rev() {
        let s: f64 = (c + 1..k).map(|j| m[c][j] * x[j]).sum();
        x[c] = (m[c][k] - s) / m[c][c];
    }
    x
}

/// Eigenvalues (descending) and eigenvectors (rows, same order) of a symmetric `k x k` matrix
/// by cyclic Jacobi rotations.
pub(crate) fn symmetric_eigen(a: &[f64], k: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut m = a.to_vec();
    let mut v = vec![0.0; k * k];
    for i in 0..k {
        v[i * k + i] = 1.0;
    }
    for _sweep in 0..100 {
        let off: f64 = (0..k)
            .flat_map(|i| (0..k).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i * k + j].powi(2))
            .sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..k {
            for q in p + 1..k {
                let apq = m[p * k + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (m[q * k + q] - m[p * k + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for r in 0..k {
                    let (mrp, mrq) = (m[r * k + p], m[r * k + q]);
                    m[r * k + p] = c * mrp - s * mrq;
                    m[r * k + q] = s * mrp + c * mrq;
                }
                for r in 0..k {
                    let (mpr, mqr) = (m[p * k + r], m[q * k + r]);
                    m[p * k + r] = c * mpr - s * mqr;
                    m[q * k + r] = s * mpr + c * mqr;
                }
                for r in 0..k {
                    let (vrp, vrq) = (v[r * k + p], v[r * k + q]);
                    v[r * k + p] = c * vrp - s * vrq;
                    v[r * k + q] = s * vrp + c * vrq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&i, &j| m[j * k + j].total_cmp(&m[i * k + i]));
    let vals = order.iter().map(|&i| m[i * k + i]).collect();
    let vecs = order
        .iter()
        .map(|&i| (0..k).map(|r| v[r * k + i]).collect())
        .collect();
    (vals, vecs)
}

/// The largest absolute difference of two equally long vectors.
pub(crate) fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}
