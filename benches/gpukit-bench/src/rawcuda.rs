//! The harness's own CUDA handles, through cudarc directly: a context (the device's primary
//! context, the one gpukit uses too), a stream of its own, the harness kernels of
//! benches/bench_kernels.cu compiled by NVRTC, and the [`Bracket`] that times a span on another
//! library's stream with CUDA events.

use crate::verify::Outcome;
use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    LaunchConfig, PushKernelArg,
};
use gpukit::{Error, Result};
use std::sync::Arc;

/// The harness kernels (checkers, span marker, memory-ceiling kernels), shared with CuPy's side.
pub const BENCH_KERNELS: &str = include_str!("../../bench_kernels.cu");

/// Event flags for events that can be timed (cudarc's default disables timing).
pub const TIMED: sys::CUevent_flags = sys::CUevent_flags::CU_EVENT_DEFAULT;

/// Threads per block of the checker kernels (a multiple of 32: they reduce per warp).
pub const CHECK_THREADS: u32 = 256;

/// A cudarc error as a gpukit error, so the bench has one error type.
pub fn err(e: impl std::fmt::Display) -> Error {
    Error::Cuda(format!("raw cudarc: {e}"))
}

/// A driver return code as a result.
pub fn check_rc(what: &str, rc: sys::CUresult) -> Result<()> {
    if rc == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda(format!("raw cudarc: {what}: {rc:?}")))
    }
}

/// The harness's context, stream and compiled kernels.
pub struct RawCuda {
    /// The device's primary context (shared with gpukit's own handle of it).
    pub ctx: Arc<CudaContext>,
    /// A non-blocking stream of the harness's own.
    pub stream: Arc<CudaStream>,
    /// benches/bench_kernels.cu, compiled.
    pub module: Arc<CudaModule>,
    /// Streaming multiprocessors (sizes the checkers' and ceiling kernels' grids).
    pub sms: u32,
}

impl RawCuda {
    /// Opens device 0 and compiles the harness kernels.
    pub fn new() -> Result<RawCuda> {
        let ctx = CudaContext::new(0).map_err(err)?;
        let stream = ctx.new_stream().map_err(err)?;
        let ptx = cudarc::nvrtc::compile_ptx(BENCH_KERNELS).map_err(err)?;
        let module = ctx.load_module(ptx).map_err(err)?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(err)? as u32;
        Ok(RawCuda {
            ctx,
            stream,
            module,
            sms,
        })
    }

