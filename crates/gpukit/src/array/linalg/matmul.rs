//! Matrix products: `matmul` / `dot` and the GEMM form `alpha·A·B + beta·C`, computed by cuBLAS
//! on a CUDA device and by ndarray (matrixmultiply, in parallel over row blocks and batches) on
//! the CPU.

use super::plan::Plan;
use crate::array::{Array, Storage};
use crate::backend::cuda::blas::{cublas_err, BlasElement};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use cudarc::cublas::{GemmConfig, StridedBatchedConfig};
use cudarc::driver::CudaSlice;
use rayon::prelude::*;
use std::ffi::c_int;

/// Checks that `a` and `b` (and `c`) can be multiplied on one device, and returns the plan.
pub(crate) fn prepare<T: BlasElement>(
    what: &str,
    a: &Array<T>,
    b: &Array<T>,
    c: Option<&Array<T>>,
) -> Result<Plan> {
    a.storage().ensure_usable()?;
    b.storage().ensure_usable()?;
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch(format!(
            "operands of `{what}` live on {} and {}; move one with .to_device(&..)",
            a.device(),
            b.device()
        )));
    }
    let plan = Plan::new(what, a.shape(), b.shape())?;
    if let Some(c) = c {
        c.storage().ensure_usable()?;
        if c.device() != a.device() {
            return Err(Error::DeviceMismatch(format!(
                "`{what}`: A and B live on {} but C on {}; move one with .to_device(&..)",
                a.device(),
                c.device()
            )));
        }
        if c.shape() != plan.out_shape.as_slice() {
            return Err(Error::Shape(format!(
                "{what}: C has shape {} but {} @ {} has shape {}",
                super::plan::fmt_shape(c.shape()),
                super::plan::fmt_shape(a.shape()),
                super::plan::fmt_shape(b.shape()),
                super::plan::fmt_shape(&plan.out_shape)
            )));
        }
    }
    Ok(plan)
}

/// `out = alpha·(a @ b) + beta·out` for a prepared plan (`out` has the plan's shape, on the
/// operands' device). With `beta == 0`, `out` is not read (it may hold anything, even NaN).
pub(crate) fn gemm_into<T: BlasElement>(
    plan: &Plan,
    a: &Array<T>,
    b: &Array<T>,
    out: &mut Array<T>,
    alpha: T,
    beta: T,
) -> Result<()> {
    if plan.is_empty() {
        return Ok(());
    }
    if plan.k == 0 {
        // An empty sum: alpha·0 + beta·out.
        return if beta == <T as Element>::zero() {
            out.fill(<T as Element>::zero())
        } else {
            out.mul_in_place(beta)
        };
    }
    match (a.storage(), b.storage(), out.storage_mut()) {
        (Storage::Cpu(av), Storage::Cpu(bv), Storage::Cpu(cv)) => {
            cpu_gemm(plan, av, bv, cv, alpha, beta);
            Ok(())
        }
        (
            Storage::Cuda { backend, slice: av },
            Storage::Cuda { slice: bv, .. },
            Storage::Cuda { slice: cv, .. },
        ) => cuda_gemm(backend, plan, av, bv, cv, alpha, beta),
        _ => Err(Error::DeviceMismatch(format!(
            "matmul: operands and result on different backends ({}, {}, {})",
            a.device(),
            b.device(),
            out.device()
        ))),
    }
}

/// Rows of C per parallel task on the CPU: enough for matrixmultiply's blocking to pay off.
const CPU_ROW_BLOCK: usize = 64;

