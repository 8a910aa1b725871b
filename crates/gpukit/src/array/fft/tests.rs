//! CPU tests of `gpukit::fft` against a direct O(n²) DFT, round trips, Parseval, rfft against
//! fft, and the errors.

use super::*;
use crate::device::Device;
use crate::element::Complex;

type C = Complex<f64>;

/// The direct DFT of `x` along the last `dims.len()` axes of each signal (`sign` -1 forward).
fn dft(x: &[C], dims: &[usize], sign: f64) -> Vec<C> {
    let points: usize = dims.iter().product();
    let mut out = x.to_vec();
    for s in 0..x.len() / points {
        let sig = &x[s * points..(s + 1) * points];
        for (k, o) in out[s * points..(s + 1) * points].iter_mut().enumerate() {
            let kk = unravel(k, dims);
            let mut acc = (0.0, 0.0);
            for (j, v) in sig.iter().enumerate() {
                let jj = unravel(j, dims);
                let phase: f64 = kk
                    .iter()
                    .zip(&jj)
                    .zip(dims)
                    .map(|((&k, &j), &n)| (k * j) as f64 / n as f64)
                    .sum();
                let (sn, cs) = (sign * 2.0 * std::f64::consts::PI * phase).sin_cos();
                acc.0 += v.re * cs - v.im * sn;
                acc.1 += v.re * sn + v.im * cs;
            }
            *o = C::new(acc.0, acc.1);
        }
    }
    out
}

fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut v = vec![0; dims.len()];
    for (a, &d) in dims.iter().enumerate().rev() {
        v[a] = i % d;
        i /= d;
    }
    v
}

fn data(n: usize, seed: u64) -> Vec<C> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    (0..n).map(|_| C::new(next(), next())).collect()
}

fn close(a: &[C], b: &[C], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x.re - y.re).abs() < tol && (x.im - y.im).abs() < tol,
            "element {i}: {x} vs {y}"
        );
    }
}

fn cpu(v: Vec<C>, shape: &[usize]) -> Array<C> {
    Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap()
}

#[test]
fn fft_matches_a_direct_dft_for_many_lengths() -> Result<()> {
    for n in [1usize, 2, 3, 4, 5, 7, 8, 12, 13, 16, 17, 30] {
        for batch in [1usize, 3] {
            let x = data(n * batch, n as u64);
            let a = cpu(x.clone(), &[batch, n]);
            close(&fft(&a)?.to_vec()?, &dft(&x, &[n], -1.0), 1e-9);
            let inv: Vec<C> = dft(&x, &[n], 1.0)
                .into_iter()
                .map(|z| C::new(z.re / n as f64, z.im / n as f64))
                .collect();
            close(&ifft(&a)?.to_vec()?, &inv, 1e-9);
        }
    }
    Ok(())
}

#[test]
fn fft2_and_fftn_match_a_direct_dft() -> Result<()> {
    for dims in [
        vec![3usize, 5],
        vec![4, 4],
        vec![1, 7],
        vec![2, 3, 5],
        vec![5, 1, 4],
    ] {
        let n: usize = dims.iter().product();
        let x = data(n, 7);
        let a = cpu(x.clone(), &dims);
        close(&fftn(&a)?.to_vec()?, &dft(&x, &dims, -1.0), 1e-9);
        close(&ifftn(&fftn(&a)?)?.to_vec()?, &x, 1e-12);
    }
    // fft2 of a 3-D array: one 2-D transform per leading index.
    let x = data(2 * 3 * 4, 3);
    let a = cpu(x.clone(), &[2, 3, 4]);
    close(&fft2(&a)?.to_vec()?, &dft(&x, &[3, 4], -1.0), 1e-9);
    close(&ifft2(&fft2(&a)?)?.to_vec()?, &x, 1e-12);
    Ok(())
}

