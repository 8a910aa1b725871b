//! CUDA arrays compared with the CPU backend on random inputs of many shapes, plus transfers,
//! out-of-memory recovery, synchronisation, display, properties and bandwidth.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).
//!
//! Why this file is long: every array operation on the GPU against the CPU backend, one table per op family, sharing the random-input harness.

use gpukit::{Array, DType, Device, Element, Error, Scalar};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// GPU tests of this file run one at a time (they share the device's stream, and the bandwidth
// test must not time the others' work): `gpu()` gives the GPU with a lock held for the test, or
// skips (see gpukit::testing).
use gpukit::testing::serial_gpu_or_skip as gpu;

const SHAPES: &[&[usize]] = &[
    &[0],
    &[1],
    &[2],
    &[3],
    &[4],
    &[5],
    &[7],
    &[8],
    &[15],
    &[16],
    &[17],
    &[31],
    &[33],
    &[255],
    &[256],
    &[257],
    &[1000],
    &[1023],
    &[4097],
    &[3, 5],
    &[2, 3, 4],
    &[7, 11, 13],
    &[65537],
    &[(1 << 20) + 3],
];

/// Random test values of each element type.
trait Gen: Element {
    fn gen(rng: &mut StdRng) -> Self;
}
macro_rules! gen_int {
    ($($t:ty),*) => {$(impl Gen for $t { fn gen(rng: &mut StdRng) -> Self { rng.random() } })*};
}
gen_int!(u8, i32, i64, u32, u64);
impl Gen for f32 {
    fn gen(rng: &mut StdRng) -> Self {
        rng.random_range(-100.0f32..100.0)
    }
}
impl Gen for f64 {
    fn gen(rng: &mut StdRng) -> Self {
        rng.random_range(-100.0f64..100.0)
    }
}
impl Gen for bool {
    fn gen(rng: &mut StdRng) -> Self {
        rng.random()
    }
}

fn random<T: Gen>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::gen(rng)).collect()
}

