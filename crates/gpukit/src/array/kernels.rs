//! The built-in CUDA kernels behind array operations: their CUDA C++ source (one module per
//! element type, one per cast) and how they are launched.
//!
//! Elementwise kernels are grid-stride loops over 16-byte packs (four `f32`, two `f64`, sixteen
//! `u8` per load and store), with a scalar tail; reductions reduce a pack per step into a
//! register, then the block in shared memory, then the block partials in a second launch.

use super::op::{BinOp, CmpOp, ReduceOp, UnOp};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::element::{DType, Element};
use crate::error::Result;
use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Threads per block of every built-in kernel (a power of two: the block reduction needs it).
const THREADS: u32 = 256;

/// Helpers shared by every built-in module.
const PRELUDE: &str = r#"
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

template<typename T, typename Op>
__device__ __forceinline__ void gk_reduce(const T* in, gk_u64 n, T* out, T identity, Op op) {
    __shared__ T sh[256];
    constexpr int N = 16 / sizeof(T);
    const gk_u64 tid = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const gk_u64 stride = (gk_u64)gridDim.x * blockDim.x;
    T acc = identity;
    gk_u64 nv = 0;
    if ((((gk_u64)in) & 15) == 0) {
        nv = n / N;
        for (gk_u64 i = tid; i < nv; i += stride) {
            gk_pack<T> x; x.raw = reinterpret_cast<const gk_v16*>(in)[i];
            #pragma unroll
            for (int k = 0; k < N; ++k) { acc = op(acc, x.v[k]); }
        }
    }
    for (gk_u64 i = nv * N + tid; i < n; i += stride) { acc = op(acc, in[i]); }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) { sh[threadIdx.x] = op(sh[threadIdx.x], sh[threadIdx.x + s]); }
        __syncthreads();
    }
    if (threadIdx.x == 0) { out[blockIdx.x] = sh[0]; } }

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
            k(format!("{o}_{s}(const {t}* in, gk_u64 n, {t}* out, {t} identity) {{ gk_reduce<{t}>(in, n, out, identity, gk_op_{o}()); }}"));
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

