//! The SVD row: `gpukit::linalg::svd(&a, true)` of an `n x n` float64 matrix (cuSOLVER's
//! `gesvdj` on a GPU; NumPy's default `full_matrices=True`), beside CuPy's `cp.linalg.svd(a)`
//! (benches/cupy_twin.py, `run_svd`): the same input, span and checks.
//!
//! Every timed call's `(u, s, vt)` is checked on the host: the singular values element by
//! element against a reference computed on the host by faer (gpukit's CPU backend, not
//! cuSOLVER; NumPy's LAPACK on the CuPy side) within 1e-8 relative, and three normwise errors
//! that must stay below 1e-11: the reconstruction `‖u · diag(s) · vt − a‖_F / ‖a‖_F` and the
//! orthogonality of `u` and `vt` (`‖uᵀu − I‖_F / √n`, `‖vt·vtᵀ − I‖_F / √n`).

use crate::gpu::{host_vec, poison_pool, summary_of, Row, POOL_POISON};
use crate::timing::{measure, Timer};
use crate::verify::{compare_host, Outcome};
use gpukit::ndarray::{Array2, ArrayView2, Axis};
use gpukit::prelude::*;

/// Largest normwise error (reconstruction, orthogonality) that passes.
const NORMWISE_TOL: f64 = 1e-11;
/// Relative tolerance of each singular value against the host reference.
const VALUES_TOL: f64 = 1e-8;

/// Element `i` (C order) of the row's input: splitmix64 of `i` mapped to [-1, 1), a dense
/// full-rank matrix with distinct singular values (cupy_twin's `svd_input_host`, bit for bit).
pub fn svd_input_at(i: usize) -> f64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// `‖x − I‖_F / √n` for a square `x`.
fn off_identity(x: &Array2<f64>) -> f64 {
    let n = x.nrows();
    let mut sum = 0.0;
    for ((i, j), v) in x.indexed_iter() {
        let d = v - if i == j { 1.0 } else { 0.0 };
        sum += d * d;
    }
    (sum / n.max(1) as f64).sqrt()
}

/// `a · b` by ndarray in blocks of 64 rows on every core (the check runs after every timed
/// call: three 1000³ products each).
fn par_dot(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    use gpukit::ndarray::linalg::general_mat_mul;
    use rayon::prelude::*;
    let (m, n) = (a.nrows(), b.ncols());
    let mut c = Array2::<f64>::zeros((m, n));
    let rows = 64;
    c.axis_chunks_iter_mut(Axis(0), rows)
        .into_par_iter()
        .enumerate()
        .for_each(|(blk, mut out)| {
            let r = out.nrows();
            let av = a.slice(gpukit::ndarray::s![blk * rows..blk * rows + r, ..]);
            general_mat_mul(1.0, &av, b, 0.0, &mut out);
        });
    c
}

/// The three normwise numbers a check reports: reconstruction, orthogonality of u and vt.
pub fn normwise_errors(a: &[f64], u: &[f64], s: &[f64], vt: &[f64], n: usize) -> [f64; 3] {
    let view = |v: &[f64]| {
        ArrayView2::from_shape((n, n), v)
            .expect("n*n elements")
            .to_owned()
    };
    let (am, um, vtm) = (view(a), view(u), view(vt));
    let us = &um * &gpukit::ndarray::Array1::from(s.to_vec()).insert_axis(Axis(0));
    let diff = par_dot(&us, &vtm) - &am;
    let fro = |x: &Array2<f64>| x.iter().map(|v| v * v).sum::<f64>().sqrt();
    [
        fro(&diff) / fro(&am),
        off_identity(&par_dot(&um.t().to_owned(), &um)),
        off_identity(&par_dot(&vtm, &vtm.t().to_owned())),
    ]
}

/// One output's outcome: the singular values element by element, then the three normwise
/// errors (each one element that passes when below [`NORMWISE_TOL`]).
fn check_svd(svd: gpukit::linalg::Svd<f64>, a: &[f64], s_ref: &[f64], n: usize) -> Result<Outcome> {
    let (u, s, vt) = (svd.u.to_vec()?, svd.s.to_vec()?, svd.vt.to_vec()?);
    let mut o = compare_host(&s, s_ref, VALUES_TOL);
    if u.len() != n * n || vt.len() != n * n || s.len() != n {
        return Ok(Outcome::wrong_length(
            u.len() + s.len() + vt.len(),
            2 * n * n + n,
        ));
    }
    for (k, e) in normwise_errors(a, &u, &s, &vt, n).into_iter().enumerate() {
        let ok = e <= NORMWISE_TOL; // NaN fails
        o.expected += 1;
        o.elements += 1;
        if !ok {
            o.mismatches += 1;
            o.first_bad.get_or_insert((n + k) as u64);
        }
        o.max_rel_err = o
            .max_rel_err
            .max(if e.is_nan() { f64::INFINITY } else { e });
    }
    Ok(o)
}

/// The row `name` at size `n` on the default device.
pub fn svd_row(
    t: &mut Timer,
    name: &'static str,
    n: usize,
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let host = host_vec(n * n, svd_input_at);
    let a = Array::from_vec(host.clone(), [n, n])?;
    let cpu = Array::from_vec_on(host.clone(), [n, n], &Device::Cpu)?;
    let s_ref = gpukit::linalg::svdvals(&cpu)?.to_vec()?;
    let check = summary_of(&gpukit::linalg::svd(&a, true)?.s.to_vec()?);
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        "singular values against a host reference (faer), and ‖u·diag(s)·vt − a‖/‖a‖, \
         ‖uᵀu − I‖/√n, ‖vt·vtᵀ − I‖/√n below 1e-11, on the host; result blocks poisoned",
        &mut (),
        |_| {
            // u, vt, the copy cuSOLVER overwrites, and s: blocks the next call may be given.
            poison_pool(n * n, f64::NAN, POOL_POISON + 2)?;
            poison_pool(n, f64::NAN, POOL_POISON)
        },
        |_| gpukit::linalg::svd(&a, true),
        |_, svd| check_svd(svd, &host, &s_ref, n),
    )?;
    Ok(Row::op(
        name,
        m,
        span,
        check,
        ((3 * n * n + n) * 8) as f64,
        "rw",
        "cuSOLVER gesvdj (gpukit) and gesvd (CuPy), full_matrices (NumPy's default); compute-bound, so the \
         rate is not a fraction of any memory ceiling; check = [sum, first, middle, last] of s",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_splitmix64_in_range() {
        // splitmix64's first output for seed 0 is 0xE220A8397B1DCDAF.
        let want = (0xE220_A839_7B1D_CDAFu64 >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
        assert_eq!(svd_input_at(0), want);
        assert!((0..10_000)
            .map(svd_input_at)
            .all(|x| (-1.0..1.0).contains(&x)));
    }

    #[test]
    fn a_wrong_factorisation_fails() {
        let n = 5;
        let a: Vec<f64> = (0..n * n).map(svd_input_at).collect();
        let cpu = Array::from_vec_on(a.clone(), [n, n], &Device::Cpu).unwrap();
        let good = gpukit::linalg::svd(&cpu, true).unwrap();
        let s_ref = good.s.to_vec().unwrap();
        assert!(check_svd(good, &a, &s_ref, n).unwrap().ok());
        let mut bad = gpukit::linalg::svd(&cpu, true).unwrap();
        bad.vt = (&bad.vt * 1.001).unwrap();
        let o = check_svd(bad, &a, &s_ref, n).unwrap();
        assert!(!o.ok() && o.mismatches == 2, "{o:?}"); // reconstruction and vt's orthogonality
    }
}
