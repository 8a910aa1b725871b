//! Matrix products: the CPU backend against a naive triple loop for every shape case, errors,
//! and (on a GPU; skipped visibly without one, see `crate::testing`) cuBLAS against the CPU.

use super::{matmul, matmul_add, matmul_add_into, MatmulElement};
use crate::array::Array;
use crate::device::Device;
use crate::element::Element;
use crate::error::Error;
use std::sync::MutexGuard;

/// The GPU (with the test lock held) where cuBLAS can be used too; otherwise `None` after a
/// `skipped:` line, or a failure where `GPUKIT_TEST_REQUIRE_GPU=1` (see `crate::testing`).
fn gpu() -> Option<(Device, MutexGuard<'static, ()>)> {
    use crate::testing::{decide, Decision, Need};
    let found = crate::testing::serial_gpu_or_skip()?;
    let Err(why) = crate::backend::cuda::cublas_probe() else {
        return Some(found);
    };
    let var = std::env::var(Need::Gpu.variable()).ok();
    match decide(Need::Gpu, Some(&why), var.as_deref()) {
        Decision::Skip(line) => {
            println!("{line}");
            None
        }
        Decision::Run => Some(found),
        Decision::Fail(message) => panic!("{message}"),
    }
}

/// Every shape case: 1-D·1-D, 2-D×2-D, 2-D×1-D, 1-D×2-D, batched (equal, one side
/// broadcast, missing dimensions, mixed broadcasts), odd sizes (1×1, k = 1, 0-size dims).
const CASES: &[(&[usize], &[usize])] = &[
    (&[5], &[5]),
    (&[1], &[1]),
    (&[0], &[0]),
    (&[3, 4], &[4, 2]),
    (&[1, 1], &[1, 1]),
    (&[7, 1], &[1, 9]),
    (&[17, 33], &[33, 65]),
    (&[130, 70], &[70, 3]),
    (&[3, 4], &[4]),
    (&[4], &[4, 6]),
    (&[5, 3, 4], &[5, 4, 2]),
    (&[5, 3, 4], &[1, 4, 2]),
    (&[1, 3, 4], &[5, 4, 2]),
    (&[5, 3, 4], &[4, 2]),
    (&[3, 4], &[2, 5, 4, 2]),
    (&[2, 1, 3, 4], &[3, 4, 5]),
    (&[2, 3, 1, 4], &[4]),
    (&[4], &[2, 2, 4, 3]),
    (&[0, 3, 4], &[4, 2]),
    (&[3, 0], &[0, 2]),
    (&[2, 3, 0], &[2, 0, 4]),
    (&[0, 4], &[4, 3]),
    (&[3, 4], &[4, 0]),
];

/// Deterministic values in [-1, 1) that differ from element to element.
fn values<T: Element>(n: usize, seed: usize) -> Vec<T> {
    (0..n)
        .map(|i| T::from_f64(((i * 7919 + seed * 104_729) % 2003) as f64 / 1001.5 - 1.0))
        .collect()
}

fn array<T: Element>(shape: &[usize], seed: usize, device: &Device) -> Array<T> {
    let n = shape.iter().product();
    Array::from_vec_on(values::<T>(n, seed), shape.to_vec(), device).unwrap()
}

/// NumPy's matmul written out: promote 1-D operands, broadcast batches index by index, three
/// nested loops in f64, then drop the promoted dimensions.
fn naive(a: &[f64], ash: &[usize], b: &[f64], bsh: &[usize]) -> (Vec<usize>, Vec<f64>) {
    let ap: Vec<usize> = if ash.len() == 1 {
        vec![1, ash[0]]
    } else {
        ash.to_vec()
    };
    let bp: Vec<usize> = if bsh.len() == 1 {
        vec![bsh[0], 1]
    } else {
        bsh.to_vec()
    };
    let (m, k) = (ap[ap.len() - 2], ap[ap.len() - 1]);
    let n = bp[bp.len() - 1];
    let (ab, bb) = (&ap[..ap.len() - 2], &bp[..bp.len() - 2]);
    let len = ab.len().max(bb.len());
    let dim = |s: &[usize], i: usize| {
        if i + s.len() < len {
            1
        } else {
            s[i + s.len() - len]
        }
    };
    let pick = |x: usize, y: usize| if x == 1 { y } else { x };
    let batch: Vec<usize> = (0..len).map(|i| pick(dim(ab, i), dim(bb, i))).collect();
    let count: usize = batch.iter().product();
    let mut out = Vec::new();
    for flat in 0..count {
        // Index of this batch in the result, then in each operand (size-1 dims stay at 0).
        let mut idx = vec![0; len];
        let mut r = flat;
        for d in (0..len).rev() {
            idx[d] = r % batch[d];
            r /= batch[d];
        }
        let offset = |s: &[usize]| {
            let mut off = 0;
            for (d, &i) in idx.iter().enumerate() {
                let size = dim(s, d);
                off = off * size + if size == 1 { 0 } else { i };
            }
            off
        };
        let (ao, bo) = (offset(ab) * m * k, offset(bb) * k * n);
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for p in 0..k {
                    s += a[ao + i * k + p] * b[bo + p * n + j];
                }
                out.push(s);
            }
        }
    }
    let mut shape = batch;
    if ash.len() > 1 {
        shape.push(m);
    }
    if bsh.len() > 1 {
        shape.push(n);
    }
    (shape, out)
}