    /// A harness kernel by name.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        self.module.load_function(name).map_err(err)
    }

    /// Grid size for the grid-stride checkers: enough blocks to fill the device, never more
    /// than the elements need.
    pub fn check_blocks(&self, n: usize) -> u32 {
        check_blocks(n, self.sms as usize) as u32
    }

    /// Compares every element of `out` with `reference` on `stream` with the harness's checker
    /// (`kernel` is `bench_check_f64`, `_f32` or `_i32`, matching `T`).
    pub fn compare<T: cudarc::driver::DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        kernel: &str,
        out: &CudaSlice<T>,
        reference: &CudaSlice<T>,
        tol: f64,
    ) -> Result<Outcome> {
        if out.len() != reference.len() {
            return Ok(Outcome::wrong_length(out.len(), reference.len()));
        }
        let f = self.function(kernel)?;
        let mut res = stream.clone_htod(&[0u64, 0, u64::MAX, 0]).map_err(err)?;
        let n = out.len() as u64;
        let cfg = LaunchConfig {
            grid_dim: (self.check_blocks(out.len()), 1, 1),
            block_dim: (CHECK_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&f);
        b.arg(out).arg(reference).arg(&n).arg(&tol).arg(&mut res);
        // SAFETY: the parameters are (const T*, const T*, u64, double, u64*) as pushed; both
        // slices hold n elements and res holds the four counters the kernel updates.
        unsafe { b.launch(cfg) }.map_err(err)?;
        let v = stream.clone_dtoh(&res).map_err(err)?;
        Ok(Outcome::from_counters(&v, n))
    }

    /// Compares every element of the f64 buffer `out` with `value` (`bench_check_const_f64`).
    pub fn compare_const(
        &self,
        stream: &Arc<CudaStream>,
        out: &CudaSlice<f64>,
        value: f64,
    ) -> Result<Outcome> {
        let f = self.function("bench_check_const_f64")?;
        let mut res = stream.clone_htod(&[0u64, 0, u64::MAX, 0]).map_err(err)?;
        let n = out.len() as u64;
        let cfg = LaunchConfig {
            grid_dim: (self.check_blocks(out.len()), 1, 1),
            block_dim: (CHECK_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&f);
        b.arg(out).arg(&n).arg(&value).arg(&mut res);
        // SAFETY: the parameters are (const double*, u64, double, u64*) as pushed.
        unsafe { b.launch(cfg) }.map_err(err)?;
        let v = stream.clone_dtoh(&res).map_err(err)?;
        Ok(Outcome::from_counters(&v, n))
    }

    /// Fills `bytes` bytes at `ptr` with 0xFF on `stream`: NaN in every float32 and float64,
    /// -1 in every int32 (the poison of outputs).
    pub fn poison(&self, stream: &CudaStream, ptr: sys::CUdeviceptr, bytes: usize) -> Result<()> {
        self.ctx.bind_to_thread().map_err(err)?;
        // SAFETY: the caller passes a live allocation of at least `bytes` bytes.
        let rc = unsafe { sys::cuMemsetD8Async(ptr, 0xFF, bytes, stream.cu_stream()) };
        check_rc("cuMemsetD8Async", rc)
    }

    /// The device pointer of a slice (for driver calls), with cudarc's stream bookkeeping done.
    pub fn ptr<T>(&self, stream: &Arc<CudaStream>, s: &CudaSlice<T>) -> sys::CUdeviceptr {
        let (p, _sync) = s.device_ptr(stream);
        p
    }
}

/// Blocks for a grid-stride pass over `n` elements with [`CHECK_THREADS`] threads per block:
/// eight per multiprocessor, at least one, at most what `n` needs.
pub fn check_blocks(n: usize, sms: usize) -> usize {
    let need = n.div_ceil(CHECK_THREADS as usize).max(1);
    need.min(sms.max(1) * 8)
}

/// A device word the end-of-span marker writes and the harness's stream waits on.
struct Flag {
    ctx: Arc<CudaContext>,
    ptr: sys::CUdeviceptr,
}

impl Flag {
    fn new(ctx: &Arc<CudaContext>) -> Result<Flag> {
        ctx.bind_to_thread().map_err(err)?;
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: allocates 4 bytes of device memory (not from the stream-ordered pool) and
        // zeroes them; freed on drop.
        check_rc("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut ptr, 4) })?;
        check_rc("cuMemsetD32", unsafe { sys::cuMemsetD32_v2(ptr, 0, 1) })?;
        // the memset runs on the legacy stream, which the harness's non-blocking streams do not
        // wait for: finish it before the flag is used
        ctx.synchronize().map_err(err)?;
        Ok(Flag {
            ctx: ctx.clone(),
            ptr,
        })
    }
}

impl Drop for Flag {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: ptr came from cuMemAlloc and nothing uses it after the bracket is gone.
            unsafe { sys::cuMemFree_v2(self.ptr) };
        }
    }
}

/// How a [`Bracket`]'s stream waited for the end marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// `cuStreamWaitValue32` (the stream's front end waits; no kernel).
    WaitValue,
    /// `bench_spin_until`, a one-thread kernel on the harness's stream (where the driver
    /// refuses stream memory operations).
    Spin,
}

/// CUDA events around a span of work queued on another library's stream (gpukit's, or raw
/// cudarc's own), identical on both sides of the comparison (cupy_twin.py's `Bracket`):
///
/// 1. after a synchronisation, `start()` records an event on the harness's stream;
/// 2. the library queues the operation on its own stream (allocation included);
/// 3. `stop(mark)` has the library queue `bench_mark(flag, seq)` on its stream right after the
///    operation, makes the harness's stream wait until `*flag >= seq`, and records the end event
///    there; the span is the time between the two events.
///
/// gpukit exposes no way to record an event on its stream, so the marker kernel stands in for
/// it; its cost (a one-thread kernel and the wait) is the same on both sides and is measured as
/// the "span floor" (an empty operation between the two events).
pub struct Bracket {
    raw: Arc<RawCuda>,
    flag: Flag,
    seq: u32,
    spin: CudaFunction,
    wait: Wait,
    start: Option<CudaEvent>,
}

impl Bracket {
    /// A bracket on the harness's stream of `raw`.
    pub fn new(raw: &Arc<RawCuda>) -> Result<Bracket> {
        Ok(Bracket {
            flag: Flag::new(&raw.ctx)?,
            seq: 0,
            spin: raw.function("bench_spin_until")?,
            wait: Wait::WaitValue,
            start: None,
            raw: raw.clone(),
        })
    }

    /// How the stream waits for the marker (the last span's).
    pub fn wait_kind(&self) -> Wait {
        self.wait
    }

