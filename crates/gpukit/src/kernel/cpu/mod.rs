//! The CPU executor: runs a kernel's CPU twin natively, blocks in parallel on all cores.
//!
//! Each block is one rayon task with its own zeroed shared memory. A kernel without barriers runs
//! its threads one after the other; a kernel with barriers runs them as coroutines that meet at
//! `sync_threads()` (see [`ctx`]). The launch returns when every block has finished, with the
//! first out-of-bounds index (or panic of the twin) as its error.

mod atomics;
mod ctx;
mod memory;

pub use atomics::{
    atomic_add, atomic_cas, atomic_exch, atomic_max, atomic_min, atomic_sub, AtomicElement,
};
pub use ctx::{BlockCtx, ThreadCtx};
pub use memory::{CpuArgs, Slice, SliceMut, View, ViewMut};

pub(crate) use memory::CpuArg;

use super::config::{Dim3, LaunchConfig};
use super::info::KernelInfo;
use crate::error::{Error, OutOfBounds, Result};
use ctx::{Failure, LaunchState};
use rayon::prelude::*;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Shared-memory buffer of this worker thread, reused by every block it runs.
    static SHARED: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
}

/// Runs `info`'s CPU twin over the whole grid and returns its first error.
pub(crate) fn run(info: &KernelInfo, config: &LaunchConfig, args: Vec<CpuArg>) -> Result<()> {
    let state = LaunchState::default();
    let args = CpuArgs::new(info.name, args);
    let (grid, block) = (config.grid, config.block);
    let total = grid.volume() as usize;
    let shared_words = info.shared_bytes.div_ceil(8);
    (0..total).into_par_iter().for_each(|b| {
        if state.aborted() {
            return;
        }
        let (gx, gy) = (grid.x as usize, grid.y as usize);
        let block_idx = Dim3::new(
            (b % gx) as u32,
            ((b / gx) % gy) as u32,
            (b / (gx * gy)) as u32,
        );
        let mut shared = SHARED.with(Cell::take);
        shared.clear();
        shared.resize(shared_words, 0);
        // SAFETY: `shared` and `state` outlive the block.
        let ctx = unsafe {
            BlockCtx::new(
                block_idx,
                block,
                grid,
                shared.as_mut_ptr() as *mut u8,
                shared_words * 8,
                &state,
            )
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| (info.cpu)(&ctx, &args)));
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            state.report(Failure::Panic {
                message,
                thread: ctx.current_thread(),
                block: block_idx,
            });
        }
        SHARED.with(|s| s.set(shared));
    });
    match state.take() {
        None => Ok(()),
        Some(f) => Err(failure_to_error(info, f)),
    }
}

/// The array's name for bounds errors.
pub(crate) fn array_name(names: &[&str], id: usize) -> String {
    names
        .get(id)
        .map_or_else(|| format!("array #{id}"), |n| n.to_string())
}

fn failure_to_error(info: &KernelInfo, f: Failure) -> Error {
    match f {
        Failure::OutOfBounds {
            array,
            index,
            len,
            axis,
            thread,
            block,
        } => OutOfBounds {
            kernel: info.name.to_string(),
            array: array_name(info.array_names, array),
            index: index as u64,
            len: len as u64,
            axis: axis as u32,
            thread: [thread.x, thread.y, thread.z],
            block: [block.x, block.y, block.z],
        }
        .into(),
        Failure::Panic {
            message,
            thread,
            block,
        } => Error::Other(format!(
            "kernel `{}` panicked on the CPU at thread {thread} of block {block}: {message}",
            info.name
        )),
        Failure::Internal(message) => Error::Other(format!("kernel `{}`: {message}", info.name)),
    }
}
