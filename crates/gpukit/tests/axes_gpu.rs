//! Reductions along axes, cumsum, where/masks/clip, the extra elementwise functions and the
//! device scope on a CUDA device, each compared with the CPU backend (and ndarray) on
//! pseudo-random shapes including 0-sized and 1-element ones, and shapes large enough that the
//! kernels cut the axis into segments.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side is tested beside the code
//! (`src/array/reduce_axis_tests.rs`, `select.rs`, `ufuncs.rs`, `device/scope.rs`).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{keepdims, with_device, Array, Device, Element, Error, Numeric};

/// A small deterministic generator (no dependency on gpukit's own random numbers).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    /// Uniform in [-5, 5).
    fn float(&mut self) -> f64 {
        (self.next() as f64 / (1u64 << 53) as f64) * 10.0 - 5.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Shapes: fixed edge cases, random ones, and large ones that are cut into segments.
fn shapes(rng: &mut Lcg) -> Vec<Vec<usize>> {
    let mut v: Vec<Vec<usize>> = vec![
        vec![0],
        vec![1],
        vec![1, 1],
        vec![0, 5],
        vec![5, 0],
        vec![3, 0, 2],
        vec![1_000_003],
        vec![2, 300_001],
        vec![300_001, 2],
        vec![50_000, 40],
        vec![40, 3, 20_000],
        vec![7, 33, 65],
        // Long rows, enough of them for the fused variance (`var_rows`), and a width that is
        // no multiple of the column layout's 128 threads.
        vec![300, 2_500],
        vec![2_049, 130],
        // Rows that start off 16-byte boundaries (odd lengths): the packed loads' unaligned ends,
        // in registers (`var_rows`) and, for f64 rows over 8 192, read twice (`var_rows_l2`).
        vec![300, 2_501],
        vec![270, 9_001],
        // Wide enough for the interleaved column layout in every element type (u8 and bool
        // pack 16 columns).
        vec![100, 16_384],
    ];
    for _ in 0..8 {
        let nd = 1 + rng.below(4) as usize;
        v.push((0..nd).map(|_| 1 + rng.below(40) as usize).collect());
    }
    v
}

/// The same values on the CPU and on `dev`.
fn pair<T: Element>(data: Vec<T>, shape: &[usize], dev: &Device) -> (Array<T>, Array<T>) {
    let c = Array::from_vec_on(data.clone(), shape.to_vec(), &Device::Cpu).unwrap();
    let g = Array::from_vec_on(data, shape.to_vec(), dev).unwrap();
    (c, g)
}

/// Elementwise closeness: `|g - c| <= atol + rtol * |c|`, NaN matching NaN, infinities equal.
fn close<T: Element>(g: &Array<T>, c: &Array<T>, atol: f64, rtol: f64, what: &str) {
    assert_eq!(g.shape(), c.shape(), "{what}: shapes");
    assert!(
        g.device().is_cuda() && !c.device().is_cuda(),
        "{what}: devices"
    );
    let (gv, cv) = (g.to_vec().unwrap(), c.to_vec().unwrap());
    for (i, (x, y)) in gv.iter().zip(&cv).enumerate() {
        let (x, y) = (x.to_f64(), y.to_f64());
        let ok = x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= atol + rtol * y.abs();
        assert!(ok, "{what}[{i}]: GPU {x} vs CPU {y}");
    }
}

/// Every axis reduction of `c` (CPU) and `g` (GPU) along every axis and over the whole array.
fn check_reductions<T: Numeric>(c: &Array<T>, g: &Array<T>, eps: f64, what: &str) {
    let shape = c.shape().to_vec();
    for ax in 0..shape.len() {
        let w = format!("{what} axis {ax}");
        let len = shape[ax] as f64;
        let atol = eps * (len + 1.0) * 10.0;
        close(
            &g.sum_axis(ax).unwrap(),
            &c.sum_axis(ax).unwrap(),
            atol,
            eps,
            &w,
        );
        let kd = g
            .sum_axis(keepdims(ax as i64 - shape.len() as i64))
            .unwrap();
        let mut ks = shape.clone();
        ks[ax] = 1;
        assert_eq!(kd.shape(), &ks[..], "{w} keepdims");
        close(
            &g.count_nonzero_axis(ax).unwrap(),
            &c.count_nonzero_axis(ax).unwrap(),
            0.0,
            0.0,
            &w,
        );
        close(
            &g.any_axis(ax).unwrap(),
            &c.any_axis(ax).unwrap(),
            0.0,
            0.0,
            &w,
        );
        close(
            &g.all_axis(ax).unwrap(),
            &c.all_axis(ax).unwrap(),
            0.0,
            0.0,
            &w,
        );
        close(
            &g.cumsum_axis(ax).unwrap(),
            &c.cumsum_axis(ax).unwrap(),
            atol,
            eps,
            &w,
        );
        let empty_axis = shape[ax] == 0 && c.size() == 0 && shape.iter().product::<usize>() == 0;
        match (c.min_axis(ax), g.min_axis(ax)) {
            (Ok(cm), Ok(gm)) => {
                close(&gm, &cm, 0.0, 0.0, &w);
                close(
                    &g.max_axis(ax).unwrap(),
                    &c.max_axis(ax).unwrap(),
                    0.0,
                    0.0,
                    &w,
                );
                close(
                    &g.argmin_axis(ax).unwrap(),
                    &c.argmin_axis(ax).unwrap(),
                    0.0,
                    0.0,
                    &w,
                );
                close(
                    &g.argmax_axis(ax).unwrap(),
                    &c.argmax_axis(ax).unwrap(),
                    0.0,
                    0.0,
                    &w,
                );
            }
            (Err(Error::Shape(_)), Err(Error::Shape(_))) => assert!(empty_axis, "{w}"),
            (a, b) => panic!("{w}: CPU {:?} vs GPU {:?}", a.err(), b.err()),
        }
    }
    let w = format!("{what} whole");
    assert_eq!(g.any().unwrap(), c.any().unwrap(), "{w}");
    assert_eq!(g.all().unwrap(), c.all().unwrap(), "{w}");
    close(
        &g.cumsum().unwrap(),
        &c.cumsum().unwrap(),
        eps * (c.size() as f64 + 1.0) * 10.0,
        eps,
        &w,
    );
    if c.size() > 0 {
        assert_eq!(g.argmin().unwrap(), c.argmin().unwrap(), "{w}");
        assert_eq!(g.argmax().unwrap(), c.argmax().unwrap(), "{w}");
    } else {
        assert!(g.argmin().is_err() && c.argmax().is_err(), "{w}");
    }
}

#[test]
fn axis_reductions_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Lcg(16);
    for shape in shapes(&mut rng) {
        let n: usize = shape.iter().product();
        let f: Vec<f64> = (0..n).map(|_| rng.float()).collect();
        let (c, g) = pair(f.clone(), &shape, &dev);
        check_reductions(&c, &g, 1e-12, &format!("f64 {shape:?}"));
        let (c32, g32) = pair(f.iter().map(|&x| x as f32).collect(), &shape, &dev);
        check_reductions(&c32, &g32, 1e-5, &format!("f32 {shape:?}"));
        // Integers with many ties and zeros (exact: sums wrap identically).
        let (ci, gi) = pair(f.iter().map(|&x| x as i32).collect(), &shape, &dev);
        check_reductions(&ci, &gi, 0.0, &format!("i32 {shape:?}"));
        let (cu, gu) = pair(f.iter().map(|&x| (x + 5.0) as u8).collect(), &shape, &dev);
        close(
            &gu.prod_axis(0).unwrap(),
            &cu.prod_axis(0).unwrap(),
            0.0,
            0.0,
            "u8 prod",
        );
        // Floats: mean, var, std, prod.
        for ax in 0..shape.len() {
            let w = format!("f64 {shape:?} axis {ax}");
            close(
                &g.mean_axis(ax).unwrap(),
                &c.mean_axis(ax).unwrap(),
                1e-12,
                1e-12,
                &w,
            );
            for ddof in [0, 1] {
                close(
                    &g.var_axis(ax, ddof).unwrap(),
                    &c.var_axis(ax, ddof).unwrap(),
                    1e-10,
                    1e-10,
                    &w,
                );
                close(
                    &g.std_axis(ax, ddof).unwrap(),
                    &c.std_axis(ax, ddof).unwrap(),
                    1e-10,
                    1e-10,
                    &w,
                );
            }
            close(
                &g32.var_axis(ax, 0).unwrap(),
                &c32.var_axis(ax, 0).unwrap(),
                1e-3,
                1e-3,
                &w,
            );
            close(
                &g.prod_axis(ax).unwrap(),
                &c.prod_axis(ax).unwrap(),
                0.0,
                1e-9,
                &w,
            );
        }
        // Bool arrays: counts, any, all.
        let (cb, gb) = pair(f.iter().map(|&x| x > 2.0).collect(), &shape, &dev);
        for ax in 0..shape.len() {
            close(
                &gb.count_nonzero_axis(ax).unwrap(),
                &cb.count_nonzero_axis(ax).unwrap(),
                0.0,
                0.0,
                "bool count",
            );
            close(
                &gb.any_axis(ax).unwrap(),
                &cb.any_axis(ax).unwrap(),
                0.0,
                0.0,
                "bool any",
            );
            close(
                &gb.all_axis(ax).unwrap(),
                &cb.all_axis(ax).unwrap(),
                0.0,
                0.0,
                "bool all",
            );
        }
        if n > 1 {
            let (v, cv) = (g.var(1).unwrap(), c.var(1).unwrap());
            assert!(
                (v - cv).abs() <= 1e-10 * cv.abs().max(1.0),
                "var {v} vs {cv}"
            );
            let (p, cp) = (gi.prod().unwrap(), ci.prod().unwrap());
            assert_eq!(p, cp, "i32 prod wraps alike");
        }
    }
}

