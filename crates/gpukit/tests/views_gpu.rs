//! Array operations on views, slice assignment, `cumprod`, `arctan2`, the FFT's `norm=`/`axes=`
//! and `irfft` with `n`, `lstsq` and `slogdet` on a CUDA device against the CPU backend, on
//! random shapes including 0-sized and 1-element ones and non-contiguous views (transposes,
//! slices with steps, reversed axes).
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side is tested beside the code
//! (`src/array/view/delegate_tests.rs`, `src/array/fft/tests.rs`,
//! `src/array/linalg/solver/lstsq_tests.rs`). The `lstsq`/`slogdet` comparisons need gpukit's
//! `linalg` feature on the CPU side (a workspace build has it); without it they print a
//! `skipped:` line and the GPU-only checks still run.

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{fft, linalg, s, Array, ArrayView, Complex, Device};

/// A small deterministic generator (xorshift): random but repeatable shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shape(&mut self, ndim: usize, max: usize) -> Vec<usize> {
        (0..ndim).map(|_| self.below(max + 1)).collect()
    }
}

/// Values in [-2, 2) from the index (no zeros, so products stay finite and non-zero).
fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| {
            let h = (i.wrapping_mul(2654435761).wrapping_add(seed * 977)) % 4000;
            let v = h as f64 / 1000.0 - 2.0;
            if v.abs() < 1e-3 {
                0.5
            } else {
                v
            }
        })
        .collect()
}

/// The same values on the GPU and on the CPU.
fn pair(shape: &[usize], seed: u64, dev: &Device) -> (Array<f64>, Array<f64>) {
    let v = values(shape.iter().product(), seed);
    (
        Array::from_vec_on(v.clone(), shape.to_vec(), dev).unwrap(),
        Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap(),
    )
}

/// Square matrices (`(..., n, n)`) that are well conditioned, so that `ln |det|` is decided
/// by the data and not by rounding: `values` (which are nearly rank-deficient, being linear in
/// the index modulo a constant) plus `±2n` on the diagonal, the sign alternating by matrix so
/// that both signs of the determinant occur.
fn conditioned_pair(shape: &[usize], dev: &Device) -> (Array<f64>, Array<f64>) {
    let n = shape[shape.len() - 1];
    let mut v = values(shape.iter().product(), 9);
    if n > 0 {
        for (m, mat) in v.chunks_mut(n * n).enumerate() {
            let d = if m % 2 == 0 { 2.0 } else { -2.0 } * n as f64;
            for i in 0..n {
                mat[i * n + i] += d;
            }
        }
    }
    (
        Array::from_vec_on(v.clone(), shape.to_vec(), dev).unwrap(),
        Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap(),
    )
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol * (1.0 + w.abs());
        assert!(ok, "{what}: element {i}: GPU {g} vs CPU {w}");
    }
}

/// Three non-contiguous views of an array of `ndim >= 1` axes: the transpose, every other
/// element of the last axis from 1, and the first axis reversed.
fn views<'a>(a: &'a Array<f64>) -> Vec<(&'static str, ArrayView<'a, f64>)> {
    let nd = a.ndim();
    let mut step = vec![s![..].as_ref()[0]; nd];
    step[nd - 1] = s![1..;2].as_ref()[0];
    let mut rev = vec![s![..].as_ref()[0]; nd];
    rev[0] = s![..;-1].as_ref()[0];
    vec![
        ("transpose", a.t()),
        ("stepped", a.slice(step).unwrap()),
        ("reversed", a.slice(rev).unwrap()),
    ]
}

