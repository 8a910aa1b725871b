//! Expressions: operators, literals, casts, paths and named constants, indexing, field
//! access on `Dim3`, `if` and blocks.

use super::signature::prim_of_type;
use super::{macro_error, Parser};
use crate::ir::ty::Ty;
use crate::ir::*;
use crate::types::Prim;
use syn::spanned::Spanned;
use syn::{Error, Result};

impl Parser {
    pub(super) fn expr(&mut self, e: &syn::Expr) -> Result<Expr> {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Paren(p) => {
                let x = self.expr(&p.expr)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Paren(Box::new(x)), t, span))
            }
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ => {
                        return Err(Error::new_spanned(u.op,
                            "dereferencing is not supported: kernel code has no references",
                        ))
                    }
                };
                let x = self.expr(&u.expr)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Unary(op, Box::new(x)), t, span))
            }
            syn::Expr::Binary(b) => {
                let Some(op) = bin_op(&b.op) else {
                    return Err(Error::new_spanned(b.op,
                        "assignments are statements in kernel code: write `x += y;` on its own",
                    ));
                };
                let l = self.expr(&b.left)?;
                let r = self.expr(&b.right)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Binary(op, Box::new(l), Box::new(r)), t, span))
            }
            syn::Expr::Cast(c) => {
                let x = self.expr(&c.expr)?;
                let p = prim_of_type(&c.ty).ok_or_else(|| {
                    Error::new_spanned(&c.ty, "`as` converts to a primitive type (bool, integers, f32, f64)")
                })?;
                let t = self.tys.prim(p);
                Ok(self.mk(ExprKind::Cast(Box::new(x), p), t, span))
            }
            syn::Expr::Index(ix) => self.index(ix),
            syn::Expr::MethodCall(m) => self.method(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::Field(f) => {
                let axis = match &f.member {
                    syn::Member::Named(id) if id == "x" => Axis::X,
                    syn::Member::Named(id) if id == "y" => Axis::Y,
                    syn::Member::Named(id) if id == "z" => Axis::Z,
                    _ => {
                        return Err(Error::new_spanned(&f.member,
                            "only `.x`, `.y` and `.z` of thread_idx(), block_idx(), block_dim() and grid_dim() are supported; destructure grid2() with `let (x, y) = grid2();`",
                        ))
                    }
                };
                let x = self.expr(&f.base)?;
                let t = self.tys.prim(Prim::U32);
                Ok(self.mk(ExprKind::Field(Box::new(x), axis), t, span))
            }
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    return Err(Error::new_spanned(e, "labeled blocks are not supported"));
                }
                let blk = self.block(&b.block)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Block(blk), t, span))
            }
            syn::Expr::Unsafe(u) => Err(Error::new(u.unsafe_token.span, "`unsafe` blocks are not needed or supported in kernel code")),
            syn::Expr::Closure(_) => Err(Error::new_spanned(e, "closures are not supported in kernel code: write a #[device] function")),
            syn::Expr::Macro(m) => Err(macro_error(&m.mac)),
            syn::Expr::Reference(_) => Err(Error::new_spanned(
                e,
                "references cannot be taken in kernel code (only `atomic_*(&mut a[i], ..)` takes `&mut a[i]`)",
            )),
            syn::Expr::Struct(_) => Err(Error::new_spanned(e, "struct literals are not supported in kernel code: use scalars and array parameters")),
            syn::Expr::Tuple(_) => Err(Error::new_spanned(e, "tuples are not supported in kernel code (except `let (x, y) = grid2();`)")),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => Err(Error::new_spanned(
                e,
                "array literals are local arrays, written as the whole value of a `let`: `let mut w = [0.0f32; 9];` (per-block memory is `shared_array::<T, N>()`)",
            )),
            syn::Expr::Match(m) => self.match_expr(m),
            syn::Expr::Range(_) => Err(Error::new_spanned(e, "ranges are only supported as the iterator of a `for` loop")),
            syn::Expr::Let(_) => Err(Error::new_spanned(e, "`if let` / `while let` are not supported: kernel code has no enums or patterns")),
            syn::Expr::Try(_) => Err(Error::new_spanned(e, "the `?` operator is not supported in kernel code")),
            syn::Expr::Await(_) | syn::Expr::Async(_) => Err(Error::new_spanned(e, "async is not supported in kernel code")),
            syn::Expr::While(_) | syn::Expr::ForLoop(_) | syn::Expr::Loop(_) => Err(Error::new_spanned(
                e,
                "loops are statements in kernel code; they cannot produce values",
            )),
            syn::Expr::Assign(_) => Err(Error::new_spanned(e, "assignments are statements in kernel code: write `x = y;` on its own")),
            syn::Expr::Break(_) | syn::Expr::Continue(_) | syn::Expr::Return(_) => Err(Error::new_spanned(
                e,
                "`break`, `continue` and `return` are statements in kernel code: end them with `;`",
            )),
            _ => Err(Error::new_spanned(e, "this expression is not supported in kernel code")),
        }
    }

    fn lit(&mut self, l: &syn::Lit) -> Result<Expr> {
        let span = l.span();
        // Negative literals appear in patterns (`-1..=5`): a negation of the positive literal.
        let negated = match l {
            syn::Lit::Int(i) if i.base10_digits().starts_with('-') => Some(syn::Lit::Int(
                syn::LitInt::new(&format!("{}{}", &i.base10_digits()[1..], i.suffix()), span),
            )),
            syn::Lit::Float(f) if f.base10_digits().starts_with('-') => Some(syn::Lit::Float(
                syn::LitFloat::new(&format!("{}{}", &f.base10_digits()[1..], f.suffix()), span),
            )),
            _ => None,
        };
        if let Some(pos) = negated {
            let x = self.lit(&pos)?;
            let t = self.tys.any();
            return Ok(self.mk(ExprKind::Unary(UnOp::Neg, Box::new(x)), t, span));
        }
        match l {
            syn::Lit::Int(i) => {
                let suffix = i.suffix();
                if let Some(p) = Prim::from_rust(suffix).filter(|p| p.is_float()) {
                    let t = self.tys.prim(p);
                    let text = format!("{}.0", i.base10_digits());
                    return Ok(self.mk(ExprKind::Lit(Lit::Float(text)), t, span));
                }
                let v: u128 = i.base10_parse()?;
                if v > u64::MAX as u128 {
                    return Err(Error::new(
                        span,
                        "integer literals in kernel code fit in 64 bits",
                    ));
                }
                let t = match suffix {
                    "" => self.tys.int(),
                    s => match Prim::from_rust(s) {
                        Some(p) if p.is_int() => self.tys.prim(p),
                        _ => {
                            return Err(Error::new_spanned(
                                l,
                                format!("unsupported literal suffix `{s}`"),
                            ))
                        }
                    },
                };
                Ok(self.mk(ExprKind::Lit(Lit::Int(v)), t, span))
            }
            syn::Lit::Float(f) => {
                let t = match f.suffix() {
                    "" => self.tys.float(),
                    "f32" => self.tys.prim(Prim::F32),
                    "f64" => self.tys.prim(Prim::F64),
                    s => {
                        return Err(Error::new_spanned(
                            l,
                            format!("unsupported literal suffix `{s}`"),
                        ))
                    }
                };
                Ok(self.mk(
                    ExprKind::Lit(Lit::Float(f.base10_digits().to_string())),
                    t,
                    span,
                ))
            }
            syn::Lit::Bool(b) => {
                let t = self.tys.prim(Prim::Bool);
                Ok(self.mk(ExprKind::Lit(Lit::Bool(b.value)), t, span))
            }
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => Err(Error::new_spanned(
                l,
                "strings are not supported in kernel code (no String, &str or heap on the GPU)",
            )),
            _ => Err(Error::new_spanned(
                l,
                "only integer, float and bool literals are supported in kernel code",
            )),
        }
    }

    pub(super) fn path_expr(&mut self, p: &syn::ExprPath) -> Result<Expr> {
        let span = p.span();
        if p.qself.is_some() {
            return Err(Error::new_spanned(
                p,
                "qualified paths are not supported in kernel code",
            ));
        }
        if let Some(id) = p.path.get_ident() {
            let name = id.to_string();
            return match self.lookup(name.trim_start_matches("r#")) {
                Some(v) => {
                    let t = self.vars[v].ty;
                    Ok(self.mk(ExprKind::Var(v), t, span))
                }
                None => Err(Error::new_spanned(p,
                    format!("cannot find `{name}` in this kernel: kernel code uses its parameters, its own `let` and `const` bindings, and constants like `f32::MAX` or `std::f32::consts::PI` (the macro cannot see items declared outside the function)"),
                )),
            };
        }
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let (prim, name) = match segs.as_slice() {
            ["std" | "core", t, "consts", c] | [t, "consts", c] => (Prim::from_rust(t), *c),
            [t, c] | ["std" | "core", t, c] => (Prim::from_rust(t), *c),
            _ => (None, ""),
        };
        let is_consts = segs.contains(&"consts");
        if let Some(prim) = prim {
            if named_const_ok(prim, name, is_consts) {
                let t = self.tys.prim(prim);
                return Ok(self.mk(
                    ExprKind::Const(NamedConst {
                        prim,
                        name: if is_consts {
                            format!("consts::{name}")
                        } else {
                            name.to_string()
                        },
                    }),
                    t,
                    span,
                ));
            }
        }
        Err(Error::new_spanned(p,
            "unsupported path: kernel code knows `MIN`, `MAX` of integer types, `MIN`, `MAX`, `EPSILON`, `INFINITY`, `NEG_INFINITY`, `NAN` of f32/f64, and `std::f32::consts::*` / `std::f64::consts::*`",
        ))
    }

    pub(super) fn index(&mut self, ix: &syn::ExprIndex) -> Result<Expr> {
        let span = ix.span();
        let base = match &*ix.expr {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| self.lookup(&id.to_string())),
            _ => None,
        };
        let Some(v) = base else {
            return Err(Error::new_spanned(
                &ix.expr,
                "only array parameters, shared arrays and local arrays (by name) can be indexed",
            ));
        };
        let ndim = match self.tys.get(self.vars[v].ty) {
            Ty::Slice { .. } | Ty::Local(_) => 1,
            Ty::View { ndim, .. } => ndim,
            _ => {
                return Err(Error::new_spanned(
                    &ix.expr,
                    format!(
                    "`{}` is not an array: only array parameters, shared arrays and local arrays can be indexed",
                    self.vars[v].name
                ),
                ))
            }
        };
        if let syn::Expr::Range(_) = &*ix.index {
            return Err(Error::new_spanned(
                &ix.index,
                "slicing (`a[i..j]`) is not supported: index elements one at a time",
            ));
        }
        let idx: Vec<Expr> = match (&*ix.index, ndim) {
            (syn::Expr::Array(a), n) if n > 1 => {
                if a.elems.len() != n {
                    return Err(Error::new_spanned(
                        &ix.index,
                        format!(
                            "`{}` has {n} axes: index it with {n} indices (`[[{}]]`)",
                            self.vars[v].name,
                            ["i", "j", "k"][..n].join(", ")
                        ),
                    ));
                }
                a.elems
                    .iter()
                    .map(|e| self.expr(e))
                    .collect::<Result<_>>()?
            }
            (_, 1) => vec![self.expr(&ix.index)?],
            (_, n) => {
                return Err(Error::new_spanned(
                    &ix.index,
                    format!(
                        "`{}` has {n} axes: index it as `{}[[{}]]`",
                        self.vars[v].name,
                        self.vars[v].name,
                        ["i", "j", "k"][..n].join(", ")
                    ),
                ))
            }
        };
        let t = self.tys.any();
        Ok(self.mk(ExprKind::Index(v, idx), t, span))
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Result<Expr> {
        let span = i.span();
        let cond = self.cond(&i.cond)?;
        let then = self.block(&i.then_branch)?;
        let els = match &i.else_branch {
            Some((_, e)) => Some(Box::new(self.expr(e)?)),
            None => None,
        };
        let t = self.tys.any();
        Ok(self.mk(ExprKind::If(Box::new(cond), then, els), t, span))
    }
}