/// Whether two host arrays have one shape and elements within `tol`.
fn near(a: &ndarray::ArrayD<f64>, b: &ndarray::ArrayD<f64>, tol: f64) -> bool {
    a.shape() == b.shape() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn axis_sums_match_ndarray_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Lcg(3);
    let h = ndarray::Array2::from_shape_fn((1000, 513), |_| rng.float()).into_dyn();
    let g = Array::from_ndarray_on(&h, &dev).unwrap();
    for ax in 0..2 {
        let want = h.sum_axis(ndarray::Axis(ax));
        let got = g.sum_axis(ax).unwrap().to_host().unwrap();
        assert!(near(&got, &want, 1e-9), "sum axis {ax}");
        let want = h.mean_axis(ndarray::Axis(ax)).unwrap();
        let got = g.mean_axis(ax).unwrap().to_host().unwrap();
        assert!(near(&got, &want, 1e-12), "mean axis {ax}");
        let want = h.std_axis(ndarray::Axis(ax), 1.0);
        let got = g.std_axis(ax, 1).unwrap().to_host().unwrap();
        assert!(near(&got, &want, 1e-10), "std axis {ax}");
        let want = h.fold_axis(ndarray::Axis(ax), f64::NEG_INFINITY, |&m, &x| m.max(x));
        let got = g.max_axis(ax).unwrap().to_host().unwrap();
        assert!(near(&got, &want, 0.0), "max axis {ax}");
    }
}