fn as_f64<T: Element>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// The result of `a @ b` on `device` against the naive loop, within `tol` per unit of k.
fn check_case<T: MatmulElement>(ash: &[usize], bsh: &[usize], device: &Device, tol: f64) {
    let (a, b) = (array::<T>(ash, 1, device), array::<T>(bsh, 2, device));
    let c = matmul(&a, &b).unwrap_or_else(|e| panic!("{ash:?} @ {bsh:?}: {e}"));
    assert_eq!(c.device(), *device);
    let (shape, want) = naive(
        &as_f64(&a.to_vec().unwrap()),
        ash,
        &as_f64(&b.to_vec().unwrap()),
        bsh,
    );
    assert_eq!(c.shape(), shape.as_slice(), "{ash:?} @ {bsh:?}");
    let got = c.to_vec().unwrap();
    let k = ash[ash.len() - 1].max(1) as f64;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let g = g.to_f64();
        assert!(
            (g - w).abs() <= tol * k * (1.0 + w.abs()),
            "{ash:?} @ {bsh:?} [{i}]: got {g}, want {w}"
        );
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn cpu_matches_the_naive_loop_in_every_case() {
    for &(a, b) in CASES {
        check_case::<f64>(a, b, &Device::Cpu, 1e-14);
        check_case::<f32>(a, b, &Device::Cpu, 1e-6);
    }
}

#[test]
fn cpu_splits_large_matrices_into_row_blocks() {
    // More rows than one block, and a row count that is not a multiple of it.
    check_case::<f64>(&[301, 40], &[40, 29], &Device::Cpu, 1e-14);
    check_case::<f32>(&[3, 150, 20], &[3, 20, 7], &Device::Cpu, 1e-6);
}

#[test]
fn inner_product_is_0_d_and_dot_agrees() {
    let x = Array::from_vec_on(vec![1.0f64, 2.0, 3.0], 3, &Device::Cpu).unwrap();
    let p = x.matmul(&x).unwrap();
    assert_eq!((p.ndim(), p.item().unwrap()), (0, 14.0));
    assert_eq!(super::dot(&x, &x).unwrap().item().unwrap(), 14.0);
    let e = Array::from_vec_on(Vec::<f64>::new(), 0, &Device::Cpu).unwrap();
    assert_eq!(e.matmul(&e).unwrap().item().unwrap(), 0.0);
    let m = Array::<f64>::ones_on([2, 2, 3], &Device::Cpu).unwrap();
    let err = m.dot(&x).unwrap_err().to_string();
    assert!(
        err.contains("dot: (2, 2, 3) @ (3,)") && err.contains("matmul"),
        "{err}"
    );
    assert_eq!(m.matmul(&x).unwrap().shape(), &[2, 2]);
}

#[test]
fn epilogue_scales_and_adds() {
    let cpu = Device::Cpu;
    let (a, b) = (
        array::<f64>(&[2, 3, 4], 1, &cpu),
        array::<f64>(&[4, 5], 2, &cpu),
    );
    let c = array::<f64>(&[2, 3, 5], 3, &cpu);
    let ab = a.matmul(&b).unwrap().to_vec().unwrap();
    let cv = c.to_vec().unwrap();
    let y = matmul_add(&a, &b, &c, 2.0, -0.5).unwrap().to_vec().unwrap();
    for i in 0..y.len() {
        assert!((y[i] - (2.0 * ab[i] - 0.5 * cv[i])).abs() < 1e-12);
    }
    assert_eq!(c.to_vec().unwrap(), cv, "matmul_add leaves c alone");
    // beta = 0 does not read C, even where it holds NaN.
    let mut nan = Array::full_on([2, 3, 5], f64::NAN, &cpu).unwrap();
    matmul_add_into(&a, &b, &mut nan, 1.0, 0.0).unwrap();
    assert_eq!(nan.to_vec().unwrap(), ab);
    // k = 0: an empty sum, so only beta·C remains.
    let (z1, z2) = (
        array::<f64>(&[3, 0], 1, &cpu),
        array::<f64>(&[0, 2], 1, &cpu),
    );
    let mut c2 = Array::full_on([3, 2], 4.0, &cpu).unwrap();
    matmul_add_into(&z1, &z2, &mut c2, 1.0, 0.5).unwrap();
    assert_eq!(c2.to_vec().unwrap(), vec![2.0; 6]);
    assert_eq!(z1.matmul(&z2).unwrap().to_vec().unwrap(), vec![0.0; 6]);
}

#[test]
fn a_shorter_c_repeats_over_the_leading_dimensions() {
    let cpu = Device::Cpu;
    let (a, b) = (
        array::<f64>(&[2, 3, 4], 1, &cpu),
        array::<f64>(&[4, 5], 2, &cpu),
    );
    let ab = a.matmul(&b).unwrap().to_vec().unwrap();
    for csh in [&[5usize][..], &[3, 5], &[]] {
        let c = array::<f64>(csh, 3, &cpu);
        let cv = c.to_vec().unwrap();
        let y = matmul_add(&a, &b, &c, 1.0, 2.0).unwrap();
        assert_eq!(y.shape(), &[2, 3, 5]);
        for (i, v) in y.to_vec().unwrap().iter().enumerate() {
            let want = ab[i] + 2.0 * cv[i % cv.len()];
            assert!((v - want).abs() < 1e-12, "{csh:?} [{i}]: {v} vs {want}");
        }
    }
    let e = matmul_add(&a, &b, &array::<f64>(&[3, 1], 3, &cpu), 1.0, 1.0).unwrap_err();
    assert!(e.to_string().contains("one of its suffixes"), "{e}");
    let empty = matmul_add(
        &array::<f64>(&[0, 4], 1, &cpu),
        &b,
        &array::<f64>(&[5], 3, &cpu),
        1.0,
        1.0,
    )
    .unwrap();
    assert_eq!(empty.shape(), &[0, 5]);
}

#[test]
fn bad_shapes_and_devices_are_errors() {
    let cpu = Device::Cpu;
    let a = Array::<f32>::ones_on([3, 4], &cpu).unwrap();
    let b = Array::<f32>::ones_on([5, 2], &cpu).unwrap();
    let e = a.matmul(&b).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    assert!(
        e.to_string()
            .contains("matmul: (3, 4) @ (5, 2): inner dimensions 4 and 5 differ"),
        "{e}"
    );
    let s = Array::<f32>::ones_on(Vec::<usize>::new(), &cpu).unwrap();
    assert!(matches!(s.matmul(&a), Err(Error::Shape(_))));
    let e = matmul(
        &Array::<f32>::ones_on([2, 3, 4], &cpu).unwrap(),
        &Array::<f32>::ones_on([3, 4, 2], &cpu).unwrap(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("do not broadcast"), "{e}");
    let c = Array::<f32>::ones_on([3, 3], &cpu).unwrap();
    let four = Array::<f32>::ones_on([4, 3], &cpu).unwrap();
    let e = matmul_add(
        &a,
        &four,
        &Array::<f32>::ones_on([3, 2], &cpu).unwrap(),
        1.0,
        1.0,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("C has shape (3, 2) but (3, 4) @ (4, 3) has shape (3, 3)"),
        "{e}"
    );
    assert!(matmul_add(&a, &four, &c, 1.0, 1.0).is_ok());
    let mut wrong = Array::<f32>::ones_on(3, &cpu).unwrap();
    let e = matmul_add_into(&a, &four, &mut wrong, 1.0, 1.0).unwrap_err();
    assert!(e.to_string().contains("C has shape (3,) but"), "{e}");
}

#[test]
fn dimensions_past_cublas_int_are_errors() {
    assert_eq!(super::matmul::dim("k", 4096).unwrap(), 4096);
    let e = super::matmul::dim("k", 1 << 31).unwrap_err();
    assert!(
        matches!(e, Error::Shape(_)) && e.to_string().contains("k = 2147483648"),
        "{e}"
    );
}

#[test]
fn operands_on_different_devices_are_refused() {
    let Some((device, _turn)) = gpu() else {
        return;
    };
    let a = Array::<f32>::ones_on([3, 4], &Device::Cpu).unwrap();
    let b = Array::<f32>::ones_on([4, 2], &device).unwrap();
    for e in [a.matmul(&b).unwrap_err(), b.matmul(&a).unwrap_err()] {
        assert!(matches!(e, Error::DeviceMismatch(_)), "{e}");
    }
    let g = Array::<f32>::ones_on([3, 4], &device).unwrap();
    let mut c = Array::<f32>::zeros_on([3, 2], &Device::Cpu).unwrap();
    let e = matmul_add_into(&g, &b, &mut c, 1.0, 0.0).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch(_)), "{e}");
}

