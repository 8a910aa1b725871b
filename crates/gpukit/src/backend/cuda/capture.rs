//! Stream capture: recording the work queued on a device's stream into a CUDA graph instead of
//! running it, and the graph objects the driver makes of it.
//!
//! While a capture is on, [`CudaBackend::forbid_in_capture`] turns everything that would wait for
//! the device, copy between host and device, or allocate into an [`Error::GraphCapture`] before
//! the driver sees it (the driver would otherwise invalidate the capture, and some of these calls
//! can never be part of a graph). The capture uses the thread-local mode, so other threads of the
//! process keep working; gpukit's own checks also hold for them, since they share the stream.

use super::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUgraph, CUgraphExec, CUresult};
use std::sync::atomic::Ordering;

impl CudaBackend {
    /// Whether the device's stream is being captured into a graph.
    #[inline]
    pub(crate) fn is_capturing(&self) -> bool {
        self.capturing.load(Ordering::Relaxed)
    }

    /// `Ok` unless a capture is on; then an [`Error::GraphCapture`] saying that `what` cannot be
    /// part of a graph.
    #[inline]
    pub(crate) fn forbid_in_capture(&self, what: &str) -> Result<()> {
        if self.is_capturing() {
            return Err(capture_error(what, self.ordinal()));
        }
        Ok(())
    }

    /// Starts capturing the device's stream (thread-local mode). Work queued from now on is
    /// recorded, not run, until [`CudaBackend::end_capture`].
    pub(crate) fn begin_capture(&self) -> Result<()> {
        self.ensure_usable()?;
        if self
            .capturing
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return Err(Error::GraphCapture {
                what: "capturing a graph".into(),
                reason: format!(
                    "cuda:{} is already capturing one (captures do not nest)",
                    self.ordinal()
                ),
            });
        }
        let begun = self.ctx.bind_to_thread().and_then(|_| unsafe {
            // SAFETY: the stream belongs to this backend's live context.
            cudarc::driver::result::stream::begin_capture(
                self.stream.cu_stream(),
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        });
        if let Err(e) = begun {
            self.capturing.store(false, Ordering::Release);
            return Err(self.fault_err("starting a stream capture", e));
        }
        Ok(())
    }

