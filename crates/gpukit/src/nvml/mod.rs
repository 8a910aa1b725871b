//! What the GPUs are doing, from NVML (the NVIDIA Management Library), like pyNVML in lesson 4.0.
//!
//! NVML is loaded at run time (`libnvidia-ml.so` comes with the NVIDIA driver). Without it every
//! function here still works: [`device_table`] and [`memory_report`] then say
//! "no NVIDIA GPU, running on CPU", and [`gpus`] and [`Sampler::start`] return
//! [`Error::NoGpu`].
//!
//! * [`device_table`]: a snapshot of every GPU (the `%gpu` magic).
//! * [`memory_report`]: device memory as NVML sees it beside what gpukit holds (`%memory`).
//! * [`Sampler`]: utilisation, memory, power, temperature, clock and PCIe traffic recorded on a
//!   background thread at a chosen interval (the live monitor, `%gpu --watch` and `%%monitor`,
//!   draws them; see `gpukit::monitor`).
//!
//! ```no_run
//! // In a notebook (this is what the `%gpu` and `%memory` magics evaluate):
//! gpukit::nvml::device_table()
//! # ;
//! ```

mod fake;
pub mod memory;
pub mod sampler;
mod summary;

pub use fake::{fake_enabled, FakeSource, FAKE_VAR};
pub use memory::{memory_report, GpuMemory, MemoryReport, ProcessMemory};
pub use sampler::{
    GpuInfo, NvmlSource, Sample, SampleSource, Sampler, Samples, DEFAULT_INTERVAL, MAX_INTERVAL,
    MIN_INTERVAL,
};

use crate::device::memory::human_bytes;
use crate::error::{Error, Result};
use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::Nvml;
use std::fmt;
use std::sync::OnceLock;

/// The line shown wherever NVML cannot be loaded or sees no GPU.
pub const NO_GPU: &str = "no NVIDIA GPU, running on CPU";

/// One process that holds memory on a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProcess {
    /// Operating-system process id.
    pub pid: u32,
    /// Process name as NVML reports it (empty if it is not visible, e.g. in a container).
    pub name: String,
    /// GPU memory used by the process in bytes, when the driver reports it.
    pub used_memory: Option<u64>,
}

/// A snapshot of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuStatus {
    /// NVML index (the same order as `cuda:N` unless `CUDA_VISIBLE_DEVICES` reorders them).
    pub index: u32,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Memory in use, bytes.
    pub memory_used: u64,
    /// Memory free, bytes.
    pub memory_free: u64,
    /// Installed memory, bytes.
    pub memory_total: u64,
    /// Percent of the last sample period in which a kernel was running.
    pub utilization_gpu: Option<u32>,
    /// Percent of the last sample period in which memory was read or written.
    pub utilization_memory: Option<u32>,
    /// Die temperature in degrees Celsius.
    pub temperature_c: Option<u32>,
    /// Power draw in watts.
    pub power_w: Option<f64>,
    /// Enforced power limit in watts.
    pub power_limit_w: Option<f64>,
    /// Processes using the GPU (compute and graphics).
    pub processes: Vec<GpuProcess>,
}

/// The driver and every GPU, as the `%gpu` magic shows it; prints [`NO_GPU`] when there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceTable {
    /// Driver version, e.g. `580.65.06`.
    pub driver: Option<String>,
    /// The GPUs, or the reason there are none.
    pub gpus: std::result::Result<Vec<GpuStatus>, String>,
}

/// The NVML library, loaded once; the reason (starting with [`NO_GPU`]) when it cannot be.
fn nvml() -> std::result::Result<&'static Nvml, String> {
    static NVML: OnceLock<std::result::Result<Nvml, String>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().map_err(|e| format!("{NO_GPU} (NVML not available: {e})")))
        .as_ref()
        .map_err(Clone::clone)
}