/// GPU results against the CPU backend's on the same inputs.
fn gpu_matches_cpu<T: MatmulElement>(ash: &[usize], bsh: &[usize], device: &Device, tol: f64) {
    let (a, b) = (array::<T>(ash, 1, device), array::<T>(bsh, 2, device));
    let got = matmul(&a, &b).unwrap_or_else(|e| panic!("{ash:?} @ {bsh:?} on {device}: {e}"));
    assert_eq!(got.device(), *device);
    let (ac, bc) = (
        a.to_device(&Device::Cpu).unwrap(),
        b.to_device(&Device::Cpu).unwrap(),
    );
    let want = matmul(&ac, &bc).unwrap();
    assert_eq!(got.shape(), want.shape(), "{ash:?} @ {bsh:?}");
    let k = ash[ash.len() - 1].max(1) as f64;
    let (g, w) = (got.to_vec().unwrap(), want.to_vec().unwrap());
    for (i, (g, w)) in g.iter().zip(&w).enumerate() {
        let (g, w) = (g.to_f64(), w.to_f64());
        assert!(
            (g - w).abs() <= tol * k * (1.0 + w.abs()),
            "{ash:?} @ {bsh:?} [{i}]: GPU {g}, CPU {w}"
        );
    }
}

#[test]
fn gpu_matches_cpu_in_every_case() {
    let Some((device, _turn)) = gpu() else {
        return;
    };
    for &(a, b) in CASES {
        gpu_matches_cpu::<f64>(a, b, &device, 1e-14);
        gpu_matches_cpu::<f32>(a, b, &device, 2e-6);
    }
    // Every case also against the naive loop directly.
    for &(a, b) in CASES {
        check_case::<f64>(a, b, &device, 1e-14);
    }
}

