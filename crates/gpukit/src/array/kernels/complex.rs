//! CUDA kernels for complex arrays (`complex64`, `complex128`), a small module outside the
//! built-in table: fills, conversions between `f32`/`f64`/complex (copies included), the real
//! and imaginary parts, magnitudes, conjugates, the four arithmetic operations and `eye`'s
//! diagonal. Complex scalars travel as two parameters (real, imaginary).

use super::table::{bits, launch_module, ptr, ptr_mut};
use crate::array::op::BinOp;
use crate::backend::cuda::CudaBackend;
use crate::element::{DType, Element, Scalar};
use crate::error::{Error, Result};
use cudarc::driver::CudaSlice;

/// NVRTC program name of the module below.
const PROGRAM: &str = "gpukit_complex";

/// The kernels, from templates: `gk_c64`/`gk_c128` have the layout of `Complex<f32>`/`<f64>`.
const SOURCE: &str = r#"
typedef unsigned long long gk_u64;
struct gk_c64 { float re, im; };
struct gk_c128 { double re, im; };
template <typename R> struct gk_cx;
template <> struct gk_cx<float> { typedef gk_c64 T; };
template <> struct gk_cx<double> { typedef gk_c128 T; };
#define GK_LOOP for (gk_u64 i = blockIdx.x * (gk_u64)blockDim.x + threadIdx.x; i < n; i += (gk_u64)gridDim.x * blockDim.x)

// Conversions: a value's (re, im) and back.
template <typename T> __device__ __forceinline__ double gk_re(T v) { return (double)v; }
template <typename T> __device__ __forceinline__ double gk_im(T) { return 0.0; }
template <> __device__ __forceinline__ double gk_re(gk_c64 v) { return v.re; }
template <> __device__ __forceinline__ double gk_im(gk_c64 v) { return v.im; }
template <> __device__ __forceinline__ double gk_re(gk_c128 v) { return v.re; }
template <> __device__ __forceinline__ double gk_im(gk_c128 v) { return v.im; }
template <typename T> __device__ __forceinline__ T gk_make(double re, double) { return (T)re; }
template <> __device__ __forceinline__ gk_c64 gk_make(double re, double im) { gk_c64 z; z.re = (float)re; z.im = (float)im; return z; }
template <> __device__ __forceinline__ gk_c128 gk_make(double re, double im) { gk_c128 z; z.re = re; z.im = im; return z; }

template <typename S, typename D>
__device__ void gk_cvt(const S* a, D* out, gk_u64 n) { GK_LOOP out[i] = gk_make<D>(gk_re(a[i]), gk_im(a[i])); }
#define GK_CVT(s, S, d, D) extern "C" __global__ void gk_cvt_##s##_##d(const S* a, D* o, gk_u64 n) { gk_cvt<S, D>(a, o, n); }
GK_CVT(f32, float, c64, gk_c64) GK_CVT(f64, double, c64, gk_c64) GK_CVT(c64, gk_c64, c64, gk_c64) GK_CVT(c128, gk_c128, c64, gk_c64)
GK_CVT(f32, float, c128, gk_c128) GK_CVT(f64, double, c128, gk_c128) GK_CVT(c64, gk_c64, c128, gk_c128) GK_CVT(c128, gk_c128, c128, gk_c128)
GK_CVT(c64, gk_c64, f32, float) GK_CVT(c64, gk_c64, f64, double) GK_CVT(c128, gk_c128, f32, float) GK_CVT(c128, gk_c128, f64, double)

template <typename R>
__device__ void gk_cfill(typename gk_cx<R>::T* out, gk_u64 n, R re, R im) { GK_LOOP { out[i].re = re; out[i].im = im; } }
template <typename R>
__device__ void gk_cdiag(typename gk_cx<R>::T* out, gk_u64 n, R re, R im) { GK_LOOP { out[i * (n + 1)].re = re; out[i * (n + 1)].im = im; } }

// Unary: the real part, the imaginary part, the magnitude, the conjugate.
template <typename R>
__device__ void gk_cpart(const typename gk_cx<R>::T* a, R* out, gk_u64 n, int which) {
    GK_LOOP {
        R re = a[i].re, im = a[i].im;
        out[i] = which == 0 ? re : which == 1 ? im : (R)hypot((double)re, (double)im);
    }
}
template <typename R>
__device__ void gk_cconj(const typename gk_cx<R>::T* a, typename gk_cx<R>::T* out, gk_u64 n) { GK_LOOP { out[i].re = a[i].re; out[i].im = -a[i].im; } }

