//! [`Sampler`]: what the GPUs do over time, recorded on background threads.
//!
//! Every GPU is read on its own thread at a fixed rate (the reading of PCIe traffic alone takes
//! NVML about 20 ms per direction, so GPUs read in turn would stretch the interval). Each
//! reading is a [`Sample`] with its time since the start; [`Sampler::stop`] returns them all as
//! [`Samples`].
//!
//! Where the readings come from is a [`SampleSource`]: NVML ([`NvmlSource`]) normally, or, for
//! tests on machines without a GPU, the [`FakeSource`](super::FakeSource) that
//! `GPUKIT_NVML_FAKE=1` selects.

use super::{fake, nvml, Error, Result, NO_GPU};
use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// The interval [`Sampler::start`] uses when none is given: 100 ms.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

/// The shortest interval: NVML's counters (utilisation, PCIe traffic) do not change faster.
pub const MIN_INTERVAL: Duration = Duration::from_millis(20);

/// The longest interval.
pub const MAX_INTERVAL: Duration = Duration::from_secs(60);

/// The most samples one sampler keeps (per GPU); it stops recording there and says so.
pub const MAX_SAMPLES: usize = 1_000_000;

/// One GPU a sampler reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    /// NVML index.
    pub index: u32,
    /// Marketing name.
    pub name: String,
    /// Memory size, bytes.
    pub memory_total: u64,
}

/// One reading of one GPU. A value the GPU or driver does not report is `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    /// NVML index of the GPU.
    pub gpu: u32,
    /// When the reading was taken, since the sampler started.
    pub time: Duration,
    /// Percent of the last sample period (1/6 s to 1 s, set by the driver) in which a kernel
    /// ran.
    pub gpu_util: Option<u32>,
    /// Percent of the last sample period in which device memory was read or written.
    pub memory_util: Option<u32>,
    /// Device memory in use by every process, bytes.
    pub memory_used: Option<u64>,
    /// Power draw, watts.
    pub power_w: Option<f64>,
    /// Die temperature, degrees Celsius.
    pub temperature_c: Option<u32>,
    /// Streaming multiprocessor clock, MHz.
    pub sm_clock_mhz: Option<u32>,
    /// PCIe traffic from the GPU to the host, bytes per second (over 20 ms).
    pub pcie_tx: Option<u64>,
    /// PCIe traffic from the host to the GPU, bytes per second (over 20 ms).
    pub pcie_rx: Option<u64>,
}

/// Where a [`Sampler`] gets its readings.
pub trait SampleSource: Send + Sync + 'static {
    /// A short name for charts and messages, e.g. `NVML`.
    fn name(&self) -> String;

    /// The GPUs to read; an [`Error::NoGpu`] where there is none.
    fn gpus(&self) -> Result<Vec<GpuInfo>>;

    /// One reading of GPU `gpu` (an index from [`SampleSource::gpus`]), taken `at` after the
    /// sampler started. The sampler sets [`Sample::gpu`] and [`Sample::time`] itself.
    fn read(&self, gpu: u32, at: Duration) -> Result<Sample>;
}

/// Readings from NVML.
#[derive(Debug, Clone, Copy, Default)]
pub struct NvmlSource;

impl SampleSource for NvmlSource {
    fn name(&self) -> String {
        "NVML".into()
    }

    fn gpus(&self) -> Result<Vec<GpuInfo>> {
        let nvml = nvml().map_err(Error::NoGpu)?;
        let count = nvml
            .device_count()
            .map_err(|e| Error::NoGpu(format!("{NO_GPU} (NVML cannot count devices: {e})")))?;
        if count == 0 {
            return Err(Error::NoGpu(NO_GPU.into()));
        }
        (0..count)
            .map(|index| {
                let dev = nvml
                    .device_by_index(index)
                    .map_err(|e| Error::Cuda(format!("NVML device {index}: {e}")))?;
                Ok(GpuInfo {
                    index,
                    name: dev.name().unwrap_or_else(|_| "unknown NVIDIA GPU".into()),
                    memory_total: dev.memory_info().map(|m| m.total).unwrap_or(0),
                })
            })
            .collect()
    }

