//! CUDA kernels that reduce and scan along one axis: the input is viewed as
//! `(outer, len, inner)` in C order and each output `(o, k)` folds the `len` elements
//! `in[(o * len + j) * inner + k]`.
//!
//! Why this file is long: the CUDA templates of every layout, the scans and the fused variance
//! share their helpers (block combine, segment cut), so they stay in one source with their launches.
//!
//! Three layouts, so that loads are coalesced and the GPU is filled either way:
//! - *warp rows* (`inner == 1`, the last axis, rows shorter than [`BLOCK_ROWS_MIN`]): one warp
//!   per row (segment), its lanes striding along the contiguous row, combined with warp shuffles;
//! - *block rows* (`inner == 1`, long rows): one block of [`BLOCK_ROW_THREADS`] per row
//!   (segment), four loads in flight per thread, combined with shuffles and shared memory
//!   (measured on an H100: a warp per row left a fifth of the GPU idle in the last wave of a
//!   10 000-row array);
//! - *columns* (`inner > 1`, a leading axis): one thread per column running down its rows, the
//!   [`COL_THREADS`] threads of a block on neighbouring columns (one contiguous load per row), and
//!   the axis cut into enough segments (the grid's y) to keep every multiprocessor full, sixteen
//!   loads in flight per thread.
//!
//! - *interleaved columns* (`inner > 1`, rows 16-byte aligned, enough columns): thread `i` owns
//!   the 16 bytes of neighbouring columns `i % w` and the rows `i / w + m r` (m row groups), so at
//!   every step the grid reads m consecutive whole rows, as a whole-array read does (measured on an
//!   H100 on a 10 000 x 5 000 `f64`: 0.137 ms, the column layout 0.155 ms); a second launch folds
//!   the m partials of each column (7 µs).
//!
//! When there are too few rows or columns to fill the GPU, the axis is cut into `chunks` segments:
//! a first launch writes one partial per segment (`(outer, chunks, inner)`) and a second launch
//! reduces those. Scans (cumsum, cumprod) take the same cut: the segments' sums (products),
//! scanned, are each segment's starting carry.
//!
//! `var_rows` fuses a variance along long rows into one launch: each block loads its row into
//! registers, sums it, then takes the squared deviations from the mean from those registers,
//! divides and optionally takes the square root — NumPy's two passes, one trip through memory.
//! Rows too long for the registers (`var_rows_l2`) are read a second time, from L2.
//!
//! Arg-reductions carry (value, index) pairs ordered by (NaN first, value, index), a total order:
//! the result is the first occurrence whatever the order of combination, as NumPy's.

use super::source::{suffix, PRELUDE};
use super::THREADS;
use crate::array::reduce_axis::AxisOp;
use crate::backend::cuda::{CompiledModule, CudaBackend};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::{launch_values, PerDevice};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::sync::{Arc, OnceLock};

/// Warps (rows) per block of the warp-rows layout.
const WARPS: u32 = THREADS / 32;
/// Threads per block of the block-rows layout (measured on an H100: 512 threads with two 16-byte
/// loads in flight each read a 10 000 x 5 000 `f64` row-wise at the speed of a whole-array read;
/// 256 threads with eight-byte loads, 17% slower).
pub(crate) const BLOCK_ROW_THREADS: u32 = 512;
/// Most threads per block of `var_rows`.
const VAR_THREADS: u32 = 1024;
/// 16-byte packs each thread of `var_rows` holds in registers: rows of up to
/// `VAR_THREADS * VAR_PACKS` packs are read from memory once, the block as large as the row needs
/// (measured on an H100: 16 packs per thread took 116 registers and read 36% slower than 8).
const VAR_PACKS: usize = 8;
/// Rows at least this long take the block-rows layout.
pub(crate) const BLOCK_ROWS_MIN: usize = 2048;
/// Threads per block of the column layout (one per column).
const COL_THREADS: u32 = 128;
/// Threads per multiprocessor a launch aims at before it cuts the axis into segments: all it can
/// hold (measured on an H100: sixteen loads in flight per thread and a full multiprocessor read a
/// 10 000 x 5 000 `f64` column-wise fastest).
const ROW_THREADS_PER_SM: usize = 2048;
const COL_THREADS_PER_SM: usize = 2048;
/// Threads per multiprocessor the interleaved layout aims at (measured on an H100 summing a
/// 10 000 x 5 000 `f64` along axis 0: from 48 to 104 row groups, 900 to 2 000 threads per
/// multiprocessor, the first pass took 0.136 to 0.140 ms, a whole-array read of the same 400 MB
/// 0.133 ms; 26 groups 0.155 ms, 132 groups 0.144 ms).
const INTER_THREADS_PER_SM: usize = 1536;
/// Row groups beyond which an array is too narrow for the interleaved layout (each column's
/// second pass folds its groups' partials one after another).
const INTER_MAX_GROUPS: usize = 256;
/// Rows each thread of the interleaved layout reads at least.
const INTER_MIN_ROWS: usize = 32;
/// Warps per block of the interleaved layout's fold (`GK_AX_FW` in the CUDA source).
const FOLD_WARPS: u32 = 16;

/// How a launch maps the `(outer, len, inner)` view onto threads (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    WarpRows,
    BlockRows,
    Cols,
    Interleaved,
    /// The second pass after [`Layout::Interleaved`] (`ax2f`).
    Fold,
}

impl Layout {
    /// The layout for an axis of `len` with `inner` elements after it, among the three that
    /// cut the axis into segments ([`interleaved_groups`] decides the fourth).
    fn of(len: usize, inner: usize) -> Layout {
        if inner > 1 {
            Layout::Cols
        } else if len >= BLOCK_ROWS_MIN {
            Layout::BlockRows
        } else {
            Layout::WarpRows
        }
    }

    /// Threads one segment of every result occupies, and the threads per multiprocessor the
    /// launch aims at.
    fn threads(self, outer: usize, inner: usize) -> (usize, usize) {
        match self {
            Layout::WarpRows => (outer * 32, ROW_THREADS_PER_SM),
            Layout::BlockRows => (outer * BLOCK_ROW_THREADS as usize, ROW_THREADS_PER_SM),
            Layout::Cols | Layout::Interleaved | Layout::Fold => (
                outer * inner.div_ceil(COL_THREADS as usize) * COL_THREADS as usize,
                COL_THREADS_PER_SM,
            ),
        }
    }

    /// The fewest elements a segment keeps (fewer would spend more on partials than on loads).
    fn min_per_chunk(self) -> usize {
        match self {
            Layout::WarpRows => 2048,
            Layout::BlockRows => 4 * BLOCK_ROW_THREADS as usize,
            Layout::Cols | Layout::Interleaved | Layout::Fold => 128,
        }
    }
}