/// A snapshot of every GPU NVML sees; [`Error::NoGpu`] when NVML cannot be loaded or sees none.
pub fn gpus() -> Result<Vec<GpuStatus>> {
    let nvml = nvml().map_err(Error::NoGpu)?;
    let count = nvml
        .device_count()
        .map_err(|e| Error::NoGpu(format!("NVML cannot count devices ({e})")))?;
    if count == 0 {
        return Err(Error::NoGpu(NO_GPU.to_string()));
    }
    (0..count).map(|i| status(nvml, i)).collect()
}

fn status(nvml: &Nvml, index: u32) -> Result<GpuStatus> {
    let dev = nvml
        .device_by_index(index)
        .map_err(|e| Error::Cuda(format!("NVML device {index}: {e}")))?;
    let mem = dev
        .memory_info()
        .map_err(|e| Error::Cuda(format!("NVML memory of device {index}: {e}")))?;
    let util = dev.utilization_rates().ok();
    let mut processes = Vec::new();
    let compute = dev.running_compute_processes().unwrap_or_default();
    let graphics = dev.running_graphics_processes().unwrap_or_default();
    for p in compute.into_iter().chain(graphics) {
        if processes.iter().any(|q: &GpuProcess| q.pid == p.pid) {
            continue;
        }
        processes.push(GpuProcess {
            pid: p.pid,
            name: nvml.sys_process_name(p.pid, 256).unwrap_or_default(),
            used_memory: match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => Some(b),
                UsedGpuMemory::Unavailable => None,
            },
        });
    }
    Ok(GpuStatus {
        index,
        name: dev.name().unwrap_or_else(|_| "unknown NVIDIA GPU".into()),
        memory_used: mem.used,
        memory_free: mem.free,
        memory_total: mem.total,
        utilization_gpu: util.as_ref().map(|u| u.gpu),
        utilization_memory: util.as_ref().map(|u| u.memory),
        temperature_c: dev.temperature(TemperatureSensor::Gpu).ok(),
        power_w: dev.power_usage().ok().map(|mw| mw as f64 / 1000.0),
        power_limit_w: dev.enforced_power_limit().ok().map(|mw| mw as f64 / 1000.0),
        processes,
    })
}

/// The `%gpu` table: driver, name, memory, utilisation, temperature, power and processes per GPU.
pub fn device_table() -> DeviceTable {
    DeviceTable {
        driver: nvml().ok().and_then(|n| n.sys_driver_version().ok()),
        gpus: gpus().map_err(|e| no_gpu_reason(&e)),
    }
}

/// The one-line "no NVIDIA GPU, running on CPU (why)" for an error.
pub(crate) fn no_gpu_reason(e: &Error) -> String {
    match e {
        Error::NoGpu(why) if why.contains(NO_GPU) => why.clone(),
        Error::NoGpu(why) => format!("{NO_GPU} ({why})"),
        other => format!("{NO_GPU} ({other})"),
    }
}

fn opt<T: fmt::Display>(v: Option<T>, unit: &str) -> String {
    v.map(|v| format!("{v}{unit}"))
        .unwrap_or_else(|| "n/a".into())
}

fn bytes(b: u64) -> String {
    human_bytes(b as usize)
}

fn power(g: &GpuStatus) -> String {
    match (g.power_w, g.power_limit_w) {
        (Some(p), Some(l)) => format!("{p:.0} W / {l:.0} W"),
        (Some(p), None) => format!("{p:.0} W"),
        _ => "n/a".into(),
    }
}

