//! Type inference by unification, following Rust's rules as far as the kernel language needs.
//!
//! * Unsuffixed integer literals are `{integer}` and float literals `{float}` until context fixes
//!   them (`let mut s = 0.0; s += a[i];` with `a: &[f32]` makes `s` an `f32`); unfixed ones
//!   default to `i32` and `f64`, as in Rust.
//! * Arithmetic, comparison and assignment unify both sides; shifts do not (Rust allows
//!   `u64 << i32`); indices are `usize`.
//! * Results and parameters of `#[device]` functions defined elsewhere are *opaque*: the macro
//!   cannot see their signatures. Opaque types are spelled through the function's C++ type
//!   (`__gk_ret<decltype(&f)>`) and Rust infers them in the CPU twin.

use crate::ir::ty::{Opaque, Term, Ty, TyId, Tys};
use crate::ir::*;
use crate::methods::{self, Rel};
use crate::types::Prim;
use proc_macro2::Span;
use syn::Error;

/// Infers the types of everything in `f`, then checks what Rust would reject.
pub fn infer(f: &mut Func) -> syn::Result<()> {
    let mut cx = Cx {
        tys: std::mem::take(&mut f.tys),
        vars: &f.vars,
        callees: &f.callees,
        locals: &f.locals,
        ret: match f.kind {
            FuncKind::Kernel { .. } => None,
            FuncKind::Device { ret } => ret,
            FuncKind::Vectorize { ret } => Some(ret),
        },
    };
    let r = cx.block(&f.body);
    let body_ty = r?;
    if let Some(ret) = cx.ret {
        if f.body.tail.is_some() {
            cx.tys.want(body_ty, ret, f.body.span)?;
        }
    }
    f.tys = cx.tys;
    check::func(f)
}

struct Cx<'a> {
    tys: Tys,
    vars: &'a [Var],
    callees: &'a [Callee],
    locals: &'a [LocalArray],
    ret: Option<Prim>,
}