fn bin_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) => BinOp::Add,
        B::Sub(_) => BinOp::Sub,
        B::Mul(_) => BinOp::Mul,
        B::Div(_) => BinOp::Div,
        B::Rem(_) => BinOp::Rem,
        B::BitAnd(_) => BinOp::BitAnd,
        B::BitOr(_) => BinOp::BitOr,
        B::BitXor(_) => BinOp::BitXor,
        B::Shl(_) => BinOp::Shl,
        B::Shr(_) => BinOp::Shr,
        B::Eq(_) => BinOp::Eq,
        B::Ne(_) => BinOp::Ne,
        B::Lt(_) => BinOp::Lt,
        B::Le(_) => BinOp::Le,
        B::Gt(_) => BinOp::Gt,
        B::Ge(_) => BinOp::Ge,
        B::And(_) => BinOp::And,
        B::Or(_) => BinOp::Or,
        _ => return None,
    })
}

fn named_const_ok(prim: Prim, name: &str, consts: bool) -> bool {
    if consts {
        return prim.is_float()
            && matches!(
                name,
                "PI" | "TAU"
                    | "E"
                    | "SQRT_2"
                    | "LN_2"
                    | "LN_10"
                    | "LOG2_E"
                    | "LOG10_E"
                    | "FRAC_PI_2"
                    | "FRAC_PI_3"
                    | "FRAC_PI_4"
                    | "FRAC_PI_6"
                    | "FRAC_PI_8"
                    | "FRAC_1_PI"
                    | "FRAC_2_PI"
                    | "FRAC_2_SQRT_PI"
                    | "FRAC_1_SQRT_2"
                    | "LOG2_10"
                    | "LOG10_2"
            );
    }
    if prim.is_float() {
        matches!(
            name,
            "MIN" | "MAX" | "EPSILON" | "INFINITY" | "NEG_INFINITY" | "NAN" | "MIN_POSITIVE"
        )
    } else {
        prim.is_int() && matches!(name, "MIN" | "MAX")
    }
}
