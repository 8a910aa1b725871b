//! The elementwise and reduction operations, declared once: their names (shared with the CUDA
//! kernels) and their CPU definitions.

use crate::element::{Element, Float, Numeric};

/// A binary arithmetic operation (`+ - * / %`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    /// All of them, in kernel-source order.
    pub(crate) const ALL: [BinOp; 5] = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem];

    /// Kernel name stem.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
        }
    }

    /// The operator as written in Rust (for error messages).
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }

    /// The CPU definition.
    pub(crate) fn apply<T: Numeric>(self, a: T, b: T) -> T {
        match self {
            BinOp::Add => a.elem_add(b),
            BinOp::Sub => a.elem_sub(b),
            BinOp::Mul => a.elem_mul(b),
            BinOp::Div => a.elem_div(b),
            BinOp::Rem => a.elem_rem(b),
        }
    }
}

/// A comparison, giving `bool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// All of them, in kernel-source order.
    pub(crate) const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// Kernel name stem.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }

    /// The C++/Rust operator.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The CPU definition.
    pub(crate) fn apply<T: Element>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A unary operation. `Neg` and `Abs` apply to every numeric type, the rest to floats only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Abs,
    Sqrt,
    Exp,
    Ln,
    Sin,
    Cos,
    Tanh,
}

impl UnOp {
    /// Operations defined for every numeric type.
    pub(crate) const NUMERIC: [UnOp; 2] = [UnOp::Neg, UnOp::Abs];
    /// Operations defined for floats only.
    pub(crate) const FLOAT: [UnOp; 6] = [
        UnOp::Sqrt,
        UnOp::Exp,
        UnOp::Ln,
        UnOp::Sin,
        UnOp::Cos,
        UnOp::Tanh,
    ];

    /// Kernel name stem.
    pub(crate) fn name(self) -> &'static str {
        match self {
            UnOp::Neg => "neg",
            UnOp::Abs => "abs",
            UnOp::Sqrt => "sqrt",
            UnOp::Exp => "exp",
            UnOp::Ln => "ln",
            UnOp::Sin => "sin",
            UnOp::Cos => "cos",
            UnOp::Tanh => "tanh",
        }
    }

    /// The CPU definition of `Neg` and `Abs`.
    pub(crate) fn apply_numeric<T: Numeric>(self, a: T) -> T {
        match self {
            UnOp::Neg => a.elem_neg(),
            _ => a.elem_abs(),
        }
    }

    /// The CPU definition of every unary operation on floats.
    pub(crate) fn apply_float<T: Float>(self, a: T) -> T {
        match self {
            UnOp::Neg => a.elem_neg(),
            UnOp::Abs => a.elem_abs(),
            UnOp::Sqrt => a.elem_sqrt(),
            UnOp::Exp => a.elem_exp(),
            UnOp::Ln => a.elem_ln(),
            UnOp::Sin => a.elem_sin(),
            UnOp::Cos => a.elem_cos(),
            UnOp::Tanh => a.elem_tanh(),
        }
    }
}

/// A reduction over all elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduceOp {
    Sum,
    Min,
    Max,
}

impl ReduceOp {
    /// All of them, in kernel-source order.
    pub(crate) const ALL: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

    /// Kernel name stem.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }

    /// The value the reduction starts from.
    pub(crate) fn identity<T: Numeric>(self) -> T {
        match self {
            ReduceOp::Sum => T::zero(),
            ReduceOp::Min => T::MAX_VALUE,
            ReduceOp::Max => T::MIN_VALUE,
        }
    }

    /// The CPU definition of one step.
    pub(crate) fn apply<T: Numeric>(self, a: T, b: T) -> T {
        match self {
            ReduceOp::Sum => a.elem_add(b),
            ReduceOp::Min => a.elem_min(b),
            ReduceOp::Max => a.elem_max(b),
        }
    }
}

/// Evaluates `$body` with `$f` bound to the CPU definition of the binary operation `$op` on `$t`,
/// as a closure `Fn($t, $t) -> $t` of its own type calling `apply` with a constant operation:
/// the operation is matched once, outside the loops in `$body`, so that each loop is specialised
/// (and vectorised) for one operation.
macro_rules! with_binop {
    ($op:expr, $t:ty, |$f:ident| $body:expr) => {
        match $op {
            $crate::array::op::BinOp::Add => {
                let $f = |x: $t, y: $t| $crate::array::op::BinOp::Add.apply(x, y);
                $body
            }
            $crate::array::op::BinOp::Sub => {
                let $f = |x: $t, y: $t| $crate::array::op::BinOp::Sub.apply(x, y);
                $body
            }
            $crate::array::op::BinOp::Mul => {
                let $f = |x: $t, y: $t| $crate::array::op::BinOp::Mul.apply(x, y);
                $body
            }
            $crate::array::op::BinOp::Div => {
                let $f = |x: $t, y: $t| $crate::array::op::BinOp::Div.apply(x, y);
                $body
            }
            $crate::array::op::BinOp::Rem => {
                let $f = |x: $t, y: $t| $crate::array::op::BinOp::Rem.apply(x, y);
                $body
            }
        }
    };
}
pub(crate) use with_binop;

/// [`with_binop`] for comparisons: `$f` is a closure `Fn($t, $t) -> bool`.
macro_rules! with_cmpop {
    ($op:expr, $t:ty, |$f:ident| $body:expr) => {
        match $op {
            $crate::array::op::CmpOp::Eq => {
                let $f = |x: $t, y: $t| $crate::array::op::CmpOp::Eq.apply(x, y);
                $body
            }
            $crate::array::op::CmpOp::Ne => {
                let $f = |x: $t, y: $t| $crate::array::op::CmpOp::Ne.apply(x, y);
                $body
            }
            $crate::array::op::CmpOp::Lt => {
                let $f = |x: $t, y: $t| $crate::array::op::CmpOp::Lt.apply(x, y);
                $body
            }
            $crate::array::op::CmpOp::Le => {
                let $f = |x: $t, y: $t| $crate::array::op::CmpOp::Le.apply(x, y);
                $body
            }
            $crate::array::op::CmpOp::Gt => {
                let $f = |x: $t, y: $t| $crate::array::op::CmpOp::Gt.apply(x, y);
                $body
            }
            $crate::array::op::CmpOp::Ge => {
                let $f = |x: $t, y: $t| $crate::array::op::CmpOp::Ge.apply(x, y);
                $body
            }
        }
    };
}
pub(crate) use with_cmpop;
