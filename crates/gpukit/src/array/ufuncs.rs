//! NumPy's remaining elementwise functions: float functions (`log2`, `log10`, `exp2`, `expm1`,
//! `log1p`, `tan`, `arcsin`, `arccos`, `arctan`, `sinh`, `cosh`, `floor`, `ceil`, `round`,
//! `reciprocal`), predicates giving bool arrays (`isnan`, `isinf`, `isfinite`), and for every
//! numeric type `square`, `sign`, `clip` and the two-array `maximum`/`minimum` (NaN
//! propagating, as NumPy's). Kernels in `kernels/extra`.

use super::kernels;
use super::ops::check_same;
use super::{Array, Storage};
use crate::backend::cpu;
use crate::element::{Element, Float, Numeric};
use crate::error::Result;

impl<T: Element> Array<T> {
    /// `cpu(self[i])` on the host, or the kernel `name` of `kernels/extra` on a GPU.
    fn extra_map<U: Element>(&self, name: &str, cpu: impl Fn(T) -> U + Sync) -> Result<Array<U>> {
        self.storage().ensure_usable()?;
        let n = self.size();
        let shape = self.shape().to_vec();
        match self.storage() {
            Storage::Cpu(a) => {
                Array::from_storage(shape, Storage::Cpu(cpu::map_new(a, |&x| cpu(x))?))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<U>(n)? };
                kernels::unary_fn(backend, name, slice, &mut out, n)?;
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
}

/// Declares float functions: method name, kernel name, host definition on `f64`, doc.
macro_rules! float_fns {
    ($($method:ident $kernel:literal $f:expr, $doc:literal;)*) => {
        impl<T: Float> Array<T> {
            $(
                #[doc = $doc]
                pub fn $method(&self) -> Result<Array<T>> {
                    let f: fn(f64) -> f64 = $f;
                    self.extra_map($kernel, move |x: T| T::from_f64(f(x.to_f64())))
                }
            )*
        }
    };
}

float_fns! {
    log2 "log2" f64::log2, "Base-2 logarithm elementwise.";
    log10 "log10" f64::log10, "Base-10 logarithm elementwise.";
    exp2 "exp2" f64::exp2, "`2^x` elementwise.";
    expm1 "expm1" f64::exp_m1, "`e^x - 1` elementwise (accurate near 0).";
    log1p "log1p" f64::ln_1p, "`ln(1 + x)` elementwise (accurate near 0).";
    tan "tan" f64::tan, "Tangent elementwise.";
    arcsin "arcsin" f64::asin, "Inverse sine elementwise (NaN outside [-1, 1]).";
    arccos "arccos" f64::acos, "Inverse cosine elementwise (NaN outside [-1, 1]).";
    arctan "arctan" f64::atan, "Inverse tangent elementwise.";
    sinh "sinh" f64::sinh, "Hyperbolic sine elementwise.";
    cosh "cosh" f64::cosh, "Hyperbolic cosine elementwise.";
    floor "floor" f64::floor, "Largest integer not above `x`, elementwise.";
    ceil "ceil" f64::ceil, "Smallest integer not below `x`, elementwise.";
    round "round" f64::round_ties_even, "Nearest integer, halves to even (as NumPy's `round`), elementwise.";
    reciprocal "reciprocal" |x| 1.0 / x, "`1 / x` elementwise.";
}

impl<T: Float> Array<T> {
    /// The angle of the point `(x = other[i], y = self[i])` in radians, in `[-π, π]`, with the
    /// quadrant from both signs: NumPy's `arctan2(y, x)` as `y.arctan2(&x)`. The arrays must
    /// have one shape and device (a view reads through [`ArrayView::arctan2`]).
    ///
    /// [`ArrayView::arctan2`]: crate::ArrayView::arctan2
    pub fn arctan2(&self, other: &Array<T>) -> Result<Array<T>> {
        self.pairwise("arctan2", other, |y, x| {
            T::from_f64(y.to_f64().atan2(x.to_f64()))
        })
    }

    /// The same as [`Array::arctan2`] (Rust's name, `y.atan2(x)`).
    pub fn atan2(&self, other: &Array<T>) -> Result<Array<T>> {
        self.arctan2(other)
    }

    /// Whether each element is NaN.
    pub fn isnan(&self) -> Result<Array<bool>> {
        self.extra_map("isnan", |x: T| x.to_f64().is_nan())
    }

    /// Whether each element is infinite (either sign).
    pub fn isinf(&self) -> Result<Array<bool>> {
        self.extra_map("isinf", |x: T| x.to_f64().is_infinite())
    }

    /// Whether each element is finite (not NaN, not infinite).
    pub fn isfinite(&self) -> Result<Array<bool>> {
        self.extra_map("isfinite", |x: T| x.to_f64().is_finite())
    }
}

impl<T: Numeric> Array<T> {
    /// `x * x` elementwise (integers wrap).
    pub fn square(&self) -> Result<Array<T>> {
        self.extra_map("square", |x: T| x.elem_mul(x))
    }

    /// `-1`, `0` or `1` by the sign of each element (NaN stays NaN), as NumPy's `sign`.
    pub fn sign(&self) -> Result<Array<T>> {
        self.extra_map("sign", |x: T| {
            let (zero, one) = (T::zero(), T::one());
            if x > zero {
                one
            } else if x < zero {
                zero.elem_sub(one)
            } else {
                x.elem_mul(zero).elem_add(x.elem_sub(x)) // 0, or NaN for NaN
            }
        })
    }

    /// Each element limited to `[lo, hi]` (NaN stays NaN), as NumPy's `clip(a, lo, hi)`.
    pub fn clip(&self, lo: T, hi: T) -> Result<Array<T>> {
        self.storage().ensure_usable()?;
        let n = self.size();
        let shape = self.shape().to_vec();
        match self.storage() {
            Storage::Cpu(a) => Array::from_storage(
                shape,
                Storage::Cpu(cpu::map_new(a, |&x| x.elem_max(lo).elem_min(hi))?),
            ),
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                kernels::clip(backend, slice, lo, hi, &mut out, n)?;
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

    /// The larger of `self[i]` and `other[i]` (NaN if either is), as NumPy's `maximum`.
    pub fn maximum(&self, other: &Array<T>) -> Result<Array<T>> {
        self.pairwise("maximum", other, |a, b| a.elem_max(b))
    }

    /// The smaller of `self[i]` and `other[i]` (NaN if either is), as NumPy's `minimum`.
    pub fn minimum(&self, other: &Array<T>) -> Result<Array<T>> {
        self.pairwise("minimum", other, |a, b| a.elem_min(b))
    }

    fn pairwise(
        &self,
        name: &str,
        other: &Array<T>,
        f: impl Fn(T, T) -> T + Sync,
    ) -> Result<Array<T>> {
        check_same(name, self, other)?;
        let n = self.size();
        let shape = self.shape().to_vec();
        match (self.storage(), other.storage()) {
            (Storage::Cpu(a), Storage::Cpu(b)) => Array::from_storage(
                shape,
                Storage::Cpu(cpu::zip_map_new(a, b, |&x, &y| f(x, y))?),
            ),
            (Storage::Cuda { backend, slice }, Storage::Cuda { slice: bs, .. }) => {
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                kernels::binary_fn(backend, name, slice, bs, &mut out, n)?;
                Array::from_storage(
                    shape,
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
            _ => Err(crate::error::Error::Other(
                "internal: devices checked above".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    fn v<T: Element>(x: Vec<T>) -> Array<T> {
        let n = x.len();
        Array::from_vec_on(x, [n], &Device::Cpu).unwrap()
    }

    #[test]
    fn float_functions_match_std() {
        let x = v(vec![0.25f64, 0.5, 2.5, -1.5]);
        let h = x.to_vec().unwrap();
        let check = |got: Array<f64>, f: fn(f64) -> f64| {
            for (g, &x) in got.to_vec().unwrap().iter().zip(&h) {
                let w = f(x);
                assert!(g == &w || (g.is_nan() && w.is_nan()), "{g} vs {w} at {x}");
            }
        };
        check(x.log2().unwrap(), f64::log2);
        check(x.tan().unwrap(), f64::tan);
        check(x.arcsin().unwrap(), f64::asin);
        check(x.cosh().unwrap(), f64::cosh);
        check(x.reciprocal().unwrap(), |x| 1.0 / x);
        assert_eq!(
            x.round().unwrap().to_vec().unwrap(),
            vec![0.0, 0.0, 2.0, -2.0]
        );
        assert_eq!(
            x.floor().unwrap().to_vec().unwrap(),
            vec![0.0, 0.0, 2.0, -2.0]
        );
        assert_eq!(
            x.ceil().unwrap().to_vec().unwrap(),
            vec![1.0, 1.0, 3.0, -1.0]
        );
        let y = v(vec![1.0f32, f32::NAN, f32::INFINITY, -0.0]);
        assert_eq!(
            y.isnan().unwrap().to_vec().unwrap(),
            vec![false, true, false, false]
        );
        assert_eq!(
            y.isinf().unwrap().to_vec().unwrap(),
            vec![false, false, true, false]
        );
        assert_eq!(
            y.isfinite().unwrap().to_vec().unwrap(),
            vec![true, false, false, true]
        );
    }

    #[test]
    fn numeric_functions() {
        let a = v(vec![-3i32, 0, 4]);
        assert_eq!(a.square().unwrap().to_vec().unwrap(), vec![9, 0, 16]);
        assert_eq!(a.sign().unwrap().to_vec().unwrap(), vec![-1, 0, 1]);
        assert_eq!(a.clip(-1, 2).unwrap().to_vec().unwrap(), vec![-1, 0, 2]);
        let u = v(vec![0u8, 7]);
        assert_eq!(u.sign().unwrap().to_vec().unwrap(), vec![0, 1]);
        let f = v(vec![1.0, f64::NAN, -2.0]);
        let g = v(vec![0.0, 1.0, 5.0]);
        let m = f.maximum(&g).unwrap().to_vec().unwrap();
        assert_eq!((m[0], m[2]), (1.0, 5.0));
        assert!(m[1].is_nan());
        assert_eq!(f.minimum(&g).unwrap().to_vec().unwrap()[2], -2.0);
        assert!(f.sign().unwrap().to_vec().unwrap()[1].is_nan());
        assert!(f.clip(0.0, 1.0).unwrap().to_vec().unwrap()[1].is_nan());
        assert!(f.maximum(&v(vec![1.0])).is_err());
    }
}