/// Every built-in module as `(program name, source)`.
pub(crate) fn all_sources() -> Vec<(String, String)> {
    const ALL: [DType; 8] = [
        DType::Bool,
        DType::U8,
        DType::I32,
        DType::I64,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
    ];
    let mut v: Vec<(String, String)> = ALL
        .iter()
        .map(|&d| (format!("gpukit_ops_{}", suffix(d)), ops_source(d)))
        .collect();
    for &a in &ALL {
        for &b in &ALL {
            v.push((format!("gpukit_{}", cast_name(a, b)), cast_source(a, b)));
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

/// Loads (compiling once per device) the built-in kernel `name` of `module`.
fn function(backend: &CudaBackend, module: Module, name: &str) -> Result<CudaFunction> {
    type Cache = Mutex<HashMap<(usize, String), CudaFunction>>;
    static FUNCTIONS: OnceLock<Cache> = OnceLock::new();
    let cache = FUNCTIONS.get_or_init(Default::default);
    let key = (backend.ordinal(), name.to_string());
    if let Some(f) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let (program, source) = match module {
        Module::Ops(d) => (format!("gpukit_ops_{}", suffix(d)), ops_source(d)),
        Module::Cast(a, b) => (format!("gpukit_{}", cast_name(a, b)), cast_source(a, b)),
    };
    let f = backend.compile(&program, &source)?.function(name)?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, f.clone());
    Ok(f)
}

/// Blocks for `work` items of one thread each: enough to fill the GPU, capped so that
/// grid-stride loops give each thread several items on large arrays.
fn blocks_for(backend: &CudaBackend, work: usize) -> u32 {
    let cap = backend.properties().multiprocessors.max(1) * 8;
    let wanted = work.div_ceil(THREADS as usize).max(1);
    wanted.min(cap as usize) as u32
}

fn config(blocks: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
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

/// Launches built-in kernel `$f` on `$blocks` blocks with the arguments pushed by `$push`
/// (statements using `args`). A macro, so that the arguments' borrows are checked in place.
macro_rules! launch_builtin {
    ($backend:expr, $f:expr, $blocks:expr, |$args:ident| $push:block) => {{
        let stream = $backend.stream();
        let mut $args = stream.launch_builder(&$f);
        $push
        // SAFETY: every built-in kernel's parameters are pushed in its declared order and
        // types, and each loop is bounded by the element count passed with the buffers.
        unsafe { $args.launch(config($blocks)) }
            .map(|_| ())
            .map_err(|e| driver_err("launching a built-in kernel", e))
    }};
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
    elementwise2(backend, op.name(), a, b, out, n)
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
        "powf",
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
    elementwise2(backend, op.name(), Operand::Array(a), b, out, n)
}

fn elementwise2<T: Element, R: Element>(
    backend: &CudaBackend,
    stem: &str,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<R>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let is_array = |o: &Operand<'_, T>| !matches!(o, Operand::Scalar(_));
    let form = match (is_array(&a), is_array(&b)) {
        (true, true) => "aa",
        (true, false) => "as",
        (false, true) => "sa",
        (false, false) => {
            return Err(crate::error::Error::Other(
                "internal: an elementwise kernel needs at least one array operand".into(),
            ))
        }
    };
    let name = format!("{stem}_{form}_{}", suffix(T::DTYPE));
    let f = function(backend, Module::Ops(T::DTYPE), &name)?;
    let vectors = if std::mem::size_of::<R>() == std::mem::size_of::<T>() {
        n.div_ceil(per_pack::<T>())
    } else {
        n
    };
    let blocks = blocks_for(backend, vectors);
    let n64 = n as u64;
    launch_builtin!(backend, f, blocks, |args| {
        push_operand(&mut args, &a);
        push_operand(&mut args, &b);
        args.arg(out);
        args.arg(&n64);
    })
}

fn push_operand<'a, T: Element>(args: &mut cudarc::driver::LaunchArgs<'a>, o: &'a Operand<'a, T>) {
    match o {
        Operand::Array(s) => {
            args.arg(*s);
        }
        Operand::Scalar(v) => {
            args.arg(v);
        }
        Operand::Raw(p) => {
            args.arg(p);
        }
    }
}

/// `out[i] = op(a[i])`.
pub(crate) fn unary<T: Element>(
    backend: &CudaBackend,
    op: UnOp,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    simple1(
        backend,
        &format!("{}_{}", op.name(), suffix(T::DTYPE)),
        a,
        out,
        n,
    )
}

/// `out[i] = a[i]` (a device-to-device copy through the vector path).
pub(crate) fn copy<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    simple1(backend, &format!("copy_{}", suffix(T::DTYPE)), a, out, n)
}

fn simple1<T: Element>(
    backend: &CudaBackend,
    name: &str,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Module::Ops(T::DTYPE), name)?;
    let blocks = blocks_for(backend, n.div_ceil(per_pack::<T>()));
    let n64 = n as u64;
    launch_builtin!(backend, f, blocks, |args| {
        args.arg(a);
        args.arg(out);
        args.arg(&n64);
    })
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
    let f = function(
        backend,
        Module::Ops(T::DTYPE),
        &format!("fill_{}", suffix(T::DTYPE)),
    )?;
    let blocks = blocks_for(backend, n.div_ceil(per_pack::<T>()));
    let n64 = n as u64;
    launch_builtin!(backend, f, blocks, |args| {
        args.arg(out);
        args.arg(&n64);
        args.arg(&v);
    })
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
    let f = function(
        backend,
        Module::Ops(T::DTYPE),
        &format!("ramp_{}", suffix(T::DTYPE)),
    )?;
    let blocks = blocks_for(backend, n);
    let n64 = n as u64;
    launch_builtin!(backend, f, blocks, |args| {
        args.arg(out);
        args.arg(&n64);
        args.arg(&start);
        args.arg(&step);
        args.arg(&last);
    })
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
    let f = function(
        backend,
        Module::Ops(T::DTYPE),
        &format!("ramp_{}", suffix(T::DTYPE)),
    )?;
    let blocks = blocks_for(backend, n);
    let n64 = n as u64;
    launch_builtin!(backend, f, blocks, |args| {
        args.arg(out);
        args.arg(&n64);
        args.arg(&start);
        args.arg(&step);
    })
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
    let f = function(
        backend,
        Module::Cast(T::DTYPE, U::DTYPE),
        &cast_name(T::DTYPE, U::DTYPE),
    )?;
    let blocks = blocks_for(backend, n);
    let n64 = n as u64;
    launch_builtin!(backend, f, blocks, |args| {
        args.arg(a);
        args.arg(out);
        args.arg(&n64);
    })
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
    let f = function(
        backend,
        Module::Ops(T::DTYPE),
        &format!("{}_{}", op.name(), suffix(T::DTYPE)),
    )?;
    let blocks = blocks_for(backend, n.div_ceil(per_pack::<T>())).min(THREADS * 4);
    let n64 = n as u64;
    let mut out = backend.alloc_zeros::<T>(1)?;
    if blocks == 1 {
        launch_builtin!(backend, f, 1, |args| {
            args.arg(a);
            args.arg(&n64);
            args.arg(&mut out);
            args.arg(&identity);
        })?;
    } else {
        let mut partial = backend.alloc_zeros::<T>(blocks as usize)?;
        launch_builtin!(backend, f, blocks, |args| {
            args.arg(a);
            args.arg(&n64);
            args.arg(&mut partial);
            args.arg(&identity);
        })?;
        let parts = blocks as u64;
        launch_builtin!(backend, f, 1, |args| {
            args.arg(&partial);
            args.arg(&parts);
            args.arg(&mut out);
            args.arg(&identity);
        })?;
    }
    Ok(backend.download(&out, 1)?[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in module compiles with NVRTC. Runs wherever libnvrtc loads (no GPU needed);
    /// with `GPUKIT_REQUIRE_NVRTC=1` a missing libnvrtc is a failure instead of a skip.
    #[test]
    fn builtin_kernels_compile_with_nvrtc() {
        if let Err(why) = crate::backend::cuda::nvrtc_probe() {
            if std::env::var("GPUKIT_REQUIRE_NVRTC").as_deref() == Ok("1") {
                panic!("GPUKIT_REQUIRE_NVRTC=1 but {why}");
            }
            println!("skipped: {why}");
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
    fn compile_errors_carry_the_nvrtc_log() {
        if crate::backend::cuda::nvrtc_probe().is_err() {
            println!("skipped: libnvrtc not found");
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
