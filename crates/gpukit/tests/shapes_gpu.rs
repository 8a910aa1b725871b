//! Shapes and views on a CUDA device against the CPU backend and ndarray: transposes and
//! permutations (the tiled and the general strided copy), slices with steps, reshapes of views,
//! concatenate/stack, and NumPy broadcasting in arithmetic and comparisons (the strided binary
//! kernels), on random shapes including 0-sized and 1-element ones, for several element widths.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side is tested beside the code
//! (`src/array/view/tests.rs`).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{concatenate, s, stack, Array, Device, Element, NewAxis};
use ndarray::{ArrayD, Axis, IxDyn};

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
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut axes: Vec<usize> = (0..n).collect();
        for k in (1..n).rev() {
            axes.swap(k, self.below(k + 1));
        }
        axes
    }
}

/// Host data of `shape` made of `f(i)`.
fn host<T: Element>(shape: &[usize], f: impl Fn(usize) -> T) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

/// The same host data on the CPU backend and on `dev`.
fn both<T: Element>(h: &ArrayD<T>, dev: &Device) -> (Array<T>, Array<T>) {
    (
        Array::from_ndarray_on(h, &Device::Cpu).unwrap(),
        Array::from_ndarray_on(h, dev).unwrap(),
    )
}

/// Transposes and random permutations of random shapes, copied on the GPU, equal ndarray's
/// `permuted_axes` (and the CPU backend's copy) for elements of 1, 4 and 8 bytes.
#[test]
fn permuted_copies_match_ndarray() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Rng(0x1234_5678);
    fn check<T: Element + std::fmt::Debug>(h: &ArrayD<T>, axes: &[usize], dev: &Device) {
        let (c, g) = both(h, dev);
        let expected = h.clone().permuted_axes(IxDyn(axes));
        let got = g.permute(axes).unwrap().copy().unwrap();
        assert_eq!(got.device(), *dev);
        assert_eq!(got.to_host().unwrap(), expected, "{:?} {axes:?}", h.shape());
        assert_eq!(
            c.permute(axes).unwrap().copy().unwrap().to_host().unwrap(),
            expected
        );
    }
    for case in 0..80 {
        let ndim = 1 + case % 5;
        let shape = rng.shape(ndim, if ndim <= 2 { 70 } else { 9 });
        let axes = rng.permutation(ndim);
        check(&host(&shape, |i| i as f64 * 0.5), &axes, &dev);
        check(&host(&shape, |i| (i % 251) as u8), &axes, &dev);
        check(&host(&shape, |i| (i as i32) - 1000), &axes, &dev);
        check(&host(&shape, |i| i % 3 == 0), &axes, &dev);
    }
    // The tiled kernel: 2-D transposes of sizes around the 32x32 tile, batched transposes, and
    // transposes larger than one grid column of tiles.
    for (r, c) in [
        (1, 1),
        (31, 33),
        (32, 32),
        (33, 65),
        (1000, 3),
        (3, 1000),
        (257, 129),
    ] {
        check(&host(&[r, c], |i| i as f64), &[1, 0], &dev);
        check(&host(&[r, c], |i| i as f32), &[1, 0], &dev);
        check(&host(&[3, r, c], |i| i as u64), &[0, 2, 1], &dev);
        check(&host(&[r, 2, c], |i| (i % 200) as u8), &[1, 2, 0], &dev);
    }
    // Ten axes: more than one launch takes (8), so the leading ones loop on the host.
    let shape = vec![2usize, 3, 2, 2, 1, 2, 3, 2, 2, 2];
    let axes: Vec<usize> = vec![9, 0, 8, 1, 7, 2, 6, 3, 5, 4];
    check(&host(&shape, |i| i as i64), &axes, &dev);
    // 0-sized and 1-element arrays.
    check(&host(&[0, 5], |i| i as f64), &[1, 0], &dev);
    check(&host(&[1, 1, 1], |i| i as f64), &[2, 0, 1], &dev);
}

/// Slices with steps (negative too), indices and new axes, copied and read on the GPU.
#[test]
fn slices_with_steps_match_ndarray() {
    let Some((dev, _lock)) = gpu() else { return };
    let h = host(&[9, 10, 11], |i| i as f32 * 0.25);
    let (c, g) = both(&h, &dev);
    let cases: Vec<ndarray::SliceInfo<Vec<ndarray::SliceInfoElem>, IxDyn, IxDyn>> = vec![
        s![1..7, .., ..;2].to_vec().try_into().unwrap(),
        s![..;-1, 3, 1..;3].to_vec().try_into().unwrap(),
        s![-1, ..;-2, -4..-1].to_vec().try_into().unwrap(),
        s![.., NewAxis, 0..0, ..].to_vec().try_into().unwrap(),
        s![2..3, 4..5, 6..7].to_vec().try_into().unwrap(),
        s![1..8;3, 1..9;-3, ..;-1].to_vec().try_into().unwrap(),
        s![2..5, .., ..].to_vec().try_into().unwrap(),
    ];
    for info in cases {
        let expected = h.slice(info.clone()).to_owned();
        let v = g.slice(info.as_ref()).unwrap();
        assert_eq!(v.to_host().unwrap(), expected, "{info:?}");
        assert_eq!(v.copy().unwrap().to_host().unwrap(), expected, "{info:?}");
        assert_eq!(c.slice(info.as_ref()).unwrap().to_host().unwrap(), expected);
        // Views of views: a transpose of the slice.
        let vt = v.t().copy().unwrap().to_host().unwrap();
        assert_eq!(vt, expected.t().to_owned(), "{info:?} transposed");
    }
}