/// The templates shared by every element type's module.
const TEMPLATES: &str = r#"
typedef long long gk_i64;
#define GK_AX_U 16
template<typename T> __device__ __forceinline__ T gk_shfl_up(T v, int offset) {
    if constexpr (sizeof(T) < 4) { return (T)__shfl_up_sync(0xffffffffu, (int)v, offset); }
    else { return __shfl_up_sync(0xffffffffu, v, offset); } }

/* (b, ib) comes strictly before (a, ia) in the order of argmin (MAX: argmax): NaN first, then
   the smaller (larger) value, then the smaller index. */
template<bool MAX, typename T> __device__ __forceinline__ bool gk_ax_before(T b, gk_i64 ib, T a, gk_i64 ia) {
    const bool bn = b != b, an = a != a;
    if (bn || an) { return bn && (!an || ib < ia); }
    if (MAX ? (b > a) : (b < a)) { return true; }
    return b == a && ib < ia; }

/* Operations: Acc is the accumulator, init() its start, map() turns an input element of the
   first pass into an Acc (c: the output's centre, for sqdev), comb() folds (b, ib) into (a, ia);
   an index below 0 means "no element yet". */
#define GK_AX_OP(NAME, ACC, ARGF, INIT, MAP, COMB) \
template<typename T> struct gk_ax_##NAME { typedef ACC Acc; static constexpr bool ARG = ARGF; \
    static __device__ __forceinline__ Acc init() { return INIT; } \
    static __device__ __forceinline__ Acc map(T x, Acc c) { (void)c; return MAP; } \
    static __device__ __forceinline__ void comb(Acc& a, gk_i64& ia, Acc b, gk_i64 ib) { (void)ia; (void)ib; COMB; } };
GK_AX_OP(sum, T, false, (T)0, x, a = gk_add(a, b))
GK_AX_OP(prod, T, false, (T)1, x, a = gk_mul(a, b))
GK_AX_OP(min, T, false, gk_traits<T>::hi(), x, a = gk_min(a, b))
GK_AX_OP(max, T, false, gk_traits<T>::lo(), x, a = gk_max(a, b))
GK_AX_OP(argmin, T, true, gk_traits<T>::hi(), x,
    if (ib >= 0 && (ia < 0 || gk_ax_before<false>(b, ib, a, ia))) { a = b; ia = ib; })
GK_AX_OP(argmax, T, true, gk_traits<T>::lo(), x,
    if (ib >= 0 && (ia < 0 || gk_ax_before<true>(b, ib, a, ia))) { a = b; ia = ib; })
GK_AX_OP(sqdev, T, false, (T)0, (x - c) * (x - c), a = gk_add(a, b))
GK_AX_OP(count, gk_u64, false, 0ull, (x != (T)0 ? 1ull : 0ull), a = a + b)
GK_AX_OP(any, bool, false, false, (x != (T)0), a = a || b)
GK_AX_OP(all, bool, false, true, (x != (T)0), a = a && b)

/* One element folded into (acc, ia): the first pass maps an input element (its index is its
   position j), the second takes a partial and its index as they are. */
template<typename Op, bool FIRST, typename In>
__device__ __forceinline__ void gk_ax_take(typename Op::Acc& acc, gk_i64& ia, In x, typename Op::Acc c,
                                           gk_u64 j, const gk_i64* in_idx, gk_u64 at) {
    typename Op::Acc v; gk_i64 iv = 0;
    if constexpr (FIRST) { v = Op::map(x, c); iv = (gk_i64)j; }
    else { v = (typename Op::Acc)x; if constexpr (Op::ARG) { iv = in_idx[at]; } }
    Op::comb(acc, ia, v, iv); }

/* Rows: warp w of the grid reduces segment w % chunks of row w / chunks; writes out[w]. */
template<typename Op, bool FIRST, typename In>
__device__ __forceinline__ void gk_ax_rows(const In* in, const gk_i64* in_idx, gk_u64 outer, gk_u64 len,
        gk_u64 chunk, gk_u64 chunks, typename Op::Acc* out, gk_i64* out_idx, const typename Op::Acc* center) {
    typedef typename Op::Acc A;
    const unsigned lane = threadIdx.x & 31u;
    const gk_u64 w = (gk_u64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (w >= outer * chunks) { return; }  /* the whole warp leaves together */
    const gk_u64 row = w / chunks, c = w % chunks, j0 = c * chunk;
    const gk_u64 j1 = j0 + chunk < len ? j0 + chunk : len;
    const In* p = in + row * len;
    A cv = A();
    if constexpr (FIRST) { if (center != nullptr) { cv = center[row]; } }
    A acc = Op::init(); gk_i64 ia = -1;
    for (gk_u64 j = j0 + lane; j < j1; j += 32 * GK_AX_U) {
        In x[GK_AX_U];
        #pragma unroll
        for (int u = 0; u < GK_AX_U; ++u) { const gk_u64 jj = j + 32u * u; if (jj < j1) { x[u] = p[jj]; } }
        #pragma unroll
        for (int u = 0; u < GK_AX_U; ++u) {
            const gk_u64 jj = j + 32u * u;
            if (jj < j1) { gk_ax_take<Op, FIRST>(acc, ia, x[u], cv, jj, in_idx, row * len + jj); }
        }
    }
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const A v = gk_shfl_down(acc, off);
        gk_i64 iv = 0;
        if constexpr (Op::ARG) { iv = gk_shfl_down(ia, off); }
        Op::comb(acc, ia, v, iv);
    }
    if (lane == 0) {
        out[w] = acc;
        if constexpr (Op::ARG) { out_idx[w] = ia; }
    } }

/* Folds every thread's (acc, ia) of the block into thread 0's: warp shuffles, then the warps'
   results through shared memory (sv, si: 32 slots). */
template<typename Op>
__device__ __forceinline__ void gk_ax_block(typename Op::Acc& acc, gk_i64& ia, typename Op::Acc* sv, gk_i64* si) {
    typedef typename Op::Acc A;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const A v = gk_shfl_down(acc, off);
        gk_i64 iv = 0;
        if constexpr (Op::ARG) { iv = gk_shfl_down(ia, off); }
        Op::comb(acc, ia, v, iv);
    }
    if (lane == 0) { sv[warp] = acc; si[warp] = ia; }
    __syncthreads();
    if (warp == 0) {
        acc = lane < nw ? sv[lane] : Op::init();
        ia = lane < nw ? si[lane] : -1;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const A v = gk_shfl_down(acc, off);
            gk_i64 iv = 0;
            if constexpr (Op::ARG) { iv = gk_shfl_down(ia, off); }
            Op::comb(acc, ia, v, iv);
        }
    } }

