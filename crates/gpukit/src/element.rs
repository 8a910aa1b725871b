//! Element types an [`Array`](crate::Array) can hold, and their names on each side.

use std::fmt;

mod complex;

pub use complex::{Complex, ComplexPart};

/// The runtime tag of an element type, named as NumPy names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `bool`
    Bool,
    /// `u8`
    U8,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// [`Complex<f32>`] (two `f32`)
    Complex64,
    /// [`Complex<f64>`] (two `f64`)
    Complex128,
}

impl DType {
    /// NumPy's name (`float64`, `int32`, `bool`, ...).
    pub fn numpy_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// The CUDA C++ type that holds this element.
    pub fn cuda_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "unsigned char",
            DType::I32 => "int",
            DType::I64 => "long long",
            DType::U32 => "unsigned int",
            DType::U64 => "unsigned long long",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::Complex64 => "float2",
            DType::Complex128 => "double2",
        }
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::U8 => 1,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// Whether this is a floating point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// Whether this is a complex type (`complex64`, `complex128`).
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.numpy_name())
    }
}

/// A Rust type that can live in a gpukit array and cross to the GPU.
///
/// Implemented for `f32`, `f64`, `i32`, `i64`, `u32`, `u64`, `u8`, `bool` and
/// [`Complex<f32>`]/[`Complex<f64>`] (complex arrays have their own `+ - * /`, `re`, `im`,
/// `abs` and `conj`, and no [`Numeric`] operations).
pub trait Element:
    Copy
    + Default
    + Send
    + Sync
    + PartialEq
    + PartialOrd
    + fmt::Debug
    + cudarc::driver::DeviceRepr
    + cudarc::driver::ValidAsZeroBits
    + 'static
{
    /// The runtime tag.
    const DTYPE: DType;
    /// Zero of this type (`false` for bool).
    fn zero() -> Self;
    /// One of this type (`true` for bool).
    fn one() -> Self;
    /// Lossy conversion from f64 (as Rust's `as` does).
    fn from_f64(v: f64) -> Self;
    /// Lossy conversion to f64 (as Rust's `as` does).
    fn to_f64(self) -> f64;
    /// The value as a [`Scalar`] (exact for every element type), for display and conversions.
    fn to_scalar(self) -> Scalar;
    /// Conversion from another element type, as Rust's `as` does (`true` is 1, nonzero is `true`).
    fn cast_from<U: Element>(u: U) -> Self {
        match u.to_scalar() {
            Scalar::Bool(b) => Self::from_f64(if b { 1.0 } else { 0.0 }),
            Scalar::Int(i) => Self::from_i128(i),
            Scalar::Float(f) => Self::from_f64(f),
            Scalar::Complex(re, im) => Self::from_complex(re, im),
        }
    }
    /// Conversion from a complex value: the real part, as NumPy's `astype` does (nonzero
    /// real or imaginary part is `true`); complex types keep both parts.
    fn from_complex(re: f64, _im: f64) -> Self {
        Self::from_f64(re)
    }
    /// Conversion from an integer, as Rust's `as` does (wrapping to the width of `Self`).
    fn from_i128(v: i128) -> Self;
}

/// One element value, exact for every element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A `bool`.
    Bool(bool),
    /// Any integer type.
    Int(i128),
    /// `f32` or `f64` (f32 widened exactly).
    Float(f64),
    /// A complex value's real and imaginary parts (widened exactly).
    Complex(f64, f64),
}

/// Element types with arithmetic: every type but `bool`.
///
/// The operations follow Rust's semantics on both backends, except that integer overflow wraps
/// (as release builds do) and integer division or remainder by zero gives 0 (as NumPy does)
/// instead of panicking.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no numeric array operations (sum, min, max, %, arange, ...)",
    note = "complex arrays have +, -, *, /, re(), im(), abs(), conj() and gpukit::fft; bool arrays \
            convert with .astype::<u8>() or .astype::<f64>()"
)]
pub trait Numeric: Element {
    /// Identity of `min` (the largest value, +inf for floats).
    const MAX_VALUE: Self;
    /// Identity of `max` (the smallest value, -inf for floats).
    const MIN_VALUE: Self;
    /// `a + b`
    fn elem_add(self, b: Self) -> Self;
    /// `a - b`
    fn elem_sub(self, b: Self) -> Self;
    /// `a * b`
    fn elem_mul(self, b: Self) -> Self;
    /// `a / b` (integers: 0 when `b == 0`)
    fn elem_div(self, b: Self) -> Self;
    /// `a % b` with the sign of `a`, as Rust's `%` (integers: 0 when `b == 0`)
    fn elem_rem(self, b: Self) -> Self;
    /// `-a` (unsigned integers wrap)
    fn elem_neg(self) -> Self;
    /// `|a|`
    fn elem_abs(self) -> Self;
    /// The smaller of two values; NaN if either is NaN.
    fn elem_min(self, b: Self) -> Self;
    /// The larger of two values; NaN if either is NaN.
    fn elem_max(self, b: Self) -> Self;
}

