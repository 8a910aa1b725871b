//! The decompositions on the CPU backend: reconstructions and residuals computed with ndarray's
//! products (`u · diag(s) · vt = a`, `a · x = b`, `a · inv(a) = I`, `q · r = a`,
//! `a · v = v · diag(w)`), orthonormality, orderings, shapes (tall, wide, 1 x 1, empty,
//! batched), and errors. Without the `linalg` feature, the error naming it. The GPU against
//! these results: `tests/solver_gpu.rs`.

use super::super::norm::{norm, norm_ord, NormOrd};
use super::*;
use crate::device::Device;
use ndarray::{Array2, ArrayView2, Axis};

/// Deterministic values in [-1, 1) (a hash of the index, not a low-rank pattern).
fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| {
            let mut z = i
                .wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn cpu<T: SolverElement>(shape: &[usize], seed: u64) -> Array<T> {
    let n = shape.iter().product();
    let v = values(n, seed).into_iter().map(T::from_f64).collect();
    Array::from_vec_on(v, shape.to_vec(), &crate::device::Device::Cpu).unwrap()
}

fn host(a: &Array<f64>) -> Vec<f64> {
    a.to_vec().unwrap()
}

/// Matrix `i` of a batch `(.., r, c)` as an ndarray.
fn mat(v: &[f64], i: usize, r: usize, c: usize) -> Array2<f64> {
    ArrayView2::from_shape((r, c), &v[i * r * c..(i + 1) * r * c])
        .unwrap()
        .to_owned()
}

#[cfg_attr(not(feature = "linalg"), allow(dead_code))]
fn assert_close(got: &Array2<f64>, want: &Array2<f64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}: {g} vs {w}\n{got}\n{want}"
        );
    }
}

#[cfg_attr(not(feature = "linalg"), allow(dead_code))]
fn eye(n: usize) -> Array2<f64> {
    Array2::eye(n)
}

#[cfg(feature = "linalg")]
mod with_faer {
    use super::*;

    const SHAPES: &[&[usize]] = &[
        &[1, 1],
        &[3, 3],
        &[5, 3],
        &[3, 5],
        &[7, 1],
        &[1, 7],
        &[2, 4, 3],
        &[3, 2, 5],
        &[2, 2, 3, 3],
        &[40, 25],
    ];