// Binary: op 0..3 = + - * /; a scalar operand is a null pointer and its (sre, sim) pair.
template <typename R>
__device__ void gk_cbin(const typename gk_cx<R>::T* a, const typename gk_cx<R>::T* b, R sre, R sim,
                        bool scalar_left, typename gk_cx<R>::T* out, gk_u64 n, int op) {
    GK_LOOP {
        R xr, xi, yr, yi;
        if (b) { xr = a[i].re; xi = a[i].im; yr = b[i].re; yi = b[i].im; }
        else if (scalar_left) { xr = sre; xi = sim; yr = a[i].re; yi = a[i].im; }
        else { xr = a[i].re; xi = a[i].im; yr = sre; yi = sim; }
        R re, im;
        if (op == 0) { re = xr + yr; im = xi + yi; }
        else if (op == 1) { re = xr - yr; im = xi - yi; }
        else if (op == 2) { re = xr * yr - xi * yi; im = xr * yi + xi * yr; }
        else { R d = yr * yr + yi * yi; re = (xr * yr + xi * yi) / d; im = (xi * yr - xr * yi) / d; }
        out[i].re = re; out[i].im = im;
    }
}

#define GK_CX(c, R) \
extern "C" __global__ void gk_cfill_##c(gk_cx<R>::T* o, gk_u64 n, R re, R im) { gk_cfill<R>(o, n, re, im); } \
extern "C" __global__ void gk_cdiag_##c(gk_cx<R>::T* o, gk_u64 n, R re, R im) { gk_cdiag<R>(o, n, re, im); } \
extern "C" __global__ void gk_cpart_##c(const gk_cx<R>::T* a, R* o, gk_u64 n, int w) { gk_cpart<R>(a, o, n, w); } \
extern "C" __global__ void gk_cscale_##c(gk_cx<R>::T* o, gk_u64 n, R s) { GK_LOOP { o[i].re *= s; o[i].im *= s; } } \
extern "C" __global__ void gk_cconj_##c(const gk_cx<R>::T* a, gk_cx<R>::T* o, gk_u64 n) { gk_cconj<R>(a, o, n); } \
extern "C" __global__ void gk_cbin_##c(const gk_cx<R>::T* a, const gk_cx<R>::T* b, R sre, R sim, bool left, gk_cx<R>::T* o, gk_u64 n, int op) { gk_cbin<R>(a, b, sre, sim, left, o, n, op); }
GK_CX(c64, float)
GK_CX(c128, double)
"#;

/// `(program name, source)` of this module (for warming the PTX cache and NVRTC tests).
pub(super) fn program() -> (&'static str, &'static str) {
    (PROGRAM, SOURCE)
}

/// Short name of a dtype this module converts (`None`: not one of f32, f64, complex).
fn short(d: DType) -> Option<&'static str> {
    match d {
        DType::F32 => Some("f32"),
        DType::F64 => Some("f64"),
        DType::Complex64 => Some("c64"),
        DType::Complex128 => Some("c128"),
        _ => None,
    }
}

/// A complex value's parts as two kernel parameters of its real type.
fn parts<T: Element>(v: T) -> [u64; 2] {
    let (re, im) = match v.to_scalar() {
        Scalar::Complex(re, im) => (re, im),
        other => (other_re(other), 0.0),
    };
    if T::DTYPE == DType::Complex64 {
        [bits(re as f32), bits(im as f32)]
    } else {
        [bits(re), bits(im)]
    }
}

fn other_re(s: Scalar) -> f64 {
    match s {
        Scalar::Bool(b) => b as u8 as f64,
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
        Scalar::Complex(re, _) => re,
    }
}

/// Whether conversions between `a` and `b` involve a complex type, and if so whether this
/// module has them (between `f32`, `f64`, `complex64` and `complex128`).
pub(crate) fn check_cast(a: DType, b: DType) -> Result<()> {
    if (a.is_complex() || b.is_complex()) && (short(a).is_none() || short(b).is_none()) {
        return Err(Error::Other(format!(
            "astype from {a} to {b}: complex arrays convert only to and from float32, float64, \
             complex64 and complex128 (go through float64 first)"
        )));
    }
    Ok(())
}