/// Reductions, scans, unary math, sorts, comparisons, astype, clip and scalar arithmetic on
/// views give the CPU backend's results.
#[test]
fn operations_on_views_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Rng(0x7e57_0001);
    for case in 0..40u64 {
        let ndim = 1 + (case as usize) % 3;
        let mut shape = rng.shape(ndim, 6);
        if case % 7 == 0 {
            shape = vec![1; ndim]; // one element
        }
        let (g, c) = pair(&shape, case, &dev);
        for ((name, gv), (_, cv)) in views(&g).into_iter().zip(views(&c)) {
            let w = |op: &str| format!("{name} of {shape:?}: {op}");
            assert_eq!(gv.device(), dev);
            close(&[gv.sum().unwrap()], &[cv.sum().unwrap()], 1e-12, &w("sum"));
            close(
                &gv.sqrt().unwrap().to_vec().unwrap(),
                &cv.sqrt().unwrap().to_vec().unwrap(),
                1e-12,
                &w("sqrt"),
            );
            close(
                &gv.exp().unwrap().to_vec().unwrap(),
                &cv.exp().unwrap().to_vec().unwrap(),
                1e-12,
                &w("exp"),
            );
            close(
                &gv.sin().unwrap().to_vec().unwrap(),
                &cv.sin().unwrap().to_vec().unwrap(),
                1e-12,
                &w("sin"),
            );
            close(
                &gv.cumsum().unwrap().to_vec().unwrap(),
                &cv.cumsum().unwrap().to_vec().unwrap(),
                1e-10,
                &w("cumsum"),
            );
            close(
                &gv.cumprod().unwrap().to_vec().unwrap(),
                &cv.cumprod().unwrap().to_vec().unwrap(),
                1e-9,
                &w("cumprod"),
            );
            close(
                &(&gv * 2.0).unwrap().to_vec().unwrap(),
                &(&cv * 2.0).unwrap().to_vec().unwrap(),
                0.0,
                &w("* 2"),
            );
            close(
                &gv.clip(-1.0, 1.0).unwrap().to_vec().unwrap(),
                &cv.clip(-1.0, 1.0).unwrap().to_vec().unwrap(),
                0.0,
                &w("clip"),
            );
            close(
                &gv.sort().unwrap().to_vec().unwrap(),
                &cv.sort().unwrap().to_vec().unwrap(),
                0.0,
                &w("sort"),
            );
            assert_eq!(
                gv.argsort().unwrap().to_vec().unwrap(),
                cv.argsort().unwrap().to_vec().unwrap(),
                "{}",
                w("argsort")
            );
            assert_eq!(
                gv.gt(0.0).unwrap().to_vec().unwrap(),
                cv.gt(0.0).unwrap().to_vec().unwrap(),
                "{}",
                w("gt")
            );
            assert_eq!(
                gv.astype::<i32>().unwrap().to_vec().unwrap(),
                cv.astype::<i32>().unwrap().to_vec().unwrap(),
                "{}",
                w("astype")
            );
            for axis in 0..ndim as isize {
                let a = |op: &str| w(&format!("{op} axis {axis}"));
                close(
                    &gv.sum_axis(axis).unwrap().to_vec().unwrap(),
                    &cv.sum_axis(axis).unwrap().to_vec().unwrap(),
                    1e-12,
                    &a("sum"),
                );
                close(
                    &gv.cumprod_axis(axis).unwrap().to_vec().unwrap(),
                    &cv.cumprod_axis(axis).unwrap().to_vec().unwrap(),
                    1e-9,
                    &a("cumprod"),
                );
                close(
                    &gv.var_axis(axis, 0).unwrap().to_vec().unwrap(),
                    &cv.var_axis(axis, 0).unwrap().to_vec().unwrap(),
                    1e-10,
                    &a("var"),
                );
                assert_eq!(
                    gv.sort_axis(axis).unwrap().to_vec().unwrap(),
                    cv.sort_axis(axis).unwrap().to_vec().unwrap(),
                    "{}",
                    a("sort")
                );
                if gv.shape()[axis as usize] > 0 {
                    assert_eq!(
                        gv.argmax_axis(axis).unwrap().to_vec().unwrap(),
                        cv.argmax_axis(axis).unwrap().to_vec().unwrap(),
                        "{}",
                        a("argmax")
                    );
                    close(
                        &gv.max_axis(axis).unwrap().to_vec().unwrap(),
                        &cv.max_axis(axis).unwrap().to_vec().unwrap(),
                        0.0,
                        &a("max"),
                    );
                }
            }
            if gv.size() > 0 {
                close(
                    &[gv.mean().unwrap(), gv.std(0).unwrap(), gv.min().unwrap()],
                    &[cv.mean().unwrap(), cv.std(0).unwrap(), cv.min().unwrap()],
                    1e-12,
                    &w("mean/std/min"),
                );
                assert_eq!(
                    gv.argmin().unwrap(),
                    cv.argmin().unwrap(),
                    "{}",
                    w("argmin")
                );
            } else {
                assert!(gv.min().is_err() && cv.min().is_err());
            }
        }
    }
}

