//! The CUDA kernels behind `Array::sort` and `Array::argsort`: a bitonic sort of each row in
//! shared memory, on keys that order like the values, and a tiled batched transpose (sorting
//! along an axis other than the last one moves that axis last and back).
//!
//! **Keys.** Every value becomes an unsigned integer (32 bits for 1- and 4-byte types, 64 for
//! 8-byte ones) whose unsigned order is the value order: signed integers flip the sign bit,
//! floats flip the sign bit of non-negative values and every bit of negative ones. Every NaN
//! becomes the canonical positive quiet NaN first, whose key is above +inf's, so NaN sorts last
//! as in NumPy. `sort` keeps -0.0 and +0.0 apart (-0.0 first; they compare equal, so either
//! order is sorted) and writes back the value of each key; `argsort` maps -0.0 to +0.0 so that
//! they tie, and breaks every tie by the original index: its result is the stable order, the
//! one permutation that a stable sort (NumPy's `kind="stable"`) gives.
//!
//! **Rows.** A row of `len` elements is padded to `P = 2^ceil(log2 len)` with the largest key
//! (padding sorts after every element; in `argsort` its indices `>= len` make it lose every
//! tie). One thread block loads a chunk of `C` consecutive padded elements (a whole number of
//! rows, at least 2048 elements when the array has them) into shared memory, runs the bitonic
//! network on each row of it at once (the direction of a compare-exchange depends only on the
//! index inside its row), and writes the first `len` of each row back. Chunks larger than the
//! 48 KiB default use the device's opt-in shared memory (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`):
//! on an H100 (227 KiB) a row of 16384 `f64` fits, for `argsort` too (12 bytes per element).
//!
//! **Longer rows** sort in global memory: chunks of the largest size that fits are sorted in
//! shared memory into a scratch buffer of padded rows; then each merge stage `k` runs its steps
//! with a stride of a chunk or more as one global kernel each (`gk_*_step_*`) and the steps below
//! a chunk in shared memory again, the last one writing the output.
//!
//! Files: `source` (the CUDA C++), this file (plans and launches), `tests`.

pub(super) use source::programs;

mod source;
#[cfg(test)]
mod tests;

use super::table::{blocks_for, ptr, ptr_mut};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::launch_values;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::CudaSlice;
use source::{key_bytes, source, suffix, TRANSPOSE_PROGRAM, TRANSPOSE_SOURCE};

/// Most threads of a block of the chunk kernels (`__launch_bounds__(1024, 2)` in the source:
/// two such blocks per multiprocessor, 32 registers per thread, so that one block's loads and
/// compare-exchanges overlap the other's barriers).
const CHUNK_THREADS: usize = 1024;
/// Elements a chunk holds at least when the array has them (small rows share a block).
const MIN_CHUNK: usize = 2048;
/// Dynamic shared memory a launch may use without opting in.
const DEFAULT_SHARED: usize = 48 * 1024;

/// What a sort writes: the sorted values, or the sorting indices (`i64`, as NumPy's `intp`).
pub(crate) enum SortOut<'a, T: Element> {
    /// `sort`: the values in order.
    Values(&'a mut CudaSlice<T>),
    /// `argsort`: for each position of the result, the index (in its row) of the element there.
    Indices(&'a mut CudaSlice<i64>),
}

/// The geometry of one sort: rows padded to `2^lp`, chunks of `2^lc` elements per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// log2 of the padded row length.
    pub lp: u32,
    /// log2 of the elements per block.
    pub lc: u32,
    /// Whether the rows are longer than a chunk (the global-memory merge).
    pub global: bool,
}

/// ceil(log2(n)) for n >= 1.
fn ceil_log2(n: usize) -> u32 {
    usize::BITS - (n.max(1) - 1).leading_zeros()
}

/// The plan for `rows` rows of `len >= 1` elements when a block can hold `capacity` elements
/// (at least 2) in shared memory.
pub(super) fn plan(rows: usize, len: usize, capacity: usize) -> Plan {
    let lp = ceil_log2(len);
    let lcap = usize::BITS - 1 - capacity.max(2).leading_zeros(); // floor(log2)
    if lp > lcap {
        return Plan {
            lp,
            lc: lcap,
            global: true,
        };
    }
    let padded_total = rows.saturating_mul(1usize << lp);
    let want = ceil_log2(padded_total).min(ceil_log2(MIN_CHUNK));
    Plan {
        lp,
        lc: want.max(lp).min(lcap),
        global: false,
    }
}

/// Elements of shared memory per padded element: the key, and the index for `argsort`.
fn bytes_per_element(d: DType, arg: bool) -> usize {
    key_bytes(d) + if arg { 4 } else { 0 }
}

/// Shared memory one block may use on `backend`'s device (opting in above 48 KiB).
fn shared_capacity(backend: &CudaBackend) -> usize {
    backend
        .context()
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .ok()
        .filter(|&v| v > 0)
        .map(|v| v as usize)
        .unwrap_or_else(|| {
            backend
                .properties()
                .shared_memory_per_block
                .min(DEFAULT_SHARED)
        })
}

