//! `gpukit::linalg`'s decompositions on a CUDA device (cuSOLVER) against the CPU backend (faer)
//! on the same inputs: singular values, solutions, inverses, determinants, eigenvalues and
//! sign-normalised R factors agree; reconstructions (`u · diag(s) · vt`, `q · r`, `a · v`)
//! computed on the GPU give back the input; random shapes including 1 x 1, tall, wide,
//! batched and empty; singular matrices are errors naming the shape.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The comparisons with the CPU need
//! gpukit's `linalg` feature (`cargo test -p gpukit --features linalg --test solver_gpu`; a
//! workspace build has it through gpukit-bench); without it they print a `skipped:` line and
//! the GPU-only checks still run.

use gpukit::linalg::{self, NormOrd, SolverElement};
use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device, Element, Error};

/// Deterministic values in [-1, 1) (splitmix64 of the index and the seed).
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

/// The same values on the GPU and on the CPU.
fn pair<T: SolverElement>(shape: &[usize], seed: u64, dev: &Device) -> (Array<T>, Array<T>) {
    let v: Vec<T> = values(shape.iter().product(), seed)
        .into_iter()
        .map(T::from_f64)
        .collect();
    (
        Array::from_vec_on(v.clone(), shape.to_vec(), dev).unwrap(),
        Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap(),
    )
}

/// Square matrices made well conditioned (n added to the diagonal).
fn conditioned(shape: &[usize], seed: u64, dev: &Device) -> (Array<f64>, Array<f64>) {
    let n = shape[shape.len() - 1];
    let mut v = values(shape.iter().product(), seed);
    for b in 0..v.len() / (n * n).max(1) {
        for j in 0..n {
            v[b * n * n + j * (n + 1)] += n as f64;
        }
    }
    (
        Array::from_vec_on(v.clone(), shape.to_vec(), dev).unwrap(),
        Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap(),
    )
}

fn host<T: Element>(a: &Array<T>) -> Vec<f64> {
    a.to_vec().unwrap().iter().map(|x| x.to_f64()).collect()
}

/// Elementwise closeness relative to the largest magnitude of `want` (at least 1).
fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what} [{i}]: GPU {g} vs {w} (tolerance {tol} x {scale})"
        );
    }
}

/// Whether the CPU comparison can run; prints the skip line once per test otherwise.
fn cpu_reference(test: &str) -> bool {
    if linalg::cpu_available() {
        return true;
    }
    println!(
        "skipped: {test}: the CPU comparison needs gpukit's `linalg` feature (cargo test -p \
         gpukit --features linalg --test solver_gpu); GPU-only checks ran"
    );
    false
}

/// Random matrix shapes: 1 x 1, tall, wide, square, batched, with a fixed seed.
fn shapes(count: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut fixed: Vec<Vec<usize>> = vec![
        vec![1, 1],
        vec![1, 5],
        vec![5, 1],
        vec![3, 3],
        vec![9, 4],
        vec![4, 9],
        vec![2, 6, 3],
        vec![3, 3, 7],
        vec![2, 2, 5, 5],
        vec![64, 64],
    ];
    let r = values(3 * count, seed);
    for i in 0..count {
        let d = |x: f64| 1 + ((x + 1.0) * 20.0) as usize; // 1..=40
        let mut s = vec![d(r[3 * i]), d(r[3 * i + 1])];
        if r[3 * i + 2] > 0.3 {
            s.insert(0, 1 + ((r[3 * i + 2] + 1.0) * 2.0) as usize);
        }
        fixed.push(s);
    }
    fixed
}

fn split(shape: &[usize]) -> (usize, usize, usize) {
    let d = shape.len();
    (shape[..d - 2].iter().product(), shape[d - 2], shape[d - 1])
}

