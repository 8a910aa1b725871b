//! IR -> CUDA C++ with Rust semantics: integer arithmetic wraps at its width, integer `/` and
//! `%` behave as in Rust (division by zero gives 0 instead of panicking), float -> integer `as`
//! saturates, f32 math stays f32, indexing is bounds checked unless `unchecked`.
//!
//! The helpers live in a prelude ([`PRELUDE`]) so that every translation unit is self-contained.

use crate::ir::ty::{Opaque, Ty};
use crate::ir::*;
use crate::methods;
use crate::types::Prim;
use syn::{Error, Result};

/// The helpers generated code may use, in sections marked `// @section name`.
pub const PRELUDE: &str = include_str!("prelude.cu");

/// For each prelude section, the identifiers whose use in generated code needs it.
const SECTION_USES: &[(&str, &[&str])] = &[
    ("bounds", &["__gk_slice<", "__gk_view<"]),
    ("unchecked", &["__gk_uslice<", "__gk_uview<"]),
    ("opaque", &["__gk_ret<", "__gk_arg<", "__gk_not("]),
    (
        "int",
        &[
            "__gk_wadd(",
            "__gk_wsub(",
            "__gk_wmul(",
            "__gk_wneg(",
            "__gk_div(",
            "__gk_rem(",
            "__gk_shl(",
            "__gk_shr(",
            "__gk_min(",
            "__gk_max(",
            "__gk_abs(",
            "__gk_pow(",
            "__gk_count_ones(",
            "__gk_leading_zeros(",
            "__gk_trailing_zeros(",
            "__gk_clamp(",
            "__gk_signum(",
        ],
    ),
    ("float_to", &["__gk_float_to_"]),
    (
        "float",
        &[
            "__gk_fract(",
            "__gk_recip(",
            "__gk_to_degrees(",
            "__gk_to_radians(",
            "__gk_log(",
            "__gk_is_sign_positive(",
            "__gk_powi(",
            "__gk_clamp(",
            "__gk_signum(",
        ],
    ),
    ("atomics", &["__gk_atomic_"]),
];