/// Sorts each of `rows` C-order rows of `len` elements of `input` along the row, into `out`
/// (`rows * len` values or indices). Queued on the backend's stream.
pub(crate) fn sort_rows<T: Element>(
    backend: &CudaBackend,
    input: &CudaSlice<T>,
    rows: usize,
    len: usize,
    mut out: SortOut<'_, T>,
) -> Result<()> {
    if rows == 0 || len == 0 {
        return Ok(());
    }
    let d = T::DTYPE;
    if d == DType::Bool {
        return Err(Error::Other("internal: sorting a bool array".into()));
    }
    if len > u32::MAX as usize {
        return Err(Error::Shape(format!(
            "sort: rows of {len} elements are longer than the GPU sort handles (2^32 - 1)"
        )));
    }
    let arg = matches!(out, SortOut::Indices(_));
    let per = bytes_per_element(d, arg);
    let capacity = shared_capacity(backend) / per;
    let p = plan(rows, len, capacity);
    let padded_total = rows
        .checked_mul(1usize << p.lp)
        .ok_or_else(|| Error::Shape(format!("sort: {rows} rows of {len} are too many")))?;
    let (program, src) = source(d);
    let module = backend.compile(program, src)?;
    let s = suffix(d);
    let chunk_name = format!("gk_{}sort_chunk_{s}", if arg { "arg" } else { "" });
    let step_name = format!("gk_{}sort_step_{s}", if arg { "arg" } else { "" });
    let chunk = module.function(&chunk_name)?;
    let c = 1usize << p.lc;
    let shared = c * per;
    if shared > DEFAULT_SHARED {
        backend
            .context()
            .bind_to_thread()
            .map_err(|e| driver_err("making the context current", e))?;
        chunk
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(|e| driver_err(&format!("allowing {shared} bytes of shared memory"), e))?;
    }
    let blocks = padded_total.div_ceil(c);
    let config = LaunchConfig {
        grid: Dim3::new(u32::try_from(blocks).unwrap_or(u32::MAX), 1, 1),
        block: Dim3::new(CHUNK_THREADS.min(c / 2).max(32) as u32, 1, 1),
        shared_mem_bytes: shared as u32,
    };
    if blocks > i32::MAX as usize {
        return Err(Error::Shape(format!(
            "sort: {rows} rows of {len} need {blocks} blocks, more than a grid holds"
        )));
    }
    let input = ptr(backend, input);
    let output = match &mut out {
        SortOut::Values(o) => ptr_mut(backend, o),
        SortOut::Indices(o) => ptr_mut(backend, o),
    };
    let geometry = |scratch: (u64, u64), kmerge: u64, flags: u64| {
        [
            input,
            output,
            scratch.0,
            scratch.1,
            rows as u64,
            len as u64,
            p.lp as u64,
            p.lc as u64,
            kmerge,
            flags,
        ]
    };
    // The parameters match the chunk kernel's signature; every access is inside the padded
    // rows' bounds (`r < rows && j < len` for the input and output, `blocks * C` scratch).
    if !p.global {
        return launch_values(
            backend,
            chunk.cu_function(),
            &config,
            &geometry((0, 0), 0, 0),
            &chunk_name,
        );
    }
    // Rows longer than a chunk: padded rows in a scratch buffer, merged stage by stage.
    // SAFETY: every element is written by the first chunk launch below before it is read.
    let mut keys = unsafe { backend.alloc::<u8>(padded_total * key_bytes(d))? };
    // SAFETY: as above (one unused element for `sort`).
    let mut idx = unsafe { backend.alloc::<u32>(if arg { padded_total } else { 1 })? };
    let scratch = (ptr_mut(backend, &mut keys), ptr_mut(backend, &mut idx));
    let step = module.function(&step_name)?;
    let pairs = padded_total / 2;
    let step_config = LaunchConfig {
        grid: Dim3::new(blocks_for(backend, pairs), 1, 1),
        block: Dim3::new(super::THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch_chunk = |kmerge: u64, flags: u64| {
        launch_values(
            backend,
            chunk.cu_function(),
            &config,
            &geometry(scratch, kmerge, flags),
            &chunk_name,
        )
    };
    launch_chunk(0, 2)?;
    let padded = 1u64 << p.lp;
    let mut k = (c as u64) * 2;
    while k <= padded {
        let mut j = k / 2;
        while j >= c as u64 {
            // The parameters match the step kernel's signature; `a + j` stays in a's padded row.
            let params = [scratch.0, scratch.1, pairs as u64, p.lp as u64, k, j];
            launch_values(
                backend,
                step.cu_function(),
                &step_config,
                &params,
                &step_name,
            )?;
            j /= 2;
        }
        launch_chunk(k, if k == padded { 1 } else { 3 })?;
        k *= 2;
    }
    // The scratch buffers are freed in stream order, after the kernels that use them.
    drop((keys, idx));
    Ok(())
}

/// Transposes each of `batches` C-order `r x c` matrices of `input` into `out` (`c x r` each).
pub(crate) fn transpose<T: Element>(
    backend: &CudaBackend,
    input: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    batches: usize,
    r: usize,
    c: usize,
) -> Result<()> {
    if batches == 0 || r == 0 || c == 0 {
        return Ok(());
    }
    let name = match std::mem::size_of::<T>() {
        1 => "gk_transpose_w1",
        4 => "gk_transpose_w4",
        _ => "gk_transpose_w8",
    };
    let tiles = batches
        .saturating_mul(r.div_ceil(32))
        .saturating_mul(c.div_ceil(32));
    let cap = backend.properties().multiprocessors.max(1) as usize * 16;
    let f = backend
        .compile(TRANSPOSE_PROGRAM, TRANSPOSE_SOURCE)?
        .function(name)?;
    let config = LaunchConfig {
        grid: Dim3::new(tiles.clamp(1, cap) as u32, 1, 1),
        block: Dim3::new(32, 8, 1),
        shared_mem_bytes: 0,
    };
    // The parameters match the kernel's signature; it reads and writes inside the
    // `batches * r * c` elements of both buffers.
    let params = [
        ptr(backend, input),
        ptr_mut(backend, out),
        batches as u64,
        r as u64,
        c as u64,
    ];
    launch_values(backend, f.cu_function(), &config, &params, name)
}
