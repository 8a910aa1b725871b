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

use super::pinned::PinnedAlloc;
use super::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::sync::{Mutex, OnceLock};

const MIB: usize = 1 << 20;

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

/// One piece of a transfer: bytes `offset..offset + len`, staged through buffer `buf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) offset: usize,
    pub(crate) len: usize,
    pub(crate) buf: usize,
}

/// Cuts `total` bytes into chunks of at most `chunk` bytes, given round-robin to `buffers`
/// buffers. No chunk is empty; the last one may be short.
pub(crate) fn plan(total: usize, chunk: usize, buffers: usize) -> Vec<Chunk> {
    let (chunk, buffers) = (chunk.max(1), buffers.max(1));
    (0..total.div_ceil(chunk))
        .map(|i| Chunk {
            offset: i * chunk,
            len: chunk.min(total - i * chunk),
            buf: i % buffers,
        })
        .collect()
}

/// What a staged transfer does, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The host waits until the copy engine is done with this buffer.
    Wait(usize),
    /// The host copies the chunk from the source into its buffer (to the device).
    Fill(Chunk),
    /// The copy engine is given the chunk (buffer -> device, or device -> buffer), and the
    /// buffer's event is recorded after it.
    Dma(Chunk),
    /// The host copies the chunk from its buffer into the destination (to the host).
    Drain(Chunk),
}

/// Host -> device: wait for the buffer, fill it, hand it to the copy engine; the fill of the
/// next chunk overlaps the copy of this one. The last copies may still run at the end (the
/// source is no longer needed then; the next user of a buffer waits for it).
pub(crate) fn upload_steps(chunks: &[Chunk]) -> Vec<Step> {
    chunks
        .iter()
        .flat_map(|&c| [Step::Wait(c.buf), Step::Fill(c), Step::Dma(c)])
        .collect()
}

/// Device -> host: the copy engine fills every buffer ahead; the host drains each chunk as soon
/// as it has landed and hands the buffer back for the chunk `buffers` places later. Everything
/// has landed at the end.
pub(crate) fn download_steps(chunks: &[Chunk], buffers: usize) -> Vec<Step> {
    let buffers = buffers.max(1);
    let mut steps: Vec<Step> = chunks.iter().take(buffers).map(|&c| Step::Dma(c)).collect();
    for (k, &c) in chunks.iter().enumerate() {
        steps.push(Step::Wait(c.buf));
        steps.push(Step::Drain(c));
        if let Some(&next) = chunks.get(k + buffers) {
            steps.push(Step::Dma(next));
        }
    }
    steps
}

/// Carries out the steps of a staged transfer.
pub(crate) trait Engine {
    /// [`Step::Wait`].
    fn wait(&mut self, buf: usize) -> Result<()>;
    /// [`Step::Fill`].
    fn fill(&mut self, c: Chunk) -> Result<()>;
    /// [`Step::Dma`].
    fn dma(&mut self, c: Chunk) -> Result<()>;
    /// [`Step::Drain`].
    fn drain(&mut self, c: Chunk) -> Result<()>;
}

/// Runs `steps` on `engine`, stopping at the first error.
pub(crate) fn run(steps: &[Step], engine: &mut impl Engine) -> Result<()> {
    for &s in steps {
        match s {
            Step::Wait(b) => engine.wait(b)?,
            Step::Fill(c) => engine.fill(c)?,
            Step::Dma(c) => engine.dma(c)?,
            Step::Drain(c) => engine.drain(c)?,
        }
    }
    Ok(())
}

crate::process::process_global! {
    /// The threads that do the host side of staged copies (shared by all devices).
    fn copy_pool_cell() -> &'static OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
}

