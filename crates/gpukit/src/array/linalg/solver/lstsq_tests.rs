//! `lstsq` and `slogdet` on the CPU backend (feature `linalg`): the normal equations and the
//! minimum-norm property checked with ndarray products, known values, the shapes NumPy gives,
//! and errors. The GPU against these: `tests/views_gpu.rs`.

use super::*;
use crate::device::Device;
use ndarray::{Array2, ArrayView2};

fn m(v: Vec<f64>, r: usize, c: usize) -> Array<f64> {
    Array::from_vec_on(v, [r, c], &Device::Cpu).unwrap()
}

#[cfg_attr(not(feature = "linalg"), allow(dead_code))]
fn nd(a: &Array<f64>) -> Array2<f64> {
    let (r, c) = (a.shape()[0], a.shape()[1]);
    ArrayView2::from_shape((r, c), &a.to_vec().unwrap())
        .unwrap()
        .to_owned()
}

#[cfg_attr(not(feature = "linalg"), allow(dead_code))]
fn vals(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| (((i + 3) * 2654435761 + seed * 97) % 1000) as f64 / 500.0 - 1.0)
        .collect()
}

#[cfg(feature = "linalg")]
mod with_faer {
    use super::*;

    #[test]
    fn lstsq_solves_the_normal_equations_of_tall_systems() {
        for (r, c, k) in [(6usize, 3usize, 2usize), (10, 1, 1), (5, 5, 3), (40, 7, 4)] {
            let a = m(vals(r * c, 1), r, c);
            let b = m(vals(r * k, 2), r, k);
            let fit = lstsq(&a, &b, None).unwrap();
            assert_eq!(fit.x.shape(), &[c, k]);
            assert_eq!(fit.rank, c);
            assert_eq!(fit.s.shape(), &[c]);
            let (an, bn, xn) = (nd(&a), nd(&b), nd(&fit.x));
            let lhs = an.t().dot(&an).dot(&xn);
            let rhs = an.t().dot(&bn);
            for (p, q) in lhs.iter().zip(&rhs) {
                assert!((p - q).abs() < 1e-9, "{r}x{c}: {p} vs {q}");
            }
            let res = &bn - &an.dot(&xn);
            let want: Vec<f64> = (0..k)
                .map(|j| res.column(j).mapv(|x| x * x).sum())
                .collect();
            if r > c {
                let got = fit.residuals.to_vec().unwrap();
                assert!(got.iter().zip(&want).all(|(p, q)| (p - q).abs() < 1e-9));
            } else {
                assert_eq!(fit.residuals.shape(), &[0]);
            }
        }
    }

