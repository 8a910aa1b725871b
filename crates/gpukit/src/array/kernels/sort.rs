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

use super::table::{blocks_for, ptr, ptr_mut};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::launch_values;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::CudaSlice;

/// Most threads of a block of the chunk kernels (`__launch_bounds__(1024, 2)` in the source:
/// two such blocks per multiprocessor, 32 registers per thread, so that one block's loads and
/// compare-exchanges overlap the other's barriers).
const CHUNK_THREADS: usize = 1024;
/// Elements a chunk holds at least when the array has them (small rows share a block).
const MIN_CHUNK: usize = 2048;
/// Dynamic shared memory a launch may use without opting in.
const DEFAULT_SHARED: usize = 48 * 1024;

/// The definitions every per-dtype module shares; `GK_T` (element), `GK_K` (key), `GK_KMAX`
/// and the key functions are defined before it by [`source`].
const COMMON: &str = r#"
// One compare-exchange of the bitonic network: afterwards (key, idx)[a] <= [b] when `up`, >=
// otherwise. With ARG the order is by key, then by index (indices in a row are distinct, so two
// entries never compare equal).
template <bool ARG, typename I>
__device__ __forceinline__ void gk_cmpx(GK_K* key, gk_u32* idx, I a, I b, bool up) {
    GK_K ka = key[a], kb = key[b];
    gk_u32 ia = 0, ib = 0;
    bool gt, lt;
    if (ARG) {
        ia = idx[a];
        ib = idx[b];
        gt = ka > kb || (ka == kb && ia > ib);
        lt = !gt;
    } else {
        gt = ka > kb;
        lt = ka < kb;
    }
    if (up ? gt : lt) {
        key[a] = kb;
        key[b] = ka;
        if (ARG) {
            idx[a] = ib;
            idx[b] = ia;
        }
    }
}

// A chunk of C = 2^lc padded elements (rows of P = 2^lp elements, C >= P, or a part of one row,
// C < P) in shared memory: loaded from the input (keys made here) or from the scratch buffer
// (flags & 1); sorted by the whole network up to k = min(P, C) (kmerge == 0), or by the steps
// j < C of merge stage kmerge; stored to the output (values or indices, the first len of each
// row) or to the scratch buffer (flags & 2).
template <bool ARG>
__device__ __forceinline__ void gk_chunk(const GK_T* in, GK_T* out_v, long long* out_i,
                                         GK_K* gkey, gk_u32* gidx, gk_u64 rows, gk_u64 len,
                                         gk_u32 lp, gk_u32 lc, gk_u64 kmerge, int flags) {
    extern __shared__ __align__(16) unsigned char gk_smem[];
    const gk_u64 P = 1ull << lp;
    const gk_u32 C = 1u << lc;
    GK_K* key = (GK_K*)gk_smem;
    gk_u32* idx = (gk_u32*)(key + C);
    const gk_u64 base = (gk_u64)blockIdx.x << lc;
    for (gk_u32 i = threadIdx.x; i < C; i += blockDim.x) {
        const gk_u64 g = base + i;
        if (flags & 1) {
            key[i] = gkey[g];
            if (ARG) idx[i] = gidx[g];
        } else {
            const gk_u64 r = g >> lp, j = g & (P - 1);
            GK_K k = GK_KMAX;
            if (r < rows && j < len) k = gk_key(in[r * len + j], ARG);
            key[i] = k;
            if (ARG) idx[i] = (gk_u32)j;
        }
    }
    __syncthreads();
    const gk_u32 half = C >> 1;
    const gk_u64 kfirst = kmerge ? kmerge : 2;
    const gk_u64 klast = kmerge ? kmerge : (P < (gk_u64)C ? P : (gk_u64)C);
    for (gk_u64 k = kfirst; k <= klast; k <<= 1) {
        // The direction of a compare-exchange at a: ascending in the last stage (k == P), else
        // by bit k of a's index in its row. `base` is a multiple of C, so that bit is a's own
        // for k < C and the block's (the same for all its pairs) for k >= C: 32-bit work inside.
        const bool whole = (k == P);
        const bool per_block = k >= (gk_u64)C;
        const bool block_up = whole || ((base & k) == 0);
        const gk_u32 k32 = (gk_u32)k;
        for (gk_u32 j = kmerge ? half : (gk_u32)(k >> 1); j > 0; j >>= 1) {
            for (gk_u32 t = threadIdx.x; t < half; t += blockDim.x) {
                const gk_u32 a = ((t & ~(j - 1)) << 1) | (t & (j - 1));
                const bool up = per_block ? block_up : (whole || ((a & k32) == 0));
                gk_cmpx<ARG>(key, idx, a, a + j, up);
            }
            __syncthreads();
        }
    }
    for (gk_u32 i = threadIdx.x; i < C; i += blockDim.x) {
        const gk_u64 g = base + i;
        if (flags & 2) {
            gkey[g] = key[i];
            if (ARG) gidx[g] = idx[i];
        } else {
            const gk_u64 r = g >> lp, j = g & (P - 1);
            if (r < rows && j < len) {
                if (ARG) out_i[r * len + j] = (long long)idx[i];
                else out_v[r * len + j] = gk_unkey(key[i]);
            }
        }
    }
}

