//! Linear algebra on arrays (`gpukit::linalg`): matrix products with NumPy's shape rules, on a
//! GPU through cuBLAS and on the CPU through ndarray; decompositions (`svd`, `solve`, `inv`,
//! `det`, `qr`, `eigh`) through cuSOLVER on a GPU and faer on the CPU (feature `linalg`);
//! norms.
//!
//! Files: `plan` (the shape rules: output shape, broadcast batches as strided runs), `matmul`
//! (`Array::matmul` / `Array::dot`, the cuBLAS and CPU computations), `solver/` (the
//! decompositions), `norm`, `tests` (CPU results against a naive triple loop; GPU results
//! against the CPU's).

mod matmul;
mod norm;
mod plan;
mod solver;
#[cfg(test)]
mod tests;

pub use crate::backend::cuda::blas::BlasElement as MatmulElement;
pub use norm::{norm, norm_ord, NormOrd};
pub use solver::{
    cpu_available, det, eigh, inv, lstsq, qr, slogdet, solve, svd, svdvals, Eigh, Lstsq, Qr,
    SlogDet, SolverElement, Svd,
};

use crate::array::Array;
use crate::error::{Error, Result};

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

/// `alpha·(a @ b) + beta·c` as a new array: BLAS's GEMM with its epilogue, e.g. a layer's
/// `x @ w + bias`.
///
/// `c` has the shape of `a @ b`, or a suffix of it that is repeated, NumPy-style, over the
/// leading dimensions (a bias of shape `(n,)` added to every row of an `(m, n)` result, a 0-d
/// scalar to every element). On a GPU the result starts as a copy of `c` (a repeated `c` is
/// laid out by a rank-1 cuBLAS product `ones(r, 1) @ c`), then one cuBLAS GEMM adds
/// `alpha·(a @ b)` to `beta` times it; nothing leaves the device. `c` must live on the
/// operands' device. With `beta == 0`, `c`'s values are not used (not even NaN). To update an
/// output-shaped `c` itself, without the copy, use [`matmul_add_into`].
///
/// ```
/// use gpukit::prelude::*;
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2])?;
/// let eye = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], [2, 2])?;
/// let c = Array::<f32>::full([2, 2], 10.0)?;
/// let y = gpukit::linalg::matmul_add(&a, &eye, &c, 2.0, 1.0)?; // 2·A·I + C
/// assert_eq!(y.to_vec()?, vec![12.0, 14.0, 16.0, 18.0]);
///
/// let bias = Array::from_vec(vec![100.0f32, 200.0], 2)?;       // one value per column
/// let y = gpukit::linalg::matmul_add(&a, &eye, &bias, 1.0, 1.0)?;
/// assert_eq!(y.to_vec()?, vec![101.0, 202.0, 103.0, 204.0]);
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
    let what = "matmul_add";
    let plan = matmul::prepare(what, a, b, None)?;
    c.storage().ensure_usable()?;
    if c.device() != a.device() {
        return Err(Error::DeviceMismatch(format!(
            "`{what}`: A and B live on {} but C on {}; move one with .to_device(&..)",
            a.device(),
            c.device()
        )));
    }
    let shape = plan.out_shape.clone();
    let mut out = if c.shape() == shape.as_slice() {
        c.try_clone()?
    } else if shape.ends_with(c.shape()) {
        let size: usize = shape.iter().product();
        if size == 0 {
            Array::zeros_on(shape, &a.device())?
        } else {
            // `c` repeated r times: the outer product of a column of ones with `c` as a row.
            let ones = Array::ones_on([size / c.size(), 1], &a.device())?;
            ones.matmul(&c.reshape([1, c.size()])?)?.into_shape(shape)?
        }
    } else {
        return Err(Error::Shape(format!(
            "{what}: C has shape {} but {} @ {} has shape {}; C must have that shape or one of \
             its suffixes (e.g. a bias of shape ({},))",
            plan::fmt_shape(c.shape()),
            plan::fmt_shape(a.shape()),
            plan::fmt_shape(b.shape()),
            plan::fmt_shape(&shape),
            plan.n
        )));
    };
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
