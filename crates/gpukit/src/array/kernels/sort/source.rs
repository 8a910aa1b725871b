//! The CUDA C++ of the sort kernels: one module per element type (its key functions, then the
//! chunk and step kernels of `sort` and `argsort`), and the transpose module.

use crate::element::DType;
use std::sync::OnceLock;

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
pub(super) fn suffix(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::U8 => "u8",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U32 => "u32",
        DType::U64 => "u64",
        DType::F32 => "f32",
        DType::F64 => "f64",
        // Sorting takes `Numeric` elements, which complex types are not.
        DType::Complex64 | DType::Complex128 => unreachable!("complex arrays are not sorted"),
    }
}

/// Bytes of one key of `d` (4 or 8).
pub(super) fn key_bytes(d: DType) -> usize {
    if d.size() == 8 {
        8
    } else {
        4
    }
}

/// `(program name, source)` of the sort module of element type `d`, made once per process.
pub(super) fn source(d: DType) -> &'static (String, String) {
    static SOURCES: [OnceLock<(String, String)>; 8] = [const { OnceLock::new() }; 8];
    let slot = match d {
        DType::Bool => 0,
        DType::U8 => 1,
        DType::I32 => 2,
        DType::I64 => 3,
        DType::U32 => 4,
        DType::U64 => 5,
        DType::F32 => 6,
        DType::F64 => 7,
        DType::Complex64 | DType::Complex128 => unreachable!("complex arrays are not sorted"),
    };
    SOURCES[slot].get_or_init(|| make_source(d))
}

/// The sort module of element type `d`: its types, key functions and the shared kernels.
fn make_source(d: DType) -> (String, String) {
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
pub(super) const TRANSPOSE_PROGRAM: &str = "gpukit_transpose";

/// `gk_transpose_w{1,4,8}(in, out, batches, r, c)`: each of `batches` C-order `r x c` matrices
/// of `in` to its transpose in `out`, through 32 x 32 tiles in shared memory (one tile per
/// block and iteration, blocks of 32 x 8 threads), the elements moved as bits of their width.
pub(super) const TRANSPOSE_SOURCE: &str = r#"
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
pub(in crate::array::kernels) fn programs() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = SORTABLE.iter().map(|&d| source(d).clone()).collect();
    v.push((TRANSPOSE_PROGRAM.to_string(), TRANSPOSE_SOURCE.to_string()));
    v
}