/// `u · diag(s) · vt` (first k columns/rows) on the array's device.
fn reconstruct<T: SolverElement>(svd: &linalg::Svd<T>, m: usize, n: usize) -> Vec<f64> {
    let k = m.min(n);
    let bs = &svd.u.shape()[..svd.u.ndim() - 2];
    let batch: usize = bs.iter().product();
    let (u, s, vt) = (host(&svd.u), host(&svd.s), host(&svd.vt));
    let (ur, vr) = (
        svd.u.shape()[svd.u.ndim() - 1],
        svd.vt.shape()[svd.vt.ndim() - 2],
    );
    // Scale U's first k columns by s on the host, then multiply on the device.
    let mut us = Vec::with_capacity(batch * m * k);
    let mut vk = Vec::with_capacity(batch * k * n);
    for b in 0..batch {
        for i in 0..m {
            for j in 0..k {
                us.push(T::from_f64(u[b * m * ur + i * ur + j] * s[b * k + j]));
            }
        }
        for i in 0..k {
            for j in 0..n {
                vk.push(T::from_f64(vt[b * vr * n + i * n + j]));
            }
        }
    }
    let dev = svd.u.device();
    let mut shape_us = bs.to_vec();
    shape_us.extend([m, k]);
    let mut shape_vk = bs.to_vec();
    shape_vk.extend([k, n]);
    let us = Array::from_vec_on(us, shape_us, &dev).unwrap();
    let vk = Array::from_vec_on(vk, shape_vk, &dev).unwrap();
    host(&us.matmul(&vk).unwrap())
}

/// `xᵀx` (x of shape (.., r, c)) against the identity.
fn orthonormal_columns(x: &Array<f64>, what: &str) {
    let d = x.ndim();
    let (r, c) = (x.shape()[d - 2], x.shape()[d - 1]);
    let batch: usize = x.shape()[..d - 2].iter().product();
    let v = host(x);
    for b in 0..batch {
        for i in 0..c {
            for j in 0..c {
                let dot: f64 = (0..r)
                    .map(|t| v[b * r * c + t * c + i] * v[b * r * c + t * c + j])
                    .sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert!(
                    (dot - want).abs() < 1e-10,
                    "{what} #{b}: column {i}·{j} = {dot}"
                );
            }
        }
    }
}

/// The transpose of each matrix of a host batch.
fn transpose(v: &[f64], batch: usize, r: usize, c: usize) -> Vec<f64> {
    let mut t = vec![0.0; v.len()];
    for b in 0..batch {
        for i in 0..r {
            for j in 0..c {
                t[b * r * c + j * r + i] = v[b * r * c + i * c + j];
            }
        }
    }
    t
}

#[test]
fn svd_on_the_gpu_reconstructs_and_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let compare = cpu_reference("svd_on_the_gpu_reconstructs_and_matches_the_cpu");
    for shape in shapes(12, 1) {
        let (batch, m, n) = split(&shape);
        let (g, c) = pair::<f64>(&shape, 2, &dev);
        for full in [false, true] {
            let what = format!("svd {shape:?} full={full}");
            let r = linalg::svd(&g, full).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(r.u.device(), dev);
            close(&reconstruct(&r, m, n), &host(&c), 1e-12, &what);
            orthonormal_columns(&r.u, &format!("{what}: u"));
            let vt = host(&r.vt);
            let vr = r.vt.shape()[r.vt.ndim() - 2];
            let v = Array::from_vec_on(
                transpose(&vt, batch, vr, n),
                {
                    let mut s = shape[..shape.len() - 2].to_vec();
                    s.extend([n, vr]);
                    s
                },
                &Device::Cpu,
            )
            .unwrap();
            orthonormal_columns(&v, &format!("{what}: vt"));
            let s = host(&r.s);
            let k = m.min(n);
            for b in 0..batch {
                let sb = &s[b * k..(b + 1) * k];
                assert!(sb.windows(2).all(|w| w[0] >= w[1]) && sb.iter().all(|&x| x >= 0.0));
            }
            // cuSOLVER's values-only run (job 'N') may round the last bit differently
            close(
                &host(&linalg::svdvals(&g).unwrap()),
                &s,
                1e-13,
                &format!("{what}: svdvals"),
            );
            if compare {
                let rc = linalg::svd(&c, full).unwrap();
                assert_eq!(r.u.shape(), rc.u.shape(), "{what}");
                assert_eq!(r.vt.shape(), rc.vt.shape(), "{what}");
                close(&s, &host(&rc.s), 1e-12, &format!("{what}: s"));
            }
        }
    }
    // float32, and a 1000 x 1000 like the benchmark's.
    let (g, c) = pair::<f32>(&[50, 30], 3, &dev);
    let r = linalg::svd(&g, false).unwrap();
    // gesvdj (Jacobi) in f32 reconstructs to about 1e-5 of the largest element (measured 1.1e-5).
    close(&reconstruct(&r, 50, 30), &host(&c), 5e-5, "svd f32");
    if compare {
        let rc = linalg::svdvals(&c).unwrap();
        close(&host(&r.s), &host(&rc), 1e-5, "svd f32: s");
    }
    let (g, c) = pair::<f64>(&[1000, 1000], 4, &dev);
    let r = linalg::svd(&g, true).unwrap();
    close(
        &reconstruct(&r, 1000, 1000),
        &host(&c),
        1e-11,
        "svd 1000 x 1000",
    );
}