    fn read(&self, gpu: u32, _at: Duration) -> Result<Sample> {
        let nvml = nvml().map_err(Error::NoGpu)?;
        let dev = nvml
            .device_by_index(gpu)
            .map_err(|e| Error::Cuda(format!("NVML device {gpu}: {e}")))?;
        let util = dev.utilization_rates().ok();
        // NVML reports PCIe traffic in KB/s.
        let pcie = |c| dev.pcie_throughput(c).ok().map(|kb| u64::from(kb) * 1024);
        Ok(Sample {
            gpu_util: util.as_ref().map(|u| u.gpu),
            memory_util: util.as_ref().map(|u| u.memory),
            memory_used: dev.memory_info().ok().map(|m| m.used),
            power_w: dev.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
            temperature_c: dev.temperature(TemperatureSensor::Gpu).ok(),
            sm_clock_mhz: dev.clock_info(Clock::SM).ok(),
            pcie_tx: pcie(PcieUtilCounter::Send),
            pcie_rx: pcie(PcieUtilCounter::Receive),
            ..Sample::default()
        })
    }
}

/// What a [`Sampler`] recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    /// Where the readings came from (`NVML`, or the fake source of tests).
    pub source: String,
    /// The GPUs read.
    pub gpus: Vec<GpuInfo>,
    /// The interval asked for.
    pub interval: Duration,
    /// When sampling started (wall clock).
    pub started: SystemTime,
    /// How long sampling ran (to the last snapshot or to [`Sampler::stop`]).
    pub elapsed: Duration,
    /// Every reading, in time order per GPU.
    pub samples: Vec<Sample>,
    /// What went wrong while sampling (a reading that failed, the sample limit); each message
    /// once.
    pub errors: Vec<String>,
}

impl Samples {
    /// The readings of GPU `index`, in time order.
    pub fn of_gpu(&self, index: u32) -> impl Iterator<Item = &Sample> + '_ {
        self.samples.iter().filter(move |s| s.gpu == index)
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

/// The state the sampling threads share with their [`Sampler`].
struct Shared {
    /// `true` once the sampler stops; the threads wait on `wake` between readings.
    stopped: Mutex<bool>,
    wake: Condvar,
    samples: Mutex<Vec<Sample>>,
    errors: Mutex<Vec<String>>,
    /// Threads that have not yet taken their first reading.
    starting: Mutex<usize>,
    started: Condvar,
}

impl Shared {
    fn note_error(&self, message: String) {
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        if !errors.contains(&message) {
            errors.push(message);
        }
    }
}

/// Records what the GPUs do, on one background thread per GPU, until [`Sampler::stop`].
///
/// ```no_run
/// use gpukit::nvml::Sampler;
/// use std::time::Duration;
///
/// # fn main() -> gpukit::Result<()> {
/// let sampler = Sampler::start(Duration::from_millis(50))?;
/// // ... run GPU work ...
/// let samples = sampler.stop();
/// for s in samples.of_gpu(0) {
///     println!("{:?}: GPU {:?} %, {:?} W", s.time, s.gpu_util, s.power_w);
/// }
/// # Ok(())
/// # }
/// ```
///
/// Dropping a sampler stops it too (its samples are then lost).
pub struct Sampler {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    source: String,
    gpus: Vec<GpuInfo>,
    interval: Duration,
    started: SystemTime,
    start: Instant,
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Sampler({}, {} GPU(s), every {:?})",
            self.source,
            self.gpus.len(),
            self.interval
        )
    }
}

/// Checks that `interval` is within [`MIN_INTERVAL`]..=[`MAX_INTERVAL`].
pub(crate) fn check_interval(interval: Duration) -> Result<()> {
    if (MIN_INTERVAL..=MAX_INTERVAL).contains(&interval) {
        Ok(())
    } else {
        Err(Error::Other(format!(
            "a sampling interval of {interval:?} cannot be used: it must be {} ms to {} s \
             (NVML's counters do not change faster than every 20 ms)",
            MIN_INTERVAL.as_millis(),
            MAX_INTERVAL.as_secs()
        )))
    }
}

impl Sampler {
    /// Starts sampling every GPU every `interval` (20 ms to 60 s; [`DEFAULT_INTERVAL`] is
    /// 100 ms) from NVML, or from the fake source where `GPUKIT_NVML_FAKE=1` (tests only).
    ///
    /// Returns once every GPU has been read once. [`Error::NoGpu`] (whose message starts with
    /// "no NVIDIA GPU, running on CPU") where NVML cannot be loaded or sees no GPU.
    pub fn start(interval: Duration) -> Result<Sampler> {
        if fake::fake_enabled() {
            Sampler::with_source(fake::FakeSource::default(), interval)
        } else {
            Sampler::with_source(NvmlSource, interval)
        }
    }

