//! Elementwise arithmetic: `+ - * / %` between arrays (of one shape, or of shapes that broadcast
//! as in NumPy: `view/ops.rs`) and with scalars on either side, as operators (`&a + &b`, `&a * 2.0`, `2.0 * &a`, `a *= 5.0`) and as checked methods.
//!
//! Operators return `Result<Array<T>>`; they also accept `Result<Array<T>>` on either side next
//! to an array, so `((&a + &b)? * 2.0)?` and `(&a + &b) * &c` chain. (Rust's orphan rule forbids
//! `Result<Array<T>> * scalar`, so a scalar step needs the `?` first.) The assigning operators
//! cannot return a `Result`: their error (shape or device mismatch) is recorded on the array's
//! device and returned by its next `synchronize()` or `to_host()`; the `*_in_place` methods
//! return it directly.

use super::capture::record_cpu;
use super::kernels::{self, Operand};
use super::op::{with_binop, BinOp};
use super::{Array, Storage};
use crate::backend::{cpu, cpu_capture};
use crate::element::{Element, Numeric};
use crate::error::{Error, Result};

/// The right-hand side of an elementwise operation: an array or a scalar.
pub enum Rhs<'a, T: Element> {
    /// An array of the same shape, on the same device.
    Array(&'a Array<T>),
    /// One value applied to every element.
    Scalar(T),
}

/// Things usable as the right-hand side of an elementwise operation: `&Array<T>` or `T`.
pub trait IntoRhs<'a, T: Element> {
    /// The operand.
    fn into_rhs(self) -> Rhs<'a, T>;
}

impl<'a, T: Element> IntoRhs<'a, T> for &'a Array<T> {
    fn into_rhs(self) -> Rhs<'a, T> {
        Rhs::Array(self)
    }
}

impl<'a, T: Element> IntoRhs<'a, T> for T {
    fn into_rhs(self) -> Rhs<'a, T> {
        Rhs::Scalar(self)
    }
}

/// Checks that two arrays can be combined elementwise.
pub(crate) fn check_same<T: Element, U: Element>(
    what: &str,
    a: &Array<T>,
    b: &Array<U>,
) -> Result<()> {
    a.storage().ensure_usable()?;
    b.storage().ensure_usable()?;
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch(format!(
            "operands of `{what}` live on {} and {}; move one with .to_device(&..)",
            a.device(),
            b.device()
        )));
    }
    if a.shape() != b.shape() {
        return Err(Error::Shape(format!(
            "operands of `{what}` have shapes {:?} and {:?}",
            a.shape(),
            b.shape()
        )));
    }
    Ok(())
}

