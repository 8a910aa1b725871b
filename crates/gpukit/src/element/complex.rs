//! `Complex<T>`: a complex number as an array element (NumPy's `complex64` and `complex128`).
//!
//! gpukit has its own type rather than num-complex's because an element must be a
//! [`cudarc::driver::DeviceRepr`], and Rust's orphan rule forbids implementing cudarc's trait for
//! num-complex's type outside either crate. The layout is the same (`#[repr(C)]`, real part
//! first, as C99's `_Complex`, CUDA's `float2`/`double2` and cuFFT's complex types), and
//! `From` converts both ways.

use super::{DType, Element, Scalar};
use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A complex number `re + im·i`: `Complex<f32>` is NumPy's `complex64`, `Complex<f64>` its
/// `complex128`.
///
/// Ordering is lexicographic (real part first), as NumPy sorts complex values.
///
/// ```
/// use gpukit::Complex;
/// let z = Complex::new(1.0, 2.0) * Complex::new(3.0, -1.0);
/// assert_eq!(z, Complex::new(5.0, 5.0));
/// assert_eq!(z.to_string(), "5+5j");
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Complex<T> {
    /// The real part.
    pub re: T,
    /// The imaginary part.
    pub im: T,
}

/// The real types a [`Complex`] is made of (`f32`, `f64`).
pub trait ComplexPart: super::Float {
    /// NumPy's name of the complex type made of this one.
    const COMPLEX_DTYPE: DType;
}

impl ComplexPart for f32 {
    const COMPLEX_DTYPE: DType = DType::Complex64;
}

impl ComplexPart for f64 {
    const COMPLEX_DTYPE: DType = DType::Complex128;
}

impl<T: ComplexPart> Complex<T> {
    /// `re + im·i`.
    pub fn new(re: T, im: T) -> Complex<T> {
        Complex { re, im }
    }

    /// The complex conjugate `re - im·i`.
    pub fn conj(self) -> Complex<T> {
        Complex::new(self.re, self.im.elem_neg())
    }

    /// The magnitude `|z|` (computed without overflow for large parts, as `hypot`).
    pub fn abs(self) -> T {
        T::from_f64(self.re.to_f64().hypot(self.im.to_f64()))
    }
}

impl<T: ComplexPart> Add for Complex<T> {
    type Output = Complex<T>;
    fn add(self, b: Complex<T>) -> Complex<T> {
        Complex::new(self.re.elem_add(b.re), self.im.elem_add(b.im))
    }
}

impl<T: ComplexPart> Sub for Complex<T> {
    type Output = Complex<T>;
    fn sub(self, b: Complex<T>) -> Complex<T> {
        Complex::new(self.re.elem_sub(b.re), self.im.elem_sub(b.im))
    }
}

impl<T: ComplexPart> Mul for Complex<T> {
    type Output = Complex<T>;
    fn mul(self, b: Complex<T>) -> Complex<T> {
        let (a, c) = (self, b);
        Complex::new(
            a.re.elem_mul(c.re).elem_sub(a.im.elem_mul(c.im)),
            a.re.elem_mul(c.im).elem_add(a.im.elem_mul(c.re)),
        )
    }
}

impl<T: ComplexPart> Div for Complex<T> {
    type Output = Complex<T>;
    /// The textbook quotient `a·conj(b) / |b|²` (what the CUDA kernels compute too).
    fn div(self, b: Complex<T>) -> Complex<T> {
        let (xr, xi, yr, yi) = (self.re, self.im, b.re, b.im);
        let d = yr.elem_mul(yr).elem_add(yi.elem_mul(yi));
        let re = xr.elem_mul(yr).elem_add(xi.elem_mul(yi));
        let im = xi.elem_mul(yr).elem_sub(xr.elem_mul(yi));
        Complex::new(re.elem_div(d), im.elem_div(d))
    }
}

impl<T: ComplexPart> Neg for Complex<T> {
    type Output = Complex<T>;
    fn neg(self) -> Complex<T> {
        Complex::new(self.re.elem_neg(), self.im.elem_neg())
    }
}

impl<T> From<num_complex::Complex<T>> for Complex<T> {
    fn from(z: num_complex::Complex<T>) -> Complex<T> {
        Complex { re: z.re, im: z.im }
    }
}