/* Block rows: block b reduces segment b % chunks of row b / chunks with all its threads: 16-byte
   loads (gk_pack) over the segment's aligned middle, GK_AX_B of them in flight per thread, and the
   few elements before its first 16-byte boundary and after its last one by one; writes out[b].
   First pass only. */
#define GK_AX_B 2
template<typename Op, typename In>
__device__ __forceinline__ void gk_ax_brows(const In* in, gk_u64 outer, gk_u64 len, gk_u64 chunk,
        gk_u64 chunks, typename Op::Acc* out, gk_i64* out_idx, const typename Op::Acc* center) {
    typedef typename Op::Acc A;
    constexpr int N = (int)(16 / sizeof(In));
    __shared__ A sv[32];
    __shared__ gk_i64 si[32];
    const gk_u64 b = blockIdx.x;
    if (b >= outer * chunks) { return; }  /* the whole block leaves together */
    const gk_u64 row = b / chunks, c = b % chunks, j0 = c * chunk;
    const gk_u64 j1 = j0 + chunk < len ? j0 + chunk : len;
    const In* p = in + row * len;
    A cv = A();
    if (center != nullptr) { cv = center[row]; }
    A acc = Op::init(); gk_i64 ia = -1;
    gk_u64 v0 = j0 + ((16u - ((gk_u64)(p + j0) & 15u)) & 15u) / sizeof(In);
    if (v0 > j1) { v0 = j1; }
    const gk_u64 packs = (j1 - v0) / N, v1 = v0 + packs * N;
    const gk_v16* pv = reinterpret_cast<const gk_v16*>(p + v0);
    const gk_u64 step = blockDim.x;
    for (gk_u64 q = threadIdx.x; q < packs; q += step * GK_AX_B) {
        gk_pack<In> x[GK_AX_B];
        #pragma unroll
        for (int u = 0; u < GK_AX_B; ++u) { const gk_u64 qq = q + step * u; if (qq < packs) { x[u].raw = pv[qq]; } }
        #pragma unroll
        for (int u = 0; u < GK_AX_B; ++u) {
            const gk_u64 qq = q + step * u;
            if (qq < packs) {
                #pragma unroll
                for (int e = 0; e < N; ++e) { gk_ax_take<Op, true>(acc, ia, x[u].v[e], cv, v0 + qq * N + e, nullptr, 0); }
            }
        }
    }
    const gk_u64 t = threadIdx.x;
    if (j0 + t < v0) { gk_ax_take<Op, true>(acc, ia, p[j0 + t], cv, j0 + t, nullptr, 0); }
    if (v1 + t < j1) { gk_ax_take<Op, true>(acc, ia, p[v1 + t], cv, v1 + t, nullptr, 0); }
    gk_ax_block<Op>(acc, ia, sv, si);
    if (threadIdx.x == 0) {
        out[b] = acc;
        if constexpr (Op::ARG) { out_idx[b] = ia; }
    } }

/* Columns: thread (block x, thread x) owns column k of outer index o and runs down the rows of
   segment blockIdx.y (of `chunks`), eight loads in flight; writes out[(o * chunks + y) * inner + k]. */
template<typename Op, bool FIRST, typename In>
__device__ __forceinline__ void gk_ax_cols(const In* in, const gk_i64* in_idx, gk_u64 outer, gk_u64 len,
        gk_u64 inner, gk_u64 chunk, gk_u64 chunks, typename Op::Acc* out, gk_i64* out_idx, const typename Op::Acc* center) {
    typedef typename Op::Acc A;
    const gk_u64 tiles = (inner + blockDim.x - 1) / blockDim.x;
    const gk_u64 o = blockIdx.x / tiles;
    const gk_u64 k = (blockIdx.x % tiles) * blockDim.x + threadIdx.x;
    if (k >= inner || o >= outer) { return; }
    const gk_u64 c = blockIdx.y, j0 = c * chunk;
    const gk_u64 j1 = j0 + chunk < len ? j0 + chunk : len;
    A cv = A();
    if constexpr (FIRST) { if (center != nullptr) { cv = center[o * inner + k]; } }
    const In* p = in + o * len * inner + k;
    A acc = Op::init(); gk_i64 ia = -1;
    for (gk_u64 j = j0; j < j1; j += GK_AX_U) {
        In x[GK_AX_U];
        #pragma unroll
        for (int u = 0; u < GK_AX_U; ++u) { const gk_u64 jj = j + u; if (jj < j1) { x[u] = p[jj * inner]; } }
        #pragma unroll
        for (int u = 0; u < GK_AX_U; ++u) {
            const gk_u64 jj = j + u;
            if (jj < j1) { gk_ax_take<Op, FIRST>(acc, ia, x[u], cv, jj, in_idx, (o * len + jj) * inner + k); }
        }
    }
    const gk_u64 q = (o * chunks + c) * inner + k;
    out[q] = acc;
    if constexpr (Op::ARG) { out_idx[q] = ia; } }

/* Interleaved columns (first pass, rows 16-byte aligned and `inner` a multiple of N = 16 /
   sizeof(In)): thread i owns the N neighbouring columns k = N (i % w) (w = inner / N) of outer
   index o = i / (w m) and the rows r0 = (i / w) % m, r0 + m, r0 + 2m, ...; at every step the grid
   reads m consecutive whole rows, as a whole-array read does, GK_AX_I rows in flight per thread.
   Writes partials out[(o * m + r0) * inner + k + e]. */
