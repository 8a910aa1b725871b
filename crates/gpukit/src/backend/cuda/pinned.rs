//! Page-locked ("pinned") host memory from `cuMemHostAlloc`.
//!
//! The copy engines read and write pinned memory directly (no driver-side staging), so copies
//! between it and the device run at the link's rate and can be asynchronous. Used for the
//! staging buffers of large pageable transfers ([`super::staging`]) and behind the public
//! [`crate::array::PinnedBuffer`].

use super::driver_err;
use crate::error::{Error, Result};
use cudarc::driver::{result, sys, CudaEvent, CudaStream};
use std::sync::Arc;

/// One pinned host allocation of `bytes` bytes (at least 1: the driver rejects empty ones).
///
/// It also carries an event recorded after the last asynchronous copy that reads or writes it
/// ([`PinnedAlloc::record_use`]); the host waits for it before writing the memory
/// ([`PinnedAlloc::wait_idle`]) and before freeing it.
pub(crate) struct PinnedAlloc {
    ptr: *mut u8,
    bytes: usize,
    stream: Arc<CudaStream>,
    last_use: CudaEvent,
}

// SAFETY: the allocation is plain host memory owned by this value; the event and stream are
// thread safe. Access to the bytes goes through `&self`/`&mut self` as for a `Vec<u8>`.
unsafe impl Send for PinnedAlloc {}
// SAFETY: as above (shared access only reads).
unsafe impl Sync for PinnedAlloc {}

impl PinnedAlloc {
    /// Allocates `bytes` bytes of pinned host memory (portable: usable with every device's
    /// context), contents unspecified; its copies are ordered on `stream`. A failure is
    /// [`Error::OutOfMemory`] on `host (pinned)`.
    pub(crate) fn new(stream: &Arc<CudaStream>, bytes: usize) -> Result<PinnedAlloc> {
        let oom = || Error::OutOfMemory {
            device: "host (pinned)".into(),
            requested: bytes,
            free: crate::backend::cpu::available_memory().unwrap_or(0),
        };
        if bytes > isize::MAX as usize / 2 {
            return Err(oom());
        }
        let ctx = stream.context();
        ctx.bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        let last_use = ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(|e| driver_err("creating an event for pinned memory", e))?;
        // SAFETY: a plain allocation; the memory is only read after being written.
        let ptr = match unsafe { result::malloc_host(bytes.max(1), sys::CU_MEMHOSTALLOC_PORTABLE) }
        {
            Ok(p) if !p.is_null() => p as *mut u8,
            Ok(_) => return Err(oom()),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => return Err(oom()),
            Err(e) => return Err(driver_err("allocating pinned host memory", e)),
        };
        Ok(PinnedAlloc {
            ptr,
            bytes,
            stream: stream.clone(),
            last_use,
        })
    }

    /// Usable size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Start of the memory (valid for [`PinnedAlloc::bytes`] bytes, 4096-aligned).
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Records, on its stream, that the copies queued so far may use this memory.
    pub(crate) fn record_use(&self) -> Result<()> {
        self.last_use
            .record(&self.stream)
            .map_err(|e| driver_err("recording a copy of pinned memory", e))
    }

    /// Waits until the copies recorded with [`PinnedAlloc::record_use`] have finished.
    pub(crate) fn wait_idle(&self) -> Result<()> {
        self.last_use
            .synchronize()
            .map_err(|e| driver_err("waiting for a copy of pinned memory", e))
    }
}

impl Drop for PinnedAlloc {
    fn drop(&mut self) {
        // A copy may still read or write the memory: wait for it before giving the memory back.
        let _ = self.wait_idle();
        let _ = self.stream.context().bind_to_thread();
        // SAFETY: `ptr` came from `malloc_host` and is freed once, after its last use.
        unsafe {
            let _ = result::free_host(self.ptr as *mut std::ffi::c_void);
        }
    }
}

impl std::fmt::Debug for PinnedAlloc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PinnedAlloc({} bytes, cuda:{})",
            self.bytes,
            self.stream.context().ordinal()
        )
    }
}

impl super::CudaBackend {
    /// Copies the first `len` bytes of `src` to device memory at `dst`, ordered on this device's
    /// stream. Asynchronous when `src` was made for this device (its event covers the copy, and
    /// the host waits for it before writing or freeing `src`); otherwise waits for the copy.
    pub(crate) fn copy_htod_pinned(
        &self,
        src: &PinnedAlloc,
        len: usize,
        dst: sys::CUdeviceptr,
    ) -> Result<()> {
        self.forbid_in_capture("copying pinned host memory to the device")?;
        if len == 0 {
            return Ok(());
        }
        debug_assert!(len <= src.bytes());
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        // SAFETY: `src` is pinned memory of at least `len` bytes that stays alive and unwritten
        // until the copy is done (see above); `dst` lies in a live device allocation.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                dst,
                src.ptr() as *const std::ffi::c_void,
                len,
                self.stream.cu_stream(),
            )
        }
        .result()
        .map_err(|e| driver_err("copying pinned memory to the device", e))?;
        if Arc::ptr_eq(&src.stream, &self.stream) {
            src.record_use()
        } else {
            self.stream
                .synchronize()
                .map_err(|e| driver_err("waiting for a copy of pinned memory", e))
        }
    }

    /// Copies `len` bytes of device memory at `src` into the start of `dst`, after the work
    /// queued before it, and waits for the copy.
    pub(crate) fn copy_dtoh_pinned(
        &self,
        src: sys::CUdeviceptr,
        dst: &mut PinnedAlloc,
        len: usize,
    ) -> Result<()> {
        self.forbid_in_capture("copying device data to pinned host memory")?;
        if len == 0 {
            return Ok(());
        }
        debug_assert!(len <= dst.bytes());
        // Copies still reading `dst` (to its own device) must finish before it is overwritten.
        dst.wait_idle()?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        // SAFETY: `dst` is pinned memory of at least `len` bytes, borrowed exclusively until
        // the stream synchronisation below; `src` lies in a live device allocation.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                dst.ptr() as *mut std::ffi::c_void,
                src,
                len,
                self.stream.cu_stream(),
            )
        }
        .result()
        .map_err(|e| driver_err("copying to pinned host memory", e))?;
        self.stream
            .synchronize()
            .map_err(|e| driver_err("waiting for the copy to pinned host memory", e))
    }
}
