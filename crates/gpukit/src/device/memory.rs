//! What gpukit holds on each device (for the `%memory` magic): a tracker of its own live
//! allocations, and the memory pool's cache, which [`free_cached_memory`] gives back.
//!
//! Freeing an array does not give its memory back to the driver: it goes back to the device's
//! memory pool, which keeps it for the next allocation (as CuPy's pool does). NVML and
//! `nvidia-smi` go on counting it as used by this process until the pool is trimmed.

use crate::backend::cuda::{backends_in_use, CudaBackend};
use crate::device::Device;
use crate::error::Result;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;

/// gpukit's own live allocations on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryStats {
    /// The device.
    pub device: Device,
    /// Number of live gpukit arrays on the device.
    pub arrays: usize,
    /// Bytes held by those arrays.
    pub bytes: usize,
    /// The largest `bytes` seen since the process started.
    pub peak_bytes: usize,
}

impl fmt::Display for MemoryStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} array(s), {} live, peak {}",
            self.device,
            self.arrays,
            human_bytes(self.bytes),
            human_bytes(self.peak_bytes)
        )
    }
}

/// `1.5 MiB`-style sizes.
pub fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    arrays: usize,
    bytes: usize,
    peak: usize,
}

crate::process::process_global! {
    /// Live allocations per device, for the whole process.
    fn table() -> &'static Mutex<HashMap<Device, Counts>> = Mutex::new(HashMap::new());
}

/// Counts a new allocation of `bytes` on `device`.
pub(crate) fn track_alloc(device: Device, bytes: usize) {
    let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
    let c = t.entry(device).or_default();
    c.arrays += 1;
    c.bytes += bytes;
    c.peak = c.peak.max(c.bytes);
}

/// Forgets an allocation counted by [`track_alloc`].
pub(crate) fn track_free(device: Device, bytes: usize) {
    let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
    let c = t.entry(device).or_default();
    c.arrays = c.arrays.saturating_sub(1);
    c.bytes = c.bytes.saturating_sub(bytes);
}

/// gpukit's live allocations (arrays and bytes) on `device`.
pub fn memory_stats(device: &Device) -> MemoryStats {
    let t = table().lock().unwrap_or_else(|p| p.into_inner());
    let c = t.get(device).copied().unwrap_or_default();
    MemoryStats {
        device: *device,
        arrays: c.arrays,
        bytes: c.bytes,
        peak_bytes: c.peak,
    }
}

/// The CUDA memory pool of one device: what it has taken from the driver and how much of that
/// gpukit's arrays (and anything else allocating from the pool) use now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// The device.
    pub device: Device,
    /// Bytes the pool has taken from the device: used plus idle.
    pub reserved_bytes: usize,
    /// Bytes of the pool held by live allocations (a dropped array counts until the device has
    /// passed the point where it was freed).
    pub used_bytes: usize,
}

impl PoolStats {
    /// Bytes reserved by the pool but used by no allocation: the cache that stays after arrays
    /// are dropped, kept for the next allocation and given back by [`free_cached_memory`].
    pub fn idle_bytes(&self) -> usize {
        self.reserved_bytes.saturating_sub(self.used_bytes)
    }
}

impl fmt::Display for PoolStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: pool {} reserved, {} in use, {} idle",
            self.device,
            human_bytes(self.reserved_bytes),
            human_bytes(self.used_bytes),
            human_bytes(self.idle_bytes())
        )
    }
}

/// The backend of `device` if gpukit has used it in this process (never creates one: asking
/// about memory must not create a CUDA context, which itself takes device memory).
fn backend_in_use(device: &Device) -> Option<Arc<CudaBackend>> {
    match device {
        Device::Cpu => None,
        Device::Cuda(n) => backends_in_use().into_iter().find(|b| b.ordinal() == *n),
    }
}

/// The memory pool of `device`. All zeros for the CPU (it has no pool), for a GPU gpukit has not
/// used in this process, and where the driver offers no stream-ordered pool.
pub fn pool_stats(device: &Device) -> PoolStats {
    let (reserved_bytes, used_bytes) = backend_in_use(device)
        .and_then(|b| b.pool_usage())
        .unwrap_or((0, 0));
    PoolStats {
        device: *device,
        reserved_bytes,
        used_bytes,
    }
}

/// Gives the idle memory of every GPU's pool back to the driver (after waiting for the work
/// queued on each) and returns the bytes released per device. Live arrays keep their memory.
///
/// The next allocations then ask the driver again, which is slower than reusing the cache:
/// call this to make room for another library or process, or to see in NVML what the arrays
/// alone use. Errors that kernels recorded stay for the next synchronisation.
///
/// ```
/// # fn main() -> gpukit::Result<()> {
/// let a = gpukit::Array::<f32>::zeros(1 << 20)?;
/// drop(a);
/// for (device, bytes) in gpukit::free_cached_memory()? {
///     println!("{device}: released {bytes} bytes");
/// }
/// # Ok(())
/// # }
/// ```
pub fn free_cached_memory() -> Result<Vec<(Device, usize)>> {
    backends_in_use()
        .into_iter()
        .map(|b| Ok((b.device(), b.trim_pool()?)))
        .collect()
}

impl Device {
    /// Gives this device's idle pool memory back to the driver (see [`free_cached_memory`]);
    /// returns the bytes released (0 for the CPU and for a GPU gpukit has not used).
    pub fn trim_pool(&self) -> Result<usize> {
        match backend_in_use(self) {
            Some(b) => b.trim_pool(),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_has_no_pool_and_nothing_to_trim() {
        let p = pool_stats(&Device::Cpu);
        assert_eq!((p.reserved_bytes, p.used_bytes, p.idle_bytes()), (0, 0, 0));
        assert_eq!(Device::Cpu.trim_pool().unwrap(), 0);
        assert_eq!(
            p.to_string(),
            "cpu: pool 0 B reserved, 0 B in use, 0 B idle"
        );
        let busy = PoolStats {
            device: Device::Cuda(1),
            reserved_bytes: 3 << 30,
            used_bytes: 1 << 30,
        };
        assert_eq!(busy.idle_bytes(), 2 << 30);
        assert!(busy.to_string().contains("2.0 GiB idle"));
    }

    #[test]
    fn freeing_without_a_gpu_in_use_releases_nothing() {
        if backends_in_use().is_empty() {
            assert!(free_cached_memory().unwrap().is_empty());
        }
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(human_bytes(10), "10 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
