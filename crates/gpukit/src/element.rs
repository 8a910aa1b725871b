//! Element types an [`Array`](crate::Array) can hold, and their names on each side.

use std::fmt;

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
        }
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::U8 => 1,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// Whether this is a floating point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.numpy_name())
    }
}

/// A Rust type that can live in a gpukit array and cross to the GPU.
///
/// Implemented for `f32`, `f64`, `i32`, `i64`, `u32`, `u64`, `u8` and `bool`.
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
}

macro_rules! numeric_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn zero() -> Self { 0 as $t }
            fn one() -> Self { 1 as $t }
            fn from_f64(v: f64) -> Self { v as $t }
            fn to_f64(self) -> f64 { self as f64 }
        }
    )*};
}

numeric_element!(u8 => U8, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

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
        assert_eq!(bool::from_f64(2.0), true);
    }
}
