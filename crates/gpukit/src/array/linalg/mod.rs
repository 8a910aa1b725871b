//! Linear algebra on arrays (`gpukit::linalg`): matrix products with NumPy's shape rules, on a
//! GPU through cuBLAS and on the CPU through ndarray.
//!
//! Files: `plan` (the shape rules: output shape, broadcast batches as strided runs), `matmul`
//! (`Array::matmul` / `Array::dot`, the cuBLAS and CPU computations), `tests` (CPU results
//! against a naive triple loop; GPU results against the CPU's).

mod matmul;
mod plan;
#[cfg(test)]
mod tests;

pub use crate::backend::cuda::blas::BlasElement as MatmulElement;

use crate::array::Array;
use crate::error::Result;

/// `a @ b`: the same as [`Array::matmul`] (NumPy's `matmul`, batched and broadcast).
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::<f64>::ones([2, 3, 4])?;
/// let b = Array::<f64>::ones([4, 5])?;
/// let c = gpukit::linalg::matmul(&a, &b)?;
/// assert_eq!(c.shape(), &[2, 3, 5]);
/// assert_eq!(c.sum()?, 2.0 * 3.0 * 5.0 * 4.0);
/// # Ok(())
/// # }
/// ```
pub fn matmul<T: MatmulElement>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    a.matmul(b)
}

/// NumPy's `dot` for operands of at most two dimensions: the same as [`Array::dot`].
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let x = Array::from_vec(vec![3.0f32, 4.0], 2)?;
/// assert_eq!(gpukit::linalg::dot(&x, &x)?.item()?, 25.0);
/// # Ok(())
/// # }
/// ```
pub fn dot<T: MatmulElement>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    a.dot(b)
}

/// `alpha·(a @ b) + beta·c` as a new array (BLAS's GEMM with its epilogue: one cuBLAS call on a
/// GPU, after copying `c` into the result). `c` must have the shape of `a @ b` and live on the
/// same device. With `beta == 0`, `c`'s values are not used (not even NaN). To update `c`
/// itself without the copy, use [`matmul_add_into`].
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2])?;
/// let eye = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], [2, 2])?;
/// let bias = Array::<f32>::full([2, 2], 10.0)?;
/// let y = gpukit::linalg::matmul_add(&a, &eye, &bias, 2.0, 1.0)?; // 2·A·I + bias
/// assert_eq!(y.to_vec()?, vec![12.0, 14.0, 16.0, 18.0]);
/// # Ok(())
/// # }
/// ```
pub fn matmul_add<T: MatmulElement>(
    a: &Array<T>,
    b: &Array<T>,
    c: &Array<T>,
    alpha: T,
    beta: T,
) -> Result<Array<T>> {
    let plan = matmul::prepare("matmul_add", a, b, Some(c))?;
    let mut out = c.try_clone()?;
    matmul::gemm_into(&plan, a, b, &mut out, alpha, beta)?;
    Ok(out)
}

/// `c = alpha·(a @ b) + beta·c`, in place: the product and its epilogue in one cuBLAS call on a
/// GPU, nothing allocated. `c` must have the shape of `a @ b` and live on the same device.
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::<f64>::ones([3, 4])?;
/// let b = Array::<f64>::ones([4, 2])?;
/// let mut c = Array::<f64>::ones([3, 2])?;
/// gpukit::linalg::matmul_add_into(&a, &b, &mut c, 0.5, -1.0)?; // 0.5·4 − 1 = 1
/// assert_eq!(c.to_vec()?, vec![1.0; 6]);
/// # Ok(())
/// # }
/// ```
pub fn matmul_add_into<T: MatmulElement>(
    a: &Array<T>,
    b: &Array<T>,
    c: &mut Array<T>,
    alpha: T,
    beta: T,
) -> Result<()> {
    let plan = matmul::prepare("matmul_add_into", a, b, Some(c))?;
    matmul::gemm_into(&plan, a, b, c, alpha, beta)
}
