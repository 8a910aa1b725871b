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

use super::op::{BinOp, CmpOp, ReduceOp, UnOp};
use crate::backend::cuda::CudaBackend;
use crate::element::{DType, Element};
use crate::error::Result;
use crate::kernel::cuda::{launch_values, PerDevice};
use crate::kernel::exports::{Dim3, LaunchConfig};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use std::sync::OnceLock;

/// Threads per block of every built-in kernel (a multiple of 32: the block reduction needs it).
const THREADS: u32 = 256;
/// Blocks per multiprocessor the grid of a one-element-per-thread loop (ramps, casts,
/// comparisons of wide types) is capped at: one wave at full occupancy (8 x 256 threads).
const LOOP_BLOCKS_PER_SM: u32 = 8;
/// Most blocks of a launch (CUDA's grid limit along x); larger arrays loop.
const MAX_BLOCKS: usize = i32::MAX as usize;
/// 16-byte packs a thread of a reduction loads per iteration (`GK_RED_UNROLL`).
const RED_UNROLL: usize = 8;
/// Blocks per multiprocessor of a reduction: 4 x 256 threads, each with 8 packs (128 bytes) in
/// flight. On an H100 over 2^28 f64 this reads at 103% of the copy rate; 8 blocks per
/// multiprocessor were as fast for sums but 10% slower for max (presumably fewer of them fit
/// at once with 8 packs in registers).
const RED_BLOCKS_PER_SM: u32 = 4;
/// Most blocks of a reduction: the partials buffer holds this many values of 8 bytes.
const MAX_PARTIALS: u32 = 4096;

/// Helpers shared by every built-in module.
const PRELUDE: &str = r#"
#define GK_RED_UNROLL 8
typedef unsigned long long gk_u64;
struct __align__(16) gk_v16 { unsigned int x, y, z, w; };
template<typename T> union gk_pack { gk_v16 raw; T v[16 / sizeof(T)]; };

template<typename T> struct gk_traits;
#define GK_INT(T, UT, SIGNED, LO, HI) template<> struct gk_traits<T> { \
    typedef UT U; static constexpr bool is_float = false; static constexpr bool is_signed = SIGNED; \
    static __device__ __forceinline__ T lo() { return LO; } static __device__ __forceinline__ T hi() { return HI; } };
GK_INT(unsigned char, unsigned char, false, 0, 255)
GK_INT(int, unsigned int, true, (-2147483647 - 1), 2147483647)
GK_INT(long long, unsigned long long, true, (-9223372036854775807LL - 1), 9223372036854775807LL)
GK_INT(unsigned int, unsigned int, false, 0u, 4294967295u)
GK_INT(unsigned long long, unsigned long long, false, 0ull, 18446744073709551615ull)
GK_INT(bool, bool, false, false, true)
template<> struct gk_traits<float> { typedef float U; static constexpr bool is_float = true; static constexpr bool is_signed = true;
    static __device__ __forceinline__ float lo() { return -__int_as_float(0x7f800000); }
    static __device__ __forceinline__ float hi() { return __int_as_float(0x7f800000); } };
template<> struct gk_traits<double> { typedef double U; static constexpr bool is_float = true; static constexpr bool is_signed = true;
    static __device__ __forceinline__ double lo() { return -__longlong_as_double(0x7ff0000000000000LL); }
    static __device__ __forceinline__ double hi() { return __longlong_as_double(0x7ff0000000000000LL); } };

/* Integer arithmetic wraps (done in the unsigned type); x / 0 and x % 0 give 0. */
template<typename T> __device__ __forceinline__ T gk_add(T a, T b) {
    if constexpr (gk_traits<T>::is_float) { return a + b; }
    else { typedef typename gk_traits<T>::U U; return (T)(U)((U)a + (U)b); } }
template<typename T> __device__ __forceinline__ T gk_sub(T a, T b) {
    if constexpr (gk_traits<T>::is_float) { return a - b; }
    else { typedef typename gk_traits<T>::U U; return (T)(U)((U)a - (U)b); } }
template<typename T> __device__ __forceinline__ T gk_mul(T a, T b) {
    if constexpr (gk_traits<T>::is_float) { return a * b; }
    else { typedef typename gk_traits<T>::U U; return (T)(U)((U)a * (U)b); } }
template<typename T> __device__ __forceinline__ T gk_neg(T a) {
    if constexpr (gk_traits<T>::is_float) { return -a; }
    else { typedef typename gk_traits<T>::U U; return (T)(U)((U)0 - (U)a); } }
template<typename T> __device__ __forceinline__ T gk_div(T a, T b) {
    if constexpr (gk_traits<T>::is_float) { return a / b; }
    else {
        if (b == (T)0) { return (T)0; }
        if constexpr (gk_traits<T>::is_signed) { if (b == (T)-1) { return gk_neg(a); } }
        return (T)(a / b);
    } }
