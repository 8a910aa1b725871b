//! The math methods of the kernel language: which receivers they take, how they are typed,
//! and their CUDA C++ spelling.

use crate::types::Prim;

/// Which receivers a method accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recv {
    /// `f32`/`f64` only.
    Float,
    /// Integers only.
    Int,
    /// Signed integers and floats.
    Signed,
    /// Any integer or float.
    Num,
}

/// The type of an argument or result relative to the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// The receiver's type.
    Same,
    /// A fixed type.
    Fixed(Prim),
}

/// A supported method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Method {
    /// Name as called.
    pub name: &'static str,
    /// Accepted receivers.
    pub recv: Recv,
    /// Argument types.
    pub args: &'static [Rel],
    /// Result type.
    pub ret: Rel,
}

const S: Rel = Rel::Same;

macro_rules! m {
    ($name:literal, $recv:ident, [$($a:expr),*], $ret:expr) => {
        Method { name: $name, recv: Recv::$recv, args: &[$($a),*], ret: $ret }
    };
}

/// Every method the kernel language supports.
pub const METHODS: &[Method] = &[
    m!("sqrt", Float, [], S),
    m!("cbrt", Float, [], S),
    m!("sin", Float, [], S),
    m!("cos", Float, [], S),
    m!("tan", Float, [], S),
    m!("asin", Float, [], S),
    m!("acos", Float, [], S),
    m!("atan", Float, [], S),
    m!("sinh", Float, [], S),
    m!("cosh", Float, [], S),
    m!("tanh", Float, [], S),
    m!("asinh", Float, [], S),
    m!("acosh", Float, [], S),
    m!("atanh", Float, [], S),
    m!("exp", Float, [], S),
    m!("exp2", Float, [], S),
    m!("exp_m1", Float, [], S),
    m!("ln", Float, [], S),
    m!("ln_1p", Float, [], S),
    m!("log2", Float, [], S),
    m!("log10", Float, [], S),
    m!("log", Float, [S], S),
    m!("floor", Float, [], S),
    m!("ceil", Float, [], S),
    m!("round", Float, [], S),
    m!("trunc", Float, [], S),
    m!("fract", Float, [], S),
    m!("recip", Float, [], S),
    m!("to_degrees", Float, [], S),
    m!("to_radians", Float, [], S),
    m!("powi", Float, [Rel::Fixed(Prim::I32)], S),
    m!("powf", Float, [S], S),
    m!("atan2", Float, [S], S),
    m!("hypot", Float, [S], S),
    m!("copysign", Float, [S], S),
    m!("mul_add", Float, [S, S], S),
    m!("is_nan", Float, [], Rel::Fixed(Prim::Bool)),
    m!("is_finite", Float, [], Rel::Fixed(Prim::Bool)),
    m!("is_infinite", Float, [], Rel::Fixed(Prim::Bool)),
    m!("is_sign_negative", Float, [], Rel::Fixed(Prim::Bool)),
    m!("is_sign_positive", Float, [], Rel::Fixed(Prim::Bool)),
    m!("abs", Signed, [], S),
    m!("signum", Signed, [], S),
    m!("min", Num, [S], S),
    m!("max", Num, [S], S),
    m!("clamp", Num, [S, S], S),
    m!("pow", Int, [Rel::Fixed(Prim::U32)], S),
    m!("wrapping_add", Int, [S], S),
    m!("wrapping_sub", Int, [S], S),
    m!("wrapping_mul", Int, [S], S),
    m!("count_ones", Int, [], Rel::Fixed(Prim::U32)),
    m!("leading_zeros", Int, [], Rel::Fixed(Prim::U32)),
    m!("trailing_zeros", Int, [], Rel::Fixed(Prim::U32)),
];

/// The method called `name`.
pub fn lookup(name: &str) -> Option<Method> {
    METHODS.iter().copied().find(|m| m.name == name)
}

/// Comma-separated method names for error messages.
pub fn names() -> String {
    METHODS
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `prim` is an acceptable receiver.
pub fn accepts(recv: Recv, prim: Prim) -> bool {
    match recv {
        Recv::Float => prim.is_float(),
        Recv::Int => prim.is_int(),
        Recv::Signed => prim.is_float() || prim.is_signed_int(),
        Recv::Num => prim.is_float() || prim.is_int(),
    }
}

/// The CUDA C++ call for `m` on a receiver of type `prim`: a function applied to the receiver
/// followed by the arguments.
pub fn cuda_function(m: &Method, prim: Prim) -> String {
    let f32s = prim == Prim::F32;
    let libm = |base: &str| {
        if f32s {
            format!("{base}f")
        } else {
            base.to_string()
        }
    };
    if prim.is_float() {
        return match m.name {
            "sqrt" | "cbrt" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh"
            | "cosh" | "tanh" | "asinh" | "acosh" | "atanh" | "exp" | "exp2" | "log2" | "log10"
            | "floor" | "ceil" | "round" | "trunc" | "atan2" | "hypot" | "copysign" => libm(m.name),
            "exp_m1" => libm("expm1"),
            "ln" => libm("log"),
            "ln_1p" => libm("log1p"),
            "powf" => libm("pow"),
            "abs" => libm("fabs"),
            "min" => libm("fmin"),
            "max" => libm("fmax"),
            "mul_add" => libm("fma"),
            "is_nan" => "isnan".to_string(),
            "is_finite" => "isfinite".to_string(),
            "is_infinite" => "isinf".to_string(),
            "is_sign_negative" => "signbit".to_string(),
            other => format!("__gk_{other}"),
        };
    }
    match m.name {
        "wrapping_add" => "__gk_wadd".to_string(),
        "wrapping_sub" => "__gk_wsub".to_string(),
        "wrapping_mul" => "__gk_wmul".to_string(),
        other => format!("__gk_{other}"),
    }
}
