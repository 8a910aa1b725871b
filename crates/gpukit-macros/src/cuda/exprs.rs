//! Expressions: C++ expressions with their precedence, Rust's integer and float semantics
//! (wrapping, division, saturating casts, no FMA contraction), literals and named constants.

use super::Gen;
use crate::ir::ty::Ty;
use crate::ir::*;
use crate::methods;
use crate::types::Prim;
use syn::{Error, Result};

/// C++ precedence levels (lower binds tighter).
const PRIMARY: u8 = 1;
const UNARY: u8 = 3;
const TERNARY: u8 = 16;

impl Gen<'_> {
    /// A C++ expression and its precedence level.
    pub(super) fn expr(&self, e: &Expr) -> Result<(String, u8)> {
        self.expr_in(e, false)
    }

    fn expr_in(&self, e: &Expr, call_arg: bool) -> Result<(String, u8)> {
        let f = self.f;
        Ok(match &e.kind {
            ExprKind::Lit(l) => self.lit(l, e.ty, call_arg),
            ExprKind::Var(v) => (f.vars[*v].cuda.clone(), PRIMARY),
            ExprKind::Const(c) => named_const(c),
            // Precedence decides the C++ parentheses (C++ ranks `&` below `==`, Rust above).
            ExprKind::Paren(x) => self.expr_in(x, call_arg)?,
            ExprKind::Unary(UnOp::Neg, x)
                if matches!(x.kind, ExprKind::Lit(Lit::Int(_)))
                    && self.prim(x.ty).is_some_and(Prim::is_signed_int) =>
            {
                let (ExprKind::Lit(Lit::Int(v)), Some(p)) = (&x.kind, self.prim(x.ty)) else {
                    unreachable!("checked by the guard")
                };
                int_lit(p, -(*v as i128))
            }
            ExprKind::Unary(op, x) => {
                let (s, p) = self.expr(x)?;
                let s = paren_if(s, p, UNARY);
                match (op, self.prim(x.ty)) {
                    (UnOp::Neg, Some(t)) if t.is_int() => (format!("__gk_wneg({})", s), PRIMARY),
                    (UnOp::Neg, _) => (format!("-{s}"), UNARY),
                    (UnOp::Not, Some(Prim::Bool)) => (format!("!{s}"), UNARY),
                    (UnOp::Not, Some(t)) if t.is_narrow_int() => {
                        (format!("({})~{s}", t.cuda()), UNARY)
                    }
                    (UnOp::Not, Some(_)) => (format!("~{s}"), UNARY),
                    (UnOp::Not, None) => (format!("__gk_not({})", s), PRIMARY),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b)?,
            ExprKind::Cast(x, to) => self.cast(x, *to)?,
            ExprKind::Index(v, ix) => {
                let name = &f.vars[*v].cuda;
                let idx = ix
                    .iter()
                    .map(|i| self.expr(i).map(|(s, _)| s))
                    .collect::<Result<Vec<_>>>()?;
                let view = matches!(f.tys.get(f.vars[*v].ty), Ty::View { .. });
                match self
                    .checked()
                    .then(|| self.facts.proves_access(*v, ix))
                    .flatten()
                {
                    // Proven in range: read without a check, and say why in %source.
                    Some(why) => (
                        format!("{name}.at({}) /* in bounds: {why} */", idx.join(", ")),
                        PRIMARY,
                    ),
                    None if view => {
                        self.need_launch_tests(*v, ix);
                        (format!("{name}({})", idx.join(", ")), PRIMARY)
                    }
                    None => {
                        self.need_launch_tests(*v, ix);
                        (format!("{name}[{}]", idx[0]), PRIMARY)
                    }
                }
            }
            ExprKind::Len(v) => (format!("{}.len()", f.vars[*v].cuda), PRIMARY),
            ExprKind::Shape(v, d) => (format!("{}.shape({d})", f.vars[*v].cuda), PRIMARY),
            ExprKind::Method(m, recv, args) => {
                let func = match self.prim(recv.ty) {
                    Some(p) => methods::cuda_function(m, p),
                    None => methods::cuda_function(m, Prim::F64),
                };
                let mut parts = vec![self.expr(recv)?.0];
                for a in args {
                    parts.push(self.expr(a)?.0);
                }
                (format!("{func}({})", parts.join(", ")), PRIMARY)
            }
            ExprKind::Call(c, args) => {
                let parts = args
                    .iter()
                    .map(|a| self.expr_in(a, true).map(|(s, _)| s))
                    .collect::<Result<Vec<_>>>()?;
                (
                    format!("{}({})", f.callees[*c].cuda, parts.join(", ")),
                    PRIMARY,
                )
            }
            ExprKind::Intrinsic(i) => match i {
                Intrinsic::Grid(1) | Intrinsic::GridSize(1) => (axis_expr(*i, 0), PRIMARY),
                Intrinsic::Grid(_) | Intrinsic::GridSize(_) => return Err(Error::new(
                    e.span,
                    "grid2()/grid3()/gridsize2()/gridsize3() are used as `let (x, y) = grid2();`",
                )),
                Intrinsic::ThreadIdx => ("threadIdx".into(), PRIMARY),
                Intrinsic::BlockIdx => ("blockIdx".into(), PRIMARY),
                Intrinsic::BlockDim => ("blockDim".into(), PRIMARY),
                Intrinsic::GridDim => ("gridDim".into(), PRIMARY),
                Intrinsic::SyncThreads => ("__syncthreads()".into(), PRIMARY),
            },
            ExprKind::Field(x, a) => {
                let (s, p) = self.expr(x)?;
                (format!("{}.{}", paren_if(s, p, PRIMARY), a.name()), PRIMARY)
            }
            ExprKind::Atomic(op, place, args) => {
                let (p, _) = self.expr(place)?;
                let mut parts = vec![format!("&{p}")];
                for a in args {
                    parts.push(self.expr(a)?.0);
                }
                (format!("__gk_{}({})", op.name(), parts.join(", ")), PRIMARY)
            }
            ExprKind::If(c, then, els) => {
                let (Some(t), Some(el)) = (&then.tail, els) else {
                    return Err(not_pure(e));
                };
                if !e.is_pure() {
                    return Err(not_pure(e));
                }
                let (cs, cp) = self.expr(c)?;
                let (ts, tp) = self.expr(t)?;
                let (es, ep) = self.expr(el)?;
                (
                    format!(
                        "{} ? {} : {}",
                        paren_if(cs, cp, TERNARY - 1),
                        paren_if(ts, tp, TERNARY - 1),
                        paren_if(es, ep, TERNARY)
                    ),
                    TERNARY,
                )
            }
            ExprKind::Block(b) => match (&b.tail, b.stmts.is_empty()) {
                (Some(t), true) => self.expr_in(t, call_arg)?,
                _ => return Err(not_pure(e)),
            },
        })
    }

    /// Notes what would decide the check of `a[ix]` once per launch (a checked kernel only).
    fn need_launch_tests(&self, a: VarId, ix: &[Expr]) {
        if !self.checked() {
            return;
        }
        let mut all = self.launch_tests.borrow_mut();
        let found = all.as_ref().and(self.facts.launch_tests(a, ix));
        match (all.as_mut(), found) {
            (Some(all), Some(tests)) => {
                for t in tests {
                    if !all.contains(&t) {
                        all.push(t);
                    }
                }
            }
            _ => *all = None,
        }
    }

    fn lit(&self, l: &Lit, ty: usize, call_arg: bool) -> (String, u8) {
        match (l, self.f.tys.get(ty)) {
            (Lit::Bool(b), _) => (b.to_string(), PRIMARY),
            (Lit::Int(v), Ty::Prim(p)) => int_lit(p, *v as i128),
            (Lit::Float(s), Ty::Prim(p)) => (float_lit(s, p), PRIMARY),
            (Lit::Int(v), Ty::Opaque(_)) if call_arg => (v.to_string(), PRIMARY),
            (Lit::Float(s), Ty::Opaque(_)) if call_arg => (float_lit(s, Prim::F64), PRIMARY),
            (Lit::Int(v), _) => {
                let t = self
                    .ty(ty, proc_macro2::Span::call_site())
                    .unwrap_or_default();
                (format!("({t}){v}"), UNARY)
            }
            (Lit::Float(s), _) => {
                let t = self
                    .ty(ty, proc_macro2::Span::call_site())
                    .unwrap_or_default();
                (format!("({t}){}", float_lit(s, Prim::F64)), UNARY)
            }
        }
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr) -> Result<(String, u8)> {
        let checked = matches!(self.f.kind, FuncKind::Kernel { checked: true });
        if a.is_observable(checked) && b.is_observable(checked) && !op.is_logical() {
            // Rust evaluates the left operand first (which decides, e.g., which of two
            // out-of-range indices is reported); C++ does not promise an order, so both are
            // evaluated into locals, in order, inside an immediately called lambda.
            let (sa, _) = self.expr(a)?;
            let (sb, _) = self.expr(b)?;
            let (inner, _) =
                self.binary_of(op, a, ("__l".into(), PRIMARY), ("__r".into(), PRIMARY))?;
            return Ok((
                format!(
                    "[&]() {{ const auto __l = {sa}; const auto __r = {sb}; return {inner}; }}()"
                ),
                PRIMARY,
            ));
        }
        let sa = self.expr(a)?;
        let sb = self.expr(b)?;
        self.binary_of(op, a, sa, sb)
    }

    /// `a op b` given the operands' code and precedence.
    fn binary_of(
        &self,
        op: BinOp,
        a: &Expr,
        (sa, pa): (String, u8),
        (sb, pb): (String, u8),
    ) -> Result<(String, u8)> {
        let prec = c_prec(op);
        let infix = |sa: String, sb: String| {
            (
                format!(
                    "{} {} {}",
                    paren_if(sa, pa, prec),
                    op.symbol(),
                    paren_if(sb, pb, prec - 1)
                ),
                prec,
            )
        };
        let call = |name: &str, sa: &str, sb: &str| (format!("{name}({}, {})", sa, sb), PRIMARY);
        if op.is_logical() || op.is_comparison() {
            return Ok(infix(sa, sb));
        }
        let Some(t) = self.prim(a.ty) else {
            return Ok(infix(sa, sb));
        };
        if t.is_float() {
            if op == BinOp::Rem {
                return Ok(call(
                    if t == Prim::F32 { "fmodf" } else { "fmod" },
                    &sa,
                    &sb,
                ));
            }
            if op == BinOp::Mul {
                // Rust never fuses `a * b + c` into one FMA; `__fmul_rn`/`__dmul_rn` keep NVRTC
                // from contracting it either, so GPU results match the CPU twin bit for bit.
                return Ok(call(float_mul(t), &sa, &sb));
            }
            return Ok(infix(sa, sb));
        }
        if t == Prim::Bool {
            let (s, _) = infix(sa, sb);
            return Ok((format!("(bool)({s})"), UNARY));
        }
        Ok(match op {
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                if t.is_narrow_int() {
                    let (s, _) = infix(sa, sb);
                    (format!("({})({s})", t.cuda()), UNARY)
                } else {
                    infix(sa, sb)
                }
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul if is_plain_wrapping(t) => infix(sa, sb),
            _ => call(int_helper(op), &sa, &sb),
        })
    }

    fn cast(&self, x: &Expr, to: Prim) -> Result<(String, u8)> {
        let (s, p) = self.expr(x)?;
        let from = self.prim(x.ty);
        if from == Some(to) {
            return Ok((s, p));
        }
        if let ExprKind::Lit(Lit::Int(v)) = &x.kind {
            if to.is_int() && from.is_some_and(|f| f.is_int()) && (*v as i128) <= max_of(to) {
                return Ok(int_lit(to, *v as i128));
            }
        }
        Ok(match from {
            Some(f) if f.is_float() && to.is_int() => {
                let name = match to {
                    Prim::Usize => "u64",
                    Prim::Isize => "i64",
                    t => t.rust(),
                };
                (format!("__gk_float_to_{name}({})", s), PRIMARY)
            }
            _ => (format!("({}){}", to.cuda(), paren_if(s, p, UNARY)), UNARY),
        })
    }
}