/// Reshapes (with `-1`), views reshaped without a copy, flatten, squeeze and expand_dims.
#[test]
fn reshapes_and_flatten_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let a = Array::<f64>::arange_on(0.0, 120.0, &dev).unwrap();
    let b = a.reshape([4, -1, 5]).unwrap();
    assert_eq!(b.shape(), &[4, 6, 5]);
    assert_eq!(b.to_vec().unwrap(), a.to_vec().unwrap());
    let t = b.permute(&[2, 0, 1]).unwrap();
    let flat = t.flatten().unwrap();
    let expected: Vec<f64> = b
        .to_host()
        .unwrap()
        .permuted_axes(IxDyn(&[2, 0, 1]))
        .iter()
        .copied()
        .collect();
    assert_eq!(flat.to_vec().unwrap(), expected);
    let split = b
        .slice(s![.., 1..5, ..])
        .unwrap()
        .reshape([4, 2, 2, 5])
        .unwrap();
    let cpu = Array::<f64>::arange_on(0.0, 120.0, &Device::Cpu)
        .unwrap()
        .into_shape([4, 6, 5])
        .unwrap();
    let cpu_split = cpu
        .slice(s![.., 1..5, ..])
        .unwrap()
        .reshape([4, 2, 2, 5])
        .unwrap();
    assert_eq!(
        split.copy().unwrap().to_vec().unwrap(),
        cpu_split.copy().unwrap().to_vec().unwrap()
    );
    let e = b.expand_dims(1).unwrap().squeeze().copy().unwrap();
    assert_eq!(e.shape(), &[4, 6, 5]);
    let r = Array::<i32>::arange_on(0, 4, &dev).unwrap();
    assert_eq!(
        r.broadcast_to([3, 4]).unwrap().to_vec().unwrap(),
        [0, 1, 2, 3].repeat(3)
    );
}

