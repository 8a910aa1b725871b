//! The `%memory` report: device memory as NVML sees it (for every process, and for this one)
//! beside what gpukit holds (its live arrays, and its memory pool's cache), with what each
//! number means in plain words.
//!
//! The numbers differ, and the differences are the point: NVML counts memory the driver has
//! handed out, gpukit counts arrays. Between them sit the CUDA context (a few hundred MiB per
//! device and process), other libraries, and gpukit's pool cache: memory of dropped arrays kept
//! for the next allocation, which NVML goes on counting as used by this process until
//! [`free_cached_memory`](crate::device::memory::free_cached_memory) gives it back.

use super::{bytes, no_gpu_reason, nvml, send_content, Error, Result, NO_GPU};
use crate::device::memory::{human_bytes, memory_stats, pool_stats, MemoryStats, PoolStats};
use crate::device::{cuda_devices_in_use, Device, DeviceProperties};
use nvml_wrapper::enums::device::UsedGpuMemory;
use std::fmt;

/// What NVML says this process holds on one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessMemory {
    /// This many bytes.
    Used(u64),
    /// NVML lists this process on the GPU but does not say how much it holds (some drivers and
    /// virtual machines hide it).
    Hidden,
    /// NVML does not list this process on the GPU: it holds nothing there, or it runs in a
    /// container whose process ids NVML does not see.
    NotListed,
}

/// One GPU: NVML's numbers and what gpukit holds on it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuMemory {
    /// NVML index.
    pub index: u32,
    /// Marketing name.
    pub name: String,
    /// The device this GPU is to gpukit, when gpukit has used it in this process.
    pub device: Option<Device>,
    /// Memory used on the GPU by every process, bytes (NVML; what `nvidia-smi` shows).
    pub used: u64,
    /// Memory free on the GPU, bytes (NVML).
    pub free: u64,
    /// Installed memory less what the driver reserves, bytes (NVML).
    pub total: u64,
    /// What NVML says this process holds on the GPU.
    pub this_process: ProcessMemory,
    /// gpukit's live arrays on the GPU (zero when gpukit has not used it).
    pub arrays: MemoryStats,
    /// gpukit's memory pool on the GPU (zero when gpukit has not used it).
    pub pool: PoolStats,
}

/// Device memory as NVML sees it beside what gpukit holds, as the `%memory` magic shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryReport {
    /// Every GPU NVML sees, or why there is none.
    pub gpus: std::result::Result<Vec<GpuMemory>, String>,
    /// CUDA devices gpukit uses that NVML did not list (none where NVML works), with their
    /// arrays and pool.
    pub unlisted: Vec<(MemoryStats, PoolStats)>,
    /// gpukit's live arrays in host memory (the CPU backend).
    pub cpu: MemoryStats,
    /// What [`free_cached_memory`](crate::device::memory::free_cached_memory) released just
    /// before this report, per device (`None`: nothing was freed).
    pub released: Option<Vec<(Device, usize)>>,
}

/// The `%memory` report: NVML's numbers per GPU (all processes, and this one), gpukit's live
/// arrays and pool cache per device, and its arrays on the CPU. Creates no CUDA context.
pub fn memory_report() -> MemoryReport {
    let in_use: Vec<(Device, Option<[u32; 3]>)> = cuda_devices_in_use()
        .into_iter()
        .map(|d| {
            let pci = match d.properties() {
                Ok(DeviceProperties::Cuda(p)) => Some(p.pci_location),
                _ => None,
            };
            (d, pci)
        })
        .collect();
    let gpus = nvml_gpus(&in_use).map_err(|e| no_gpu_reason(&e));
    let listed: Vec<Device> = match &gpus {
        Ok(list) => list.iter().filter_map(|g| g.device).collect(),
        Err(_) => Vec::new(),
    };
    MemoryReport {
        unlisted: in_use
            .iter()
            .filter(|(d, _)| !listed.contains(d))
            .map(|(d, _)| (memory_stats(d), pool_stats(d)))
            .collect(),
        gpus,
        cpu: memory_stats(&Device::Cpu),
        released: None,
    }
}