    /// Starts sampling the GPUs of `source` every `interval`.
    pub fn with_source(source: impl SampleSource, interval: Duration) -> Result<Sampler> {
        check_interval(interval)?;
        let gpus = source.gpus()?;
        if gpus.is_empty() {
            return Err(Error::NoGpu(NO_GPU.into()));
        }
        let shared = Arc::new(Shared {
            stopped: Mutex::new(false),
            wake: Condvar::new(),
            samples: Mutex::new(Vec::new()),
            errors: Mutex::new(Vec::new()),
            starting: Mutex::new(gpus.len()),
            started: Condvar::new(),
        });
        let source: Arc<dyn SampleSource> = Arc::new(source);
        let started = SystemTime::now();
        let start = Instant::now();
        let mut sampler = Sampler {
            shared: shared.clone(),
            threads: Vec::new(),
            source: source.name(),
            gpus: gpus.clone(),
            interval,
            started,
            start,
        };
        for g in &gpus {
            let (shared, source, gpu) = (shared.clone(), source.clone(), g.index);
            let spawned = std::thread::Builder::new()
                .name(format!("gpukit-sampler-{gpu}"))
                .spawn(move || sample_loop(&*source, gpu, start, interval, &shared));
            match spawned {
                Ok(handle) => sampler.threads.push(handle),
                Err(e) => {
                    // Dropping the sampler stops the threads already started.
                    return Err(Error::Other(format!("cannot start a sampling thread: {e}")));
                }
            }
        }
        let mut waiting = shared.starting.lock().unwrap_or_else(|p| p.into_inner());
        while *waiting > 0 {
            waiting = shared
                .started
                .wait(waiting)
                .unwrap_or_else(|p| p.into_inner());
        }
        drop(waiting);
        Ok(sampler)
    }

    /// The GPUs being read.
    pub fn gpus(&self) -> &[GpuInfo] {
        &self.gpus
    }