fn not_pure(e: &Expr) -> Error {
    Error::new(
        e.span,
        "an `if` or block with statements can only be a statement or the whole value of `let`, an assignment or `return`: compute it into a variable first",
    )
}

/// `x`, `y`, `z` of `grid*()` / `gridsize*()`.
pub(super) fn axis_expr(i: Intrinsic, axis: usize) -> String {
    let a = ["x", "y", "z"][axis];
    match i {
        Intrinsic::GridSize(_) => format!("((unsigned long long)blockDim.{a} * gridDim.{a})"),
        _ => format!("((unsigned long long)blockIdx.{a} * blockDim.{a} + threadIdx.{a})"),
    }
}

/// The round-to-nearest multiply that NVRTC never contracts into an FMA.
pub(super) fn float_mul(t: Prim) -> &'static str {
    if t == Prim::F32 {
        "__fmul_rn"
    } else {
        "__dmul_rn"
    }
}

/// Unsigned types of 32 and 64 bits: C++ `+ - *` already wrap as in Rust.
pub(super) fn is_plain_wrapping(t: Prim) -> bool {
    matches!(t, Prim::U32 | Prim::U64 | Prim::Usize)
}

pub(super) fn int_helper(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "__gk_wadd",
        BinOp::Sub => "__gk_wsub",
        BinOp::Mul => "__gk_wmul",
        BinOp::Div => "__gk_div",
        BinOp::Rem => "__gk_rem",
        BinOp::Shl => "__gk_shl",
        BinOp::Shr => "__gk_shr",
        _ => "__gk_invalid",
    }
}

