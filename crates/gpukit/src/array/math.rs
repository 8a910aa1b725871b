//! Unary math (negation, abs, sqrt, exp, ln, sin, cos, tanh, powf) and comparisons giving
//! `Array<bool>`.

use super::kernels::{self, Operand};
use super::op::{with_cmpop, CmpOp, UnOp};
use super::ops::{check_same, IntoRhs, Rhs};
use super::{Array, Storage};
use crate::backend::cuda::CudaBackend;
use crate::element::{Element, Float, Numeric};
use crate::error::Result;
use cudarc::driver::CudaSlice;

impl<T: Element> Array<T> {
    /// `f(self[i])` into a new array on the same device; `cuda` queues the kernel.
    fn map_new<U: Element>(
        &self,
        cpu: impl Fn(T) -> U + Sync,
        cuda: impl FnOnce(
            &crate::backend::cuda::CudaBackend,
            &cudarc::driver::CudaSlice<T>,
            &mut cudarc::driver::CudaSlice<U>,
            usize,
        ) -> Result<()>,
    ) -> Result<Array<U>> {
        let n = self.size();
        let shape = self.shape().to_vec();
        match self.storage() {
            Storage::Cpu(a) => {
                let out = crate::backend::cpu::map_new(a, |&x| cpu(x))?;
                Array::from_storage(shape, Storage::Cpu(out))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the kernel `cuda` queues.
                let mut out = unsafe { backend.alloc::<U>(n)? };
                cuda(backend, slice, &mut out, n)?;
                Array::from_storage(
                    shape,
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }

    fn compare<'a>(&self, op: CmpOp, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        match rhs.into_rhs() {
            Rhs::Scalar(s) => with_cmpop!(op, T, |f| self.map_new(
                |x| f(x, s),
                |b, a, out, n| kernels::compare(b, op, a, Operand::Scalar(s), out, n),
            )),
            Rhs::Array(other) if self.shape() != other.shape() => {
                // NumPy broadcasting (view/ops.rs).
                super::view::ops::compare(op, &self.view(), &other.view())
            }
            Rhs::Array(other) => {
                check_same(op.symbol(), self, other)?;
                let n = self.size();
                let shape = self.shape().to_vec();
                match (self.storage(), other.storage()) {
                    (Storage::Cpu(a), Storage::Cpu(b)) => {
                        let out = with_cmpop!(op, T, |f| crate::backend::cpu::zip_map_new(
                            a,
                            b,
                            |&x, &y| f(x, y)
                        ))?;
                        Array::from_storage(shape, Storage::Cpu(out))
                    }
                    (Storage::Cuda { backend, slice }, Storage::Cuda { slice: bs, .. }) => {
                        // SAFETY: every element is written by the kernel queued right after.
                        let mut out = unsafe { backend.alloc::<bool>(n)? };
                        kernels::compare(backend, op, slice, Operand::Array(bs), &mut out, n)?;
                        Array::from_storage(
                            shape,
                            Storage::Cuda {
                                backend: backend.clone(),
                                slice: out,
                            },
                        )
                    }
                    _ => unreachable!("devices checked above"),
                }
            }
        }
    }

    /// `self[i] == rhs[i]` (or `== rhs` for a scalar), as a bool array.
    pub fn eq<'a>(&self, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        self.compare(CmpOp::Eq, rhs)
    }

    /// `self[i] != rhs[i]`, as a bool array.
    pub fn ne<'a>(&self, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        self.compare(CmpOp::Ne, rhs)
    }

    /// `self[i] < rhs[i]`, as a bool array.
    pub fn lt<'a>(&self, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        self.compare(CmpOp::Lt, rhs)
    }

    /// `self[i] <= rhs[i]`, as a bool array.
    pub fn le<'a>(&self, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        self.compare(CmpOp::Le, rhs)
    }

    /// `self[i] > rhs[i]`, as a bool array.
    pub fn gt<'a>(&self, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        self.compare(CmpOp::Gt, rhs)
    }

    /// `self[i] >= rhs[i]`, as a bool array.
    pub fn ge<'a>(&self, rhs: impl IntoRhs<'a, T>) -> Result<Array<bool>> {
        self.compare(CmpOp::Ge, rhs)
    }
}