/// Equal, or both NaN (NaN payloads differ between CPU and GPU).
fn same<T: Element>(a: T, b: T) -> bool {
    match (a.to_scalar(), b.to_scalar()) {
        (Scalar::Float(x), Scalar::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (x, y) => x == y,
    }
}

/// Within `tol` relative to max(1, |expected|) (or both NaN / equal infinities).
fn close<T: Element>(got: T, want: T, tol: f64) -> bool {
    let (g, w) = (got.to_f64(), want.to_f64());
    g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= tol * w.abs().max(1.0)
}

fn assert_same<T: Element>(what: &str, gpu: &Array<T>, cpu: &Array<T>) {
    assert_eq!(gpu.shape(), cpu.shape(), "{what}: shape");
    assert!(gpu.device().is_cuda(), "{what}: result left the GPU");
    let (g, c) = (gpu.to_vec().unwrap(), cpu.to_vec().unwrap());
    for (i, (x, y)) in g.iter().zip(&c).enumerate() {
        assert!(
            same(*x, *y),
            "{what} [{}]: element {i}: gpu {x:?} != cpu {y:?}",
            T::DTYPE
        );
    }
}

fn assert_close<T: Element>(what: &str, gpu: &Array<T>, cpu: &Array<T>, tol: f64) {
    assert_eq!(gpu.shape(), cpu.shape(), "{what}: shape");
    let (g, c) = (gpu.to_vec().unwrap(), cpu.to_vec().unwrap());
    for (i, (x, y)) in g.iter().zip(&c).enumerate() {
        assert!(
            close(*x, *y, tol),
            "{what} [{}]: element {i}: gpu {x:?} vs cpu {y:?}",
            T::DTYPE
        );
    }
}

/// The same random array on both devices.
fn pair<T: Gen>(rng: &mut StdRng, shape: &[usize], dev: &Device) -> (Array<T>, Array<T>) {
    let n = shape.iter().product();
    let data = random::<T>(rng, n);
    let c = Array::from_vec_on(data.clone(), shape.to_vec(), &Device::Cpu).unwrap();
    let g = Array::from_vec_on(data, shape.to_vec(), dev).unwrap();
    (g, c)
}

#[test]
fn gpu_transfers_round_trip() {
    let Some((dev, _lock)) = gpu() else { return };
    fn check<T: Gen>(rng: &mut StdRng, dev: &Device) {
        for shape in SHAPES {
            let n: usize = shape.iter().product();
            let data = random::<T>(rng, n);
            let g = Array::from_vec_on(data.clone(), shape.to_vec(), dev).unwrap();
            assert_eq!(g.device(), *dev);
            let host = g.to_host().unwrap();
            assert_eq!(host.shape(), *shape);
            assert!(host.iter().zip(&data).all(|(a, b)| same(*a, *b)));
            let back = g.to_device(&Device::Cpu).unwrap().to_device(dev).unwrap();
            assert_eq!(back.to_vec().unwrap().len(), n);
            assert!(back
                .to_vec()
                .unwrap()
                .iter()
                .zip(&data)
                .all(|(a, b)| same(*a, *b)));
            let cloned = g.try_clone().unwrap().into_shape(n).unwrap();
            assert!(cloned
                .to_vec()
                .unwrap()
                .iter()
                .zip(&data)
                .all(|(a, b)| same(*a, *b)));
            let nd = ndarray::ArrayD::from_shape_vec(shape.to_vec(), data.clone()).unwrap();
            let from_nd = Array::from_ndarray_on(&nd, dev).unwrap();
            assert_eq!(from_nd.to_host().unwrap().shape(), nd.shape());
        }
    }
    let mut rng = StdRng::seed_from_u64(1);
    check::<f32>(&mut rng, &dev);
    check::<f64>(&mut rng, &dev);
    check::<i32>(&mut rng, &dev);
    check::<i64>(&mut rng, &dev);
    check::<u8>(&mut rng, &dev);
    check::<u32>(&mut rng, &dev);
    check::<u64>(&mut rng, &dev);
    check::<bool>(&mut rng, &dev);
}

#[test]
fn gpu_constructors_match_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let cpu = Device::Cpu;
    for shape in SHAPES {
        assert_same(
            "zeros",
            &Array::<f32>::zeros_on(shape.to_vec(), &dev).unwrap(),
            &Array::zeros_on(shape.to_vec(), &cpu).unwrap(),
        );
        assert_same(
            "ones",
            &Array::<u8>::ones_on(shape.to_vec(), &dev).unwrap(),
            &Array::ones_on(shape.to_vec(), &cpu).unwrap(),
        );
        assert_same(
            "ones bool",
            &Array::<bool>::ones_on(shape.to_vec(), &dev).unwrap(),
            &Array::ones_on(shape.to_vec(), &cpu).unwrap(),
        );
        assert_same(
            "full",
            &Array::full_on(shape.to_vec(), -2.5f64, &dev).unwrap(),
            &Array::full_on(shape.to_vec(), -2.5f64, &cpu).unwrap(),
        );
        assert_same(
            "full i64",
            &Array::full_on(shape.to_vec(), i64::MIN, &dev).unwrap(),
            &Array::full_on(shape.to_vec(), i64::MIN, &cpu).unwrap(),
        );
    }
    for &(a, b, s) in &[(0i64, 10, 1), (10, -7, -3), (-5, 100_003, 7), (0, 0, 1)] {
        assert_same(
            "arange i64",
            &Array::arange_step_on(a, b, s, &dev).unwrap(),
            &Array::arange_step_on(a, b, s, &cpu).unwrap(),
        );
        let (a, b, s) = (a as i32, b as i32, s as i32);
        assert_same(
            "arange i32",
            &Array::arange_step_on(a, b, s, &dev).unwrap(),
            &Array::arange_step_on(a, b, s, &cpu).unwrap(),
        );
    }
    assert_same(
        "arange u8",
        &Array::arange_on(0u8, 255, &dev).unwrap(),
        &Array::arange_on(0u8, 255, &cpu).unwrap(),
    );
    for &(a, b, s) in &[(0.0f64, 1.0, 0.1), (5.0, -5.0, -0.3), (0.0, 1e6, 0.7)] {
        assert_same(
            "arange f64",
            &Array::arange_step_on(a, b, s, &dev).unwrap(),
            &Array::arange_step_on(a, b, s, &cpu).unwrap(),
        );
        let (a, b, s) = (a as f32, b as f32, s as f32);
        assert_same(
            "arange f32",
            &Array::arange_step_on(a, b, s, &dev).unwrap(),
            &Array::arange_step_on(a, b, s, &cpu).unwrap(),
        );
    }
    for &n in &[0usize, 1, 2, 5, 1000, 12345] {
        assert_same(
            "linspace f64",
            &Array::linspace_on(-1.0f64, 3.0, n, &dev).unwrap(),
            &Array::linspace_on(-1.0f64, 3.0, n, &cpu).unwrap(),
        );
        assert_same(
            "linspace f32",
            &Array::linspace_on(0.0f32, 0.3, n, &dev).unwrap(),
            &Array::linspace_on(0.0f32, 0.3, n, &cpu).unwrap(),
        );
    }
    let d = Array::arange_on(0i64, 10, &dev).unwrap();
    assert_eq!(d.to_vec().unwrap(), (0..10).collect::<Vec<_>>());
    let like = Array::<f32>::zeros_like(&d).unwrap();
    assert_eq!((like.shape(), like.device()), (d.shape(), dev));
}