__device__ __forceinline__ float gk_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double gk_fmod(double a, double b) { return fmod(a, b); }
template<typename T> __device__ __forceinline__ T gk_rem(T a, T b) {
    if constexpr (gk_traits<T>::is_float) { return gk_fmod(a, b); }
    else {
        if (b == (T)0) { return (T)0; }
        if constexpr (gk_traits<T>::is_signed) { if (b == (T)-1) { return (T)0; } }
        return (T)(a % b);
    } }
__device__ __forceinline__ float gk_fabs(float a) { return fabsf(a); }
__device__ __forceinline__ double gk_fabs(double a) { return fabs(a); }
template<typename T> __device__ __forceinline__ T gk_abs(T a) {
    if constexpr (gk_traits<T>::is_float) { return gk_fabs(a); }
    else if constexpr (gk_traits<T>::is_signed) { return a < (T)0 ? gk_neg(a) : a; }
    else { return a; } }
/* min/max propagate NaN, as Rust's f64::minimum would (and NumPy's min does). */
template<typename T> __device__ __forceinline__ T gk_min(T a, T b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }
template<typename T> __device__ __forceinline__ T gk_max(T a, T b) { return a != a ? a : (b != b ? b : (b > a ? b : a)); }

__device__ __forceinline__ float gk_sqrt(float a) { return sqrtf(a); }
__device__ __forceinline__ double gk_sqrt(double a) { return sqrt(a); }
__device__ __forceinline__ float gk_exp(float a) { return expf(a); }
__device__ __forceinline__ double gk_exp(double a) { return exp(a); }
__device__ __forceinline__ float gk_ln(float a) { return logf(a); }
__device__ __forceinline__ double gk_ln(double a) { return log(a); }
__device__ __forceinline__ float gk_sin(float a) { return sinf(a); }
__device__ __forceinline__ double gk_sin(double a) { return sin(a); }
__device__ __forceinline__ float gk_cos(float a) { return cosf(a); }
__device__ __forceinline__ double gk_cos(double a) { return cos(a); }
__device__ __forceinline__ float gk_tanh(float a) { return tanhf(a); }
__device__ __forceinline__ double gk_tanh(double a) { return tanh(a); }
__device__ __forceinline__ float gk_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double gk_pow(double a, double b) { return pow(a, b); }

/* Conversions as Rust's `as` (to bool is handled by the caller): float to integer truncates and
   saturates, NaN gives 0. */
template<typename To, typename From> __device__ __forceinline__ To gk_cast(From x) {
    if constexpr (gk_traits<From>::is_float && !gk_traits<To>::is_float) {
        if (x != x) { return (To)0; }
        if (x <= (From)gk_traits<To>::lo()) { return gk_traits<To>::lo(); }
        if (x >= (From)gk_traits<To>::hi()) { return gk_traits<To>::hi(); }
        return (To)x;
    } else {
        return (To)x;
    } }

/* Operands: an array (read in 16-byte packs when aligned) or a scalar broadcast to every element. */
template<typename T> struct gk_arr {
    const T* p;
    __device__ __forceinline__ bool aligned() const { return (((gk_u64)p) & 15) == 0; }
    __device__ __forceinline__ gk_pack<T> pack(gk_u64 i) const { gk_pack<T> r; r.raw = reinterpret_cast<const gk_v16*>(p)[i]; return r; }
    __device__ __forceinline__ T at(gk_u64 i) const { return p[i]; } };
template<typename T> struct gk_scalar {
    T s;
    __device__ __forceinline__ bool aligned() const { return true; }
    __device__ __forceinline__ gk_pack<T> pack(gk_u64) const {
        gk_pack<T> r;
        #pragma unroll
        for (int k = 0; k < (int)(16 / sizeof(T)); ++k) { r.v[k] = s; }
        return r; }
    __device__ __forceinline__ T at(gk_u64) const { return s; } };

/* Elementwise loops over 16-byte packs, one pack per thread and iteration. The launch gives
   every pack its own thread (a grid as large as the array: on an H100 this streams 6% faster than
   a grid of a few blocks per multiprocessor that loops), so the loop normally runs once. Elements
   past the last whole pack, or every element when a buffer is not 16-byte aligned or the output
   is narrower than the input, take the one-element loop. */
template<typename R, typename T, typename A, typename B, typename Op>
__device__ __forceinline__ void gk_ew2(A a, B b, R* out, gk_u64 n, Op op) {
    constexpr int N = 16 / sizeof(T);
    const gk_u64 tid = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    gk_u64 nv = 0;
    if constexpr (sizeof(R) == sizeof(T)) {
        if (a.aligned() && b.aligned() && (((gk_u64)out) & 15) == 0) {
            nv = n / N;
            for (gk_u64 i = tid; i < nv; i += stride) {
                const gk_pack<T> x = a.pack(i);
                const gk_pack<T> y = b.pack(i);
                gk_pack<R> z;
                #pragma unroll
                for (int k = 0; k < N; ++k) { z.v[k] = op(x.v[k], y.v[k]); }
                reinterpret_cast<gk_v16*>(out)[i] = z.raw;
            }
        }
    }
    for (gk_u64 i = nv * N + tid; i < n; i += stride) { out[i] = op(a.at(i), b.at(i)); } }

