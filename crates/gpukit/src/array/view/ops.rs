//! Elementwise arithmetic and comparisons on views, and NumPy broadcasting between arrays of
//! different shapes: each operand is read through its own strides (0 along the axes it is
//! stretched over), into a new C-contiguous result, by one strided kernel on a GPU or one
//! parallel pass on the CPU. Arrays of one shape keep their contiguous fast path (`ops.rs`).

use super::layout::{broadcast_shapes, c_strides, coalesce, Layout};
use super::{cpu, ArrayView};
use crate::array::kernels::strided::{self, StridedOp, StridedOperand};
use crate::array::op::{with_binop, with_cmpop, BinOp, CmpOp};
use crate::array::{Array, Storage};
use crate::element::{Element, Numeric};
use crate::error::{Error, Result};

/// Checks that two views can be combined: usable buffers on one device.
fn check_devices<T: Element>(what: &str, a: &ArrayView<'_, T>, b: &ArrayView<'_, T>) -> Result<()> {
    a.base().storage().ensure_usable()?;
    b.base().storage().ensure_usable()?;
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch(format!(
            "operands of `{what}` live on {} and {}; move one with .to_device(&..)",
            a.device(),
            b.device()
        )));
    }
    Ok(())
}

/// `f(a[idx], b[idx])` over the broadcast shape of `a` and `b` into a new array.
fn zip_views<T: Element, R: Element>(
    what: &str,
    kind: StridedOp,
    a: &ArrayView<'_, T>,
    b: &ArrayView<'_, T>,
    f: impl Fn(T, T) -> R + Sync,
) -> Result<Array<R>> {
    check_devices(what, a, b)?;
    let shape = broadcast_shapes(a.shape(), b.shape(), what)?;
    let la = a.layout().broadcast_to(&shape)?;
    let lb = b.layout().broadcast_to(&shape)?;
    let n: usize = shape.iter().product();
    if n == 0 {
        return Array::zeros_on(shape, &a.device());
    }
    let out_strides = c_strides(&shape);
    let (s, [sa, sb, _]) = coalesce(&shape, [&la.strides, &lb.strides, &out_strides]);
    match (a.base().storage(), b.base().storage()) {
        (Storage::Cpu(x), Storage::Cpu(y)) => {
            crate::backend::cpu_capture::forbid_in_capture("a broadcast or view operation")?;
            let out = cpu::zip(x, la.offset, &sa, y, lb.offset, &sb, &s, f)?;
            Array::from_storage(shape, Storage::Cpu(out))
        }
        (Storage::Cuda { backend, slice: x }, Storage::Cuda { slice: y, .. }) => {
            // SAFETY: every element is written by the kernel queued right after.
            let mut out = unsafe { backend.alloc::<R>(n)? };
            let xa = StridedOperand::new(backend, x, la.offset, &sa);
            let yb = StridedOperand::new(backend, y, lb.offset, &sb);
            let o = StridedOperand::new_mut(backend, &mut out, 0, &[]).ptr;
            strided::binary::<T, R>(backend, kind, &s, xa, yb, o)?;
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

/// `a op b` with broadcasting, into a new array.
pub(crate) fn binary<T: Numeric>(
    op: BinOp,
    a: &ArrayView<'_, T>,
    b: &ArrayView<'_, T>,
) -> Result<Array<T>> {
    with_binop!(op, T, |f| zip_views(
        op.symbol(),
        StridedOp::Arith(op),
        a,
        b,
        f
    ))
}

/// `a op b` as `bool` with broadcasting, into a new array.
pub(crate) fn compare<T: Element>(
    op: CmpOp,
    a: &ArrayView<'_, T>,
    b: &ArrayView<'_, T>,
) -> Result<Array<bool>> {
    with_cmpop!(op, T, |f| zip_views(
        op.symbol(),
        StridedOp::Compare(op),
        a,
        b,
        f
    ))
}

/// `a = a op b` where `b` broadcasts to `a`'s shape (NumPy's `a += b`): an error naming both
/// shapes when the broadcast shape is not `a`'s.
pub(crate) fn binary_in_place<T: Numeric>(
    op: BinOp,
    a: &mut Array<T>,
    b: &ArrayView<'_, T>,
) -> Result<()> {
    let what = format!("{}=", op.symbol());
    check_devices(&what, &a.view(), b)?;
    let shape = broadcast_shapes(a.shape(), b.shape(), &what)?;
    if shape != a.shape() {
        return Err(Error::Shape(format!(
            "operands of `{what}` have shapes {:?} and {:?}: the result's shape {shape:?} is not \
             the left operand's",
            a.shape(),
            b.shape()
        )));
    }
    let lb = b.layout().broadcast_to(&shape)?;
    let la = Layout::contiguous(&shape);
    if la.size() == 0 {
        return Ok(());
    }
    let (s, [sa, sb]) = coalesce(&shape, [&la.strides, &lb.strides]);
    let b_base = b.base();
    match (a.storage_mut(), b_base.storage()) {
        (Storage::Cpu(x), Storage::Cpu(y)) => {
            crate::backend::cpu_capture::forbid_in_capture("a broadcast operation in place")?;
            let out = with_binop!(op, T, |f| cpu::zip(x, 0, &sa, y, lb.offset, &sb, &s, f))?;
            x.copy_from_slice(&out);
            Ok(())
        }
        (Storage::Cuda { backend, slice: x }, Storage::Cuda { slice: y, .. }) => {
            let backend = backend.clone();
            let yb = StridedOperand::new(&backend, y, lb.offset, &sb);
            let xa = StridedOperand::new_mut(&backend, x, 0, &sa);
            let out = xa.ptr;
            strided::binary::<T, T>(&backend, StridedOp::Arith(op), &s, xa, yb, out)
        }
        _ => unreachable!("devices checked above"),
    }
}

/// The right-hand side of an operation on a view: a view (of an array or a view) or a scalar.
pub enum ViewOperand<'a, T: Element> {
    /// Elements read through a view (broadcast against the left operand).
    View(ArrayView<'a, T>),
    /// One value for every element.
    Scalar(T),
}

/// Things usable as the right-hand side of a comparison on a view: `&Array<T>`,
/// `&ArrayView<T>`, `ArrayView<T>` or a scalar `T`.
pub trait IntoViewOperand<'a, T: Element> {
    /// The operand.
    fn into_operand(self) -> ViewOperand<'a, T>;
}

impl<'a, T: Element> IntoViewOperand<'a, T> for &'a Array<T> {
    fn into_operand(self) -> ViewOperand<'a, T> {
        ViewOperand::View(self.view())
    }
}

