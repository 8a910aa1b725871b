//! Graphs: capture a sequence of kernel launches and array operations once, replay it cheaply.
//!
//! ```no_run
//! use gpukit::prelude::*;
//!
//! #[kernel]
//! fn scale(a: &mut [f32], s: f32) {
//!     let i = grid(1);
//!     if i < a.len() { a[i] *= s; }
//! }
//!
//! let mut a = Array::<f32>::ones(1024)?;            // arrays are created before the capture
//! let mut g = Graph::capture(|| {
//!     launch!(scale[4, 256](&mut a, 2.0))?;         // recorded, not run
//!     a.add_in_place(1.0)?;
//!     Ok(())
//! })?;
//! g.launch()?;                                       // runs the two steps: a = 3
//! g.launch_n(10)?;                                   // ten more replays, one call each
//! g.update(|| { launch!(scale[4, 256](&mut a, 0.5))?; a.add_in_place(1.0) })?; // new scalars
//! g.launch()?;
//! println!("{}", a);                                 // reading waits for the replays
//! # Ok::<(), gpukit::Error>(())
//! ```
//!
//! **What a capture records.** On a CUDA device, [`Graph::capture`] uses CUDA stream capture:
//! the work the closure queues on the device's stream becomes a CUDA graph, instantiated once; a
//! replay is one `cuGraphLaunch`, whatever the number of kernels in it. On the CPU the
//! operations are recorded as closures over the arrays' buffers and replayed in order. On both,
//! the closure runs once, at capture, and its work runs only at [`Graph::launch`]: a capture
//! changes no data.
//!
//! **What cannot be captured.** Anything that allocates (a new array, an operator that returns
//! one such as `&a + &b`, a reduction's scratch), waits for the device (`synchronize`), or
//! copies between host and device (`to_host`, `to_vec`, displaying an array, host arrays as
//! kernel arguments) returns [`Error::GraphCapture`](crate::Error::GraphCapture) ("... cannot
//! run inside a graph capture: ...") instead of reaching the driver. When the closure returns an
//! error (or panics) the capture is ended and thrown away and the device works as before. Use
//! in-place operations (`a.add_in_place(..)`, `a.fill(..)`, `a *= 2.0`) and kernels writing
//! `&mut` arrays inside a capture; allocate before it; read results after a launch.
//!
//! **Scalars and updates.** A replay repeats the captured work with the captured arguments. To
//! change scalars (or the arrays passed), call [`Graph::update`] with the same steps and new
//! values: on CUDA the closure is captured again and, where the driver allows (the same kernels
//! in the same order, only parameters changed), the executable graph is updated in place with
//! `cuGraphExecUpdate`, which is much cheaper than instantiating it; otherwise it is
//! instantiated again. [`GraphUpdate`] says which happened.
//!
//! **Errors inside kernels.** An out-of-bounds index in a captured checked kernel is reported
//! as after a normal launch: by the next synchronisation of the device after the replay (CUDA),
//! or by the replay itself (CPU). Each graph has bounds-check records of its own.
//!
//! **Lifetimes.** A graph keeps the buffers it uses: an array dropped while a graph that uses it
//! lives hands its buffer to the graph, which frees it when dropped, so a replay never writes
//! freed memory. (An array moved out of gpukit, e.g. by `into_cudarc`, is not kept.)
//!
//! **Scope.** A capture records the work of one device (the default device, or the one given to
//! [`Graph::capture_on`]) started from the capturing thread; work on other devices runs at once.

mod cuda;
pub(crate) mod keep;

pub(crate) use cuda::note_params;

use crate::backend::cpu_capture::{self, CpuOp};
use crate::backend::cuda::CudaBackend;
use crate::device::{default_device, Device};
use crate::error::Result;
use std::cell::RefCell;
use std::sync::Arc;

/// How [`Graph::update`] applied the new capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphUpdate {
    /// The executable graph was updated in place (CUDA: `cuGraphExecUpdate` accepted the new
    /// parameters; the CPU backend always updates in place).
    InPlace,
    /// The steps changed in a way the driver cannot update (other kernels, another order, other
    /// launch sizes in some cases): the new graph was instantiated.
    Reinstantiated,
}

/// A captured sequence of kernel launches and array operations on one device, replayed by
/// [`Graph::launch`]. See the [module documentation](self) for what can be captured.
pub struct Graph {
    inner: Inner,
    keeper: Arc<keep::Keeper>,
}

enum Inner {
    Cpu(RefCell<Vec<CpuOp>>),
    Cuda(cuda::CudaGraph),
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Graph({} step(s) on {})", self.len(), self.device())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        keep::unregister(&self.keeper);
    }
}

impl Graph {
    /// Captures the work `f` starts on the default device (see [`Graph::capture_on`]).
    pub fn capture(f: impl FnOnce() -> Result<()>) -> Result<Graph> {
        Graph::capture_on(&default_device(), f)
    }

