//! Blocks and statements: `const` items, assignments and their places, `while`, `loop`,
//! `for` over ranges, `break`, `continue` and `return`.

use super::signature::prim_of_type;
use super::{macro_error, Parser};
use crate::ir::ty::Ty;
use crate::ir::*;
use syn::spanned::Spanned;
use syn::{Error, Result};

impl Parser {
    pub(super) fn block(&mut self, b: &syn::Block) -> Result<Block> {
        self.scoped(|p| p.block_inner(b))
    }

    fn block_inner(&mut self, b: &syn::Block) -> Result<Block> {
        let mut stmts = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => stmts.push(self.local(l)?),
                syn::Stmt::Item(item) => stmts.push(self.item(item)?),
                syn::Stmt::Macro(m) => return Err(macro_error(&m.mac)),
                syn::Stmt::Expr(e, semi) => {
                    let last = i + 1 == n;
                    if last && semi.is_none() && !is_statement_expr(e) {
                        tail = Some(Box::new(self.expr(e)?));
                    } else {
                        stmts.push(self.stmt_expr(e)?);
                    }
                }
            }
        }
        Ok(Block {
            stmts,
            tail,
            span: b.span(),
        })
    }

    fn item(&mut self, item: &syn::Item) -> Result<Stmt> {
        match item {
            syn::Item::Const(c) => {
                let prim = prim_of_type(&c.ty).ok_or_else(|| {
                    Error::new_spanned(&c.ty, "constants in kernel code are scalars (bool, integers, f32, f64)")
                })?;
                let value = self.expr(&c.expr)?;
                let lit = match &value.kind {
                    ExprKind::Lit(Lit::Int(v)) => Some(*v),
                    _ => None,
                };
                let t = self.tys.prim(prim);
                let var = self.declare(&c.ident, t, false);
                if let Some(v) = lit {
                    self.consts.insert(var, v);
                }
                Ok(Stmt::Const { var, value })
            }
            syn::Item::Macro(m) => Err(macro_error(&m.mac)),
            other => Err(Error::new_spanned(other,
                "only `const` items can be declared inside kernel code (no fn, struct, use, static, ...)",
            )),
        }
    }

    pub(super) fn stmt_expr(&mut self, e: &syn::Expr) -> Result<Stmt> {
        match e {
            syn::Expr::Assign(a) => {
                let place = self.place(&a.left)?;
                let value = self.expr(&a.right)?;
                Ok(Stmt::Assign {
                    place,
                    op: None,
                    value,
                    span: a.span(),
                })
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let place = self.place(&b.left)?;
                let value = self.expr(&b.right)?;
                Ok(Stmt::Assign {
                    place,
                    op: compound_op(&b.op),
                    value,
                    span: b.span(),
                })
            }
            syn::Expr::While(w) => {
                no_label(&w.label)?;
                let cond = self.cond(&w.cond)?;
                let body = self.loop_body(&w.body)?;
                Ok(Stmt::While { cond, body })
            }
            syn::Expr::Loop(l) => {
                no_label(&l.label)?;
                let body = self.loop_body(&l.body)?;
                Ok(Stmt::Loop { body })
            }
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    return Err(Error::new_spanned(
                        b,
                        "`break` takes no label or value in kernel code",
                    ));
                }
                if self.loops == 0 {
                    return Err(Error::new_spanned(b, "`break` outside of a loop"));
                }
                Ok(Stmt::Break)
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return Err(Error::new_spanned(
                        c,
                        "`continue` takes no label in kernel code",
                    ));
                }
                if self.loops == 0 {
                    return Err(Error::new_spanned(c, "`continue` outside of a loop"));
                }
                Ok(Stmt::Continue)
            }
            syn::Expr::Return(r) => {
                let value = match &r.expr {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                Ok(Stmt::Return(value, r.span()))
            }
            syn::Expr::Paren(p) => self.stmt_expr(&p.expr),
            other => Ok(Stmt::Expr(self.expr(other)?)),
        }
    }

    pub(super) fn cond(&mut self, e: &syn::Expr) -> Result<Expr> {
        if let syn::Expr::Let(l) = e {
            return Err(Error::new_spanned(
                l,
                "`if let` / `while let` are not supported: kernel code has no enums or patterns",
            ));
        }
        self.expr(e)
    }

    fn loop_body(&mut self, b: &syn::Block) -> Result<Block> {
        self.loops += 1;
        let r = self.block(b);
        self.loops -= 1;
        r
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Result<Stmt> {
        no_label(&f.label)?;
        let usage = "for loops iterate over integer ranges: `for i in a..b`, `a..=b`, `(a..b).step_by(s)`, `(a..b).rev()`";
        let mut step = None;
        let mut rev = false;
        let mut range_expr = &*f.expr;
        if let syn::Expr::MethodCall(m) = range_expr {
            match m.method.to_string().as_str() {
                "step_by" if m.args.len() == 1 => step = Some(&m.args[0]),
                "rev" if m.args.is_empty() => rev = true,
                _ => return Err(Error::new_spanned(&m.method, usage)),
            }
            range_expr = &m.receiver;
        }
        while let syn::Expr::Paren(p) = range_expr {
            range_expr = &p.expr;
        }
        let syn::Expr::Range(r) = range_expr else {
            return Err(Error::new_spanned(&f.expr, usage));
        };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return Err(Error::new_spanned(
                r,
                "ranges in for loops need a start and an end (`a..b`)",
            ));
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        if rev && inclusive {
            return Err(Error::new_spanned(
                r,
                "`(a..=b).rev()` is not supported: write `(a..b + 1).rev()`",
            ));
        }
        let start = self.expr(start)?;
        let end = self.expr(end)?;
        let step = match step {
            Some(s) => Some(self.expr(s)?),
            None => None,
        };
        let range = Range {
            start,
            end,
            inclusive,
            step,
            rev,
            span: r.span(),
        };
        self.scoped(|p| {
            let (name, mutable) = match &*f.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    (pi.ident.clone(), pi.mutability.is_some())
                }
                syn::Pat::Wild(w) => (syn::Ident::new("_i", w.span()), false),
                other => {
                    return Err(Error::new_spanned(
                        other,
                        "the loop variable is a plain name: `for i in ..`",
                    ))
                }
            };
            let t = p.tys.any();
            let var = p.declare(&name, t, mutable);
            let body = p.loop_body(&f.body)?;
            Ok(Stmt::For { var, range, body })
        })
    }

    /// The left side of an assignment: a mutable local or an array element.
    pub(super) fn place(&mut self, e: &syn::Expr) -> Result<Expr> {
        match e {
            syn::Expr::Paren(p) => self.place(&p.expr),
            syn::Expr::Path(_) => {
                let x = self.expr(e)?;
                if let ExprKind::Var(v) = x.kind {
                    if matches!(
                        self.tys.get(self.vars[v].ty),
                        Ty::Slice { .. } | Ty::View { .. } | Ty::Local(_)
                    ) {
                        return Err(Error::new_spanned(
                            e,
                            "cannot assign to a whole array: assign its elements (`a[i] = ..`)",
                        ));
                    }
                    return Ok(x);
                }
                Err(Error::new_spanned(
                    e,
                    "only local variables and array elements can be assigned",
                ))
            }
            syn::Expr::Index(ix) => {
                let x = self.index(ix)?;
                if let ExprKind::Index(v, _) = x.kind {
                    if let Ty::Slice { mutable: false, .. } | Ty::View { mutable: false, .. } =
                        self.tys.get(self.vars[v].ty)
                    {
                        return Err(Error::new_spanned(&ix.expr,
                            format!(
                                "cannot write to `{}`: it is a read-only parameter; declare it `&mut`",
                                self.vars[v].name
                            ),
                        ));
                    }
                    if matches!(self.tys.get(self.vars[v].ty), Ty::Local(_))
                        && !self.vars[v].mutable
                    {
                        return Err(Error::new_spanned(
                            &ix.expr,
                            format!(
                                "cannot write to `{}`: declare it `let mut`",
                                self.vars[v].name
                            ),
                        ));
                    }
                }
                Ok(x)
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => Err(Error::new_spanned(
                u,
                "dereferencing is not supported: kernel code has no references",
            )),
            syn::Expr::Field(f) => Err(Error::new_spanned(
                f,
                "fields cannot be assigned in kernel code",
            )),
            other => Err(Error::new_spanned(
                other,
                "only local variables and array elements can be assigned",
            )),
        }
    }
}

pub(super) fn is_statement_expr(e: &syn::Expr) -> bool {
    matches!(
        e,
        syn::Expr::While(_)
            | syn::Expr::ForLoop(_)
            | syn::Expr::Loop(_)
            | syn::Expr::Assign(_)
            | syn::Expr::Break(_)
            | syn::Expr::Continue(_)
            | syn::Expr::Return(_)
    ) || matches!(e, syn::Expr::Binary(b) if compound_op(&b.op).is_some())
}

fn no_label(l: &Option<syn::Label>) -> Result<()> {
    match l {
        Some(l) => Err(Error::new_spanned(
            l,
            "loop labels are not supported in kernel code",
        )),
        None => Ok(()),
    }
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(_) => BinOp::Add,
        B::SubAssign(_) => BinOp::Sub,
        B::MulAssign(_) => BinOp::Mul,
        B::DivAssign(_) => BinOp::Div,
        B::RemAssign(_) => BinOp::Rem,
        B::BitAndAssign(_) => BinOp::BitAnd,
        B::BitOrAssign(_) => BinOp::BitOr,
        B::BitXorAssign(_) => BinOp::BitXor,
        B::ShlAssign(_) => BinOp::Shl,
        B::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}
