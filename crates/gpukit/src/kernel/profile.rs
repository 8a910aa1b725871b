//! Per-kernel timings, for the `%%profile` magic.
//!
//! ```no_run
//! gpukit::profile::start();
//! // ... launches ...
//! for r in gpukit::profile::stop()? {
//!     println!("{r}");
//! }
//! # Ok::<(), gpukit::Error>(())
//! ```
//!
//! While profiling is on, every CUDA kernel gpukit launches is bracketed by two CUDA events on the
//! device's stream (GPU time, not host time): `#[kernel]`s, raw CUDA C, `#[vectorize]` functions
//! and the built-in kernels of array operations (named like `mul_as_f64`, `sum_f32`,
//! `fill_f64`, `cast_i32_f32`), which all go through one launch path. Every CPU kernel launch is
//! timed on the host (CPU array operations are not kernels and are not recorded). When profiling
//! is off, a launch pays one relaxed atomic load.

use crate::backend::cuda::{driver_err, CudaBackend};
use crate::device::Device;
use crate::error::Result;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaEvent;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Timings of one kernel on one device over a profiling session.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRecord {
    /// Kernel name.
    pub kernel: String,
    /// The device it ran on.
    pub device: Device,
    /// Number of launches.
    pub calls: usize,
    /// Sum of the launches' times, in milliseconds.
    pub total_ms: f64,
    /// Shortest launch, in milliseconds.
    pub min_ms: f64,
    /// Longest launch, in milliseconds.
    pub max_ms: f64,
}

impl ProfileRecord {
    /// Mean time per launch, in milliseconds.
    pub fn mean_ms(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.total_ms / self.calls as f64
        }
    }
}

impl fmt::Display for ProfileRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on {}: {} call(s), total {:.3} ms, mean {:.3} ms (min {:.3}, max {:.3})",
            self.kernel,
            self.device,
            self.calls,
            self.total_ms,
            self.mean_ms(),
            self.min_ms,
            self.max_ms
        )
    }
}

crate::process::process_global! {
    /// Whether a profiling session is running (in any copy of gpukit).
    fn active() -> &'static AtomicBool = AtomicBool::new(false);
}

/// A launch being timed.
enum Sample {
    /// Both events recorded; the time is known once the device has passed the second one.
    Cuda {
        kernel: String,
        device: Device,
        start: CudaEvent,
        end: CudaEvent,
    },
    /// A finished CPU launch.
    Done {
        kernel: String,
        device: Device,
        ms: f64,
    },
}

// SAFETY: CUDA events may be queried from any thread.
unsafe impl Send for Sample {}

crate::process::process_global! {
    /// The launches timed by the running profiling session.
    fn samples() -> &'static Mutex<Vec<Sample>> = Mutex::new(Vec::new());
}

/// Starts (or restarts) a profiling session, forgetting earlier samples.
pub fn start() {
    samples().lock().unwrap_or_else(|p| p.into_inner()).clear();
    active().store(true, Ordering::Release);
}

/// Whether a profiling session is running.
#[inline]
pub fn is_active() -> bool {
    active().load(Ordering::Relaxed)
}

/// Ends the session: waits for the timed launches and returns one record per kernel and device,
/// in order of first launch.
pub fn stop() -> Result<Vec<ProfileRecord>> {
    active().store(false, Ordering::Release);
    let samples = std::mem::take(&mut *samples().lock().unwrap_or_else(|p| p.into_inner()));
    let mut records: Vec<ProfileRecord> = Vec::new();
    for s in samples {
        let (kernel, device, ms) = match s {
            Sample::Done { kernel, device, ms } => (kernel, device, ms),
            Sample::Cuda {
                kernel,
                device,
                start,
                end,
            } => {
                end.synchronize()
                    .map_err(|e| driver_err("waiting for a profiled kernel", e))?;
                let ms = start
                    .elapsed_ms(&end)
                    .map_err(|e| driver_err("reading a profiling event", e))?;
                (kernel, device, ms as f64)
            }
        };
        match records
            .iter_mut()
            .find(|r| r.kernel == kernel && r.device == device)
        {
            Some(r) => {
                r.calls += 1;
                r.total_ms += ms;
                r.min_ms = r.min_ms.min(ms);
                r.max_ms = r.max_ms.max(ms);
            }
            None => records.push(ProfileRecord {
                kernel,
                device,
                calls: 1,
                total_ms: ms,
                min_ms: ms,
                max_ms: ms,
            }),
        }
    }
    Ok(records)
}