#[test]
fn round_trips_and_parseval_in_single_precision() -> Result<()> {
    let x: Vec<Complex<f32>> = data(6 * 10, 1)
        .into_iter()
        .map(|z| Complex::new(z.re as f32, z.im as f32))
        .collect();
    let a = Array::from_vec_on(x.clone(), [6, 10], &Device::Cpu)?;
    let f = fftn(&a)?;
    assert_eq!(f.dtype(), crate::DType::Complex64);
    let energy = |v: &[Complex<f32>]| v.iter().map(|z| (z.abs() as f64).powi(2)).sum::<f64>();
    let (ex, ef) = (energy(&x), energy(&f.to_vec()?) / 60.0);
    assert!((ex - ef).abs() < 1e-4 * ex, "Parseval: {ex} vs {ef}");
    let back = ifftn(&f)?.to_vec()?;
    for (p, q) in back.iter().zip(&x) {
        assert!((p.re - q.re).abs() < 1e-5 && (p.im - q.im).abs() < 1e-5);
    }
    Ok(())
}

#[test]
fn rfft_is_the_first_half_of_fft_and_irfft_inverts_it() -> Result<()> {
    for n in [1usize, 2, 5, 8, 9, 16] {
        let x: Vec<f64> = data(3 * n, 5).into_iter().map(|z| z.re).collect();
        let r = Array::from_vec_on(x.clone(), [3, n], &Device::Cpu)?;
        let half = rfft(&r)?;
        assert_eq!(half.shape(), &[3, n / 2 + 1]);
        let full = fft(&r.to_complex()?)?.to_vec()?;
        let expect: Vec<C> = full
            .chunks(n)
            .flat_map(|c| c[..n / 2 + 1].to_vec())
            .collect();
        close(&half.to_vec()?, &expect, 1e-12);
        let back = irfft_n(&half, n)?;
        assert_eq!(back.shape(), &[3, n]);
        for (p, q) in back.to_vec()?.iter().zip(&x) {
            assert!((p - q).abs() < 1e-12, "{p} vs {q} (n = {n})");
        }
    }
    // The default length is even: 2 * (m - 1).
    let r = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0], 4, &Device::Cpu)?;
    let back = irfft(&rfft(&r)?)?.to_vec()?;
    assert!(back
        .iter()
        .zip([1.0, 2.0, 3.0, 4.0])
        .all(|(p, q)| (p - q).abs() < 1e-6));
    Ok(())
}

#[test]
fn empty_batches_work_and_bad_shapes_are_errors() -> Result<()> {
    let empty = cpu(Vec::new(), &[0, 4]);
    assert_eq!(fft(&empty)?.shape(), &[0, 4]);
    assert_eq!(rfft(&empty.re()?)?.shape(), &[0, 3]);
    let e = fft(&cpu(Vec::new(), &[3, 0])).unwrap_err();
    assert!(
        matches!(e, Error::Shape(_)) && e.to_string().contains("[3, 0]"),
        "{e}"
    );
    let e = fft2(&cpu(vec![C::default(); 3], &[3])).unwrap_err();
    assert!(e.to_string().contains("last 2"), "{e}");
    let e = fftn(&cpu(vec![C::default(); 16], &[2, 2, 2, 2])).unwrap_err();
    assert!(e.to_string().contains("at most 3"), "{e}");
    let e = fft(&cpu(vec![C::default()], &[])).unwrap_err();
    assert!(e.to_string().contains("0-d"), "{e}");
    let e = irfft_n(&cpu(vec![C::default(); 3], &[3]), 0).unwrap_err();
    assert!(e.to_string().contains("number of points 0"), "{e}");
    assert!(irfft(&cpu(vec![C::default()], &[1])).is_err());
    Ok(())
}

#[test]
fn irfft_with_n_crops_or_pads_as_numpy() -> Result<()> {
    // np.fft.irfft([1], 4) == [0.25] * 4: the half spectrum padded to 3 values with zeros.
    let one = cpu(vec![C::new(1.0, 0.0)], &[1]);
    assert_eq!(irfft_n(&one, 4)?.to_vec()?, vec![0.25; 4]);
    let x: Vec<f64> = data(2 * 8, 11).into_iter().map(|z| z.re).collect();
    let half = rfft(&Array::from_vec_on(x, [2, 8], &Device::Cpu)?)?; // (2, 5)
                                                                     // Cropping: n = 6 reads the first 4 values.
    let cropped = half.slice(ndarray::s![.., ..4])?.copy()?;
    let a = irfft_n(&half, 6)?.to_vec()?;
    let b = irfft_n(&cropped, 6)?.to_vec()?;
    assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
    // Padding: n = 12 needs 7 values; the 2 missing are zeros.
    let zeros = cpu(vec![C::default(); 4], &[2, 2]);
    let padded = crate::array::concatenate(&[&half, &zeros], 1)?;
    let a = irfft_n(&half, 12)?.to_vec()?;
    let b = irfft_n(&padded, 12)?.to_vec()?;
    assert_eq!(a.len(), 24);
    assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
    Ok(())
}