/// `f` on `a` and `b` broadcast together (the reference).
fn broadcast_ref<T: Element, R: Clone>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    f: impl Fn(T, T) -> R,
) -> ArrayD<R> {
    let n = a.ndim().max(b.ndim());
    let pad = |s: &[usize]| {
        let mut v = vec![1; n - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (sa, sb) = (pad(a.shape()), pad(b.shape()));
    let shape: Vec<usize> = sa
        .iter()
        .zip(&sb)
        .map(|(&x, &y)| if x == 1 { y } else { x })
        .collect();
    let av = a.broadcast(IxDyn(&shape)).unwrap();
    let bv = b.broadcast(IxDyn(&shape)).unwrap();
    ndarray::Zip::from(&av)
        .and(&bv)
        .map_collect(|&x, &y| f(x, y))
}

/// Random pairs of shapes that broadcast together (axes of 1, missing leading axes, 0-sized).
fn shape_pairs(rng: &mut Rng, count: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    (0..count)
        .map(|_| {
            let ndim = 1 + rng.below(4);
            let full = rng.shape(ndim, 6);
            let mut pick = || {
                let drop = rng.below(ndim);
                full[drop..]
                    .iter()
                    .map(|&d| if rng.below(3) == 0 { 1 } else { d })
                    .collect::<Vec<_>>()
            };
            (pick(), pick())
        })
        .collect()
}

/// Every arithmetic operator and comparison with broadcasting, GPU against ndarray and against
/// the CPU backend, for f64, f32, i64 and u8.
#[test]
fn broadcasting_matches_ndarray_and_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Rng(42);
    macro_rules! check_type {
        ($t:ty, $gen:expr) => {{
            for (sa, sb) in shape_pairs(&mut rng, 40) {
                let ha: ArrayD<$t> = host(&sa, $gen);
                let hb: ArrayD<$t> = host(&sb, |i| {
                    let v: $t = ($gen)(i + 7);
                    if v == <$t>::default() {
                        (($gen)(1))
                    } else {
                        v
                    }
                });
                let (ca, ga) = both(&ha, &dev);
                let (cb, gb) = both(&hb, &dev);
                let ops: [(
                    &str,
                    fn(&Array<$t>, &Array<$t>) -> gpukit::Result<Array<$t>>,
                ); 5] = [
                    ("+", |a, b| a + b),
                    ("-", |a, b| a - b),
                    ("*", |a, b| a * b),
                    ("/", |a, b| a / b),
                    ("%", |a, b| a % b),
                ];
                for (name, f) in ops {
                    let g = f(&ga, &gb).unwrap();
                    let c = f(&ca, &cb).unwrap();
                    assert_eq!(g.shape(), c.shape());
                    assert_eq!(
                        g.to_vec().unwrap(),
                        c.to_vec().unwrap(),
                        "{sa:?} {name} {sb:?}"
                    );
                }
                let sum = broadcast_ref(&ha, &hb, |x: $t, y: $t| x + y);
                assert_eq!(
                    (&ga + &gb).unwrap().to_host().unwrap(),
                    sum,
                    "{sa:?} + {sb:?}"
                );
                assert_eq!(
                    ga.lt(&gb).unwrap().to_host().unwrap(),
                    broadcast_ref(&ha, &hb, |x, y| x < y)
                );
                assert_eq!(
                    ga.ge(&gb).unwrap().to_host().unwrap(),
                    broadcast_ref(&ha, &hb, |x, y| x >= y)
                );
                assert_eq!(
                    ga.eq(&gb).unwrap().to_host().unwrap(),
                    broadcast_ref(&ha, &hb, |x, y| x == y)
                );
                assert_eq!(
                    ga.ne(&gb).unwrap().to_host().unwrap(),
                    broadcast_ref(&ha, &hb, |x, y| x != y)
                );
            }
        }};
    }
    check_type!(f64, |i: usize| (i % 17) as f64 - 8.0);
    check_type!(f32, |i: usize| (i % 13) as f32 * 0.5 - 3.0);
    check_type!(i64, |i: usize| (i % 23) as i64 - 11);
    check_type!(u8, |i: usize| (i % 200) as u8);
    // Bool comparisons broadcast too.
    let hb = host(&[3, 1], |i| i % 2 == 0);
    let hc = host(&[4], |i| i % 3 == 0);
    let (_, gb) = both(&hb, &dev);
    let (_, gc) = both(&hc, &dev);
    assert_eq!(
        gb.eq(&gc).unwrap().to_host().unwrap(),
        broadcast_ref(&hb, &hc, |x, y| x == y)
    );
    // Incompatible shapes name both.
    let x = Array::<f32>::zeros_on([3, 2], &dev).unwrap();
    let y = Array::<f32>::zeros_on([3], &dev).unwrap();
    let e = (&x + &y).unwrap_err().to_string();
    assert!(e.contains("[3, 2]") && e.contains("[3]"), "{e}");
    // Different devices are an error, never a silent copy.
    let z = Array::<f32>::zeros_on([2], &Device::Cpu).unwrap();
    assert!(matches!(
        (&x + &z).unwrap_err(),
        gpukit::Error::DeviceMismatch(_)
    ));
}

/// In-place operators with a broadcast right-hand side, and operators on views (transposes,
/// slices) on the GPU.
#[test]
fn in_place_broadcasts_and_view_operators() {
    let Some((dev, _lock)) = gpu() else { return };
    let h = host(&[5, 7], |i| i as f64);
    let row = host(&[7], |i| i as f64 * 10.0);
    let col = host(&[5, 1], |i| i as f64 + 2.0);
    let (_, mut g) = both(&h, &dev);
    let (_, grow) = both(&row, &dev);
    let (_, gcol) = both(&col, &dev);
    g += &grow;
    g.mul_in_place(&gcol).unwrap();
    let expected = broadcast_ref(&broadcast_ref(&h, &row, |x, y| x + y), &col, |x, y| x * y);
    assert_eq!(g.to_host().unwrap(), expected);
    let e = Array::<f64>::zeros_on([7], &dev)
        .unwrap()
        .add_in_place(&g)
        .unwrap_err();
    assert!(
        e.to_string().contains("[7]") && e.to_string().contains("[5, 7]"),
        "{e}"
    );

    let (ca, ga) = both(&host(&[6, 4], |i| i as i32), &dev);
    let (cb, gb) = both(&host(&[4, 6], |i| (i * 3) as i32), &dev);
    let gpu_sum = (&ga.t() + &gb).unwrap();
    let cpu_sum = (&ca.t() + &cb).unwrap();
    assert_eq!(gpu_sum.to_vec().unwrap(), cpu_sum.to_vec().unwrap());
    let g2 = (ga.slice(s![..;2, ..]).unwrap() * ga.slice(s![1..;2, ..;-1]).unwrap()).unwrap();
    let c2 = (ca.slice(s![..;2, ..]).unwrap() * ca.slice(s![1..;2, ..;-1]).unwrap()).unwrap();
    assert_eq!(g2.to_vec().unwrap(), c2.to_vec().unwrap());
    assert_eq!(
        (ga.t() * 3).unwrap().to_vec().unwrap(),
        (ca.t() * 3).unwrap().to_vec().unwrap()
    );
    let gm = ga.t().gt(&gb).unwrap();
    let cm = ca.t().gt(&cb).unwrap();
    assert_eq!(gm.to_vec().unwrap(), cm.to_vec().unwrap());
}

/// concatenate and stack of arrays and views on the GPU against ndarray.
#[test]
fn concatenate_and_stack_match_ndarray() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = Rng(7);
    for case in 0..30usize {
        let ndim = 1 + rng.below(3);
        let shape = rng.shape(ndim, 5);
        let axis = rng.below(ndim);
        let hs: Vec<ArrayD<f32>> = (0..3)
            .map(|k| {
                let mut s = shape.clone();
                s[axis] = rng.below(5);
                host(&s, |i| (i + 100 * k + case) as f32)
            })
            .collect();
        let gs: Vec<Array<f32>> = hs
            .iter()
            .map(|h| Array::from_ndarray_on(h, &dev).unwrap())
            .collect();
        let views: Vec<_> = hs.iter().map(|h| h.view()).collect();
        let c = concatenate(&gs, axis).unwrap();
        assert_eq!(c.device(), dev);
        assert_eq!(
            c.to_host().unwrap(),
            ndarray::concatenate(Axis(axis), &views).unwrap()
        );
        let same: Vec<ArrayD<f32>> = (0..3)
            .map(|k| host(&shape, |i| (i * (k + 1)) as f32))
            .collect();
        let gsame: Vec<Array<f32>> = same
            .iter()
            .map(|h| Array::from_ndarray_on(h, &dev).unwrap())
            .collect();
        let hv: Vec<_> = same.iter().map(|h| h.view()).collect();
        for ax in 0..=ndim {
            assert_eq!(
                stack(&gsame, ax).unwrap().to_host().unwrap(),
                ndarray::stack(Axis(ax), &hv).unwrap()
            );
        }
    }
    let h1 = host(&[3, 5], |i| i as u8);
    let h2 = host(&[2, 5], |i| (i + 50) as u8);
    let (_, g1) = both(&h1, &dev);
    let (_, g2) = both(&h2, &dev);
    let c = concatenate(&[g1.t(), g2.t()], -1).unwrap();
    assert_eq!(
        c.to_host().unwrap(),
        ndarray::concatenate(Axis(1), &[h1.t(), h2.t()]).unwrap()
    );
    let cpu = Array::<u8>::zeros_on([3, 5], &Device::Cpu).unwrap();
    assert!(matches!(
        concatenate(&[&g1, &cpu], 0).unwrap_err(),
        gpukit::Error::DeviceMismatch(_)
    ));
}

