//! Fast copies between ordinary (pageable) host memory and a device.
//!
//! The copy engines can only read and write page-locked memory. Given pageable memory, the
//! driver copies through its own small staging buffers with one CPU thread (about 7 GB/s to the
//! device, less back). gpukit stages large transfers itself instead: each device keeps a few
//! pinned buffers ([`Config::buffers`] of [`Config::chunk_bytes`]), and a transfer is cut into
//! chunks that flow through them in a pipeline:
//!
//! * to the device: the host copies chunk k+1 into buffer B (with several threads) while the
//!   copy engine moves chunk k out of buffer A; an event per buffer says when it is free again;
//! * to the host: the copy engine fills the buffers ahead, and the host copies each chunk out
//!   (with several threads) as soon as its event fires, while the next ones are in flight.
//!
//! The schedule ([`upload_steps`], [`download_steps`]) is plain data, executed by an [`Engine`];
//! the tests run it against a simulated copy engine whose copies only land when waited for,
//! so a schedule that reused a buffer too early would corrupt the data they check.
//!
//! A new host array (`to_host`) is also asked for transparent huge pages, and the copy threads
//! cut their pieces at huge-page boundaries, so its first-touch page faults are few and taken
//! in parallel; the copies out of the staging buffers use non-temporal stores.
//!
//! Smaller transfers keep the driver's path (one call, lower latency): under 16 MiB to the
//! device and under 4 MiB to the host, where the staged path measured slower on an H100
//! machine (the driver's own path to the host is slow even for small copies into new memory).
//! Tuning knobs, read once per process from the environment: `GPUKIT_STAGING=0` (off),
//! `GPUKIT_STAGING_MIN_MIB`, `GPUKIT_STAGING_CHUNK_MIB`, `GPUKIT_STAGING_BUFFERS`,
//! `GPUKIT_COPY_THREADS`, `GPUKIT_HUGE_PAGES=0` (no huge-page advice for new host arrays),
//! `GPUKIT_STREAMING_STORES=0` (ordinary stores), `GPUKIT_PREFAULT=1` (touch a new host array's
//! pages with all threads before the copy).
//!
//! Files: `config` (sizes and knobs), `schedule` (the pipeline as data), `host_copy` (the
//! host's share of the work, with several threads), `upload` and `download` (the two
//! directions through a device's pinned buffers, kept here).

mod config;
mod download;
mod host_copy;
mod schedule;
mod upload;

pub(crate) use config::config;
pub(crate) use host_copy::{advise_huge_pages, par_prefault, par_zero};

use super::pinned::PinnedAlloc;
use super::CudaBackend;
use crate::error::Result;
use std::sync::Mutex;

/// The staging buffers of one device, allocated at its first large transfer.
#[derive(Default)]
pub(crate) struct Buffers(Mutex<Vec<PinnedAlloc>>);

impl CudaBackend {
    /// Runs `f` with this device's staging buffers, allocating them first if needed; `None`
    /// when they cannot be allocated (the caller then uses the driver's path).
    pub(super) fn with_staging<R>(&self, f: impl FnOnce(&[PinnedAlloc]) -> R) -> Option<R> {
        let cfg = config();
        let mut bufs = self.staging.0.lock().unwrap_or_else(|p| p.into_inner());
        if bufs.is_empty() {
            let made: Result<Vec<_>> = (0..cfg.buffers)
                .map(|_| PinnedAlloc::new(&self.stream, cfg.chunk_bytes))
                .collect();
            *bufs = made.ok()?;
        }
        Some(f(&bufs))
    }
}
