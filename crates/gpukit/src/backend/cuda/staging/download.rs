//! Device -> host: the copy engine fills the pinned buffers ahead, and the host drains each
//! one as soon as its chunk has landed.

use super::config::config;
use super::host_copy::par_copy_streaming;
use super::schedule::{download_steps, plan, run, Chunk, Engine};
use crate::backend::cuda::pinned::PinnedAlloc;
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys;

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

impl CudaBackend {
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