#[test]
fn nan_and_ties_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let nan = f64::NAN;
    // Long rows and columns, so that NaNs and ties cross segments.
    let n = 200_000;
    let mut v = vec![1.0f64; 2 * n];
    v[n + 150_000] = nan;
    v[n + 199_999] = nan;
    v[7] = -3.0;
    v[150_001] = -3.0;
    let (c, g) = pair(v, &[2, n], &dev);
    assert_eq!(
        g.argmin_axis(1).unwrap().to_vec().unwrap(),
        vec![7, 150_000]
    );
    assert_eq!(
        g.argmax_axis(1).unwrap().to_vec().unwrap(),
        vec![0, 150_000]
    );
    assert_eq!(g.argmin().unwrap(), n + 150_000);
    let m = g.max_axis(1).unwrap().to_vec().unwrap();
    assert!(m[0] == 1.0 && m[1].is_nan());
    let t = c.reshape([n, 2]).unwrap();
    let gt = g.reshape([n, 2]).unwrap();
    close(
        &gt.argmin_axis(0).unwrap(),
        &t.argmin_axis(0).unwrap(),
        0.0,
        0.0,
        "columns",
    );
    close(
        &gt.min_axis(0).unwrap(),
        &t.min_axis(0).unwrap(),
        0.0,
        0.0,
        "columns",
    );
}