/// The CPU side: every product (in parallel), each split into row blocks (in parallel).
fn cpu_gemm<T: BlasElement>(plan: &Plan, a: &[T], b: &[T], c: &mut [T], alpha: T, beta: T) {
    use ndarray::linalg::general_mat_mul;
    use ndarray::{ArrayView2, ArrayViewMut2};
    let (m, k, n) = (plan.m, plan.k, plan.n);
    let offsets: Vec<(usize, usize)> = plan.products().map(|(ao, bo, _)| (ao, bo)).collect();
    let rows = CPU_ROW_BLOCK.max(m.div_ceil(rayon::current_num_threads().max(1)));
    c[..plan.batches * m * n]
        .par_chunks_mut(m * n)
        .zip(offsets.par_iter())
        .for_each(|(cm, &(ao, bo))| {
            let bm = ArrayView2::from_shape((k, n), &b[bo..bo + k * n]).expect("k·n elements");
            cm.par_chunks_mut(rows * n)
                .enumerate()
                .for_each(|(blk, cb)| {
                    let r0 = blk * rows;
                    let r = cb.len() / n;
                    let am = ArrayView2::from_shape((r, k), &a[ao + r0 * k..ao + (r0 + r) * k])
                        .expect("r·k elements");
                    let mut cmv = ArrayViewMut2::from_shape((r, n), cb).expect("r·n elements");
                    general_mat_mul(alpha, &am, &bm, beta, &mut cmv);
                });
        });
}

/// A dimension as cuBLAS's `int`, or an error naming it.
pub(super) fn dim(what: &str, v: usize) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| {
        Error::Shape(format!(
            "matmul: {what} = {v} is larger than cuBLAS accepts ({})",
            c_int::MAX
        ))
    })
}

/// The GPU side: one `gemmStridedBatched` per run, on the device's stream. cuBLAS is
/// column-major: the C-order `(m, k)·(k, n)` product is the column-major `(n, k)·(k, m)` product
/// of the same memory with the operands swapped (Cᵀ = Bᵀ·Aᵀ), so nothing is transposed or copied.
fn cuda_gemm<T: BlasElement>(
    backend: &CudaBackend,
    plan: &Plan,
    a: &CudaSlice<T>,
    b: &CudaSlice<T>,
    c: &mut CudaSlice<T>,
    alpha: T,
    beta: T,
) -> Result<()> {
    let blas = backend.blas()?;
    backend
        .context()
        .bind_to_thread()
        .map_err(|e| driver_err("making the context current for cuBLAS", e))?;
    let (m, k, n) = (plan.m, plan.k, plan.n);
    let gemm = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: dim("n", n)?,
        n: dim("m", m)?,
        k: dim("k", k)?,
        alpha,
        lda: dim("n", n)?,
        ldb: dim("k", k)?,
        beta,
        ldc: dim("n", n)?,
    };
    let stride = |s: usize| {
        i64::try_from(s).map_err(|_| Error::Shape(format!("matmul: batch stride {s} too large")))
    };
    for run in &plan.runs {
        // At most c_int::MAX matrices per call.
        let mut done = 0;
        while done < run.count {
            let count = (run.count - done).min(c_int::MAX as usize);
            let (ao, bo, co) = (
                run.a + done * run.stride_a,
                run.b + done * run.stride_b,
                run.c + done * m * n,
            );
            let cfg = StridedBatchedConfig {
                gemm,
                batch_size: count as c_int,
                stride_a: stride(run.stride_b)?,
                stride_b: stride(run.stride_a)?,
                stride_c: stride(m * n)?,
            };
            let a_len = (count - 1) * run.stride_a + m * k;
            let b_len = (count - 1) * run.stride_b + k * n;
            let c_len = count * m * n;
            let (av, bv) = (a.slice(ao..ao + a_len), b.slice(bo..bo + b_len));
            let mut cv = c.slice_mut(co..co + c_len);
            // SAFETY: the views hold exactly the elements the configuration reads and writes:
            // `count` matrices of k·n (B, swapped in as cuBLAS's A), m·k (A) and m·n (C) elements
            // at the given strides, with leading dimensions n, k and n.
            unsafe { T::gemm_strided_batched(&blas, cfg, &bv, &av, &mut cv) }
                .map_err(|e| cublas_err("in gemmStridedBatched", e))?;
            done += count;
        }
    }
    Ok(())
}

