//! The text summary of a sampler's record: per GPU, the mean and largest value of every
//! quantity, with what it measures.

use super::sampler::{Sample, Samples};
use super::{bytes, NvmlSource, SampleSource};
use std::fmt;

/// Mean and largest of the values present.
fn stats(values: impl Iterator<Item = Option<f64>>) -> Option<(f64, f64)> {
    let v: Vec<f64> = values.flatten().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    Some((v.iter().sum::<f64>() / v.len() as f64, max))
}

fn row(f: &mut fmt::Formatter<'_>, name: &str, value: Option<String>) -> fmt::Result {
    match value {
        Some(v) => writeln!(f, "  {name:<19} {v}"),
        None => writeln!(f, "  {name:<19} not reported"),
    }
}

impl fmt::Display for Samples {
    /// Per GPU: duration and number of readings, then mean and maximum of utilisation, power,
    /// and the maximum of memory used, temperature, SM clock and PCIe traffic.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = if self.source == NvmlSource.name() {
            String::new()
        } else {
            format!(" ({})", self.source)
        };
        for g in &self.gpus {
            let mine: Vec<&Sample> = self.of_gpu(g.index).collect();
            writeln!(
                f,
                "GPU {}: {}, {:.1} s, {} readings every {} ms{source}",
                g.index,
                g.name,
                self.elapsed.as_secs_f64(),
                mine.len(),
                self.interval.as_millis()
            )?;
            let pick = |get: fn(&Sample) -> Option<f64>| stats(mine.iter().map(|s| get(s)));
            let percent = |get: fn(&Sample) -> Option<f64>, what: &str| {
                pick(get).map(|(mean, max)| format!("mean {mean:.0} %, max {max:.0} % ({what})"))
            };
            row(
                f,
                "GPU utilisation",
                percent(|s| s.gpu_util.map(f64::from), "time a kernel was running"),
            )?;
            row(
                f,
                "memory utilisation",
                percent(
                    |s| s.memory_util.map(f64::from),
                    "time device memory was read or written",
                ),
            )?;
            let total = if g.memory_total > 0 {
                format!(" of {}", bytes(g.memory_total))
            } else {
                String::new()
            };
            let last_memory = mine.iter().rev().find_map(|s| s.memory_used);
            row(
                f,
                "memory used",
                pick(|s| s.memory_used.map(|b| b as f64)).map(|(_, max)| {
                    format!(
                        "max {}{total}, at the end {}",
                        bytes(max as u64),
                        last_memory.map(bytes).unwrap_or_else(|| "?".into())
                    )
                }),
            )?;
            row(
                f,
                "power",
                pick(|s| s.power_w).map(|(mean, max)| format!("mean {mean:.0} W, max {max:.0} W")),
            )?;
            row(
                f,
                "temperature",
                pick(|s| s.temperature_c.map(f64::from)).map(|(_, max)| format!("max {max:.0} °C")),
            )?;
            row(
                f,
                "SM clock",
                pick(|s| s.sm_clock_mhz.map(f64::from)).map(|(_, max)| format!("max {max:.0} MHz")),
            )?;
            let rx = pick(|s| s.pcie_rx.map(|b| b as f64));
            let tx = pick(|s| s.pcie_tx.map(|b| b as f64));
            let pcie = match (rx, tx) {
                (None, None) => None,
                (rx, tx) => {
                    let max = |v: Option<(f64, f64)>| {
                        v.map(|(_, m)| format!("{}/s", bytes(m as u64)))
                            .unwrap_or_else(|| "?".into())
                    };
                    Some(format!(
                        "host to GPU max {}, GPU to host max {}",
                        max(rx),
                        max(tx)
                    ))
                }
            };
            row(f, "PCIe traffic", pcie)?;
        }
        for e in &self.errors {
            writeln!(f, "note: {e}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvml::GpuInfo;
    use std::time::{Duration, SystemTime};

    fn samples(source: &str) -> Samples {
        let at = |ms: u64, util: u32, mem: u64| Sample {
            gpu: 0,
            time: Duration::from_millis(ms),
            gpu_util: Some(util),
            memory_used: Some(mem),
            power_w: Some(100.0 + f64::from(util)),
            pcie_rx: Some(2 << 30),
            ..Sample::default()
        };
        Samples {
            source: source.into(),
            gpus: vec![GpuInfo {
                index: 0,
                name: "Test GPU".into(),
                memory_total: 8 << 30,
            }],
            interval: Duration::from_millis(100),
            started: SystemTime::now(),
            elapsed: Duration::from_millis(240),
            samples: vec![
                at(0, 0, 1 << 30),
                at(100, 50, 3 << 30),
                at(200, 100, 2 << 30),
            ],
            errors: vec!["GPU 0: stopped recording after 3 samples".into()],
        }
    }

    #[test]
    fn every_quantity_has_a_line() {
        let s = samples("NVML").to_string();
        for part in [
            "GPU 0: Test GPU, 0.2 s, 3 readings every 100 ms\n",
            "GPU utilisation     mean 50 %, max 100 % (time a kernel was running)",
            "memory utilisation  not reported",
            "memory used         max 3.0 GiB of 8.0 GiB, at the end 2.0 GiB",
            "power               mean 150 W, max 200 W",
            "temperature         not reported",
            "PCIe traffic        host to GPU max 2.0 GiB/s, GPU to host max ?",
            "note: GPU 0: stopped recording after 3 samples",
        ] {
            assert!(s.contains(part), "{part:?} missing in\n{s}");
        }
        assert!(samples("fake").to_string().contains("every 100 ms (fake)"));
    }
}