#define GK_AX_I 8
template<typename Op, typename In>
__device__ __forceinline__ void gk_ax_inter(const In* in, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 m,
        typename Op::Acc* out, gk_i64* out_idx, const typename Op::Acc* center) {
    typedef typename Op::Acc A;
    constexpr int N = (int)(16 / sizeof(In));
    const gk_u64 w = inner / N;
    const gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= outer * m * w) { return; }
    const gk_u64 k = (i % w) * N, r0 = (i / w) % m, o = i / (w * m);
    A cv[N], acc[N]; gk_i64 ia[N];
    #pragma unroll
    for (int e = 0; e < N; ++e) {
        cv[e] = center != nullptr ? center[o * inner + k + e] : A();
        acc[e] = Op::init(); ia[e] = -1;
    }
    const gk_v16* p = reinterpret_cast<const gk_v16*>(in + o * len * inner + k);
    const gk_u64 row = w;  /* packs per row */
    /* Whole steps of GK_AX_I rows without conditions, so every load is issued before the first
       use; then the remaining rows one by one. */
    gk_u64 r = r0;
    for (; r + m * (GK_AX_I - 1) < len; r += m * GK_AX_I) {
        gk_pack<In> x[GK_AX_I];
        #pragma unroll
        for (int u = 0; u < GK_AX_I; ++u) { x[u].raw = p[(r + m * u) * row]; }
        #pragma unroll
        for (int u = 0; u < GK_AX_I; ++u) {
            #pragma unroll
            for (int e = 0; e < N; ++e) { gk_ax_take<Op, true>(acc[e], ia[e], x[u].v[e], cv[e], r + m * u, nullptr, 0); }
        }
    }
    for (; r < len; r += m) {
        gk_pack<In> x;
        x.raw = p[r * row];
        #pragma unroll
        for (int e = 0; e < N; ++e) { gk_ax_take<Op, true>(acc[e], ia[e], x.v[e], cv[e], r, nullptr, 0); }
    }
    const gk_u64 q = (o * m + r0) * inner + k;
    #pragma unroll
    for (int e = 0; e < N; ++e) {
        out[q + e] = acc[e];
        if constexpr (Op::ARG) { out_idx[q + e] = ia[e]; }
    } }

/* The fold of the interleaved layout's partials (outer, m, inner): block (o, column tile) takes 32
   columns, warp w of its GK_AX_FW folds partials w, w + GK_AX_FW, ... of each, and warp 0 combines
   the warps' results in warp order (a fixed order: deterministic). */
template<typename Op>
__device__ __forceinline__ void gk_ax_fold(const typename Op::Acc* in, const gk_i64* in_idx, gk_u64 outer,
        gk_u64 m, gk_u64 inner, typename Op::Acc* out, gk_i64* out_idx) {
    typedef typename Op::Acc A;
    __shared__ A sv[GK_AX_FW][33];
    __shared__ gk_i64 si[GK_AX_FW][33];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const gk_u64 tiles = (inner + 31) / 32;
    const gk_u64 o = blockIdx.x / tiles, k = (blockIdx.x % tiles) * 32 + lane;
    A acc = Op::init(); gk_i64 ia = -1;
    if (o < outer && k < inner) {
        for (gk_u64 c = warp; c < m; c += GK_AX_FW) {
            const gk_u64 at = (o * m + c) * inner + k;
            gk_i64 iv = 0;
            if constexpr (Op::ARG) { iv = in_idx[at]; }
            Op::comb(acc, ia, in[at], iv);
        }
    }
    sv[warp][lane] = acc; si[warp][lane] = ia;
    __syncthreads();
    if (warp == 0 && o < outer && k < inner) {
        acc = sv[0][lane]; ia = si[0][lane];
        #pragma unroll
        for (int w = 1; w < GK_AX_FW; ++w) { Op::comb(acc, ia, sv[w][lane], si[w][lane]); }
        out[o * inner + k] = acc;
        if constexpr (Op::ARG) { out_idx[o * inner + k] = ia; }
    } }

/* Variance of each long row in one launch (block b: row b), NumPy's two passes: the sum, the mean,
   the sum of squared deviations from it, divided by `dof`; the square root if `root`.
   gk_var_rows_regs holds the row in registers (GK_VAR_P 16-byte packs per thread and the unaligned
   ends), so the row is read from memory once; gk_var_rows_l2, for rows longer than that, reads it
   a second time (from L2: the block's row was just loaded). */
template<typename T>
__device__ __forceinline__ void gk_var_rows_regs(const T* in, gk_u64 outer, gk_u64 len, T dof, bool root, T* out) {
    constexpr int N = (int)(16 / sizeof(T));
    __shared__ T sv[32];
    __shared__ gk_i64 si[32];
    __shared__ T mean;
    const gk_u64 b = blockIdx.x;
    if (b >= outer) { return; }
    const T* p = in + b * len;
    gk_u64 v0 = ((16u - ((gk_u64)p & 15u)) & 15u) / sizeof(T);
    if (v0 > len) { v0 = len; }
    const gk_u64 packs = (len - v0) / N, v1 = v0 + packs * N;
    const gk_v16* pv = reinterpret_cast<const gk_v16*>(p + v0);
    const gk_u64 t = threadIdx.x, step = blockDim.x;
    /* Every load is issued before the first use: the packs past the row's end are zeros (a select,
       not a branch, so the compiler cannot pair each load with its use). */
    const gk_v16 zero = {0u, 0u, 0u, 0u};
    gk_pack<T> x[GK_VAR_P];
    #pragma unroll
    for (int u = 0; u < GK_VAR_P; ++u) { const gk_u64 q = t + step * u; x[u].raw = q < packs ? pv[q] : zero; }
    const bool has_head = t < v0, has_tail = v1 + t < len;
    const T head = has_head ? p[t] : (T)0, tail = has_tail ? p[v1 + t] : (T)0;
    T acc = head + tail; gk_i64 ia = -1;
    #pragma unroll
    for (int u = 0; u < GK_VAR_P; ++u) {
        #pragma unroll
        for (int e = 0; e < N; ++e) { acc += x[u].v[e]; }
    }
    gk_ax_block<gk_ax_sum<T>>(acc, ia, sv, si);
    if (threadIdx.x == 0) { mean = acc / (T)len; }
    __syncthreads();
    const T m = mean;
    acc = (T)0;
    if (has_head) { acc += (head - m) * (head - m); }
    if (has_tail) { acc += (tail - m) * (tail - m); }
    #pragma unroll
    for (int u = 0; u < GK_VAR_P; ++u) {
        if (t + step * u < packs) {
            #pragma unroll
            for (int e = 0; e < N; ++e) { const T d = x[u].v[e] - m; acc += d * d; }
        }
    }
    __syncthreads();  /* sv is reused */
    gk_ax_block<gk_ax_sum<T>>(acc, ia, sv, si);
    if (threadIdx.x == 0) { const T v = acc / dof; out[b] = root ? sqrt(v) : v; } }