/// Long rows and columns: cumprod's chunked scan (segments carried by their products) on a
/// GPU, with values near 1 so the products stay finite.
#[test]
fn cumprod_of_long_axes_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    for shape in [
        vec![3usize, 20_000],
        vec![20_000, 3],
        vec![50_000],
        vec![0, 5],
        vec![4, 0],
    ] {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = values(n, 3).iter().map(|x| 1.0 + x * 1e-4).collect();
        let g = Array::from_vec_on(v.clone(), shape.clone(), &dev).unwrap();
        let c = Array::from_vec_on(v, shape.clone(), &Device::Cpu).unwrap();
        for axis in 0..shape.len() as isize {
            close(
                &g.cumprod_axis(axis).unwrap().to_vec().unwrap(),
                &c.cumprod_axis(axis).unwrap().to_vec().unwrap(),
                1e-9,
                &format!("{shape:?} axis {axis}"),
            );
        }
        let gi = Array::from_vec_on(
            (0..n as i64).map(|i| i % 3 - 1).collect(),
            shape.clone(),
            &dev,
        )
        .unwrap();
        let ci = gi.to_device(&Device::Cpu).unwrap();
        assert_eq!(
            gi.cumprod().unwrap().to_vec().unwrap(),
            ci.cumprod().unwrap().to_vec().unwrap()
        );
    }
}

/// `arctan2` on arrays and views, float widths, against the CPU.
#[test]
fn arctan2_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (gy, cy) = pair(&[7, 5], 1, &dev);
    let (gx, cx) = pair(&[7, 5], 2, &dev);
    close(
        &gy.arctan2(&gx).unwrap().to_vec().unwrap(),
        &cy.arctan2(&cx).unwrap().to_vec().unwrap(),
        1e-14,
        "f64",
    );
    close(
        &gy.t().atan2(gx.t()).unwrap().to_vec().unwrap(),
        &cy.t().atan2(cx.t()).unwrap().to_vec().unwrap(),
        1e-14,
        "views",
    );
    let (gy, gx) = (gy.astype::<f32>().unwrap(), gx.astype::<f32>().unwrap());
    let (cy, cx) = (cy.astype::<f32>().unwrap(), cx.astype::<f32>().unwrap());
    let g: Vec<f64> = gy
        .arctan2(&gx)
        .unwrap()
        .to_vec()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    let c: Vec<f64> = cy
        .arctan2(&cx)
        .unwrap()
        .to_vec()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    close(&g, &c, 1e-6, "f32");
    let (e, _) = pair(&[0, 3], 1, &dev);
    assert_eq!(e.arctan2(&e).unwrap().shape(), &[0, 3]);
}

/// `where_` with a view as condition and views or scalars as values.
#[test]
fn where_with_views_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    for shape in [[5usize, 3], [1, 1], [0, 4]] {
        let (g, c) = pair(&shape, 4, &dev);
        let (g2, c2) = pair(&[shape[1], shape[0]], 6, &dev);
        let (gc, cc) = (g.t().gt(0.0).unwrap(), c.t().gt(0.0).unwrap());
        let a = ArrayView::where_(&gc, g.t(), &g2).unwrap();
        let b = ArrayView::where_(&cc, c.t(), &c2).unwrap();
        assert_eq!(a.device(), dev);
        close(
            &a.to_vec().unwrap(),
            &b.to_vec().unwrap(),
            0.0,
            &format!("{shape:?}"),
        );
        let a = ArrayView::where_(gc.view(), 0.0, g.t()).unwrap();
        let b = ArrayView::where_(cc.view(), 0.0, c.t()).unwrap();
        close(
            &a.to_vec().unwrap(),
            &b.to_vec().unwrap(),
            0.0,
            &format!("{shape:?} scalar"),
        );
    }
}

/// Slice assignment on the GPU writes what it writes on the CPU.
#[test]
fn slice_assignment_matches_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5117_a551);
    for case in 0..20u64 {
        let shape = vec![1 + rng.below(6), 1 + rng.below(7)];
        let (mut g, mut c) = pair(&shape, case, &dev);
        let (bg, bc) = pair(&[shape[1], shape[0]], case + 100, &dev);
        // a[::2, ::-1] = bᵀ[::2, ::-1] (a strided source into a strided target), a[:, 0] = 3,
        // a[-1] += row, a[1:, ::3] *= 0.5.
        g.slice_mut(s![..;2, ..;-1])
            .unwrap()
            .assign(bg.t().slice(s![..;2, ..;-1]).unwrap())
            .unwrap();
        c.slice_mut(s![..;2, ..;-1])
            .unwrap()
            .assign(bc.t().slice(s![..;2, ..;-1]).unwrap())
            .unwrap();
        g.slice_mut(s![.., 0]).unwrap().fill(3.0).unwrap();
        c.slice_mut(s![.., 0]).unwrap().fill(3.0).unwrap();
        let (rg, rc) = pair(&[shape[1]], case + 7, &dev);
        g.slice_mut(s![-1, ..]).unwrap().add_in_place(&rg).unwrap();
        c.slice_mut(s![-1, ..]).unwrap().add_in_place(&rc).unwrap();
        g.slice_mut(s![1.., ..;3])
            .unwrap()
            .mul_in_place(0.5)
            .unwrap();
        c.slice_mut(s![1.., ..;3])
            .unwrap()
            .mul_in_place(0.5)
            .unwrap();
        close(
            &g.to_vec().unwrap(),
            &c.to_vec().unwrap(),
            0.0,
            &format!("{shape:?}"),
        );
    }
    // Operands on different devices are an error, never a silent copy.
    let (mut g, c) = pair(&[2, 2], 1, &dev);
    assert!(g
        .slice_mut(s![0, ..])
        .unwrap()
        .assign(c.slice(s![1, ..]).unwrap())
        .is_err());
}

