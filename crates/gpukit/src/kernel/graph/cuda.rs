//! Graphs on a CUDA device: stream capture, instantiation, in-place updates, replays.
//!
//! A capture records the work the closure queues on the device's stream (kernels, array
//! operations) into a `CUgraph`; instantiating it gives the `CUgraphExec` that a replay launches
//! with one `cuGraphLaunch`. Checked kernels captured into the graph use the graph's own
//! bounds-check records ([`bounds::GraphRecords`]); each replay hands them to the device's next
//! check. An update captures the closure again and, where only parameters changed (scalars,
//! other buffers of the same kind), rewrites the executable graph in place with
//! `cuGraphExecUpdate` instead of instantiating it again.

use super::super::{bounds, cuda as launch_path, profile};
use super::GraphUpdate;
use crate::backend::cuda::{destroy_exec, destroy_graph, graph_nodes, CudaBackend};
use crate::error::Result;
use cudarc::driver::sys::{CUgraph, CUgraphExec};
use std::sync::Arc;

/// Notes the parameter values of a launch being captured (called by the launch path): buffer
/// addresses are among them.
pub(crate) fn note_params(values: &[u64]) {
    super::keep::note(values);
}

/// A captured graph (destroyed on drop unless taken).
struct OwnedGraph(CUgraph);

impl Drop for OwnedGraph {
    fn drop(&mut self) {
        destroy_graph(std::mem::replace(&mut self.0, std::ptr::null_mut()));
    }
}

/// Ends a capture that did not end normally (an early return or a panic of the closure), so the
/// stream is usable again, and always detaches the graph's records and noted parameters.
struct CaptureGuard<'a> {
    backend: &'a CudaBackend,
}

impl Drop for CaptureGuard<'_> {
    fn drop(&mut self) {
        if self.backend.is_capturing() {
            if let Ok(g) = self.backend.end_capture() {
                destroy_graph(g);
            }
        }
        bounds::end_graph_records(self.backend);
        super::keep::release_deferred();
    }
}

/// Captures what `f` queues on `backend`'s stream.
fn record(
    backend: &CudaBackend,
    records: &Arc<bounds::GraphRecords>,
    f: impl FnOnce() -> Result<()>,
) -> Result<OwnedGraph> {
    backend.begin_capture()?;
    let guard = CaptureGuard { backend };
    let previous = bounds::begin_graph_records(backend, records.clone());
    let result = f();
    let ended = backend.end_capture().map(OwnedGraph);
    drop(guard);
    let outcome = match (result, ended) {
        (Ok(()), Ok(graph)) => Ok(graph),
        // The closure's own error first: it says what went wrong in the user's code.
        (Err(e), _) | (Ok(()), Err(e)) => Err(e),
    };
    if outcome.is_err() {
        bounds::restore_graph_records(records, previous);
    }
    outcome
}

/// An instantiated graph of one CUDA device.
pub(super) struct CudaGraph {
    backend: Arc<CudaBackend>,
    graph: OwnedGraph,
    /// Null when the graph has no nodes (nothing to launch).
    exec: CUgraphExec,
    records: Arc<bounds::GraphRecords>,
    nodes: usize,
}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        // Replays still queued finish first: the driver defers the destruction of a launched
        // executable graph until its work is done.
        if !self.backend.is_lost() {
            destroy_exec(std::mem::replace(&mut self.exec, std::ptr::null_mut()));
        } else {
            // The context is gone; its handles must not be touched.
            self.graph.0 = std::ptr::null_mut();
        }
    }
}

impl CudaGraph {
    /// Captures `f` on `backend` and instantiates the graph.
    pub(super) fn capture(
        backend: Arc<CudaBackend>,
        f: impl FnOnce() -> Result<()>,
    ) -> Result<CudaGraph> {
        backend.forbid_in_capture("capturing a graph")?;
        // Allocated before the capture: allocation cannot be captured.
        let records = bounds::GraphRecords::new(&backend)?;
        let graph = record(&backend, &records, f)?;
        let nodes = graph_nodes(graph.0)?;
        let exec = if nodes == 0 {
            std::ptr::null_mut()
        } else {
            backend.instantiate_graph(graph.0)?
        };
        Ok(CudaGraph {
            backend,
            graph,
            exec,
            records,
            nodes,
        })
    }

    /// The device's backend.
    pub(super) fn backend(&self) -> &Arc<CudaBackend> {
        &self.backend
    }

    /// Nodes (kernels, copies, memsets) in the graph.
    pub(super) fn nodes(&self) -> usize {
        self.nodes
    }

    /// Queues one replay on the device's stream.
    #[inline]
    pub(super) fn launch(&self) -> Result<()> {
        if self.exec.is_null() {
            return self.backend.forbid_in_capture("launching a graph");
        }
        let events = profile::cuda_begin(&self.backend)?;
        let trusted = launch_path::make_current(&self.backend)?;
        let mut launched = self.backend.launch_graph(self.exec);
        if trusted && launched.is_err() && !self.backend.is_lost() {
            // Perhaps another library changed this thread's context: bind for real, retry once.
            launch_path::bind(&self.backend)?;
            launched = self.backend.launch_graph(self.exec);
        }
        launched?;
        bounds::graph_launched(&self.backend, &self.records);
        match events {
            None => Ok(()),
            Some(start) => profile::cuda_end(start, &self.backend, "graph"),
        }
    }

    /// Captures `f` again and updates the executable graph in place where the driver allows it
    /// (same nodes, new parameters), else instantiates the new graph.
    pub(super) fn update(&mut self, f: impl FnOnce() -> Result<()>) -> Result<GraphUpdate> {
        self.backend.forbid_in_capture("updating a graph")?;
        let graph = record(&self.backend, &self.records, f)?;
        let nodes = graph_nodes(graph.0)?;
        let in_place = !self.exec.is_null()
            && nodes == self.nodes
            && self.backend.update_graph(self.exec, graph.0)?;
        let how = if in_place {
            GraphUpdate::InPlace
        } else {
            let exec = if nodes == 0 {
                std::ptr::null_mut()
            } else {
                self.backend.instantiate_graph(graph.0)?
            };
            destroy_exec(std::mem::replace(&mut self.exec, exec));
            GraphUpdate::Reinstantiated
        };
        self.graph = graph;
        self.nodes = nodes;
        Ok(how)
    }
}
