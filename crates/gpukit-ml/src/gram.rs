//! Cross products `aᵀ · b` of two tall C-order matrices (`(n, p)` and `(n, q)`, n rows each),
//! the heart of the normal equations, PCA's covariance and Newton's Hessian, and
//! [`LinalgFloat`], the element types of the linear models (`f32`, `f64`).
//!
//! `x.t().matmul(&y)` would first copy the transpose of `x` (an `(n, p)` copy: for the
//! 10M x 64 `f64` benchmark 5 GB written and read again). Here one cuBLAS GEMM reads both
//! operands where they lie: a C-order `(n, p)` matrix is, to column-major cuBLAS, its
//! transpose `(p, n)` with leading dimension `p`, so `aᵀ · b` (C order, `(p, q)`) is the
//! column-major `(q, p)` product `bᵀ(col) · a(col)ᵀ`: `gemm(N, T)` on the two buffers as they
//! are. The handle is cuBLAS's, on gpukit's stream of the device (so the product is ordered with
//! gpukit's work), created once per device. On the CPU backend the transpose is a view and
//! gpukit's CPU GEMM reads it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use gpukit::cudarc::cublas::result::CublasError;
use gpukit::cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use gpukit::cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use gpukit::cudarc::driver::{CudaView, CudaViewMut};
use gpukit::linalg::SolverElement;
use gpukit::{Array, Device, Element, Float};

use crate::error::{MlError, Result};
use crate::float::MlFloat;