impl<T> From<Complex<T>> for num_complex::Complex<T> {
    fn from(z: Complex<T>) -> num_complex::Complex<T> {
        num_complex::Complex { re: z.re, im: z.im }
    }
}

impl<T: ComplexPart> From<T> for Complex<T> {
    /// A real number as a complex one (imaginary part zero).
    fn from(re: T) -> Complex<T> {
        Complex::new(re, T::zero())
    }
}

/// Formats one complex value as NumPy does: `1+2j`, `-0.5-1j`, `nan+infj`.
pub(crate) fn format_complex(re: f64, im: f64) -> String {
    let sign = if im.is_sign_negative() && !im.is_nan() {
        "-"
    } else {
        "+"
    };
    format!("{}{sign}{}j", short(re), short(im.abs()))
}

/// A float the way NumPy prints one part of a complex scalar (`1`, `0.5`, `inf`, `nan`).
fn short(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v}")
    }
}

impl<T: ComplexPart> fmt::Display for Complex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_complex(self.re.to_f64(), self.im.to_f64()))
    }
}

// SAFETY: a `#[repr(C)]` pair of elements (plain data valid for every bit pattern, zero bits
// are zero): so is the pair, and zero bits are 0+0j.
unsafe impl<T: ComplexPart> cudarc::driver::DeviceRepr for Complex<T> {}
unsafe impl<T: ComplexPart> cudarc::driver::ValidAsZeroBits for Complex<T> {}

impl<T: ComplexPart> Element for Complex<T> {
    const DTYPE: DType = T::COMPLEX_DTYPE;
    fn zero() -> Self {
        Complex::new(T::zero(), T::zero())
    }
    fn one() -> Self {
        Complex::new(T::one(), T::zero())
    }
    fn from_f64(v: f64) -> Self {
        Complex::new(T::from_f64(v), T::zero())
    }
    /// The real part (the imaginary part is dropped, as NumPy's `astype` does).
    fn to_f64(self) -> f64 {
        self.re.to_f64()
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Complex(self.re.to_f64(), self.im.to_f64())
    }
    fn from_i128(v: i128) -> Self {
        Complex::new(T::from_i128(v), T::zero())
    }
    fn from_complex(re: f64, im: f64) -> Self {
        Complex::new(T::from_f64(re), T::from_f64(im))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_layout() {
        let a = Complex::new(1.0f64, 2.0);
        let b = Complex::new(3.0, -1.0);
        assert_eq!(a + b, Complex::new(4.0, 1.0));
        assert_eq!(a - b, Complex::new(-2.0, 3.0));
        assert_eq!(a * b, Complex::new(5.0, 5.0));
        let q = (a * b) / b;
        assert!((q.re - 1.0).abs() < 1e-15 && (q.im - 2.0).abs() < 1e-15);
        assert_eq!(Complex::new(3.0f32, 4.0).abs(), 5.0);
        assert_eq!(a.conj(), Complex::new(1.0, -2.0));
        assert_eq!(std::mem::size_of::<Complex<f64>>(), 16);
        assert_eq!(std::mem::size_of::<Complex<f32>>(), DType::Complex64.size());
        let n: num_complex::Complex<f64> = a.into();
        assert_eq!(Complex::from(n), a);
    }

    #[test]
    fn casts_and_display() {
        assert_eq!(Complex::<f32>::cast_from(2i32), Complex::new(2.0, 0.0));
        assert_eq!(f64::cast_from(Complex::new(1.5f64, 9.0)), 1.5);
        assert_eq!(
            Complex::<f32>::cast_from(Complex::new(1.5f64, -2.0)),
            Complex::new(1.5, -2.0)
        );
        assert!(bool::cast_from(Complex::new(0.0f64, 1.0)));
        assert_eq!(Complex::new(1.0f64, 2.0).to_string(), "1+2j");
        assert_eq!(Complex::new(-0.5f64, -1.0).to_string(), "-0.5-1j");
        assert_eq!(
            Complex::new(f64::NAN, f64::INFINITY).to_string(),
            "nan+infj"
        );
        assert!(Complex::new(1.0, 5.0) < Complex::new(2.0, 0.0));
        assert_eq!(DType::Complex128.numpy_name(), "complex128");
    }
}