#[test]
fn norms_scale_as_numpy() -> Result<()> {
    let n = 6usize;
    let x = data(2 * n, 4);
    let a = cpu(x.clone(), &[2, n]);
    let f = fft(&a)?.to_vec()?;
    let r = (n as f64).sqrt();
    let ortho: Vec<C> = f.iter().map(|z| C::new(z.re / r, z.im / r)).collect();
    close(&fft_norm(&a, "ortho")?.to_vec()?, &ortho, 1e-12);
    close(&fft_norm(&a, Norm::Backward)?.to_vec()?, &f, 1e-12);
    let fwd: Vec<C> = f
        .iter()
        .map(|z| C::new(z.re / n as f64, z.im / n as f64))
        .collect();
    close(&fft_norm(&a, "forward")?.to_vec()?, &fwd, 1e-12);
    // Each norm's inverse undoes its forward transform.
    for norm in ["backward", "ortho", "forward"] {
        close(&ifft_norm(&fft_norm(&a, norm)?, norm)?.to_vec()?, &x, 1e-12);
        let back = ifftn_axes(&fftn_axes(&a, &[0, 1], norm)?, &[0, 1], norm)?;
        close(&back.to_vec()?, &x, 1e-12);
        let re = a.re()?;
        let again = irfft_norm(&rfft_norm(&re, norm)?, Some(n), norm)?.to_vec()?;
        assert!(again
            .iter()
            .zip(re.to_vec()?)
            .all(|(p, q)| (p - q).abs() < 1e-12));
    }
    let e = fft_norm(&a, "unitary").unwrap_err();
    assert!(e.to_string().contains("\"unitary\""), "{e}");
    Ok(())
}

#[test]
fn fftn_over_chosen_axes_matches_a_direct_dft() -> Result<()> {
    // Over axis 0 of a (3, 4): the transform of each column.
    let x = data(12, 2);
    let a = cpu(x.clone(), &[3, 4]);
    let cols = fft(&a.t())?; // (4, 3): each column transformed, as rows
    close(
        &fftn_axes(&a, &[0], "backward")?.to_vec()?,
        &cols.t().copy()?.to_vec()?,
        1e-9,
    );
    // Every axis of a 4-D array (two passes: 3 axes, then 1).
    let dims = [2usize, 3, 2, 2];
    let x = data(24, 3);
    let a = cpu(x.clone(), &dims);
    close(
        &fftn_axes(&a, &[0, 1, 2, 3], "backward")?.to_vec()?,
        &dft(&x, &dims, -1.0),
        1e-9,
    );
    // Axes in another order, negative: the same transform.
    let b = fftn_axes(&a, &[-1, 0, 2, 1], "backward")?;
    close(&b.to_vec()?, &dft(&x, &dims, -1.0), 1e-9);
    // fftn over the last two axes is fft2; over none, a copy.
    close(
        &fftn_axes(&a, &[-2, -1], "backward")?.to_vec()?,
        &fft2(&a)?.to_vec()?,
        1e-12,
    );
    close(&fftn_axes(&a, &[], "ortho")?.to_vec()?, &x, 0.0 + 1e-15);
    assert!(fftn_axes(&a, &[1, 1], "backward")
        .unwrap_err()
        .to_string()
        .contains("repeated"));
    assert!(fftn_axes(&a, &[4], "backward").is_err());
    Ok(())
}

#[test]
fn transforms_take_views() -> Result<()> {
    let x = data(12, 9);
    let a = cpu(x, &[3, 4]);
    close(
        &fft(&a.t())?.to_vec()?,
        &fft(&a.t().copy()?)?.to_vec()?,
        1e-12,
    );
    let every_other = a.slice(ndarray::s![.., ..;2])?;
    close(
        &ifft2(&every_other)?.to_vec()?,
        &ifft2(&every_other.copy()?)?.to_vec()?,
        1e-12,
    );
    let re = a.re()?;
    close(
        &rfft(&re.t())?.to_vec()?,
        &rfft(&re.t().copy()?)?.to_vec()?,
        1e-12,
    );
    Ok(())
}