macro_rules! elementwise_for {
    ($rng:expr, $dev:expr, $t:ty) => {{
        for shape in SHAPES {
            let (ga, ca) = pair::<$t>($rng, shape, $dev);
            let (gb, cb) = pair::<$t>($rng, shape, $dev);
            let s: $t = <$t as Gen>::gen($rng);
            let what = format!("{shape:?}");
            assert_same(
                &format!("a+b {what}"),
                &(&ga + &gb).unwrap(),
                &(&ca + &cb).unwrap(),
            );
            assert_same(
                &format!("a-b {what}"),
                &(&ga - &gb).unwrap(),
                &(&ca - &cb).unwrap(),
            );
            assert_same(
                &format!("a*b {what}"),
                &(&ga * &gb).unwrap(),
                &(&ca * &cb).unwrap(),
            );
            assert_same(
                &format!("a/b {what}"),
                &(&ga / &gb).unwrap(),
                &(&ca / &cb).unwrap(),
            );
            assert_same(
                &format!("a%b {what}"),
                &(&ga % &gb).unwrap(),
                &(&ca % &cb).unwrap(),
            );
            assert_same(
                &format!("a+s {what}"),
                &(&ga + s).unwrap(),
                &(&ca + s).unwrap(),
            );
            assert_same(
                &format!("a-s {what}"),
                &(&ga - s).unwrap(),
                &(&ca - s).unwrap(),
            );
            assert_same(
                &format!("a/s {what}"),
                &(&ga / s).unwrap(),
                &(&ca / s).unwrap(),
            );
            assert_same(
                &format!("s-a {what}"),
                &(s - &ga).unwrap(),
                &(s - &ca).unwrap(),
            );
            assert_same(
                &format!("s/a {what}"),
                &(s / &ga).unwrap(),
                &(s / &ca).unwrap(),
            );
            assert_same(
                &format!("s%a {what}"),
                &(s % &ga).unwrap(),
                &(s % &ca).unwrap(),
            );
            assert_same(
                &format!("s*a {what}"),
                &(s * &ga).unwrap(),
                &(s * &ca).unwrap(),
            );
            assert_same(&format!("-a {what}"), &(-&ga).unwrap(), &(-&ca).unwrap());
            assert_same(
                &format!("abs {what}"),
                &ga.abs().unwrap(),
                &ca.abs().unwrap(),
            );
            let (mut gi, mut ci) = (ga.try_clone().unwrap(), ca.try_clone().unwrap());
            gi *= s;
            ci *= s;
            gi += &gb;
            ci += &cb;
            gi -= &gb;
            ci -= &cb;
            gi.rem_in_place(&gb).unwrap();
            ci.rem_in_place(&cb).unwrap();
            assert_same(&format!("in place {what}"), &gi, &ci);
            assert_same(
                &format!("by value {what}"),
                &((ga.try_clone().unwrap() * &gb).unwrap() + s).unwrap(),
                &((ca.try_clone().unwrap() * &cb).unwrap() + s).unwrap(),
            );
            for (name, g, c) in [
                ("eq", ga.eq(&gb), ca.eq(&cb)),
                ("ne", ga.ne(&gb), ca.ne(&cb)),
                ("lt", ga.lt(&gb), ca.lt(&cb)),
                ("le", ga.le(s), ca.le(s)),
                ("gt", ga.gt(s), ca.gt(s)),
                ("ge", ga.ge(&ga), ca.ge(&ca)),
            ] {
                assert_same(&format!("{name} {what}"), &g.unwrap(), &c.unwrap());
            }
        }
    }};
}