template<typename R, typename T, typename A, typename Op>
__device__ __forceinline__ void gk_ew1(A a, R* out, gk_u64 n, Op op) {
    constexpr int N = 16 / sizeof(T);
    const gk_u64 tid = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    gk_u64 nv = 0;
    if constexpr (sizeof(R) == sizeof(T)) {
        if (a.aligned() && (((gk_u64)out) & 15) == 0) {
            nv = n / N;
            for (gk_u64 i = tid; i < nv; i += stride) {
                const gk_pack<T> x = a.pack(i);
                gk_pack<R> z;
                #pragma unroll
                for (int k = 0; k < N; ++k) { z.v[k] = op(x.v[k]); }
                reinterpret_cast<gk_v16*>(out)[i] = z.raw;
            }
        }
    }
    for (gk_u64 i = nv * N + tid; i < n; i += stride) { out[i] = op(a.at(i)); } }

/* Warp shuffles of any element type (types narrower than int travel as int). */
template<typename T> __device__ __forceinline__ T gk_shfl_down(T v, int offset) {
    if constexpr (sizeof(T) < 4) { return (T)__shfl_down_sync(0xffffffffu, (int)v, offset); }
    else { return __shfl_down_sync(0xffffffffu, v, offset); } }

/* The block's values combined with `op` (valid in thread 0): within each warp by shuffles, then
   the warps' results in warp 0. The block size is a multiple of 32. Callers separate two uses
   by a __syncthreads(). */
template<typename T, typename Op>
__device__ __forceinline__ T gk_block_reduce(T v, T identity, Op op) {
    __shared__ T warps[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) { v = op(v, gk_shfl_down(v, off)); }
    if (lane == 0) { warps[warp] = v; }
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? warps[lane] : identity;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) { v = op(v, gk_shfl_down(v, off)); }
    }
    return v; }

/* A reduction in one launch. Each thread folds its elements in order, GK_RED_UNROLL packs per
   iteration (all loaded before any is folded, so that they are in flight together; packs of one
   iteration a block apart, so that a warp's loads are contiguous), the block combines its
   threads, and the last block to finish (counted in `counter`, which it resets to 0) combines the
   blocks' partials in block order: the result depends on the grid size only, never on timing. */
template<typename T, typename Op>
__device__ __forceinline__ void gk_reduce(const T* in, gk_u64 n, T* partial, unsigned int* counter,
                                          T* out, T identity, Op op) {
    constexpr int N = 16 / sizeof(T);
    constexpr int U = GK_RED_UNROLL;
    T acc = identity;
    gk_u64 done = 0;
    if ((((gk_u64)in) & 15) == 0) {
        const gk_u64 nv = n / N;
        const gk_u64 step = (gk_u64)gridDim.x * blockDim.x * U;
        for (gk_u64 base = (gk_u64)blockIdx.x * blockDim.x * U + threadIdx.x; base < nv; base += step) {
            gk_pack<T> x[U];
            #pragma unroll
            for (int u = 0; u < U; ++u) {
                const gk_u64 i = base + (gk_u64)u * blockDim.x;
                if (i < nv) { x[u].raw = reinterpret_cast<const gk_v16*>(in)[i]; }
            }
            #pragma unroll
            for (int u = 0; u < U; ++u) {
                if (base + (gk_u64)u * blockDim.x < nv) {
                    #pragma unroll
                    for (int k = 0; k < N; ++k) { acc = op(acc, x[u].v[k]); }
                }
            }
        }
        done = nv * N;
    }
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    for (gk_u64 i = done + (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        acc = op(acc, in[i]); }
    acc = gk_block_reduce(acc, identity, op);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) { *out = acc; }
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = acc;
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) { return; }
    __threadfence();
    T v = identity;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) { v = op(v, ((volatile T*)partial)[i]); }
    v = gk_block_reduce(v, identity, op);
    if (threadIdx.x == 0) { *out = v; *counter = 0u; } }

