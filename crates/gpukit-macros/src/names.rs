//! Unique C++ names for Rust bindings: Rust allows shadowing and names that are C++ keywords
//! or CUDA built-ins; the generated C++ must not.

use std::collections::HashSet;

/// C++ keywords and CUDA/C names the generated code relies on.
const RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "case",
    "catch",
    "char",
    "class",
    "compl",
    "const",
    "constexpr",
    "const_cast",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "xor",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "dim3",
    "uint3",
    "min",
    "max",
    "abs",
    "fabs",
    "fabsf",
    "fmin",
    "fminf",
    "fmax",
    "fmaxf",
    "sqrt",
    "sqrtf",
    "cbrt",
    "cbrtf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanf",
    "asin",
    "asinf",
    "acos",
    "acosf",
    "atan",
    "atanf",
    "atan2",
    "atan2f",
    "sinh",
    "sinhf",
    "cosh",
    "coshf",
    "tanh",
    "tanhf",
    "asinh",
    "asinhf",
    "acosh",
    "acoshf",
    "atanh",
    "atanhf",
    "exp",
    "expf",
    "exp2",
    "exp2f",
    "expm1",
    "expm1f",
    "log",
    "logf",
    "log1p",
    "log1pf",
    "log2",
    "log2f",
    "log10",
    "log10f",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "round",
    "roundf",
    "trunc",
    "truncf",
    "pow",
    "powf",
    "hypot",
    "hypotf",
    "copysign",
    "copysignf",
    "fma",
    "fmaf",
    "fmod",
    "fmodf",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "atomicAdd",
    "atomicSub",
    "atomicMax",
    "atomicMin",
    "atomicExch",
    "atomicCAS",
    "main",
    "printf",
    "malloc",
    "free",
    "memcpy",
    "memset",
    "assert",
    "NULL",
    "INFINITY",
    "NAN",
];

/// Whether `name` cannot be a C++ identifier of the generated code (keyword or CUDA built-in).
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || name.starts_with("__")
}

/// Hands out C++ identifiers, each once.
#[derive(Default)]
pub struct Namer {
    used: HashSet<String>,
}

impl Namer {
    /// A fresh C++ name close to the Rust name `base`.
    pub fn fresh(&mut self, base: &str) -> String {
        let base = base.trim_start_matches("r#");
        let mut base = base.to_string();
        if base.starts_with('_') || RESERVED.contains(&base.as_str()) || base.contains("__") {
            base = format!("v{base}");
        }
        if self.used.insert(base.clone()) {
            return base;
        }
        let mut n = 1;
        loop {
            let candidate = format!("{base}_{n}");
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadowing_keywords_and_underscores() {
        let mut n = Namer::default();
        assert_eq!(n.fresh("x"), "x");
        assert_eq!(n.fresh("x"), "x_1");
        assert_eq!(n.fresh("x"), "x_2");
        assert_eq!(n.fresh("int"), "vint");
        assert_eq!(n.fresh("_tmp"), "v_tmp");
        assert_eq!(n.fresh("a__b"), "va__b");
        assert_eq!(n.fresh("r#float"), "vfloat");
    }
}