impl<T: BlasElement> Array<T> {
    /// The matrix product `self @ other`, as NumPy's `matmul` (and CuPy's, on the GPU through
    /// cuBLAS): 2-D × 2-D is the matrix product; a 1-D operand is a row (on the left) or a
    /// column (on the right) whose dimension is dropped from the result, so 1-D · 1-D is the
    /// inner product as a 0-d array ([`Array::item`] reads it); dimensions before the last two
    /// are batch dimensions that broadcast, `(..., m, k) @ (..., k, n) -> (..., m, n)`.
    ///
    /// For `f32` and `f64`. Both operands must be on one device ([`Error::DeviceMismatch`]
    /// otherwise; nothing is copied behind your back) and their inner dimensions must agree
    /// ([`Error::Shape`] naming both shapes).
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])?;
    /// let b = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], [3, 2])?;
    /// let c = a.matmul(&b)?;
    /// assert_eq!(c.shape(), &[2, 2]);
    /// assert_eq!(c.to_vec()?, vec![4.0, 5.0, 10.0, 11.0]);
    ///
    /// let x = Array::from_vec(vec![1.0f32, 1.0, 1.0], 3)?;
    /// assert_eq!(a.matmul(&x)?.to_vec()?, vec![6.0, 15.0]); // (2, 3) @ (3,) -> (2,)
    /// assert_eq!(x.matmul(&x)?.item()?, 3.0);                // (3,) @ (3,) -> ()
    ///
    /// let batch = Array::<f32>::ones([4, 2, 3])?;            // 4 matrices, one B for all
    /// assert_eq!(batch.matmul(&b)?.shape(), &[4, 2, 2]);
    ///
    /// let e = a.matmul(&a).unwrap_err();
    /// assert!(e.to_string().contains("(2, 3) @ (2, 3): inner dimensions 3 and 2 differ"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn matmul(&self, other: &Array<T>) -> Result<Array<T>> {
        product("matmul", self, other)
    }

    /// NumPy's `dot` for operands of at most two dimensions, where it is [`Array::matmul`]:
    /// the inner product of two vectors (a 0-d array), matrix × vector, vector × matrix,
    /// matrix × matrix. For more dimensions NumPy's `dot` is a different product (over the last
    /// axis of `self` and the second-to-last of `other`, without broadcasting); it is refused
    /// with an error pointing to `matmul`, which batches.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], 3)?;
    /// let y = Array::from_vec(vec![4.0f64, 5.0, 6.0], 3)?;
    /// assert_eq!(x.dot(&y)?.item()?, 32.0);
    /// assert!(Array::<f64>::ones([2, 2, 3])?.dot(&y).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn dot(&self, other: &Array<T>) -> Result<Array<T>> {
        if self.ndim() > 2 || other.ndim() > 2 {
            return Err(Error::Shape(format!(
                "dot: {} @ {}: `dot` of arrays with more than 2 dimensions is NumPy's \
                 sum-product over other axes and is not provided; use `matmul` for batched \
                 matrix products",
                super::plan::fmt_shape(self.shape()),
                super::plan::fmt_shape(other.shape())
            )));
        }
        product("dot", self, other)
    }
}

/// A new array holding `what(a, b)`.
fn product<T: BlasElement>(what: &str, a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    let plan = prepare(what, a, b, None)?;
    let size = plan.batches * plan.m * plan.n;
    let mut out = match a.storage() {
        Storage::Cpu(_) => Array::from_storage(
            plan.out_shape.clone(),
            Storage::Cpu(vec![<T as Element>::zero(); size]),
        )?,
        Storage::Cuda { backend, .. } => {
            // SAFETY: cuBLAS writes every element (beta = 0 reads none); with k = 0 or nothing to
            // compute, `gemm_into` fills it (or there is nothing to fill).
            let slice = unsafe { backend.alloc::<T>(size)? };
            Array::from_storage(
                plan.out_shape.clone(),
                Storage::Cuda {
                    backend: backend.clone(),
                    slice,
                },
            )?
        }
    };
    gemm_into(
        &plan,
        a,
        b,
        &mut out,
        <T as Element>::one(),
        <T as Element>::zero(),
    )?;
    Ok(out)
}
