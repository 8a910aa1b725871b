//! A live GPU monitor for notebooks: NVML samples ([`crate::nvml::Sampler`]) drawn as a chart
//! ([`MonitorChart`], made with [`crate::plot`]) that updates in place while a cell runs.
//!
//! This is what the kernel's `%gpu --watch [SECONDS]` and `%%monitor` magics run:
//!
//! ```no_run
//! # fn main() -> gpukit::Result<()> {
//! // %gpu --watch 10
//! gpukit::monitor::watch(10.0)?;
//!
//! // %%monitor: sample while the cell's code runs, then leave the final chart.
//! let mut monitor = gpukit::monitor::LiveMonitor::start(gpukit::nvml::DEFAULT_INTERVAL)?;
//! // ... the cell ...
//! let samples = monitor.finish(); // also on drop, e.g. when the cell returns early
//! # Ok(())
//! # }
//! ```
//!
//! In the `evcxr_gpu` kernel the chart appears when sampling starts and is redrawn every
//! [`UPDATE_EVERY`] ([`LiveDisplay`]: Jupyter `display_data` with a display id, then
//! `update_display_data`); the last update is the final chart, which stays as the cell's output.
//! Elsewhere (plain evcxr) only the final chart is shown. Without an NVIDIA GPU the monitor
//! prints one line saying so and does nothing else, so the cell still runs.
//!
//! This module sits above both leaves it combines, `nvml` and `plot` (see gpukit's layers in
//! docs/ARCHITECTURE.md).

mod chart;
pub mod display;

pub use chart::MonitorChart;
pub use display::LiveDisplay;

use crate::error::{Error, Result};
use crate::nvml::{Sampler, Samples, DEFAULT_INTERVAL};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a live chart is redrawn.
pub const UPDATE_EVERY: Duration = Duration::from_millis(500);

/// The longest [`watch`], seconds.
pub const MAX_WATCH_SECONDS: f64 = 3600.0;

/// Watches the GPUs for `seconds` (at most an hour), sampling every 100 ms, with a chart that
/// updates in place; returns what was recorded, or `None` (after printing one line saying so)
/// where there is no NVIDIA GPU.
pub fn watch(seconds: f64) -> Result<Option<Samples>> {
    watch_every(seconds, DEFAULT_INTERVAL)
}

/// As [`watch`], sampling every `interval` (20 ms to 60 s).
pub fn watch_every(seconds: f64, interval: Duration) -> Result<Option<Samples>> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_WATCH_SECONDS) {
        return Err(Error::Other(format!(
            "cannot watch for {seconds} seconds: give a number of seconds above 0 and at most \
             {MAX_WATCH_SECONDS}"
        )));
    }
    let mut monitor = LiveMonitor::start(interval)?;
    if !monitor.is_running() {
        return Ok(None);
    }
    std::thread::sleep(Duration::from_secs_f64(seconds));
    Ok(monitor.finish())
}

/// A running monitor: samples the GPUs and, in the `evcxr_gpu` kernel, keeps a chart of them
/// up to date in the cell's output until [`LiveMonitor::finish`] (or drop) draws the final one.
#[derive(Debug)]
pub struct LiveMonitor {
    running: Option<Running>,
}

#[derive(Debug)]
struct Running {
    sampler: Arc<Sampler>,
    /// The redrawing thread (it hands the display back when it ends), and what tells it to.
    updater: Option<(JoinHandle<LiveDisplay>, Arc<Stop>)>,
}

