//! `match` on integers and bools, lowered to an `if` chain on the scrutinee.

use super::stmts::is_statement_expr;
use super::Parser;
use crate::ir::*;
use syn::spanned::Spanned;
use syn::{Error, Result};

impl Parser {
    /// `match` on integers and bools becomes an `if` chain on the scrutinee (computed once).
    /// Arms: literals, `a | b`, ranges `a..=b` / `a..b` / `a..`, guards, and a final `_` or
    /// name that catches the rest.
    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch) -> Result<Expr> {
        let span = m.span();
        let scrut = self.expr(&m.expr)?;
        let Some(last) = m.arms.last() else {
            return Err(Error::new_spanned(
                m,
                "a `match` in kernel code needs arms, the last one `_ => ..`",
            ));
        };
        let catch_all = matches!(last.pat, syn::Pat::Wild(_))
            || matches!(&last.pat, syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none());
        if !catch_all || last.guard.is_some() {
            return Err(Error::new_spanned(
                &last.pat,
                "the last arm of a `match` in kernel code catches everything else: `_ => ..` (or a name, without a guard)",
            ));
        }
        self.scoped(|p| {
            let mut stmts = Vec::new();
            let var = match scrut.kind {
                ExprKind::Var(v) => v,
                _ => {
                    let t = p.tys.any();
                    let tmp = p.declare(&syn::Ident::new("__gk_match", span), t, false);
                    p.scopes.last_mut().expect("scope").remove("__gk_match");
                    p.vars[tmp].name = syn::Ident::new(&p.vars[tmp].cuda, span);
                    stmts.push(Stmt::Let {
                        pat: LetPat::One(tmp),
                        init: Some(scrut),
                        span,
                    });
                    tmp
                }
            };
            let mut chain = p.arm_body(last, Some(var))?;
            for arm in m.arms.iter().rev().skip(1) {
                let (cond, body) = p.scoped(|p| {
                    let cond = match (&arm.pat, &arm.guard) {
                        // `x if guard`: the name stands for the scrutinee.
                        (syn::Pat::Ident(pi), Some((_, g)))
                            if pi.mutability.is_none()
                                && pi.by_ref.is_none()
                                && pi.subpat.is_none() =>
                        {
                            p.scopes
                                .last_mut()
                                .expect("scope")
                                .insert(pi.ident.to_string(), var);
                            p.expr(g)?
                        }
                        (pat, guard) => {
                            let c = p.pat_cond(pat, var)?;
                            match guard {
                                Some((_, g)) => {
                                    let g = p.expr(g)?;
                                    p.bin(BinOp::And, c, g)
                                }
                                None => c,
                            }
                        }
                    };
                    Ok((cond, p.arm_body(arm, None)?))
                })?;
                let then = into_block(body);
                let t = p.tys.any();
                chain = p.mk(
                    ExprKind::If(Box::new(cond), then, Some(Box::new(chain))),
                    t,
                    arm.span(),
                );
            }
            if stmts.is_empty() {
                return Ok(chain);
            }
            let t = p.tys.any();
            let block = Block {
                stmts,
                tail: Some(Box::new(chain)),
                span,
            };
            Ok(p.mk(ExprKind::Block(block), t, span))
        })
    }

    /// The body of an arm; `bind` binds the final arm's name to the scrutinee.
    fn arm_body(&mut self, arm: &syn::Arm, bind: Option<VarId>) -> Result<Expr> {
        self.scoped(|p| {
            let mut stmts = Vec::new();
            if let (syn::Pat::Ident(pi), Some(v)) = (&arm.pat, bind) {
                if pi.mutability.is_none() {
                    // The name stands for the scrutinee.
                    p.scopes
                        .last_mut()
                        .expect("scope")
                        .insert(pi.ident.to_string(), v);
                }
            }
            let copy = matches!(&arm.pat, syn::Pat::Ident(pi) if pi.mutability.is_some());
            if let (syn::Pat::Ident(pi), Some(v), true) = (&arm.pat, bind, copy) {
                let t = p.tys.any();
                let name = p.declare(&pi.ident, t, pi.mutability.is_some());
                let ty = p.vars[v].ty;
                let init = Expr {
                    kind: ExprKind::Var(v),
                    ty,
                    span: pi.span(),
                };
                stmts.push(Stmt::Let {
                    pat: LetPat::One(name),
                    init: Some(init),
                    span: pi.span(),
                });
            }
            let (more, tail) = if is_statement_expr(&arm.body) {
                (vec![p.stmt_expr(&arm.body)?], None)
            } else {
                (Vec::new(), Some(Box::new(p.expr(&arm.body)?)))
            };
            stmts.extend(more);
            let span = arm.body.span();
            if stmts.is_empty() {
                if let Some(t) = tail {
                    return Ok(*t);
                }
            }
            let t = p.tys.any();
            Ok(p.mk(ExprKind::Block(Block { stmts, tail, span }), t, span))
        })
    }

    /// The condition under which `pat` matches the variable `v`.
    fn pat_cond(&mut self, pat: &syn::Pat, v: VarId) -> Result<Expr> {
        let var = |p: &mut Self| {
            let ty = p.vars[v].ty;
            Expr {
                kind: ExprKind::Var(v),
                ty,
                span: pat.span(),
            }
        };
        match pat {
            syn::Pat::Lit(l) => {
                let lit = self.expr(&syn::Expr::Lit(l.clone()))?;
                let x = var(self);
                Ok(self.bin(BinOp::Eq, x, lit))
            }
            syn::Pat::Or(o) => {
                let mut cond: Option<Expr> = None;
                for c in &o.cases {
                    let e = self.pat_cond(c, v)?;
                    cond = Some(match cond {
                        None => e,
                        Some(prev) => self.bin(BinOp::Or, prev, e),
                    });
                }
                cond.ok_or_else(|| Error::new_spanned(o, "empty pattern"))
            }
            syn::Pat::Range(r) => {
                let mut cond: Option<Expr> = None;
                if let Some(a) = &r.start {
                    let a = self.expr(a)?;
                    let x = var(self);
                    cond = Some(self.bin(BinOp::Ge, x, a));
                }
                if let Some(b) = &r.end {
                    let b = self.expr(b)?;
                    let x = var(self);
                    let op = if matches!(r.limits, syn::RangeLimits::Closed(_)) { BinOp::Le } else { BinOp::Lt };
                    let e = self.bin(op, x, b);
                    cond = Some(match cond {
                        None => e,
                        Some(prev) => self.bin(BinOp::And, prev, e),
                    });
                }
                cond.ok_or_else(|| Error::new_spanned(r, "a range pattern needs a bound"))
            }
            syn::Pat::Paren(p) => self.pat_cond(&p.pat, v),
            syn::Pat::Path(pp) if pp.path.get_ident().is_some() => {
                let c = self.path_expr(pp)?;
                let x = var(self);
                Ok(self.bin(BinOp::Eq, x, c))
            }
            syn::Pat::Wild(_) | syn::Pat::Ident(_) => Err(Error::new_spanned(
                pat,
                "only the last arm of a `match` can catch everything (`_` or a name)",
            )),
            other => Err(Error::new_spanned(
                other,
                "`match` in kernel code supports literal patterns, `a | b`, ranges (`1..=9`), local constants, guards and a final `_`",
            )),
        }
    }

    fn bin(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        let span = a.span;
        let t = self.tys.any();
        self.mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), t, span)
    }
}

/// `e` as the block of an `if` branch.
fn into_block(e: Expr) -> Block {
    match e.kind {
        ExprKind::Block(b) => b,
        _ => Block {
            stmts: Vec::new(),
            span: e.span,
            tail: Some(Box::new(e)),
        },
    }
}
