//! The random row: `default_rng(seed).uniform(0.0, 1.0, (10000, 5000))` in float64 (cuRAND's
//! Philox on a GPU) beside CuPy's `cp.random.random((10000, 5000))` (benches/cupy_twin.py,
//! `run_random`): a new array each call, its pool block poisoned with NaN first.
//!
//! The two generators differ, so the outputs cannot be compared element by element. Every
//! timed output is checked in full on the host instead: each element in `[0, 1)` (NaN fails, so a
//! block left unwritten fails), and then two more "elements": the mean within 1e-3 of 1/2 and the
//! standard deviation within 1e-3 of 1/√12 (50 million samples: both errors are below 1e-4 for a
//! uniform generator; small arrays get a tolerance of 4/√n).

use crate::gpu::{poison_pool, Row, POOL_POISON};
use crate::timing::{measure, Timer};
use crate::verify::Outcome;
use gpukit::prelude::*;
use rayon::prelude::*;

/// How far the mean and the standard deviation of `n` samples may stray: 1e-3, or 4/√n for
/// small `n` (the dry run's; the standard errors are about 0.29/√n and 0.26/√n).
fn moment_tol(n: usize) -> f64 {
    (4.0 / (n.max(1) as f64).sqrt()).max(1e-3)
}

/// The check of one output (`values` on the host).
pub fn check_uniform(values: &[f64]) -> Outcome {
    let n = values.len();
    let bad = |v: f64| !(0.0..1.0).contains(&v);
    let mismatches = values.par_iter().filter(|&&v| bad(v)).count();
    let first_bad = values.iter().position(|&v| bad(v)).map(|i| i as u64);
    let mean = values.par_iter().sum::<f64>() / n.max(1) as f64;
    let var = values
        .par_iter()
        .map(|v| (v - mean) * (v - mean))
        .sum::<f64>()
        / n.max(1) as f64;
    let errs = [
        (mean - 0.5).abs(),
        (var.sqrt() - (1.0f64 / 12.0).sqrt()).abs(),
    ];
    let tol = moment_tol(n);
    let moments_bad = errs.iter().filter(|e| e.is_nan() || **e > tol).count();
    Outcome {
        expected: n as u64 + 2,
        elements: n as u64 + 2,
        mismatches: (mismatches + moments_bad) as u64,
        first_bad: first_bad.or((moments_bad > 0).then_some(n as u64)),
        max_rel_err: errs.iter().fold(
            0.0,
            |m, e| if e.is_nan() { f64::INFINITY } else { m.max(*e) },
        ),
    }
}

/// The summary both sides report (they draw different streams, so not `[sum, first, middle,
/// last]`): the mean and the standard deviation rounded to two decimals (0.5 and 0.29 for any
/// uniform generator at this size) and the fraction of elements in `[0, 1)`.
pub fn random_summary(values: &[f64]) -> Vec<f64> {
    let n = values.len().max(1) as f64;
    let mean = values.par_iter().sum::<f64>() / n;
    let var = values
        .par_iter()
        .map(|v| (v - mean) * (v - mean))
        .sum::<f64>()
        / n;
    let inside = values
        .par_iter()
        .filter(|v| (0.0..1.0).contains(*v))
        .count() as f64
        / n;
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    vec![round2(mean), round2(var.sqrt()), inside]
}

/// The row `name` for a `rows`×`cols` float64 array.
pub fn random_row(
    t: &mut Timer,
    name: &'static str,
    (rows, cols): (usize, usize),
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let mut rng = gpukit::random::default_rng(2024);
    let first = rng.uniform(0.0f64, 1.0, (rows, cols))?.to_vec()?;
    let check = random_summary(&first);
    drop(first);
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        "every element in [0, 1) on the host (output poisoned with NaN first), and the mean and \
         standard deviation within 1e-3 of 1/2 and 1/sqrt(12)",
        &mut rng,
        |_| poison_pool(rows * cols, f64::NAN, POOL_POISON),
        |rng| rng.uniform(0.0f64, 1.0, (rows, cols)),
        |_, a| Ok(check_uniform(&a.to_vec()?)),
    )?;
    Ok(Row::op(
        name,
        m,
        span,
        check,
        (rows * cols * 8) as f64,
        "w",
        "cuRAND Philox4x32-10 on gpukit's side, CuPy's cp.random.random (XORWOW) on the other: \
         different streams, so each output is checked for its range and moments, not against the other",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_passes_uniform_samples_and_fails_the_rest() {
        let n = 200_000;
        let good: Vec<f64> = (0..n)
            .map(|i| ((i as u64 * 2654435761) % n as u64) as f64 / n as f64)
            .collect();
        assert!(check_uniform(&good).ok());
        let mut nan = good.clone();
        nan[17] = f64::NAN;
        let o = check_uniform(&nan);
        assert!(!o.ok() && o.first_bad == Some(17));
        let one: Vec<f64> = good
            .iter()
            .map(|v| if *v > 0.99 { 1.0 } else { *v })
            .collect();
        assert!(!check_uniform(&one).ok(), "1.0 is outside [0, 1)");
        let skewed: Vec<f64> = good.iter().map(|v| v * v).collect();
        let o = check_uniform(&skewed);
        assert!(!o.ok() && o.first_bad == Some(n as u64), "the mean is off");
    }
}
