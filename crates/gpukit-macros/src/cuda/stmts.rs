//! Statements: blocks, `let` (scalars, grid axes, local and shared arrays), assignments, loops,
//! `if` as a statement, and the value of an `if` or block routed into a variable or `return`.

use super::exprs::{axis_expr, float_mul, int_helper, is_plain_wrapping};
use super::Gen;
use crate::ir::ty::Ty;
use crate::ir::*;
use crate::types::Prim;
use syn::{Error, Result};

/// Where the value of a statement-like expression goes.
enum Target<'a> {
    Assign(&'a str),
    Return,
}

impl Gen<'_> {
    pub(super) fn block_stmts(&mut self, b: &Block) -> Result<()> {
        self.facts.push();
        let done = self.stmts(&b.stmts).and_then(|()| match &b.tail {
            Some(t) => self.expr_stmt(t),
            None => Ok(()),
        });
        self.facts.pop();
        done
    }

    pub(super) fn block_stmts_returning(&mut self, b: &Block, value: bool) -> Result<()> {
        self.facts.push();
        let done = self.stmts(&b.stmts).and_then(|()| match &b.tail {
            Some(t) if value => self.emit_into(&Target::Return, t),
            Some(t) => self.expr_stmt(t),
            None => Ok(()),
        });
        self.facts.pop();
        done
    }

    /// A block's statements in order, learning after each what it proves about indices.
    fn stmts(&mut self, stmts: &[Stmt]) -> Result<()> {
        for s in stmts {
            self.stmt(s)?;
            self.learn(s);
        }
        Ok(())
    }

    /// What holds after `s` for the rest of its block (bounds-check elision, see `proven`): the
    /// accesses it made unconditionally were in range, and `if cond { return; }` (or `break`,
    /// `continue`) leaves `cond` false.
    fn learn(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { init: Some(e), .. } | Stmt::Const { value: e, .. } => {
                self.facts.assume_accessed(e)
            }
            Stmt::Assign { place, value, .. } => {
                self.facts.assume_accessed(place);
                self.facts.assume_accessed(value);
            }
            Stmt::Seq(ss) => ss.iter().for_each(|s| self.learn(s)),
            Stmt::Expr(e) => match &e.kind {
                ExprKind::If(cond, then, None) => {
                    self.facts.assume_accessed(cond);
                    if leaves_block(then) {
                        self.facts.assume_not(cond);
                    }
                }
                ExprKind::If(..) | ExprKind::Block(_) => {}
                _ => self.facts.assume_accessed(e),
            },
            _ => {}
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
        // Each `else` runs with the conditions before it false: one scope of facts per `else`.
        let mut negated = 0;
        let done = self.if_chain(e, target, &mut negated);
        for _ in 0..negated {
            self.facts.pop();
        }
        done
    }

    fn if_chain(&mut self, e: &Expr, target: Option<&Target>, negated: &mut usize) -> Result<()> {
        let mut cur = e;
        let mut head = "if".to_string();
        loop {
            let ExprKind::If(c, then, els) = &cur.kind else {
                unreachable!("if_stmt on an if")
            };
            let (cs, _) = self.expr(c)?;
            self.line(&format!("{head} ({cs}) {{"));
            self.indent += 1;
            self.facts.push();
            self.facts.assume(c);
            let done = self.branch(then, target);
            self.facts.pop();
            done?;
            self.indent -= 1;
            self.facts.push();
            self.facts.assume_not(c);
            *negated += 1;
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
                self.facts.push();
                let done = self.stmts(&b.stmts).and_then(|()| match &b.tail {
                    Some(x) => self.emit_into(t, x),
                    None => Ok(()),
                });
                self.facts.pop();
                done
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
        self.facts.push();
        self.facts.assume_loop(var, r);
        let done = self.for_loop(var, r, body);
        self.facts.pop();
        done
    }

    fn for_loop(&mut self, var: VarId, r: &Range, body: &Block) -> Result<()> {
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
            let head = if r.inclusive {
                // `a..=b`: `b` itself is visited when the steps land on it; the counter never
                // steps past `b` (no overflow at the type's limits).
                let u = p.cuda_unsigned();
                format!(
                    "if ({i}__step != 0) for ({t} {ctr} = {i}__start, {i}__more = ({t})({i}__start <= {i}__end); {i}__more; \
                     {i}__more = ({t})((unsigned long long)({u})(({u}){i}__end - ({u}){ctr}) >= {i}__step), \
                     {ctr} = {i}__more ? ({t})(({u}){ctr} + ({u}){i}__step) : {ctr})"
                )
            } else {
                format!(
                    "if ({i}__step != 0) for ({t} {ctr} = {i}__start; {ctr} < {i}__end; {next})"
                )
            };
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
}

/// Whether a block never falls through to what follows it: it ends in `return`, `break` or
/// `continue`.
fn leaves_block(b: &Block) -> bool {
    b.tail.is_none()
        && matches!(
            b.stmts.last(),
            Some(Stmt::Return(None, _) | Stmt::Break | Stmt::Continue)
        )
}