fn processes(g: &GpuStatus) -> String {
    if g.processes.is_empty() {
        return "none".into();
    }
    g.processes
        .iter()
        .map(|p| {
            let name = if p.name.is_empty() {
                "?"
            } else {
                p.name.as_str()
            };
            match p.used_memory {
                Some(m) => format!("{} {} ({})", p.pid, name, bytes(m)),
                None => format!("{} {}", p.pid, name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn send_content(mime: &str, body: &str) {
    println!("EVCXR_BEGIN_CONTENT {mime}\n{body}\nEVCXR_END_CONTENT");
}

impl DeviceTable {
    /// The table as HTML (used by notebooks; [`fmt::Display`] gives the text form).
    pub fn to_html(&self) -> String {
        let gpus = match &self.gpus {
            Ok(g) => g,
            Err(why) => return format!("<p>{}</p>", html_escape(why)),
        };
        let mut h = String::from("<table><thead><tr><th>#</th><th>name</th><th>memory used / total</th><th>GPU util</th><th>mem util</th><th>temp</th><th>power</th><th>processes</th></tr></thead><tbody>");
        for g in gpus {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                g.index,
                html_escape(&g.name),
                bytes(g.memory_used),
                bytes(g.memory_total),
                opt(g.utilization_gpu, " %"),
                opt(g.utilization_memory, " %"),
                opt(g.temperature_c, " °C"),
                power(g),
                html_escape(&processes(g)),
            ));
        }
        h.push_str("</tbody></table>");
        if let Some(d) = &self.driver {
            h.push_str(&format!("<p>driver {}</p>", html_escape(d)));
        }
        h
    }

    /// Rich display in the `evcxr_gpu` kernel (text and HTML).
    pub fn evcxr_display(&self) {
        send_content("text/plain", &self.to_string());
        send_content("text/html", &self.to_html());
    }
}

impl fmt::Display for DeviceTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gpus = match &self.gpus {
            Ok(g) => g,
            Err(why) => return write!(f, "{why}"),
        };
        if let Some(d) = &self.driver {
            writeln!(f, "driver {d}")?;
        }
        for (i, g) in gpus.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "[{}] {}", g.index, g.name)?;
            writeln!(
                f,
                "    memory {} used / {} total ({} free)",
                bytes(g.memory_used),
                bytes(g.memory_total),
                bytes(g.memory_free)
            )?;
            writeln!(
                f,
                "    utilization GPU {}, memory {}; temperature {}; power {}",
                opt(g.utilization_gpu, " %"),
                opt(g.utilization_memory, " %"),
                opt(g.temperature_c, " °C"),
                power(g)
            )?;
            write!(f, "    processes: {}", processes(g))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> GpuStatus {
        GpuStatus {
            index: 0,
            name: "NVIDIA H100 <test>".into(),
            memory_used: 1 << 30,
            memory_free: 3 << 30,
            memory_total: 4 << 30,
            utilization_gpu: Some(42),
            utilization_memory: None,
            temperature_c: Some(35),
            power_w: Some(70.4),
            power_limit_w: Some(700.0),
            processes: vec![GpuProcess {
                pid: 7,
                name: "python".into(),
                used_memory: Some(1 << 20),
            }],
        }
    }

    #[test]
    fn table_without_gpu_says_cpu() {
        let t = DeviceTable {
            driver: None,
            gpus: Err(NO_GPU.to_string()),
        };
        assert_eq!(t.to_string(), NO_GPU);
        assert!(t.to_html().contains(NO_GPU));
    }

    #[test]
    fn table_lists_every_column() {
        let t = DeviceTable {
            driver: Some("580.1".into()),
            gpus: Ok(vec![sample()]),
        };
        let s = t.to_string();
        for part in [
            "driver 580.1",
            "[0] NVIDIA H100",
            "1.0 GiB used",
            "4.0 GiB total",
        ] {
            assert!(s.contains(part), "{part} missing in {s}");
        }
        assert!(s.contains("GPU 42 %") && s.contains("memory n/a") && s.contains("35 °C"));
        assert!(s.contains("70 W / 700 W") && s.contains("7 python (1.0 MiB)"));
        let h = t.to_html();
        assert!(h.contains("&lt;test&gt;") && h.contains("<td>42 %</td>"));
    }

    #[test]
    fn reasons_say_no_gpu_once() {
        assert_eq!(
            no_gpu_reason(&Error::NoGpu("x".into())),
            format!("{NO_GPU} (x)")
        );
        assert_eq!(no_gpu_reason(&Error::NoGpu(NO_GPU.into())), NO_GPU);
    }

    #[test]
    fn live_query_never_panics() {
        // On machines without the driver this is the CPU message; with one, a real table.
        let t = device_table();
        match &t.gpus {
            Ok(g) => assert!(!g.is_empty()),
            Err(why) => assert!(why.contains(NO_GPU)),
        }
        let _ = memory_report().to_string();
    }
}
