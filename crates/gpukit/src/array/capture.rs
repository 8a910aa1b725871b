//! What the array layer does for graphs (`kernel::graph`): records CPU operations started during
//! a capture, and hands the buffer of a dropped array to a live graph that uses it.

use super::{Array, Storage};
use crate::backend::cpu_capture;
use crate::element::Element;
use crate::error::Result;
use crate::kernel::graph::keep;

/// Records a CPU operation on the buffers at `buffers` into this thread's capture (the caller
/// checked that one is on).
pub(super) fn record_cpu(buffers: &[usize], op: impl FnMut() -> Result<()> + 'static) {
    let addresses: Vec<u64> = buffers.iter().map(|&p| p as u64).collect();
    keep::note(&addresses);
    if let Some(mut op) = cpu_capture::record(Box::new(op)) {
        // Not capturing after all (cannot happen: the caller checked on this thread); run it.
        let _ = op();
    }
}

impl<T: Element> Array<T> {
    /// Where a graph may have captured this array's buffer: its start address.
    fn buffer_address(&self) -> u64 {
        match &self.storage {
            Storage::Cpu(v) => v.as_ptr() as u64,
            Storage::Cuda { backend, slice } => {
                use cudarc::driver::DevicePtr;
                slice.device_ptr(backend.stream()).0
            }
        }
    }

    /// Called on drop: when a live graph uses this array's buffer, moves the buffer into the
    /// graph (freed when the graph is), leaving an empty CPU buffer behind; when the array's
    /// device is being captured, frees the buffer after the capture (the driver would capture
    /// the free).
    pub(super) fn give_buffer_to_graph(&mut self) {
        if !keep::any_live() {
            return;
        }
        let take = |s: &mut Storage<T>| Box::new(std::mem::replace(s, Storage::Cpu(Vec::new())));
        if let Some(keeper) = keep::user_of(self.buffer_address()) {
            keeper.keep(take(&mut self.storage));
        } else if matches!(&self.storage, Storage::Cuda { backend, .. } if backend.is_capturing()) {
            keep::defer(take(&mut self.storage));
        }
    }
}
