//! Every array operation on views: unary math, reductions (whole and along an axis), scans,
//! sorts, `clip`, `astype`, the NumPy float functions, matrix products. Each method mirrors
//! [`Array`]'s of the same name.
//!
//! How a view reaches the array kernels: a view that is its whole array in C order (what
//! `a.view()` gives, or a slice of leading rows reshaped back) is used in place, without a copy;
//! any other view (a transpose, a slice with steps, a broadcast) is first copied into a
//! C-contiguous temporary by one strided-copy kernel (one parallel pass on the CPU), which the
//! operation then reads. The temporary is freed when the method returns. Elementwise
//! arithmetic and comparisons between views (`view/ops.rs`) read the strides directly instead.

use super::ArrayView;
use crate::array::linalg::MatmulElement;
use crate::array::{Array, IntoAxis};
use crate::element::{ComplexPart, Element, Float, Numeric};
use crate::error::Result;

/// A view's elements as a C-contiguous array: the viewed array itself when the view is all of
/// it in C order, else a copy.
pub(crate) enum Contiguous<'a, T: Element> {
    /// The viewed array, unchanged.
    Borrowed(&'a Array<T>),
    /// A strided copy of the view.
    Owned(Array<T>),
}

impl<T: Element> std::ops::Deref for Contiguous<'_, T> {
    type Target = Array<T>;
    fn deref(&self) -> &Array<T> {
        match self {
            Contiguous::Borrowed(a) => a,
            Contiguous::Owned(a) => a,
        }
    }
}

impl<'a, T: Element> ArrayView<'a, T> {
    /// The elements as a C-contiguous array: the viewed array itself when this view is all of
    /// it, in C order and with its shape (no copy), else a strided copy.
    pub(crate) fn contiguous(&self) -> Result<Contiguous<'a, T>> {
        let l = self.layout();
        let base = self.base();
        if l.offset == 0 && l.shape == base.shape() && l.is_c_contiguous() {
            return Ok(Contiguous::Borrowed(base));
        }
        Ok(Contiguous::Owned(self.copy()?))
    }

    /// The elements converted to `U` as [`Array::astype`] does, into a new C-contiguous array.
    pub fn astype<U: Element>(&self) -> Result<Array<U>> {
        self.contiguous()?.astype::<U>()
    }

    /// Number of non-zero (`true`) elements ([`Array::count_nonzero`]).
    pub fn count_nonzero(&self) -> Result<u64> {
        self.contiguous()?.count_nonzero()
    }

    /// Whether any element is non-zero ([`Array::any`]).
    pub fn any(&self) -> Result<bool> {
        self.contiguous()?.any()
    }

    /// Whether every element is non-zero ([`Array::all`]).
    pub fn all(&self) -> Result<bool> {
        self.contiguous()?.all()
    }

    /// [`Array::any_axis`] of the view's elements.
    pub fn any_axis(&self, axis: impl IntoAxis) -> Result<Array<bool>> {
        self.contiguous()?.any_axis(axis)
    }

    /// [`Array::all_axis`] of the view's elements.
    pub fn all_axis(&self, axis: impl IntoAxis) -> Result<Array<bool>> {
        self.contiguous()?.all_axis(axis)
    }

    /// NumPy's `where(cond, a, b)` with views: `a[i]` where `cond[i]`, else `b[i]`, each of
    /// `cond`, `a` and `b` an array or a view of one shape (`a` and `b` may also be scalars), as
    /// [`Array::where_`].
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let x = Array::from_vec_on(vec![-1.0, 2.0, -3.0, 4.0], [2, 2], &Device::Cpu)?;
    /// let relu_t = ArrayView::where_(&x.t().gt(0.0)?, x.t(), 0.0)?;
    /// assert_eq!(relu_t.to_vec()?, vec![0.0, 0.0, 2.0, 4.0]);
    /// # Ok(()) }
    /// ```
    pub fn where_<'b>(
        cond: impl super::AsView<bool>,
        a: impl super::IntoViewOperand<'b, T>,
        b: impl super::IntoViewOperand<'b, T>,
    ) -> Result<Array<T>> {
        use super::ViewOperand as V;
        let cond = cond.as_view();
        let cond = cond.contiguous()?;
        let (a, b) = (a.into_operand(), b.into_operand());
        let held = |o: &V<'b, T>| -> Result<Option<Contiguous<'b, T>>> {
            match o {
                V::View(v) => Ok(Some(v.contiguous()?)),
                V::Scalar(_) => Ok(None),
            }
        };
        let (ha, hb) = (held(&a)?, held(&b)?);
        match (&a, &b, &ha, &hb) {
            (_, _, Some(x), Some(y)) => Array::where_(&cond, &**x, &**y),
            (_, V::Scalar(y), Some(x), None) => Array::where_(&cond, &**x, *y),
            (V::Scalar(x), _, None, Some(y)) => Array::where_(&cond, *x, &**y),
            (V::Scalar(x), V::Scalar(y), None, None) => Array::where_(&cond, *x, *y),
            _ => Err(crate::error::Error::Other(
                "internal: a `where_` operand is neither a view nor a scalar".into(),
            )),
        }
    }

    /// [`Array::count_nonzero_axis`] of the view's elements.
    pub fn count_nonzero_axis(&self, axis: impl IntoAxis) -> Result<Array<u64>> {
        self.contiguous()?.count_nonzero_axis(axis)
    }
}

