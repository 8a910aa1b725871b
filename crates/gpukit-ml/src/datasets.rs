//! Data without a download: a diabetes-like table for the lesson, and synthetic classification
//! and clustering sets of any size generated on the device.
//!
//! - [`diabetes`]: 768 rows × 8 features in the spirit of the Pima Indians diabetes table
//!   (the course's data), with realistic ranges and correlations and about 35% positives.
//!   Generated on the host by a small seeded generator: the same table on every machine.
//! - [`make_classification`] and [`make_blobs`]: class centres plus Gaussian noise, drawn with
//!   `gpukit::random` on the device (cuRAND on a GPU, ChaCha8 on the CPU backend): seeded and
//!   reproducible on one backend, but **the two backends give different samples**.

use gpukit::prelude::*;
use gpukit::random::Generator;

use crate::error::{MlError, Result};
use crate::float::MlFloat;
use crate::rng::HostRng;

/// The rows of [`diabetes`].
pub const DIABETES_ROWS: usize = 768;

/// The columns of [`diabetes`], in order.
pub fn diabetes_feature_names() -> [&'static str; 8] {
    [
        "pregnancies",
        "glucose",
        "blood_pressure",
        "skin_thickness",
        "insulin",
        "bmi",
        "diabetes_pedigree",
        "age",
    ]
}

fn clip(v: f64, lo: f64, hi: f64) -> f64 {
    v.clamp(lo, hi)
}

/// A Poisson draw (Knuth's product method; fine for the small means used here).
fn poisson(rng: &mut HostRng, mean: f64) -> f64 {
    let l = (-mean).exp();
    let (mut k, mut p) = (0.0, 1.0);
    loop {
        p *= rng.uniform();
        if p <= l {
            return k;
        }
        k += 1.0;
    }
}

/// A diabetes-like table: features `(768, 8)` (columns [`diabetes_feature_names`]) and a
/// binary outcome `(768,)` (1 = diabetic), on the default device; the same for a seed on every
/// machine and backend.
///
/// How rows are made (a generative story, not real patients): age is right-skewed from 21
/// (mean ≈ 33); pregnancies are Poisson with a mean growing with age; BMI is normal around 32
/// and drifts up with age; glucose (mean ≈ 120), blood pressure and skin thickness rise with
/// age and BMI; insulin is log-normal and rises with glucose; the pedigree function is
/// log-normal (0.08–2.4). The outcome is drawn from a logistic model in glucose, BMI, age,
/// pedigree and pregnancies, tuned for about 35% positives, so glucose, BMI and age are
/// correlated with it and with each other. Integer-valued columns are rounded, BMI to 0.1 and
/// the pedigree to 0.001. There are no zero "missing" codes, unlike the original table.
pub fn diabetes(seed: u64) -> Result<(Array<f64>, Array<i64>)> {
    diabetes_on(seed, &default_device())
}

/// [`diabetes`] on `device`.
pub fn diabetes_on(seed: u64, device: &Device) -> Result<(Array<f64>, Array<i64>)> {
    let mut r = HostRng::new(seed);
    let n = DIABETES_ROWS;
    let mut x = Vec::with_capacity(n * 8);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let age = clip(
            21.0 + (r.normal().abs() * 11.0 + r.uniform() * 6.0).round(),
            21.0,
            81.0,
        );
        let pregnancies = clip(poisson(&mut r, 1.2 + (age - 21.0) * 0.15), 0.0, 17.0);
        let bmi = clip(32.0 + 6.5 * r.normal() + 0.08 * (age - 33.0), 18.2, 67.1);
        let glucose = clip(
            (118.0 + 27.0 * r.normal() + 0.5 * (age - 33.0) + 0.9 * (bmi - 32.0)).round(),
            44.0,
            199.0,
        );
        let pressure = clip(
            (70.0 + 11.0 * r.normal() + 0.3 * (age - 33.0) + 0.4 * (bmi - 32.0)).round(),
            24.0,
            122.0,
        );
        let skin = clip(
            (29.0 + 0.9 * (bmi - 32.0) + 7.0 * r.normal()).round(),
            7.0,
            99.0,
        );
        let insulin = clip(
            (120f64.ln() + 0.008 * (glucose - 120.0) + 0.5 * r.normal())
                .exp()
                .round(),
            14.0,
            846.0,
        );
        let pedigree =
            (clip((-0.95 + 0.55 * r.normal()).exp(), 0.078, 2.42) * 1000.0).round() / 1000.0;
        let bmi = (bmi * 10.0).round() / 10.0;
        let logit = -0.7
            + 0.036 * (glucose - 120.0)
            + 0.085 * (bmi - 32.0)
            + 0.025 * (age - 33.0)
            + 0.9 * (pedigree - 0.47)
            + 0.08 * (pregnancies - 3.8);
        let p = 1.0 / (1.0 + (-logit).exp());
        y.push(i64::from(r.uniform() < p));
        x.extend_from_slice(&[
            pregnancies,
            glucose,
            pressure,
            skin,
            insulin,
            bmi,
            pedigree,
            age,
        ]);
    }
    Ok((
        Array::from_vec_on(x, [n, 8], device)?,
        Array::from_vec_on(y, n, device)?,
    ))
}

