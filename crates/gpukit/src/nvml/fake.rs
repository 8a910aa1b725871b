//! A fake sample source, for tests only: it lets the live monitor run, and be tested through the
//! Jupyter protocol, on machines without an NVIDIA GPU.
//!
//! `GPUKIT_NVML_FAKE=1` makes [`Sampler::start`](super::Sampler::start) (and so the monitor
//! behind `%gpu --watch` and `%%monitor`) read this source instead of NVML. Its numbers are made
//! up: a deterministic 4-second cycle of a GPU that idles, receives data, computes flat out and
//! sends the result back. Nothing else in gpukit reads the fake; never set it outside tests.

use super::sampler::{GpuInfo, Sample, SampleSource};
use super::{Error, Result};
use std::time::Duration;

/// The variable that selects the fake source (`1`, `true` or `yes`). For tests only.
pub const FAKE_VAR: &str = "GPUKIT_NVML_FAKE";

/// Whether [`FAKE_VAR`] asks for the fake source.
pub fn fake_enabled() -> bool {
    enabled_by(std::env::var(FAKE_VAR).ok().as_deref())
}

fn enabled_by(value: Option<&str>) -> bool {
    matches!(value.map(str::trim), Some("1" | "true" | "yes"))
}

/// The most GPUs a fake source may pretend to have.
const MAX_FAKE_GPUS: u32 = 16;

/// Made-up readings of one or more GPUs, the same for the same time (tests only; see the
/// module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FakeSource {
    gpus: u32,
}

impl Default for FakeSource {
    /// One fake GPU.
    fn default() -> Self {
        FakeSource { gpus: 1 }
    }
}

impl FakeSource {
    /// A source of `gpus` fake GPUs (1 to 16), each a little behind the previous one.
    pub fn new(gpus: u32) -> Result<FakeSource> {
        if (1..=MAX_FAKE_GPUS).contains(&gpus) {
            Ok(FakeSource { gpus })
        } else {
            Err(Error::Other(format!(
                "a fake source has 1 to {MAX_FAKE_GPUS} GPUs, not {gpus}"
            )))
        }
    }
}

const GIB: f64 = (1u64 << 30) as f64;
/// The length of the fake cycle, seconds.
const CYCLE: f64 = 4.0;
const MEMORY_TOTAL: u64 = 80 << 30;

impl SampleSource for FakeSource {
    fn name(&self) -> String {
        format!("fake readings ({FAKE_VAR}=1, tests only)")
    }

    fn gpus(&self) -> Result<Vec<GpuInfo>> {
        Ok((0..self.gpus)
            .map(|index| GpuInfo {
                index,
                name: "Fake GPU".into(),
                memory_total: MEMORY_TOTAL,
            })
            .collect())
    }

    fn read(&self, gpu: u32, at: Duration) -> Result<Sample> {
        if gpu >= self.gpus {
            return Err(Error::Other(format!(
                "the fake source has {} GPU(s); there is no GPU {gpu}",
                self.gpus
            )));
        }
        Ok(reading(at.as_secs_f64() - 0.3 * f64::from(gpu)))
    }
}

/// The made-up reading at `t` seconds: idle until 0.5 s of each cycle, data in until 1.0 s,
/// computing until 3.2 s, results out until 3.5 s, idle again. Memory stays reserved after the
/// first upload, as a memory pool keeps it.
fn reading(t: f64) -> Sample {
    let phase = t.rem_euclid(CYCLE);
    let cycles_done = (t / CYCLE).floor();
    let ripple = (t * 7.0).sin();
    let uploaded = if t < 0.5 {
        0.0
    } else if t < 1.0 {
        (t - 0.5) / 0.5
    } else {
        1.0
    };
    let memory = 0.6 * GIB + uploaded * 8.0 * GIB;
    let (gpu, mem, power, clock, tx, rx) = match phase {
        p if p < 0.5 => (0.0, 0.0, 72.0, 345.0, 0.0, 0.0),
        p if p < 1.0 => (4.0, 35.0, 140.0, 1755.0, 0.0, 24.0e9),
        p if p < 3.2 => (
            96.0 + 3.0 * ripple,
            62.0 + 14.0 * (t * 3.0).sin(),
            560.0 + 40.0 * ripple,
            1980.0,
            0.0,
            0.0,
        ),
        p if p < 3.5 => (3.0, 30.0, 150.0, 1755.0, 20.0e9, 0.0),
        _ => (0.0, 0.0, 80.0, 345.0, 0.0, 0.0),
    };
    // Warms up while computing, cools down otherwise.
    let busy = (phase - 1.0).clamp(0.0, 2.2);
    let after = (phase - 3.2).max(0.0);
    let warm = (1.0 - (-busy / 1.2).exp()) * (-after / 1.5).exp();
    let base = if cycles_done > 0.0 { 38.0 } else { 34.0 };
    Sample {
        gpu_util: Some(gpu.round().clamp(0.0, 100.0) as u32),
        memory_util: Some(mem.round().clamp(0.0, 100.0) as u32),
        memory_used: Some(memory as u64),
        power_w: Some(power),
        temperature_c: Some((base + 26.0 * warm).round() as u32),
        sm_clock_mhz: Some(clock as u32),
        pcie_tx: Some(tx as u64),
        pcie_rx: Some(rx as u64),
        ..Sample::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvml::Sampler;

    #[test]
    fn the_fake_idles_uploads_computes_and_downloads() {
        let f = FakeSource::default();
        let at = |s: f64| f.read(0, Duration::from_secs_f64(s)).unwrap();
        let idle = at(0.2);
        assert_eq!((idle.gpu_util, idle.pcie_rx), (Some(0), Some(0)));
        assert!(at(0.7).pcie_rx.unwrap() > 10_000_000_000);
        let busy = at(2.0);
        assert!(busy.gpu_util.unwrap() >= 90 && busy.power_w.unwrap() > 400.0);
        assert!(busy.temperature_c > idle.temperature_c);
        assert!(at(3.3).pcie_tx.unwrap() > 10_000_000_000);
        assert!(busy.memory_used.unwrap() > 8 << 30);
        // The same time gives the same reading; a second GPU runs behind the first.
        assert_eq!(at(2.0), busy);
        let two = FakeSource::new(2).unwrap();
        assert_eq!(two.gpus().unwrap().len(), 2);
        assert_eq!(two.read(1, Duration::from_secs_f64(2.3)).unwrap(), at(2.0));
        assert!(two.read(2, Duration::ZERO).is_err());
        assert!(FakeSource::new(0).is_err() && FakeSource::new(17).is_err());
    }

    #[test]
    fn a_sampler_records_the_fake() {
        let sampler =
            Sampler::with_source(FakeSource::new(2).unwrap(), Duration::from_millis(20)).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        let s = sampler.stop();
        assert!(s.source.contains(FAKE_VAR));
        assert_eq!(s.gpus.len(), 2);
        for g in 0..2 {
            let mine: Vec<&Sample> = s.of_gpu(g).collect();
            assert!(mine.len() >= 3, "GPU {g}: {} samples", mine.len());
            assert!(mine.iter().all(|x| x.gpu == g && x.gpu_util.is_some()));
        }
    }

    #[test]
    fn only_clear_values_enable_the_fake() {
        for on in ["1", "true", " yes\n"] {
            assert!(enabled_by(Some(on)), "{on:?}");
        }
        for off in [
            None,
            Some(""),
            Some("0"),
            Some("no"),
            Some("2"),
            Some("fake"),
        ] {
            assert!(!enabled_by(off), "{off:?}");
        }
    }
}
