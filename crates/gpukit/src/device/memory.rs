//! A tracker of gpukit's own live allocations per device (for the `%memory` magic).

use crate::device::Device;
use std::collections::HashMap;
use std::fmt;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_sizes() {
        assert_eq!(human_bytes(10), "10 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