#[test]
fn empty_inputs_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (g, _) = pair::<f64>(&[0, 3], 0, &dev);
    let r = linalg::svd(&g, true).unwrap();
    assert_eq!(
        (r.u.shape(), r.s.shape(), r.vt.shape()),
        (&[0, 0][..], &[0][..], &[3, 3][..])
    );
    assert_eq!(
        host(&r.vt),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    );
    let q = linalg::qr(&g).unwrap();
    assert_eq!((q.q.shape(), q.r.shape()), (&[0, 0][..], &[0, 3][..]));
    let (e, _) = pair::<f64>(&[2, 0, 0], 0, &dev);
    assert_eq!(host(&linalg::det(&e).unwrap()), vec![1.0, 1.0]);
    assert_eq!(linalg::inv(&e).unwrap().shape(), &[2, 0, 0]);
    assert_eq!(linalg::eigh(&e).unwrap().eigenvalues.shape(), &[2, 0]);
    assert_eq!(linalg::norm(&e).unwrap(), 0.0);
}

#[test]
fn solve_inv_det_on_the_gpu_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let compare = cpu_reference("solve_inv_det_on_the_gpu_match_the_cpu");
    for (ash, bsh) in [
        (vec![1usize, 1], vec![1usize]),
        (vec![1, 1], vec![1, 3]),
        (vec![5, 5], vec![5]),
        (vec![5, 5], vec![5, 4]),
        (vec![3, 6, 6], vec![3, 6, 2]),
        (vec![3, 6, 6], vec![6]),
        (vec![3, 6, 6], vec![6, 3]),
        (vec![37, 37], vec![37, 11]),
        (vec![200, 200], vec![200, 1]),
    ] {
        let what = format!("solve {ash:?} {bsh:?}");
        let (ga, ca) = conditioned(&ash, 5, &dev);
        let (gb, cb) = pair::<f64>(&bsh, 6, &dev);
        let x = linalg::solve(&ga, &gb).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(x.device(), dev);
        // Residual on the GPU: a @ x (x as a column when b is a vector) against b.
        let xm = if bsh.len() == 1 {
            let mut s = x.shape().to_vec();
            s.push(1);
            x.reshape(s).unwrap()
        } else {
            x.try_clone().unwrap()
        };
        let ax = host(&ga.matmul(&xm).unwrap());
        let n = ash[ash.len() - 1];
        let k = xm.shape()[xm.ndim() - 1];
        let bv = host(&gb);
        // A shared b (a vector, or one (n, k) for a batch) repeats for every matrix.
        let want: Vec<f64> = (0..ax.len()).map(|i| bv[i % (n * k)]).collect();
        if bsh.len() == 1 || (bsh.len() == 2 && ash.len() > 2) {
            close(&ax, &want, 1e-12, &format!("{what}: residual"));
        } else {
            close(&ax, &bv, 1e-12, &format!("{what}: residual"));
        }
        let inv = linalg::inv(&ga).unwrap();
        let det = linalg::det(&ga).unwrap();
        assert_eq!(det.shape(), &ash[..ash.len() - 2]);
        if compare {
            close(
                &host(&x),
                &host(&linalg::solve(&ca, &cb).unwrap()),
                1e-12,
                &what,
            );
            close(
                &host(&inv),
                &host(&linalg::inv(&ca).unwrap()),
                1e-12,
                &format!("inv {ash:?}"),
            );
            let (dg, dc) = (host(&det), host(&linalg::det(&ca).unwrap()));
            for (g, c) in dg.iter().zip(&dc) {
                if c.is_finite() {
                    assert!((g - c).abs() <= 1e-10 * c.abs(), "det {ash:?}: {g} vs {c}");
                } else {
                    assert_eq!(g, c, "det {ash:?} overflows on both backends"); // 200^200
                }
            }
        }
    }
    // float32
    let a = Array::from_vec_on(vec![3.0f32, 1.0, 1.0, 2.0], [2, 2], &dev).unwrap();
    let b = Array::from_vec_on(vec![9.0f32, 8.0], 2, &dev).unwrap();
    close(
        &host(&linalg::solve(&a, &b).unwrap()),
        &[2.0, 3.0],
        1e-6,
        "solve f32",
    );
    close(
        &host(&linalg::inv(&a).unwrap()),
        &[0.4, -0.2, -0.2, 0.6],
        1e-6,
        "inv f32",
    );
    close(&host(&linalg::det(&a).unwrap()), &[5.0], 1e-6, "det f32");
    // Known determinants: a permutation (odd, even), a singular matrix.
    let d = |v: Vec<f64>, n: usize| {
        let a = Array::from_vec_on(v, [n, n], &dev).unwrap();
        linalg::det(&a).unwrap().item().unwrap()
    };
    assert_eq!(d(vec![0.0, 1.0, 1.0, 0.0], 2), -1.0);
    assert_eq!(d(vec![0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 3), 1.0);
    assert_eq!(d(vec![1.0, 2.0, 2.0, 4.0], 2), 0.0);
}