template<typename T>
__device__ __forceinline__ void gk_var_rows_l2(const T* in, gk_u64 outer, gk_u64 len, T dof, bool root, T* out) {
    __shared__ T sv[32];
    __shared__ gk_i64 si[32];
    __shared__ T mean;
    const gk_u64 b = blockIdx.x;
    if (b >= outer) { return; }
    const T* p = in + b * len;
    const gk_u64 step = blockDim.x;
    T acc = (T)0; gk_i64 ia = -1;
    for (gk_u64 j = threadIdx.x; j < len; j += step * 4) {
        T x[4];
        #pragma unroll
        for (int u = 0; u < 4; ++u) { const gk_u64 jj = j + step * u; x[u] = jj < len ? p[jj] : (T)0; }
        #pragma unroll
        for (int u = 0; u < 4; ++u) { acc = gk_add(acc, x[u]); }
    }
    gk_ax_block<gk_ax_sum<T>>(acc, ia, sv, si);
    if (threadIdx.x == 0) { mean = acc / (T)len; }
    __syncthreads();
    const T m = mean;
    acc = (T)0;
    for (gk_u64 j = threadIdx.x; j < len; j += step * 4) {
        T x[4];
        #pragma unroll
        for (int u = 0; u < 4; ++u) { const gk_u64 jj = j + step * u; x[u] = jj < len ? p[jj] - m : (T)0; }
        #pragma unroll
        for (int u = 0; u < 4; ++u) { acc = gk_add(acc, x[u] * x[u]); }
    }
    __syncthreads();  /* sv is reused */
    gk_ax_block<gk_ax_sum<T>>(acc, ia, sv, si);
    if (threadIdx.x == 0) { const T v = acc / dof; out[b] = root ? sqrt(v) : v; } }

#define GK_ID (PROD ? (T)1 : (T)0)
/* Inclusive scan (sum, or product when PROD) of rows: block (row, segment y) scans its segment
   in tiles of blockDim elements, starting from the inclusive scan of the segments' totals before
   it (`sums`, (outer, gridDim.y), or none). */
template<typename T, bool PROD>
__device__ __forceinline__ T gk_scan_op(T a, T b) { if constexpr (PROD) { return gk_mul(a, b); } else { return gk_add(a, b); } }
template<typename T, bool PROD>
__device__ __forceinline__ void gk_scan_rows(const T* in, T* out, gk_u64 len, gk_u64 chunk, const T* sums) {
    __shared__ T warps[32];
    const gk_u64 row = blockIdx.x, c = blockIdx.y, j0 = c * chunk;
    const gk_u64 j1 = j0 + chunk < len ? j0 + chunk : len;
    T carry = (sums != nullptr && c > 0) ? sums[row * gridDim.y + c - 1] : GK_ID;
    const T* p = in + row * len;
    T* q = out + row * len;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (gk_u64 base = j0; base < j1; base += blockDim.x) {
        const gk_u64 j = base + threadIdx.x;
        T v = j < j1 ? p[j] : GK_ID;
        #pragma unroll
        for (int off = 1; off < 32; off <<= 1) { const T t = gk_shfl_up(v, off); if ((int)lane >= off) { v = gk_scan_op<T, PROD>(v, t); } }
        if (lane == 31u) { warps[warp] = v; }
        __syncthreads();
        if (warp == 0) {
            T w = lane < nw ? warps[lane] : GK_ID;
            #pragma unroll
            for (int off = 1; off < 32; off <<= 1) { const T t = gk_shfl_up(w, off); if ((int)lane >= off) { w = gk_scan_op<T, PROD>(w, t); } }
            if (lane < nw) { warps[lane] = w; }
        }
        __syncthreads();
        if (warp > 0) { v = gk_scan_op<T, PROD>(v, warps[warp - 1]); }
        if (j < j1) { q[j] = gk_scan_op<T, PROD>(carry, v); }
        carry = gk_scan_op<T, PROD>(carry, warps[nw - 1]);
        __syncthreads();
    } }

/* Inclusive scan of columns: thread (o, k) of segment y runs down its column. */
template<typename T, bool PROD>
__device__ __forceinline__ void gk_scan_cols(const T* in, T* out, gk_u64 outer, gk_u64 len, gk_u64 inner,
                                             gk_u64 chunk, const T* sums) {
    const gk_u64 t = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= outer * inner) { return; }
    const gk_u64 o = t / inner, k = t % inner, c = blockIdx.y, j0 = c * chunk;
    const gk_u64 j1 = j0 + chunk < len ? j0 + chunk : len;
    T acc = (sums != nullptr && c > 0) ? sums[(o * gridDim.y + c - 1) * inner + k] : GK_ID;
    const gk_u64 base = o * len * inner + k;
    for (gk_u64 j = j0; j < j1; ++j) { acc = gk_scan_op<T, PROD>(acc, in[base + j * inner]); out[base + j * inner] = acc; } }
"#;

/// The CUDA source of the axis module of element type `d`.
pub(crate) fn axes_source(d: DType) -> String {
    use std::fmt::Write;
    let t = d.cuda_name();
    let mut src = format!(
        "{PRELUDE}#define GK_VAR_P {VAR_PACKS}\n#define GK_AX_FW {FOLD_WARPS}\n{TEMPLATES}"
    );
    for op in AxisOp::ALL {
        if !op.applies_to(d) {
            continue;
        }
        let o = op.name();
        let acc = op.acc_dtype(d).cuda_name();
        let _ = writeln!(
            src,
            "extern \"C\" __global__ void ax1r_{o}(const {t}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ (void)inner; gk_ax_rows<gk_ax_{o}<{t}>, true>(in, ii, outer, len, chunk, chunks, out, oi, c); }}
extern \"C\" __global__ void ax1b_{o}(const {t}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ (void)ii; (void)inner; gk_ax_brows<gk_ax_{o}<{t}>>(in, outer, len, chunk, chunks, out, oi, c); }}
extern \"C\" __global__ void ax1c_{o}(const {t}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ gk_ax_cols<gk_ax_{o}<{t}>, true>(in, ii, outer, len, inner, chunk, chunks, out, oi, c); }}
extern \"C\" __global__ void ax1i_{o}(const {t}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ (void)ii; (void)chunk; gk_ax_inter<gk_ax_{o}<{t}>>(in, outer, len, inner, chunks, out, oi, c); }}
extern \"C\" __global__ void ax2r_{o}(const {acc}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ (void)inner; gk_ax_rows<gk_ax_{o}<{t}>, false>(in, ii, outer, len, chunk, chunks, out, oi, c); }}
extern \"C\" __global__ void ax2f_{o}(const {acc}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ (void)chunk; (void)chunks; (void)c; gk_ax_fold<gk_ax_{o}<{t}>>(in, ii, outer, len, inner, out, oi); }}
extern \"C\" __global__ void ax2c_{o}(const {acc}* in, const gk_i64* ii, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, gk_u64 chunks, {acc}* out, gk_i64* oi, const {acc}* c) {{ gk_ax_cols<gk_ax_{o}<{t}>, false>(in, ii, outer, len, inner, chunk, chunks, out, oi, c); }}"
        );
    }
    if d != DType::Bool {
        let _ = writeln!(
            src,
            "extern \"C\" __global__ void scan_rows(const {t}* in, {t}* out, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, const {t}* sums) {{ (void)outer; (void)inner; gk_scan_rows<{t}, false>(in, out, len, chunk, sums); }}
extern \"C\" __global__ void scan_cols(const {t}* in, {t}* out, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, const {t}* sums) {{ gk_scan_cols<{t}, false>(in, out, outer, len, inner, chunk, sums); }}
extern \"C\" __global__ void scanp_rows(const {t}* in, {t}* out, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, const {t}* sums) {{ (void)outer; (void)inner; gk_scan_rows<{t}, true>(in, out, len, chunk, sums); }}
extern \"C\" __global__ void scanp_cols(const {t}* in, {t}* out, gk_u64 outer, gk_u64 len, gk_u64 inner, gk_u64 chunk, const {t}* sums) {{ gk_scan_cols<{t}, true>(in, out, outer, len, inner, chunk, sums); }}"
        );
    }
    if d.is_float() {
        let _ = writeln!(
            src,
            "extern \"C\" __global__ void var_rows(const {t}* in, gk_u64 outer, gk_u64 len, double dof, gk_u64 root, {t}* out) {{ gk_var_rows_regs<{t}>(in, outer, len, ({t})dof, root != 0, out); }}
extern \"C\" __global__ void var_rows_l2(const {t}* in, gk_u64 outer, gk_u64 len, double dof, gk_u64 root, {t}* out) {{ gk_var_rows_l2<{t}>(in, outer, len, ({t})dof, root != 0, out); }}"
        );
    }
    src
}

