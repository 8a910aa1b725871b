//! `let` bindings: scalars and tuples, per-thread local arrays (`[v; N]`, `[a, b, c]`) and
//! shared arrays (`shared_array::<T, N>()`), with the limits on their sizes.

use super::signature::prim_of_type;
use super::{Mode, Parser};
use crate::ir::ty::Ty;
use crate::ir::*;
use crate::types::{Prim, ELEMENT_TYPES};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Error, Result};

/// Elements of all local arrays of one kernel (they live on each thread's stack).
const MAX_LOCAL_ELEMS: u64 = 2048;

/// Static shared memory a CUDA block may declare.
const MAX_SHARED_BYTES: usize = 48 * 1024;

fn elem_size(p: Prim) -> usize {
    (p.bits() / 8) as usize
}

impl Parser {
    pub(super) fn local(&mut self, l: &syn::Local) -> Result<Stmt> {
        let span = l.span();
        let array_init = l
            .init
            .as_ref()
            .is_some_and(|i| matches!(&*i.expr, syn::Expr::Repeat(_) | syn::Expr::Array(_)));
        let array_annot =
            matches!(&l.pat, syn::Pat::Type(pt) if matches!(&*pt.ty, syn::Type::Array(_)));
        if array_init || array_annot {
            return self.local_array(l);
        }
        let (pat, annot) = match &l.pat {
            syn::Pat::Type(pt) => {
                let prim = prim_of_type(&pt.ty).ok_or_else(|| {
                    Error::new_spanned(&pt.ty,
                        "local variables hold scalars (bool, integers, f32, f64): references, arrays, String and Vec are not supported",
                    )
                })?;
                (&*pt.pat, Some(prim))
            }
            other => (other, None),
        };
        let init = match &l.init {
            Some(init) => {
                if let Some((_, d)) = &init.diverge {
                    return Err(Error::new_spanned(
                        d,
                        "`let ... else` is not supported in kernel code",
                    ));
                }
                if let Some(shared) = self.shared_array_call(&init.expr)? {
                    return self.shared_let(pat, annot, shared, span);
                }
                if let (syn::Pat::Tuple(pt), syn::Expr::Tuple(et)) = (pat, &*init.expr) {
                    return self.tuple_let(pt, et, span);
                }
                Some(self.expr(&init.expr)?)
            }
            None => None,
        };
        if let Some(e) = &init {
            if let ExprKind::Var(v) = e.kind {
                if matches!(
                    self.tys.get(self.vars[v].ty),
                    Ty::Slice { .. } | Ty::View { .. } | Ty::Local(_)
                ) {
                    return Err(Error::new(
                        e.span,
                        "arrays cannot be copied into local variables: index the parameter directly",
                    ));
                }
            }
        }
        let pat = match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                let t = match annot {
                    Some(p) => self.tys.prim(p),
                    None => self.tys.any(),
                };
                LetPat::One(self.declare(&pi.ident, t, pi.mutability.is_some()))
            }
            syn::Pat::Ident(pi) => {
                return Err(Error::new_spanned(pi,
                    "`ref` bindings are not supported: kernel code has no references",
                ))
            }
            syn::Pat::Wild(w) => {
                let id = syn::Ident::new("_unused", w.span());
                let t = self.tys.any();
                LetPat::One(self.declare(&id, t, false))
            }
            syn::Pat::Tuple(t) => {
                let mut vs = Vec::new();
                for e in &t.elems {
                    match e {
                        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            let ty = self.tys.any();
                            vs.push((pi.ident.clone(), ty, pi.mutability.is_some()));
                        }
                        other => {
                            return Err(Error::new_spanned(other,
                                "tuple patterns hold plain names: `let (x, y) = grid2();`",
                            ))
                        }
                    }
                }
                LetPat::Tuple(
                    vs.into_iter()
                        .map(|(id, ty, m)| self.declare(&id, ty, m))
                        .collect(),
                )
            }
            other => {
                return Err(Error::new_spanned(other,
                    "unsupported pattern: `let` binds a name (`let x = ..`, `let mut x: f32 = ..`) or the axes of grid2()/grid3()",
                ))
            }
        };
        Ok(Stmt::Let { pat, init, span })
    }

    /// The next array id (array parameters, then shared and local arrays in declaration order).
    fn next_array_id(&self) -> usize {
        self.array_count + self.shared.len() + self.locals.len()
    }

    /// `let mut w = [0.0f32; 9];`, `let w: [f32; 3] = [1.0, 2.0, 1.0];`: a per-thread array.
    fn local_array(&mut self, l: &syn::Local) -> Result<Stmt> {
        let span = l.span();
        if self.mode != Mode::Kernel {
            return Err(Error::new_spanned(
                l,
                "local arrays exist only in #[kernel] functions",
            ));
        }
        let (pat, annot) = match &l.pat {
            syn::Pat::Type(pt) => match &*pt.ty {
                syn::Type::Array(a) => {
                    let elem = prim_of_type(&a.elem).ok_or_else(|| {
                        Error::new_spanned(&a.elem, "local arrays hold numbers or bools")
                    })?;
                    (&*pt.pat, Some((elem, self.array_len(&a.len)?)))
                }
                other => return Err(Error::new_spanned(other, "expected an array type `[T; N]`")),
            },
            other => (other, None),
        };
        let syn::Pat::Ident(pi) = pat else {
            return Err(Error::new_spanned(
                pat,
                "bind a local array to a name: `let mut w = [0.0f32; 9];`",
            ));
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            return Err(Error::new_spanned(
                pat,
                "bind a local array to a plain name",
            ));
        }
        let Some(init) = &l.init else {
            return Err(Error::new_spanned(
                l,
                "initialize local arrays: `let mut w = [0.0f32; 9];`",
            ));
        };
        if let Some((_, d)) = &init.diverge {
            return Err(Error::new_spanned(
                d,
                "`let ... else` is not supported in kernel code",
            ));
        }
        let (init, len) = match &*init.expr {
            syn::Expr::Repeat(r) => (
                ArrayInit::Repeat(self.expr(&r.expr)?),
                self.array_len(&r.len)?,
            ),
            syn::Expr::Array(a) => {
                let vs: Vec<Expr> = a
                    .elems
                    .iter()
                    .map(|e| self.expr(e))
                    .collect::<Result<_>>()?;
                let n = vs.len() as u64;
                (ArrayInit::List(vs), n)
            }
            other => {
                return Err(Error::new_spanned(
                    other,
                    "initialize local arrays with `[v; N]` or `[a, b, c]`",
                ))
            }
        };
        if len == 0 {
            return Err(Error::new(span, "a local array needs at least one element"));
        }
        let elem = match annot {
            Some((p, n)) => {
                if n != len {
                    return Err(Error::new(
                        span,
                        format!("the type says {n} elements, the value has {len}"),
                    ));
                }
                self.tys.prim(p)
            }
            None => self.tys.any(),
        };
        self.local_elems = self.local_elems.saturating_add(len);
        if self.local_elems > MAX_LOCAL_ELEMS {
            return Err(Error::new(
                span,
                format!("local arrays of a kernel hold at most {MAX_LOCAL_ELEMS} elements in all (use shared_array or an array parameter)"),
            ));
        }
        let k = self.locals.len();
        let t = self.tys.known(Ty::Local(k));
        let array_id = self.next_array_id();
        let var = self.declare(&pi.ident, t, pi.mutability.is_some());
        self.locals.push(LocalArray {
            var,
            elem,
            len,
            array_id,
            init,
        });
        Ok(Stmt::LocalArray(k))
    }

    /// An array length: an integer literal or a `const` of the body.
    fn array_len(&self, e: &syn::Expr) -> Result<u64> {
        match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse::<u64>(),
            syn::Expr::Path(p) => self.const_len(&p.path),
            other => Err(Error::new_spanned(
                other,
                "an array length is an integer literal or a `const` declared in the kernel",
            )),
        }
    }

    /// `let (a, b) = (x, y);`: every value is computed before any name is bound, as in Rust.
    fn tuple_let(
        &mut self,
        pat: &syn::PatTuple,
        values: &syn::ExprTuple,
        span: Span,
    ) -> Result<Stmt> {
        if pat.elems.len() != values.elems.len() {
            return Err(Error::new(
                span,
                format!(
                    "{} names for {} values",
                    pat.elems.len(),
                    values.elems.len()
                ),
            ));
        }
        let mut stmts = Vec::new();
        let mut temps = Vec::new();
        for v in &values.elems {
            let e = self.expr(v)?;
            let t = self.tys.any();
            let tmp = self.declare(&syn::Ident::new("__gk_tuple_part", v.span()), t, false);
            // Hidden from user code; named by its unique C++ name on both sides.
            self.scopes
                .last_mut()
                .expect("scope")
                .remove("__gk_tuple_part");
            self.vars[tmp].name = syn::Ident::new(&self.vars[tmp].cuda, v.span());
            stmts.push(Stmt::Let {
                pat: LetPat::One(tmp),
                init: Some(e),
                span: v.span(),
            });
            temps.push(tmp);
        }
        for (p, tmp) in pat.elems.iter().zip(temps) {
            let syn::Pat::Ident(pi) = p else {
                return Err(Error::new_spanned(
                    p,
                    "tuple patterns hold plain names: `let (x, y) = (a, b);`",
                ));
            };
            if pi.by_ref.is_some() || pi.subpat.is_some() {
                return Err(Error::new_spanned(
                    p,
                    "tuple patterns hold plain names: `let (x, y) = (a, b);`",
                ));
            }
            let t = self.tys.any();
            let var = self.declare(&pi.ident, t, pi.mutability.is_some());
            let ty = self.vars[tmp].ty;
            let init = Expr {
                kind: ExprKind::Var(tmp),
                ty,
                span: pi.span(),
            };
            stmts.push(Stmt::Let {
                pat: LetPat::One(var),
                init: Some(init),
                span: pi.span(),
            });
        }
        Ok(Stmt::Seq(stmts))
    }

    /// `shared_array::<T, N>()`, if `e` is that call: (element, length, span).
    fn shared_array_call(&mut self, e: &syn::Expr) -> Result<Option<(Prim, u64, Span)>> {
        let syn::Expr::Call(c) = e else {
            return Ok(None);
        };
        let syn::Expr::Path(p) = &*c.func else {
            return Ok(None);
        };
        let Some(seg) = p.path.segments.last() else {
            return Ok(None);
        };
        if seg.ident != "shared_array" || p.path.segments.len() != 1 {
            return Ok(None);
        }
        if self.mode != Mode::Kernel {
            return Err(Error::new_spanned(
                e,
                "shared arrays exist only in #[kernel] functions",
            ));
        }
        let usage = || {
            Error::new_spanned(seg,
                "write `shared_array::<T, N>()` with an element type and a length that is an integer literal or a `const` declared in the kernel",
            )
        };
        if !c.args.is_empty() {
            return Err(Error::new_spanned(
                &c.args,
                "`shared_array::<T, N>()` takes no arguments",
            ));
        }
        let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
            return Err(usage());
        };
        if args.args.len() != 2 {
            return Err(usage());
        }
        let elem = match &args.args[0] {
            syn::GenericArgument::Type(t) => match prim_of_type(t) {
                Some(p) if p.is_element() => p,
                _ => {
                    return Err(Error::new_spanned(
                        t,
                        format!("shared array elements must be one of {ELEMENT_TYPES}"),
                    ))
                }
            },
            _ => return Err(usage()),
        };
        let len = match &args.args[1] {
            syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) => i.base10_parse::<u64>()?,
            syn::GenericArgument::Const(syn::Expr::Block(b)) if b.block.stmts.len() == 1 => {
                match &b.block.stmts[0] {
                    syn::Stmt::Expr(syn::Expr::Path(p), None) => self.const_len(&p.path)?,
                    syn::Stmt::Expr(
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(i),
                            ..
                        }),
                        None,
                    ) => i.base10_parse::<u64>()?,
                    _ => return Err(usage()),
                }
            }
            syn::GenericArgument::Type(syn::Type::Path(tp)) => self.const_len(&tp.path)?,
            _ => return Err(usage()),
        };
        if len == 0 {
            return Err(Error::new_spanned(
                args,
                "a shared array needs at least one element",
            ));
        }
        Ok(Some((elem, len, e.span())))
    }

    fn const_len(&self, path: &syn::Path) -> Result<u64> {
        let name = path
            .get_ident()
            .map(|i| i.to_string())
            .ok_or_else(|| Error::new_spanned(path, "expected a const name"))?;
        match self.lookup(&name).and_then(|v| self.consts.get(&v)) {
            Some(v) => Ok(*v as u64),
            None => Err(Error::new_spanned(path,
                format!("`{name}` is not a `const` declared in this kernel with an integer literal value (the macro cannot see constants declared outside the kernel)"),
            )),
        }
    }

    fn shared_let(
        &mut self,
        pat: &syn::Pat,
        annot: Option<Prim>,
        (elem, len, span): (Prim, u64, Span),
        let_span: Span,
    ) -> Result<Stmt> {
        if annot.is_some() {
            return Err(Error::new(
                let_span,
                "write `let tile = shared_array::<T, N>();` without a type annotation",
            ));
        }
        let syn::Pat::Ident(pi) = pat else {
            return Err(Error::new_spanned(
                pat,
                "bind a shared array to a name: `let tile = shared_array::<f32, 256>();`",
            ));
        };
        let bytes = (len as usize).saturating_mul(elem_size(elem));
        let offset = self.shared_bytes;
        let end = offset.saturating_add(bytes);
        if end > MAX_SHARED_BYTES {
            return Err(Error::new(
                span,
                format!("shared arrays of this kernel need {end} bytes; a block can declare at most {MAX_SHARED_BYTES} bytes (48 KiB)"),
            ));
        }
        self.shared_bytes = end.div_ceil(8) * 8;
        let t = self.tys.known(Ty::Slice {
            elem,
            mutable: true,
        });
        let var = self.declare(&pi.ident, t, false);
        let array_id = self.next_array_id();
        self.shared.push(SharedArray {
            var,
            elem,
            len,
            array_id,
            offset,
        });
        Ok(Stmt::Shared(self.shared.len() - 1))
    }
}
