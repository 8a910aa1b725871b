//! Devices: a CUDA GPU or the CPU, and which one is used by default.
//!
//! The default device is chosen at first use: `GPUKIT_DEVICE` (`cpu`, `cuda`, `cuda:N`) if set,
//! else the first usable CUDA GPU, else the CPU with a one-line notice saying why.
//! [`set_default_device`] (and the kernel's `%device` magic) changes it later; [`with_device`]
//! and [`DeviceGuard`] change it for a block of code on one thread (`scope`).

pub mod memory;
mod scope;

pub use scope::{with_device, DeviceGuard, IntoDevice};

use crate::backend::cuda::CudaBackend;
pub use crate::backend::cuda::CudaProperties;
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

/// Where arrays live and kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    /// The host processor: kernels run natively, one block per task on all cores.
    Cpu,
    /// CUDA device number `n`.
    Cuda(usize),
}

impl Device {
    /// The CPU backend.
    pub fn cpu() -> Device {
        Device::Cpu
    }

    /// CUDA device `n`, checked to exist and be usable.
    pub fn cuda(n: usize) -> Result<Device> {
        let count = crate::backend::cuda::probe().map_err(Error::NoGpu)?;
        if n >= count {
            return Err(Error::NoGpu(format!(
                "cuda:{n} requested but {count} CUDA device(s) found"
            )));
        }
        Ok(Device::Cuda(n))
    }

    /// Whether this is a CUDA device.
    pub fn is_cuda(&self) -> bool {
        matches!(self, Device::Cuda(_))
    }

    /// What this device is: name, compute capability, limits and memory (CUDA), or cores and
    /// memory (CPU).
    pub fn properties(&self) -> Result<DeviceProperties> {
        match self {
            Device::Cpu => Ok(DeviceProperties::Cpu(CpuProperties::query())),
            Device::Cuda(n) => Ok(DeviceProperties::Cuda(
                crate::backend::cuda::CudaBackend::get(*n)?
                    .properties()
                    .clone(),
            )),
        }
    }

    /// Wait until all work queued on this device has finished, and report any error
    /// (such as a kernel's out-of-bounds index) raised by that work.
    pub fn synchronize(&self) -> Result<()> {
        match self {
            Device::Cpu => crate::backend::cpu::take_pending_error(),
            Device::Cuda(n) => crate::backend::cuda::CudaBackend::get(*n)?.synchronize(),
        }
    }
}

/// `CudaBackend::device` lives here, not in the backend: the backend layer knows device
/// numbers, not the [`Device`] type defined above it.
impl CudaBackend {
    /// This backend as a [`Device`].
    pub(crate) fn device(&self) -> Device {
        Device::Cuda(self.ordinal())
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    /// Parses `cpu`, `cuda`, `gpu`, `cuda:N` (case-insensitive), checking that a CUDA device exists.
    fn from_str(s: &str) -> Result<Device> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Device::cuda(0),
            _ => match s.strip_prefix("cuda:") {
                Some(n) => {
                    let n: usize = n.parse().map_err(|_| {
                        Error::Other(format!("bad device `{s}`: expected cpu or cuda:N"))
                    })?;
                    Device::cuda(n)
                }
                None => Err(Error::Other(format!(
                    "bad device `{s}`: expected `cpu`, `cuda` or `cuda:N`"
                ))),
            },
        }
    }
}

/// Properties of a device, as [`Device::properties`] reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceProperties {
    /// A CUDA GPU.
    Cuda(CudaProperties),
    /// The host CPU.
    Cpu(CpuProperties),
}

/// What the host CPU is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuProperties {
    /// Processor model name (from /proc/cpuinfo where available).
    pub name: String,
    /// Hardware threads gpukit can use.
    pub cores: usize,
    /// Physical memory in bytes (0 where it cannot be read).
    pub total_memory: usize,
}

impl CpuProperties {
    fn query() -> CpuProperties {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let name = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let total_memory = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<usize>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0);
        CpuProperties {
            name,
            cores: rayon::current_num_threads(),
            total_memory,
        }
    }
}