/// Floating point element types (`f32`, `f64`) and their math functions.
pub trait Float: Numeric {
    /// Square root.
    fn elem_sqrt(self) -> Self;
    /// `e^x`
    fn elem_exp(self) -> Self;
    /// Natural logarithm.
    fn elem_ln(self) -> Self;
    /// Sine.
    fn elem_sin(self) -> Self;
    /// Cosine.
    fn elem_cos(self) -> Self;
    /// Hyperbolic tangent.
    fn elem_tanh(self) -> Self;
    /// `x^p`
    fn elem_powf(self, p: Self) -> Self;
}

macro_rules! numeric_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn zero() -> Self { 0 as $t }
            fn one() -> Self { 1 as $t }
            fn from_f64(v: f64) -> Self { v as $t }
            fn to_f64(self) -> f64 { self as f64 }
            fn to_scalar(self) -> Scalar { numeric_element!(@scalar $d self) }
            fn from_i128(v: i128) -> Self { v as $t }
        }
    )*};
    (@scalar F32 $v:ident) => { Scalar::Float($v as f64) };
    (@scalar F64 $v:ident) => { Scalar::Float($v) };
    (@scalar $d:ident $v:ident) => { Scalar::Int($v as i128) };
}

numeric_element!(u8 => U8, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

macro_rules! int_numeric {
    ($($t:ty: $abs:expr),* $(,)?) => {$(
        impl Numeric for $t {
            const MAX_VALUE: Self = <$t>::MAX;
            const MIN_VALUE: Self = <$t>::MIN;
            fn elem_add(self, b: Self) -> Self { self.wrapping_add(b) }
            fn elem_sub(self, b: Self) -> Self { self.wrapping_sub(b) }
            fn elem_mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            fn elem_div(self, b: Self) -> Self { if b == 0 { 0 } else { self.wrapping_div(b) } }
            fn elem_rem(self, b: Self) -> Self { if b == 0 { 0 } else { self.wrapping_rem(b) } }
            fn elem_neg(self) -> Self { self.wrapping_neg() }
            fn elem_abs(self) -> Self { let f: fn($t) -> $t = $abs; f(self) }
            fn elem_min(self, b: Self) -> Self { if b < self { b } else { self } }
            fn elem_max(self, b: Self) -> Self { if b > self { b } else { self } }
        }
    )*};
}

int_numeric!(
    u8: |v| v, u32: |v| v, u64: |v| v,
    i32: |v| v.wrapping_abs(), i64: |v| v.wrapping_abs(),
);

macro_rules! float_numeric {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            const MAX_VALUE: Self = <$t>::INFINITY;
            const MIN_VALUE: Self = <$t>::NEG_INFINITY;
            fn elem_add(self, b: Self) -> Self { self + b }
            fn elem_sub(self, b: Self) -> Self { self - b }
            fn elem_mul(self, b: Self) -> Self { self * b }
            fn elem_div(self, b: Self) -> Self { self / b }
            fn elem_rem(self, b: Self) -> Self { self % b }
            fn elem_neg(self) -> Self { -self }
            fn elem_abs(self) -> Self { self.abs() }
            fn elem_min(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() { <$t>::NAN } else if b < self { b } else { self }
            }
            fn elem_max(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() { <$t>::NAN } else if b > self { b } else { self }
            }
        }
        impl Float for $t {
            fn elem_sqrt(self) -> Self { self.sqrt() }
            fn elem_exp(self) -> Self { self.exp() }
            fn elem_ln(self) -> Self { self.ln() }
            fn elem_sin(self) -> Self { self.sin() }
            fn elem_cos(self) -> Self { self.cos() }
            fn elem_tanh(self) -> Self { self.tanh() }
            fn elem_powf(self, p: Self) -> Self { self.powf(p) }
        }
    )*};
}

float_numeric!(f32, f64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn from_i128(v: i128) -> Self {
        v != 0
    }
    fn from_complex(re: f64, im: f64) -> Self {
        re != 0.0 || im != 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_rust() {
        assert_eq!(DType::F64.size(), std::mem::size_of::<f64>());
        assert_eq!(DType::U8.size(), std::mem::size_of::<u8>());
        assert_eq!(DType::Bool.size(), std::mem::size_of::<bool>());
        assert_eq!(<i32 as Element>::DTYPE.numpy_name(), "int32");
        assert!(bool::from_f64(2.0));
    }

    #[test]
    fn casts_follow_rust_as() {
        assert_eq!(u8::cast_from(300i32), 44);
        assert_eq!(i32::cast_from(-1.7f64), -1);
        assert_eq!(u8::cast_from(-1.0f32), 0);
        assert_eq!(f64::cast_from(true), 1.0);
        assert!(bool::cast_from(0.5f32));
        assert_eq!(i64::cast_from(u64::MAX), -1);
    }

    #[test]
    fn integer_arithmetic_never_panics() {
        assert_eq!(7i32.elem_div(0), 0);
        assert_eq!(7i32.elem_rem(0), 0);
        assert_eq!(i32::MIN.elem_div(-1), i32::MIN);
        assert_eq!(255u8.elem_add(1), 0);
        assert_eq!((-7i64).elem_rem(3), -1);
        assert!(f64::NAN.elem_min(1.0).is_nan());
        assert_eq!(2.0f64.elem_max(3.0), 3.0);
    }
}