    /// The interval asked for.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Where the readings come from (`NVML`, or the fake source of tests).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// What has been recorded so far; sampling goes on.
    pub fn snapshot(&self) -> Samples {
        let mut samples = self
            .shared
            .samples
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        samples.sort_by_key(|s| (s.gpu, s.time));
        Samples {
            source: self.source.clone(),
            gpus: self.gpus.clone(),
            interval: self.interval,
            started: self.started,
            elapsed: self.start.elapsed(),
            samples,
            errors: self
                .shared
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }

    /// Stops sampling and returns everything recorded.
    pub fn stop(mut self) -> Samples {
        self.halt();
        self.snapshot()
    }

    /// Tells the threads to stop and waits for them.
    fn halt(&mut self) {
        *self
            .shared
            .stopped
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = true;
        self.shared.wake.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.halt();
    }
}

/// One GPU's thread: a reading at `start + k * interval` for k = 0, 1, ... until stopped.
/// A reading that takes longer than the interval makes the next one wait for the following
/// slot, so readings never pile up.
fn sample_loop(
    source: &dyn SampleSource,
    gpu: u32,
    start: Instant,
    interval: Duration,
    shared: &Shared,
) {
    let mut k: u32 = 0;
    let mut first = true;
    let mut recorded = 0usize;
    loop {
        let at = start.elapsed();
        match source.read(gpu, at) {
            Ok(_) if recorded >= MAX_SAMPLES => shared.note_error(format!(
                "GPU {gpu}: stopped recording after {MAX_SAMPLES} samples"
            )),
            Ok(s) => {
                recorded += 1;
                shared
                    .samples
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Sample { gpu, time: at, ..s });
            }
            Err(e) => shared.note_error(format!("GPU {gpu}: {e}")),
        }
        if first {
            first = false;
            let mut n = shared.starting.lock().unwrap_or_else(|p| p.into_inner());
            *n = n.saturating_sub(1);
            shared.started.notify_all();
        }
        let now = start.elapsed();
        k += 1;
        let due = interval * k;
        if due <= now {
            // Late: skip to the next slot still ahead.
            k = (now.as_nanos() / interval.as_nanos()) as u32 + 1;
        }
        let next = start + interval * k;
        let mut stopped = shared.stopped.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if *stopped {
                return;
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            stopped = shared
                .wake
                .wait_timeout(stopped, next - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A source counting its readings; fails every reading of GPU 1 when asked to.
    struct Counting {
        reads: Arc<AtomicU32>,
        gpus: u32,
        fail_gpu_1: bool,
    }

    impl SampleSource for Counting {
        fn name(&self) -> String {
            "counting".into()
        }
        fn gpus(&self) -> Result<Vec<GpuInfo>> {
            Ok((0..self.gpus)
                .map(|index| GpuInfo {
                    index,
                    name: format!("test GPU {index}"),
                    memory_total: 1 << 30,
                })
                .collect())
        }
        fn read(&self, gpu: u32, at: Duration) -> Result<Sample> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.fail_gpu_1 && gpu == 1 {
                return Err(Error::Cuda("GPU has fallen off the bus".into()));
            }
            Ok(Sample {
                gpu_util: Some(at.as_millis() as u32 % 101),
                ..Sample::default()
            })
        }
    }

    fn counting(gpus: u32, fail_gpu_1: bool) -> (Counting, Arc<AtomicU32>) {
        let reads = Arc::new(AtomicU32::new(0));
        (
            Counting {
                reads: reads.clone(),
                gpus,
                fail_gpu_1,
            },
            reads,
        )
    }

    #[test]
    fn the_interval_is_honoured_roughly() {
        let (src, _) = counting(1, false);
        let interval = Duration::from_millis(25);
        let sampler = Sampler::with_source(src, interval).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let s = sampler.stop();
        let n = s.samples.len();
        // 500 ms / 25 ms = 20 slots plus the first reading; a loaded test machine may miss
        // slots, never add any.
        assert!((8..=22).contains(&n), "{n} samples in 500 ms at 25 ms");
        for pair in s.samples.windows(2) {
            let gap = pair[1].time - pair[0].time;
            assert!(gap >= Duration::from_millis(20), "readings {gap:?} apart");
        }
        assert_eq!(s.samples[0].gpu, 0);
        assert!(s.samples[0].time < Duration::from_millis(25));
        assert!(s.elapsed >= Duration::from_millis(500));
        assert_eq!(s.interval, interval);
        assert!(s.errors.is_empty());
    }

    #[test]
    fn stop_returns_every_reading_and_reading_ends() {
        let (src, reads) = counting(3, false);
        let sampler = Sampler::with_source(src, MIN_INTERVAL).unwrap();
        // Every GPU has been read once when start returns.
        assert!(reads.load(Ordering::SeqCst) >= 3);
        assert_eq!(sampler.gpus().len(), 3);
        assert_eq!(sampler.source(), "counting");
        std::thread::sleep(Duration::from_millis(100));
        let s = sampler.stop();
        let after_stop = reads.load(Ordering::SeqCst);
        assert_eq!(s.samples.len() as u32, after_stop);
        for g in 0..3 {
            let times: Vec<Duration> = s.of_gpu(g).map(|x| x.time).collect();
            assert!(times.len() >= 2, "GPU {g}: {times:?}");
            assert!(times.windows(2).all(|w| w[0] < w[1]), "GPU {g}: {times:?}");
        }
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(reads.load(Ordering::SeqCst), after_stop, "read after stop");
    }

    #[test]
    fn failed_readings_are_reported_once_and_others_go_on() {
        let (src, _) = counting(2, true);
        let sampler = Sampler::with_source(src, MIN_INTERVAL).unwrap();
        std::thread::sleep(Duration::from_millis(80));
        let s = sampler.stop();
        assert_eq!(s.of_gpu(1).count(), 0);
        assert!(s.of_gpu(0).count() >= 2);
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        assert!(s.errors[0].contains("GPU 1") && s.errors[0].contains("fallen off the bus"));
    }

    #[test]
    fn intervals_out_of_range_are_refused() {
        for bad in [
            Duration::ZERO,
            Duration::from_millis(19),
            Duration::from_secs(61),
        ] {
            let (src, reads) = counting(1, false);
            let e = Sampler::with_source(src, bad).unwrap_err().to_string();
            assert!(e.contains("20 ms to 60 s"), "{e}");
            assert_eq!(reads.load(Ordering::SeqCst), 0);
        }
    }

    #[test]
    fn a_source_without_gpus_is_no_gpu() {
        let (src, _) = counting(0, false);
        match Sampler::with_source(src, DEFAULT_INTERVAL) {
            Err(Error::NoGpu(why)) => assert!(why.starts_with(NO_GPU)),
            other => panic!("expected NoGpu, got {other:?}"),
        }
    }

    #[test]
    fn dropping_a_sampler_stops_its_threads() {
        let (src, reads) = counting(1, false);
        drop(Sampler::with_source(src, MIN_INTERVAL).unwrap());
        let n = reads.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(reads.load(Ordering::SeqCst), n);
    }

    #[test]
    fn nvml_without_a_driver_says_no_gpu() {
        // Where NVML loads (a GPU machine) there is nothing to check here.
        if let Err(e) = NvmlSource.gpus() {
            match e {
                Error::NoGpu(why) => assert!(why.starts_with(NO_GPU), "{why}"),
                other => panic!("expected NoGpu, got {other:?}"),
            }
        }
    }
}