impl Cx<'_> {
    fn block(&mut self, b: &Block) -> syn::Result<TyId> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        match (&b.tail, b.stmts.last()) {
            (Some(t), _) => self.expr(t),
            // A block that ends by leaving (`return;`, `break;`) has Rust's type `!`, which
            // fits any expected type.
            (None, Some(Stmt::Return(..) | Stmt::Break | Stmt::Continue)) => Ok(self.tys.any()),
            (None, _) => Ok(self.tys.known(Ty::Unit)),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> syn::Result<()> {
        match s {
            Stmt::Let { pat, init, span } => {
                if let Some(init) = init {
                    let t = self.expr(init)?;
                    match pat {
                        LetPat::One(v) => self.tys.unify(self.vars[*v].ty, t, init.span)?,
                        LetPat::Tuple(vs) => {
                            let n = match self.tys.get(t) {
                                Ty::Tuple(n) => n,
                                _ => 0,
                            };
                            if n != vs.len() {
                                return Err(Error::new(
                                    *span,
                                    "tuple patterns are supported only as `let (x, y) = grid2();` (or grid3, gridsize2, gridsize3) with one name per axis",
                                ));
                            }
                            for v in vs {
                                self.tys.want(self.vars[*v].ty, Prim::Usize, *span)?;
                            }
                        }
                    }
                }
                Ok(())
            }
            Stmt::Const { var, value } => {
                let t = self.expr(value)?;
                self.tys.unify(self.vars[*var].ty, t, value.span)
            }
            Stmt::Shared(_) | Stmt::Break | Stmt::Continue => Ok(()),
            Stmt::LocalArray(k) => {
                let la = &self.locals[*k];
                let elem = la.elem;
                match &la.init {
                    ArrayInit::Repeat(v) => {
                        let t = self.expr(v)?;
                        self.tys.unify(elem, t, v.span)
                    }
                    ArrayInit::List(vs) => vs.iter().try_for_each(|v| {
                        let t = self.expr(v)?;
                        self.tys.unify(elem, t, v.span)
                    }),
                }
            }
            Stmt::Seq(ss) => ss.iter().try_for_each(|s| self.stmt(s)),
            Stmt::Expr(e) => self.expr(e).map(|_| ()),
            Stmt::Assign {
                place,
                op,
                value,
                span,
            } => {
                let p = self.expr(place)?;
                let v = self.expr(value)?;
                match op {
                    Some(op) if op.is_shift() => {
                        self.tys.want_int(p, *span)?;
                        self.tys.want_int(v, value.span)
                    }
                    _ => self.tys.unify(p, v, value.span),
                }
            }
            Stmt::While { cond, body } => {
                let c = self.expr(cond)?;
                self.tys.want(c, Prim::Bool, cond.span)?;
                self.block(body).map(|_| ())
            }
            Stmt::Loop { body } => self.block(body).map(|_| ()),
            Stmt::For { var, range, body } => {
                let v = self.vars[*var].ty;
                let a = self.expr(&range.start)?;
                let b = self.expr(&range.end)?;
                self.tys.unify(v, a, range.start.span)?;
                self.tys.unify(v, b, range.end.span)?;
                self.tys.want_int(v, range.span)?;
                if let Some(s) = &range.step {
                    let st = self.expr(s)?;
                    self.tys.want(st, Prim::Usize, s.span)?;
                }
                self.block(body).map(|_| ())
            }
            Stmt::Return(e, span) => match (e, self.ret) {
                (Some(e), Some(r)) => {
                    let t = self.expr(e)?;
                    self.tys.want(t, r, e.span)
                }
                (None, None) => Ok(()),
                (Some(e), None) => Err(Error::new(
                    e.span,
                    "a kernel returns nothing: write `return;` (results go into `&mut` parameters)",
                )),
                (None, Some(r)) => Err(Error::new(
                    *span,
                    format!("this function returns `{r}`: write `return value;`"),
                )),
            },
        }
    }

    fn expr(&mut self, e: &Expr) -> syn::Result<TyId> {
        let t = e.ty;
        let sp = e.span;
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Const(_) => {}
            ExprKind::Len(_) | ExprKind::Shape(..) => self.tys.want(t, Prim::Usize, sp)?,
            ExprKind::Intrinsic(_) => {}
            ExprKind::Paren(x) => {
                let x = self.expr(x)?;
                self.tys.unify(t, x, sp)?;
            }
            ExprKind::Unary(op, x) => {
                let xt = self.expr(x)?;
                self.tys.unify(t, xt, sp)?;
                if *op == UnOp::Neg {
                    if let Some(p) = self.tys.prim_of(xt) {
                        if !(p.is_signed_int() || p.is_float()) {
                            return Err(Error::new(
                                sp,
                                format!("cannot negate a value of type `{p}` (only signed integers and floats)"),
                            ));
                        }
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let at = self.expr(a)?;
                let bt = self.expr(b)?;
                if op.is_logical() {
                    self.tys.want(at, Prim::Bool, a.span)?;
                    self.tys.want(bt, Prim::Bool, b.span)?;
                    self.tys.want(t, Prim::Bool, sp)?;
                } else if op.is_comparison() {
                    self.tys.unify(at, bt, b.span)?;
                    self.tys.want(t, Prim::Bool, sp)?;
                } else if op.is_shift() {
                    self.tys.want_int(at, a.span)?;
                    self.tys.want_int(bt, b.span)?;
                    self.tys.unify(t, at, sp)?;
                } else {
                    self.tys.unify(at, bt, b.span)?;
                    self.tys.unify(t, at, sp)?;
                }
            }
            ExprKind::Cast(x, p) => {
                self.expr(x)?;
                self.tys.want(t, *p, sp)?;
            }
            ExprKind::Index(v, ix) => {
                for i in ix {
                    let it = self.expr(i)?;
                    self.tys.want(it, Prim::Usize, i.span)?;
                }
                match self.tys.get(self.vars[*v].ty) {
                    Ty::Slice { elem, .. } | Ty::View { elem, .. } => self.tys.want(t, elem, sp)?,
                    Ty::Local(k) => self.tys.unify(t, self.locals[k].elem, sp)?,
                    _ => {
                        unreachable_index(sp)?;
                    }
                }
            }
            ExprKind::Method(m, recv, args) => {
                let rt = self.expr(recv)?;
                let wrong = match self.tys.term(rt) {
                    Term::Known(Ty::Prim(p)) if !methods::accepts(m.recv, *p) => {
                        Some(format!("`{p}`"))
                    }
                    Term::Int if m.recv == methods::Recv::Float => Some("integers".to_string()),
                    Term::Float if m.recv == methods::Recv::Int => Some("floats".to_string()),
                    _ => None,
                };
                if let Some(on) = wrong {
                    return Err(Error::new(
                        sp,
                        format!(
                            "no method `{}` on {on} in kernel code (convert with `as`)",
                            m.name
                        ),
                    ));
                }
                match m.recv {
                    methods::Recv::Float => self.tys.want_float(rt, recv.span)?,
                    methods::Recv::Int => self.tys.want_int(rt, recv.span)?,
                    methods::Recv::Signed | methods::Recv::Num => {}
                }
                for (a, rel) in args.iter().zip(m.args) {
                    let at = self.expr(a)?;
                    match rel {
                        Rel::Same => self.tys.unify(rt, at, a.span)?,
                        Rel::Fixed(p) => self.tys.want(at, *p, a.span)?,
                    }
                }
                match m.ret {
                    Rel::Same => self.tys.unify(t, rt, sp)?,
                    Rel::Fixed(p) => self.tys.want(t, p, sp)?,
                }
            }
            ExprKind::Call(c, args) => {
                let name = self.callees[*c].cuda.clone();
                for (n, a) in args.iter().enumerate() {
                    let at = self.expr(a)?;
                    let o = self.tys.known(Ty::Opaque(Opaque::Param(name.clone(), n)));
                    self.tys.unify(at, o, a.span)?;
                }
                let r = self.tys.known(Ty::Opaque(Opaque::Ret(name)));
                self.tys.unify(t, r, sp)?;
            }
            ExprKind::Field(x, _) => {
                let xt = self.expr(x)?;
                let d = self.tys.known(Ty::Dim3);
                self.tys.unify(xt, d, x.span)?;
                self.tys.want(t, Prim::U32, sp)?;
            }
            ExprKind::Atomic(op, place, args) => {
                let pt = self.expr(place)?;
                for a in args {
                    let at = self.expr(a)?;
                    self.tys.unify(pt, at, a.span)?;
                }
                self.tys.unify(t, pt, sp)?;
                if let Some(p) = self.tys.prim_of(pt) {
                    let ok = matches!(
                        p,
                        Prim::I32 | Prim::U32 | Prim::I64 | Prim::U64 | Prim::F32 | Prim::F64
                    );
                    if !ok {
                        return Err(Error::new(
                            sp,
                            format!(
                                "`{}` works on i32, u32, i64, u64, f32 and f64 elements, not `{p}`",
                                op.name()
                            ),
                        ));
                    }
                }
            }
            ExprKind::If(c, then, els) => {
                let ct = self.expr(c)?;
                self.tys.want(ct, Prim::Bool, c.span)?;
                let tt = self.block(then)?;
                match els {
                    Some(e) => {
                        let et = self.expr(e)?;
                        self.tys.unify(tt, et, e.span)?;
                    }
                    None => {
                        let u = self.tys.known(Ty::Unit);
                        self.tys.unify(tt, u, then.span)?;
                    }
                }
                self.tys.unify(t, tt, sp)?;
            }
            ExprKind::Block(b) => {
                let bt = self.block(b)?;
                self.tys.unify(t, bt, sp)?;
            }
        }
        Ok(t)
    }
}

fn unreachable_index(span: Span) -> syn::Result<Prim> {
    Err(Error::new(
        span,
        "only array parameters, shared arrays and local arrays can be indexed",
    ))
}

/// Checks after inference: what Rust rejects that C++ would accept.
mod check;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{kernel_error, kernel_ir};

    /// The inferred type of the local called `name` (the last one, if shadowed).
    fn ty_of(src: &str, name: &str) -> Ty {
        let f = kernel_ir(src, true).unwrap_or_else(|e| panic!("{e}"));
        let v = f
            .vars
            .iter()
            .rev()
            .find(|v| v.name == name)
            .expect("variable exists");
        f.tys.get(v.ty)
    }

    const F32: Ty = Ty::Prim(Prim::F32);

    #[test]
    fn float_literal_takes_type_from_later_use() {
        let src = "fn k(a: &[f32], o: &mut [f32]) { let mut s = 0.0; for i in 0..a.len() { s += a[i]; } o[0] = s; }";
        assert_eq!(ty_of(src, "s"), F32);
        assert_eq!(ty_of(src, "i"), Ty::Prim(Prim::Usize));
    }

    #[test]
    fn defaults_are_i32_and_f64() {
        let src = "fn k(o: &mut [f32]) { let a = 1; let b = 2.0; let c = a + 3; let d = b * 2.0; }";
        assert_eq!(ty_of(src, "a"), Ty::Prim(Prim::I32));
        assert_eq!(ty_of(src, "c"), Ty::Prim(Prim::I32));
        assert_eq!(ty_of(src, "b"), Ty::Prim(Prim::F64));
        assert_eq!(ty_of(src, "d"), Ty::Prim(Prim::F64));
    }

    #[test]
    fn indices_are_usize_and_shifts_keep_the_left_type() {
        let src = "fn k(o: &mut [u8]) { let i = 3; let s = 2; let v = o[i] << s; o[i] = v; }";
        assert_eq!(ty_of(src, "i"), Ty::Prim(Prim::Usize));
        assert_eq!(ty_of(src, "s"), Ty::Prim(Prim::I32));
        assert_eq!(ty_of(src, "v"), Ty::Prim(Prim::U8));
    }

    #[test]
    fn method_results_and_arguments() {
        let src = "fn k(o: &mut [f32]) { let x = 2.0; let p = x.powi(3); let n = 5; let q = o[0].powi(n); let m = 3u64.pow(2); }";
        assert_eq!(ty_of(src, "x"), Ty::Prim(Prim::F64));
        assert_eq!(ty_of(src, "n"), Ty::Prim(Prim::I32));
        assert_eq!(ty_of(src, "m"), Ty::Prim(Prim::U64));
        assert_eq!(ty_of(src, "q"), F32);
        let e = kernel_error("fn k(o: &mut [f32]) { let c = o[0].count_ones(); }");
        assert!(e.contains("no method `count_ones` on `f32`"), "{e}");
        let e = kernel_error("fn k(o: &mut [f32]) { let x = 4; o[0] = x.sqrt(); }");
        assert!(e.contains("no method `sqrt` on integers"), "{e}");
    }

    #[test]
    fn if_branches_and_casts() {
        let src = "fn k(o: &mut [f32], n: u64) { let v = if n > 2 { 1.5 } else { o[0] }; let w = n as f32 * 2.0; let z = 7 as f64; }";
        assert_eq!(ty_of(src, "v"), F32);
        assert_eq!(ty_of(src, "w"), F32);
        assert_eq!(ty_of(src, "z"), Ty::Prim(Prim::F64));
    }

    #[test]
    fn device_results_are_opaque_until_context_fixes_them() {
        let src = "fn k(o: &mut [f32]) { let a = helper(1.0); let b = helper(2.0); o[0] = b; let c = a * 2.0; }";
        assert_eq!(ty_of(src, "b"), F32);
        assert_eq!(
            ty_of(src, "a"),
            Ty::Opaque(Opaque::Ret("gk_dev_helper".into()))
        );
        assert_eq!(
            ty_of(src, "c"),
            Ty::Opaque(Opaque::Ret("gk_dev_helper".into()))
        );
    }

    #[test]
    fn diverging_branches_fit_any_type() {
        let src = "fn k(o: &mut [f32]) { let i = grid(1); let v = if i < o.len() { o[i] } else { return; }; o[i] = v * 2.0; }";
        assert_eq!(ty_of(src, "v"), F32);
    }

    #[test]
    fn mismatches_are_errors() {
        assert!(
            kernel_error("fn k(o: &mut [f32]) { let x: f64 = 1.0; o[0] = x; }")
                .contains("expected `f32`, found `f64`")
        );
        assert!(kernel_error("fn k(o: &mut [i32]) { o[0] = 1.5; }").contains("mismatched types"));
        assert!(kernel_error("fn k(o: &mut [bool]) { o[0] = o[1] + o[2]; }")
            .contains("operator `+` is not defined for `bool`"));
        assert!(
            kernel_error("fn k(o: &mut [f32]) { let b = o[0] as bool; }")
                .contains("cannot cast `f32` as `bool`")
        );
        assert!(kernel_error("fn k(o: &mut [f32]) { return 1.0; }")
            .contains("a kernel returns nothing"));
        assert!(
            kernel_error("fn k(o: &mut [u8]) { atomic_add(&mut o[0], 1); }")
                .contains("`atomic_add` works on")
        );
    }
}
