//! The built-in CUDA kernels behind array operations: their CUDA C++ source (one module per
//! element type, one per cast) and how they are launched.
//!
//! Elementwise kernels move 16-byte packs (two `f64`, four `f32`, sixteen `u8` per load and
//! store), one per thread over a grid as large as the array, with a one-element tail; reductions
//! fold several packs per iteration into a register per thread, combine each block with warp
//! shuffles, and let the last block to finish combine the blocks' partials (one launch).
//!
//! Launches take the runtime's own path (`kernel::cuda::launch_values`): no allocation, no lock,
//! no hashing of names per launch (each kernel has a fixed slot in a per-device table), and the
//! profiler brackets them with CUDA events like every other kernel while it is on.
//!
//! Files: `source` (the CUDA C++), `table` (which kernels exist, their slots and the shared
//! launch path), `elementwise` (arithmetic, comparisons, casts, fills), `reduce` (reductions),
//! `random` (cuRAND output mapped to ranges and integers), `diagonal` (`eye`), `sort` (bitonic
//! sorts of rows in shared memory, and the transpose that moves an axis last), `complex` (complex
//! arrays' fills, conversions and arithmetic), `layout` (column-major matrices of cuSOLVER to C
//! order, for `linalg`), `strided` (copies
//! between layouts, a tiled transpose, and binary operations on strided and broadcast operands), `axes` (reductions and scans
//! along an axis), `extra` (where, masks, clip and NumPy's other elementwise functions).

mod axes;
pub(crate) mod complex;
mod diagonal;
mod elementwise;
mod extra;
pub(crate) mod layout;
pub(crate) mod random;
mod reduce;
pub(crate) mod sort;
mod source;
pub(crate) mod strided;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use axes::{reduce_axis, scan_axis, var_rows, BLOCK_ROWS_MIN};
pub(crate) use diagonal::set_diagonal;
pub(crate) use elementwise::{
    binary, cast, compare, copy, fill, powf, ramp_float, ramp_int, unary, Operand,
};
pub(crate) use extra::{binary_fn, clip, compact, masked_fill, scatter, unary_fn, where_};
pub(crate) use reduce::reduce;
pub(crate) use table::precompile;

/// Threads per block of every built-in kernel (a multiple of 32: the block reduction needs it).
pub(super) const THREADS: u32 = 256;
/// Blocks per multiprocessor the grid of a one-element-per-thread loop (ramps, casts,
/// comparisons of wide types) is capped at: one wave at full occupancy (8 x 256 threads).
pub(super) const LOOP_BLOCKS_PER_SM: u32 = 8;
/// Most blocks of a launch (CUDA's grid limit along x); larger arrays loop.
pub(super) const MAX_BLOCKS: usize = i32::MAX as usize;
/// 16-byte packs a thread of a reduction loads per iteration (`GK_RED_UNROLL`).
pub(super) const RED_UNROLL: usize = 8;
/// Blocks per multiprocessor of a reduction: 4 x 256 threads, each with 8 packs (128 bytes) in
/// flight. On an H100 over 2^28 f64 this reads at 103% of the copy rate; 8 blocks per
/// multiprocessor were as fast for sums but 10% slower for max (presumably fewer of them fit
/// at once with 8 packs in registers).
pub(super) const RED_BLOCKS_PER_SM: u32 = 4;
/// Most blocks of a reduction: the partials buffer holds this many values of 8 bytes.
pub(super) const MAX_PARTIALS: u32 = 4096;