/// Methods `name(&self) -> Result<R>` forwarded to the array of the view's elements.
macro_rules! forward {
    ($bound:path; $($name:ident -> $ret:ty, $doc:literal;)*) => {
        impl<T: $bound> ArrayView<'_, T> {
            $(
                #[doc = $doc]
                pub fn $name(&self) -> Result<$ret> {
                    self.contiguous()?.$name()
                }
            )*
        }
    };
}

/// Methods `name(&self, axis) -> Result<Array<R>>` forwarded likewise.
macro_rules! forward_axis {
    ($bound:path; $($name:ident -> $ret:ty, $doc:literal;)*) => {
        impl<T: $bound> ArrayView<'_, T> {
            $(
                #[doc = $doc]
                pub fn $name(&self, axis: impl IntoAxis) -> Result<Array<$ret>> {
                    self.contiguous()?.$name(axis)
                }
            )*
        }
    };
}

forward! { Numeric;
    neg -> Array<T>, "`-x` elementwise ([`Array::neg`]).";
    abs -> Array<T>, "`|x|` elementwise ([`Array::abs`]).";
    square -> Array<T>, "`x * x` elementwise ([`Array::square`]).";
    sign -> Array<T>, "The sign of each element ([`Array::sign`]).";
    sum -> T, "Sum of the elements ([`Array::sum`]).";
    prod -> T, "Product of the elements ([`Array::prod`]).";
    min -> T, "Smallest element ([`Array::min`]).";
    max -> T, "Largest element ([`Array::max`]).";
    argmin -> usize, "C-order index of the first smallest element ([`Array::argmin`]).";
    argmax -> usize, "C-order index of the first largest element ([`Array::argmax`]).";
    cumsum -> Array<T>, "Cumulative sum in C order, 1-d ([`Array::cumsum`]).";
    cumprod -> Array<T>, "Cumulative product in C order, 1-d ([`Array::cumprod`]).";
    sort -> Array<T>, "Sorted along the last axis ([`Array::sort`]).";
    argsort -> Array<i64>, "Indices that sort the last axis ([`Array::argsort`]).";
}

forward_axis! { Numeric;
    sum_axis -> T, "Sums along `axis` ([`Array::sum_axis`]).";
    prod_axis -> T, "Products along `axis` ([`Array::prod_axis`]).";
    min_axis -> T, "Minima along `axis` ([`Array::min_axis`]).";
    max_axis -> T, "Maxima along `axis` ([`Array::max_axis`]).";
    argmin_axis -> i64, "Indices of the minima along `axis` ([`Array::argmin_axis`]).";
    argmax_axis -> i64, "Indices of the maxima along `axis` ([`Array::argmax_axis`]).";
    cumsum_axis -> T, "Cumulative sums along `axis` ([`Array::cumsum_axis`]).";
    cumprod_axis -> T, "Cumulative products along `axis` ([`Array::cumprod_axis`]).";
}

forward! { Float;
    sqrt -> Array<T>, "Square root elementwise ([`Array::sqrt`]).";
    exp -> Array<T>, "`e^x` elementwise ([`Array::exp`]).";
    ln -> Array<T>, "Natural logarithm elementwise ([`Array::ln`]).";
    log -> Array<T>, "Natural logarithm elementwise ([`Array::log`], NumPy's name).";
    sin -> Array<T>, "Sine elementwise ([`Array::sin`]).";
    cos -> Array<T>, "Cosine elementwise ([`Array::cos`]).";
    tanh -> Array<T>, "Hyperbolic tangent elementwise ([`Array::tanh`]).";
    log2 -> Array<T>, "Base-2 logarithm elementwise ([`Array::log2`]).";
    log10 -> Array<T>, "Base-10 logarithm elementwise ([`Array::log10`]).";
    exp2 -> Array<T>, "`2^x` elementwise ([`Array::exp2`]).";
    expm1 -> Array<T>, "`e^x - 1` elementwise ([`Array::expm1`]).";
    log1p -> Array<T>, "`ln(1 + x)` elementwise ([`Array::log1p`]).";
    tan -> Array<T>, "Tangent elementwise ([`Array::tan`]).";
    arcsin -> Array<T>, "Inverse sine elementwise ([`Array::arcsin`]).";
    arccos -> Array<T>, "Inverse cosine elementwise ([`Array::arccos`]).";
    arctan -> Array<T>, "Inverse tangent elementwise ([`Array::arctan`]).";
    sinh -> Array<T>, "Hyperbolic sine elementwise ([`Array::sinh`]).";
    cosh -> Array<T>, "Hyperbolic cosine elementwise ([`Array::cosh`]).";
    floor -> Array<T>, "Floor elementwise ([`Array::floor`]).";
    ceil -> Array<T>, "Ceiling elementwise ([`Array::ceil`]).";
    round -> Array<T>, "Nearest integer, halves to even ([`Array::round`]).";
    reciprocal -> Array<T>, "`1 / x` elementwise ([`Array::reciprocal`]).";
    isnan -> Array<bool>, "Whether each element is NaN ([`Array::isnan`]).";
    isinf -> Array<bool>, "Whether each element is infinite ([`Array::isinf`]).";
    isfinite -> Array<bool>, "Whether each element is finite ([`Array::isfinite`]).";
    mean -> T, "Mean of the elements ([`Array::mean`]).";
}