    /// Records the start event (call with the device idle, right before the operation).
    pub fn start(&mut self) -> Result<()> {
        self.start = Some(self.raw.stream.record_event(Some(TIMED)).map_err(err)?);
        Ok(())
    }

    /// Ends the span: `mark(flag, seq)` must queue `bench_mark(flag, seq)` on the library's
    /// stream. Returns the span in milliseconds (waits for its end).
    pub fn stop(&mut self, mark: &mut dyn FnMut(u64, u32) -> Result<()>) -> Result<f64> {
        let start = self
            .start
            .take()
            .ok_or_else(|| Error::Other("Bracket::stop without start".into()))?;
        self.seq = self.seq.wrapping_add(1).max(1);
        mark(self.flag.ptr, self.seq)?;
        let s = &self.raw.stream;
        if self.wait == Wait::WaitValue {
            self.raw.ctx.bind_to_thread().map_err(err)?;
            // SAFETY: the flag is a live 4-byte device allocation of this context.
            let rc = unsafe {
                sys::cuStreamWaitValue32_v2(
                    s.cu_stream(),
                    self.flag.ptr,
                    self.seq,
                    sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
                )
            };
            if rc != sys::CUresult::CUDA_SUCCESS {
                eprintln!(
                    "bench: cuStreamWaitValue32 refused ({rc:?}); spans wait with a spin kernel"
                );
                self.wait = Wait::Spin;
            }
        }
        if self.wait == Wait::Spin {
            let cfg = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = s.launch_builder(&self.spin);
            b.arg(&self.flag.ptr).arg(&self.seq);
            // SAFETY: the parameters are (u64 flag address, u32 value) as pushed.
            unsafe { b.launch(cfg) }.map_err(err)?;
        }
        let end = s.record_event(Some(TIMED)).map_err(err)?;
        self.raw.wait_for(&end, SPAN_LIMIT)?;
        Ok(start.elapsed_ms(&end).map_err(err)? as f64)
    }
}

/// How long a span's end may take before the harness gives up (every workload takes well under
/// a second; a marker that never runs must not hang the benchmark).
pub const SPAN_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

impl RawCuda {
    /// Waits until `event` has completed, polling, and fails after `limit` with an explanation.
    pub fn wait_for(&self, event: &CudaEvent, limit: std::time::Duration) -> Result<()> {
        self.ctx.bind_to_thread().map_err(err)?;
        let t0 = std::time::Instant::now();
        loop {
            if event.try_is_complete().map_err(err)? {
                return Ok(());
            }
            let waited = t0.elapsed();
            if waited > limit {
                return Err(Error::Cuda(format!(
                    "the end of a timed span was not reached within {} s: the end marker on the \
                     library's stream never ran, or the harness's stream never saw its flag",
                    limit.as_secs()
                )));
            }
            if waited < std::time::Duration::from_millis(1) {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_blocks_fill_the_device_but_not_more() {
        assert_eq!(check_blocks(0, 132), 1);
        assert_eq!(check_blocks(1, 132), 1);
        assert_eq!(check_blocks(257, 132), 2);
        assert_eq!(check_blocks(1 << 28, 132), 132 * 8);
        assert_eq!(check_blocks(1 << 28, 0), 8);
    }

    /// The harness kernels compile with NVRTC (runs wherever libnvrtc loads; a GPU is not
    /// needed). Where NVRTC cannot be loaded at all the test says so and checks nothing else.
    #[test]
    fn bench_kernels_compile_with_nvrtc() {
        // SAFETY: only looks for the library.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            eprintln!("NVRTC not loadable here: set LD_LIBRARY_PATH to its lib folder");
            return;
        }
        let ptx = cudarc::nvrtc::compile_ptx(BENCH_KERNELS).expect("bench_kernels.cu compiles");
        let text = ptx.to_src();
        for k in [
            "bench_check_f64",
            "bench_check_f32",
            "bench_check_i32",
            "bench_check_const_f64",
            "bench_mark",
            "bench_spin_until",
            "bench_copy_v4_u1",
            "bench_copy_v4_u8",
            "bench_write_v4_u4",
            "bench_read_v4_u2",
        ] {
            assert!(
                text.contains(&format!(".entry {k}(")),
                "{k} missing from the PTX"
            );
        }
        // 128-bit loads and stores in the ceiling kernels
        assert!(text.contains("ld.global.nc.v4.u32") || text.contains("ld.global.v4.u32"));
        assert!(text.contains("st.global.v4.u32"));
    }
}
