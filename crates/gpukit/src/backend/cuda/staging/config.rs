//! How large transfers are staged: sizes, buffers, threads and the environment knobs that
//! change them (read once per process).

use std::sync::OnceLock;

pub(crate) const MIB: usize = 1 << 20;

/// How large transfers are staged (see the module docs for the environment variables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    /// Whether large transfers are staged at all.
    pub(crate) enabled: bool,
    /// Copies to the device of at least this many bytes are staged.
    pub(crate) min_upload: usize,
    /// Copies to the host of at least this many bytes are staged.
    pub(crate) min_download: usize,
    /// Size of one staging buffer (and of one chunk).
    pub(crate) chunk_bytes: usize,
    /// Pinned staging buffers per device.
    pub(crate) buffers: usize,
    /// Threads for the host side copies (the calling thread included).
    pub(crate) threads: usize,
    /// Ask the kernel for transparent huge pages for new large host arrays (fewer page faults).
    pub(crate) huge_pages: bool,
    /// Copy out of the staging buffers with non-temporal stores (x86-64): the destination is
    /// written without being read into the cache first.
    pub(crate) streaming_stores: bool,
    /// Touch every page of a new host array with all copy threads before a download.
    pub(crate) prefault: bool,
}

impl Config {
    /// The configuration from `lookup` (an environment), with defaults for what it lacks.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let num = |name: &str| -> Option<usize> { lookup(name)?.trim().parse().ok() };
        let flag = |name: &str| lookup(name).is_none_or(|v| v.trim() != "0");
        let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
        Config {
            enabled: flag("GPUKIT_STAGING"),
            min_upload: num("GPUKIT_STAGING_MIN_MIB").map_or(16 * MIB, |m| m * MIB),
            min_download: num("GPUKIT_STAGING_MIN_MIB").map_or(4 * MIB, |m| m * MIB),
            chunk_bytes: num("GPUKIT_STAGING_CHUNK_MIB").map_or(32, |m| m.clamp(1, 1024)) * MIB,
            buffers: num("GPUKIT_STAGING_BUFFERS").map_or(4, |b| b.clamp(2, 64)),
            threads: num("GPUKIT_COPY_THREADS").map_or(cores.min(16), |t| t.clamp(1, 256)),
            huge_pages: flag("GPUKIT_HUGE_PAGES"),
            streaming_stores: flag("GPUKIT_STREAMING_STORES"),
            prefault: lookup("GPUKIT_PREFAULT").is_some_and(|v| v.trim() == "1"),
        }
    }

    /// Whether a copy of `bytes` bytes to the device goes through the staging buffers.
    pub(crate) fn stages_upload(&self, bytes: usize) -> bool {
        self.enabled && bytes >= self.min_upload.max(1)
    }

    /// Whether a copy of `bytes` bytes to the host goes through the staging buffers.
    pub(crate) fn stages_download(&self, bytes: usize) -> bool {
        self.enabled && bytes >= self.min_download.max(1)
    }

    /// The chunk size for a transfer of `total` bytes: the buffer size, or less for transfers
    /// of fewer than four buffers' worth, so that even those overlap host copies and DMA (in
    /// whole MiB, at least 1 MiB).
    pub(crate) fn chunk_for(&self, total: usize) -> usize {
        (total / 4)
            .next_multiple_of(MIB)
            .clamp(MIB, self.chunk_bytes.max(MIB))
    }
}

crate::process::process_global! {
    /// The staging configuration of this process, read from the environment once.
    fn config_cell() -> &'static OnceLock<Config> = OnceLock::new();
}

/// The staging configuration of this process.
pub(crate) fn config() -> &'static Config {
    config_cell().get_or_init(|| Config::from_lookup(|k| std::env::var(k).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn config_defaults_and_overrides() {
        let d = Config::from_lookup(|_| None);
        assert!(d.enabled && d.huge_pages && d.streaming_stores && !d.prefault);
        assert_eq!(
            (d.min_upload, d.min_download, d.chunk_bytes, d.buffers),
            (16 * MIB, 4 * MIB, 32 * MIB, 4)
        );
        assert!(d.threads >= 1 && d.threads <= 16);
        assert!(!d.stages_upload(8 * MIB) && d.stages_upload(16 * MIB));
        assert!(!d.stages_download(MIB) && d.stages_download(4 * MIB));
        assert!(d.stages_upload(usize::MAX) && d.stages_download(usize::MAX));

        let env: HashMap<&str, &str> = [
            ("GPUKIT_STAGING_MIN_MIB", "1"),
            ("GPUKIT_STAGING_CHUNK_MIB", "64"),
            ("GPUKIT_STAGING_BUFFERS", "1"),
            ("GPUKIT_COPY_THREADS", "3"),
            ("GPUKIT_HUGE_PAGES", "0"),
            ("GPUKIT_STREAMING_STORES", "0"),
            ("GPUKIT_PREFAULT", "1"),
        ]
        .into();
        let c = Config::from_lookup(|k| env.get(k).map(|v| v.to_string()));
        assert_eq!(
            (
                c.min_upload,
                c.min_download,
                c.chunk_bytes,
                c.buffers,
                c.threads
            ),
            (MIB, MIB, 64 * MIB, 2, 3),
            "at least double buffering"
        );
        assert!(!c.huge_pages && !c.streaming_stores && c.prefault && c.stages_upload(MIB));
        let off = Config::from_lookup(|k| (k == "GPUKIT_STAGING").then(|| "0".to_string()));
        assert!(!off.stages_upload(usize::MAX) && !off.stages_download(usize::MAX));
        let zero_min = Config::from_lookup(|k| (k == "GPUKIT_STAGING_MIN_MIB").then(|| "0".into()));
        assert!(
            !zero_min.stages_upload(0) && zero_min.stages_download(1),
            "empty copies are never staged"
        );
    }
}