struct gk_op_add { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_add(a, b); } };
struct gk_op_sub { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_sub(a, b); } };
struct gk_op_mul { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_mul(a, b); } };
struct gk_op_div { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_div(a, b); } };
struct gk_op_rem { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_rem(a, b); } };
struct gk_op_min { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_min(a, b); } };
struct gk_op_max { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_max(a, b); } };
struct gk_op_sum { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_add(a, b); } };
struct gk_op_pow { template<typename T> __device__ __forceinline__ T operator()(T a, T b) const { return gk_pow(a, b); } };
struct gk_op_eq { template<typename T> __device__ __forceinline__ bool operator()(T a, T b) const { return a == b; } };
struct gk_op_ne { template<typename T> __device__ __forceinline__ bool operator()(T a, T b) const { return a != b; } };
struct gk_op_lt { template<typename T> __device__ __forceinline__ bool operator()(T a, T b) const { return a < b; } };
struct gk_op_le { template<typename T> __device__ __forceinline__ bool operator()(T a, T b) const { return a <= b; } };
struct gk_op_gt { template<typename T> __device__ __forceinline__ bool operator()(T a, T b) const { return a > b; } };
struct gk_op_ge { template<typename T> __device__ __forceinline__ bool operator()(T a, T b) const { return a >= b; } };
struct gk_op_neg { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_neg(a); } };
struct gk_op_abs { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_abs(a); } };
struct gk_op_sqrt { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_sqrt(a); } };
struct gk_op_exp { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_exp(a); } };
struct gk_op_ln { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_ln(a); } };
struct gk_op_sin { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_sin(a); } };
struct gk_op_cos { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_cos(a); } };
struct gk_op_tanh { template<typename T> __device__ __forceinline__ T operator()(T a) const { return gk_tanh(a); } };
struct gk_op_copy { template<typename T> __device__ __forceinline__ T operator()(T a) const { return a; } };
"#;

/// Short dtype suffix used in kernel names (`f32`, `i64`, `bool`, ...).
pub(crate) fn suffix(d: DType) -> &'static str {
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

/// The CUDA source of the module for element type `d`.
pub(crate) fn ops_source(d: DType) -> String {
    use std::fmt::Write;
    let t = d.cuda_name();
    let s = suffix(d);
    let mut src = String::from(PRELUDE);
    let mut k = |line: String| {
        src.push_str("extern \"C\" __global__ void ");
        src.push_str(&line);
        src.push('\n');
    };
    k(format!(
        "fill_{s}({t}* out, gk_u64 n, {t} v) {{ gk_ew1<{t}, {t}>(gk_scalar<{t}>{{v}}, out, n, gk_op_copy()); }}"
    ));
    k(format!(
        "copy_{s}(const {t}* a, {t}* out, gk_u64 n) {{ gk_ew1<{t}, {t}>(gk_arr<{t}>{{a}}, out, n, gk_op_copy()); }}"
    ));
    for op in CmpOp::ALL {
        let o = op.name();
        k(format!("{o}_aa_{s}(const {t}* a, const {t}* b, bool* out, gk_u64 n) {{ gk_ew2<bool, {t}>(gk_arr<{t}>{{a}}, gk_arr<{t}>{{b}}, out, n, gk_op_{o}()); }}"));
        k(format!("{o}_as_{s}(const {t}* a, {t} b, bool* out, gk_u64 n) {{ gk_ew2<bool, {t}>(gk_arr<{t}>{{a}}, gk_scalar<{t}>{{b}}, out, n, gk_op_{o}()); }}"));
    }
    if d != DType::Bool {
        if d.is_float() {
            k(format!("ramp_{s}({t}* out, gk_u64 n, double start, double step, double last) {{
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    for (gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{
        out[i] = ({t})(i + 1 == n && last == last ? last : __dadd_rn(start, __dmul_rn((double)i, step))); }} }}"));
        } else {
            k(format!(
                "ramp_{s}({t}* out, gk_u64 n, {t} start, {t} step) {{
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    for (gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{
        out[i] = gk_add(start, gk_mul(({t})i, step)); }} }}"
            ));
        }
        for op in BinOp::ALL {
            let o = op.name();
            k(format!("{o}_aa_{s}(const {t}* a, const {t}* b, {t}* out, gk_u64 n) {{ gk_ew2<{t}, {t}>(gk_arr<{t}>{{a}}, gk_arr<{t}>{{b}}, out, n, gk_op_{o}()); }}"));
            k(format!("{o}_as_{s}(const {t}* a, {t} b, {t}* out, gk_u64 n) {{ gk_ew2<{t}, {t}>(gk_arr<{t}>{{a}}, gk_scalar<{t}>{{b}}, out, n, gk_op_{o}()); }}"));
            k(format!("{o}_sa_{s}({t} a, const {t}* b, {t}* out, gk_u64 n) {{ gk_ew2<{t}, {t}>(gk_scalar<{t}>{{a}}, gk_arr<{t}>{{b}}, out, n, gk_op_{o}()); }}"));
        }
        let unary: Vec<UnOp> = if d.is_float() {
            UnOp::NUMERIC.into_iter().chain(UnOp::FLOAT).collect()
        } else {
            UnOp::NUMERIC.to_vec()
        };
        for op in unary {
            let o = op.name();
            k(format!("{o}_{s}(const {t}* a, {t}* out, gk_u64 n) {{ gk_ew1<{t}, {t}>(gk_arr<{t}>{{a}}, out, n, gk_op_{o}()); }}"));
        }
        if d.is_float() {
            k(format!("powf_as_{s}(const {t}* a, {t} b, {t}* out, gk_u64 n) {{ gk_ew2<{t}, {t}>(gk_arr<{t}>{{a}}, gk_scalar<{t}>{{b}}, out, n, gk_op_pow()); }}"));
        }
        for op in ReduceOp::ALL {
            let o = op.name();
            k(format!("{o}_{s}(const {t}* in, gk_u64 n, {t}* partial, unsigned int* counter, {t}* out, {t} identity) {{ gk_reduce<{t}>(in, n, partial, counter, out, identity, gk_op_{o}()); }}"));
        }
    }
    let _ = writeln!(src);
    src
}