impl<T: Numeric> Array<T> {
    /// `self op rhs` into a new array (`scalar_left`: `rhs op self` for a scalar `rhs`).
    pub(crate) fn binary(&self, op: BinOp, rhs: Rhs<'_, T>, scalar_left: bool) -> Result<Array<T>> {
        if let Rhs::Array(b) = &rhs {
            if self.shape() != b.shape() {
                // NumPy broadcasting (view/ops.rs); one shape keeps the contiguous path below.
                return super::view::ops::binary(op, &self.view(), &b.view());
            }
            check_same(op.symbol(), self, b)?;
        }
        let n = self.size();
        let shape = self.shape().to_vec();
        match (self.storage(), &rhs) {
            (Storage::Cpu(a), Rhs::Array(b)) => {
                let Storage::Cpu(b) = b.storage() else {
                    unreachable!("device checked above")
                };
                let out = with_binop!(op, T, |f| cpu::zip_map_new(a, b, |&x, &y| f(x, y)))?;
                Array::from_storage(shape, Storage::Cpu(out))
            }
            (Storage::Cpu(a), Rhs::Scalar(s)) => {
                let s = *s;
                let out = if scalar_left {
                    with_binop!(op, T, |f| cpu::map_new(a, |&x| f(s, x)))?
                } else {
                    with_binop!(op, T, |f| cpu::map_new(a, |&x| f(x, s)))?
                };
                Array::from_storage(shape, Storage::Cpu(out))
            }
            (Storage::Cuda { backend, slice }, rhs) => {
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                let (x, y) = match rhs {
                    Rhs::Array(b) => {
                        let Storage::Cuda { slice: bs, .. } = b.storage() else {
                            unreachable!("device checked above")
                        };
                        (Operand::Array(slice), Operand::Array(bs))
                    }
                    Rhs::Scalar(s) if scalar_left => (Operand::Scalar(*s), Operand::Array(slice)),
                    Rhs::Scalar(s) => (Operand::Array(slice), Operand::Scalar(*s)),
                };
                kernels::binary(backend, op, x, y, &mut out, n)?;
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

    /// `self = self op rhs`, in place.
    pub(crate) fn binary_in_place(&mut self, op: BinOp, rhs: Rhs<'_, T>) -> Result<()> {
        if let Rhs::Array(b) = &rhs {
            if self.shape() != b.shape() {
                // `b` broadcast to this array's shape (view/ops.rs).
                return super::view::ops::binary_in_place(op, self, &b.view());
            }
            check_same(&format!("{}=", op.symbol()), self, b)?;
        }
        let n = self.size();
        match (self.storage_mut(), rhs) {
            (Storage::Cpu(a), Rhs::Array(b)) => {
                let Storage::Cpu(b) = b.storage() else {
                    unreachable!("device checked above")
                };
                if cpu_capture::is_capturing() {
                    let (pa, pb) = (a.as_mut_ptr() as usize, b.as_ptr() as usize);
                    record_cpu(&[pa, pb], move || {
                        // SAFETY: replayed while both buffers live (a graph keeps the buffers
                        // it uses alive, see kernel::graph); `a` and `b` were distinct arrays,
                        // borrowed mutably and shared when this was recorded.
                        let (a, b) = unsafe {
                            (
                                std::slice::from_raw_parts_mut(pa as *mut T, n),
                                std::slice::from_raw_parts(pb as *const T, n),
                            )
                        };
                        with_binop!(op, T, |f| cpu::zip_update(a, b, |x, &y| *x = f(*x, y)));
                        Ok(())
                    });
                    return Ok(());
                }
                with_binop!(op, T, |f| cpu::zip_update(a, b, |x, &y| *x = f(*x, y)));
                Ok(())
            }
            (Storage::Cpu(a), Rhs::Scalar(s)) => {
                if cpu_capture::is_capturing() {
                    let pa = a.as_mut_ptr() as usize;
                    record_cpu(&[pa], move || {
                        // SAFETY: as above.
                        let a = unsafe { std::slice::from_raw_parts_mut(pa as *mut T, n) };
                        with_binop!(op, T, |f| cpu::update(a, |x| *x = f(*x, s)));
                        Ok(())
                    });
                    return Ok(());
                }
                with_binop!(op, T, |f| cpu::update(a, |x| *x = f(*x, s)));
                Ok(())
            }
            (Storage::Cuda { backend, slice }, rhs) => {
                let backend = backend.clone();
                // The kernel reads and writes each element at the same index, so the output
                // buffer is also passed (as a raw device pointer) as the first input.
                let ptr = {
                    use cudarc::driver::DevicePtr;
                    let (ptr, _sync) = slice.device_ptr(backend.stream());
                    ptr
                };
                let y = match rhs {
                    Rhs::Array(b) => {
                        let Storage::Cuda { slice: bs, .. } = b.storage() else {
                            unreachable!("device checked above")
                        };
                        Operand::Array(bs)
                    }
                    Rhs::Scalar(s) => Operand::Scalar(s),
                };
                kernels::binary(&backend, op, Operand::Raw(ptr), y, slice, n)
            }
        }
    }

    /// `self += rhs` (an array of the same shape or a scalar), returning any error.
    pub fn add_in_place<'a>(&mut self, rhs: impl IntoRhs<'a, T>) -> Result<()> {
        self.binary_in_place(BinOp::Add, rhs.into_rhs())
    }

    /// `self -= rhs`, returning any error.
    pub fn sub_in_place<'a>(&mut self, rhs: impl IntoRhs<'a, T>) -> Result<()> {
        self.binary_in_place(BinOp::Sub, rhs.into_rhs())
    }

    /// `self *= rhs`, returning any error.
    pub fn mul_in_place<'a>(&mut self, rhs: impl IntoRhs<'a, T>) -> Result<()> {
        self.binary_in_place(BinOp::Mul, rhs.into_rhs())
    }

    /// `self /= rhs`, returning any error (integer division by zero gives 0).
    pub fn div_in_place<'a>(&mut self, rhs: impl IntoRhs<'a, T>) -> Result<()> {
        self.binary_in_place(BinOp::Div, rhs.into_rhs())
    }

    /// `self %= rhs`, returning any error (integer remainder by zero gives 0).
    pub fn rem_in_place<'a>(&mut self, rhs: impl IntoRhs<'a, T>) -> Result<()> {
        self.binary_in_place(BinOp::Rem, rhs.into_rhs())
    }

    /// Records the error of an assigning operator on this array's device.
    fn defer(&self, r: Result<()>) {
        if let Err(e) = r {
            match self.storage() {
                Storage::Cpu(_) => crate::backend::cpu::set_pending_error(e),
                Storage::Cuda { backend, .. } => backend.set_pending_error(e),
            }
        }
    }
}