type C = Complex<f64>;

fn complex_pair(shape: &[usize], seed: u64, dev: &Device) -> (Array<C>, Array<C>) {
    let n: usize = shape.iter().product();
    let re = values(n, seed);
    let im = values(n, seed + 1);
    let v: Vec<C> = re.into_iter().zip(im).map(|(r, i)| C::new(r, i)).collect();
    (
        Array::from_vec_on(v.clone(), shape.to_vec(), dev).unwrap(),
        Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap(),
    )
}

fn close_c(g: &Array<C>, c: &Array<C>, what: &str) {
    assert_eq!(g.shape(), c.shape(), "{what}");
    let flat = |a: &Array<C>| -> Vec<f64> {
        a.to_vec()
            .unwrap()
            .into_iter()
            .flat_map(|z| [z.re, z.im])
            .collect()
    };
    close(&flat(g), &flat(c), 1e-9, what);
}

/// `norm=`, `axes=` (any order, more than 3 axes), views and `irfft` with a cropped or padded
/// spectrum: cuFFT against rustfft.
#[test]
fn fft_norms_axes_and_views_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let (g, c) = complex_pair(&[4, 6, 5], 3, &dev);
    for norm in ["backward", "ortho", "forward"] {
        close_c(
            &fft::fft_norm(&g, norm).unwrap(),
            &fft::fft_norm(&c, norm).unwrap(),
            norm,
        );
        close_c(
            &fft::ifft_norm(&g, norm).unwrap(),
            &fft::ifft_norm(&c, norm).unwrap(),
            norm,
        );
        for axes in [&[0isize][..], &[2, 0], &[-1, 0, 1], &[1]] {
            let what = format!("{norm} axes {axes:?}");
            close_c(
                &fft::fftn_axes(&g, axes, norm).unwrap(),
                &fft::fftn_axes(&c, axes, norm).unwrap(),
                &what,
            );
            close_c(
                &fft::ifftn_axes(&g, axes, norm).unwrap(),
                &fft::ifftn_axes(&c, axes, norm).unwrap(),
                &what,
            );
        }
    }
    let (g4, c4) = complex_pair(&[2, 3, 2, 4], 5, &dev);
    close_c(
        &fft::fftn_axes(&g4, &[0, 1, 2, 3], "ortho").unwrap(),
        &fft::fftn_axes(&c4, &[0, 1, 2, 3], "ortho").unwrap(),
        "4 axes",
    );
    close_c(
        &fft::fft(&g.t()).unwrap(),
        &fft::fft(&c.t()).unwrap(),
        "fft of a transpose",
    );
    close_c(
        &fft::fft2(&g.slice(s![.., ..;2, ..]).unwrap()).unwrap(),
        &fft::fft2(&c.slice(s![.., ..;2, ..]).unwrap()).unwrap(),
        "fft2 of a slice",
    );
    let (hg, hc) = (
        fft::rfft(&g.re().unwrap()).unwrap(),
        fft::rfft(&c.re().unwrap()).unwrap(),
    ); // (4, 6, 3)
    for n in [1usize, 2, 4, 5, 9, 16] {
        let a = fft::irfft_n(&hg, n).unwrap().to_vec().unwrap();
        let b = fft::irfft_n(&hc, n).unwrap().to_vec().unwrap();
        close(&a, &b, 1e-10, &format!("irfft n = {n}"));
        let a = fft::irfft_norm(&hg, Some(n), "ortho")
            .unwrap()
            .to_vec()
            .unwrap();
        let b = fft::irfft_norm(&hc, Some(n), "ortho")
            .unwrap()
            .to_vec()
            .unwrap();
        close(&a, &b, 1e-10, &format!("irfft ortho n = {n}"));
    }
    let (e, _) = complex_pair(&[0, 4], 1, &dev);
    assert_eq!(fft::fftn_axes(&e, &[1], "ortho").unwrap().shape(), &[0, 4]);
    assert!(fft::fftn_axes(&e, &[0], "ortho").is_err());
}