/// The helper threads of [`par_copy`] (`None` when one thread is configured or they cannot be
/// started). Built outside the process registry's lock, since it reads [`config`].
fn copy_pool() -> Option<&'static rayon::ThreadPool> {
    copy_pool_cell()
        .get_or_init(|| {
            let helpers = config().threads.saturating_sub(1);
            (helpers > 0)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(helpers)
                        .thread_name(|i| format!("gpukit-copy-{i}"))
                        .build()
                        .ok()
                })
                .flatten()
        })
        .as_ref()
}

/// Smallest piece one thread copies: below this, waking threads costs more than it saves.
const MIN_PART: usize = 256 << 10;

/// A transparent huge page.
const HUGE: usize = 2 << 20;

/// Splits the `len` bytes at address `base` into at most `threads` pieces for the copy threads,
/// as `(offset, len)`. Pieces of at least [`MIN_PART`] bytes (except the last), cut at whole
/// pages of the address space, and at whole 2 MiB pages when the pieces are at least that
/// large: each thread then takes the page faults of its own huge pages, without waiting on
/// another thread's.
pub(crate) fn split(base: usize, len: usize, threads: usize) -> Vec<(usize, usize)> {
    let parts = (len / MIN_PART).clamp(1, threads.max(1));
    let want = len.div_ceil(parts);
    let grain = if want >= HUGE { HUGE } else { 4096 };
    let mut pieces = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..=parts {
        let end = if k == parts {
            len
        } else {
            // the page boundary nearest to the even cut
            ((base + k * want + grain / 2) / grain * grain)
                .saturating_sub(base)
                .min(len)
        };
        if end > start {
            pieces.push((start, end - start));
            start = end;
        }
    }
    pieces
}

/// Runs `f(offset, len)` on the pieces of the `len` bytes at `base` ([`split`]), with the copy
/// threads.
fn par_pieces(base: usize, len: usize, f: impl Fn(usize, usize) + Sync) {
    let pieces = split(base, len, config().threads);
    match copy_pool() {
        Some(pool) if pieces.len() > 1 => pool.in_place_scope(|scope| {
            for &(off, n) in &pieces[1..] {
                let f = &f;
                scope.spawn(move |_| f(off, n));
            }
            f(pieces[0].0, pieces[0].1);
        }),
        _ => pieces.into_iter().for_each(|(off, n)| f(off, n)),
    }
}

/// `memcpy` of `len` bytes with non-temporal stores where the CPU has them (x86-64): the
/// destination lines are written without being read first and bypass the cache.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`] for `len` bytes.
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = dst.align_offset(16).min(len);
        let body = (len - head) / 64 * 64;
        // SAFETY: all accesses stay inside the `len` bytes the caller vouches for; the stores
        // are 16-byte aligned (after `head`); SSE2 is part of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, head);
            let (mut d, mut s) = (dst.add(head), src.add(head));
            let end = d.add(body);
            while d < end {
                let a = _mm_loadu_si128(s as *const __m128i);
                let b = _mm_loadu_si128(s.add(16) as *const __m128i);
                let c = _mm_loadu_si128(s.add(32) as *const __m128i);
                let e = _mm_loadu_si128(s.add(48) as *const __m128i);
                _mm_stream_si128(d as *mut __m128i, a);
                _mm_stream_si128(d.add(16) as *mut __m128i, b);
                _mm_stream_si128(d.add(32) as *mut __m128i, c);
                _mm_stream_si128(d.add(48) as *mut __m128i, e);
                d = d.add(64);
                s = s.add(64);
            }
            std::ptr::copy_nonoverlapping(s, d, len - head - body);
            // Non-temporal stores are weakly ordered: make them visible before the piece is
            // reported done.
            _mm_sfence();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as the caller vouches.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// `memcpy` with the copy threads.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes, the two must not overlap,
/// and nothing else may access `dst` meanwhile.
pub(crate) unsafe fn par_copy(dst: *mut u8, src: *const u8, len: usize) {
    let (d, s) = (dst as usize, src as usize);
    par_pieces(d, len, |off, n| {
        // SAFETY: each piece is a disjoint part of the ranges the caller vouches for.
        unsafe { std::ptr::copy_nonoverlapping((s + off) as *const u8, (d + off) as *mut u8, n) }
    });
}