fn y_shape(a: &Array<f64>, b: &Array<f64>) -> Vec<usize> {
    super::plan::Plan::new("matmul", a.shape(), b.shape())
        .unwrap()
        .out_shape
}

#[test]
fn gpu_epilogue_matches_cpu() {
    let Some((device, _turn)) = gpu() else {
        return;
    };
    for (ash, bsh, csh) in [
        (&[33usize, 20][..], &[20usize, 17][..], &[33usize, 17][..]),
        (&[4, 5, 6], &[6, 3], &[4, 5, 3]),
        (&[2, 1, 3, 4], &[3, 4, 5], &[2, 3, 3, 5]),
        (&[3, 0], &[0, 2], &[3, 2]),
        (&[33, 20], &[20, 17], &[17]),
        (&[4, 5, 6], &[6, 3], &[5, 3]),
        (&[4, 5, 6], &[6, 3], &[]),
    ] {
        let on = |d: &Device| {
            let (a, b, c) = (
                array::<f64>(ash, 1, d),
                array::<f64>(bsh, 2, d),
                array::<f64>(csh, 3, d),
            );
            let y = matmul_add(&a, &b, &c, 1.5, -2.0).unwrap().to_vec().unwrap();
            // In place where C has the result's shape (a repeated C has no room for it).
            let mut c = if c.shape() == y_shape(&a, &b).as_slice() {
                c
            } else {
                a.matmul(&b).unwrap()
            };
            matmul_add_into(&a, &b, &mut c, 0.5, 3.0).unwrap();
            (y, c.to_vec().unwrap())
        };
        let (g, w) = (on(&device), on(&Device::Cpu));
        for (x, y) in g.0.iter().zip(&w.0).chain(g.1.iter().zip(&w.1)) {
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "{ash:?} @ {bsh:?}: {x} vs {y}"
            );
        }
    }
    // beta = 0 never reads C on the GPU either.
    let (a, b) = (
        array::<f32>(&[8, 8], 1, &device),
        array::<f32>(&[8, 8], 2, &device),
    );
    let mut nan = Array::full_on([8, 8], f32::NAN, &device).unwrap();
    matmul_add_into(&a, &b, &mut nan, 1.0, 0.0).unwrap();
    assert_eq!(
        nan.to_vec().unwrap(),
        a.matmul(&b).unwrap().to_vec().unwrap()
    );
}

#[test]
fn gpu_large_f32_matches_cpu() {
    let Some((device, _turn)) = gpu() else {
        return;
    };
    // 2048 × 2048: cuBLAS's tiled kernels, against the CPU's blocked product.
    gpu_matches_cpu::<f32>(&[2048, 2048], &[2048, 2048], &device, 2e-6);
}