// One step (stride j >= a chunk) of merge stage k over every padded row of the scratch buffer.
template <bool ARG>
__device__ __forceinline__ void gk_step(GK_K* key, gk_u32* idx, gk_u64 pairs, gk_u32 lp,
                                        gk_u64 k, gk_u64 j) {
    const gk_u64 P = 1ull << lp;
    for (gk_u64 t = blockIdx.x * (gk_u64)blockDim.x + threadIdx.x; t < pairs;
         t += (gk_u64)gridDim.x * blockDim.x) {
        const gk_u64 a = ((t & ~(j - 1)) << 1) | (t & (j - 1));
        const bool up = (k == P) || ((a & k) == 0);
        gk_cmpx<ARG>(key, idx, a, a + j, up);
    }
}

#define GK_CHUNK_PARAMS GK_K* gkey, gk_u32* gidx, gk_u64 rows, gk_u64 len, gk_u32 lp, gk_u32 lc, \
                        gk_u64 kmerge, int flags
#define GK_CHUNK_ARGS gkey, gidx, rows, len, lp, lc, kmerge, flags

extern "C" __global__ void __launch_bounds__(1024, 2)
GK_NAME(gk_sort_chunk_)(const GK_T* in, GK_T* out, GK_CHUNK_PARAMS) {
    gk_chunk<false>(in, out, 0, GK_CHUNK_ARGS);
}
extern "C" __global__ void __launch_bounds__(1024, 2)
GK_NAME(gk_argsort_chunk_)(const GK_T* in, long long* out, GK_CHUNK_PARAMS) {
    gk_chunk<true>(in, 0, out, GK_CHUNK_ARGS);
}
extern "C" __global__ void GK_NAME(gk_sort_step_)(GK_K* key, gk_u32* idx, gk_u64 pairs,
                                                  gk_u32 lp, gk_u64 k, gk_u64 j) {
    gk_step<false>(key, idx, pairs, lp, k, j);
}
extern "C" __global__ void GK_NAME(gk_argsort_step_)(GK_K* key, gk_u32* idx, gk_u64 pairs,
                                                     gk_u32 lp, gk_u64 k, gk_u64 j) {
    gk_step<true>(key, idx, pairs, lp, k, j);
}
"#;