impl fmt::Display for DeviceProperties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use memory::human_bytes;
        match self {
            DeviceProperties::Cpu(p) => write!(
                f,
                "cpu: {}, {} threads, {} memory",
                p.name,
                p.cores,
                human_bytes(p.total_memory)
            ),
            DeviceProperties::Cuda(p) => {
                writeln!(f, "cuda:{}: {}", p.ordinal, p.name)?;
                writeln!(
                    f,
                    "  compute capability {}.{}, {} SMs, warp size {}, clock {} MHz",
                    p.compute_capability.0,
                    p.compute_capability.1,
                    p.multiprocessors,
                    p.warp_size,
                    p.clock_khz / 1000
                )?;
                writeln!(
                    f,
                    "  max threads per block {}, block dims {:?}, grid dims {:?}",
                    p.max_threads_per_block, p.max_block_dims, p.max_grid_dims
                )?;
                write!(
                    f,
                    "  memory {}, shared memory per block {}, L2 cache {}",
                    human_bytes(p.total_memory),
                    human_bytes(p.shared_memory_per_block),
                    human_bytes(p.l2_cache_bytes)
                )
            }
        }
    }
}

/// Waits for all work on every device in use (the CPU and each CUDA device touched so far) and
/// returns the first error any of them recorded.
pub fn synchronize() -> Result<()> {
    let mut first = crate::backend::cpu::take_pending_error().err();
    for backend in crate::backend::cuda::backends_in_use() {
        if let Err(e) = backend.synchronize() {
            first.get_or_insert(e);
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

crate::process::process_global! {
    /// The default device of this process.
    fn default_cell() -> &'static Mutex<Device> = Mutex::new(choose_default());
}

/// Picks the default device: `GPUKIT_DEVICE`, else the first usable GPU, else the CPU (with a notice).
fn choose_default() -> Device {
    if let Ok(spec) = std::env::var("GPUKIT_DEVICE") {
        if !spec.trim().is_empty() {
            match spec.parse::<Device>() {
                Ok(d) => return d,
                Err(e) => {
                    eprintln!(
                        "gpukit: GPUKIT_DEVICE={spec} is not usable ({e}); using the CPU backend"
                    );
                    return Device::Cpu;
                }
            }
        }
    }
    match crate::backend::cuda::probe() {
        Ok(n) if n > 0 => Device::Cuda(0),
        Ok(_) => {
            eprintln!("gpukit: no CUDA device found; running on the CPU backend");
            Device::Cpu
        }
        Err(why) => {
            eprintln!("gpukit: {why}; running on the CPU backend");
            Device::Cpu
        }
    }
}

/// The device new arrays are created on: this thread's scoped device inside [`with_device`]
/// (or while a [`DeviceGuard`] lives), else the process default.
///
/// When the default is a GPU that a fatal fault has made unusable for the rest of the process
/// (see [`Error::DeviceLost`]), it becomes the CPU, with a one-line notice.
pub fn default_device() -> Device {
    if let Some(d) = scope::scoped_device() {
        return d;
    }
    let mut cell = default_cell().lock().unwrap_or_else(|p| p.into_inner());
    if let Device::Cuda(n) = *cell {
        if crate::backend::cuda::unusable(n).is_some() {
            eprintln!(
                "gpukit: cuda:{n} cannot be used again in this process; the default device is \
                 now the CPU (restart the kernel to use the GPU)"
            );
            *cell = Device::Cpu;
        }
    }
    *cell
}

/// Change the default device for arrays created from now on.
pub fn set_default_device(device: Device) {
    *default_cell().lock().unwrap_or_else(|p| p.into_inner()) = device;
}

/// Number of usable CUDA devices (0 when there is no driver, no device, or no NVRTC).
pub fn cuda_device_count() -> usize {
    crate::backend::cuda::probe().unwrap_or(0)
}

/// The CUDA devices gpukit has used in this process (those with a context), in order. Asking
/// creates nothing.
pub fn cuda_devices_in_use() -> Vec<Device> {
    crate::backend::cuda::backends_in_use()
        .iter()
        .map(|b| b.device())
        .collect()
}

/// Why CUDA is not usable here, or `None` if it is.
pub fn cuda_unavailable_reason() -> Option<String> {
    match crate::backend::cuda::probe() {
        Ok(0) => Some("no CUDA device found".into()),
        Ok(_) => None,
        Err(why) => Some(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays() {
        assert_eq!("cpu".parse::<Device>().unwrap(), Device::Cpu);
        assert_eq!(Device::Cpu.to_string(), "cpu");
        assert_eq!(Device::Cuda(1).to_string(), "cuda:1");
        assert!("tpu".parse::<Device>().is_err());
        assert!("cuda:x".parse::<Device>().is_err());
    }

    #[test]
    fn cpu_properties() {
        let p = Device::Cpu.properties().unwrap();
        match &p {
            DeviceProperties::Cpu(c) => assert!(c.cores >= 1),
            other => panic!("expected CPU properties, got {other:?}"),
        }
        assert!(p.to_string().starts_with("cpu: "));
    }
}
