//! Timing, the same definition on every side (benches/cupy_twin.py's `measure` mirrors this):
//!
//! - **span**: CUDA events around the whole user-level call (dispatch, allocation of the result,
//!   every kernel or copy it queues, and for calls that return host data the wait for it), taken
//!   with a [`Bracket`]: a start event on the harness's stream with the device idle, and an end
//!   event after the library's stream has run a marker kernel queued right after the call;
//! - **wall**: the host clock from just before the call to the return of a device
//!   synchronisation after it, in a separate run (so neither measurement carries the other's
//!   instrumentation).
//!
//! Every timed call's output is checked in full (`check`), after the timing; `setup` runs before
//! each call, outside the timing, and poisons outputs. Launch-overhead rows time the host per
//! call instead ([`per_launch`]).

use crate::rawcuda::{Bracket, Wait};
use crate::verify::{Outcome, Verify};
use gpukit::prelude::*;
use std::time::Instant;

/// How spans are timed.
pub enum Clock {
    /// CUDA events around the call (see [`Bracket`]).
    Cuda(Bracket),
    /// The host clock up to a synchronisation (the CPU backend's dry run only).
    Host(Option<Instant>),
}

/// The span clock of one side, with that side's synchronisation and end marker.
pub struct Timer {
    /// The span clock.
    pub clock: Clock,
    /// Waits until every call queued by the measured library has finished.
    pub sync: Box<dyn Fn() -> Result<()>>,
    /// Queues `bench_mark(flag, value)` on the measured library's stream.
    pub mark: Box<dyn FnMut(u64, u32) -> Result<()>>,
}

impl Timer {
    /// A host-clock timer for the CPU backend (no marker, gpukit's synchronisation).
    pub fn host() -> Timer {
        Timer {
            clock: Clock::Host(None),
            sync: Box::new(synchronize),
            mark: Box::new(|_, _| Ok(())),
        }
    }

    /// Starts a span (call with the device idle).
    pub fn start(&mut self) -> Result<()> {
        match &mut self.clock {
            Clock::Cuda(b) => b.start(),
            Clock::Host(t) => {
                *t = Some(Instant::now());
                Ok(())
            }
        }
    }

    /// Ends the span and returns it in milliseconds.
    pub fn stop(&mut self) -> Result<f64> {
        match &mut self.clock {
            Clock::Cuda(b) => b.stop(&mut *self.mark),
            Clock::Host(t) => {
                (self.sync)()?;
                let t0 = t
                    .take()
                    .ok_or_else(|| Error::Other("Timer::stop without start".into()))?;
                Ok(t0.elapsed().as_secs_f64() * 1e3)
            }
        }
    }

    /// How the spans were timed, for the result lines.
    pub fn how(&self) -> &'static str {
        match &self.clock {
            Clock::Cuda(b) => match b.wait_kind() {
                Wait::WaitValue => "events: start on the harness stream, end after bench_mark on the library stream (cuStreamWaitValue32)",
                Wait::Spin => "events: start on the harness stream, end after bench_mark on the library stream (spin kernel)",
            },
            Clock::Host(_) => "host clock to a synchronisation (CPU dry run)",
        }
    }
}

/// Spans, wall times and checks of one row on one side.
pub struct Measured {
    /// Event spans, ms, one per timed call.
    pub span_ms: Vec<f64>,
    /// Wall times, ms, one per timed call (separate calls from the spans').
    pub wall_ms: Vec<f64>,
    /// The check of every timed call's output.
    pub verify: Verify,
}

/// Device time per call of `op`, `reps` calls after one untimed: gpukit's profiler brackets
/// every kernel the call launches with an event pair, and a call's time is the sum of its
/// kernels' times (launch gaps, host dispatch and allocation excluded: the definition of the
/// memory ceilings' kernel candidates). Empty when the profiler recorded no kernel (the CPU
/// backend).
pub fn device_times<R>(reps: usize, mut op: impl FnMut() -> Result<R>) -> Result<Vec<f64>> {
    drop(op()?);
    synchronize()?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        profile::start();
        let r = op();
        synchronize()?;
        let recs = profile::stop()?;
        drop(r?);
        if recs.is_empty() || recs.iter().any(|r| !r.device.is_cuda()) {
            return Ok(Vec::new());
        }
        out.push(recs.iter().map(|r| r.total_ms).sum());
    }
    Ok(out)
}