/// The CUDA source of the conversion kernel `cast_<from>_<to>`.
pub(crate) fn cast_source(from: DType, to: DType) -> String {
    let (a, b) = (from.cuda_name(), to.cuda_name());
    let name = cast_name(from, to);
    let body = if to == DType::Bool {
        "out[i] = in[i] != 0;".to_string()
    } else {
        format!("out[i] = gk_cast<{b}, {a}>(in[i]);")
    };
    format!(
        "{PRELUDE}extern \"C\" __global__ void {name}(const {a}* in, {b}* out, gk_u64 n) {{
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    for (gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{ {body} }} }}
"
    )
}

fn cast_name(from: DType, to: DType) -> String {
    format!("cast_{}_{}", suffix(from), suffix(to))
}

/// Which built-in module a kernel lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Module {
    Ops(DType),
    Cast(DType, DType),
}

impl Module {
    /// NVRTC program name and source.
    fn program(self) -> (String, String) {
        match self {
            Module::Ops(d) => (format!("gpukit_ops_{}", suffix(d)), ops_source(d)),
            Module::Cast(a, b) => (format!("gpukit_{}", cast_name(a, b)), cast_source(a, b)),
        }
    }
}

/// Every element type, in [`dtype_index`] order.
const ALL_DTYPES: [DType; 8] = [
    DType::Bool,
    DType::U8,
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
];

fn dtype_index(d: DType) -> usize {
    match d {
        DType::Bool => 0,
        DType::U8 => 1,
        DType::I32 => 2,
        DType::I64 => 3,
        DType::U32 => 4,
        DType::U64 => 5,
        DType::F32 => 6,
        DType::F64 => 7,
    }
}

/// Which operands of a two-operand kernel are arrays (`a`) and which scalars (`s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Aa,
    As,
    Sa,
}

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Aa => "aa",
            Form::As => "as",
            Form::Sa => "sa",
        }
    }
}

/// One built-in kernel (its element type included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    Fill(DType),
    Copy(DType),
    Ramp(DType),
    Powf(DType),
    Reduce(ReduceOp, DType),
    Unary(UnOp, DType),
    Compare(CmpOp, Form, DType),
    Binary(BinOp, Form, DType),
    Cast(DType, DType),
}

/// Slots of one element type's ops module in the function table.
const OPS_SLOTS: usize = 48;
/// Slots of a device's function table: the ops modules, then the 64 casts.
const SLOTS: usize = ALL_DTYPES.len() * OPS_SLOTS + ALL_DTYPES.len() * ALL_DTYPES.len();

impl Builtin {
    /// The kernel's fixed place in a device's function table.
    fn slot(self) -> usize {
        let (d, k) = match self {
            Builtin::Fill(d) => (d, 0),
            Builtin::Copy(d) => (d, 1),
            Builtin::Ramp(d) => (d, 2),
            Builtin::Powf(d) => (d, 3),
            Builtin::Reduce(op, d) => (d, 4 + op as usize),
            Builtin::Unary(op, d) => (d, 7 + op as usize),
            Builtin::Compare(op, f, d) => (d, 15 + 2 * op as usize + f as usize),
            Builtin::Binary(op, f, d) => (d, 27 + 3 * op as usize + f as usize),
            Builtin::Cast(a, b) => {
                return ALL_DTYPES.len() * OPS_SLOTS
                    + dtype_index(a) * ALL_DTYPES.len()
                    + dtype_index(b)
            }
        };
        dtype_index(d) * OPS_SLOTS + k
    }

    /// The kernel's name in its module (and in profiles and errors).
    fn name(self) -> String {
        match self {
            Builtin::Fill(d) => format!("fill_{}", suffix(d)),
            Builtin::Copy(d) => format!("copy_{}", suffix(d)),
            Builtin::Ramp(d) => format!("ramp_{}", suffix(d)),
            Builtin::Powf(d) => format!("powf_as_{}", suffix(d)),
            Builtin::Reduce(op, d) => format!("{}_{}", op.name(), suffix(d)),
            Builtin::Unary(op, d) => format!("{}_{}", op.name(), suffix(d)),
            Builtin::Compare(op, f, d) => format!("{}_{}_{}", op.name(), f.name(), suffix(d)),
            Builtin::Binary(op, f, d) => format!("{}_{}_{}", op.name(), f.name(), suffix(d)),
            Builtin::Cast(a, b) => cast_name(a, b),
        }
    }