#[test]
fn gpu_elementwise_matches_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(2);
    elementwise_for!(&mut rng, &dev, f32);
    elementwise_for!(&mut rng, &dev, f64);
    elementwise_for!(&mut rng, &dev, i32);
    elementwise_for!(&mut rng, &dev, i64);
    elementwise_for!(&mut rng, &dev, u8);
    elementwise_for!(&mut rng, &dev, u32);
    elementwise_for!(&mut rng, &dev, u64);
    // fill, item, count_nonzero.
    let mut f = Array::<f64>::zeros_on([3, 1001], &dev).unwrap();
    f.fill(-1.25).unwrap();
    assert_eq!(f.to_vec().unwrap(), vec![-1.25; 3003]);
    assert_eq!(f.count_nonzero().unwrap(), 3003);
    assert_eq!(Array::full_on((), 9u32, &dev).unwrap().item().unwrap(), 9);
    let (g, c) = pair::<i32>(&mut rng, &[100_003], &dev);
    let (gm, cm) = (g.gt(0).unwrap(), c.gt(0).unwrap());
    assert_eq!(gm.count_nonzero().unwrap(), cm.count_nonzero().unwrap());
    // Integer edge cases: division by zero and MIN / -1.
    let a = Array::from_slice_on(&[7i32, i32::MIN, -9, 0], &dev).unwrap();
    let b = Array::from_slice_on(&[0i32, -1, 2, 0], &dev).unwrap();
    assert_eq!(
        (&a / &b).unwrap().to_vec().unwrap(),
        vec![0, i32::MIN, -4, 0]
    );
    assert_eq!((&a % &b).unwrap().to_vec().unwrap(), vec![0, 0, -1, 0]);
    let bools = Array::from_slice_on(&[true, false, true], &dev).unwrap();
    assert_eq!(
        bools.eq(true).unwrap().to_vec().unwrap(),
        vec![true, false, true]
    );
}

#[test]
fn gpu_math_matches_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(3);
    macro_rules! math_for {
        ($t:ty, $tol:expr) => {
            for shape in SHAPES {
                let (g, c) = pair::<$t>(&mut rng, shape, &dev);
                let (gp, cp) = (g.abs().unwrap(), c.abs().unwrap());
                let w = format!("{shape:?}");
                assert_same(
                    &format!("sqrt {w}"),
                    &gp.sqrt().unwrap(),
                    &cp.sqrt().unwrap(),
                );
                assert_close(
                    &format!("ln {w}"),
                    &gp.ln().unwrap(),
                    &cp.ln().unwrap(),
                    $tol,
                );
                let (gs, cs) = ((&g * 0.05).unwrap(), (&c * 0.05).unwrap());
                assert_close(
                    &format!("exp {w}"),
                    &gs.exp().unwrap(),
                    &cs.exp().unwrap(),
                    $tol,
                );
                assert_close(
                    &format!("sin {w}"),
                    &g.sin().unwrap(),
                    &c.sin().unwrap(),
                    $tol,
                );
                assert_close(
                    &format!("cos {w}"),
                    &g.cos().unwrap(),
                    &c.cos().unwrap(),
                    $tol,
                );
                assert_close(
                    &format!("tanh {w}"),
                    &gs.tanh().unwrap(),
                    &cs.tanh().unwrap(),
                    $tol,
                );
                assert_close(
                    &format!("powf {w}"),
                    &gp.powf(1.7).unwrap(),
                    &cp.powf(1.7).unwrap(),
                    $tol,
                );
            }
        };
    }
    math_for!(f32, 1e-5);
    math_for!(f64, 1e-13);
}