/// The key functions of one element type: `gk_key(value, merge_zero)` and `gk_unkey(key)`.
fn key_source(d: DType) -> &'static str {
    match d {
        DType::U8 => {
            "__device__ __forceinline__ gk_u32 gk_key(unsigned char x, bool) { return x; }\n\
             __device__ __forceinline__ unsigned char gk_unkey(gk_u32 k) { return (unsigned char)k; }\n"
        }
        DType::I32 => {
            "__device__ __forceinline__ gk_u32 gk_key(int x, bool) { return (gk_u32)x ^ 0x80000000u; }\n\
             __device__ __forceinline__ int gk_unkey(gk_u32 k) { return (int)(k ^ 0x80000000u); }\n"
        }
        DType::U32 => {
            "__device__ __forceinline__ gk_u32 gk_key(gk_u32 x, bool) { return x; }\n\
             __device__ __forceinline__ gk_u32 gk_unkey(gk_u32 k) { return k; }\n"
        }
        DType::I64 => {
            "__device__ __forceinline__ gk_u64 gk_key(long long x, bool) { return (gk_u64)x ^ 0x8000000000000000ull; }\n\
             __device__ __forceinline__ long long gk_unkey(gk_u64 k) { return (long long)(k ^ 0x8000000000000000ull); }\n"
        }
        DType::U64 => {
            "__device__ __forceinline__ gk_u64 gk_key(gk_u64 x, bool) { return x; }\n\
             __device__ __forceinline__ gk_u64 gk_unkey(gk_u64 k) { return k; }\n"
        }
        DType::F32 => {
            "__device__ __forceinline__ gk_u32 gk_key(float x, bool merge_zero) {\n\
                 gk_u32 b = __float_as_uint(x);\n\
                 if (x != x) b = 0x7fc00000u;\n\
                 else if (merge_zero && x == 0.0f) b = 0u;\n\
                 return (b & 0x80000000u) ? ~b : (b | 0x80000000u);\n\
             }\n\
             __device__ __forceinline__ float gk_unkey(gk_u32 k) {\n\
                 return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);\n\
             }\n"
        }
        // F64 (Bool is not sortable: the callers take `Numeric` types only)
        _ => {
            "__device__ __forceinline__ gk_u64 gk_key(double x, bool merge_zero) {\n\
                 gk_u64 b = (gk_u64)__double_as_longlong(x);\n\
                 if (x != x) b = 0x7ff8000000000000ull;\n\
                 else if (merge_zero && x == 0.0) b = 0ull;\n\
                 return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);\n\
             }\n\
             __device__ __forceinline__ double gk_unkey(gk_u64 k) {\n\
                 return __longlong_as_double((long long)((k & 0x8000000000000000ull)\n\
                     ? (k & 0x7fffffffffffffffull) : ~k));\n\
             }\n"
        }
    }
}

/// The suffix of one element type's kernels (`f64`, `i32`, ...).
fn suffix(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::U8 => "u8",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U32 => "u32",
        DType::U64 => "u64",
        DType::F32 => "f32",
        DType::F64 => "f64",
    }
}

/// Bytes of one key of `d` (4 or 8).
fn key_bytes(d: DType) -> usize {
    if d.size() == 8 {
        8
    } else {
        4
    }
}

/// `(program name, source)` of the sort module of element type `d`.
fn source(d: DType) -> (String, String) {
    let s = suffix(d);
    let (key, kmax) = if key_bytes(d) == 8 {
        ("gk_u64", "0xffffffffffffffffull")
    } else {
        ("gk_u32", "0xffffffffu")
    };
    let src = format!(
        "typedef unsigned long long gk_u64;\ntypedef unsigned int gk_u32;\n\
         typedef {elem} GK_T;\ntypedef {key} GK_K;\n#define GK_KMAX {kmax}\n\
         #define GK_NAME(p) p##{s}\n{keys}{COMMON}",
        elem = d.cuda_name(),
        keys = key_source(d),
    );
    (format!("gpukit_sort_{s}"), src)
}

/// NVRTC program name of the transpose module.
const TRANSPOSE_PROGRAM: &str = "gpukit_transpose";

