//! A CUDA kernel that writes one value along the diagonal of a square matrix (for
//! `Array::eye`): `out[i * (n + 1)] = value` for `i < n`, one kernel per element width.

use super::table::{bits, launch_module, ptr_mut};
use crate::backend::cuda::CudaBackend;
use crate::element::Element;
use crate::error::Result;
use cudarc::driver::CudaSlice;

/// NVRTC program name of the module below.
const PROGRAM: &str = "gpukit_diagonal";

/// `gk_diag_w{1,4,8}`: the value's bits, whatever the element type of that width.
const SOURCE: &str = r#"
typedef unsigned long long gk_u64;
template <typename W>
__device__ void gk_diag(W* out, gk_u64 n, W v) {
    for (gk_u64 i = blockIdx.x * (gk_u64)blockDim.x + threadIdx.x; i < n;
         i += (gk_u64)gridDim.x * blockDim.x)
        out[i * (n + 1)] = v;
}
extern "C" __global__ void gk_diag_w1(unsigned char* o, gk_u64 n, unsigned char v) { gk_diag(o, n, v); }
extern "C" __global__ void gk_diag_w4(unsigned* o, gk_u64 n, unsigned v) { gk_diag(o, n, v); }
extern "C" __global__ void gk_diag_w8(gk_u64* o, gk_u64 n, gk_u64 v) { gk_diag(o, n, v); }
"#;

/// `(program name, source)` of this module (for warming the PTX cache and NVRTC tests).
pub(super) fn program() -> (&'static str, &'static str) {
    (PROGRAM, SOURCE)
}

/// Sets the diagonal of the `n x n` matrix in `out` (C order) to `value`.
pub(crate) fn set_diagonal<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    value: T,
) -> Result<()> {
    if T::DTYPE.is_complex() {
        return super::complex::set_diagonal(backend, out, n, value);
    }
    if n == 0 {
        return Ok(());
    }
    let name = match std::mem::size_of::<T>() {
        1 => "gk_diag_w1",
        4 => "gk_diag_w4",
        _ => "gk_diag_w8",
    };
    // The parameters match the kernel's signature; it writes only `i * (n + 1)` for `i < n`,
    // inside the n * n buffer.
    let params = [ptr_mut(backend, out), n as u64, bits(value)];
    launch_module(backend, program(), name, n, &params)
}