#[derive(Debug, Default)]
struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl LiveMonitor {
    /// Starts sampling every `interval` (20 ms to 60 s; [`DEFAULT_INTERVAL`] is 100 ms) and,
    /// where the kernel can update displays, shows the chart.
    ///
    /// Without an NVIDIA GPU, prints one line saying so and returns a monitor that does nothing
    /// ([`LiveMonitor::is_running`] is `false`). An interval out of range is an error.
    pub fn start(interval: Duration) -> Result<LiveMonitor> {
        crate::nvml::sampler::check_interval(interval)?;
        let sampler = match Sampler::start(interval) {
            Ok(s) => Arc::new(s),
            Err(Error::NoGpu(why)) => {
                let why = crate::nvml::no_gpu_reason(&Error::NoGpu(why)).replace('\n', " ");
                println!("{why}; nothing to monitor");
                return Ok(LiveMonitor { running: None });
            }
            Err(e) => return Err(e),
        };
        LiveMonitor::with(sampler, LiveDisplay::new())
    }

    /// A monitor of `sampler`, drawing into `display` (or only at the end, without one).
    pub(crate) fn with(sampler: Arc<Sampler>, display: Option<LiveDisplay>) -> Result<LiveMonitor> {
        let updater = match display {
            Some(mut display) => {
                let names: Vec<String> = sampler
                    .gpus()
                    .iter()
                    .map(|g| format!("GPU {} ({})", g.index, g.name))
                    .collect();
                display.show(&[(
                    "text/plain",
                    &format!(
                        "GPU monitor: reading {} every {} ms ...",
                        names.join(", "),
                        sampler.interval().as_millis()
                    ),
                )]);
                let stop = Arc::new(Stop::default());
                let (s, st) = (sampler.clone(), stop.clone());
                let spawned = std::thread::Builder::new()
                    .name("gpukit-monitor".into())
                    .spawn(move || redraw(&s, &st, display));
                match spawned {
                    Ok(handle) => Some((handle, stop)),
                    Err(e) => {
                        return Err(Error::Other(format!(
                            "cannot start the monitor's drawing thread: {e}"
                        )))
                    }
                }
            }
            None => None,
        };
        Ok(LiveMonitor {
            running: Some(Running { sampler, updater }),
        })
    }

    /// Whether the monitor is sampling (`false` without a GPU, and after
    /// [`LiveMonitor::finish`]).
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Stops sampling and shows the final chart (in place of the live one where there is one);
    /// returns what was recorded. `None` when the monitor was not running.
    pub fn finish(&mut self) -> Option<Samples> {
        let running = self.running.take()?;
        let display = running.updater.and_then(|(handle, stop)| {
            *stop.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
            stop.wake.notify_all();
            handle.join().ok()
        });
        let samples = match Arc::try_unwrap(running.sampler) {
            Ok(sampler) => sampler.stop(),
            // Only the drawing thread shares it, and it has ended; should it not have, its
            // snapshot is as good and the sampler stops when the last handle goes.
            Err(shared) => shared.snapshot(),
        };
        let bundle = match samples.chart() {
            Ok(chart) => chart.bundle(),
            Err(e) => vec![("text/plain", format!("{e}\n{samples}"))],
        };
        match display {
            Some(mut d) => {
                let pairs: Vec<(&str, &str)> =
                    bundle.iter().map(|(m, b)| (*m, b.as_str())).collect();
                d.show(&pairs);
            }
            None => print!("{}", chart::evcxr_content(&bundle)),
        }
        Some(samples)
    }
}

impl Drop for LiveMonitor {
    /// Finishes a monitor that is still running (a cell that returned early keeps the chart of
    /// what it did).
    fn drop(&mut self) {
        self.finish();
    }
}

/// The drawing thread: redraws the chart every [`UPDATE_EVERY`] until told to stop.
fn redraw(sampler: &Sampler, stop: &Stop, mut display: LiveDisplay) -> LiveDisplay {
    let mut drawn = 0;
    loop {
        {
            let stopped = stop.stopped.lock().unwrap_or_else(|p| p.into_inner());
            let (stopped, _) = stop
                .wake
                .wait_timeout_while(stopped, UPDATE_EVERY, |s| !*s)
                .unwrap_or_else(|p| p.into_inner());
            if *stopped {
                return display;
            }
        }
        let samples = sampler.snapshot();
        if samples.samples.len() == drawn {
            continue;
        }
        drawn = samples.samples.len();
        if let Ok(chart) = samples.chart() {
            let bundle = chart.bundle();
            let pairs: Vec<(&str, &str)> = bundle.iter().map(|(m, b)| (*m, b.as_str())).collect();
            display.show(&pairs);
        }
    }
}

#[cfg(test)]
mod tests;