/// [`par_copy`] with non-temporal stores ([`Config::streaming_stores`]), for destinations that
/// will not be read soon.
///
/// # Safety
/// As [`par_copy`].
pub(crate) unsafe fn par_copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    if !config().streaming_stores {
        // SAFETY: as the caller vouches.
        return unsafe { par_copy(dst, src, len) };
    }
    let (d, s) = (dst as usize, src as usize);
    par_pieces(d, len, |off, n| {
        // SAFETY: each piece is a disjoint part of the ranges the caller vouches for.
        unsafe { copy_streaming((d + off) as *mut u8, (s + off) as *const u8, n) }
    });
}

/// Writes one byte of every 4 KiB page of `dst..dst + len` with the copy threads, so that the
/// page faults of a new allocation are taken in parallel up front ([`Config::prefault`]).
///
/// # Safety
/// `dst` must be valid for writing `len` bytes, and nothing else may access it meanwhile.
pub(crate) unsafe fn par_prefault(dst: *mut u8, len: usize) {
    let d = dst as usize;
    par_pieces(d, len, |off, n| {
        for page in (0..n).step_by(4096) {
            // SAFETY: inside the piece; volatile so that the write is not elided.
            unsafe { std::ptr::write_volatile((d + off + page) as *mut u8, 0) };
        }
    });
}

/// `memset(dst, 0, len)` with the copy threads.
///
/// # Safety
/// `dst` must be valid for writing `len` bytes, and nothing else may access it meanwhile.
pub(crate) unsafe fn par_zero(dst: *mut u8, len: usize) {
    let d = dst as usize;
    par_pieces(d, len, |off, n| {
        // SAFETY: each piece is a disjoint part of the range the caller vouches for.
        unsafe { std::ptr::write_bytes((d + off) as *mut u8, 0, n) }
    });
}

/// Asks the kernel to back the whole 2 MiB pages inside `ptr..ptr + len` with transparent huge
/// pages (a fresh array then takes 512 times fewer page faults on first touch). Advisory:
/// failures are ignored.
pub(crate) fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        if !config().huge_pages || len < 2 * HUGE {
            return;
        }
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: advice only, on whole pages of an allocation the caller owns.
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Host -> device through the staging buffers.
struct Upload<'a> {
    bufs: &'a [PinnedAlloc],
    src: &'a [u8],
    dst: sys::CUdeviceptr,
    stream: sys::CUstream,
}

impl Engine for Upload<'_> {
    fn wait(&mut self, buf: usize) -> Result<()> {
        self.bufs[buf].wait_idle()
    }
    fn fill(&mut self, c: Chunk) -> Result<()> {
        let b = &self.bufs[c.buf];
        debug_assert!(c.len <= b.bytes() && c.offset + c.len <= self.src.len());
        // SAFETY: the buffer holds `c.len` bytes and the copy engine is done with it (waited
        // for just before); the source range is inside `src`.
        unsafe { par_copy(b.ptr(), self.src.as_ptr().add(c.offset), c.len) };
        Ok(())
    }
    fn dma(&mut self, c: Chunk) -> Result<()> {
        let b = &self.bufs[c.buf];
        // SAFETY: pinned source of `c.len` bytes, kept alive (and unwritten) until its event;
        // the destination range lies inside the device buffer the caller passed.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                self.dst + c.offset as u64,
                b.ptr() as *const std::ffi::c_void,
                c.len,
                self.stream,
            )
        }
        .result()
        .map_err(|e| driver_err("copying to the device", e))?;
        b.record_use()
    }
    fn drain(&mut self, _c: Chunk) -> Result<()> {
        Err(Error::Other("internal: drain step in an upload".into()))
    }
}

