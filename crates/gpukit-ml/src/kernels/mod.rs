//! The crate's device kernels, written in Rust with `#[kernel]`: each runs as CUDA on a GPU and
//! as its native twin on the CPU backend, so both backends share one algorithm. Kernels are
//! not generic (the kernel language has no generics): a `macro_rules!` writes one per element
//! type, and [`crate::float::MlFloat`] / [`crate::float::Gather`] pick the right one.
//!
//! Files: `rows` (gathering rows by index), `topk` (the k smallest distances per query row),
//! `vote` (neighbour votes and means), `lloyd` (k-means assignment, one-hot membership, counts,
//! distance updates), `labels` (label codes and confusion counts). `nvrtc_tests` compiles every
//! kernel with NVRTC where libnvrtc is present.

pub(crate) mod labels;
pub(crate) mod lloyd;
pub(crate) mod rows;
pub(crate) mod topk;
pub(crate) mod vote;

#[cfg(test)]
mod nvrtc_tests;

/// Threads per block of every launch here.
pub(crate) const THREADS: usize = 256;

/// `(blocks, threads)` for one thread per item over `n` items (at least one block).
pub(crate) fn grid_for(n: usize) -> (u32, u32) {
    let blocks = n.div_ceil(THREADS).max(1);
    (blocks as u32, THREADS as u32)
}

/// `(blocks, threads)` for a grid-stride loop over `n` items (at most 8192 blocks).
pub(crate) fn stride_grid(n: usize) -> (u32, u32) {
    let blocks = n.div_ceil(THREADS).clamp(1, 8192);
    (blocks as u32, THREADS as u32)
}