    fn module(self) -> Module {
        match self {
            Builtin::Fill(d)
            | Builtin::Copy(d)
            | Builtin::Ramp(d)
            | Builtin::Powf(d)
            | Builtin::Reduce(_, d)
            | Builtin::Unary(_, d)
            | Builtin::Compare(_, _, d)
            | Builtin::Binary(_, _, d) => Module::Ops(d),
            Builtin::Cast(a, b) => Module::Cast(a, b),
        }
    }
}

/// Every built-in module as `(program name, source)`.
pub(crate) fn all_sources() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = ALL_DTYPES
        .iter()
        .map(|&d| Module::Ops(d).program())
        .collect();
    for &a in &ALL_DTYPES {
        for &b in &ALL_DTYPES {
            v.push(Module::Cast(a, b).program());
        }
    }
    v
}

/// Compiles and loads every built-in module on `backend` (filling the PTX cache); returns how
/// many modules there are.
pub(crate) fn precompile(backend: &CudaBackend) -> Result<usize> {
    let sources = all_sources();
    for (name, source) in &sources {
        backend.compile(name, source)?;
    }
    Ok(sources.len())
}

/// A loaded built-in kernel.
struct Loaded {
    func: CudaFunction,
    name: String,
}

/// One device's built-in kernels, each in its fixed slot, loaded on first use.
struct Table(Box<[OnceLock<Loaded>]>);

impl Default for Table {
    fn default() -> Table {
        Table((0..SLOTS).map(|_| OnceLock::new()).collect())
    }
}

static FUNCTIONS: PerDevice<Table> = PerDevice::new();

/// The built-in kernel `k` on `backend`'s device: two atomic loads once it is loaded.
#[inline]
fn function(backend: &CudaBackend, k: Builtin) -> Result<&'static Loaded> {
    let slot = &FUNCTIONS.get(backend.ordinal()).0[k.slot()];
    match slot.get() {
        Some(f) => Ok(f),
        None => load(backend, k, slot),
    }
}

/// Compiles (through the backend's PTX and module caches) and loads `k`.
#[cold]
fn load(
    backend: &CudaBackend,
    k: Builtin,
    slot: &'static OnceLock<Loaded>,
) -> Result<&'static Loaded> {
    let (program, source) = k.module().program();
    let name = k.name();
    let func = backend.compile(&program, &source)?.function(&name)?;
    let _ = slot.set(Loaded { func, name });
    Ok(slot.get().expect("set just above"))
}

/// Queues `f` on `blocks` blocks of [`THREADS`] with its parameters as `u64` slots.
#[inline]
fn launch(backend: &CudaBackend, f: &Loaded, blocks: u32, params: &[u64]) -> Result<()> {
    let config = LaunchConfig {
        grid: Dim3::new(blocks, 1, 1),
        block: Dim3::new(THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // The parameters match the kernel's signature in its source (each caller below pushes them
    // in the declared order); every loop is bounded by the element count passed with them.
    launch_values(backend, f.func.cu_function(), &config, params, &f.name)
}

/// The device address of a buffer, for reading.
#[inline]
fn ptr<T>(backend: &CudaBackend, s: &CudaSlice<T>) -> u64 {
    s.device_ptr(backend.stream()).0
}

/// The device address of a buffer, for writing.
#[inline]
fn ptr_mut<T>(backend: &CudaBackend, s: &mut CudaSlice<T>) -> u64 {
    s.device_ptr_mut(backend.stream()).0
}

/// A scalar parameter's slot: its bytes in the low bytes of a `u64` (what the kernel reads).
#[inline]
fn bits<T: Element>(v: T) -> u64 {
    let mut b = 0u64;
    // SAFETY: every Element is plain data of at most 8 bytes.
    unsafe { (&mut b as *mut u64 as *mut T).write_unaligned(v) };
    b
}

/// Grid of a one-element-per-thread grid-stride loop over `work` items: enough blocks to fill
/// the GPU, capped so that threads loop on large arrays.
fn blocks_for(backend: &CudaBackend, work: usize) -> u32 {
    let cap = backend.properties().multiprocessors.max(1) * LOOP_BLOCKS_PER_SM;
    work.div_ceil(THREADS as usize).clamp(1, cap as usize) as u32
}

/// Grid of an elementwise kernel over `n` elements of `T` (`vector`: through 16-byte packs):
/// one thread per pack (see the kernels' source for why).
fn ew_blocks<T>(backend: &CudaBackend, n: usize, vector: bool) -> u32 {
    if !vector {
        return blocks_for(backend, n);
    }
    n.div_ceil(per_pack::<T>())
        .div_ceil(THREADS as usize)
        .clamp(1, MAX_BLOCKS) as u32
}

/// Elements per 16-byte pack.
fn per_pack<T>() -> usize {
    (16 / std::mem::size_of::<T>()).max(1)
}

/// A kernel operand: a device buffer or a scalar broadcast to every element.
pub(crate) enum Operand<'a, T: Element> {
    /// A device array.
    Array(&'a CudaSlice<T>),
    /// One value for every element.
    Scalar(T),
    /// A raw device pointer to at least `n` elements (an output buffer read in place).
    Raw(u64),
}

impl<T: Element> Operand<'_, T> {
    fn is_array(&self) -> bool {
        !matches!(self, Operand::Scalar(_))
    }

    fn param(&self, backend: &CudaBackend) -> u64 {
        match self {
            Operand::Array(s) => ptr(backend, s),
            Operand::Scalar(v) => bits(*v),
            Operand::Raw(p) => *p,
        }
    }
}

/// `out[i] = a[i] op b[i]` (either side may be a scalar).
pub(crate) fn binary<T: Element>(
    backend: &CudaBackend,
    op: BinOp,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    elementwise2(backend, |f| Builtin::Binary(op, f, T::DTYPE), a, b, out, n)
}

/// `out[i] = a[i].powf(p)`.
pub(crate) fn powf<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    p: T,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    elementwise2(
        backend,
        |_| Builtin::Powf(T::DTYPE),
        Operand::Array(a),
        Operand::Scalar(p),
        out,
        n,
    )
}