/// NVML's view of every GPU, matched to the CUDA devices in use by PCI location (NVML and CUDA
/// may number GPUs differently), or by index where the location is unknown.
fn nvml_gpus(in_use: &[(Device, Option<[u32; 3]>)]) -> Result<Vec<GpuMemory>> {
    let nvml = nvml().map_err(Error::NoGpu)?;
    let count = nvml
        .device_count()
        .map_err(|e| Error::NoGpu(format!("NVML cannot count devices ({e})")))?;
    if count == 0 {
        return Err(Error::NoGpu(NO_GPU.to_string()));
    }
    let pid = std::process::id();
    let mut out = Vec::new();
    for index in 0..count {
        let dev = nvml
            .device_by_index(index)
            .map_err(|e| Error::Cuda(format!("NVML device {index}: {e}")))?;
        let mem = dev
            .memory_info()
            .map_err(|e| Error::Cuda(format!("NVML memory of device {index}: {e}")))?;
        let pci = dev.pci_info().ok().map(|p| [p.domain, p.bus, p.device]);
        let device = in_use
            .iter()
            .find(|(d, loc)| match (loc, pci) {
                (Some(a), Some(b)) => *a == b,
                _ => *d == Device::Cuda(index as usize),
            })
            .map(|(d, _)| *d);
        let procs = dev.running_compute_processes().unwrap_or_default();
        let this_process = match procs.iter().find(|p| p.pid == pid) {
            Some(p) => match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => ProcessMemory::Used(b),
                UsedGpuMemory::Unavailable => ProcessMemory::Hidden,
            },
            None => ProcessMemory::NotListed,
        };
        // A GPU gpukit has not used holds nothing of gpukit's.
        let shown = device.unwrap_or(Device::Cuda(index as usize));
        let (arrays, pool) = match device {
            Some(d) => (memory_stats(&d), pool_stats(&d)),
            None => (
                MemoryStats {
                    device: shown,
                    arrays: 0,
                    bytes: 0,
                    peak_bytes: 0,
                },
                PoolStats {
                    device: shown,
                    reserved_bytes: 0,
                    used_bytes: 0,
                },
            ),
        };
        out.push(GpuMemory {
            index,
            name: dev.name().unwrap_or_else(|_| "unknown NVIDIA GPU".into()),
            device,
            used: mem.used,
            free: mem.free,
            total: mem.total,
            this_process,
            arrays,
            pool,
        });
    }
    Ok(out)
}

impl MemoryReport {
    /// This report with a line saying what
    /// [`free_cached_memory`](crate::device::memory::free_cached_memory) released.
    pub fn released(mut self, released: Vec<(Device, usize)>) -> MemoryReport {
        self.released = Some(released);
        self
    }

    /// Rich display in the `evcxr_gpu` kernel (plain text).
    pub fn evcxr_display(&self) {
        send_content("text/plain", &self.to_string());
    }
}

/// Width of the name column of the report.
const NAME_WIDTH: usize = 34;

fn row(f: &mut fmt::Formatter<'_>, name: &str, value: &str) -> fmt::Result {
    writeln!(f, "  {name:<NAME_WIDTH$} {value}")
}

fn arrays(s: &MemoryStats) -> String {
    format!(
        "{} in {} array{} (peak {})",
        human_bytes(s.bytes),
        s.arrays,
        if s.arrays == 1 { "" } else { "s" },
        human_bytes(s.peak_bytes)
    )
}

fn gpukit_rows(f: &mut fmt::Formatter<'_>, a: &MemoryStats, p: &PoolStats) -> fmt::Result {
    row(f, "gpukit's live arrays", &arrays(a))?;
    row(
        f,
        "gpukit's pool cache (idle)",
        &human_bytes(p.idle_bytes()),
    )
}

