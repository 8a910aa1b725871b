//! `gpukit::fft` and complex arrays on a CUDA device (cuFFT and the complex kernels) against the
//! CPU backend (rustfft): 1-D to 3-D, odd, prime and one-element sizes, batches, empty batches,
//! both precisions, rfft/irfft, round trips, and complex arithmetic, parts and conversions.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side is tested against a direct
//! DFT beside the code (`src/array/fft/tests.rs`).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{fft, Array, Complex, Device, Element};

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn complex(n: usize, seed: u64) -> Vec<Complex<f64>> {
    let v = values(2 * n, seed);
    v.chunks(2).map(|p| Complex::new(p[0], p[1])).collect()
}

fn max_diff(a: &[Complex<f64>], b: &[Complex<f64>]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x.re - y.re).abs().max((x.im - y.im).abs()))
        .fold(0.0, f64::max)
}

type Transform = fn(&Array<Complex<f64>>) -> gpukit::Result<Array<Complex<f64>>>;

/// Runs `f` on the GPU and on the CPU over the same data of `shape` and compares.
fn same_on_both(dev: &Device, shape: &[usize], f: Transform, name: &str, tol: f64) {
    let n: usize = shape.iter().product();
    let x = complex(n, n as u64 + shape.len() as u64);
    let g = Array::from_vec_on(x.clone(), shape.to_vec(), dev).unwrap();
    let c = Array::from_vec_on(x, shape.to_vec(), &Device::Cpu).unwrap();
    let (gr, cr) = (f(&g).unwrap(), f(&c).unwrap());
    assert_eq!(gr.shape(), cr.shape(), "{name} {shape:?}");
    assert_eq!(gr.device(), *dev);
    let d = max_diff(&gr.to_vec().unwrap(), &cr.to_vec().unwrap());
    let scale = (n as f64).sqrt().max(1.0);
    assert!(
        d < tol * scale,
        "{name} {shape:?}: GPU and CPU differ by {d}"
    );
}

#[test]
fn complex_transforms_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let one_d: [&[usize]; 9] = [
        &[1],
        &[2],
        &[7],
        &[13],
        &[64],
        &[97],
        &[1000],
        &[4, 17],
        &[3, 5, 1],
    ];
    for shape in one_d {
        same_on_both(&dev, shape, fft::fft, "fft", 1e-12);
        same_on_both(&dev, shape, fft::ifft, "ifft", 1e-12);
    }
    let two_d: [&[usize]; 6] = [&[1, 1], &[3, 5], &[8, 8], &[7, 11], &[2, 16, 9], &[1, 31]];
    for shape in two_d {
        same_on_both(&dev, shape, fft::fft2, "fft2", 1e-12);
        same_on_both(&dev, shape, fft::ifft2, "ifft2", 1e-12);
    }
    let n_d: [&[usize]; 6] = [
        &[5],
        &[6, 10],
        &[1, 1, 1],
        &[3, 5, 7],
        &[16, 16, 16],
        &[2, 13, 4],
    ];
    for shape in n_d {
        same_on_both(&dev, shape, fft::fftn, "fftn", 1e-12);
        same_on_both(&dev, shape, fft::ifftn, "ifftn", 1e-12);
    }
}

