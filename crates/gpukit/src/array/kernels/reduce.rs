//! The built-in reduction: each thread folds several packs into a register, blocks combine
//! with warp shuffles, and the last block to finish combines the blocks' partials (one launch).

use super::table::*;
use super::{MAX_PARTIALS, RED_BLOCKS_PER_SM, RED_UNROLL, THREADS};
use crate::array::op::ReduceOp;
use crate::backend::cuda::CudaBackend;
use crate::element::Element;
use crate::error::Result;
use crate::kernel::cuda::PerDevice;
use cudarc::driver::{CudaSlice, DeviceRepr};
use std::sync::OnceLock;

/// A device's reduction scratch: the blocks' partials and the count of finished blocks (zero
/// between reductions: the last block resets it). Reductions on one device share it safely
/// because they run one after another on the device's one stream.
pub(super) struct Scratch {
    partials: u64,
    counter: u64,
    _buffers: (CudaSlice<u64>, CudaSlice<u32>),
}

pub(super) static SCRATCH: PerDevice<OnceLock<Scratch>> = PerDevice::new();

pub(super) fn scratch(backend: &CudaBackend) -> Result<&'static Scratch> {
    let cell = SCRATCH.get(backend);
    if let Some(s) = cell.get() {
        return Ok(s);
    }
    // SAFETY: a block writes its partial before the last block reads it.
    let mut partials = unsafe { backend.alloc::<u64>(MAX_PARTIALS as usize)? };
    let mut counter = backend.alloc_zeros::<u32>(1)?;
    let s = Scratch {
        partials: ptr_mut(backend, &mut partials),
        counter: ptr_mut(backend, &mut counter),
        _buffers: (partials, counter),
    };
    let _ = cell.set(s);
    Ok(cell.get().expect("set just above"))
}

/// Reduces the first `n` elements of `a` with `op` (starting from `identity`) to one value,
/// which is copied to the host (waiting for the stream).
pub(crate) fn reduce<T: Element + DeviceRepr>(
    backend: &CudaBackend,
    op: ReduceOp,
    a: &CudaSlice<T>,
    n: usize,
    identity: T,
) -> Result<T> {
    let f = function(backend, Builtin::Reduce(op, T::DTYPE))?;
    let cap = (backend.properties().multiprocessors.max(1) * RED_BLOCKS_PER_SM).min(MAX_PARTIALS);
    let blocks = n
        .div_ceil(per_pack::<T>())
        .div_ceil(THREADS as usize * RED_UNROLL)
        .clamp(1, cap as usize) as u32;
    let scratch = scratch(backend)?;
    // SAFETY: written by the kernel below (thread 0 of the last block, or of the only one).
    let mut out = unsafe { backend.alloc::<T>(1)? };
    let params = [
        ptr(backend, a),
        n as u64,
        scratch.partials,
        scratch.counter,
        ptr_mut(backend, &mut out),
        bits(identity),
    ];
    launch(backend, f, blocks, &params)?;
    Ok(backend.download(&out, 1)?[0])
}