forward_axis! { Float;
    mean_axis -> T, "Means along `axis` ([`Array::mean_axis`]).";
}

impl<T: Numeric> ArrayView<'_, T> {
    /// Each element limited to `[lo, hi]` ([`Array::clip`]).
    pub fn clip(&self, lo: T, hi: T) -> Result<Array<T>> {
        self.contiguous()?.clip(lo, hi)
    }

    /// The larger of each pair of elements ([`Array::maximum`]); `other` is an array or a
    /// view of the same shape.
    pub fn maximum(&self, other: impl super::AsView<T>) -> Result<Array<T>> {
        let o = other.as_view();
        self.contiguous()?.maximum(&*o.contiguous()?)
    }

    /// The smaller of each pair of elements ([`Array::minimum`]); `other` is an array or a
    /// view of the same shape.
    pub fn minimum(&self, other: impl super::AsView<T>) -> Result<Array<T>> {
        let o = other.as_view();
        self.contiguous()?.minimum(&*o.contiguous()?)
    }

    /// Sorted along `axis` ([`Array::sort_axis`]).
    pub fn sort_axis(&self, axis: isize) -> Result<Array<T>> {
        self.contiguous()?.sort_axis(axis)
    }

    /// Indices that sort along `axis` ([`Array::argsort_axis`]).
    pub fn argsort_axis(&self, axis: isize) -> Result<Array<i64>> {
        self.contiguous()?.argsort_axis(axis)
    }
}

impl<T: Float> ArrayView<'_, T> {
    /// `x^p` elementwise ([`Array::powf`]).
    pub fn powf(&self, p: T) -> Result<Array<T>> {
        self.contiguous()?.powf(p)
    }

    /// Variance with `ddof` degrees of freedom removed ([`Array::var`]).
    pub fn var(&self, ddof: usize) -> Result<T> {
        self.contiguous()?.var(ddof)
    }

    /// Standard deviation with `ddof` degrees of freedom removed ([`Array::std`]).
    pub fn std(&self, ddof: usize) -> Result<T> {
        self.contiguous()?.std(ddof)
    }

    /// Variances along `axis` ([`Array::var_axis`]).
    pub fn var_axis(&self, axis: impl IntoAxis, ddof: usize) -> Result<Array<T>> {
        self.contiguous()?.var_axis(axis, ddof)
    }

    /// Standard deviations along `axis` ([`Array::std_axis`]).
    pub fn std_axis(&self, axis: impl IntoAxis, ddof: usize) -> Result<Array<T>> {
        self.contiguous()?.std_axis(axis, ddof)
    }

    /// The angle of `(x = other, y = self)` elementwise ([`Array::arctan2`]); `other` is an
    /// array or a view of the same shape.
    pub fn arctan2(&self, other: impl super::AsView<T>) -> Result<Array<T>> {
        let o = other.as_view();
        self.contiguous()?.arctan2(&*o.contiguous()?)
    }

    /// The same as [`ArrayView::arctan2`] (Rust's name).
    pub fn atan2(&self, other: impl super::AsView<T>) -> Result<Array<T>> {
        self.arctan2(other)
    }
}

impl<T: ComplexPart> ArrayView<'_, T> {
    /// The elements as complex numbers with zero imaginary parts ([`Array::to_complex`]).
    pub fn to_complex(&self) -> Result<Array<crate::element::Complex<T>>> {
        self.contiguous()?.to_complex()
    }
}

impl<T: MatmulElement> ArrayView<'_, T> {
    /// The matrix product `self @ other` ([`Array::matmul`]); `other` is an array or a view.
    /// A transposed operand is copied first (one tiled transpose), then cuBLAS (or the CPU
    /// GEMM) runs on the C-contiguous operands.
    pub fn matmul(&self, other: impl super::AsView<T>) -> Result<Array<T>> {
        let o = other.as_view();
        self.contiguous()?.matmul(&*o.contiguous()?)
    }

    /// NumPy's `dot` for operands of at most two dimensions ([`Array::dot`]).
    pub fn dot(&self, other: impl super::AsView<T>) -> Result<Array<T>> {
        let o = other.as_view();
        self.contiguous()?.dot(&*o.contiguous()?)
    }
}
