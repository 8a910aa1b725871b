//! Checks after inference: what Rust rejects that C++ would accept.

use crate::ir::ty::{describe_ty, Ty, TyId};
use crate::ir::*;
use crate::methods;
use crate::types::Prim;
use proc_macro2::Span;
use syn::Error;

/// Checks every statement and expression of `f`.
pub fn func(f: &Func) -> syn::Result<()> {
    block(f, &f.body)
}

fn block(f: &Func, b: &Block) -> syn::Result<()> {
    stmts(f, &b.stmts)?;
    if let Some(t) = &b.tail {
        expr(f, t)?;
    }
    Ok(())
}

fn stmts(f: &Func, ss: &[Stmt]) -> syn::Result<()> {
    for s in ss {
        match s {
            Stmt::Seq(inner) => stmts(f, inner)?,
            Stmt::LocalArray(k) => {
                let la = &f.locals[*k];
                match &la.init {
                    ArrayInit::Repeat(v) => expr(f, v)?,
                    ArrayInit::List(vs) => vs.iter().try_for_each(|v| expr(f, v))?,
                }
                if f.tys.prim_of(la.elem).is_none() {
                    return Err(Error::new(
                        f.vars[la.var].name.span(),
                        "local arrays hold numbers or bools",
                    ));
                }
            }
            Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) => expr(f, e)?,
            Stmt::Const { value, .. } => expr(f, value)?,
            Stmt::Assign {
                place, value, op, ..
            } => {
                expr(f, place)?;
                expr(f, value)?;
                if let Some(op) = op {
                    arith(f, *op, place.ty, value.span)?;
                }
            }
            Stmt::While { cond, body } => {
                expr(f, cond)?;
                block(f, body)?;
            }
            Stmt::Loop { body } => block(f, body)?,
            Stmt::For { range, body, .. } => {
                expr(f, &range.start)?;
                expr(f, &range.end)?;
                if let Some(s) = &range.step {
                    expr(f, s)?;
                }
                block(f, body)?;
            }
            Stmt::Return(Some(e), _) => expr(f, e)?,
            _ => {}
        }
    }
    Ok(())
}

fn arith(f: &Func, op: BinOp, t: TyId, span: Span) -> syn::Result<()> {
    let Some(p) = f.tys.prim_of(t) else {
        return Ok(());
    };
    let ok = match op {
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => p.is_int() || p == Prim::Bool,
        BinOp::Shl | BinOp::Shr => p.is_int(),
        BinOp::And | BinOp::Or => p == Prim::Bool,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => true,
        _ => p != Prim::Bool,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            span,
            format!("operator `{}` is not defined for `{p}`", op.symbol()),
        ))
    }
}

fn expr(f: &Func, e: &Expr) -> syn::Result<()> {
    match &e.kind {
        ExprKind::Unary(op, x) => {
            expr(f, x)?;
            if *op == UnOp::Neg {
                if let Some(p) = f.tys.prim_of(x.ty) {
                    if !(p.is_signed_int() || p.is_float()) {
                        return Err(Error::new(
                            e.span,
                            format!("cannot negate a value of type `{p}` (only signed integers and floats)"),
                        ));
                    }
                }
            }
            if *op == UnOp::Not {
                if let Some(p) = f.tys.prim_of(x.ty) {
                    if p.is_float() {
                        return Err(Error::new(e.span, "`!` is not defined for floats"));
                    }
                }
            }
            Ok(())
        }
        ExprKind::Binary(op, a, b) => {
            expr(f, a)?;
            expr(f, b)?;
            arith(f, *op, a.ty, e.span)
        }
        ExprKind::Cast(x, to) => {
            expr(f, x)?;
            match f.tys.get(x.ty) {
                Ty::Prim(from) => {
                    if *to == Prim::Bool && from != Prim::Bool {
                        return Err(Error::new(
                            e.span,
                            format!("cannot cast `{from}` as `bool`: compare instead (`x != 0`)"),
                        ));
                    }
                    if from == Prim::Bool && to.is_float() {
                        return Err(Error::new(
                            e.span,
                            "cannot cast `bool` to a float: cast to an integer first",
                        ));
                    }
                    Ok(())
                }
                Ty::Opaque(_) => Ok(()),
                other => Err(Error::new(
                    e.span,
                    format!(
                        "cannot cast `{}` with `as`: only numbers and bool",
                        describe_ty(&other)
                    ),
                )),
            }
        }
        ExprKind::Method(m, recv, args) => {
            expr(f, recv)?;
            for a in args {
                expr(f, a)?;
            }
            if let Some(p) = f.tys.prim_of(recv.ty) {
                if !methods::accepts(m.recv, p) {
                    return Err(Error::new(
                        e.span,
                        format!("no method `{}` on `{p}` in kernel code", m.name),
                    ));
                }
            }
            Ok(())
        }
        ExprKind::Paren(x) | ExprKind::Field(x, _) => expr(f, x),
        ExprKind::Index(_, ix) | ExprKind::Call(_, ix) => ix.iter().try_for_each(|i| expr(f, i)),
        ExprKind::Atomic(_, p, a) => {
            expr(f, p)?;
            a.iter().try_for_each(|i| expr(f, i))
        }
        ExprKind::If(c, t, el) => {
            expr(f, c)?;
            block(f, t)?;
            if let Some(el) = el {
                expr(f, el)?;
            }
            Ok(())
        }
        ExprKind::Block(b) => block(f, b),
        _ => Ok(()),
    }
}