fn positive(what: &'static str, name: &'static str, v: usize) -> Result<()> {
    if v == 0 {
        return Err(MlError::Parameter {
            what,
            name,
            detail: "must be at least 1".into(),
        });
    }
    Ok(())
}

/// `centers[labels] + noise · N(0, 1)` on `device`, labels uniform in `0..n_centers`.
fn around_centers<T: MlFloat>(
    rng: &mut Generator,
    centers: &Array<T>,
    n: usize,
    noise: T,
    device: &Device,
) -> Result<(Array<T>, Array<i64>)> {
    let k = centers.shape()[0] as i64;
    let d = centers.shape()[1];
    let labels: Array<i64> = rng.integers_on(0, k, n, device)?;
    let base = T::take_rows(centers, &labels)?;
    let eps = rng.normal_on(<T as Element>::zero(), noise, [n, d], device)?;
    let mut x = base;
    x.add_in_place(&eps)?;
    Ok((x, labels))
}

/// A classification set of `n_samples` rows × `n_features` with `n_classes` classes, on the
/// default device: class centres drawn from `N(0, 1)` per feature, each row a centre (its
/// class uniform at random) plus `N(0, 1)` noise per feature. Labels are `0..n_classes`. Drawn
/// on the device (1M × 64 takes milliseconds on a GPU); reproducible per seed on one backend.
///
/// ```
/// use gpukit_ml::datasets::make_classification;
/// # fn main() -> gpukit_ml::Result<()> {
/// let (x, y) = make_classification::<f32>(1000, 16, 10, 42)?;
/// assert_eq!((x.shape(), y.shape()), (&[1000, 16][..], &[1000][..]));
/// # Ok(())
/// # }
/// ```
pub fn make_classification<T: MlFloat>(
    n_samples: usize,
    n_features: usize,
    n_classes: usize,
    seed: u64,
) -> Result<(Array<T>, Array<i64>)> {
    make_classification_on(n_samples, n_features, n_classes, seed, &default_device())
}

/// [`make_classification`] on `device`.
pub fn make_classification_on<T: MlFloat>(
    n_samples: usize,
    n_features: usize,
    n_classes: usize,
    seed: u64,
    device: &Device,
) -> Result<(Array<T>, Array<i64>)> {
    const WHAT: &str = "make_classification";
    positive(WHAT, "n_samples", n_samples)?;
    positive(WHAT, "n_features", n_features)?;
    positive(WHAT, "n_classes", n_classes)?;
    let mut rng = Generator::new(seed);
    let centers = rng.normal_on(
        <T as Element>::zero(),
        <T as Element>::one(),
        [n_classes, n_features],
        device,
    )?;
    around_centers(&mut rng, &centers, n_samples, <T as Element>::one(), device)
}

/// Isotropic Gaussian blobs for clustering: `n` rows × `d` around `centers` centres drawn
/// uniformly in `[-10, 10)` per feature (scikit-learn's box), with standard deviation `std`;
/// returns `(x, labels)` on the default device. Reproducible per seed on one backend.
pub fn make_blobs<T: MlFloat>(
    n: usize,
    d: usize,
    centers: usize,
    std: f64,
    seed: u64,
) -> Result<(Array<T>, Array<i64>)> {
    make_blobs_on(n, d, centers, std, seed, &default_device())
}