fn c_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Mul | BinOp::Div | BinOp::Rem => 5,
        BinOp::Add | BinOp::Sub => 6,
        BinOp::Shl | BinOp::Shr => 7,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 9,
        BinOp::Eq | BinOp::Ne => 10,
        // C++ ranks the bitwise operators below `==` (Rust above), and apart from each other.
        BinOp::BitAnd => 11,
        BinOp::BitXor => 12,
        BinOp::BitOr => 13,
        BinOp::And => 14,
        BinOp::Or => 15,
    }
}

/// Parenthesises `s` unless its precedence `p` binds at least as tightly as `max`.
fn paren_if(s: String, p: u8, max: u8) -> String {
    if p <= max {
        s
    } else {
        format!("({s})")
    }
}

fn max_of(p: Prim) -> i128 {
    match p {
        Prim::I8 => i8::MAX as i128,
        Prim::I16 => i16::MAX as i128,
        Prim::I32 => i32::MAX as i128,
        Prim::I64 | Prim::Isize => i64::MAX as i128,
        Prim::U8 => u8::MAX as i128,
        Prim::U16 => u16::MAX as i128,
        Prim::U32 => u32::MAX as i128,
        _ => u64::MAX as i128,
    }
}

/// An integer literal of type `p`.
fn int_lit(p: Prim, v: i128) -> (String, u8) {
    let neg = v < 0;
    let s = match p {
        Prim::I32 if v == i32::MIN as i128 => return ("(-2147483647 - 1)".into(), PRIMARY),
        Prim::I64 | Prim::Isize if v == i64::MIN as i128 => {
            return ("(-9223372036854775807ll - 1)".into(), PRIMARY)
        }
        Prim::I32 => v.to_string(),
        Prim::U32 => format!("{v}u"),
        Prim::I64 | Prim::Isize => format!("{v}ll"),
        Prim::U64 | Prim::Usize => format!("{v}ull"),
        Prim::F32 => return (float_lit(&v.to_string(), Prim::F32), PRIMARY),
        Prim::F64 => return (float_lit(&v.to_string(), Prim::F64), PRIMARY),
        Prim::Bool => return ((v != 0).to_string(), PRIMARY),
        Prim::I8 | Prim::I16 if v < 0 => return (format!("({})({v})", p.cuda()), UNARY),
        t => return (format!("({}){v}", t.cuda()), UNARY),
    };
    (s, if neg { UNARY } else { PRIMARY })
}