#[test]
fn gpu_reductions_match_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(4);
    macro_rules! exact_for {
        ($t:ty) => {
            for shape in SHAPES {
                let (g, c) = pair::<$t>(&mut rng, shape, &dev);
                assert_eq!(
                    g.sum().unwrap(),
                    c.sum().unwrap(),
                    "sum {shape:?} {}",
                    stringify!($t)
                );
                if c.size() > 0 {
                    assert_eq!(g.min().unwrap(), c.min().unwrap(), "min {shape:?}");
                    assert_eq!(g.max().unwrap(), c.max().unwrap(), "max {shape:?}");
                } else {
                    assert!(matches!(g.min(), Err(Error::Shape(_))));
                }
            }
        };
    }
    exact_for!(i32);
    exact_for!(i64);
    exact_for!(u8);
    exact_for!(u32);
    exact_for!(u64);
    macro_rules! float_for {
        ($t:ty, $tol:expr) => {
            for shape in SHAPES {
                let (g, c) = pair::<$t>(&mut rng, shape, &dev);
                let scale: f64 = c.abs().unwrap().sum().unwrap() as f64 + 1.0;
                let (gs, cs) = (g.sum().unwrap() as f64, c.sum().unwrap() as f64);
                assert!(
                    (gs - cs).abs() <= $tol * scale,
                    "sum {shape:?}: gpu {gs} cpu {cs}"
                );
                let (gm, cm) = (g.mean().unwrap() as f64, c.mean().unwrap() as f64);
                assert!(
                    (gm - cm).abs() <= $tol * scale || (gm.is_nan() && cm.is_nan()),
                    "mean {shape:?}"
                );
                if c.size() > 0 {
                    assert_eq!(g.min().unwrap(), c.min().unwrap(), "min {shape:?}");
                    assert_eq!(g.max().unwrap(), c.max().unwrap(), "max {shape:?}");
                }
            }
        };
    }
    float_for!(f32, 1e-5);
    float_for!(f64, 1e-13);
    let ones = Array::<f32>::ones_on(1 << 24, &dev).unwrap();
    assert_eq!(
        ones.sum().unwrap(),
        (1 << 24) as f32,
        "tree reduction keeps f32 sums exact here"
    );
    let nan = Array::from_slice_on(&[1.0f64, f64::NAN, 3.0], &dev).unwrap();
    assert!(nan.max().unwrap().is_nan() && nan.min().unwrap().is_nan());
}

#[test]
fn gpu_astype_matches_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let specials = [
        0.0f64,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -1.7,
        2.9,
        255.0,
        256.0,
        300.0,
        -300.0,
        65536.5,
        3e9,
        -3e9,
        1e19,
        2e19,
        1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut rng = StdRng::seed_from_u64(5);
    let mut values = specials.to_vec();
    values.extend((0..5000).map(|_| rng.random_range(-1e10f64..1e10)));
    let n = values.len();
    macro_rules! from {
        ($src:ty) => {{
            let data: Vec<$src> = values.iter().map(|&v| <$src>::cast_from(v)).collect();
            let c = Array::from_vec_on(data.clone(), n, &Device::Cpu).unwrap();
            let g = Array::from_vec_on(data, n, &dev).unwrap();
            macro_rules! to {
                ($dst:ty) => {
                    assert_same(
                        &format!("{} -> {}", stringify!($src), stringify!($dst)),
                        &g.astype::<$dst>().unwrap(),
                        &c.astype::<$dst>().unwrap(),
                    );
                };
            }
            to!(f32);
            to!(f64);
            to!(i32);
            to!(i64);
            to!(u8);
            to!(u32);
            to!(u64);
            to!(bool);
        }};
    }
    from!(f32);
    from!(f64);
    from!(i32);
    from!(i64);
    from!(u8);
    from!(u32);
    from!(u64);
    from!(bool);
}