impl fmt::Display for GpuMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.device {
            Some(d) => writeln!(f, "GPU {} = {d}: {}", self.index, self.name)?,
            None => writeln!(
                f,
                "GPU {}: {} (gpukit has not used it in this process)",
                self.index, self.name
            )?,
        }
        row(
            f,
            "used on the GPU, all processes",
            &format!(
                "{} of {} ({} free)",
                bytes(self.used),
                bytes(self.total),
                bytes(self.free)
            ),
        )?;
        let process = match self.this_process {
            ProcessMemory::Used(b) => bytes(b),
            ProcessMemory::Hidden => "listed, amount not reported by the driver".into(),
            ProcessMemory::NotListed if self.device.is_some() => {
                "not listed by NVML (a container hides process ids)".into()
            }
            ProcessMemory::NotListed => "none".into(),
        };
        row(f, "used by this process", &process)?;
        if self.device.is_some() {
            gpukit_rows(f, &self.arrays, &self.pool)?;
            if let ProcessMemory::Used(b) = self.this_process {
                let rest = (b as usize).saturating_sub(self.pool.reserved_bytes);
                row(f, "the rest: CUDA context, other libs", &human_bytes(rest))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(released) = &self.released {
            let total: usize = released.iter().map(|(_, b)| b).sum();
            if total == 0 {
                writeln!(f, "freed: nothing, gpukit's pool cache was empty")?;
            } else {
                let each: Vec<String> = released
                    .iter()
                    .filter(|(_, b)| *b > 0)
                    .map(|(d, b)| format!("{} on {d}", human_bytes(*b)))
                    .collect();
                writeln!(
                    f,
                    "freed: {} of gpukit's pool cache given back to the driver",
                    each.join(", ")
                )?;
            }
        }
        match &self.gpus {
            Ok(gpus) => {
                for g in gpus {
                    write!(f, "{g}")?;
                }
            }
            Err(why) => writeln!(f, "{why}")?,
        }
        for (a, p) in &self.unlisted {
            writeln!(f, "{} (not listed by NVML)", a.device)?;
            gpukit_rows(f, a, p)?;
        }
        writeln!(f, "CPU (host memory)")?;
        row(f, "gpukit's live arrays", &arrays(&self.cpu))?;
        let has_gpu = matches!(&self.gpus, Ok(g) if !g.is_empty()) || !self.unlisted.is_empty();
        if has_gpu {
            write!(
                f,
                "\nWhich number is which:\n\
                 - used on the GPU: every process's memory, as nvidia-smi shows it.\n\
                 - used by this process: what the driver gave this notebook: the CUDA context, \
                 gpukit's arrays and pool cache, and other libraries' memory.\n\
                 - live arrays: the gpukit arrays that exist now.\n\
                 - pool cache: memory of dropped arrays that gpukit keeps reserved for the next \
                 ones (as CuPy's pool does). NVML still counts it as used by this process; \
                 `%memory --free` or gpukit::free_cached_memory() gives it back."
            )
        } else {
            write!(
                f,
                "\nWithout a GPU, arrays live in host memory and go back to the system when \
                 they are dropped; there is no pool cache."
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(device: Device, arrays: usize, bytes: usize) -> MemoryStats {
        MemoryStats {
            device,
            arrays,
            bytes,
            peak_bytes: 2 * bytes,
        }
    }

    fn gpu(device: Option<Device>, this_process: ProcessMemory) -> GpuMemory {
        let d = device.unwrap_or(Device::Cuda(1));
        GpuMemory {
            index: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            device,
            used: 5 << 30,
            free: 75 << 30,
            total: 80 << 30,
            this_process,
            arrays: stats(d, 3, 1 << 30),
            pool: PoolStats {
                device: d,
                reserved_bytes: 3 << 30,
                used_bytes: 1 << 30,
            },
        }
    }

    #[test]
    fn a_gpu_in_use_separates_every_number() {
        let r = MemoryReport {
            gpus: Ok(vec![gpu(
                Some(Device::Cuda(0)),
                ProcessMemory::Used((3 << 30) + (512 << 20)),
            )]),
            unlisted: vec![],
            cpu: stats(Device::Cpu, 1, 24),
            released: None,
        };
        let s = r.to_string();
        for part in [
            "GPU 0 = cuda:0: NVIDIA H100 80GB HBM3",
            "used on the GPU, all processes     5.0 GiB of 80.0 GiB (75.0 GiB free)",
            "used by this process               3.5 GiB",
            "gpukit's live arrays               1.0 GiB in 3 arrays (peak 2.0 GiB)",
            "gpukit's pool cache (idle)         2.0 GiB",
            "the rest: CUDA context, other libs 512.0 MiB",
            "CPU (host memory)\n  gpukit's live arrays               24 B in 1 array (peak 48 B)",
            "Which number is which:",
            "`%memory --free` or gpukit::free_cached_memory()",
        ] {
            assert!(s.contains(part), "{part:?} missing in\n{s}");
        }
        assert!(!s.contains("freed:"));
    }

    #[test]
    fn a_gpu_not_in_use_shows_only_nvml() {
        let s = gpu(None, ProcessMemory::NotListed).to_string();
        assert!(s.contains("gpukit has not used it in this process"), "{s}");
        assert!(s.contains("used by this process               none"), "{s}");
        assert!(
            !s.contains("live arrays") && !s.contains("pool cache"),
            "{s}"
        );
        let hidden = gpu(Some(Device::Cuda(0)), ProcessMemory::NotListed).to_string();
        assert!(hidden.contains("not listed by NVML"), "{hidden}");
        assert!(!hidden.contains("the rest"), "{hidden}");
    }

    #[test]
    fn without_nvml_it_says_so_in_one_line_and_lists_the_cpu() {
        let r = MemoryReport {
            gpus: Err(format!("{NO_GPU} (NVML not available: x)")),
            unlisted: vec![],
            cpu: stats(Device::Cpu, 2, 3 << 20),
            released: Some(vec![]),
        };
        let s = r.to_string();
        let mut lines = s.lines();
        assert_eq!(
            lines.next(),
            Some("freed: nothing, gpukit's pool cache was empty")
        );
        assert_eq!(
            lines.next(),
            Some("no NVIDIA GPU, running on CPU (NVML not available: x)")
        );
        assert!(s.contains("3.0 MiB in 2 arrays (peak 6.0 MiB)"), "{s}");
        assert!(s.contains("there is no pool cache"), "{s}");
        assert!(!s.contains("Which number is which"), "{s}");
    }

    #[test]
    fn released_memory_is_named_per_device() {
        let r = MemoryReport {
            gpus: Err(NO_GPU.into()),
            unlisted: vec![(
                stats(Device::Cuda(2), 0, 0),
                PoolStats {
                    device: Device::Cuda(2),
                    reserved_bytes: 0,
                    used_bytes: 0,
                },
            )],
            cpu: stats(Device::Cpu, 0, 0),
            released: Some(vec![(Device::Cuda(2), 1 << 30), (Device::Cuda(3), 0)]),
        };
        let s = r.to_string();
        assert!(
            s.starts_with("freed: 1.0 GiB on cuda:2 of gpukit's pool cache given back"),
            "{s}"
        );
        assert!(s.contains("cuda:2 (not listed by NVML)"), "{s}");
        assert!(s.contains("Which number is which"), "{s}");
    }

    #[test]
    fn the_live_report_never_panics() {
        let r = memory_report();
        let s = r.to_string();
        match &r.gpus {
            Ok(g) => assert!(!g.is_empty() && s.contains("used on the GPU")),
            Err(why) => assert!(why.starts_with(NO_GPU) && s.starts_with(NO_GPU)),
        }
        assert!(s.contains("CPU (host memory)"));
    }
}
