//! How large a temporary block (a distance matrix, a membership matrix) may be: models that
//! would need more process their rows in batches that fit.

use gpukit::prelude::*;

/// A block's default cap on the CPU backend.
pub const CPU_BLOCK_BYTES: usize = 256 << 20;

/// A block's default cap on a GPU: 1 GiB, or a quarter of the memory free now
/// (the driver's free memory plus gpukit's idle pool), whichever is smaller.
pub const GPU_BLOCK_BYTES: usize = 1 << 30;

/// The bytes one temporary block (a query batch's distances, a k-means chunk's membership)
/// may take on `device` (see [`GPU_BLOCK_BYTES`], [`CPU_BLOCK_BYTES`]); `over` replaces the
/// default when given.
pub fn block_cap(device: &Device, over: Option<usize>) -> usize {
    if let Some(b) = over {
        return b.max(1);
    }
    if !device.is_cuda() {
        return CPU_BLOCK_BYTES;
    }
    let free = device
        .cuda_context()
        .ok()
        .and_then(|ctx| {
            ctx.bind_to_thread()
                .ok()
                .and_then(|_| ctx.mem_get_info().ok())
        })
        .map(|(free, _)| free)
        .unwrap_or(0);
    let pool = gpukit::pool_stats(device);
    let idle = pool.reserved_bytes.saturating_sub(pool.used_bytes);
    let avail = free + idle;
    if avail == 0 {
        GPU_BLOCK_BYTES
    } else {
        GPU_BLOCK_BYTES.min(avail / 4).max(1 << 20)
    }
}