#[test]
fn gpu_out_of_memory_is_an_error_and_recoverable() {
    let Some((dev, _lock)) = gpu() else { return };
    let total = match dev.properties().unwrap() {
        gpukit::DeviceProperties::Cuda(p) => p.total_memory,
        other => panic!("expected CUDA properties, got {other:?}"),
    };
    let requested = total + (1 << 30);
    let err = Array::<u8>::zeros_on(requested, &dev).unwrap_err();
    match &err {
        Error::OutOfMemory {
            device,
            requested: r,
            free,
        } => {
            assert_eq!(device, "cuda:0");
            assert_eq!(*r, requested);
            assert!(*free > 0 && *free <= total, "free {free} of {total}");
        }
        other => panic!("expected OutOfMemory, got {other}"),
    }
    assert!(err.to_string().contains(&requested.to_string()), "{err}");
    let also = Array::<f64>::full_on(total / 8 + 1, 1.0, &dev).unwrap_err();
    assert!(matches!(also, Error::OutOfMemory { .. }), "{also}");
    // The context survives: a normal allocation and computation still work.
    let a = Array::<f32>::ones_on(1 << 20, &dev).unwrap();
    assert_eq!((&a * 3.0).unwrap().sum().unwrap(), 3.0 * (1 << 20) as f32);
    gpukit::synchronize().unwrap();
}

#[test]
fn gpu_work_is_asynchronous_until_synchronize() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut a = Array::<f32>::zeros_on(1 << 24, &dev).unwrap();
    let b = Array::<f32>::ones_on(1 << 24, &dev).unwrap();
    for _ in 0..100 {
        a += &b;
    }
    a.synchronize().unwrap();
    dev.synchronize().unwrap();
    gpukit::synchronize().unwrap();
    assert_eq!(a.max().unwrap(), 100.0);
    assert_eq!(a.min().unwrap(), 100.0);
}

#[test]
fn gpu_display_and_properties() {
    let Some((dev, _lock)) = gpu() else { return };
    let a = Array::arange_on(0.0f64, 3.0, &dev).unwrap();
    assert_eq!(
        a.to_string(),
        "array([0., 1., 2.], dtype=float64, device=cuda:0)"
    );
    // The GPU repr (built from only the displayed elements) equals the CPU repr.
    let mut rng = StdRng::seed_from_u64(6);
    for shape in [
        &[7usize][..],
        &[1001],
        &[40, 30],
        &[3, 400],
        &[12, 11, 10],
        &[2, 3, 4, 50],
    ] {
        let (g, c) = pair::<f32>(&mut rng, shape, &dev);
        assert_eq!(
            g.to_string().replace("cuda:0", "cpu"),
            c.to_string(),
            "{shape:?}"
        );
        let (g, c) = pair::<i32>(&mut rng, shape, &dev);
        assert_eq!(
            g.to_string().replace("cuda:0", "cpu"),
            c.to_string(),
            "{shape:?}"
        );
    }
    let big = Array::<i64>::arange_on(0, 5000, &dev).unwrap();
    assert!(big.to_string().contains("..., 4997, 4998, 4999]"), "{big}");
    match dev.properties().unwrap() {
        gpukit::DeviceProperties::Cuda(p) => {
            assert!(!p.name.is_empty());
            assert!(p.compute_capability.0 >= 7, "{p:?}");
            assert!(p.multiprocessors > 0 && p.warp_size == 32 && p.max_threads_per_block >= 1024);
            assert!(p.max_block_dims[0] >= 1024 && p.max_grid_dims[0] >= 65535);
            assert!(p.total_memory > 1 << 30 && p.shared_memory_per_block >= 48 << 10);
            assert!(p.clock_khz > 0 && p.l2_cache_bytes > 0);
            println!("{}", gpukit::DeviceProperties::Cuda(p));
        }
        other => panic!("expected CUDA properties, got {other:?}"),
    }
    // 8 ops + 64 casts + 8 sorts + random, diagonal, complex, layout, strided copy, 8 strided
    // binary, 8 axes, 8 extra
    assert_eq!(dev.precompile_builtin_kernels().unwrap(), 109);
    assert_eq!(Device::Cpu.precompile_builtin_kernels().unwrap(), 0);
    if std::env::var("GPUKIT_DEVICE").is_err() {
        assert_eq!(
            gpukit::default_device(),
            dev,
            "the default device is the GPU"
        );
    }
    let stats = gpukit::memory_stats(&dev);
    assert!(
        stats.arrays >= 2 && stats.bytes >= a.nbytes() + big.nbytes(),
        "{stats}"
    );
    assert_eq!(a.dtype(), DType::F64);
}