/// NVRTC program name of the axis module of `d`.
fn program_name(d: DType) -> String {
    format!("gpukit_axes_{}", suffix(d))
}

/// Every element type's axis module as `(program name, source)`.
pub(super) fn programs() -> Vec<(String, String)> {
    super::table::ALL_DTYPES
        .iter()
        .map(|&d| (program_name(d), axes_source(d)))
        .collect()
}

/// The sources, generated once per element type (the module cache is keyed by source).
static SOURCES: [OnceLock<String>; 8] = [const { OnceLock::new() }; 8];
/// Each device's loaded axis modules, by element type.
static MODULES: PerDevice<[OnceLock<Arc<CompiledModule>>; 8]> = PerDevice::new();

/// The kernel `name` of `d`'s axis module on `backend` (compiled and loaded on first use).
pub(super) fn function(
    backend: &CudaBackend,
    d: DType,
    name: &str,
) -> Result<cudarc::driver::CudaFunction> {
    let i = super::table::dtype_index(d);
    let slot = &MODULES.get(backend)[i];
    let module = match slot.get() {
        Some(m) => m.clone(),
        None => {
            let source = SOURCES[i].get_or_init(|| axes_source(d));
            let m = backend.outside_capture_rules(|| backend.compile(&program_name(d), source))?;
            let _ = slot.set(m.clone());
            m
        }
    };
    module.function(name)
}

/// The reading address of a buffer (0 for none).
fn addr<T>(backend: &CudaBackend, s: Option<&CudaSlice<T>>) -> u64 {
    s.map_or(0, |s| s.device_ptr(backend.stream()).0)
}

/// The writing address of a buffer.
fn addr_mut<T>(backend: &CudaBackend, s: &mut CudaSlice<T>) -> u64 {
    s.device_ptr_mut(backend.stream()).0
}

/// How an axis of `len` elements is cut into segments for `layout`: `(chunks, chunk)`, so that
/// the launch fills the GPU with threads, each segment holding at least the layout's minimum.
fn segments(
    backend: &CudaBackend,
    layout: Layout,
    (outer, len, inner): (usize, usize, usize),
) -> (usize, usize) {
    let (per_segment, per_sm) = layout.threads(outer, inner);
    let target = backend.properties().multiprocessors.max(1) as usize * per_sm;
    let most = len.div_ceil(layout.min_per_chunk()).clamp(1, 65_535);
    let chunks = (target / per_segment.max(1)).clamp(1, most);
    let chunk = len.div_ceil(chunks).max(1);
    (len.div_ceil(chunk).max(1), chunk)
}

/// The row groups `m` of the interleaved layout for `(outer, len, inner)` of `d` at device
/// address `base`, reduced with `op`, or `None` where it does not apply: a single column, rows
/// that are not whole 16-byte packs, or too few columns to fill the GPU with [`INTER_MAX_GROUPS`]
/// groups. The groups make about [`INTER_THREADS_PER_SM`] threads per multiprocessor, no more
/// blocks than fit at once (the occupancy calculator's count for `ax1i`).
fn interleaved_groups(
    backend: &CudaBackend,
    (d, op): (DType, AxisOp),
    base: u64,
    (outer, len, inner): (usize, usize, usize),
) -> Result<Option<usize>> {
    let per_pack = 16 / d.size();
    if inner <= 1 || !inner.is_multiple_of(per_pack) || !base.is_multiple_of(16) {
        return Ok(None);
    }
    let packs = outer * (inner / per_pack);
    let sms = backend.properties().multiprocessors.max(1) as usize;
    if (sms * INTER_THREADS_PER_SM).div_ceil(packs) > INTER_MAX_GROUPS {
        return Ok(None);
    }
    let f = function(backend, d, &format!("ax1i_{}", op.name()))?;
    let resident = f
        .occupancy_max_active_blocks_per_multiprocessor(THREADS, 0, None)
        .map_err(|e| crate::backend::cuda::driver_err("occupancy of ax1i", e))?
        as usize;
    let per_sm = (INTER_THREADS_PER_SM / THREADS as usize).min(resident.max(1));
    let groups = (sms * per_sm * THREADS as usize / packs).max(1);
    Ok(Some(groups.min(len / INTER_MIN_ROWS).max(1)))
}

/// A grid size as CUDA takes it, or a shape error.
fn grid_dim(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&v| v <= i32::MAX as u32)
        .ok_or_else(|| Error::Shape(format!("{what}: {n} blocks exceed CUDA's grid")))
}

