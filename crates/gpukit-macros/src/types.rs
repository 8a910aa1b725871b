//! The types of the kernel language: Rust primitives and how each side spells them.

use std::fmt;

/// A primitive scalar type of the kernel language.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Prim {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Isize,
    U8,
    U16,
    U32,
    U64,
    Usize,
    F32,
    F64,
}

/// Every primitive, for error messages and lookups.
pub const ALL_PRIMS: [Prim; 13] = [
    Prim::Bool,
    Prim::I8,
    Prim::I16,
    Prim::I32,
    Prim::I64,
    Prim::Isize,
    Prim::U8,
    Prim::U16,
    Prim::U32,
    Prim::U64,
    Prim::Usize,
    Prim::F32,
    Prim::F64,
];

impl Prim {
    /// The primitive named `name` in Rust (`f32`, `usize`, ...).
    pub fn from_rust(name: &str) -> Option<Prim> {
        ALL_PRIMS.iter().copied().find(|p| p.rust() == name)
    }

    /// The Rust spelling.
    pub fn rust(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I8 => "i8",
            Prim::I16 => "i16",
            Prim::I32 => "i32",
            Prim::I64 => "i64",
            Prim::Isize => "isize",
            Prim::U8 => "u8",
            Prim::U16 => "u16",
            Prim::U32 => "u32",
            Prim::U64 => "u64",
            Prim::Usize => "usize",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
        }
    }

    /// The CUDA C++ spelling (`usize` is 64 bits on both sides).
    pub fn cuda(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I8 => "signed char",
            Prim::I16 => "short",
            Prim::I32 => "int",
            Prim::I64 | Prim::Isize => "long long",
            Prim::U8 => "unsigned char",
            Prim::U16 => "unsigned short",
            Prim::U32 => "unsigned int",
            Prim::U64 | Prim::Usize => "unsigned long long",
            Prim::F32 => "float",
            Prim::F64 => "double",
        }
    }

    /// The CUDA C++ unsigned type of the same width (integers only).
    pub fn cuda_unsigned(self) -> &'static str {
        match self {
            Prim::I8 | Prim::U8 => "unsigned char",
            Prim::I16 | Prim::U16 => "unsigned short",
            Prim::I32 | Prim::U32 => "unsigned int",
            _ => "unsigned long long",
        }
    }

    /// Whether this is an integer type.
    pub fn is_int(self) -> bool {
        !matches!(self, Prim::Bool | Prim::F32 | Prim::F64)
    }

    /// Whether this is a signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64 | Prim::Isize
        )
    }

    /// Whether this is a floating point type.
    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Prim::Bool | Prim::I8 | Prim::U8 => 8,
            Prim::I16 | Prim::U16 => 16,
            Prim::I32 | Prim::U32 | Prim::F32 => 32,
            _ => 64,
        }
    }

    /// Integers narrower than 32 bits, which C++ promotes to `int` in arithmetic.
    pub fn is_narrow_int(self) -> bool {
        self.is_int() && self.bits() < 32
    }

    /// The `gpukit::DType` variant for array elements and scalar parameters, if there is one.
    /// `usize`/`isize` travel as 64-bit integers.
    pub fn dtype(self) -> Option<&'static str> {
        Some(match self {
            Prim::Bool => "Bool",
            Prim::U8 => "U8",
            Prim::I32 => "I32",
            Prim::I64 | Prim::Isize => "I64",
            Prim::U32 => "U32",
            Prim::U64 | Prim::Usize => "U64",
            Prim::F32 => "F32",
            Prim::F64 => "F64",
            Prim::I8 | Prim::I16 | Prim::U16 => return None,
        })
    }

    /// Whether arrays of this type can be kernel parameters (the `DType`s of gpukit arrays).
    pub fn is_element(self) -> bool {
        !matches!(
            self,
            Prim::I8 | Prim::I16 | Prim::U16 | Prim::Usize | Prim::Isize
        )
    }

    /// The type that carries a scalar parameter of this type across the launch.
    pub fn carrier(self) -> Prim {
        match self {
            Prim::Usize => Prim::U64,
            Prim::Isize => Prim::I64,
            p => p,
        }
    }
}

impl fmt::Display for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust())
    }
}

/// The element types an array parameter may have, for messages.
pub const ELEMENT_TYPES: &str = "f32, f64, i32, i64, u32, u64, u8 or bool";