#[test]
fn singular_matrices_are_errors_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let s = Array::from_vec_on(vec![1.0f64, 2.0, 2.0, 4.0], [2, 2], &dev).unwrap();
    let b = Array::from_vec_on(vec![1.0f64, 1.0], 2, &dev).unwrap();
    for e in [
        linalg::solve(&s, &b).unwrap_err(),
        linalg::inv(&s).unwrap_err(),
    ] {
        assert!(matches!(e, Error::LinAlg(_)), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("singular matrix") && msg.contains("(2, 2)"),
            "{msg}"
        );
    }
    // Matrix 1 of a batch of 3 is zero.
    let (g, _) = conditioned(&[3, 2, 2], 1, &dev);
    let mut v = host(&g);
    v[4..8].copy_from_slice(&[0.0; 4]);
    let batch = Array::from_vec_on(v, [3, 2, 2], &dev).unwrap();
    let msg = linalg::inv(&batch).unwrap_err().to_string();
    assert!(
        msg.contains("matrix 1 of the batch") && msg.contains("(3, 2, 2)"),
        "{msg}"
    );
    // The device is still usable afterwards.
    let (g, _) = conditioned(&[4, 4], 2, &dev);
    linalg::inv(&g).unwrap();
    // Shapes and devices.
    let e = linalg::solve(&g, &Array::<f64>::ones_on([3], &dev).unwrap()).unwrap_err();
    assert!(
        matches!(e, Error::Shape(_)) && e.to_string().contains("(4, 4)"),
        "{e}"
    );
    let e = linalg::solve(&g, &Array::<f64>::ones_on([4], &Device::Cpu).unwrap()).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch(_)), "{e:?}");
}

#[test]
fn qr_on_the_gpu_reconstructs_and_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let compare = cpu_reference("qr_on_the_gpu_reconstructs_and_matches_the_cpu");
    for shape in shapes(12, 7) {
        let (batch, m, n) = split(&shape);
        let k = m.min(n);
        let what = format!("qr {shape:?}");
        let (g, c) = pair::<f64>(&shape, 8, &dev);
        let r = linalg::qr(&g).unwrap_or_else(|e| panic!("{what}: {e}"));
        close(&host(&r.q.matmul(&r.r).unwrap()), &host(&c), 1e-12, &what);
        orthonormal_columns(&r.q, &what);
        let rv = host(&r.r);
        for b in 0..batch {
            for i in 0..k {
                for j in 0..i.min(n) {
                    assert_eq!(rv[b * k * n + i * n + j], 0.0, "{what}: r[{b}, {i}, {j}]");
                }
            }
        }
        if compare {
            // R is unique up to the signs of its rows: compare with each row's diagonal made
            // non-negative.
            let norm_rows = |v: &[f64]| -> Vec<f64> {
                let mut v = v.to_vec();
                for b in 0..batch {
                    for i in 0..k {
                        let row = &mut v[b * k * n + i * n..b * k * n + (i + 1) * n];
                        if row[i] < 0.0 {
                            row.iter_mut().for_each(|x| *x = -*x);
                        }
                    }
                }
                v
            };
            let rc = linalg::qr(&c).unwrap();
            close(&norm_rows(&rv), &norm_rows(&host(&rc.r)), 1e-10, &what);
        }
    }
    let (g, c) = pair::<f32>(&[20, 12], 9, &dev);
    let r = linalg::qr(&g).unwrap();
    close(&host(&r.q.matmul(&r.r).unwrap()), &host(&c), 1e-5, "qr f32");
}