/// Queues one launch of the reduction kernel of `pass` (`1`: from elements, `2`: from
/// partials; block rows only for pass 1) in `layout` over `(outer, len, inner)` cut into `chunks`
/// segments of `chunk`; `ptrs` are the input, its indices (pass 2 of an arg-reduction), the
/// output, its indices and the centre.
fn launch_reduce(
    backend: &CudaBackend,
    (d, op, pass, layout): (DType, AxisOp, u8, Layout),
    (outer, len, inner): (usize, usize, usize),
    (chunks, chunk): (usize, usize),
    ptrs: [u64; 5],
) -> Result<()> {
    let code = match layout {
        Layout::WarpRows => 'r',
        Layout::BlockRows => 'b',
        Layout::Cols => 'c',
        Layout::Interleaved => 'i',
        Layout::Fold => 'f',
    };
    let name = format!("ax{pass}{code}_{}", op.name());
    let f = function(backend, d, &name)?;
    let (grid, block) = match layout {
        Layout::WarpRows => {
            let warps = (outer * chunks).div_ceil(WARPS as usize);
            (
                Dim3::new(grid_dim(warps, op.name())?, 1, 1),
                Dim3::new(THREADS, 1, 1),
            )
        }
        Layout::BlockRows => (
            Dim3::new(grid_dim(outer * chunks, op.name())?, 1, 1),
            Dim3::new(BLOCK_ROW_THREADS, 1, 1),
        ),
        Layout::Cols => {
            let tiles = grid_dim(outer * inner.div_ceil(COL_THREADS as usize), op.name())?;
            (
                Dim3::new(tiles, chunks as u32, 1),
                Dim3::new(COL_THREADS, 1, 1),
            )
        }
        Layout::Interleaved => {
            let per_pack = 16 / d.size();
            let threads = outer * chunks * (inner / per_pack);
            (
                Dim3::new(
                    grid_dim(threads.div_ceil(THREADS as usize), op.name())?,
                    1,
                    1,
                ),
                Dim3::new(THREADS, 1, 1),
            )
        }
        Layout::Fold => (
            Dim3::new(grid_dim(outer * inner.div_ceil(32), op.name())?, 1, 1),
            Dim3::new(32 * FOLD_WARPS, 1, 1),
        ),
    };
    let config = LaunchConfig {
        grid,
        block,
        shared_mem_bytes: 0,
    };
    let [input, in_idx, out, out_idx, center] = ptrs;
    // The parameters match the kernels' signature (see `axes_source`); every loop is bounded
    // by the sizes passed with them, and the buffers hold what those sizes say.
    let params = [
        input,
        in_idx,
        outer as u64,
        len as u64,
        inner as u64,
        chunk as u64,
        chunks as u64,
        out,
        out_idx,
        center,
    ];
    launch_values(backend, f.cu_function(), &config, &params, &name)
}

/// Reduces `input`, viewed as `(outer, len, inner)`, along its middle axis with `op`: the
/// `outer * inner` results (accumulator type `A`, see [`AxisOp::acc_dtype`]) and, for
/// arg-reductions, their indices. `center` (sqdev only) holds one value per result.
pub(crate) fn reduce_axis<T: Element, A: Element>(
    backend: &CudaBackend,
    op: AxisOp,
    input: &CudaSlice<T>,
    (outer, len, inner): (usize, usize, usize),
    center: Option<&CudaSlice<A>>,
) -> Result<(CudaSlice<A>, Option<CudaSlice<i64>>)> {
    if op.acc_dtype(T::DTYPE) != A::DTYPE || !op.applies_to(T::DTYPE) {
        return Err(Error::Other(format!(
            "internal: axis reduction {} of {} into {}",
            op.name(),
            T::DTYPE,
            A::DTYPE
        )));
    }
    let results = outer * inner;
    let arg = op.is_arg();
    // SAFETY: every result (and index) is written by the last launch below.
    let mut out = unsafe { backend.alloc::<A>(results)? };
    let mut out_idx = if arg {
        // SAFETY: as above.
        Some(unsafe { backend.alloc::<i64>(results)? })
    } else {
        None
    };
    if results == 0 {
        return Ok((out, out_idx));
    }
    let center = addr(backend, center);
    let base = addr(backend, Some(input));
    let (layout, (chunks, chunk)) =
        match interleaved_groups(backend, (T::DTYPE, op), base, (outer, len, inner))? {
            Some(groups) => (Layout::Interleaved, (groups, len)),
            None => {
                let layout = Layout::of(len, inner);
                (layout, segments(backend, layout, (outer, len, inner)))
            }
        };
    let kernel = (T::DTYPE, op, 1u8, layout);
    if chunks == 1 {
        let out_i = out_idx.as_mut().map_or(0, |s| addr_mut(backend, s));
        let ptrs = [base, 0, addr_mut(backend, &mut out), out_i, center];
        launch_reduce(backend, kernel, (outer, len, inner), (1, chunk), ptrs)?;
        return Ok((out, out_idx));
    }
    // SAFETY: every partial (and index) is written by the first launch.
    let mut partial = unsafe { backend.alloc::<A>(results * chunks)? };
    let mut partial_idx = if arg {
        // SAFETY: as above.
        Some(unsafe { backend.alloc::<i64>(results * chunks)? })
    } else {
        None
    };
    let part_i = partial_idx.as_mut().map_or(0, |s| addr_mut(backend, s));
    let ptrs = [base, 0, addr_mut(backend, &mut partial), part_i, center];
    launch_reduce(backend, kernel, (outer, len, inner), (chunks, chunk), ptrs)?;
    let out_i = out_idx.as_mut().map_or(0, |s| addr_mut(backend, s));
    let ptrs = [
        addr(backend, Some(&partial)),
        addr(backend, partial_idx.as_ref()),
        addr_mut(backend, &mut out),
        out_i,
        0,
    ];
    let second = match layout {
        Layout::Interleaved => Layout::Fold,
        _ if inner == 1 => Layout::WarpRows,
        _ => Layout::Cols,
    };
    launch_reduce(
        backend,
        (T::DTYPE, op, 2, second),
        (outer, chunks, inner),
        (1, chunks),
        ptrs,
    )?;
    Ok((out, out_idx))
}