/// `gk_transpose_w{1,4,8}(in, out, batches, r, c)`: each of `batches` C-order `r x c` matrices
/// of `in` to its transpose in `out`, through 32 x 32 tiles in shared memory (one tile per
/// block and iteration, blocks of 32 x 8 threads), the elements moved as bits of their width.
const TRANSPOSE_SOURCE: &str = r#"
typedef unsigned long long gk_u64;
template <typename W>
__device__ __forceinline__ void gk_transpose(const W* in, W* out, gk_u64 batches, gk_u64 r,
                                             gk_u64 c) {
    __shared__ W tile[32][33];
    const gk_u64 tr = (r + 31) / 32, tc = (c + 31) / 32, per = tr * tc, tiles = batches * per;
    for (gk_u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const gk_u64 b = t / per, rem = t % per;
        const gk_u64 r0 = (rem / tc) * 32, c0 = (rem % tc) * 32;
        const W* src = in + b * r * c;
        W* dst = out + b * r * c;
        for (unsigned y = threadIdx.y; y < 32; y += blockDim.y) {
            const gk_u64 i = r0 + y, j = c0 + threadIdx.x;
            if (i < r && j < c) tile[y][threadIdx.x] = src[i * c + j];
        }
        __syncthreads();
        for (unsigned y = threadIdx.y; y < 32; y += blockDim.y) {
            const gk_u64 j = c0 + y, i = r0 + threadIdx.x;
            if (i < r && j < c) dst[j * r + i] = tile[threadIdx.x][y];
        }
        __syncthreads();
    }
}
extern "C" __global__ void gk_transpose_w1(const unsigned char* i, unsigned char* o, gk_u64 b,
                                           gk_u64 r, gk_u64 c) { gk_transpose(i, o, b, r, c); }
extern "C" __global__ void gk_transpose_w4(const unsigned* i, unsigned* o, gk_u64 b, gk_u64 r,
                                           gk_u64 c) { gk_transpose(i, o, b, r, c); }
extern "C" __global__ void gk_transpose_w8(const gk_u64* i, gk_u64* o, gk_u64 b, gk_u64 r,
                                           gk_u64 c) { gk_transpose(i, o, b, r, c); }
"#;

/// Every sortable element type (the `Numeric` ones).
const SORTABLE: [DType; 7] = [
    DType::U8,
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
];

