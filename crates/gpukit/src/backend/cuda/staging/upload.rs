//! Host -> device: the host fills one pinned buffer while the copy engine empties another.

use super::config::config;
use super::host_copy::par_copy;
use super::schedule::{plan, run, upload_steps, Chunk, Engine};
use crate::backend::cuda::pinned::PinnedAlloc;
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys;

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

impl CudaBackend {
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
}