/// The variance (or, with `root`, the standard deviation) of each of the `outer` rows of `len`
/// elements in `input`, dividing by `dof`, in one launch ([`BLOCK_ROWS_MIN`] and longer rows;
/// see the module doc). `T` is a float type.
pub(crate) fn var_rows<T: Element>(
    backend: &CudaBackend,
    input: &CudaSlice<T>,
    (outer, len): (usize, usize),
    dof: f64,
    root: bool,
) -> Result<CudaSlice<T>> {
    if !T::DTYPE.is_float() {
        return Err(Error::Other(format!("internal: var_rows of {}", T::DTYPE)));
    }
    // SAFETY: every row's result is written by the launch below.
    let mut out = unsafe { backend.alloc::<T>(outer)? };
    if outer == 0 {
        return Ok(out);
    }
    // One pack more than the row's whole packs covers its unaligned ends.
    let packs = len / (16 / T::DTYPE.size()) + 1;
    let in_registers = packs <= VAR_THREADS as usize * VAR_PACKS;
    let (name, threads) = if in_registers {
        let warps = packs.div_ceil(VAR_PACKS).div_ceil(32).max(2);
        ("var_rows", 32 * warps as u32)
    } else {
        ("var_rows_l2", 256)
    };
    let f = function(backend, T::DTYPE, name)?;
    let config = LaunchConfig {
        grid: Dim3::new(grid_dim(outer, "var")?, 1, 1),
        block: Dim3::new(threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // The parameters match `var_rows`' signature (see `axes_source`); its loops are bounded by
    // `outer` and `len`, and `input` holds `outer * len` elements.
    let params = [
        addr(backend, Some(input)),
        outer as u64,
        len as u64,
        dof.to_bits(),
        root as u64,
        addr_mut(backend, &mut out),
    ];
    launch_values(backend, f.cu_function(), &config, &params, name)?;
    Ok(out)
}

/// Queues one launch of the scan kernel over `(outer, len, inner)` cut into `chunks` segments
/// of `chunk`, each starting from the inclusive scan of the segments' sums at `sums` (0: none).
fn launch_scan(
    backend: &CudaBackend,
    (d, prod): (DType, bool),
    (outer, len, inner): (usize, usize, usize),
    (chunks, chunk): (usize, usize),
    [input, out, sums]: [u64; 3],
) -> Result<()> {
    let rows = inner == 1;
    let name = match (prod, rows) {
        (false, true) => "scan_rows",
        (false, false) => "scan_cols",
        (true, true) => "scanp_rows",
        (true, false) => "scanp_cols",
    };
    let f = function(backend, d, name)?;
    let grid_x = if rows {
        outer
    } else {
        (outer * inner).div_ceil(THREADS as usize)
    };
    let config = LaunchConfig {
        grid: Dim3::new(grid_dim(grid_x, "cumsum")?, chunks as u32, 1),
        block: Dim3::new(THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // The parameters match the kernels' signature (see `axes_source`); loops are bounded by
    // the sizes passed with them.
    let params = [
        input,
        out,
        outer as u64,
        len as u64,
        inner as u64,
        chunk as u64,
        sums,
    ];
    launch_values(backend, f.cu_function(), &config, &params, name)
}

/// The inclusive scan (sum, or product when `prod`: cumsum, cumprod) of `input` along the
/// middle of `(outer, len, inner)`.
pub(crate) fn scan_axis<T: Element>(
    backend: &CudaBackend,
    input: &CudaSlice<T>,
    (outer, len, inner): (usize, usize, usize),
    prod: bool,
) -> Result<CudaSlice<T>> {
    let total = if prod { AxisOp::Prod } else { AxisOp::Sum };
    let n = outer * len * inner;
    // SAFETY: every element is written by the last launch below.
    let mut out = unsafe { backend.alloc::<T>(n)? };
    if n == 0 {
        return Ok(out);
    }
    let rows = inner == 1;
    // The scan kernels: one block per (row, segment), or one thread per column and segment.
    let (per_segment, min_per_chunk) = if rows {
        (outer * THREADS as usize, 4096)
    } else {
        (outer * inner, 64)
    };
    let target = backend.properties().multiprocessors.max(1) as usize * ROW_THREADS_PER_SM;
    let most = len.div_ceil(min_per_chunk).clamp(1, 65_535);
    let chunks = (target / per_segment.max(1)).clamp(1, most);
    let chunk = len.div_ceil(chunks).max(1);
    let chunks = len.div_ceil(chunk).max(1);
    let shape = (outer, len, inner);
    if chunks == 1 {
        let ptrs = [addr(backend, Some(input)), addr_mut(backend, &mut out), 0];
        launch_scan(backend, (T::DTYPE, prod), shape, (1, chunk), ptrs)?;
        return Ok(out);
    }
    // The segments' sums (outer, chunks, inner), scanned along the segments.
    let mut sums = unsafe { backend.alloc::<T>(outer * chunks * inner)? };
    let ptrs = [
        addr(backend, Some(input)),
        0,
        addr_mut(backend, &mut sums),
        0,
        0,
    ];
    launch_reduce(
        backend,
        (T::DTYPE, total, 1, Layout::of(chunk, inner)),
        shape,
        (chunks, chunk),
        ptrs,
    )?;
    // SAFETY: written by the launch right after.
    let mut scanned = unsafe { backend.alloc::<T>(outer * chunks * inner)? };
    let ptrs = [
        addr(backend, Some(&sums)),
        addr_mut(backend, &mut scanned),
        0,
    ];
    launch_scan(
        backend,
        (T::DTYPE, prod),
        (outer, chunks, inner),
        (1, chunks),
        ptrs,
    )?;
    let ptrs = [
        addr(backend, Some(input)),
        addr_mut(backend, &mut out),
        addr(backend, Some(&scanned)),
    ];
    launch_scan(backend, (T::DTYPE, prod), shape, (chunks, chunk), ptrs)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element type's module compiles and has the kernels the launches name (no GPU
    /// needed; skipped visibly without libnvrtc).
    #[test]
    fn modules_have_the_kernels_launched() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        for &d in &super::super::table::ALL_DTYPES {
            let ptx = crate::backend::cuda::compile_ptx(&program_name(d), &axes_source(d), "sm_90")
                .unwrap_or_else(|e| panic!("{e}"));
            let entries = crate::backend::cuda::ptx_entries(&ptx);
            for op in AxisOp::ALL.into_iter().filter(|op| op.applies_to(d)) {
                for pass in ["ax1r", "ax1b", "ax1c", "ax1i", "ax2r", "ax2c", "ax2f"] {
                    let name = format!("{pass}_{}", op.name());
                    assert!(entries.contains(&name), "{d}: {name}");
                }
            }
            let scans = entries.iter().filter(|e| e.starts_with("scan_")).count();
            assert_eq!(scans, if d == DType::Bool { 0 } else { 2 }, "{d}");
            for var in ["var_rows", "var_rows_l2"] {
                assert_eq!(entries.contains(&var.to_string()), d.is_float(), "{d}");
            }
            let products = entries.iter().filter(|e| e.starts_with("scanp_")).count();
            assert_eq!(products, if d == DType::Bool { 0 } else { 2 }, "{d}");
        }
    }

    #[test]
    fn accumulators_and_domains() {
        assert_eq!(AxisOp::Count.acc_dtype(DType::F32), DType::U64);
        assert_eq!(AxisOp::Any.acc_dtype(DType::I32), DType::Bool);
        assert_eq!(AxisOp::ArgMax.acc_dtype(DType::U8), DType::U8);
        assert!(!AxisOp::SqDev.applies_to(DType::I64));
        assert!(!AxisOp::Sum.applies_to(DType::Bool));
        assert!(AxisOp::All.applies_to(DType::Bool));
    }
}