/// `out[i] = a[i] op b[i]` as `bool` (`b` may be a scalar).
pub(crate) fn compare<T: Element>(
    backend: &CudaBackend,
    op: CmpOp,
    a: &CudaSlice<T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<bool>,
    n: usize,
) -> Result<()> {
    elementwise2(
        backend,
        |f| Builtin::Compare(op, f, T::DTYPE),
        Operand::Array(a),
        b,
        out,
        n,
    )
}

fn elementwise2<T: Element, R: Element>(
    backend: &CudaBackend,
    kernel: impl FnOnce(Form) -> Builtin,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<R>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let form = match (a.is_array(), b.is_array()) {
        (true, true) => Form::Aa,
        (true, false) => Form::As,
        (false, true) => Form::Sa,
        (false, false) => {
            return Err(crate::error::Error::Other(
                "internal: an elementwise kernel needs at least one array operand".into(),
            ))
        }
    };
    let f = function(backend, kernel(form))?;
    let vector = std::mem::size_of::<R>() == std::mem::size_of::<T>();
    let blocks = ew_blocks::<T>(backend, n, vector);
    let params = [
        a.param(backend),
        b.param(backend),
        ptr_mut(backend, out),
        n as u64,
    ];
    launch(backend, f, blocks, &params)
}

/// `out[i] = op(a[i])`.
pub(crate) fn unary<T: Element>(
    backend: &CudaBackend,
    op: UnOp,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    simple1(backend, Builtin::Unary(op, T::DTYPE), a, out, n)
}

/// `out[i] = a[i]` (a device-to-device copy through the vector path).
pub(crate) fn copy<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    simple1(backend, Builtin::Copy(T::DTYPE), a, out, n)
}

fn simple1<T: Element>(
    backend: &CudaBackend,
    k: Builtin,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, k)?;
    let blocks = ew_blocks::<T>(backend, n, true);
    let params = [ptr(backend, a), ptr_mut(backend, out), n as u64];
    launch(backend, f, blocks, &params)
}

/// `out[i] = v`.
pub(crate) fn fill<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    v: T,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Fill(T::DTYPE))?;
    let blocks = ew_blocks::<T>(backend, n, true);
    let params = [ptr_mut(backend, out), n as u64, bits(v)];
    launch(backend, f, blocks, &params)
}

/// Floats: `out[i] = start + i * step` computed in f64, the last element `last` unless NaN.
pub(crate) fn ramp_float<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    start: f64,
    step: f64,
    last: f64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Ramp(T::DTYPE))?;
    let blocks = blocks_for(backend, n);
    let params = [
        ptr_mut(backend, out),
        n as u64,
        bits(start),
        bits(step),
        bits(last),
    ];
    launch(backend, f, blocks, &params)
}

/// Integers: `out[i] = start + i * step` with wrapping arithmetic.
pub(crate) fn ramp_int<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    start: T,
    step: T,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Ramp(T::DTYPE))?;
    let blocks = blocks_for(backend, n);
    let params = [ptr_mut(backend, out), n as u64, bits(start), bits(step)];
    launch(backend, f, blocks, &params)
}