/// Start of a timed CPU launch (`None` when profiling is off).
pub(crate) fn cpu_timer() -> Option<Instant> {
    is_active().then(Instant::now)
}

/// End of a timed CPU launch.
pub(crate) fn finish_cpu(timer: Option<Instant>, kernel: &str) {
    if let Some(t0) = timer {
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        push(Sample::Done {
            kernel: kernel.to_string(),
            device: Device::Cpu,
            ms,
        });
    }
}

/// Records the start event of a CUDA launch when profiling is on (`None`, after one relaxed
/// load and no other work, when it is off).
#[inline]
pub(crate) fn cuda_begin(backend: &CudaBackend) -> Result<Option<CudaEvent>> {
    if !is_active() {
        return Ok(None);
    }
    record(backend).map(Some)
}

/// Records the end event of a CUDA launch whose start [`cuda_begin`] recorded.
#[cold]
pub(crate) fn cuda_end(start: CudaEvent, backend: &CudaBackend, kernel: &str) -> Result<()> {
    let end = record(backend)?;
    push(Sample::Cuda {
        kernel: kernel.to_string(),
        device: backend.device(),
        start,
        end,
    });
    Ok(())
}

#[cold]
fn record(backend: &CudaBackend) -> Result<CudaEvent> {
    let event = backend
        .context()
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| driver_err("creating a profiling event", e))?;
    event
        .record(backend.stream())
        .map_err(|e| driver_err("recording a profiling event", e))?;
    Ok(event)
}

fn push(s: Sample) {
    samples().lock().unwrap_or_else(|p| p.into_inner()).push(s);
}

/// Profiling sessions are process-wide: unit tests that start one, or launch CUDA kernels, take
/// turns through this lock.
#[cfg(test)]
pub(crate) static TEST_SESSION: Mutex<()> = Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    /// Built-in array operations are timed like every other kernel (skips without a GPU).
    #[test]
    fn built_in_array_operations_are_profiled() {
        use crate::Array;
        let _turn = TEST_SESSION.lock().unwrap_or_else(|p| p.into_inner());
        let Some(dev) = crate::testing::gpu_or_skip() else {
            return;
        };
        let a = Array::<f32>::ones_on(1 << 20, &dev).unwrap();
        let _ = (&a * 2.0).unwrap().sum().unwrap();
        start();
        let b = (&a * 2.0).unwrap();
        let s = b.sum().unwrap();
        let records = stop().unwrap();
        assert_eq!(s, 2.0 * (1 << 20) as f32);
        for name in ["mul_as_f32", "sum_f32"] {
            let r = records
                .iter()
                .find(|r| r.kernel == name)
                .unwrap_or_else(|| panic!("{name} not profiled: {records:?}"));
            assert!(r.calls >= 1 && r.min_ms > 0.0, "{r}");
            assert_eq!(r.device, dev);
        }
    }

    #[test]
    fn aggregates_per_kernel_in_first_launch_order() {
        let _turn = TEST_SESSION.lock().unwrap_or_else(|p| p.into_inner());
        start();
        finish_cpu(Some(Instant::now()), "b");
        finish_cpu(Some(Instant::now()), "a");
        finish_cpu(Some(Instant::now()), "b");
        let r = stop().unwrap();
        assert!(!is_active());
        assert_eq!(
            r.iter()
                .map(|r| (r.kernel.as_str(), r.calls))
                .collect::<Vec<_>>(),
            [("b", 2), ("a", 1)]
        );
        assert!(r[0].min_ms <= r[0].mean_ms() && r[0].mean_ms() <= r[0].max_ms);
        finish_cpu(cpu_timer(), "off");
        start();
        assert!(stop().unwrap().is_empty());
    }
}