/// [`make_blobs`] on `device`.
pub fn make_blobs_on<T: MlFloat>(
    n: usize,
    d: usize,
    centers: usize,
    std: f64,
    seed: u64,
    device: &Device,
) -> Result<(Array<T>, Array<i64>)> {
    const WHAT: &str = "make_blobs";
    positive(WHAT, "n", n)?;
    positive(WHAT, "d", d)?;
    positive(WHAT, "centers", centers)?;
    if !(std.is_finite() && std > 0.0) {
        return Err(MlError::Parameter {
            what: WHAT,
            name: "std",
            detail: format!("must be positive and finite, got {std}"),
        });
    }
    let mut rng = Generator::new(seed);
    let c = rng.uniform_on(T::from_f64(-10.0), T::from_f64(10.0), [centers, d], device)?;
    around_centers(&mut rng, &c, n, T::from_f64(std), device)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corr(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma) * (x - ma)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb) * (y - mb)).sum();
        cov / (va * vb).sqrt()
    }

    #[test]
    fn diabetes_looks_like_the_table() {
        let (x, y) = diabetes_on(0, &Device::Cpu).unwrap();
        assert_eq!((x.shape(), y.shape()), (&[768, 8][..], &[768][..]));
        let xv = x.to_vec().unwrap();
        let yv: Vec<f64> = y.to_vec().unwrap().iter().map(|&v| v as f64).collect();
        let col = |j: usize| -> Vec<f64> { (0..768).map(|i| xv[i * 8 + j]).collect() };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let share = mean(&yv);
        assert!((0.30..0.40).contains(&share), "positives {share}");
        let ranges = [
            (0.0, 17.0),
            (44.0, 199.0),
            (24.0, 122.0),
            (7.0, 99.0),
            (14.0, 846.0),
            (18.2, 67.1),
            (0.078, 2.42),
            (21.0, 81.0),
        ];
        for (j, (lo, hi)) in ranges.iter().enumerate() {
            assert!(col(j).iter().all(|v| v >= lo && v <= hi), "column {j}");
        }
        assert!((110.0..130.0).contains(&mean(&col(1))), "glucose mean");
        assert!((28.0..38.0).contains(&mean(&col(7))), "age mean");
        for j in [1, 5, 7] {
            let c = corr(&col(j), &yv);
            assert!(c > 0.1, "column {j} vs outcome: {c}");
        }
        assert!(corr(&col(1), &col(5)) > 0.1 && corr(&col(7), &col(0)) > 0.3);
        // seeded and the same again
        let (x2, y2) = diabetes_on(0, &Device::Cpu).unwrap();
        assert_eq!(
            (x2.to_vec().unwrap(), y2.to_vec().unwrap()),
            (xv.clone(), y.to_vec().unwrap())
        );
        assert_ne!(
            diabetes_on(1, &Device::Cpu).unwrap().0.to_vec().unwrap(),
            xv
        );
    }

    #[test]
    fn synthetic_sets_have_their_shapes_and_labels() {
        let cpu = Device::Cpu;
        let (x, y) = make_classification_on::<f32>(5000, 8, 4, 3, &cpu).unwrap();
        assert_eq!(x.shape(), &[5000, 8]);
        let yv = y.to_vec().unwrap();
        for c in 0..4 {
            let share = yv.iter().filter(|&&v| v == c).count();
            assert!((1000..1500).contains(&share), "class {c}: {share}");
        }
        let again = make_classification_on::<f32>(5000, 8, 4, 3, &cpu).unwrap();
        assert_eq!(again.0.to_vec().unwrap(), x.to_vec().unwrap());
        let (b, l) = make_blobs_on::<f64>(3000, 2, 3, 0.5, 9, &cpu).unwrap();
        // each blob's spread is about std
        let (bv, lv) = (b.to_vec().unwrap(), l.to_vec().unwrap());
        for c in 0..3 {
            let pts: Vec<f64> = (0..3000)
                .filter(|&i| lv[i] == c)
                .map(|i| bv[i * 2])
                .collect();
            let m = pts.iter().sum::<f64>() / pts.len() as f64;
            let sd = (pts.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / pts.len() as f64).sqrt();
            assert!((0.4..0.6).contains(&sd), "blob {c}: sd {sd}");
        }
        assert!(make_blobs_on::<f64>(10, 2, 0, 1.0, 0, &cpu).is_err());
        assert!(make_blobs_on::<f64>(10, 2, 2, -1.0, 0, &cpu).is_err());
        assert!(make_classification_on::<f64>(0, 2, 2, 0, &cpu).is_err());
    }
}