/// `warmup` untimed calls, then `reps` calls timed by span and `reps` by wall clock,
/// alternating; `setup` before each call, `check` after each timed one (both untimed).
#[allow(clippy::too_many_arguments)]
pub fn measure<S, R>(
    t: &mut Timer,
    warmup: usize,
    reps: usize,
    how: &'static str,
    state: &mut S,
    mut setup: impl FnMut(&mut S) -> Result<()>,
    mut op: impl FnMut(&mut S) -> Result<R>,
    mut check: impl FnMut(&mut S, R) -> Result<Outcome>,
) -> Result<Measured> {
    for _ in 0..warmup {
        setup(state)?;
        drop(op(state)?);
    }
    (t.sync)()?;
    // one untimed span, so the marker kernel's first (lazily loaded) launch is not in a timed one
    t.start()?;
    t.stop()?;
    let mut m = Measured {
        span_ms: Vec::with_capacity(reps),
        wall_ms: Vec::with_capacity(reps),
        verify: Verify::new(how),
    };
    for _ in 0..reps {
        setup(state)?;
        (t.sync)()?;
        t.start()?;
        let r = op(state)?;
        m.span_ms.push(t.stop()?);
        (t.sync)()?;
        m.verify.push(check(state, r)?);

        setup(state)?;
        (t.sync)()?;
        let t0 = Instant::now();
        let r = op(state)?;
        (t.sync)()?;
        m.wall_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        m.verify.push(check(state, r)?);
    }
    Ok(m)
}

/// The span of nothing: the bracket's own cost (and the wall time of a synchronisation).
pub fn floor(t: &mut Timer, reps: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    (t.sync)()?;
    t.start()?;
    t.stop()?;
    let (mut span, mut wall) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        (t.sync)()?;
        t.start()?;
        span.push(t.stop()?);
        (t.sync)()?;
        let t0 = Instant::now();
        (t.sync)()?;
        wall.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok((span, wall))
}

/// Per-launch times of `launches` back-to-back calls of `launch`, `reps` times (at least 3):
/// (host time per call, what the launching thread pays; time per call until `sync` returns,
/// the device having run them all), in ms.
pub fn per_launch(
    reps: usize,
    launches: usize,
    mut launch: impl FnMut() -> Result<()>,
    mut sync: impl FnMut() -> Result<()>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let (mut host, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(3) {
        let h = host_ms(|| (0..launches).try_for_each(|_| launch()))?;
        let t0 = Instant::now();
        sync()?;
        let drain = t0.elapsed().as_secs_f64() * 1e3;
        host.push(h / launches as f64);
        wall.push((h + drain) / launches as f64);
    }
    Ok((host, wall))
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
        let (host, wall) = per_launch(
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
        assert_eq!(host.len(), 3, "at least three samples");
        assert_eq!((calls, syncs), (150, 3));
        assert!(host.iter().zip(&wall).all(|(h, w)| h <= w));
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn measure_times_and_checks_every_call() {
        set_default_device(Device::cpu());
        let mut t = Timer::host();
        let (mut setups, mut checks) = (0, 0);
        let m = measure(
            &mut t,
            2,
            5,
            "test",
            &mut (),
            |_| {
                setups += 1;
                Ok(())
            },
            |_| &Array::<f64>::ones(1000)? * 2.0,
            |_, b| {
                checks += 1;
                Ok(Outcome::scalar(b.sum()?, 2000.0, 0.0))
            },
        )
        .unwrap();
        assert_eq!((m.span_ms.len(), m.wall_ms.len()), (5, 5));
        assert_eq!(setups, 2 + 10, "setup before every call, warm-ups included");
        assert_eq!(checks, 10, "every timed call checked, warm-ups not");
        assert!(m.verify.ok());
        assert_eq!(m.verify.checked, 10);
        assert!(m.span_ms.iter().chain(&m.wall_ms).all(|&x| x >= 0.0));
    }

    #[test]
    fn measure_reports_a_call_that_fails_its_check() {
        set_default_device(Device::cpu());
        let mut t = Timer::host();
        let mut k = 0;
        let m = measure(
            &mut t,
            0,
            2,
            "test",
            &mut (),
            |_| Ok(()),
            |_| {
                k += 1;
                Ok(k)
            },
            |_, k| Ok(Outcome::scalar(k as f64, 1.0, 0.0)),
        )
        .unwrap();
        assert_eq!((m.verify.checked, m.verify.failed), (4, 3));
        assert!(!m.verify.ok());
    }

    #[test]
    fn floor_on_the_host_clock() {
        set_default_device(Device::cpu());
        let (s, w) = floor(&mut Timer::host(), 4).unwrap();
        assert_eq!((s.len(), w.len()), (4, 4));
    }
}