/// The prelude sections `code` uses, each behind an include guard so that a kernel and its
/// `#[device]` helpers can each bring the sections they need. Empty when none is used.
pub fn prelude_for(code: &str) -> String {
    let mut parts = PRELUDE.split("// @section ");
    let header = parts.next().unwrap_or_default();
    let mut out = String::new();
    for part in parts {
        let (name, body) = part.split_once('\n').unwrap_or((part, ""));
        let name = name.trim();
        let used = SECTION_USES
            .iter()
            .find(|(n, _)| *n == name)
            .is_some_and(|(_, uses)| uses.iter().any(|u| code.contains(u)));
        if used {
            let guard = format!("GPUKIT_PRELUDE_{}", name.to_uppercase());
            out.push_str(&format!(
                "#ifndef {guard}\n#define {guard}\n{}\n#endif\n\n",
                body.trim()
            ));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("{header}{out}")
    }
}

/// Where `#[device]` helpers go in a kernel's source (see `gpukit::__private::full_source`).
pub const DEVICE_FNS_MARKER: &str = "// @gpukit-device-fns";

/// C++ precedence levels (lower binds tighter).
const PRIMARY: u8 = 1;
const UNARY: u8 = 3;
const TERNARY: u8 = 16;

/// The CUDA C++ translation unit of a kernel: prelude, device-helper marker, kernel.
pub fn kernel_source(f: &Func) -> Result<String> {
    let checked = matches!(f.kind, FuncKind::Kernel { checked: true });
    let mut g = Gen::new(f);
    let mut params = Vec::new();
    let mut views = Vec::new();
    for p in &f.params {
        let name = &f.vars[p.var].cuda;
        match p.ty {
            ParamTy::Slice { elem, mutable } => {
                let t = elem_ty(elem, mutable);
                params.push(format!("{t}* {name}__ptr"));
                params.push(format!("unsigned long long {name}__len"));
                views.push(if checked {
                    format!(
                        "const __gk_slice<{t}> {name}{{{name}__ptr, {name}__len, {}, __gk_err}};",
                        p.array_id.unwrap_or(0)
                    )
                } else {
                    format!("const __gk_uslice<{t}> {name}{{{name}__ptr, {name}__len}};")
                });
            }
            ParamTy::View {
                elem,
                ndim,
                mutable,
            } => {
                let t = elem_ty(elem, mutable);
                params.push(format!("{t}* {name}__ptr"));
                let dims: Vec<String> = (0..ndim).map(|d| format!("{name}__d{d}")).collect();
                for d in &dims {
                    params.push(format!("unsigned long long {d}"));
                }
                views.push(if checked {
                    format!(
                        "const __gk_view<{t}, {ndim}> {name}{{{name}__ptr, {{{}}}, {}, __gk_err}};",
                        dims.join(", "),
                        p.array_id.unwrap_or(0)
                    )
                } else {
                    format!(
                        "const __gk_uview<{t}, {ndim}> {name}{{{name}__ptr, {{{}}}}};",
                        dims.join(", ")
                    )
                });
            }
            ParamTy::Scalar(s) => params.push(format!("{} {name}", s.cuda())),
        }
    }
    if checked {
        params.push("unsigned long long* __gk_err".to_string());
    }
    g.line(&format!(
        "extern \"C\" __global__ void {}({}) {{",
        f.name,
        params.join(", ")
    ));
    g.indent += 1;
    for v in views {
        g.line(&v);
    }
    g.block_stmts(&f.body)?;
    g.indent -= 1;
    g.line("}");
    Ok(format!(
        "{}{DEVICE_FNS_MARKER}\n\n{}",
        prelude_for(&g.out),
        g.out
    ))
}

/// The declaration and the definition of a `#[device]` function.
pub fn device_fn(f: &Func) -> Result<(String, String)> {
    let ret = match f.kind {
        FuncKind::Device { ret } => ret,
        FuncKind::Vectorize { ret } => Some(ret),
        FuncKind::Kernel { .. } => None,
    };
    let head = format!(
        "__device__ {} gk_dev_{}({})",
        ret.map_or("void", Prim::cuda),
        f.name,
        f.params
            .iter()
            .map(|p| match p.ty {
                ParamTy::Scalar(s) => format!("{} {}", s.cuda(), f.vars[p.var].cuda),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut g = Gen::new(f);
    g.line(&format!("{head} {{"));
    g.indent += 1;
    g.block_stmts_returning(&f.body, ret.is_some())?;
    g.indent -= 1;
    g.line("}");
    Ok((
        format!("{head};"),
        format!("{}{}", prelude_for(&g.out), g.out),
    ))
}

/// The complete translation unit of a `#[vectorize]` function: prelude, the function, and the
/// grid-stride kernel `{name}_vectorized` that applies it with broadcasting of length-1 inputs.
pub fn vectorize_source(f: &Func) -> Result<String> {
    let FuncKind::Vectorize { ret } = f.kind else {
        return Err(Error::new(f.name.span(), "not a #[vectorize] function"));
    };
    let (_, def) = device_fn(f)?;
    let mut params = Vec::new();
    let mut args = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let ParamTy::Scalar(s) = p.ty else { continue };
        params.push(format!("const {}* in{i}", s.cuda()));
        params.push(format!("unsigned long long in{i}_len"));
        args.push(format!("in{i}_len == 1 ? in{i}[0] : in{i}[i]"));
    }
    params.push(format!("{}* out", ret.cuda()));
    params.push("unsigned long long n".to_string());
    Ok(format!(
        "{def}\nextern \"C\" __global__ void {name}_vectorized({params}) {{\n    \
         for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n         \
         i += (unsigned long long)blockDim.x * gridDim.x) {{\n        \
         out[i] = gk_dev_{name}({args});\n    }}\n}}\n",
        name = f.name,
        params = params.join(", "),
        args = args.join(", ")
    ))
}

fn elem_ty(elem: Prim, mutable: bool) -> String {
    if mutable {
        elem.cuda().to_string()
    } else {
        format!("const {}", elem.cuda())
    }
}

/// Where the value of a statement-like expression goes.
enum Target<'a> {
    Assign(&'a str),
    Return,
}

struct Gen<'a> {
    f: &'a Func,
    out: String,
    indent: usize,
}

impl<'a> Gen<'a> {
    fn new(f: &'a Func) -> Gen<'a> {
        Gen {
            f,
            out: String::new(),
            indent: 0,
        }
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn prim(&self, t: usize) -> Option<Prim> {
        self.f.tys.prim_of(t)
    }

    /// The C++ spelling of a type.
    fn ty(&self, t: usize, span: proc_macro2::Span) -> Result<String> {
        Ok(match self.f.tys.get(t) {
            Ty::Prim(p) => p.cuda().to_string(),
            Ty::Dim3 => "uint3".to_string(),
            Ty::Opaque(Opaque::Ret(f)) => format!("__gk_ret<decltype(&{f})>"),
            Ty::Opaque(Opaque::Param(f, n)) => format!("__gk_arg<{n}, decltype(&{f})>"),
            other => {
                return Err(Error::new(
                    span,
                    format!(
                        "a value of type `{}` cannot be stored in a variable in kernel code",
                        crate::ir::ty::describe_ty(&other)
                    ),
                ))
            }
        })
    }

    fn block_stmts(&mut self, b: &Block) -> Result<()> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        if let Some(t) = &b.tail {
            self.expr_stmt(t)?;
        }
        Ok(())
    }

    fn block_stmts_returning(&mut self, b: &Block, value: bool) -> Result<()> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        match &b.tail {
            Some(t) if value => self.emit_into(&Target::Return, t),
            Some(t) => self.expr_stmt(t),
            None => Ok(()),
        }
    }

    fn braced(&mut self, head: &str, b: &Block) -> Result<()> {
        self.line(&format!("{head} {{"));
        self.indent += 1;
        self.block_stmts(b)?;
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// An expression evaluated for its effects.
    fn expr_stmt(&mut self, e: &Expr) -> Result<()> {
        match &e.kind {
            ExprKind::If(..) => self.if_stmt(e, None),
            ExprKind::Block(b) => self.braced("", b),
            ExprKind::Paren(x) => self.expr_stmt(x),
            _ => {
                let (s, _) = self.expr(e)?;
                self.line(&format!("{s};"));
                Ok(())
            }
        }
    }

    /// `if` as a statement; with a target, each branch's value goes there.
    fn if_stmt(&mut self, e: &Expr, target: Option<&Target>) -> Result<()> {
        let mut cur = e;
        let mut head = "if".to_string();
        loop {
            let ExprKind::If(c, then, els) = &cur.kind else {
                unreachable!("if_stmt on an if")
            };
            let (cs, _) = self.expr(c)?;
            self.line(&format!("{head} ({cs}) {{"));
            self.indent += 1;
            self.branch(then, target)?;
            self.indent -= 1;
            match els.as_deref() {
                None => {
                    self.line("}");
                    return Ok(());
                }
                Some(x) if matches!(x.kind, ExprKind::If(..)) => {
                    head = "} else if".to_string();
                    cur = x;
                }
                Some(x) => {
                    self.line("} else {");
                    self.indent += 1;
                    match &x.kind {
                        ExprKind::Block(b) => self.branch(b, target)?,
                        _ => match target {
                            Some(t) => self.emit_into(t, x)?,
                            None => self.expr_stmt(x)?,
                        },
                    }
                    self.indent -= 1;
                    self.line("}");
                    return Ok(());
                }
            }
        }
    }

    fn branch(&mut self, b: &Block, target: Option<&Target>) -> Result<()> {
        match target {
            None => self.block_stmts(b),
            Some(t) => {
                for s in &b.stmts {
                    self.stmt(s)?;
                }
                match &b.tail {
                    Some(x) => self.emit_into(t, x),
                    None => Ok(()),
                }
            }
        }
    }

    /// Puts the value of `e` (which may be an `if` or block with statements) into `target`.
    fn emit_into(&mut self, target: &Target, e: &Expr) -> Result<()> {
        if !e.is_pure() {
            match &e.kind {
                ExprKind::If(..) => return self.if_stmt(e, Some(target)),
                ExprKind::Block(b) => {
                    self.line("{");
                    self.indent += 1;
                    self.branch(b, Some(target))?;
                    self.indent -= 1;
                    self.line("}");
                    return Ok(());
                }
                ExprKind::Paren(x) => return self.emit_into(target, x),
                _ => {}
            }
        }
        let (s, _) = self.expr(e)?;
        match target {
            Target::Assign(t) => self.line(&format!("{t} = {s};")),
            Target::Return => self.line(&format!("return {s};")),
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::Let { pat, init, span } => self.let_stmt(pat, init.as_ref(), *span),
            Stmt::Const { var, value } => {
                let v = &self.f.vars[*var];
                let t = self.ty(v.ty, value.span)?;
                let (e, _) = self.expr(value)?;
                self.line(&format!("const {t} {} = {e};", v.cuda));
                Ok(())
            }
            Stmt::Shared(i) => {
                let sh = &self.f.shared[*i];
                let name = &self.f.vars[sh.var].cuda;
                let t = sh.elem.cuda();
                self.line(&format!("__shared__ {t} __gk_shared_{i}[{}];", sh.len));
                let checked = matches!(self.f.kind, FuncKind::Kernel { checked: true });
                if checked {
                    self.line(&format!(
                        "const __gk_slice<{t}> {name}{{__gk_shared_{i}, {}, {}, __gk_err}};",
                        sh.len, sh.array_id
                    ));
                } else {
                    self.line(&format!(
                        "const __gk_uslice<{t}> {name}{{__gk_shared_{i}, {}}};",
                        sh.len
                    ));
                }
                Ok(())
            }
            Stmt::LocalArray(k) => self.local_array(*k),
            Stmt::Expr(e) => self.expr_stmt(e),
            Stmt::Seq(ss) => ss.iter().try_for_each(|s| self.stmt(s)),
            Stmt::Assign {
                place, op, value, ..
            } => self.assign(place, *op, value),
            Stmt::While { cond, body } => {
                let (c, _) = self.expr(cond)?;
                self.braced(&format!("while ({c})"), body)
            }
            Stmt::Loop { body } => self.braced("while (true)", body),
            Stmt::For { var, range, body } => self.for_stmt(*var, range, body),
            Stmt::Break => {
                self.line("break;");
                Ok(())
            }
            Stmt::Continue => {
                self.line("continue;");
                Ok(())
            }
            Stmt::Return(None, _) => {
                self.line("return;");
                Ok(())
            }
            Stmt::Return(Some(e), _) => self.emit_into(&Target::Return, e),
        }
    }

    fn local_array(&mut self, k: usize) -> Result<()> {
        let la = &self.f.locals[k];
        let var = &self.f.vars[la.var];
        let name = var.cuda.clone();
        let t = self.ty(la.elem, var.name.span())?;
        let n = la.len;
        match &la.init {
            ArrayInit::List(vs) => {
                let items = vs
                    .iter()
                    .map(|v| self.expr(v).map(|(s, _)| s))
                    .collect::<Result<Vec<_>>>()?;
                self.line(&format!("{t} {name}__mem[{n}] = {{{}}};", items.join(", ")));
            }
            ArrayInit::Repeat(v) => {
                let (s, _) = self.expr(v)?;
                self.line(&format!("{t} {name}__mem[{n}];"));
                self.line(&format!(
                    "for (unsigned long long {name}__k = 0; {name}__k < {n}; {name}__k++) {name}__mem[{name}__k] = {s};"
                ));
            }
        }
        if matches!(self.f.kind, FuncKind::Kernel { checked: true }) {
            self.line(&format!(
                "const __gk_slice<{t}> {name}{{{name}__mem, {n}, {}, __gk_err}};",
                la.array_id
            ));
        } else {
            self.line(&format!(
                "const __gk_uslice<{t}> {name}{{{name}__mem, {n}}};"
            ));
        }
        Ok(())
    }

    fn let_stmt(
        &mut self,
        pat: &LetPat,
        init: Option<&Expr>,
        span: proc_macro2::Span,
    ) -> Result<()> {
        match pat {
            LetPat::One(v) => {
                let var = &self.f.vars[*v];
                let ty = self.f.tys.get(var.ty);
                if ty == Ty::Unit {
                    if let Some(e) = init {
                        self.expr_stmt(e)?;
                    }
                    return Ok(());
                }
                let opaque = matches!(ty, Ty::Opaque(_));
                let t = self.ty(var.ty, span)?;
                match init {
                    Some(e) if e.is_pure() => {
                        let (s, _) = self.expr(e)?;
                        let t = if opaque { "auto".to_string() } else { t };
                        let c = if var.mutable { "" } else { "const " };
                        self.line(&format!("{c}{t} {} = {s};", var.cuda));
                    }
                    Some(e) => {
                        self.line(&format!("{t} {};", var.cuda));
                        let name = var.cuda.clone();
                        self.emit_into(&Target::Assign(&name), e)?;
                    }
                    None => self.line(&format!("{t} {};", var.cuda)),
                }
                Ok(())
            }
            LetPat::Tuple(vs) => {
                let Some(Expr {
                    kind: ExprKind::Intrinsic(intr),
                    ..
                }) = init
                else {
                    return Err(Error::new(
                        span,
                        "tuple patterns are supported only as `let (x, y) = grid2();`",
                    ));
                };
                for (axis, v) in vs.iter().enumerate() {
                    let var = &self.f.vars[*v];
                    let e = axis_expr(*intr, axis);
                    let c = if var.mutable { "" } else { "const " };
                    self.line(&format!("{c}unsigned long long {} = {e};", var.cuda));
                }
                Ok(())
            }
        }
    }

    fn assign(&mut self, place: &Expr, op: Option<BinOp>, value: &Expr) -> Result<()> {
        let (p, _) = self.expr(place)?;
        let Some(op) = op else {
            return self.emit_into(&Target::Assign(&p), value);
        };
        if !value.is_pure() {
            return Err(Error::new(
                value.span,
                "compound assignment of an `if` or block with statements is not supported: compute the value with `let` first",
            ));
        }
        let (v, _) = self.expr(value)?;
        let prim = self.prim(place.ty);
        let line = match prim {
            Some(t) if t.is_float() && op == BinOp::Rem => {
                format!(
                    "{p} = {}({p}, {v});",
                    if t == Prim::F32 { "fmodf" } else { "fmod" }
                )
            }
            Some(t) if t.is_float() && op == BinOp::Mul => {
                format!("{p} = {}({p}, {v});", float_mul(t))
            }
            Some(t) if t.is_float() || t == Prim::Bool => format!("{p} {}= {v};", op.symbol()),
            Some(t) => match op {
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    format!("{p} {}= {v};", op.symbol())
                }
                BinOp::Add | BinOp::Sub | BinOp::Mul if is_plain_wrapping(t) => {
                    format!("{p} {}= {v};", op.symbol())
                }
                _ => format!("{p} = {}({p}, {});", int_helper(op), v),
            },
            None => format!("{p} {}= {v};", op.symbol()),
        };
        self.line(&line);
        Ok(())
    }

    fn for_stmt(&mut self, var: VarId, r: &Range, body: &Block) -> Result<()> {
        let v = &self.f.vars[var];
        let i = v.cuda.clone();
        let p = self.prim(v.ty).unwrap_or(Prim::I32);
        let t = p.cuda();
        let (a, _) = self.expr(&r.start)?;
        let (b, _) = self.expr(&r.end)?;
        // The Rust loop variable is a fresh binding per iteration; a hidden counter is used when
        // the body may change it (`for mut i`).
        let (ctr, copy) = if v.mutable {
            (format!("{i}__ctr"), true)
        } else {
            (i.clone(), false)
        };
        let open = |g: &mut Gen, head: String| {
            g.line(&format!("{head} {{"));
            g.indent += 1;
            if copy {
                g.line(&format!("{t} {i} = {ctr};"));
            }
        };
        if r.rev {
            self.line("{");
            self.indent += 1;
            self.line(&format!("const {t} {i}__lo = {a};"));
            self.line(&format!("{t} {i}__hi = {b};"));
            self.line(&format!("while ({i}__hi > {i}__lo) {{"));
            self.indent += 1;
            self.line(&format!("{i}__hi--;"));
            self.line(&format!(
                "{}{t} {i} = {i}__hi;",
                if v.mutable { "" } else { "const " }
            ));
            self.block_stmts(body)?;
            self.indent -= 1;
            self.line("}");
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        if let Some(step) = &r.step {
            let (s, _) = self.expr(step)?;
            self.line("{");
            self.indent += 1;
            self.line(&format!("const {t} {i}__start = {a};"));
            self.line(&format!("const {t} {i}__end = {b};"));
            self.line(&format!("const unsigned long long {i}__step = {s};"));
            let next = if matches!(p, Prim::U64 | Prim::Usize) {
                format!("{ctr} = ({i}__end - {ctr} > {i}__step) ? {ctr} + {i}__step : {i}__end")
            } else {
                let u = p.cuda_unsigned();
                format!(
                    "{ctr} = ((unsigned long long)({u})(({u}){i}__end - ({u}){ctr}) > {i}__step) ? ({t})(({u}){ctr} + ({u}){i}__step) : {i}__end"
                )
            };
            let head = format!(
                "if ({i}__step != 0) for ({t} {ctr} = {i}__start; {ctr} < {i}__end; {next})"
            );
            open(self, head);
            self.block_stmts(body)?;
            self.indent -= 1;
            self.line("}");
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        let head = if r.inclusive {
            format!(
                "for ({t} {ctr} = {a}, {i}__last = {b}, {i}__more = ({t})({ctr} <= {i}__last); {i}__more; {i}__more = ({t})({ctr} != {i}__last), {ctr} += {i}__more)"
            )
        } else {
            format!("for ({t} {ctr} = {a}, {i}__end = {b}; {ctr} < {i}__end; {ctr}++)")
        };
        open(self, head);
        self.block_stmts(body)?;
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A C++ expression and its precedence level.
    fn expr(&self, e: &Expr) -> Result<(String, u8)> {
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
                if matches!(f.tys.get(f.vars[*v].ty), Ty::View { .. }) {
                    (format!("{name}({})", idx.join(", ")), PRIMARY)
                } else {
                    (format!("{name}[{}]", idx[0]), PRIMARY)
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
        let (sa, pa) = self.expr(a)?;
        let (sb, pb) = self.expr(b)?;
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
fn axis_expr(i: Intrinsic, axis: usize) -> String {
    let a = ["x", "y", "z"][axis];
    match i {
        Intrinsic::GridSize(_) => format!("((unsigned long long)blockDim.{a} * gridDim.{a})"),
        _ => format!("((unsigned long long)blockIdx.{a} * blockDim.{a} + threadIdx.{a})"),
    }
}

/// The round-to-nearest multiply that NVRTC never contracts into an FMA.
fn float_mul(t: Prim) -> &'static str {
    if t == Prim::F32 {
        "__fmul_rn"
    } else {
        "__dmul_rn"
    }
}

/// Unsigned types of 32 and 64 bits: C++ `+ - *` already wrap as in Rust.
fn is_plain_wrapping(t: Prim) -> bool {
    matches!(t, Prim::U32 | Prim::U64 | Prim::Usize)
}

fn int_helper(op: BinOp) -> &'static str {
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
            (format!("__longlong_as_double({bits64}ll)"), PRIMARY)
        }
    };
    let v: f64 = match c.name.as_str() {
        "INFINITY" => return special("0x7f800000", "0x7ff0000000000000"),
        "NEG_INFINITY" => return special("(int)0xff800000", "(long long)0xfff0000000000000ull"),
        "NAN" => return special("0x7fc00000", "0x7ff8000000000000"),
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

#[cfg(test)]
mod tests;
