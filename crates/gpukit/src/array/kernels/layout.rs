//! A CUDA kernel that copies a batch of column-major matrices (as cuSOLVER and cuBLAS read and
//! write them) into C order, optionally zeroing what lies below the diagonal (for `qr`'s R). The
//! same kernel turns C order into column-major (a C-order `m x n` matrix is the column-major
//! `n x m` transpose), and picks diagonals (rows = 1, leading dimension n + 1).

use super::table::{launch_module, ptr, ptr_mut};
use crate::backend::cuda::CudaBackend;
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::CudaSlice;

/// NVRTC program name of the module below.
const PROGRAM: &str = "gpukit_layout";

/// `gk_relayout_w{4,8}`: `out[b][r][c] = in[b * stride + c * ld + r]` (0 where `upper` and
/// `c < r`), over `batch x rows x cols` elements of 4 or 8 bytes.
const SOURCE: &str = r#"
typedef unsigned long long gk_u64;
template <typename W>
__device__ void gk_relayout(const W* in, W* out, gk_u64 batch, gk_u64 rows, gk_u64 cols,
                            gk_u64 ld, gk_u64 stride, gk_u64 upper) {
    gk_u64 total = batch * rows * cols;
    for (gk_u64 i = blockIdx.x * (gk_u64)blockDim.x + threadIdx.x; i < total;
         i += (gk_u64)gridDim.x * blockDim.x) {
        gk_u64 c = i % cols, t = i / cols;
        gk_u64 r = t % rows, b = t / rows;
        out[i] = (upper && c < r) ? (W)0 : in[b * stride + c * ld + r];
    }
}
extern "C" __global__ void gk_relayout_w4(const unsigned* in, unsigned* out, gk_u64 batch,
    gk_u64 rows, gk_u64 cols, gk_u64 ld, gk_u64 stride, gk_u64 upper) {
    gk_relayout(in, out, batch, rows, cols, ld, stride, upper);
}
extern "C" __global__ void gk_relayout_w8(const gk_u64* in, gk_u64* out, gk_u64 batch,
    gk_u64 rows, gk_u64 cols, gk_u64 ld, gk_u64 stride, gk_u64 upper) {
    gk_relayout(in, out, batch, rows, cols, ld, stride, upper);
}
"#;

/// `(program name, source)` of this module (for warming the kernel cache and NVRTC tests).
pub(super) fn program() -> (&'static str, &'static str) {
    (PROGRAM, SOURCE)
}

/// Where a batch of column-major matrices lies in a buffer: element `(r, c)` of matrix `b` is
/// at `offset + b * stride + c * ld + r`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColMajor {
    /// Matrices in the batch.
    pub batch: usize,
    /// Rows of each matrix.
    pub rows: usize,
    /// Columns of each matrix.
    pub cols: usize,
    /// Leading dimension: distance between columns (at least `rows`, or 1 when `rows == 1`).
    pub ld: usize,
    /// Distance between matrices.
    pub stride: usize,
    /// Where the first matrix starts.
    pub offset: usize,
}

impl ColMajor {
    /// The elements a matrix of this layout spans (0 for an empty one).
    fn span(&self) -> usize {
        if self.batch == 0 || self.rows == 0 || self.cols == 0 {
            return 0;
        }
        self.offset + (self.batch - 1) * self.stride + (self.cols - 1) * self.ld + self.rows
    }
}

/// Writes the matrices `src` describes in `input` to `out[out_offset..]` in C order
/// (`batch x rows x cols`), with zeros below the diagonal where `upper`.
pub(crate) fn to_c_order<T: Element>(
    backend: &CudaBackend,
    input: &CudaSlice<T>,
    src: ColMajor,
    out: &mut CudaSlice<T>,
    out_offset: usize,
    upper: bool,
) -> Result<()> {
    let total = src.batch * src.rows * src.cols;
    if total == 0 {
        return Ok(());
    }
    if src.span() > input.len() || out_offset + total > out.len() {
        return Err(Error::Other(format!(
            "internal: relayout of {src:?} reads past {} elements or writes past {}",
            input.len(),
            out.len()
        )));
    }
    let size = std::mem::size_of::<T>() as u64;
    let name = match size {
        4 => "gk_relayout_w4",
        8 => "gk_relayout_w8",
        _ => {
            return Err(Error::Other(format!(
                "internal: relayout of {size}-byte elements"
            )))
        }
    };
    // The addresses lie inside the buffers (checked above); the kernel reads only the `total`
    // elements of `src` and writes `total` elements from `out_offset`.
    let params = [
        ptr(backend, input) + src.offset as u64 * size,
        ptr_mut(backend, out) + out_offset as u64 * size,
        src.batch as u64,
        src.rows as u64,
        src.cols as u64,
        src.ld as u64,
        src.stride as u64,
        upper as u64,
    ];
    launch_module(backend, program(), name, total, &params)
}

#[cfg(test)]
mod tests {
    use super::ColMajor;

    #[test]
    fn both_widths_compile_with_nvrtc() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        let (name, source) = super::program();
        let ptx = crate::backend::cuda::compile_ptx(name, source, "sm_90").unwrap();
        let entries = crate::backend::cuda::ptx_entries(&ptx);
        for k in ["gk_relayout_w4", "gk_relayout_w8"] {
            assert!(entries.iter().any(|e| e == k), "{k} in {entries:?}");
        }
    }

    #[test]
    fn span_is_the_last_element_read_plus_one() {
        let m = |batch, rows, cols, ld, stride, offset| ColMajor {
            batch,
            rows,
            cols,
            ld,
            stride,
            offset,
        };
        assert_eq!(m(1, 3, 4, 3, 12, 0).span(), 12); // a full 3 x 4 column-major matrix
        assert_eq!(m(2, 2, 4, 3, 12, 0).span(), 12 + 9 + 2); // R's rows of a batch, ld 3
        assert_eq!(m(1, 1, 5, 6, 25, 0).span(), 25); // a 5 x 5 diagonal
        assert_eq!(m(1, 1, 1, 0, 0, 7).span(), 8);
        assert_eq!(m(0, 3, 3, 3, 9, 0).span(), 0);
    }
}
