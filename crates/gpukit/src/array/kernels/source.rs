//! The CUDA C++ source of the built-in kernels: a prelude of helpers and functors shared by
//! every module, one module of operations per element type, one module per cast.
//! (Mostly CUDA C++ text in one raw string, hence its length.)

use crate::array::op::{BinOp, CmpOp, ReduceOp, UnOp};
use crate::element::DType;

/// Helpers shared by every built-in module.
pub(super) const PRELUDE: &str = r#"
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
        DType::Complex64 => "c64",
        DType::Complex128 => "c128",
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

pub(super) fn cast_name(from: DType, to: DType) -> String {
    format!("cast_{}_{}", suffix(from), suffix(to))
}