/// Device -> host through the staging buffers.
struct Download<'a> {
    bufs: &'a [PinnedAlloc],
    src: sys::CUdeviceptr,
    dst: *mut u8,
    stream: sys::CUstream,
}

impl Engine for Download<'_> {
    fn wait(&mut self, buf: usize) -> Result<()> {
        self.bufs[buf].wait_idle()
    }
    fn fill(&mut self, _c: Chunk) -> Result<()> {
        Err(Error::Other("internal: fill step in a download".into()))
    }
    fn dma(&mut self, c: Chunk) -> Result<()> {
        let b = &self.bufs[c.buf];
        // SAFETY: the pinned buffer holds `c.len` bytes and the host is done with it (the
        // schedule drains a buffer before handing it back); the source range lies inside the
        // device buffer the caller passed.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                b.ptr() as *mut std::ffi::c_void,
                self.src + c.offset as u64,
                c.len,
                self.stream,
            )
        }
        .result()
        .map_err(|e| driver_err("copying to the host", e))?;
        b.record_use()
    }
    fn drain(&mut self, c: Chunk) -> Result<()> {
        let b = &self.bufs[c.buf];
        // SAFETY: the chunk has landed in the buffer (waited for just before); the caller
        // vouches that `dst` is writable for the whole transfer.
        unsafe { par_copy_streaming(self.dst.add(c.offset), b.ptr(), c.len) };
        Ok(())
    }
}

/// The staging buffers of one device, allocated at its first large transfer.
#[derive(Default)]
pub(crate) struct Buffers(Mutex<Vec<PinnedAlloc>>);

