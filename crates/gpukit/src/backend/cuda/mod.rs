//! The CUDA backend (through cudarc): one context and one stream per device, allocation,
//! NVRTC compilation with a kernel cache (machine code for the device, or PTX), loaded modules,
//! device properties, cuBLAS (`blas`), cuRAND (`curand`), cuFFT (`cufft`), cuSOLVER (`solver`).
//!
//! Every entry point checks [`probe`] first, so cudarc is never asked to load a library that
//! is missing (it would panic).

pub(crate) mod blas;
mod cache_dir;
mod capture;
mod code;
mod cufft;
mod curand;
mod fault;
mod kernel_cache;
mod modules;
mod nvrtc;
pub(crate) mod pinned;
mod pointer;
mod pool;
mod probe;
mod properties;
pub(crate) mod solver;
pub(crate) mod staging;

pub(crate) use cache_dir::cache_dir;
pub(crate) use capture::{destroy_exec, destroy_graph, graph_nodes};
pub use code::{CodeFormat, CodeOrigin, LoadedCode};
pub(crate) use cufft::FftKind;
pub(crate) use curand::Fill as CurandFill;
pub(crate) use fault::{driver_err, unusable};
pub(crate) use modules::{clear_memory_caches, CompiledModule};
#[allow(unused_imports)]
pub(crate) use nvrtc::{compile_cubin, compile_ptx, cubin_sm, nvrtc_version, ptx_entries};
#[allow(unused_imports)]
pub(crate) use probe::{
    cublas_probe, cufft_probe, curand_probe, cusolver_probe, nvrtc_probe, probe,
};
pub use properties::CudaProperties;

use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

/// One CUDA device: context, its one non-default stream, module cache, pending error.
pub(crate) struct CudaBackend {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: String,
    properties: CudaProperties,
    pool: Option<pool::Pool>,
    /// Pinned buffers that large pageable transfers are staged through (allocated on first use).
    staging: staging::Buffers,
    modules: Mutex<HashMap<String, Arc<CompiledModule>>>,
    /// The cuBLAS handle on `stream`, created at first use (`blas::CudaBackend::blas`).
    blas: Mutex<Option<Arc<cudarc::cublas::CudaBlas>>>,
    pending: Mutex<Option<Error>>,
    /// Set while the stream is being captured into a graph ([`capture`]).
    capturing: AtomicBool,
    /// The device's cuRAND generator, created at the first random fill ([`curand`]).
    curand: Mutex<Option<curand::Curand>>,
    /// The cuSOLVER dense handle on `stream`, created at first use (`solver::CudaBackend::solver`).
    solver: Mutex<Option<Arc<cudarc::cusolver::DnHandle>>>,
    /// Reports errors that kernels recorded on the device (out-of-bounds indices), run after
    /// every synchronisation; registered by the kernel layer at its first checked launch.
    sync_check: OnceLock<SyncCheck>,
    /// This backend's number among all backends of the process (see [`CudaBackend::generation`]).
    generation: u64,
    /// Set when a sticky fault destroyed the context ([`fault`]).
    lost: OnceLock<fault::Lost>,
    /// This backend itself, to keep it alive forever once lost.
    me: OnceLock<std::sync::Weak<CudaBackend>>,
}

/// A check run after each synchronisation of a device: reads what its kernels recorded and
/// returns the first error. The backend knows nothing of kernels; the kernel layer registers
/// its check with [`CudaBackend::register_sync_check`].
pub(crate) type SyncCheck = fn(&CudaBackend) -> Result<()>;

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaBackend(cuda:{})", self.ordinal)
    }
}

crate::process::process_global! {
    /// The CUDA backends of this process (one per device, shared by every copy of gpukit).
    fn registry() -> &'static Mutex<HashMap<usize, Arc<CudaBackend>>> = Mutex::new(HashMap::new());
}

/// The CUDA backends created so far (the devices "in use").
pub(crate) fn backends_in_use() -> Vec<Arc<CudaBackend>> {
    let mut v: Vec<_> = registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .filter(|b| !b.is_lost())
        .cloned()
        .collect();
    v.sort_by_key(|b| b.ordinal);
    v
}

/// Requests of at least this many bytes are checked against the available memory up front.
const LARGE_ALLOCATION: usize = 64 << 20;