impl<'a, T: Element> IntoViewOperand<'a, T> for &ArrayView<'a, T> {
    fn into_operand(self) -> ViewOperand<'a, T> {
        ViewOperand::View(self.clone())
    }
}

impl<'a, T: Element> IntoViewOperand<'a, T> for ArrayView<'a, T> {
    fn into_operand(self) -> ViewOperand<'a, T> {
        ViewOperand::View(self)
    }
}

impl<'a, T: Element> IntoViewOperand<'a, T> for T {
    fn into_operand(self) -> ViewOperand<'a, T> {
        ViewOperand::Scalar(self)
    }
}

impl<T: Element> ArrayView<'_, T> {
    fn compare_with<'b>(&self, op: CmpOp, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        match rhs.into_operand() {
            ViewOperand::View(v) => compare(op, self, &v),
            ViewOperand::Scalar(s) => {
                let a = self.copy()?;
                match op {
                    CmpOp::Eq => a.eq(s),
                    CmpOp::Ne => a.ne(s),
                    CmpOp::Lt => a.lt(s),
                    CmpOp::Le => a.le(s),
                    CmpOp::Gt => a.gt(s),
                    CmpOp::Ge => a.ge(s),
                }
            }
        }
    }

    /// `self == rhs` elementwise with broadcasting (an array, a view or a scalar), as bools.
    pub fn eq<'b>(&self, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        self.compare_with(CmpOp::Eq, rhs)
    }

    /// `self != rhs` elementwise with broadcasting, as bools.
    pub fn ne<'b>(&self, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        self.compare_with(CmpOp::Ne, rhs)
    }

    /// `self < rhs` elementwise with broadcasting, as bools.
    pub fn lt<'b>(&self, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        self.compare_with(CmpOp::Lt, rhs)
    }

    /// `self <= rhs` elementwise with broadcasting, as bools.
    pub fn le<'b>(&self, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        self.compare_with(CmpOp::Le, rhs)
    }

    /// `self > rhs` elementwise with broadcasting, as bools.
    pub fn gt<'b>(&self, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        self.compare_with(CmpOp::Gt, rhs)
    }

    /// `self >= rhs` elementwise with broadcasting, as bools.
    pub fn ge<'b>(&self, rhs: impl IntoViewOperand<'b, T>) -> Result<Array<bool>> {
        self.compare_with(CmpOp::Ge, rhs)
    }
}

