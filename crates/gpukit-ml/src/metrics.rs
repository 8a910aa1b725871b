//! Scores of predictions, computed on the device where the labels lie (scikit-learn's
//! `accuracy_score`, `confusion_matrix`, `r2_score`).
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit_ml::metrics::{accuracy_score, confusion_matrix};
//!
//! # fn main() -> gpukit_ml::Result<()> {
//! let truth = Array::from_vec(vec![0i64, 1, 1, 2], 4)?;
//! let pred = Array::from_vec(vec![0i64, 1, 2, 2], 4)?;
//! assert_eq!(accuracy_score(&truth, &pred)?, 0.75);
//! let (cm, labels) = confusion_matrix(&truth, &pred)?;
//! assert_eq!(labels, vec![0, 1, 2]);
//! assert_eq!(cm.to_vec()?, vec![1, 0, 0, 0, 1, 1, 0, 0, 1]);
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use gpukit::prelude::*;

use crate::error::{MlError, Result};
use crate::float::MlFloat;
use crate::input::Targets;
use crate::kernels::{labels as k, stride_grid};
use crate::labels;

/// Two target vectors, borrowed or copied.
type Pair<'a, L> = (Cow<'a, Array<L>>, Cow<'a, Array<L>>);

/// Both target vectors on one device (the first's), of one non-zero length.
fn pair<'a, L: Element>(
    what: &'static str,
    a: &'a (impl Targets<L> + ?Sized),
    b: &'a (impl Targets<L> + ?Sized),
) -> Result<Pair<'a, L>> {
    let a = a.targets(what)?;
    let b = b.targets(what)?;
    if a.size() != b.size() {
        return Err(MlError::Shape {
            what,
            detail: format!("y_true has {} values but y_pred has {}", a.size(), b.size()),
        });
    }
    if a.size() == 0 {
        return Err(MlError::Shape {
            what,
            detail: "the targets are empty".into(),
        });
    }
    let b = if b.device() != a.device() {
        Cow::Owned(b.to_device(&a.device())?)
    } else {
        b
    };
    Ok((a, b))
}

/// The share of rows where `y_pred` equals `y_true` (a value in [0, 1]).
pub fn accuracy_score(
    y_true: &(impl Targets<i64> + ?Sized),
    y_pred: &(impl Targets<i64> + ?Sized),
) -> Result<f64> {
    let (a, b) = pair("accuracy_score", y_true, y_pred)?;
    let hits = a.eq(&*b)?.count_nonzero()?;
    Ok(hits as f64 / a.size() as f64)
}

/// The confusion matrix: entry `[i, j]` counts rows whose true label is `labels[i]` and
/// predicted label `labels[j]`, where `labels` (returned too) is the sorted union of the labels
/// in both vectors. Counts come from integer atomics on the device: exact.
pub fn confusion_matrix(
    y_true: &(impl Targets<i64> + ?Sized),
    y_pred: &(impl Targets<i64> + ?Sized),
) -> Result<(Array<i64>, Vec<i64>)> {
    let (a, b) = pair("confusion_matrix", y_true, y_pred)?;
    let both = Array::concatenate(&[&*a, &*b], 0)?;
    let table = labels::distinct(&both)?;
    let n = table.size();
    let ta = labels::codes(&a, &table)?;
    let tb = labels::codes(&b, &table)?;
    let mut cm = Array::<i64>::zeros_on([n, n], &a.device())?;
    let (bl, th) = stride_grid(a.size());
    launch!(k::confusion_counts[bl, th](&ta, &tb, n, &mut cm))?;
    Ok((cm, table.to_vec()?))
}

/// The coefficient of determination, `1 − Σ(y − ŷ)² / Σ(y − ȳ)²`. Constant `y_true`: 1 when
/// the predictions are exact, else 0 (scikit-learn's `force_finite`).
pub fn r2_score<T: MlFloat>(
    y_true: &(impl Targets<T> + ?Sized),
    y_pred: &(impl Targets<T> + ?Sized),
) -> Result<f64> {
    let (a, b) = pair("r2_score", y_true, y_pred)?;
    let ss_res = (&*a - &*b)?.square()?.sum()?.to_f64();
    let mean = a.mean()?;
    let ss_tot = (&*a - mean)?.square()?.sum()?.to_f64();
    if ss_tot == 0.0 {
        return Ok(if ss_res == 0.0 { 1.0 } else { 0.0 });
    }
    Ok(1.0 - ss_res / ss_tot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn scores_match_host_counts_on_random_labels() {
        let cpu = Device::Cpu;
        let mut r = StdRng::seed_from_u64(5);
        let n = 5000;
        let t: Vec<i64> = (0..n).map(|_| r.random_range(-3..4)).collect();
        let p: Vec<i64> = (0..n).map(|_| r.random_range(-2..6)).collect();
        let ta = Array::from_vec_on(t.clone(), n, &cpu).unwrap();
        let pa = Array::from_vec_on(p.clone(), n, &cpu).unwrap();
        let acc = accuracy_score(&ta, &pa).unwrap();
        let hits = t.iter().zip(&p).filter(|(a, b)| a == b).count();
        assert_eq!(acc, hits as f64 / n as f64);
        let (cm, labels) = confusion_matrix(&ta, &pa).unwrap();
        let mut want_labels: Vec<i64> = t.iter().chain(&p).copied().collect();
        want_labels.sort();
        want_labels.dedup();
        assert_eq!(labels, want_labels);
        let l = labels.len();
        let mut want = vec![0i64; l * l];
        let pos = |v: i64| labels.iter().position(|&x| x == v).unwrap();
        for (a, b) in t.iter().zip(&p) {
            want[pos(*a) * l + pos(*b)] += 1;
        }
        assert_eq!(cm.shape(), &[l, l]);
        assert_eq!(cm.to_vec().unwrap(), want);
    }

    #[test]
    fn r2_matches_the_formula() {
        let cpu = Device::Cpu;
        let t = vec![3.0f64, -0.5, 2.0, 7.0];
        let p = vec![2.5f64, 0.0, 2.0, 8.0];
        let r2 = r2_score(
            &Array::from_vec_on(t.clone(), 4, &cpu).unwrap(),
            &Array::from_vec_on(p, 4, &cpu).unwrap(),
        )
        .unwrap();
        assert!((r2 - 0.948_608_137_044_967).abs() < 1e-12, "{r2}");
        let c = Array::from_vec_on(vec![1.0f32; 3], 3, &cpu).unwrap();
        assert_eq!(r2_score(&c, &c).unwrap(), 1.0);
        let d = Array::from_vec_on(vec![1.0f32, 1.0, 2.0], 3, &cpu).unwrap();
        assert_eq!(r2_score(&c, &d).unwrap(), 0.0);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let cpu = Device::Cpu;
        let a = Array::from_vec_on(vec![1i64, 2], 2, &cpu).unwrap();
        let b = Array::from_vec_on(vec![1i64, 2, 3], 3, &cpu).unwrap();
        let e = accuracy_score(&a, &b).unwrap_err().to_string();
        assert!(e.contains("2 values") && e.contains("3"), "{e}");
        let z = Array::<i64>::zeros_on(0, &cpu).unwrap();
        assert!(confusion_matrix(&z, &z)
            .unwrap_err()
            .to_string()
            .contains("empty"));
    }
}