    /// Runs `f` (which makes driver calls that are not stream work, such as loading a module)
    /// with this thread's capture mode relaxed while the stream is captured: in the thread-local
    /// mode the driver refuses such calls (and invalidates the capture), in the relaxed mode it
    /// allows them. Without a capture, just runs `f`.
    pub(crate) fn outside_capture_rules<R>(&self, f: impl FnOnce() -> R) -> R {
        if !self.is_capturing() {
            return f();
        }
        let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: exchanges this thread's capture mode; the previous one is restored below.
        let swapped =
            unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) } == CUresult::CUDA_SUCCESS;
        let r = f();
        if swapped {
            // SAFETY: puts back the mode the first exchange returned.
            unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) };
        }
        r
    }

    /// Ends the capture and returns the recorded graph (the caller owns it: see [`destroy_graph`]).
    /// The stream is out of capture mode afterwards, also when this returns an error (a capture
    /// the driver invalidated).
    pub(crate) fn end_capture(&self) -> Result<CUgraph> {
        // Not `bind_to_thread`: it first reports (and clears) an error cudarc recorded earlier,
        // which would leave the stream capturing.
        let ended = self.bind_plain().and_then(|_| unsafe {
            // SAFETY: the stream belongs to this backend's live context.
            cudarc::driver::result::stream::end_capture(self.stream.cu_stream())
        });
        self.capturing.store(false, Ordering::Release);
        match ended {
            Ok(g) if !g.is_null() => Ok(g),
            Ok(_) => Err(Error::Cuda(
                "ending a stream capture: the driver returned no graph".into(),
            )),
            Err(e) if e.0 == CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED => {
                Err(Error::GraphCapture {
                    what: "an operation in the captured code".into(),
                    reason: format!(
                        "the driver invalidated the capture ({e}); the stream works again, \
                         nothing of the capture was run"
                    ),
                })
            }
            Err(e) => Err(self.fault_err("ending a stream capture", e)),
        }
    }

    /// Turns `graph` into an executable graph for this device.
    pub(crate) fn instantiate_graph(&self, graph: CUgraph) -> Result<CUgraphExec> {
        self.ensure_usable()?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        // SAFETY: `graph` is a live graph of this context.
        unsafe {
            cudarc::driver::result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0))
        }
        .map_err(|e| self.fault_err("instantiating a CUDA graph", e))
    }

    /// Updates `exec` in place to run `graph` (same topology, new parameters): `Ok(true)`, or
    /// `Ok(false)` when the driver cannot (the caller instantiates `graph` instead).
    pub(crate) fn update_graph(&self, exec: CUgraphExec, graph: CUgraph) -> Result<bool> {
        self.ensure_usable()?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        // SAFETY: zero is a valid bit pattern of this plain C struct (an enum with a 0 variant
        // and two null node handles).
        let mut info: sys::CUgraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
        // SAFETY: both handles are live objects of this context; `info` is written by the driver.
        let r = unsafe { sys::cuGraphExecUpdate_v2(exec, graph, &mut info) };
        match r {
            CUresult::CUDA_SUCCESS => Ok(true),
            CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE => Ok(false),
            other => {
                Err(self.fault_err("updating a CUDA graph", cudarc::driver::DriverError(other)))
            }
        }
    }

    /// Queues `exec` on the device's stream (the context must be current on this thread).
    #[inline]
    pub(crate) fn launch_graph(&self, exec: CUgraphExec) -> Result<()> {
        self.ensure_usable()?;
        self.forbid_in_capture("launching a graph")?;
        // SAFETY: `exec` is a live executable graph of this context, launched on its stream.
        unsafe { cudarc::driver::result::graph::launch(exec, self.stream.cu_stream()) }
            .map_err(|e| self.fault_err("launching a CUDA graph", e))
    }
}

impl CudaBackend {
    /// Makes this backend's context current on this thread, without cudarc's error check.
    fn bind_plain(&self) -> std::result::Result<(), cudarc::driver::DriverError> {
        use cudarc::driver::result::ctx;
        let want = self.ctx.cu_ctx();
        match ctx::get_current()? {
            Some(current) if current == want => Ok(()),
            // SAFETY: the context is alive (the backend holds it) and belongs to this process.
            _ => unsafe { ctx::set_current(want) },
        }
    }
}

/// The number of nodes of `graph`.
pub(crate) fn graph_nodes(graph: CUgraph) -> Result<usize> {
    let mut n: usize = 0;
    // SAFETY: a null node array asks for the count only.
    unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut n) }
        .result()
        .map_err(|e| driver_err("counting the nodes of a CUDA graph", e))?;
    Ok(n)
}

/// Destroys a graph made by [`CudaBackend::end_capture`] (null: nothing to do).
pub(crate) fn destroy_graph(graph: CUgraph) {
    if !graph.is_null() {
        // SAFETY: the caller owns the graph and drops its last handle here.
        let _ = unsafe { cudarc::driver::result::graph::destroy(graph) };
    }
}

/// Destroys an executable graph (null: nothing to do).
pub(crate) fn destroy_exec(exec: CUgraphExec) {
    if !exec.is_null() {
        // SAFETY: the caller owns the executable graph and drops its last handle here.
        let _ = unsafe { cudarc::driver::result::graph::exec_destroy(exec) };
    }
}

/// The error of `what` during a capture of `cuda:ordinal`.
#[cold]
fn capture_error(what: &str, ordinal: usize) -> Error {
    Error::GraphCapture {
        what: what.to_string(),
        reason: format!(
            "cuda:{ordinal}'s stream is being captured into a graph, which only records device \
             work (it runs at the graph's launch): allocate arrays before `Graph::capture`, use \
             in-place operations and kernels inside it, and read results after `launch()`"
        ),
    }
}