/// A float literal of type `p` (`2.5f` for f32).
fn float_lit(text: &str, p: Prim) -> String {
    let mut s = text.to_string();
    if !s.contains(['.', 'e', 'E']) {
        s.push_str(".0");
    }
    if p == Prim::F32 {
        s.push('f');
    }
    s
}

/// `f32::MAX`, `std::f64::consts::PI`, ...
fn named_const(c: &NamedConst) -> (String, u8) {
    let p = c.prim;
    if p.is_int() {
        let (min, max): (i128, i128) = match p {
            Prim::I8 => (i8::MIN as i128, i8::MAX as i128),
            Prim::I16 => (i16::MIN as i128, i16::MAX as i128),
            Prim::I32 => (i32::MIN as i128, i32::MAX as i128),
            Prim::I64 | Prim::Isize => (i64::MIN as i128, i64::MAX as i128),
            Prim::U8 => (0, u8::MAX as i128),
            Prim::U16 => (0, u16::MAX as i128),
            Prim::U32 => (0, u32::MAX as i128),
            _ => (0, u64::MAX as i128),
        };
        return int_lit(p, if c.name == "MIN" { min } else { max });
    }
    let f32s = p == Prim::F32;
    let special = |bits32: &str, bits64: &str| {
        if f32s {
            (format!("__int_as_float({bits32})"), PRIMARY)
        } else {
            (format!("__longlong_as_double({bits64})"), PRIMARY)
        }
    };
    let v: f64 = match c.name.as_str() {
        "INFINITY" => return special("0x7f800000", "0x7ff0000000000000ll"),
        "NEG_INFINITY" => return special("(int)0xff800000", "(long long)0xfff0000000000000ull"),
        "NAN" => return special("0x7fc00000", "0x7ff8000000000000ll"),
        "MIN" if f32s => f32::MIN as f64,
        "MAX" if f32s => f32::MAX as f64,
        "EPSILON" if f32s => f32::EPSILON as f64,
        "MIN_POSITIVE" if f32s => f32::MIN_POSITIVE as f64,
        "MIN" => f64::MIN,
        "MAX" => f64::MAX,
        "EPSILON" => f64::EPSILON,
        "MIN_POSITIVE" => f64::MIN_POSITIVE,
        other => consts_value(other.trim_start_matches("consts::")),
    };
    let s = if f32s {
        format!("{:e}f", v as f32)
    } else {
        format!("{v:e}")
    };
    if v < 0.0 {
        (format!("({s})"), PRIMARY)
    } else {
        (s, PRIMARY)
    }
}

fn consts_value(name: &str) -> f64 {
    use std::f64::consts::*;
    match name {
        "PI" => PI,
        "TAU" => TAU,
        "E" => E,
        "SQRT_2" => SQRT_2,
        "LN_2" => LN_2,
        "LN_10" => LN_10,
        "LOG2_E" => LOG2_E,
        "LOG10_E" => LOG10_E,
        "LOG2_10" => LOG2_10,
        "LOG10_2" => LOG10_2,
        "FRAC_PI_2" => FRAC_PI_2,
        "FRAC_PI_3" => FRAC_PI_3,
        "FRAC_PI_4" => FRAC_PI_4,
        "FRAC_PI_6" => FRAC_PI_6,
        "FRAC_PI_8" => FRAC_PI_8,
        "FRAC_1_PI" => FRAC_1_PI,
        "FRAC_2_PI" => FRAC_2_PI,
        "FRAC_2_SQRT_PI" => FRAC_2_SQRT_PI,
        _ => FRAC_1_SQRT_2,
    }
}