/// `out[i] = a[i] as U`.
pub(crate) fn cast<T: Element, U: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<U>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Cast(T::DTYPE, U::DTYPE))?;
    let blocks = blocks_for(backend, n);
    let params = [ptr(backend, a), ptr_mut(backend, out), n as u64];
    launch(backend, f, blocks, &params)
}

/// A device's reduction scratch: the blocks' partials and the count of finished blocks (zero
/// between reductions: the last block resets it). Reductions on one device share it safely
/// because they run one after another on the device's one stream.
struct Scratch {
    partials: u64,
    counter: u64,
    _buffers: (CudaSlice<u64>, CudaSlice<u32>),
}

static SCRATCH: PerDevice<OnceLock<Scratch>> = PerDevice::new();

fn scratch(backend: &CudaBackend) -> Result<&'static Scratch> {
    let cell = SCRATCH.get(backend.ordinal());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in module compiles with NVRTC. Runs wherever libnvrtc loads (no GPU needed);
    /// with `GPUKIT_REQUIRE_NVRTC=1` a missing libnvrtc is a failure instead of a skip.
    #[test]
    fn builtin_kernels_compile_with_nvrtc() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        for (name, source) in all_sources() {
            let ptx = crate::backend::cuda::compile_ptx(&name, &source, "sm_90")
                .unwrap_or_else(|e| panic!("{e}"));
            let entries = crate::backend::cuda::ptx_entries(&ptx);
            assert!(!entries.is_empty(), "{name} defines no kernels");
        }
        let ptx =
            crate::backend::cuda::compile_ptx("gpukit_ops_f32", &ops_source(DType::F32), "sm_90")
                .unwrap();
        for name in [
            "add_aa_f32",
            "powf_as_f32",
            "sum_f32",
            "ramp_f32",
            "lt_as_f32",
            "fill_f32",
        ] {
            assert!(
                crate::backend::cuda::ptx_entries(&ptx)
                    .iter()
                    .any(|e| e == name),
                "{name}"
            );
        }
        assert!(
            ptx.contains("ld.global.v4"),
            "elementwise kernels use 16-byte loads"
        );
    }

    #[test]
    fn every_builtin_has_its_own_slot() {
        let mut all = Vec::new();
        for &d in &ALL_DTYPES {
            all.extend([
                Builtin::Fill(d),
                Builtin::Copy(d),
                Builtin::Ramp(d),
                Builtin::Powf(d),
            ]);
            all.extend(ReduceOp::ALL.map(|op| Builtin::Reduce(op, d)));
            all.extend(UnOp::NUMERIC.map(|op| Builtin::Unary(op, d)));
            all.extend(UnOp::FLOAT.map(|op| Builtin::Unary(op, d)));
            for f in [Form::Aa, Form::As] {
                all.extend(CmpOp::ALL.map(|op| Builtin::Compare(op, f, d)));
            }
            for f in [Form::Aa, Form::As, Form::Sa] {
                all.extend(BinOp::ALL.map(|op| Builtin::Binary(op, f, d)));
            }
            all.extend(ALL_DTYPES.map(|b| Builtin::Cast(d, b)));
        }
        let mut slots: Vec<usize> = all.iter().map(|k| k.slot()).collect();
        assert!(slots.iter().all(|&s| s < SLOTS));
        for k in &all {
            if let Builtin::Cast(..) = k {
                continue;
            }
            assert!(k.slot() % OPS_SLOTS < OPS_SLOTS, "{k:?}");
        }
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), all.len(), "two built-in kernels share a slot");
        // Names are those of the kernels in the module sources.
        let src = ops_source(DType::F64);
        for k in all.iter().filter(|k| k.module() == Module::Ops(DType::F64)) {
            let name = k.name();
            let declared = src.contains(&format!(" {name}("));
            // Float-only and numeric-only kernels exist where they apply.
            assert!(declared || matches!(k, Builtin::Unary(..)), "{name}");
        }
    }

    #[test]
    fn prelude_unrolls_match_the_launch_grids() {
        assert!(PRELUDE.contains(&format!("#define GK_RED_UNROLL {RED_UNROLL}\n")));
        assert_eq!(THREADS % 32, 0);
        assert_eq!(bits(1.5f32), 1.5f32.to_bits() as u64);
        assert_eq!(bits(-2.0f64), (-2.0f64).to_bits());
        assert_eq!(bits(true), 1);
    }

    #[test]
    fn compile_errors_carry_the_nvrtc_log() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        let e = crate::backend::cuda::compile_ptx(
            "broken",
            "extern \"C\" __global__ void k() { int x = ; }",
            "sm_90",
        )
        .unwrap_err();
        match e {
            crate::error::Error::Compile { name, log } => {
                assert_eq!(name, "broken");
                assert!(
                    log.contains("broken.cu(1)"),
                    "the log names the line: {log}"
                );
                assert!(log.contains("expected an expression"), "{log}");
            }
            other => panic!("expected a compile error, got {other}"),
        }
    }
}