impl<T: Numeric> Array<T> {
    fn unary_numeric(&self, op: UnOp) -> Result<Array<T>> {
        let cuda = |b: &CudaBackend, a: &CudaSlice<T>, out: &mut CudaSlice<T>, n: usize| {
            kernels::unary(b, op, a, out, n)
        };
        // One match outside the CPU loop, so that it is specialised for the operation.
        match op {
            UnOp::Neg => self.map_new(|x: T| UnOp::Neg.apply_numeric(x), cuda),
            _ => self.map_new(|x: T| UnOp::Abs.apply_numeric(x), cuda),
        }
    }

    /// `-self` elementwise (unsigned integers wrap).
    pub fn neg(&self) -> Result<Array<T>> {
        self.unary_numeric(UnOp::Neg)
    }

    /// `|self|` elementwise.
    pub fn abs(&self) -> Result<Array<T>> {
        self.unary_numeric(UnOp::Abs)
    }
}

impl<T: Float> Array<T> {
    fn unary_float(&self, op: UnOp) -> Result<Array<T>> {
        let cuda = |b: &CudaBackend, a: &CudaSlice<T>, out: &mut CudaSlice<T>, n: usize| {
            kernels::unary(b, op, a, out, n)
        };
        // One match outside the CPU loop, so that it is specialised for the operation.
        match op {
            UnOp::Neg => self.map_new(|x: T| UnOp::Neg.apply_float(x), cuda),
            UnOp::Abs => self.map_new(|x: T| UnOp::Abs.apply_float(x), cuda),
            UnOp::Sqrt => self.map_new(|x: T| UnOp::Sqrt.apply_float(x), cuda),
            UnOp::Exp => self.map_new(|x: T| UnOp::Exp.apply_float(x), cuda),
            UnOp::Ln => self.map_new(|x: T| UnOp::Ln.apply_float(x), cuda),
            UnOp::Sin => self.map_new(|x: T| UnOp::Sin.apply_float(x), cuda),
            UnOp::Cos => self.map_new(|x: T| UnOp::Cos.apply_float(x), cuda),
            UnOp::Tanh => self.map_new(|x: T| UnOp::Tanh.apply_float(x), cuda),
        }
    }

    /// Square root elementwise.
    pub fn sqrt(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Sqrt)
    }

    /// `e^x` elementwise.
    pub fn exp(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Exp)
    }

    /// Natural logarithm elementwise.
    pub fn ln(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Ln)
    }

    /// Natural logarithm elementwise (NumPy's name for [`Array::ln`]).
    pub fn log(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Ln)
    }

    /// Sine elementwise.
    pub fn sin(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Sin)
    }

    /// Cosine elementwise.
    pub fn cos(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Cos)
    }

    /// Hyperbolic tangent elementwise.
    pub fn tanh(&self) -> Result<Array<T>> {
        self.unary_float(UnOp::Tanh)
    }

    /// `x^p` elementwise.
    pub fn powf(&self, p: T) -> Result<Array<T>> {
        self.map_new(
            |x| x.elem_powf(p),
            |b, a, out, n| kernels::powf(b, a, p, out, n),
        )
    }
}

impl<T: Numeric> std::ops::Neg for &Array<T> {
    type Output = Result<Array<T>>;
    fn neg(self) -> Result<Array<T>> {
        Array::neg(self)
    }
}

impl<T: Numeric> std::ops::Neg for Array<T> {
    type Output = Result<Array<T>>;
    fn neg(self) -> Result<Array<T>> {
        Array::neg(&self)
    }
}