#[test]
fn where_masks_and_elementwise_functions_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Lcg(5);
    for shape in shapes(&mut rng) {
        let n: usize = shape.iter().product();
        let f: Vec<f64> = (0..n).map(|_| rng.float()).collect();
        let w = format!("{shape:?}");
        let (c, g) = pair(f.clone(), &shape, &dev);
        let (cm, gm) = (c.gt(1.0).unwrap(), g.gt(1.0).unwrap());
        close(
            &Array::where_(&gm, &g, 0.0).unwrap(),
            &Array::where_(&cm, &c, 0.0).unwrap(),
            0.0,
            0.0,
            &w,
        );
        let (c2, g2) = (c.sin().unwrap(), g.sin().unwrap());
        close(
            &Array::where_(&gm, &g, &g2).unwrap(),
            &Array::where_(&cm, &c, &c2).unwrap(),
            1e-15,
            1e-15,
            &w,
        );
        close(
            &Array::where_(&gm, 1.0, &g2).unwrap(),
            &Array::where_(&cm, 1.0, &c2).unwrap(),
            1e-15,
            1e-15,
            &w,
        );
        close(
            &g.masked(&gm).unwrap(),
            &c.masked(&cm).unwrap(),
            0.0,
            0.0,
            &w,
        );
        let (mut cc, mut gg) = pair(f.clone(), &shape, &dev);
        cc.masked_fill(&cm, -9.0).unwrap();
        gg.masked_fill(&gm, -9.0).unwrap();
        close(&gg, &cc, 0.0, 0.0, &w);
        let k = cm.count_nonzero().unwrap() as usize;
        assert_eq!(gm.count_nonzero().unwrap() as usize, k);
        let vals: Vec<f64> = (0..k).map(|i| i as f64).collect();
        let (cv, gv) = pair(vals, &[k], &dev);
        cc.masked_assign(&cm, &cv).unwrap();
        gg.masked_assign(&gm, &gv).unwrap();
        close(&gg, &cc, 0.0, 0.0, &w);
        close(
            &g.clip(-1.0, 2.0).unwrap(),
            &c.clip(-1.0, 2.0).unwrap(),
            0.0,
            0.0,
            &w,
        );
        close(
            &g.maximum(&g2).unwrap(),
            &c.maximum(&c2).unwrap(),
            1e-15,
            1e-15,
            &w,
        );
        close(
            &g.minimum(&g2).unwrap(),
            &c.minimum(&c2).unwrap(),
            1e-15,
            1e-15,
            &w,
        );
        close(&g.square().unwrap(), &c.square().unwrap(), 0.0, 0.0, &w);
        close(&g.sign().unwrap(), &c.sign().unwrap(), 0.0, 0.0, &w);
        for (name, gf, cf) in [
            (
                "log2",
                g.abs().unwrap().log2().unwrap(),
                c.abs().unwrap().log2().unwrap(),
            ),
            (
                "log10",
                g.abs().unwrap().log10().unwrap(),
                c.abs().unwrap().log10().unwrap(),
            ),
            ("exp2", g.exp2().unwrap(), c.exp2().unwrap()),
            ("expm1", g.expm1().unwrap(), c.expm1().unwrap()),
            (
                "log1p",
                g.abs().unwrap().log1p().unwrap(),
                c.abs().unwrap().log1p().unwrap(),
            ),
            ("tan", g.tan().unwrap(), c.tan().unwrap()),
            ("arcsin", g2.arcsin().unwrap(), c2.arcsin().unwrap()),
            ("arccos", g2.arccos().unwrap(), c2.arccos().unwrap()),
            ("arctan", g.arctan().unwrap(), c.arctan().unwrap()),
            ("sinh", g.sinh().unwrap(), c.sinh().unwrap()),
            ("cosh", g.cosh().unwrap(), c.cosh().unwrap()),
            ("floor", g.floor().unwrap(), c.floor().unwrap()),
            ("ceil", g.ceil().unwrap(), c.ceil().unwrap()),
            ("round", g.round().unwrap(), c.round().unwrap()),
            (
                "reciprocal",
                g.reciprocal().unwrap(),
                c.reciprocal().unwrap(),
            ),
        ] {
            close(&gf, &cf, 1e-13, 1e-13, &format!("{name} {w}"));
        }
        let (c32, g32) = pair(f.iter().map(|&x| x as f32).collect(), &shape, &dev);
        close(&g32.tan().unwrap(), &c32.tan().unwrap(), 1e-5, 1e-5, &w);
        close(&g32.round().unwrap(), &c32.round().unwrap(), 0.0, 0.0, &w);
        let (ci, gi) = pair(f.iter().map(|&x| x as i64).collect(), &shape, &dev);
        close(&gi.sign().unwrap(), &ci.sign().unwrap(), 0.0, 0.0, &w);
        close(
            &gi.clip(-2, 3).unwrap(),
            &ci.clip(-2, 3).unwrap(),
            0.0,
            0.0,
            &w,
        );
    }
    let special = vec![
        1.0f64,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
    ];
    let (c, g) = pair(special, &[6], &dev);
    for (gb, cb) in [
        (g.isnan().unwrap(), c.isnan().unwrap()),
        (g.isinf().unwrap(), c.isinf().unwrap()),
        (g.isfinite().unwrap(), c.isfinite().unwrap()),
    ] {
        close(&gb, &cb, 0.0, 0.0, "predicates");
    }
}