#[test]
fn gpu_elementwise_bandwidth_is_near_copy_bandwidth() {
    let Some((dev, _lock)) = gpu() else { return };
    let n = 1usize << 26;
    let a = Array::<f32>::ones_on(n, &dev).unwrap();
    let b = Array::<f32>::ones_on(n, &dev).unwrap();
    let mut c = Array::<f32>::zeros_on(n, &dev).unwrap();
    let reps = 20;
    let time = |f: &mut dyn FnMut()| {
        f();
        gpukit::synchronize().unwrap();
        let t = std::time::Instant::now();
        for _ in 0..reps {
            f();
        }
        gpukit::synchronize().unwrap();
        t.elapsed().as_secs_f64() / reps as f64
    };
    let add = time(&mut || drop((&a + &b).unwrap()));
    let add_in_place = time(&mut || c += &b);
    // Reference: the driver's device-to-device copy of the same buffer (read + write).
    let ctx = cudarc::driver::CudaContext::new(0).unwrap();
    // One stream, as gpukit uses: no cross-stream event tracking.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let src = stream.alloc_zeros::<f32>(n).unwrap();
    let mut dst = stream.alloc_zeros::<f32>(n).unwrap();
    stream.memcpy_dtod(&src, &mut dst).unwrap();
    stream.synchronize().unwrap();
    let t = std::time::Instant::now();
    for _ in 0..reps {
        stream.memcpy_dtod(&src, &mut dst).unwrap();
    }
    stream.synchronize().unwrap();
    let copy = t.elapsed().as_secs_f64() / reps as f64;
    let gbs = |bytes: usize, s: f64| bytes as f64 / s / 1e9;
    let bytes = n * 4;
    let (add_bw, inplace_bw, copy_bw) = (
        gbs(3 * bytes, add),
        gbs(3 * bytes, add_in_place),
        gbs(2 * bytes, copy),
    );
    println!("elementwise f32 add, 2^26 elements: {add_bw:.0} GB/s (a + b), {inplace_bw:.0} GB/s (c += b); cuMemcpyDtoD {copy_bw:.0} GB/s");
    // Launch overhead of tiny elementwise ops, next to a raw cudarc launch of a similar kernel.
    let mut tiny = Array::<f32>::ones_on(1, &dev).unwrap();
    let per_op = time(&mut || drop((&tiny + 1.0).unwrap()));
    let per_in_place = time(&mut || tiny += 1.0);
    let ptx = cudarc::nvrtc::compile_ptx(
        "extern \"C\" __global__ void inc(float* x, unsigned long long n) { unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }",
    )
    .unwrap();
    let module = ctx.load_module(ptx).unwrap();
    let inc = module.load_function("inc").unwrap();
    let mut x = stream.alloc_zeros::<f32>(1).unwrap();
    let one = 1u64;
    let cfg = cudarc::driver::LaunchConfig::for_num_elems(1);
    let raw = {
        use cudarc::driver::PushKernelArg;
        let mut launch = || unsafe {
            stream
                .launch_builder(&inc)
                .arg(&mut x)
                .arg(&one)
                .launch(cfg)
                .unwrap();
        };
        launch();
        stream.synchronize().unwrap();
        let t = std::time::Instant::now();
        for _ in 0..1000 {
            launch();
        }
        stream.synchronize().unwrap();
        t.elapsed().as_secs_f64() / 1000.0
    };
    println!(
        "tiny op: {:.1} us (a + 1.0, with allocation), {:.1} us (a += 1.0); raw cudarc launch {:.1} us",
        per_op * 1e6,
        per_in_place * 1e6,
        raw * 1e6
    );
    assert!(
        per_in_place < raw + 50e-6,
        "gpukit adds {:.1} us per launch",
        (per_in_place - raw) * 1e6
    );
    assert!(
        inplace_bw >= 0.7 * copy_bw,
        "c += b at {inplace_bw:.0} GB/s vs copy {copy_bw:.0} GB/s"
    );
    assert!(
        add_bw >= 0.6 * copy_bw,
        "a + b at {add_bw:.0} GB/s vs copy {copy_bw:.0} GB/s"
    );
    assert_eq!(c.max().unwrap(), (reps + 1) as f32);
}