    #[test]
    fn lstsq_gives_the_minimum_norm_solution_when_rank_deficient() {
        // Wide: a x = b exactly, x in the row space (x = aᵀ y).
        let a = m(vals(3 * 5, 4), 3, 5);
        let b = Array::from_vec_on(vals(3, 5), [3], &Device::Cpu).unwrap();
        let fit = lstsq(&a, &b, None).unwrap();
        assert_eq!((fit.x.shape(), fit.rank), (&[5][..], 3));
        assert_eq!(fit.residuals.shape(), &[0]);
        let an = nd(&a);
        let x = ndarray::Array1::from(fit.x.to_vec().unwrap());
        let ax = an.dot(&x);
        assert!(ax
            .iter()
            .zip(b.to_vec().unwrap())
            .all(|(p, q)| (p - q).abs() < 1e-10));
        // Two equal columns: rank 1 and equal coefficients (the shortest x).
        let a = m(vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0], 3, 2);
        let b = Array::from_vec_on(vec![2.0, 4.0, 6.1], [3], &Device::Cpu).unwrap();
        let fit = lstsq(&a, &b, None).unwrap();
        assert_eq!(fit.rank, 1);
        let x = fit.x.to_vec().unwrap();
        assert!((x[0] - x[1]).abs() < 1e-12, "{x:?}");
        assert_eq!(fit.residuals.shape(), &[0]);
        // A vector b with full rank gives residuals of shape (1,), as NumPy.
        let a = m(vec![1.0, 0.0, 1.0, 1.0, 1.0, 2.0], 3, 2);
        let b = Array::from_vec_on(vec![1.0, 2.0, 2.0], [3], &Device::Cpu).unwrap();
        let fit = lstsq(&a, &b, None).unwrap();
        assert_eq!(fit.residuals.shape(), &[1]);
        // rcond above every singular value: rank 0, x = 0.
        let fit = lstsq(&a, &b, Some(10.0)).unwrap();
        assert_eq!(fit.rank, 0);
        assert!(fit.x.to_vec().unwrap().iter().all(|&v| v == 0.0));
    }

    #[test]
    fn slogdet_matches_det_and_survives_overflow() {
        for n in [1usize, 2, 3, 6] {
            let mut v = vals(n * n, n as u64);
            for j in 0..n {
                v[j * (n + 1)] += 2.0;
            }
            let a = m(v, n, n);
            let d = det(&a).unwrap().item().unwrap();
            let r = slogdet(&a).unwrap();
            let back = r.sign.item().unwrap() * r.logabsdet.item().unwrap().exp();
            assert!(
                (back - d).abs() < 1e-10 * d.abs().max(1.0),
                "{n}: {back} vs {d}"
            );
        }
        // 400 x 400 with 10 on the diagonal (and a swap of two rows): det overflows to ±inf,
        // slogdet gives -1 and 400 ln 10.
        let n = 400;
        let mut v = vec![0.0; n * n];
        for j in 0..n {
            v[j * (n + 1)] = 10.0;
        }
        v.swap(0, n); // rows 0 and 1 exchanged: [0, 10, ..] and [10, 0, ..]
        v.swap(1, n + 1);
        let a = m(v, n, n);
        assert!(det(&a).unwrap().item().unwrap().is_infinite());
        let r = slogdet(&a).unwrap();
        assert_eq!(r.sign.item().unwrap(), -1.0);
        assert!((r.logabsdet.item().unwrap() - 400.0 * 10f64.ln()).abs() < 1e-9);
        // Singular: sign 0, -inf; batches keep their shape; 0 x 0 gives 1 and 0.
        let s = slogdet(&m(vec![1.0, 2.0, 2.0, 4.0], 2, 2)).unwrap();
        assert_eq!(s.sign.item().unwrap(), 0.0);
        assert_eq!(s.logabsdet.item().unwrap(), f64::NEG_INFINITY);
        let batch = Array::from_vec_on(vals(2 * 3 * 9, 8), [2, 3, 3, 3], &Device::Cpu).unwrap();
        assert_eq!(slogdet(&batch).unwrap().sign.shape(), &[2, 3]);
        let empty = Array::<f64>::zeros_on([2, 0, 0], &Device::Cpu).unwrap();
        let e = slogdet(&empty).unwrap();
        assert_eq!(
            (e.sign.to_vec().unwrap(), e.logabsdet.to_vec().unwrap()),
            (vec![1.0; 2], vec![0.0; 2])
        );
    }
}

#[test]
fn lstsq_and_slogdet_shape_errors() {
    let a = Array::from_vec_on(vec![1.0f64; 3], [3], &Device::Cpu).unwrap();
    let e = lstsq(&a, &a, None).unwrap_err();
    assert!(e.to_string().contains("(3,)"), "{e}");
    let a = m(vec![1.0; 6], 3, 2);
    let b = Array::from_vec_on(vec![1.0f64; 4], [4], &Device::Cpu).unwrap();
    let e = lstsq(&a, &b, None).unwrap_err();
    assert!(
        e.to_string().contains("(3, 2)") && e.to_string().contains("(4,)"),
        "{e}"
    );
    let e = slogdet(&a).unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
}

#[cfg(not(feature = "linalg"))]
#[test]
fn without_the_feature_the_cpu_errors_name_it() {
    let a = m(vec![1.0, 0.0, 0.0, 1.0], 2, 2);
    let e = lstsq(&a, &a, None).unwrap_err();
    assert!(e.to_string().contains("`linalg` feature"), "{e}");
    let e = slogdet(&a).unwrap_err();
    assert!(e.to_string().contains("`linalg` feature"), "{e}");
}