/// `(program name, source)` of every module of this file (for warming the caches and the NVRTC
/// test).
pub(super) fn programs() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = SORTABLE.iter().map(|&d| source(d)).collect();
    v.push((TRANSPOSE_PROGRAM.to_string(), TRANSPOSE_SOURCE.to_string()));
    v
}

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
    let module = backend.compile(&program, &src)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_pack_short_rows_and_split_long_ones() {
        // The lab's rows: 5000 f64 padded to 8192, one row per block.
        assert_eq!(
            plan(10_000, 5_000, 16_384),
            Plan {
                lp: 13,
                lc: 13,
                global: false
            }
        );
        // Short rows share a block of 2048 elements.
        assert_eq!(
            plan(1000, 3, 16_384),
            Plan {
                lp: 2,
                lc: 11,
                global: false
            }
        );
        // A tiny array: one block just large enough.
        assert_eq!(
            plan(1, 5, 16_384),
            Plan {
                lp: 3,
                lc: 3,
                global: false
            }
        );
        assert_eq!(
            plan(1, 1, 16_384),
            Plan {
                lp: 0,
                lc: 0,
                global: false
            }
        );
        // Longer than a chunk: chunks of the capacity, merged in global memory.
        assert_eq!(
            plan(3, 100_000, 16_384),
            Plan {
                lp: 17,
                lc: 14,
                global: true
            }
        );
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(2), 1);
        assert_eq!(ceil_log2(5000), 13);
        assert_eq!(ceil_log2(8192), 13);
    }

    /// Every sort module compiles with NVRTC and has its four kernels (no GPU needed; skipped
    /// without libnvrtc unless `GPUKIT_REQUIRE_NVRTC=1`).
    #[test]
    fn sort_modules_compile_with_nvrtc() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        for (name, src) in programs() {
            let ptx = crate::backend::cuda::compile_ptx(&name, &src, "sm_90")
                .unwrap_or_else(|e| panic!("{e}"));
            let entries = crate::backend::cuda::ptx_entries(&ptx);
            let want: Vec<String> = match name.strip_prefix("gpukit_sort_") {
                Some(s) => ["sort_chunk", "argsort_chunk", "sort_step", "argsort_step"]
                    .iter()
                    .map(|k| format!("gk_{k}_{s}"))
                    .collect(),
                None => ["w1", "w4", "w8"]
                    .iter()
                    .map(|w| format!("gk_transpose_{w}"))
                    .collect(),
            };
            for w in want {
                assert!(entries.contains(&w), "{name}: {w} missing from {entries:?}");
            }
        }
        assert_eq!(programs().len(), 8);
    }

    /// The kernels' network, run on the host with the same index arithmetic: sorted and stable
    /// for several geometries, the global-memory merge included.
    #[test]
    fn the_network_sorts_on_the_host() {
        fn run(rows: usize, len: usize, capacity: usize, keys: &[u64]) -> Vec<u32> {
            let p = plan(rows, len, capacity);
            let pp = 1usize << p.lp;
            let c = 1usize << p.lc;
            let total = (rows * pp).div_ceil(c) * c;
            let mut k_: Vec<u64> = (0..total)
                .map(|g| {
                    let (r, j) = (g / pp, g % pp);
                    if r < rows && j < len {
                        keys[r * len + j]
                    } else {
                        u64::MAX
                    }
                })
                .collect();
            let mut i_: Vec<u32> = (0..total).map(|g| (g % pp) as u32).collect();
            let mut cmpx = |a: usize, b: usize, up: bool| {
                let gt = (k_[a], i_[a]) > (k_[b], i_[b]);
                if up == gt {
                    k_.swap(a, b);
                    i_.swap(a, b);
                }
            };
            let ppu = pp as u64;
            // chunk sort, block by block, with the kernel's direction rule (`base` a multiple
            // of C: bit k of the index is a's own below C, the block's from C on)
            let up_of = |base: usize, a: usize, k: usize| {
                let whole = k as u64 == ppu;
                if k >= c {
                    whole || (base & k) == 0
                } else {
                    whole || (a & k) == 0
                }
            };
            let kl = pp.min(c);
            let mut k = 2;
            while k <= kl {
                let mut j = k / 2;
                while j > 0 {
                    for base in (0..total).step_by(c) {
                        for t in 0..c / 2 {
                            let a = ((t & !(j - 1)) << 1) | (t & (j - 1));
                            cmpx(base + a, base + a + j, up_of(base, a, k));
                        }
                    }
                    j /= 2;
                }
                k *= 2;
            }
            let mut k = 2 * c;
            while p.global && k <= pp {
                let mut j = k / 2;
                // the global steps (j >= C), then the chunk's steps (j < C)
                while j >= c {
                    for t in 0..total / 2 {
                        let a = ((t & !(j - 1)) << 1) | (t & (j - 1));
                        let up = k == pp || (a & k) == 0;
                        cmpx(a, a + j, up);
                    }
                    j /= 2;
                }
                while j > 0 {
                    for base in (0..total).step_by(c) {
                        for t in 0..c / 2 {
                            let a = ((t & !(j - 1)) << 1) | (t & (j - 1));
                            cmpx(base + a, base + a + j, up_of(base, a, k));
                        }
                    }
                    j /= 2;
                }
                k *= 2;
            }
            (0..rows)
                .flat_map(|r| i_[r * pp..r * pp + len].to_vec())
                .collect()
        }
        let mut seed = 7u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % 5
        };
        for (rows, len, cap) in [(3, 5, 64), (7, 1, 64), (2, 100, 16), (5, 33, 8), (1, 64, 4)] {
            let keys: Vec<u64> = (0..rows * len).map(|_| next()).collect();
            let idx = run(rows, len, cap, &keys);
            for r in 0..rows {
                let row = &keys[r * len..(r + 1) * len];
                let mut want: Vec<u32> = (0..len as u32).collect();
                want.sort_by_key(|&i| row[i as usize]);
                assert_eq!(
                    &idx[r * len..(r + 1) * len],
                    &want[..],
                    "rows {rows} len {len} capacity {cap}"
                );
            }
        }
    }
}