/// `view op scalar`: the view copied, then the scalar applied in place.
fn view_scalar<T: Numeric>(op: BinOp, a: &ArrayView<'_, T>, s: T) -> Result<Array<T>> {
    let mut out = a.copy()?;
    out.binary_in_place(op, crate::array::Rhs::Scalar(s))?;
    Ok(out)
}

macro_rules! view_operators {
    ($Trait:ident, $method:ident, $op:expr) => {
        impl<'a, 'b, T: Numeric> std::ops::$Trait<&ArrayView<'b, T>> for &ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &ArrayView<'b, T>) -> Result<Array<T>> {
                binary($op, self, rhs)
            }
        }
        impl<'a, 'b, T: Numeric> std::ops::$Trait<ArrayView<'b, T>> for &ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: ArrayView<'b, T>) -> Result<Array<T>> {
                binary($op, self, &rhs)
            }
        }
        impl<'a, 'b, T: Numeric> std::ops::$Trait<&ArrayView<'b, T>> for ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &ArrayView<'b, T>) -> Result<Array<T>> {
                binary($op, &self, rhs)
            }
        }
        impl<'a, 'b, T: Numeric> std::ops::$Trait<ArrayView<'b, T>> for ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: ArrayView<'b, T>) -> Result<Array<T>> {
                binary($op, &self, &rhs)
            }
        }
        impl<'a, T: Numeric> std::ops::$Trait<&Array<T>> for &ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &Array<T>) -> Result<Array<T>> {
                binary($op, self, &rhs.view())
            }
        }
        impl<'a, T: Numeric> std::ops::$Trait<&Array<T>> for ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &Array<T>) -> Result<Array<T>> {
                binary($op, &self, &rhs.view())
            }
        }
        impl<'b, T: Numeric> std::ops::$Trait<&ArrayView<'b, T>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: &ArrayView<'b, T>) -> Result<Array<T>> {
                binary($op, &self.view(), rhs)
            }
        }
        impl<'b, T: Numeric> std::ops::$Trait<ArrayView<'b, T>> for &Array<T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: ArrayView<'b, T>) -> Result<Array<T>> {
                binary($op, &self.view(), &rhs)
            }
        }
        impl<'a, T: Numeric> std::ops::$Trait<T> for &ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: T) -> Result<Array<T>> {
                view_scalar($op, self, rhs)
            }
        }
        impl<'a, T: Numeric> std::ops::$Trait<T> for ArrayView<'a, T> {
            type Output = Result<Array<T>>;
            fn $method(self, rhs: T) -> Result<Array<T>> {
                view_scalar($op, &self, rhs)
            }
        }
    };
}

view_operators!(Add, add, BinOp::Add);
view_operators!(Sub, sub, BinOp::Sub);
view_operators!(Mul, mul, BinOp::Mul);
view_operators!(Div, div, BinOp::Div);
view_operators!(Rem, rem, BinOp::Rem);