impl CudaBackend {
    /// Runs `f` with this device's staging buffers, allocating them first if needed; `None`
    /// when they cannot be allocated (the caller then uses the driver's path).
    fn with_staging<R>(&self, f: impl FnOnce(&[PinnedAlloc]) -> R) -> Option<R> {
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

    /// Copies `src` to device memory at `dst` (which must hold `src.len()` bytes), staged when
    /// large. Returns once `src` may be reused; the copy is ordered on the device's stream.
    pub(crate) fn copy_htod_bytes(&self, src: &[u8], dst: sys::CUdeviceptr) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        let stream = self.stream.cu_stream();
        let cfg = config();
        if cfg.stages_upload(src.len()) {
            let staged = self.with_staging(|bufs| {
                let chunk = cfg.chunk_for(src.len());
                let steps = upload_steps(&plan(src.len(), chunk, bufs.len()));
                let mut engine = Upload {
                    bufs,
                    src,
                    dst,
                    stream,
                };
                let r = run(&steps, &mut engine);
                if r.is_err() {
                    // A copy may be in flight from a buffer whose event was not recorded.
                    let _ = self.stream.synchronize();
                }
                r
            });
            if let Some(r) = staged {
                return r;
            }
        }
        // SAFETY: `src` is valid for its length; the driver copies pageable memory out before
        // returning.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                dst,
                src.as_ptr() as *const std::ffi::c_void,
                src.len(),
                stream,
            )
        }
        .result()
        .map_err(|e| driver_err("copying to the device", e))
    }

    /// Copies `len` bytes of device memory at `src` to host memory at `dst`, staged when large,
    /// after the work queued before it; returns once they are all in `dst` (the stream may
    /// still have later work).
    ///
    /// # Safety
    /// `dst` must be valid for writing `len` bytes (it may be uninitialised) and not accessed
    /// by anything else during the call; `src` must lie inside a live device allocation.
    pub(crate) unsafe fn copy_dtoh_bytes(
        &self,
        src: sys::CUdeviceptr,
        dst: *mut u8,
        len: usize,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        let stream = self.stream.cu_stream();
        let cfg = config();
        if cfg.stages_download(len) {
            let staged = self.with_staging(|bufs| {
                let chunks = plan(len, cfg.chunk_for(len), bufs.len());
                let steps = download_steps(&chunks, bufs.len());
                let mut engine = Download {
                    bufs,
                    src,
                    dst,
                    stream,
                };
                let r = run(&steps, &mut engine);
                if r.is_err() {
                    // Copies may still be in flight into the buffers: let them land before
                    // anyone reuses them (the buffers' events cover only recorded copies).
                    let _ = self.stream.synchronize();
                }
                r
            });
            if let Some(r) = staged {
                return r;
            }
        }
        // SAFETY: the caller vouches for `dst`; a copy into pageable memory has completed when
        // the call returns, and the stream sync below covers pinned destinations.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut std::ffi::c_void, src, len, stream) }
            .result()
            .map_err(|e| driver_err("copying to the host", e))?;
        self.stream
            .synchronize()
            .map_err(|e| driver_err("waiting for the copy to the host", e))
    }
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

    #[test]
    fn plan_covers_every_byte_once() {
        for &(total, chunk, bufs) in &[
            (0, 16, 4),
            (1, 16, 4),
            (15, 16, 4),
            (16, 16, 4),
            (17, 16, 4),
            (100, 16, 3),
            (1000, 7, 2),
            (5, 1, 1),
        ] {
            let p = plan(total, chunk, bufs);
            let mut next = 0;
            for (i, c) in p.iter().enumerate() {
                assert_eq!(c.offset, next, "{total}/{chunk}: contiguous");
                assert!(c.len >= 1 && c.len <= chunk);
                assert_eq!(c.buf, i % bufs);
                next += c.len;
            }
            assert_eq!(next, total);
            assert_eq!(p.len(), total.div_ceil(chunk));
        }
    }

    #[test]
    fn chunks_shrink_for_mid_sized_transfers() {
        let c = Config::from_lookup(|_| None);
        assert_eq!(c.chunk_for(4 * MIB), MIB);
        assert_eq!(c.chunk_for(10 * MIB), 3 * MIB);
        assert_eq!(c.chunk_for(64 * MIB), 16 * MIB);
        assert_eq!(c.chunk_for(128 * MIB), 32 * MIB);
        assert_eq!(c.chunk_for(2048 * MIB), 32 * MIB);
        assert!(plan(10 * MIB, c.chunk_for(10 * MIB), 4).len() >= 3);
    }

    #[test]
    fn split_cuts_at_pages_and_huge_pages_covering_the_range() {
        for &base in &[0usize, 16, 4096 * 3 + 16, HUGE - 8] {
            for &(len, threads) in &[
                (0, 8),
                (1, 8),
                (4096, 8),
                (MIN_PART - 1, 16),
                (MIN_PART * 3 + 17, 16),
                (16 * MIB, 16),
                (16 * MIB + 5, 7),
                (32 * MIB, 16),
                (64 * MIB + 3, 16),
                (64 * MIB, 1),
            ] {
                let parts = split(base, len, threads);
                assert!(parts.len() <= threads.max(1), "{base}/{len}/{threads}");
                let grain = if len.div_ceil(parts.len().max(1)) >= HUGE {
                    HUGE
                } else {
                    4096
                };
                let mut next = 0;
                for (i, &(off, n)) in parts.iter().enumerate() {
                    assert_eq!(off, next);
                    assert!(n > 0);
                    if i > 0 {
                        assert_eq!(
                            (base + off) % grain,
                            0,
                            "{base}/{len}/{threads}: cut at {off}"
                        );
                    }
                    next += n;
                }
                assert_eq!(next, len);
            }
        }
        assert_eq!(split(0, 16 * MIB, 16).len(), 16);
        assert_eq!(
            split(0, 32 * MIB, 16),
            (0..16).map(|i| (i * HUGE, HUGE)).collect::<Vec<_>>()
        );
        // an unaligned base: cuts on the huge pages of the address space
        let p = split(16, 32 * MIB, 16);
        assert_eq!(p[0], (0, HUGE - 16));
        assert_eq!(p[1], (HUGE - 16, HUGE));
        assert_eq!(p.len(), 16);
        assert_eq!(p.iter().map(|x| x.1).sum::<usize>(), 32 * MIB);
    }

    #[test]
    fn par_copy_copies_odd_sizes() {
        for len in [0usize, 1, 4095, MIN_PART + 3, 3 * MIB + 11] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut dst = vec![0u8; len];
            // SAFETY: two distinct buffers of `len` bytes.
            unsafe { par_copy(dst.as_mut_ptr(), src.as_ptr(), len) };
            assert!(dst == src, "len {len}");
            // SAFETY: as above.
            unsafe { par_zero(dst.as_mut_ptr(), len) };
            assert!(dst.iter().all(|&b| b == 0), "len {len}");
            // SAFETY: as above.
            unsafe { par_copy_streaming(dst.as_mut_ptr(), src.as_ptr(), len) };
            assert!(dst == src, "streaming, len {len}");
            // SAFETY: as above.
            unsafe { par_prefault(dst.as_mut_ptr(), len) };
        }
        // every alignment of source and destination, every short length
        let src: Vec<u8> = (0..300).map(|i| i as u8).collect();
        for so in 0..16 {
            for d_o in 0..16 {
                for len in [0, 1, 15, 16, 17, 63, 64, 65, 127, 200] {
                    let mut dst = vec![0xAAu8; 300];
                    // SAFETY: both ranges lie inside their vectors.
                    unsafe { copy_streaming(dst.as_mut_ptr().add(d_o), src.as_ptr().add(so), len) };
                    assert_eq!(&dst[d_o..d_o + len], &src[so..so + len]);
                    assert!(dst[..d_o]
                        .iter()
                        .chain(&dst[d_o + len..])
                        .all(|&b| b == 0xAA));
                }
            }
        }
    }

    /// A copy engine whose copies land only when the host waits for them (or at the end),
    /// as the real one may: a schedule that touches a buffer with a copy in flight, or drains
    /// one before its copy landed, corrupts the data.
    struct Sim {
        host_src: Vec<u8>,
        device: Vec<u8>,
        host_dst: Vec<u8>,
        bufs: Vec<Vec<u8>>,
        in_flight: Vec<Vec<Chunk>>,
        upload: bool,
        log: Vec<Step>,
    }

    impl Sim {
        fn new(total: usize, chunk: usize, buffers: usize, upload: bool) -> Sim {
            let data: Vec<u8> = (0..total).map(|i| (i * 31 % 253) as u8 + 1).collect();
            let (host_src, device) = if upload {
                (data, vec![0; total])
            } else {
                (vec![], data)
            };
            Sim {
                host_src,
                device,
                host_dst: vec![0; total],
                bufs: vec![vec![0xEE; chunk]; buffers],
                in_flight: vec![vec![]; buffers],
                upload,
                log: vec![],
            }
        }
        fn land(&mut self, buf: usize) {
            for c in std::mem::take(&mut self.in_flight[buf]) {
                let range = c.offset..c.offset + c.len;
                if self.upload {
                    self.device[range].copy_from_slice(&self.bufs[buf][..c.len]);
                } else {
                    self.bufs[buf][..c.len].copy_from_slice(&self.device[range]);
                }
            }
        }
        fn finish(&mut self) {
            for b in 0..self.bufs.len() {
                self.land(b);
            }
        }
    }

    impl Engine for Sim {
        fn wait(&mut self, buf: usize) -> Result<()> {
            self.log.push(Step::Wait(buf));
            self.land(buf);
            Ok(())
        }
        fn fill(&mut self, c: Chunk) -> Result<()> {
            self.log.push(Step::Fill(c));
            assert!(self.in_flight[c.buf].is_empty(), "fill of a busy buffer");
            self.bufs[c.buf][..c.len].copy_from_slice(&self.host_src[c.offset..c.offset + c.len]);
            Ok(())
        }
        fn dma(&mut self, c: Chunk) -> Result<()> {
            self.log.push(Step::Dma(c));
            self.in_flight[c.buf].push(c);
            Ok(())
        }
        fn drain(&mut self, c: Chunk) -> Result<()> {
            self.log.push(Step::Drain(c));
            assert!(
                self.in_flight[c.buf].is_empty(),
                "drain before the copy landed"
            );
            self.host_dst[c.offset..c.offset + c.len].copy_from_slice(&self.bufs[c.buf][..c.len]);
            Ok(())
        }
    }

    const CASES: &[(usize, usize, usize)] = &[
        (0, 8, 2),
        (1, 8, 2),
        (7, 8, 2),
        (8, 8, 2),
        (9, 8, 2),
        (100, 8, 2),
        (100, 8, 3),
        (1001, 16, 4),
        (1 << 12, 64, 4),
        (12345, 1000, 5),
    ];

    #[test]
    fn upload_schedule_moves_every_byte() {
        for &(total, chunk, buffers) in CASES {
            let mut sim = Sim::new(total, chunk, buffers, true);
            let steps = upload_steps(&plan(total, chunk, buffers));
            run(&steps, &mut sim).unwrap();
            sim.finish();
            assert!(sim.device == sim.host_src, "{total}/{chunk}/{buffers}");
            // the fill of chunk k+1 comes before the wait for chunk k's copy: they overlap
            if total > 2 * chunk {
                let second_fill = steps.iter().filter(|s| matches!(s, Step::Fill(_))).nth(1);
                let first_dma = steps.iter().position(|s| matches!(s, Step::Dma(_)));
                let second_fill_at = steps.iter().position(|s| Some(s) == second_fill);
                assert!(first_dma < second_fill_at);
            }
        }
    }

    #[test]
    fn download_schedule_moves_every_byte_and_runs_ahead() {
        for &(total, chunk, buffers) in CASES {
            let mut sim = Sim::new(total, chunk, buffers, false);
            let chunks = plan(total, chunk, buffers);
            let steps = download_steps(&chunks, buffers);
            run(&steps, &mut sim).unwrap();
            // everything has landed without a final sync
            assert!(sim.host_dst == sim.device, "{total}/{chunk}/{buffers}");
            assert!(sim.in_flight.iter().all(|f| f.is_empty()));
            // the copy engine has `buffers` chunks queued before the host waits for the first
            let first_wait = steps.iter().position(|s| matches!(s, Step::Wait(_)));
            let queued = steps
                .iter()
                .take_while(|s| matches!(s, Step::Dma(_)))
                .count();
            assert_eq!(queued, chunks.len().min(buffers));
            assert_eq!(first_wait.unwrap_or(0), queued);
            assert_eq!(sim.log, steps);
        }
    }

    #[test]
    fn a_failing_step_stops_the_transfer() {
        struct Failing(usize);
        impl Engine for Failing {
            fn wait(&mut self, _: usize) -> Result<()> {
                Ok(())
            }
            fn fill(&mut self, _: Chunk) -> Result<()> {
                Ok(())
            }
            fn dma(&mut self, _: Chunk) -> Result<()> {
                self.0 += 1;
                if self.0 == 2 {
                    Err(Error::Cuda("copy failed".into()))
                } else {
                    Ok(())
                }
            }
            fn drain(&mut self, _: Chunk) -> Result<()> {
                panic!("drain after a failed copy")
            }
        }
        let steps = upload_steps(&plan(100, 10, 2));
        let mut e = Failing(0);
        assert!(matches!(run(&steps, &mut e), Err(Error::Cuda(_))));
        assert_eq!(e.0, 2);
        let steps = download_steps(&plan(100, 10, 2), 2);
        assert!(run(&steps, &mut Failing(0)).is_err());
    }
}