/// Loops past 2^32 elements take the kernels' 64-bit index arithmetic: a broadcast sum of
/// 65537 x 65537 `u8` (4.3 GB) and a copy of it with its columns reversed (the general strided
/// copy, not the tiled one), checked at every element past 2^32 - 2^20 and on a sample before.
#[test]
fn loops_past_four_billion_elements() {
    let Some((dev, _lock)) = gpu() else { return };
    let total = match dev.properties().unwrap() {
        gpukit::DeviceProperties::Cuda(p) => p.total_memory,
        other => panic!("expected CUDA properties, got {other:?}"),
    };
    if total < 16 << 30 {
        println!("skipped: the 64-bit index test needs 16 GiB of GPU memory ({total} bytes here)");
        return;
    }
    let m = 65_537usize;
    let x =
        Array::from_slice_on(&(0..m).map(|i| (i % 256) as u8).collect::<Vec<_>>(), &dev).unwrap();
    let col = x.reshape([m, 1]).unwrap();
    let sum = (&col + &x).unwrap();
    assert_eq!(sum.shape(), &[m, m]);
    let checked = |v: &[u8], value: &dyn Fn(usize, usize) -> u8, what: &str| {
        let n = m * m;
        assert_eq!(v.len(), n);
        let tail = (1usize << 32) - (1 << 20);
        for k in (0..tail).step_by(9_973).chain(tail..n) {
            let (i, j) = (k / m, k % m);
            assert_eq!(v[k], value(i, j), "{what} at [{i}, {j}]");
        }
    };
    checked(&sum.to_vec().unwrap(), &|i, j| ((i + j) % 256) as u8, "sum");
    let reversed = sum.slice(s![.., ..;-1]).unwrap().copy().unwrap();
    drop(sum);
    checked(
        &reversed.to_vec().unwrap(),
        &|i, j| ((i + (m - 1 - j)) % 256) as u8,
        "reversed",
    );
}