#[test]
fn device_scope_and_mismatches_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let before = gpukit::default_device();
    let a = with_device(Device::Cpu, || {
        assert_eq!(gpukit::default_device(), Device::Cpu);
        Array::<f32>::ones(4)
    })
    .unwrap();
    assert_eq!(a.device(), Device::Cpu);
    assert_eq!(gpukit::default_device(), before);
    let b = with_device(0usize, || Array::<f32>::ones(4)).unwrap();
    assert_eq!(b.device(), dev);
    {
        let _on = Device::Cpu.use_().unwrap();
        assert_eq!(Array::<f64>::zeros(2).unwrap().device(), Device::Cpu);
        let _inner = dev.use_().unwrap();
        assert_eq!(Array::<f64>::zeros(2).unwrap().device(), dev);
    }
    assert_eq!(gpukit::default_device(), before);
    // A panic inside the block restores the default too.
    let r = std::panic::catch_unwind(|| {
        with_device("cpu", || -> gpukit::Result<()> { panic!("inside") })
    });
    assert!(r.is_err());
    assert_eq!(gpukit::default_device(), before);
    if gpukit::cuda_device_count() > 1 {
        let c = with_device(1usize, || Array::<f32>::ones(4)).unwrap();
        assert_eq!(c.device(), Device::Cuda(1));
        let e = (&b + &c).unwrap_err();
        assert!(matches!(e, Error::DeviceMismatch(_)), "{e}");
    }
    // Operands on different devices: an error naming both, never a silent copy.
    let mismatch = |e: Error, what: &str| {
        let m = e.to_string();
        assert!(matches!(e, Error::DeviceMismatch(_)), "{what}: {m}");
        assert!(
            m.contains("cpu") && m.contains(&dev.to_string()),
            "{what}: {m}"
        );
    };
    mismatch((&a + &b).unwrap_err(), "+");
    mismatch(a.lt(&b).unwrap_err(), "lt");
    mismatch(a.maximum(&b).unwrap_err(), "maximum");
    mismatch(
        Array::where_(&a.gt(0.0).unwrap(), &b, 0.0).unwrap_err(),
        "where",
    );
    mismatch(b.masked(&a.gt(0.0).unwrap()).unwrap_err(), "masked");
    let mut bb = b.try_clone().unwrap();
    mismatch(
        bb.masked_fill(&a.gt(0.0).unwrap(), 1.0).unwrap_err(),
        "masked_fill",
    );
    mismatch(
        bb.masked_assign(&b.gt(0.0).unwrap(), &a).unwrap_err(),
        "masked_assign",
    );
    let m = Array::<f32>::ones([2, 2])
        .unwrap()
        .to_device(&Device::Cpu)
        .unwrap();
    let mg = m.to_device(&dev).unwrap();
    mismatch(m.matmul(&mg).unwrap_err(), "matmul");
    // Explicit copies work both ways.
    assert_eq!(
        b.to_device(&Device::Cpu).unwrap().to_vec().unwrap(),
        vec![1.0; 4]
    );
    assert_eq!(a.to_device(&dev).unwrap().device(), dev);
}

#[test]
fn nan_and_ties_in_wide_columns_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    // (4000, 2048): wide enough for the interleaved column layout (125 row groups); every column
    // holds ties for its minimum and maximum in several row groups, and some columns NaNs.
    let (rows, cols) = (4000, 2048);
    let v: Vec<f64> = (0..rows * cols)
        .map(|i| {
            let (r, k) = (i / cols, i % cols);
            if k % 7 == 0 && r % 1000 == 999 - k % 1000 {
                f64::NAN
            } else {
                ((r * 31 + k * 17) % 13) as f64
            }
        })
        .collect();
    let (c, g) = pair(v, &[rows, cols], &dev);
    for (what, got, want) in [
        ("argmin", g.argmin_axis(0), c.argmin_axis(0)),
        ("argmax", g.argmax_axis(0), c.argmax_axis(0)),
    ] {
        close(&got.unwrap(), &want.unwrap(), 0.0, 0.0, what);
    }
    for (what, got, want) in [
        ("min", g.min_axis(0), c.min_axis(0)),
        ("max", g.max_axis(0), c.max_axis(0)),
        ("sum", g.sum_axis(0), c.sum_axis(0)),
    ] {
        close(&got.unwrap(), &want.unwrap(), 0.0, 0.0, what);
    }
}
