//! Timing: warm-up, then repetitions each timed by CUDA events and by the host clock between two
//! synchronisations.
//!
//! The events are gpukit's profiler's: while it is on it brackets every kernel gpukit launches
//! with two events on the device's stream, built-in array operations (`&a * 2.0`, `sum`,
//! `Array::ones`, ...) as well as `#[kernel]`s and raw CUDA C, so a row's `gpu_ms` is the sum of
//! its kernels' event times, as CuPy's side is timed with events. A repetition that launches no
//! kernel (a transfer) has no `gpu_ms`; every repetition keeps its host time as `wall_ms`.

use gpukit::prelude::*;
use std::time::Instant;

/// Times of one repetition, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Sum of the CUDA-event times of the kernels the operation launched (None: it launched none,
    /// for example a transfer or a memset).
    pub gpu_ms: Option<f64>,
    /// Host time from a synchronised start to the synchronised end.
    pub wall_ms: f64,
}

/// Runs `setup` then `op`, `warmup` times untimed, then `reps` timed (setup stays outside).
pub fn measure(
    warmup: usize,
    reps: usize,
    mut setup: impl FnMut() -> Result<()>,
    mut op: impl FnMut() -> Result<()>,
) -> Result<Vec<Sample>> {
    measure_with(warmup, reps, &mut (), |_| setup(), |_| op())
}

/// [`measure`] with a state that both `setup` (which may replace it, e.g. with a fresh poisoned
/// output) and `op` use.
pub fn measure_with<S>(
    warmup: usize,
    reps: usize,
    state: &mut S,
    mut setup: impl FnMut(&mut S) -> Result<()>,
    mut op: impl FnMut(&mut S) -> Result<()>,
) -> Result<Vec<Sample>> {
    for _ in 0..warmup {
        setup(state)?;
        op(state)?;
    }
    synchronize()?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        setup(state)?;
        synchronize()?;
        profile::start();
        let t0 = Instant::now();
        op(state)?;
        synchronize()?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        let records = profile::stop()?;
        let gpu_ms = if records.is_empty() {
            None
        } else {
            Some(records.iter().map(|r| r.total_ms).sum())
        };
        out.push(Sample { gpu_ms, wall_ms });
    }
    Ok(out)
}

/// Per-launch samples of `launches` back-to-back calls of `launch`, `reps` times (at least 3):
/// `gpu_ms` is the host time per call (what the launching thread pays), `wall_ms` the time per
/// call until `sync` returns (the device has run them all: throughput).
pub fn per_launch(
    reps: usize,
    launches: usize,
    mut launch: impl FnMut() -> Result<()>,
    mut sync: impl FnMut() -> Result<()>,
) -> Result<Vec<Sample>> {
    let mut samples = Vec::with_capacity(reps.max(3));
    for _ in 0..reps.max(3) {
        let host = host_ms(|| (0..launches).try_for_each(|_| launch()))?;
        let t0 = Instant::now();
        sync()?;
        let drain = t0.elapsed().as_secs_f64() * 1e3;
        samples.push(Sample {
            gpu_ms: Some(host / launches as f64),
            wall_ms: (host + drain) / launches as f64,
        });
    }
    Ok(samples)
}

/// Median of a non-empty list (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Host-side wall time of `f` in milliseconds (no synchronisation).
pub fn host_ms(f: impl FnOnce() -> Result<()>) -> Result<f64> {
    let t0 = Instant::now();
    f()?;
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_launch_counts_calls_and_divides_by_them() {
        let (mut calls, mut syncs) = (0, 0);
        let s = per_launch(
            1,
            50,
            || {
                calls += 1;
                Ok(())
            },
            || {
                syncs += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(s.len(), 3, "at least three samples");
        assert_eq!((calls, syncs), (150, 3));
        assert!(s.iter().all(|x| x.gpu_ms.unwrap() <= x.wall_ms));
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn measure_on_cpu_counts_reps_and_runs_setup() {
        set_default_device(Device::cpu());
        let mut setups = 0;
        let s = measure(
            2,
            5,
            || {
                setups += 1;
                Ok(())
            },
            || {
                let a = Array::<f64>::ones(1000)?;
                let b = (&a * 2.0)?;
                assert_eq!(b.sum()?, 2000.0);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(setups, 7);
        assert!(s.iter().all(|x| x.wall_ms >= 0.0));
    }
}