mod sealed {
    /// Only this crate implements [`super::LinalgFloat`].
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The element types of the linear models and PCA: `f32` and `f64` (gpukit's matrix products
/// and decompositions, cuBLAS/cuSOLVER on a GPU). Sealed.
pub trait LinalgFloat: Float + SolverElement + MlFloat + sealed::Sealed {
    /// cuBLAS's GEMM of this type (column-major, as cuBLAS sees memory).
    ///
    /// # Safety
    /// The views must hold every element that `cfg` describes.
    #[doc(hidden)]
    unsafe fn cublas_gemm(
        blas: &CudaBlas,
        cfg: GemmConfig<Self>,
        a: &CudaView<'_, Self>,
        b: &CudaView<'_, Self>,
        c: &mut CudaViewMut<'_, Self>,
    ) -> std::result::Result<(), CublasError>;
}

macro_rules! linalg_float {
    ($($t:ty),*) => {$(
        impl LinalgFloat for $t {
            unsafe fn cublas_gemm(
                blas: &CudaBlas,
                cfg: GemmConfig<Self>,
                a: &CudaView<'_, Self>,
                b: &CudaView<'_, Self>,
                c: &mut CudaViewMut<'_, Self>,
            ) -> std::result::Result<(), CublasError> {
                // SAFETY: passed on from the caller.
                unsafe { <CudaBlas as Gemm<$t>>::gemm(blas, cfg, a, b, c) }
            }
        }
    )*};
}
linalg_float!(f32, f64);

/// `aᵀ · b` for C-order matrices `a` `(n, p)` and `b` `(n, q)` on one device: a `(p, q)` array
/// there (zeros when `n == 0`). See the module comment for how the GPU avoids the transpose.
pub fn t_matmul<T: LinalgFloat>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    let what = "t_matmul";
    let (n, p) = crate::input::matrix(what, a.shape())?;
    let (nb, q) = crate::input::matrix(what, b.shape())?;
    if n != nb {
        return Err(MlError::Shape {
            what,
            detail: format!(
                "aᵀ·b needs the same number of rows, got {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        });
    }
    let device = a.device();
    if device != b.device() {
        return Err(gpukit::Error::DeviceMismatch(format!(
            "`{what}`: a lives on {device} and b on {}",
            b.device()
        ))
        .into());
    }
    if n == 0 || p == 0 || q == 0 {
        return Ok(Array::zeros_on([p, q], &device)?);
    }
    match device {
        Device::Cpu => Ok(a.t().matmul(b)?),
        _ => cuda_t_matmul(a, b, n, p, q),
    }
}

/// `xᵀ · x` (`(d, d)`, symmetric) for a C-order `(n, d)` matrix: [`t_matmul`] of `x` with itself.
pub fn gram<T: LinalgFloat>(x: &Array<T>) -> Result<Array<T>> {
    t_matmul(x, x)
}

fn cuda_t_matmul<T: LinalgFloat>(
    a: &Array<T>,
    b: &Array<T>,
    n: usize,
    p: usize,
    q: usize,
) -> Result<Array<T>> {
    let dims = [n, p, q];
    if dims.iter().any(|&v| v > i32::MAX as usize) {
        return Err(MlError::Shape {
            what: "t_matmul",
            detail: format!(
                "cuBLAS takes at most {} rows or columns, got {dims:?}",
                i32::MAX
            ),
        });
    }
    let device = a.device();
    let blas = blas_for(&device)?;
    let mut c = Array::<T>::zeros_on([p, q], &device)?;
    {
        let (a_view, _) = a.cuda_view()?;
        let (b_view, _) = b.cuda_view()?;
        let (mut c_view, _) = c.cuda_view_mut()?;
        // Column-major: A' = b as (q, n), ld q; B' = a as (p, n), ld p; C' = A'·B'ᵀ is (q, p),
        // ld q, which in C order is the (p, q) matrix aᵀ·b.
        let cfg = GemmConfig {
            transa: CUBLAS_OP_N,
            transb: CUBLAS_OP_T,
            m: q as i32,
            n: p as i32,
            k: n as i32,
            alpha: <T as Element>::one(),
            lda: q as i32,
            ldb: p as i32,
            beta: <T as Element>::zero(),
            ldc: q as i32,
        };
        // SAFETY: b's view holds n·q elements, a's n·p and c's p·q, as `cfg` describes.
        unsafe { T::cublas_gemm(&blas, cfg, &b_view, &a_view, &mut c_view) }
            .map_err(|e| gpukit::Error::Cuda(format!("cuBLAS GEMM (aᵀ·b) failed: {e:?}")))?;
    }
    Ok(c)
}

/// This crate's cuBLAS handle for a CUDA device, on gpukit's stream there, created at first use.
/// cudarc panics when libcublas is missing, so its presence is checked first.
fn blas_for(device: &Device) -> Result<Arc<CudaBlas>> {
    static HANDLES: OnceLock<Mutex<HashMap<String, Arc<CudaBlas>>>> = OnceLock::new();
    let key = device.to_string();
    let mut handles = HANDLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(h) = handles.get(&key) {
        return Ok(h.clone());
    }
    // SAFETY: only asks the dynamic loader whether libcublas can be opened.
    if !unsafe { gpukit::cudarc::cublas::sys::is_culib_present() } {
        return Err(gpukit::Error::Cuda(
            "libcublas could not be loaded (needed for aᵀ·b on the GPU)".into(),
        )
        .into());
    }
    let context = device.cuda_context()?;
    context
        .bind_to_thread()
        .map_err(|e| gpukit::Error::Cuda(format!("making the context current: {e:?}")))?;
    let blas = CudaBlas::new(device.cuda_stream()?)
        .map(Arc::new)
        .map_err(|e| gpukit::Error::Cuda(format!("creating a cuBLAS handle on {key}: {e:?}")))?;
    handles.insert(key, blas.clone());
    Ok(blas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_matmul_is_the_transposed_product() {
        let cpu = Device::Cpu;
        let a = Array::from_vec_on(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2], &cpu).unwrap();
        let b = Array::from_vec_on(vec![1.0f64, 0.0, 2.0, 1.0, 1.0, 3.0], [3, 2], &cpu).unwrap();
        // aᵀ·b = [[1+6+5, 0+3+15], [2+8+6, 0+4+18]]
        assert_eq!(
            t_matmul(&a, &b).unwrap().to_vec().unwrap(),
            vec![12.0, 18.0, 16.0, 22.0]
        );
        assert_eq!(
            gram(&a).unwrap().to_vec().unwrap(),
            vec![35.0, 44.0, 44.0, 56.0]
        );
        let empty = Array::<f32>::zeros_on([0, 3], &cpu).unwrap();
        assert_eq!(gram(&empty).unwrap().to_vec().unwrap(), vec![0.0; 9]);
        let c = Array::<f64>::zeros_on([2, 2], &cpu).unwrap();
        assert!(t_matmul(&a, &c)
            .unwrap_err()
            .to_string()
            .contains("same number of rows"));
    }
}