/// Generations of backends: each new backend (a device's first use, or its recovery after a
/// fault) takes the next number, so per-device tables can tell a fresh backend from a lost one.
static NEXT_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl CudaBackend {
    /// The backend of device `ordinal`, created on first use.
    pub(crate) fn get(ordinal: usize) -> Result<Arc<CudaBackend>> {
        let count = probe().map_err(Error::NoGpu)?;
        if ordinal >= count {
            return Err(Error::NoGpu(format!(
                "cuda:{ordinal} requested but {count} CUDA device(s) found"
            )));
        }
        if let Some(message) = unusable(ordinal) {
            return Err(Error::DeviceLost {
                device: format!("cuda:{ordinal}"),
                message,
            });
        }
        let mut reg = registry().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = reg.get(&ordinal) {
            if !b.is_lost() {
                return Ok(b.clone());
            }
        }
        let backend = Arc::new(CudaBackend::create(ordinal)?);
        let _ = backend.me.set(Arc::downgrade(&backend));
        reg.insert(ordinal, backend.clone());
        Ok(backend)
    }

    fn create(ordinal: usize) -> Result<CudaBackend> {
        let ctx =
            CudaContext::new(ordinal).map_err(|e| driver_err("creating the CUDA context", e))?;
        // One stream per device: cudarc's cross-stream event tracking is pure overhead here.
        // SAFETY: gpukit queues all work of this context on the single stream created below.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(|e| driver_err("creating a CUDA stream", e))?;
        let properties = properties::query_properties(&ctx)?;
        let pool = pool::Pool::default_for(&ctx);
        let arch = format!(
            "sm_{}{}",
            properties.compute_capability.0, properties.compute_capability.1
        );
        Ok(CudaBackend {
            ordinal,
            ctx,
            stream,
            arch,
            properties,
            pool,
            staging: staging::Buffers::default(),
            modules: Mutex::new(HashMap::new()),
            blas: Mutex::new(None),
            pending: Mutex::new(None),
            capturing: AtomicBool::new(false),
            curand: Mutex::new(None),
            solver: Mutex::new(None),
            sync_check: OnceLock::new(),
            generation: NEXT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            lost: OnceLock::new(),
            me: OnceLock::new(),
        })
    }

    /// The CUDA device number.
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// This backend as a shared handle (`None` only while it is being created).
    pub(crate) fn shared(&self) -> Option<Arc<CudaBackend>> {
        self.me.get().and_then(std::sync::Weak::upgrade)
    }

    /// A number unique to this backend in the process (from 1). A device recovered after a
    /// fault gets a new backend with a new generation; tables of per-device state (compiled
    /// functions, error records) are keyed by it, so nothing of the lost context is reused.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The stream all gpukit work on this device is queued on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The cudarc context (for the kernel runtime: events, limits; for interop).
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The NVRTC target, e.g. `sm_90`.
    #[allow(dead_code)]
    pub(crate) fn arch(&self) -> &str {
        &self.arch
    }

    /// Static properties of the device (queried once).
    pub(crate) fn properties(&self) -> &CudaProperties {
        &self.properties
    }

    /// `(free, total)` device memory in bytes, as the driver reports it now.
    pub(crate) fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx
            .bind_to_thread()
            .and_then(|_| self.ctx.mem_get_info())
            .map_err(|e| driver_err("querying free memory", e))
    }

    /// Bytes a new allocation can use now: free device memory plus idle pool memory.
    fn available(&self) -> usize {
        let free = self.mem_info().map(|(f, _)| f).unwrap_or(0);
        free + self.pool.as_ref().map_or(0, |p| p.idle_bytes())
    }

    /// The memory pool's `(reserved, used)` bytes, or `None` where the device has no pool.
    pub(crate) fn pool_usage(&self) -> Option<(usize, usize)> {
        self.pool
            .as_ref()
            .map(|p| (p.reserved_bytes(), p.used_bytes()))
    }

    /// Waits for the stream (so that buffers freed on it are back in the pool), then gives the
    /// pool's idle memory back to the driver; returns the bytes released. Errors that kernels
    /// recorded stay for the next [`CudaBackend::synchronize`].
    pub(crate) fn trim_pool(&self) -> Result<usize> {
        self.ensure_usable()?;
        self.forbid_in_capture("trimming the memory pool")?;
        let Some(pool) = &self.pool else {
            return Ok(0);
        };
        self.stream
            .synchronize()
            .map_err(|e| self.fault_err("synchronizing before trimming the memory pool", e))?;
        let before = pool.reserved_bytes();
        pool.trim();
        Ok(before.saturating_sub(pool.reserved_bytes()))
    }

    fn oom(&self, requested: usize) -> Error {
        Error::OutOfMemory {
            device: format!("cuda:{}", self.ordinal),
            requested,
            free: self.available(),
        }
    }

    /// Allocates `len` elements, uninitialised. At least one element is allocated (the driver
    /// rejects empty allocations), so the slice may be longer than `len` when `len == 0`.
    ///
    /// A request larger than the available memory is an [`Error::OutOfMemory`] naming the
    /// requested and free bytes; the context stays usable.
    ///
    /// # Safety
    /// The contents are unspecified until written.
    pub(crate) unsafe fn alloc<T: Element>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.ensure_usable()?;
        self.forbid_in_capture("allocating device memory (a new array or a temporary)")?;
        let requested = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| self.oom(usize::MAX))?;
        // Large requests are checked first, so that the error names the numbers even where the
        // driver would only fail later; small ones go straight to the (fast) pool.
        if requested >= LARGE_ALLOCATION && requested > self.available() {
            return Err(self.oom(requested));
        }
        let is_oom =
            |e: &DriverError| e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        match self.stream.alloc::<T>(len.max(1)) {
            Ok(s) => Ok(s),
            Err(e) if is_oom(&e) => {
                // Give idle pool memory back (other allocators may hold the rest) and retry once.
                self.stream
                    .synchronize()
                    .map_err(|e| driver_err("synchronizing before retrying an allocation", e))?;
                let released = self.pool.as_ref().map_or(0, |pool| {
                    let idle = pool.idle_bytes();
                    pool.trim();
                    idle.saturating_sub(pool.idle_bytes())
                });
                let retried = self.stream.alloc::<T>(len.max(1));
                eprintln!(
                    "gpukit: cuda:{} had no room for {requested} bytes; released {released} bytes \
                     of gpukit's cached pool memory and retried: {}",
                    self.ordinal,
                    if retried.is_ok() {
                        "that worked"
                    } else {
                        "still no room"
                    }
                );
                match retried {
                    Ok(s) => Ok(s),
                    Err(e) if is_oom(&e) => Err(self.oom(requested)),
                    Err(e) => Err(driver_err("allocating device memory", e)),
                }
            }
            Err(e) => Err(driver_err("allocating device memory", e)),
        }
    }

    /// Allocates `len` zeroed elements (see [`CudaBackend::alloc`] for `len == 0`).
    pub(crate) fn alloc_zeros<T: Element>(&self, len: usize) -> Result<CudaSlice<T>> {
        // SAFETY: zeroed right below; zero bits are valid for every Element.
        let mut s = unsafe { self.alloc::<T>(len)? };
        self.stream
            .memset_zeros(&mut s)
            .map_err(|e| driver_err("zeroing device memory", e))?;
        Ok(s)
    }

    /// Copies host data into a new device buffer (ordered on the stream; `data` may be reused
    /// when this returns). Large copies are staged through pinned buffers ([`staging`]).
    pub(crate) fn upload<T: Element>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        // SAFETY: fully overwritten by the copy (or length 0, never read).
        let mut s = unsafe { self.alloc::<T>(data.len())? };
        self.upload_into(data, &mut s)?;
        Ok(s)
    }

    /// Copies host data into the start of an existing device buffer (see [`CudaBackend::upload`]).
    pub(crate) fn upload_into<T: Element>(&self, data: &[T], dst: &mut CudaSlice<T>) -> Result<()> {
        self.ensure_usable()?;
        self.forbid_in_capture("copying host data to the device")?;
        if data.len() > dst.len() {
            return Err(Error::Other(format!(
                "internal: copy of {} elements into a buffer of {}",
                data.len(),
                dst.len()
            )));
        }
        let (ptr, _record) = dst.device_ptr_mut(&self.stream);
        self.copy_htod_bytes(as_bytes(data), ptr)
    }

    /// Copies the first `len` elements of a device buffer to the host (waits for the stream).
    pub(crate) fn download<T: Element>(&self, slice: &CudaSlice<T>, len: usize) -> Result<Vec<T>> {
        self.download_range(slice, 0, len)
    }

    /// Copies elements `start..start + len` of a device buffer to the host (waits for the stream).
    /// Large copies are staged through pinned buffers and written into the new vector by several
    /// threads (which also spreads its first-touch page faults over them).
    pub(crate) fn download_range<T: Element>(
        &self,
        slice: &CudaSlice<T>,
        start: usize,
        len: usize,
    ) -> Result<Vec<T>> {
        let (src, bytes) = self.device_range(slice, start, len)?;
        let mut out: Vec<T> = Vec::new();
        out.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
            device: "cpu".into(),
            requested: bytes,
            free: crate::backend::cpu::available_memory().unwrap_or(0),
        })?;
        let dst = out.as_mut_ptr() as *mut u8;
        let cfg = staging::config();
        if cfg.stages_download(bytes) {
            staging::advise_huge_pages(dst, bytes);
            if cfg.prefault {
                // SAFETY: `out` has room for `bytes` bytes, written only here until the copy.
                unsafe { staging::par_prefault(dst, bytes) };
            }
        }
        // SAFETY: `out` has room for `len` elements; they are all written before `set_len`.
        unsafe {
            self.copy_dtoh_bytes(src, dst, bytes)?;
            out.set_len(len);
        }
        self.stream
            .synchronize()
            .map_err(|e| driver_err("waiting for the copy to the host", e))?;
        Ok(out)
    }

    /// Copies elements `start..start + dst.len()` of a device buffer into `dst` (waits for them).
    pub(crate) fn download_into<T: Element>(
        &self,
        slice: &CudaSlice<T>,
        start: usize,
        dst: &mut [T],
    ) -> Result<()> {
        let (src, bytes) = self.device_range(slice, start, dst.len())?;
        // SAFETY: `dst` is a live, exclusively borrowed slice of `bytes` bytes.
        unsafe { self.copy_dtoh_bytes(src, dst.as_mut_ptr() as *mut u8, bytes) }
    }

    /// The device address and byte length of elements `start..start + len` of `slice`.
    fn device_range<T: Element>(
        &self,
        slice: &CudaSlice<T>,
        start: usize,
        len: usize,
    ) -> Result<(cudarc::driver::sys::CUdeviceptr, usize)> {
        self.ensure_usable()?;
        self.forbid_in_capture("copying device data to the host")?;
        start
            .checked_add(len)
            .filter(|&e| e <= slice.len())
            .ok_or_else(|| {
                Error::Other(format!(
                    "internal: copy of elements {start}..{start}+{len} from a buffer of {}",
                    slice.len()
                ))
            })?;
        let size = std::mem::size_of::<T>();
        let (ptr, _record) = slice.device_ptr(&self.stream);
        Ok((ptr + (start * size) as u64, len * size))
    }

    /// Records an error to be returned by the next [`CudaBackend::synchronize`] (first one wins).
    pub(crate) fn set_pending_error(&self, e: Error) {
        let mut p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if p.is_none() {
            *p = Some(e);
        }
    }

    /// Registers the check run after every synchronisation (the first registration stays).
    pub(crate) fn register_sync_check(&self, check: SyncCheck) {
        let _ = self.sync_check.set(check);
    }

    /// Waits for queued work, then reports a recorded error or a kernel's out-of-bounds index
    /// (through the registered [`SyncCheck`]).
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.ensure_usable()?;
        self.forbid_in_capture("waiting for the device (a synchronisation)")?;
        self.stream
            .synchronize()
            .map_err(|e| self.fault_err("synchronizing the stream", e))?;
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let checked = match self.sync_check.get() {
            Some(check) => check(self),
            None => Ok(()),
        };
        match (checked, pending) {
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(e)) | (Err(e), None) => Err(e),
            (Err(bounds), Some(e)) => {
                // Both: report the kernel's error now and keep the other for the next call.
                self.set_pending_error(e);
                Err(bounds)
            }
        }
    }
}

/// The bytes of a slice of elements (plain data: every `Element` is `DeviceRepr`).
pub(crate) fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: elements are plain values without padding; the bytes live as long as `data`.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}
