//! The CUDA kernels that turn cuRAND's raw output into the ranges `gpukit::random` promises:
//! uniform floats from (0, 1] to [low, high), and uniform bits to integers in [low, high).
//!
//! Integers use Lemire's multiply-shift on twice the output's width of random bits: the offset
//! into the range is the high word of `bits * range`, with 64 random bits per 32-bit value and
//! 128 per 64-bit value. No modulo and no rejection loop (each value costs a fixed number of
//! bits, so the stream position of every element is known); the bias is below 2^-32 (32-bit
//! types) and 2^-64 (64-bit types) of a value's probability.

use super::table::{launch_module, ptr, ptr_mut};
use crate::backend::cuda::CudaBackend;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use cudarc::driver::CudaSlice;

/// NVRTC program name of the module below.
const PROGRAM: &str = "gpukit_random";

/// The module: `gk_rand_uniform_{f32,f64}` and `gk_rand_int_{i32,i64,u32,u64}`.
const SOURCE: &str = r#"
typedef unsigned long long gk_u64;

#define GK_LOOP(n) for (gk_u64 i = blockIdx.x * (gk_u64)blockDim.x + threadIdx.x; i < (n); \
                        i += (gk_u64)gridDim.x * blockDim.x)

// cuRAND's uniform values are in (0, 1]; 1 - u is in [0, 1). Rounding of low + span * v can
// reach high: such a value becomes the largest one below high.
extern "C" __global__ void gk_rand_uniform_f32(float* out, gk_u64 n, float low, float span,
                                               float high) {
    GK_LOOP(n) {
        float x = fmaf(span, 1.0f - out[i], low);
        if (x >= high) x = nextafterf(high, low);
        if (x < low) x = low;
        out[i] = x;
    }
}

extern "C" __global__ void gk_rand_uniform_f64(double* out, gk_u64 n, double low, double span,
                                               double high) {
    GK_LOOP(n) {
        double x = fma(span, 1.0 - out[i], low);
        if (x >= high) x = nextafter(high, low);
        if (x < low) x = low;
        out[i] = x;
    }
}

// 32-bit types: offset = high word of (64 random bits) * range.
template <typename T>
__device__ void gk_rand_int32(const gk_u64* bits, T* out, gk_u64 n, gk_u64 low, gk_u64 range) {
    GK_LOOP(n) {
        gk_u64 off = __umul64hi(bits[i], range);
        out[i] = (T)(low + off);
    }
}

// 64-bit types: offset = high word of (128 random bits) * range, i.e. bits 128..191 of the
// 192-bit product of (hi:lo) and range.
template <typename T>
__device__ void gk_rand_int64(const gk_u64* bits, T* out, gk_u64 n, gk_u64 low, gk_u64 range) {
    GK_LOOP(n) {
        gk_u64 hi = bits[2 * i], lo = bits[2 * i + 1];
        gk_u64 top = __umul64hi(hi, range);
        gk_u64 mid = hi * range;
        gk_u64 carry_in = __umul64hi(lo, range);
        gk_u64 sum = mid + carry_in;
        top += (sum < mid) ? 1ull : 0ull;
        out[i] = (T)(low + top);
    }
}

extern "C" __global__ void gk_rand_int_i32(const gk_u64* b, int* o, gk_u64 n, gk_u64 l, gk_u64 r)
{ gk_rand_int32<int>(b, o, n, l, r); }
extern "C" __global__ void gk_rand_int_u32(const gk_u64* b, unsigned* o, gk_u64 n, gk_u64 l,
                                           gk_u64 r)
{ gk_rand_int32<unsigned>(b, o, n, l, r); }
extern "C" __global__ void gk_rand_int_i64(const gk_u64* b, long long* o, gk_u64 n, gk_u64 l,
                                           gk_u64 r)
{ gk_rand_int64<long long>(b, o, n, l, r); }
extern "C" __global__ void gk_rand_int_u64(const gk_u64* b, gk_u64* o, gk_u64 n, gk_u64 l,
                                           gk_u64 r)
{ gk_rand_int64<gk_u64>(b, o, n, l, r); }
"#;

/// `(program name, source)` of this module (for warming the PTX cache and NVRTC tests).
pub(super) fn program() -> (&'static str, &'static str) {
    (PROGRAM, SOURCE)
}

/// Random 64-bit words each value of `T` consumes in [`ints_from_bits`] (1 or 2).
pub(crate) fn words_per_int<T: Element>() -> usize {
    if std::mem::size_of::<T>() == 8 {
        2
    } else {
        1
    }
}

/// Queues `name` of the module above; the parameters match its signature and its loop is
/// bounded by `n`.
fn launch(backend: &CudaBackend, name: &str, n: usize, params: &[u64]) -> Result<()> {
    launch_module(backend, program(), name, n, params)
}

/// Maps `n` uniform values in (0, 1] in `out` to [low, high) in place (`T` is f32 or f64;
/// `high - low` must be finite and positive, checked by the caller).
pub(crate) fn uniform_in_place<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    low: f64,
    high: f64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let (name, params) = match T::DTYPE {
        DType::F32 => {
            let (l, h) = (low as f32, high as f32);
            let b = |v: f32| v.to_bits() as u64;
            ("gk_rand_uniform_f32", [b(l), b(h - l), b(h)])
        }
        DType::F64 => (
            "gk_rand_uniform_f64",
            [low.to_bits(), (high - low).to_bits(), high.to_bits()],
        ),
        d => {
            return Err(Error::Other(format!(
                "internal: uniform floats of dtype {d}"
            )))
        }
    };
    let out = ptr_mut(backend, out);
    launch(
        backend,
        name,
        n,
        &[out, n as u64, params[0], params[1], params[2]],
    )
}

/// Writes `n` integers in [low, low + range) into `out` from the random words in `bits`
/// ([`words_per_int`] per value). `low` is the value's bits sign- or zero-extended to 64;
/// `range` is `high - low` (at least 1).
pub(crate) fn ints_from_bits<T: Element>(
    backend: &CudaBackend,
    bits: &CudaSlice<u64>,
    out: &mut CudaSlice<T>,
    n: usize,
    low: u64,
    range: u64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let name = match T::DTYPE {
        DType::I32 => "gk_rand_int_i32",
        DType::U32 => "gk_rand_int_u32",
        DType::I64 => "gk_rand_int_i64",
        DType::U64 => "gk_rand_int_u64",
        d => {
            return Err(Error::Other(format!(
                "internal: random integers of dtype {d}"
            )))
        }
    };
    let params = [
        ptr(backend, bits),
        ptr_mut(backend, out),
        n as u64,
        low,
        range,
    ];
    launch(backend, name, n, &params)
}