#[test]
fn round_trip_and_parseval_on_the_gpu_in_both_precisions() {
    let Some((dev, _lock)) = gpu() else { return };
    let shape = [12usize, 20, 9];
    let x = complex(12 * 20 * 9, 3);
    let a = Array::from_vec_on(x.clone(), shape, &dev).unwrap();
    let f = fft::fftn(&a).unwrap();
    let energy = |v: &[Complex<f64>]| v.iter().map(|z| z.re * z.re + z.im * z.im).sum::<f64>();
    let ex = energy(&x);
    let ef = energy(&f.to_vec().unwrap()) / x.len() as f64;
    assert!((ex - ef).abs() < 1e-10 * ex, "Parseval: {ex} vs {ef}");
    let back = fft::ifftn(&f).unwrap().to_vec().unwrap();
    assert!(max_diff(&back, &x) < 1e-12);

    let single: Vec<Complex<f32>> = x
        .iter()
        .map(|z| Complex::new(z.re as f32, z.im as f32))
        .collect();
    let a32 = Array::from_vec_on(single.clone(), shape, &dev).unwrap();
    let f32_gpu = fft::fftn(&a32).unwrap();
    assert_eq!(f32_gpu.dtype(), gpukit::DType::Complex64);
    let f32_cpu = fft::fftn(&Array::from_vec_on(single.clone(), shape, &Device::Cpu).unwrap());
    let widen = |v: Vec<Complex<f32>>| -> Vec<Complex<f64>> {
        v.into_iter()
            .map(|z| Complex::new(z.re as f64, z.im as f64))
            .collect()
    };
    let d = max_diff(
        &widen(f32_gpu.to_vec().unwrap()),
        &widen(f32_cpu.unwrap().to_vec().unwrap()),
    );
    assert!(d < 1e-3, "complex64 fftn: GPU and CPU differ by {d}");
    let back = widen(fft::ifftn(&f32_gpu).unwrap().to_vec().unwrap());
    assert!(max_diff(&back, &widen(single)) < 1e-5);
}

#[test]
fn real_transforms_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    for shape in [
        vec![1usize],
        vec![2],
        vec![9],
        vec![16],
        vec![3, 11],
        vec![4, 2, 64],
    ] {
        let n: usize = shape.iter().product();
        let last = *shape.last().unwrap();
        let x = values(n, 9);
        let g = Array::from_vec_on(x.clone(), shape.clone(), &dev).unwrap();
        let c = Array::from_vec_on(x.clone(), shape.clone(), &Device::Cpu).unwrap();
        let (hg, hc) = (fft::rfft(&g).unwrap(), fft::rfft(&c).unwrap());
        assert_eq!(hg.shape(), hc.shape());
        assert_eq!(hg.shape().last(), Some(&(last / 2 + 1)));
        let d = max_diff(&hg.to_vec().unwrap(), &hc.to_vec().unwrap());
        assert!(d < 1e-12 * (last as f64).max(1.0), "rfft {shape:?}: {d}");
        let spectrum = hg.to_vec().unwrap();
        let back = fft::irfft_n(&hg, last).unwrap();
        assert_eq!(back.shape(), &shape[..]);
        let back_cpu = fft::irfft_n(&hc, last).unwrap().to_vec().unwrap();
        for ((p, q), r) in back.to_vec().unwrap().iter().zip(&back_cpu).zip(&x) {
            assert!(
                (p - q).abs() < 1e-12 && (p - r).abs() < 1e-12,
                "irfft {shape:?}"
            );
        }
        // The input of irfft is left unchanged (cuFFT's C2R works on a copy).
        assert_eq!(
            hg.to_vec().unwrap(),
            spectrum,
            "irfft {shape:?} changed its input"
        );
    }
    let x32 = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], 6, &dev).unwrap();
    let back = fft::irfft(&fft::rfft(&x32).unwrap())
        .unwrap()
        .to_vec()
        .unwrap();
    assert!(
        back.iter()
            .zip(1..)
            .all(|(v, i)| (v - i as f32).abs() < 1e-5),
        "{back:?}"
    );
}

#[test]
fn empty_batches_and_bad_shapes_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let empty = Array::<Complex<f64>>::zeros_on([0, 8], &dev).unwrap();
    assert_eq!(fft::fft(&empty).unwrap().shape(), &[0, 8]);
    assert_eq!(fft::ifft(&empty).unwrap().shape(), &[0, 8]);
    let empty3 = Array::<Complex<f32>>::zeros_on([0, 3, 4], &dev).unwrap();
    assert_eq!(fft::ifft2(&empty3).unwrap().shape(), &[0, 3, 4]);
    let r = Array::<f64>::zeros_on([0, 5], &dev).unwrap();
    assert_eq!(fft::rfft(&r).unwrap().shape(), &[0, 3]);
    let e = fft::fft(&Array::<Complex<f64>>::zeros_on([4, 0], &dev).unwrap()).unwrap_err();
    assert!(e.to_string().contains("[4, 0]"), "{e}");
    let e = fft::fftn(&Array::<Complex<f32>>::zeros_on([2, 2, 2, 2], &dev).unwrap()).unwrap_err();
    assert!(e.to_string().contains("at most 3"), "{e}");
    let a = Array::<Complex<f64>>::zeros_on(5, &dev).unwrap();
    // NumPy crops (or zero-pads) the half spectrum to n / 2 + 1 terms: 5 terms for n = 4 is fine.
    assert_eq!(fft::irfft_n(&a, 4).unwrap().shape(), &[4]);
    // The device still works after the errors.
    let one = Array::from_vec_on(vec![Complex::new(2.0, -1.0)], 1, &dev).unwrap();
    assert_eq!(
        fft::fft(&one).unwrap().to_vec().unwrap(),
        vec![Complex::new(2.0, -1.0)]
    );
}