macro_rules! binary_operator {
    ($Trait:ident, $method:ident, $AssignTrait:ident, $assign:ident, $op:expr) => {
        impl<T: Numeric> std::ops::$Trait<&Array<T>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &Array<T>) -> Result<Array<T>> {
                self.binary($op, Rhs::Array(rhs), false)
            }
        }
        impl<T: Numeric> std::ops::$Trait<Array<T>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: Array<T>) -> Result<Array<T>> {
                self.binary($op, Rhs::Array(&rhs), false)
            }
        }
        impl<T: Numeric> std::ops::$Trait<&Array<T>> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(mut self, rhs: &Array<T>) -> Result<Array<T>> {
                self.binary_in_place($op, Rhs::Array(rhs))?;
                Ok(self)
            }
        }
        impl<T: Numeric> std::ops::$Trait<Array<T>> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(mut self, rhs: Array<T>) -> Result<Array<T>> {
                self.binary_in_place($op, Rhs::Array(&rhs))?;
                Ok(self)
            }
        }
        impl<T: Numeric> std::ops::$Trait<Result<Array<T>>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: Result<Array<T>>) -> Result<Array<T>> {
                self.binary($op, Rhs::Array(&rhs?), false)
            }
        }
        impl<T: Numeric> std::ops::$Trait<Result<Array<T>>> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(mut self, rhs: Result<Array<T>>) -> Result<Array<T>> {
                self.binary_in_place($op, Rhs::Array(&rhs?))?;
                Ok(self)
            }
        }
        impl<T: Numeric> std::ops::$Trait<&Array<T>> for Result<Array<T>> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &Array<T>) -> Result<Array<T>> {
                let mut a = self?;
                a.binary_in_place($op, Rhs::Array(rhs))?;
                Ok(a)
            }
        }
        impl<T: Numeric> std::ops::$Trait<Array<T>> for Result<Array<T>> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: Array<T>) -> Result<Array<T>> {
                let mut a = self?;
                a.binary_in_place($op, Rhs::Array(&rhs))?;
                Ok(a)
            }
        }
        impl<T: Numeric> std::ops::$Trait<T> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: T) -> Result<Array<T>> {
                self.binary($op, Rhs::Scalar(rhs), false)
            }
        }
        impl<T: Numeric> std::ops::$Trait<T> for Array<T> {
            type Output = Result<Array<T>>;
            fn $method(mut self, rhs: T) -> Result<Array<T>> {
                self.binary_in_place($op, Rhs::Scalar(rhs))?;
                Ok(self)
            }
        }
        impl<T: Numeric> std::ops::$AssignTrait<T> for Array<T> {
            fn $assign(&mut self, rhs: T) {
                let r = self.binary_in_place($op, Rhs::Scalar(rhs));
                self.defer(r);
            }
        }
        impl<T: Numeric> std::ops::$AssignTrait<&Array<T>> for Array<T> {
            fn $assign(&mut self, rhs: &Array<T>) {
                let r = self.binary_in_place($op, Rhs::Array(rhs));
                self.defer(r);
            }
        }
        impl<T: Numeric> std::ops::$AssignTrait<Array<T>> for Array<T> {
            fn $assign(&mut self, rhs: Array<T>) {
                let r = self.binary_in_place($op, Rhs::Array(&rhs));
                self.defer(r);
            }
        }
    };
}

binary_operator!(Add, add, AddAssign, add_assign, BinOp::Add);
binary_operator!(Sub, sub, SubAssign, sub_assign, BinOp::Sub);
binary_operator!(Mul, mul, MulAssign, mul_assign, BinOp::Mul);
binary_operator!(Div, div, DivAssign, div_assign, BinOp::Div);
binary_operator!(Rem, rem, RemAssign, rem_assign, BinOp::Rem);

/// `scalar op array` for each concrete numeric type (Rust needs one impl per scalar type).
macro_rules! scalar_left {
    ($($t:ty),*) => {$(
        scalar_left!(@one $t, Add, add, BinOp::Add);
        scalar_left!(@one $t, Sub, sub, BinOp::Sub);
        scalar_left!(@one $t, Mul, mul, BinOp::Mul);
        scalar_left!(@one $t, Div, div, BinOp::Div);
        scalar_left!(@one $t, Rem, rem, BinOp::Rem);
    )*};
    (@one $t:ty, $Trait:ident, $method:ident, $op:expr) => {
        impl std::ops::$Trait<&Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn $method(self, rhs: &Array<$t>) -> Result<Array<$t>> {
                rhs.binary($op, Rhs::Scalar(self), true)
            }
        }
        impl std::ops::$Trait<Array<$t>> for $t {
            type Output = Result<Array<$t>>;
            fn $method(self, rhs: Array<$t>) -> Result<Array<$t>> {
                rhs.binary($op, Rhs::Scalar(self), true)
            }
        }
    };
}

scalar_left!(f32, f64, i32, i64, u8, u32, u64);