    #[test]
    fn svd_reconstructs_with_orthonormal_vectors() {
        for &shape in SHAPES {
            let a = cpu::<f64>(shape, 1);
            let d = shape.len();
            let (m, n) = (shape[d - 2], shape[d - 1]);
            let k = m.min(n);
            let batch: usize = shape[..d - 2].iter().product();
            for full in [false, true] {
                let r = svd(&a, full).unwrap();
                let (ur, vr) = if full { (m, n) } else { (k, k) };
                assert_eq!(r.u.shape(), with(&shape[..d - 2], &[m, ur]).as_slice());
                assert_eq!(r.s.shape(), with(&shape[..d - 2], &[k]).as_slice());
                assert_eq!(r.vt.shape(), with(&shape[..d - 2], &[vr, n]).as_slice());
                let (u, s, vt, av) = (host(&r.u), host(&r.s), host(&r.vt), host(&a));
                for i in 0..batch {
                    let (um, vm) = (mat(&u, i, m, ur), mat(&vt, i, vr, n));
                    let si = &s[i * k..(i + 1) * k];
                    assert!(si.windows(2).all(|w| w[0] >= w[1]), "descending: {si:?}");
                    assert!(si.iter().all(|&x| x >= 0.0));
                    let uk = um.slice(ndarray::s![.., ..k]).to_owned();
                    let vk = vm.slice(ndarray::s![..k, ..]).to_owned();
                    let us = &uk * &ndarray::Array1::from(si.to_vec()).insert_axis(Axis(0));
                    let what = format!("{shape:?} full={full} #{i}");
                    assert_close(&us.dot(&vk), &mat(&av, i, m, n), 1e-12, &what);
                    assert_close(&um.t().dot(&um), &eye(ur), 1e-12, &what);
                    assert_close(&vm.dot(&vm.t()), &eye(vr), 1e-12, &what);
                }
                let vals = svdvals(&a).unwrap();
                assert_eq!(vals.shape(), r.s.shape());
                for (x, y) in host(&vals).iter().zip(&s) {
                    assert!((x - y).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn svd_f32_and_known_values() {
        let a = Array::from_vec_on(vec![0.0f32, 2.0, 1.0, 0.0], [2, 2], &Device::Cpu).unwrap();
        assert_eq!(svdvals(&a).unwrap().to_vec().unwrap(), vec![2.0, 1.0]);
        let a = cpu::<f32>(&[6, 4], 3);
        let r = svd(&a, false).unwrap();
        let (u, s) = (r.u.to_vec().unwrap(), r.s.to_vec().unwrap());
        let us: Vec<f32> = u.iter().enumerate().map(|(i, x)| x * s[i % 4]).collect();
        let us = Array::from_vec_on(us, [6, 4], &Device::Cpu).unwrap();
        let back = us.matmul(&r.vt).unwrap();
        for (x, y) in back.to_vec().unwrap().iter().zip(a.to_vec().unwrap()) {
            assert!((x - y).abs() < 1e-5, "{x} vs {y}");
        }
    }

    #[test]
    fn empty_svd_has_numpy_shapes() {
        for (shape, full) in [([0usize, 3usize], true), ([3, 0], true), ([0, 3], false)] {
            let a = cpu::<f64>(&shape, 0);
            let r = svd(&a, full).unwrap();
            assert_eq!(r.s.shape(), &[0]);
            if full {
                assert_eq!(r.u.shape(), &[shape[0], shape[0]]);
                assert_eq!(r.vt.shape(), &[shape[1], shape[1]]);
                let n = shape[0].max(shape[1]);
                let id = if shape[0] == n { &r.u } else { &r.vt };
                assert_close(&mat(&host(id), 0, n, n), &eye(n), 0.0, "identity");
            } else {
                assert_eq!((r.u.shape(), r.vt.shape()), (&[0, 0][..], &[0, 3][..]));
            }
        }
        let r = svd(&cpu::<f64>(&[0, 2, 3], 0), false).unwrap();
        assert_eq!((r.u.shape(), r.s.shape()), (&[0, 2, 2][..], &[0, 2][..]));
    }

    /// Well-conditioned square matrices: random plus n on the diagonal.
    fn conditioned(shape: &[usize], seed: u64) -> Array<f64> {
        let d = shape.len();
        let n = shape[d - 1];
        let mut v = host(&cpu::<f64>(shape, seed));
        for b in 0..v.len() / (n * n).max(1) {
            for j in 0..n {
                v[b * n * n + j * (n + 1)] += n as f64;
            }
        }
        Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap()
    }

    #[test]
    fn solve_gives_small_residuals() {
        for (ash, bsh) in [
            (&[1usize, 1][..], &[1usize][..]),
            (&[4, 4], &[4]),
            (&[4, 4], &[4, 3]),
            (&[3, 5, 5], &[3, 5, 2]),
            (&[3, 5, 5], &[5]),
            (&[3, 5, 5], &[5, 2]),
            (&[30, 30], &[30, 7]),
        ] {
            let (a, b) = (conditioned(ash, 2), cpu::<f64>(bsh, 5));
            let x = solve(&a, &b).unwrap();
            let n = ash[ash.len() - 1];
            let k = if bsh.len() == 1 {
                1
            } else {
                bsh[bsh.len() - 1]
            };
            let batch: usize = ash[..ash.len() - 2].iter().product();
            let want_shape = if bsh.len() == 1 {
                with(&ash[..ash.len() - 2], &[n])
            } else {
                with(&ash[..ash.len() - 2], &[n, k])
            };
            assert_eq!(x.shape(), want_shape.as_slice(), "{ash:?} {bsh:?}");
            let (av, bv, xv) = (host(&a), host(&b), host(&x));
            let shared = bsh.len() == 1 || (bsh.len() == 2 && ash.len() > 2);
            for i in 0..batch {
                let bi = mat(&bv, if shared { 0 } else { i }, n, k);
                let ax = mat(&av, i, n, n).dot(&mat(&xv, i, n, k));
                assert_close(&ax, &bi, 1e-12, &format!("{ash:?} {bsh:?} #{i}"));
            }
        }
        let x = solve(
            &Array::from_vec_on(vec![3.0f32, 1.0, 1.0, 2.0], [2, 2], &Device::Cpu).unwrap(),
            &Array::from_vec_on(vec![9.0f32, 8.0], 2, &Device::Cpu).unwrap(),
        )
        .unwrap();
        let x = x.to_vec().unwrap();
        assert!((x[0] - 2.0).abs() < 1e-6 && (x[1] - 3.0).abs() < 1e-6);
    }

    #[test]
    fn inv_and_det() {
        for shape in [&[1usize, 1][..], &[3, 3], &[4, 6, 6], &[25, 25]] {
            let a = conditioned(shape, 7);
            let n = shape[shape.len() - 1];
            let batch: usize = shape[..shape.len() - 2].iter().product();
            let (ai, av) = (host(&inv(&a).unwrap()), host(&a));
            let d = host(&det(&a).unwrap());
            assert_eq!(d.len(), batch);
            let dinv = host(&det(&inv(&a).unwrap()).unwrap());
            for (i, (di, dinv)) in d.iter().zip(&dinv).enumerate() {
                let p = mat(&av, i, n, n).dot(&mat(&ai, i, n, n));
                assert_close(&p, &eye(n), 1e-12, &format!("{shape:?} #{i}"));
                // det(A) = 1 / det(A⁻¹)
                assert!((di * dinv - 1.0).abs() < 1e-10, "{di} {dinv}");
            }
        }
        let c = |v: Vec<f64>, n: usize| Array::from_vec_on(v, [n, n], &Device::Cpu).unwrap();
        let d = |a: &Array<f64>| det(a).unwrap().item().unwrap();
        assert!((d(&c(vec![1.0, 2.0, 3.0, 4.0], 2)) + 2.0).abs() < 1e-12);
        assert_eq!(d(&c(vec![0.0, 1.0, 1.0, 0.0], 2)), -1.0);
        assert_eq!(
            d(&c(vec![0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 3)),
            1.0
        );
        assert_eq!(d(&c(vec![1.0, 2.0, 2.0, 4.0], 2)), 0.0);
        assert_eq!(det(&cpu::<f64>(&[0, 0], 0)).unwrap().item().unwrap(), 1.0);
        assert_eq!(
            det(&cpu::<f64>(&[2, 0, 0], 0)).unwrap().to_vec().unwrap(),
            vec![1.0; 2]
        );
        assert_eq!(det(&c(vec![1.0, 2.0, 3.0, 4.0], 2)).unwrap().ndim(), 0);
    }

    #[test]
    fn singular_matrices_are_errors_naming_the_shape() {
        let s = Array::from_vec_on(vec![1.0f64, 2.0, 2.0, 4.0], [2, 2], &Device::Cpu).unwrap();
        let b = Array::from_vec_on(vec![1.0f64, 1.0], 2, &Device::Cpu).unwrap();
        for e in [solve(&s, &b).unwrap_err(), inv(&s).unwrap_err()] {
            let msg = e.to_string();
            assert!(matches!(e, Error::LinAlg(_)), "{e:?}");
            assert!(
                msg.contains("singular matrix") && msg.contains("(2, 2)"),
                "{msg}"
            );
        }
        // The second matrix of a batch.
        let mut v = host(&conditioned(&[3, 2, 2], 1));
        v[4..8].copy_from_slice(&[0.0, 0.0, 0.0, 0.0]);
        let batch = Array::from_vec_on(v, [3, 2, 2], &Device::Cpu).unwrap();
        let msg = inv(&batch).unwrap_err().to_string();
        assert!(
            msg.contains("matrix 1 of the batch") && msg.contains("(3, 2, 2)"),
            "{msg}"
        );
    }

    #[test]
    fn qr_reconstructs_with_orthonormal_q_and_triangular_r() {
        for &shape in SHAPES {
            let a = cpu::<f64>(shape, 4);
            let d = shape.len();
            let (m, n) = (shape[d - 2], shape[d - 1]);
            let k = m.min(n);
            let batch: usize = shape[..d - 2].iter().product();
            let r = qr(&a).unwrap();
            assert_eq!(r.q.shape(), with(&shape[..d - 2], &[m, k]).as_slice());
            assert_eq!(r.r.shape(), with(&shape[..d - 2], &[k, n]).as_slice());
            let (q, rr, av) = (host(&r.q), host(&r.r), host(&a));
            for i in 0..batch {
                let (qm, rm) = (mat(&q, i, m, k), mat(&rr, i, k, n));
                let what = format!("{shape:?} #{i}");
                assert_close(&qm.dot(&rm), &mat(&av, i, m, n), 1e-12, &what);
                assert_close(&qm.t().dot(&qm), &eye(k), 1e-12, &what);
                for row in 0..k {
                    for col in 0..row.min(n) {
                        assert_eq!(rm[[row, col]], 0.0, "{what}: r[{row}, {col}]");
                    }
                }
            }
        }
        let r = qr(&cpu::<f64>(&[0, 4], 0)).unwrap();
        assert_eq!((r.q.shape(), r.r.shape()), (&[0, 0][..], &[0, 4][..]));
    }

    #[test]
    fn eigh_diagonalises_and_reads_the_lower_triangle() {
        for shape in [&[1usize, 1][..], &[2, 2], &[6, 6], &[3, 5, 5], &[30, 30]] {
            let d = shape.len();
            let n = shape[d - 1];
            let batch: usize = shape[..d - 2].iter().product();
            // Symmetric matrices, then garbage above the diagonal (not read).
            let mut v = host(&cpu::<f64>(shape, 9));
            let mut sym = v.clone();
            for b in 0..batch {
                for i in 0..n {
                    for j in 0..i {
                        sym[b * n * n + j * n + i] = v[b * n * n + i * n + j];
                        v[b * n * n + j * n + i] = 100.0 + (i * j) as f64;
                    }
                }
            }
            let a = Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap();
            let e = eigh(&a).unwrap();
            assert_eq!(
                e.eigenvalues.shape(),
                with(&shape[..d - 2], &[n]).as_slice()
            );
            assert_eq!(e.eigenvectors.shape(), shape);
            let (w, vecs) = (host(&e.eigenvalues), host(&e.eigenvectors));
            for b in 0..batch {
                let wi = &w[b * n..(b + 1) * n];
                assert!(wi.windows(2).all(|p| p[0] <= p[1]), "ascending: {wi:?}");
                let (am, vm) = (mat(&sym, b, n, n), mat(&vecs, b, n, n));
                let vw = &vm * &ndarray::Array1::from(wi.to_vec()).insert_axis(Axis(0));
                let what = format!("{shape:?} #{b}");
                assert_close(&am.dot(&vm), &vw, 1e-12, &what);
                assert_close(&vm.t().dot(&vm), &eye(n), 1e-12, &what);
            }
        }
    }

    #[test]
    fn spectral_and_nuclear_norms() {
        let a = Array::from_vec_on(vec![0.0f64, 2.0, 1.0, 0.0], [2, 2], &Device::Cpu).unwrap();
        assert!((norm_ord(&a, NormOrd::Two).unwrap() - 2.0).abs() < 1e-12);
        assert!((norm_ord(&a, NormOrd::Nuc).unwrap() - 3.0).abs() < 1e-12);
    }
}

#[test]
fn shape_errors_name_the_shapes() {
    let v = cpu::<f64>(&[3], 0);
    let e = svd(&v, false).unwrap_err().to_string();
    assert!(
        e.contains("svd") && e.contains("(3,)") && e.contains("at least 2"),
        "{e}"
    );
    let r = cpu::<f64>(&[2, 3], 0);
    for e in [
        inv(&r).unwrap_err(),
        det(&r).unwrap_err(),
        eigh(&r).unwrap_err(),
        solve(&r, &v).unwrap_err(),
    ] {
        assert!(matches!(e, Error::Shape(_)), "{e:?}");
        assert!(e.to_string().contains("(2, 3)"), "{e}");
    }
    let a = cpu::<f64>(&[2, 3, 3], 0);
    for b in [
        cpu::<f64>(&[4], 0),
        cpu::<f64>(&[3, 3, 1], 0),
        cpu::<f64>(&[2, 4, 1], 0),
    ] {
        let e = solve(&a, &b).unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("(2, 3, 3)") && msg.contains(&fmt_shape(b.shape())),
            "{msg}"
        );
    }
}

#[test]
fn without_the_feature_the_cpu_error_names_it() {
    let a = cpu::<f64>(&[2, 2], 0);
    let results = [
        svd(&a, false).err(),
        inv(&a).err(),
        det(&a).err(),
        qr(&a).err(),
    ];
    for e in results {
        match (cpu_available(), e) {
            (true, None) => {}
            (false, Some(e)) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("`linalg` feature") && msg.contains("--features linalg"),
                    "{msg}"
                );
            }
            (available, e) => panic!("feature {available}, result {e:?}"),
        }
    }
}

#[test]
fn norms_match_ndarray() {
    let x = cpu::<f64>(&[17], 3);
    let xv = host(&x);
    let sq: f64 = xv.iter().map(|v| v * v).sum();
    assert!((norm(&x).unwrap() - sq.sqrt()).abs() < 1e-12);
    assert!((norm_ord(&x, NormOrd::Two).unwrap() - sq.sqrt()).abs() < 1e-12);
    let l1: f64 = xv.iter().map(|v| v.abs()).sum();
    assert!((norm_ord(&x, NormOrd::One).unwrap() - l1).abs() < 1e-12);
    let mx = xv.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mn = xv.iter().fold(f64::INFINITY, |m, v| m.min(v.abs()));
    assert_eq!(norm_ord(&x, NormOrd::Inf).unwrap(), mx);
    assert_eq!(norm_ord(&x, NormOrd::NegInf).unwrap(), mn);

    let a = cpu::<f64>(&[4, 6], 8);
    let am = mat(&host(&a), 0, 4, 6);
    let abs = am.mapv(f64::abs);
    let cols = abs.sum_axis(Axis(0));
    let rows = abs.sum_axis(Axis(1));
    let close = |x: f64, y: f64| assert!((x - y).abs() < 1e-12, "{x} vs {y}");
    close(
        norm_ord(&a, NormOrd::One).unwrap(),
        cols.fold(0.0, |m, &v| m.max(v)),
    );
    close(
        norm_ord(&a, NormOrd::Inf).unwrap(),
        rows.fold(0.0, |m, &v| m.max(v)),
    );
    close(
        norm_ord(&a, NormOrd::NegInf).unwrap(),
        rows.fold(f64::INFINITY, |m, &v| m.min(v)),
    );
    close(
        norm_ord(&a, NormOrd::Fro).unwrap(),
        am.mapv(|v| v * v).sum().sqrt(),
    );
    let t = cpu::<f64>(&[2, 3, 4], 1);
    close(
        norm(&t).unwrap(),
        host(&t).iter().map(|v| v * v).sum::<f64>().sqrt(),
    );
    assert_eq!(norm(&cpu::<f64>(&[0], 1)).unwrap(), 0.0);
    assert!(norm_ord(&x, NormOrd::Fro).is_err());
    assert!(norm_ord(&t, NormOrd::One).is_err());
    assert!(norm_ord(&cpu::<f64>(&[0], 1), NormOrd::Inf).is_err());
    assert_eq!(
        norm(&Array::from_vec_on(vec![3.0f32, 4.0], 2, &Device::Cpu).unwrap()).unwrap(),
        5.0
    );
}