/// `lstsq` and `slogdet` (cuSOLVER, cuBLAS) against faer, and on views.
#[test]
fn lstsq_and_slogdet_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let cpu_ok = linalg::cpu_available();
    if !cpu_ok {
        println!(
            "skipped: lstsq_and_slogdet_match_the_cpu: the CPU comparison needs gpukit's `linalg` \
             feature (cargo test -p gpukit --features linalg --test views_gpu)"
        );
    }
    for (m, n, k) in [
        (8usize, 3usize, 2usize),
        (3, 5, 1),
        (6, 6, 3),
        (1, 1, 1),
        (40, 12, 4),
    ] {
        let (ga, ca) = pair(&[m, n], m as u64, &dev);
        let (gb, cb) = pair(&[m, k], n as u64, &dev);
        let g = linalg::lstsq(&ga, &gb, None).unwrap();
        assert_eq!(g.x.shape(), &[n, k]);
        assert_eq!(g.x.device(), dev);
        // The normal equations hold on the GPU: aᵀ (a x - b) = 0 (up to rounding).
        let r = (&ga.matmul(&g.x).unwrap() - &gb).unwrap();
        let normal = ga.t().matmul(&r).unwrap().to_vec().unwrap();
        assert!(normal.iter().all(|v| v.abs() < 1e-9), "{m}x{n}: {normal:?}");
        if cpu_ok {
            let c = linalg::lstsq(&ca, &cb, None).unwrap();
            assert_eq!(g.rank, c.rank);
            close(
                &g.x.to_vec().unwrap(),
                &c.x.to_vec().unwrap(),
                1e-8,
                &format!("lstsq {m}x{n}"),
            );
            close(
                &g.residuals.to_vec().unwrap(),
                &c.residuals.to_vec().unwrap(),
                1e-8,
                "residuals",
            );
            close(
                &g.s.to_vec().unwrap(),
                &c.s.to_vec().unwrap(),
                1e-10,
                "singular values",
            );
        }
    }
    for shape in [
        vec![1usize, 1],
        vec![5, 5],
        vec![3, 4, 4],
        vec![0, 3, 3],
        vec![2, 0, 0],
    ] {
        let (g, c) = conditioned_pair(&shape, &dev);
        let sg = linalg::slogdet(&g).unwrap();
        assert_eq!(sg.sign.shape(), &shape[..shape.len() - 2]);
        if cpu_ok {
            let sc = linalg::slogdet(&c).unwrap();
            close(
                &sg.sign.to_vec().unwrap(),
                &sc.sign.to_vec().unwrap(),
                0.0,
                &format!("sign {shape:?}"),
            );
            close(
                &sg.logabsdet.to_vec().unwrap(),
                &sc.logabsdet.to_vec().unwrap(),
                1e-10,
                &format!("logabsdet {shape:?}"),
            );
        }
        if shape.iter().all(|&d| d > 0) {
            let d = linalg::det(&g).unwrap().to_vec().unwrap();
            let back: Vec<f64> = sg
                .sign
                .to_vec()
                .unwrap()
                .iter()
                .zip(sg.logabsdet.to_vec().unwrap())
                .map(|(s, l)| s * l.exp())
                .collect();
            close(&back, &d, 1e-10, "sign * exp(logabsdet) = det");
        }
    }
    let singular = Array::from_vec_on(vec![1.0f64, 2.0, 2.0, 4.0], [2, 2], &dev).unwrap();
    let s = linalg::slogdet(&singular).unwrap();
    assert_eq!(
        (s.sign.item().unwrap(), s.logabsdet.item().unwrap()),
        (0.0, f64::NEG_INFINITY)
    );
    // Matrix products take views.
    let (ga, ca) = pair(&[4, 3], 2, &dev);
    close(
        &ga.t().matmul(&ga).unwrap().to_vec().unwrap(),
        &ca.t().matmul(&ca).unwrap().to_vec().unwrap(),
        1e-12,
        "aᵀa",
    );
}