    /// Captures the work `f` starts on `device`: `f` runs once, its kernel launches and array
    /// operations on `device` are recorded and not run. Returns `f`'s error, or
    /// [`Error::GraphCapture`](crate::Error::GraphCapture) when `f` tried something that cannot
    /// be captured (and did not hand that error back); the device is usable afterwards either way.
    pub fn capture_on(device: &Device, f: impl FnOnce() -> Result<()>) -> Result<Graph> {
        let keeper = keep::register();
        let captured = {
            let _noting = keep::Noting::begin(keeper.clone());
            match device {
                Device::Cpu => capture_cpu(f).map(|ops| Inner::Cpu(RefCell::new(ops))),
                Device::Cuda(n) => CudaBackend::get(*n)
                    .and_then(|backend| cuda::CudaGraph::capture(backend, f))
                    .map(Inner::Cuda),
            }
        };
        match captured {
            Ok(inner) => Ok(Graph { inner, keeper }),
            Err(e) => {
                keep::unregister(&keeper);
                Err(e)
            }
        }
    }

    /// Replays the graph once. On a CUDA device the replay is queued on the device's stream and
    /// this returns at once; errors raised by its kernels come back from the device's next
    /// synchronisation. On the CPU the replay runs to completion and returns the first error.
    #[inline]
    pub fn launch(&self) -> Result<()> {
        match &self.inner {
            Inner::Cuda(g) => g.launch(),
            Inner::Cpu(ops) => {
                cpu_capture::forbid_in_capture("launching a graph")?;
                let mut ops = ops.borrow_mut();
                ops.iter_mut().try_for_each(|op| op())
            }
        }
    }

    /// Replays the graph `n` times (stops at the first launch that fails).
    pub fn launch_n(&self, n: usize) -> Result<()> {
        (0..n).try_for_each(|_| self.launch())
    }

    /// Captures `f` again (the same steps with new scalars, or other arrays) and makes the
    /// graph replay that from now on. On CUDA the executable graph is updated in place where
    /// the driver allows it (`cuGraphExecUpdate`), else instantiated again; on the CPU the new
    /// recording replaces the old one. When `f` fails the graph stays as it was.
    pub fn update(&mut self, f: impl FnOnce() -> Result<()>) -> Result<GraphUpdate> {
        // The buffers of the new capture are added to those of the old one (kept, not replaced:
        // a keeper never lets go of a buffer a replay may still be using).
        let _noting = keep::Noting::begin(self.keeper.clone());
        match &mut self.inner {
            Inner::Cpu(ops) => {
                *ops.get_mut() = capture_cpu(f)?;
                Ok(GraphUpdate::InPlace)
            }
            Inner::Cuda(g) => g.update(f),
        }
    }

    /// The device the graph runs on.
    pub fn device(&self) -> Device {
        match &self.inner {
            Inner::Cpu(_) => Device::Cpu,
            Inner::Cuda(g) => g.backend().device(),
        }
    }

    /// The number of recorded steps: graph nodes (kernels, copies, memsets) on CUDA, operations
    /// on the CPU.
    pub fn len(&self) -> usize {
        match &self.inner {
            Inner::Cpu(ops) => ops.borrow().len(),
            Inner::Cuda(g) => g.nodes(),
        }
    }

    /// Whether the graph records nothing (a launch then does nothing).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many buffers of dropped arrays the graph keeps alive (see the module documentation).
    pub fn kept_buffers(&self) -> usize {
        self.keeper.kept()
    }
}

/// What the last expression of a captured cell may be (the `%%graph` and `%%timeit --graph`
/// magics make it the capture closure's result): `()` or a `gpukit::Result<()>` such as a
/// `launch!(..)` without `;`.
#[diagnostic::on_unimplemented(
    message = "the last expression of a graph cell must be `()` or `gpukit::Result<()>`, not `{Self}`",
    note = "end the line with `;` (or `?;` for a Result)"
)]
pub trait GraphStep {
    /// The step's outcome.
    fn into_step(self) -> Result<()>;
}

impl GraphStep for () {
    fn into_step(self) -> Result<()> {
        Ok(())
    }
}

impl GraphStep for Result<()> {
    fn into_step(self) -> Result<()> {
        self
    }
}

/// Records the CPU operations `f` starts on this thread.
fn capture_cpu(f: impl FnOnce() -> Result<()>) -> Result<Vec<CpuOp>> {
    cpu_capture::begin()?;
    // Ends the capture also when `f` panics.
    struct End;
    impl Drop for End {
        fn drop(&mut self) {
            if cpu_capture::is_capturing() {
                drop(cpu_capture::end());
            }
        }
    }
    let end = End;
    let result = f();
    let recording = cpu_capture::end();
    drop(end);
    result?;
    Ok(recording)
}