#[test]
fn eigh_on_the_gpu_diagonalises_and_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let compare = cpu_reference("eigh_on_the_gpu_diagonalises_and_matches_the_cpu");
    for shape in [
        vec![1usize, 1],
        vec![2, 2],
        vec![7, 7],
        vec![3, 9, 9],
        vec![120, 120],
    ] {
        let (batch, _, n) = split(&shape);
        let what = format!("eigh {shape:?}");
        // Symmetric matrices; then garbage above the diagonal, which is not read.
        let mut v = values(shape.iter().product(), 10);
        let mut sym = v.clone();
        for b in 0..batch {
            for i in 0..n {
                for j in 0..i {
                    sym[b * n * n + j * n + i] = v[b * n * n + i * n + j];
                    v[b * n * n + j * n + i] = 50.0;
                }
            }
        }
        let g = Array::from_vec_on(v.clone(), shape.clone(), &dev).unwrap();
        let e = linalg::eigh(&g).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (w, vecs) = (host(&e.eigenvalues), host(&e.eigenvectors));
        let sym_g = Array::from_vec_on(sym, shape.clone(), &dev).unwrap();
        let av = host(&sym_g.matmul(&e.eigenvectors).unwrap());
        let vw: Vec<f64> = (0..vecs.len())
            .map(|i| vecs[i] * w[(i / (n * n)) * n + i % n])
            .collect();
        close(&av, &vw, 1e-11, &format!("{what}: a·v = v·diag(w)"));
        orthonormal_columns(&e.eigenvectors, &what);
        for b in 0..batch {
            assert!(
                w[b * n..(b + 1) * n].windows(2).all(|p| p[0] <= p[1]),
                "{what}: ascending"
            );
        }
        if compare {
            let c = Array::from_vec_on(v, shape.clone(), &Device::Cpu).unwrap();
            let ec = linalg::eigh(&c).unwrap();
            close(&w, &host(&ec.eigenvalues), 1e-12, &what);
        }
    }
}

#[test]
fn norms_on_the_gpu_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let compare = cpu_reference("norms_on_the_gpu_match_the_cpu");
    let (x, xc) = pair::<f64>(&[1001], 11, &dev);
    let (a, ac) = pair::<f64>(&[33, 17], 12, &dev);
    let (t, tc) = pair::<f64>(&[3, 4, 5], 13, &dev);
    let rel = |g: f64, c: f64, what: &str| {
        assert!(
            (g - c).abs() <= 1e-12 * c.abs().max(1.0),
            "{what}: {g} vs {c}"
        )
    };
    rel(
        linalg::norm(&t).unwrap(),
        linalg::norm(&tc).unwrap(),
        "norm 3-d",
    );
    for ord in [NormOrd::One, NormOrd::Two, NormOrd::Inf, NormOrd::NegInf] {
        let what = format!("vector {ord:?}");
        rel(
            linalg::norm_ord(&x, ord).unwrap(),
            linalg::norm_ord(&xc, ord).unwrap(),
            &what,
        );
    }
    for ord in [NormOrd::Fro, NormOrd::One, NormOrd::Inf, NormOrd::NegInf] {
        let what = format!("matrix {ord:?}");
        rel(
            linalg::norm_ord(&a, ord).unwrap(),
            linalg::norm_ord(&ac, ord).unwrap(),
            &what,
        );
    }
    let two = linalg::norm_ord(&a, NormOrd::Two).unwrap();
    let s = host(&linalg::svdvals(&a).unwrap());
    rel(two, s[0], "matrix Two = largest singular value");
    rel(
        linalg::norm_ord(&a, NormOrd::Nuc).unwrap(),
        s.iter().sum(),
        "matrix Nuc",
    );
    if compare {
        rel(
            two,
            linalg::norm_ord(&ac, NormOrd::Two).unwrap(),
            "matrix Two",
        );
    }
    let f = Array::from_vec_on(vec![3.0f32, 4.0], 2, &dev).unwrap();
    assert_eq!(linalg::norm(&f).unwrap(), 5.0);
}