#[test]
fn complex_arrays_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    for n in [0usize, 1, 5, 1000] {
        let (x, y) = (complex(n, 1), complex(n, 2));
        let (ag, bg) = (
            Array::from_vec_on(x.clone(), n, &dev).unwrap(),
            Array::from_vec_on(y.clone(), n, &dev).unwrap(),
        );
        let (ac, bc) = (
            Array::from_vec_on(x.clone(), n, &Device::Cpu).unwrap(),
            Array::from_vec_on(y, n, &Device::Cpu).unwrap(),
        );
        let s = Complex::new(0.5, -2.0);
        let pairs = [
            ((&ag + &bg).unwrap(), (&ac + &bc).unwrap()),
            ((&ag - &bg).unwrap(), (&ac - &bc).unwrap()),
            ((&ag * &bg).unwrap(), (&ac * &bc).unwrap()),
            ((&ag / &bg).unwrap(), (&ac / &bc).unwrap()),
            ((&ag * s).unwrap(), (&ac * s).unwrap()),
            ((s / &ag).unwrap(), (s / &ac).unwrap()),
            ((s - &ag).unwrap(), (s - &ac).unwrap()),
            (ag.conj().unwrap(), ac.conj().unwrap()),
            (ag.try_clone().unwrap(), ac.try_clone().unwrap()),
        ];
        for (i, (g, c)) in pairs.iter().enumerate() {
            let d = max_diff(&g.to_vec().unwrap(), &c.to_vec().unwrap());
            assert!(d < 1e-12, "operation {i}, n = {n}: {d}");
        }
        assert_eq!(
            ag.re().unwrap().to_vec().unwrap(),
            ac.re().unwrap().to_vec().unwrap()
        );
        assert_eq!(
            ag.im().unwrap().to_vec().unwrap(),
            ac.im().unwrap().to_vec().unwrap()
        );
        let (mg, mc) = (
            ag.abs().unwrap().to_vec().unwrap(),
            ac.abs().unwrap().to_vec().unwrap(),
        );
        assert!(mg.iter().zip(&mc).all(|(p, q)| (p - q).abs() < 1e-14));
        // Conversions: f64 → complex128 → complex64 → f32, and back.
        let r = ag.re().unwrap();
        assert_eq!(
            r.to_complex().unwrap().re().unwrap().to_vec().unwrap(),
            r.to_vec().unwrap()
        );
        let c64 = ag.astype::<Complex<f32>>().unwrap();
        assert_eq!(
            c64.to_vec().unwrap(),
            ac.astype::<Complex<f32>>().unwrap().to_vec().unwrap()
        );
        assert_eq!(
            c64.astype::<f32>().unwrap().to_vec().unwrap(),
            ac.astype::<f32>().unwrap().to_vec().unwrap()
        );
        assert!(ag.astype::<i64>().is_err(), "complex to int is refused");
    }
    // Fills, eye, zeros and display on the GPU.
    let f = Array::full_on([2, 3], Complex::new(1.5f32, -0.5), &dev).unwrap();
    assert_eq!(f.to_vec().unwrap(), vec![Complex::new(1.5, -0.5); 6]);
    let e = Array::<Complex<f64>>::eye_on(3, &dev)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(e[4], Complex::new(1.0, 0.0));
    assert_eq!(e[1], <Complex<f64> as Element>::zero());
    let s = f.repr();
    assert!(s.contains("1.5-0.5j") && s.contains("complex64"), "{s}");
    // Operations the complex type does not have on a GPU are errors, not crashes.
    assert!(f.eq(Complex::new(1.5, -0.5)).is_err());
}