/// `out[i] = a[i]` converted (real to complex: imaginary part 0; complex to real: the real
/// part, as NumPy's `astype`).
pub(crate) fn convert<T: Element, U: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<U>,
    n: usize,
) -> Result<()> {
    check_cast(T::DTYPE, U::DTYPE)?;
    let (Some(s), Some(d)) = (short(T::DTYPE), short(U::DTYPE)) else {
        return Err(Error::Other(format!(
            "internal: no complex conversion from {} to {}",
            T::DTYPE,
            U::DTYPE
        )));
    };
    if n == 0 {
        return Ok(());
    }
    let params = [ptr(backend, a), ptr_mut(backend, out), n as u64];
    launch_module(backend, program(), &format!("gk_cvt_{s}_{d}"), n, &params)
}

/// Suffix of a complex dtype's kernels.
fn cx(d: DType) -> &'static str {
    if d == DType::Complex64 {
        "c64"
    } else {
        "c128"
    }
}

/// `out[i] = v` for a complex `v`.
pub(crate) fn fill<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    v: T,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let [re, im] = parts(v);
    let params = [ptr_mut(backend, out), n as u64, re, im];
    launch_module(
        backend,
        program(),
        &format!("gk_cfill_{}", cx(T::DTYPE)),
        n,
        &params,
    )
}

/// `out[i * (n + 1)] = v` for `i < n` (the diagonal of an `n x n` complex matrix).
pub(crate) fn set_diagonal<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    v: T,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let [re, im] = parts(v);
    let params = [ptr_mut(backend, out), n as u64, re, im];
    launch_module(
        backend,
        program(),
        &format!("gk_cdiag_{}", cx(T::DTYPE)),
        n,
        &params,
    )
}

/// Which part [`part`] takes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Part {
    Re = 0,
    Im = 1,
    Abs = 2,
}

/// `out[i] = re(a[i])`, `im(a[i])` or `|a[i]|` (`T` complex, `R` its real type).
pub(crate) fn part<T: Element, R: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<R>,
    n: usize,
    which: Part,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let params = [
        ptr(backend, a),
        ptr_mut(backend, out),
        n as u64,
        which as u64,
    ];
    launch_module(
        backend,
        program(),
        &format!("gk_cpart_{}", cx(T::DTYPE)),
        n,
        &params,
    )
}

/// `out[i] *= s` for a real `s` (`T` complex; `s` in f64, narrowed for complex64).
pub(crate) fn scale<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    s: f64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let s = if T::DTYPE == DType::Complex64 {
        bits(s as f32)
    } else {
        bits(s)
    };
    let params = [ptr_mut(backend, out), n as u64, s];
    launch_module(
        backend,
        program(),
        &format!("gk_cscale_{}", cx(T::DTYPE)),
        n,
        &params,
    )
}

/// `out[i] = conj(a[i])`.
pub(crate) fn conj<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let params = [ptr(backend, a), ptr_mut(backend, out), n as u64];
    launch_module(
        backend,
        program(),
        &format!("gk_cconj_{}", cx(T::DTYPE)),
        n,
        &params,
    )
}

/// The second operand of [`binary`].
pub(crate) enum COperand<'a, T: Element> {
    /// An array of the same length.
    Array(&'a CudaSlice<T>),
    /// One value; `left`: it is the left operand (`s op a[i]`).
    Scalar { value: T, left: bool },
}

/// `out[i] = a[i] op b[i]` (or with a scalar on either side) for `+ - * /`.
pub(crate) fn binary<T: Element>(
    backend: &CudaBackend,
    op: BinOp,
    a: &CudaSlice<T>,
    b: COperand<'_, T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    let code = match op {
        BinOp::Add => 0u64,
        BinOp::Sub => 1,
        BinOp::Mul => 2,
        BinOp::Div => 3,
        BinOp::Rem => {
            return Err(Error::Other(
                "`%` is not defined for complex arrays (NumPy has no complex remainder)".into(),
            ))
        }
    };
    if n == 0 {
        return Ok(());
    }
    let (bp, [re, im], left) = match b {
        COperand::Array(s) => (ptr(backend, s), [0, 0], false),
        COperand::Scalar { value, left } => (0, parts(value), left),
    };
    let params = [
        ptr(backend, a),
        bp,
        re,
        im,
        left as u64,
        ptr_mut(backend, out),
        n as u64,
        code,
    ];
    launch_module(
        backend,
        program(),
        &format!("gk_cbin_{}", cx(T::DTYPE)),
        n,
        &params,
    )
}
