//! Statements of the twin: blocks, `let` (scalars, grid axes, local and shared arrays),
//! assignments through checked element pointers, loops and `return`.

use super::exprs::{axis_expr, bin_tokens};
use super::{prim_ty, rt, Twin};
use crate::ir::ty::Ty;
use crate::ir::*;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Error, Result};

impl Twin<'_> {
    pub(super) fn block(&self, b: &Block) -> Result<TokenStream> {
        let inner = self.block_stmts(b)?;
        Ok(quote!({ #inner }))
    }

    pub(super) fn block_stmts(&self, b: &Block) -> Result<TokenStream> {
        let mut out = TokenStream::new();
        for s in &b.stmts {
            out.extend(self.stmt(s)?);
        }
        if let Some(t) = &b.tail {
            out.extend(self.expr(t)?);
        }
        Ok(out)
    }

    fn annot(&self, v: VarId) -> TokenStream {
        match self.f.tys.get(self.f.vars[v].ty) {
            Ty::Prim(p) => {
                let t = prim_ty(p);
                quote!(: #t)
            }
            _ => TokenStream::new(),
        }
    }

    fn stmt(&self, s: &Stmt) -> Result<TokenStream> {
        let rt = rt();
        Ok(match s {
            Stmt::Let { pat, init, .. } => match pat {
                LetPat::One(v) => {
                    let name = self.ident(*v, self.f.vars[*v].name.span());
                    let m = self.f.vars[*v].mutable.then(|| quote!(mut));
                    let ann = self.annot(*v);
                    match init {
                        Some(e) => {
                            let e = self.expr(e)?;
                            quote!(let #m #name #ann = #e;)
                        }
                        None => quote!(let #m #name #ann;),
                    }
                }
                LetPat::Tuple(vs) => {
                    let Some(Expr {
                        kind: ExprKind::Intrinsic(intr),
                        ..
                    }) = init
                    else {
                        return Err(Error::new(
                            Span::call_site(),
                            "tuple patterns are supported only as `let (x, y) = grid2();`",
                        ));
                    };
                    let names: Vec<_> = vs
                        .iter()
                        .map(|v| {
                            let m = self.f.vars[*v].mutable.then(|| quote!(mut));
                            let n = self.ident(*v, self.f.vars[*v].name.span());
                            quote!(#m #n)
                        })
                        .collect();
                    let vals: Vec<_> = (0..vs.len()).map(|a| axis_expr(*intr, a)).collect();
                    let tys = vals.iter().map(|_| quote!(usize));
                    quote!(let (#(#names),*): (#(#tys),*) = (#(#vals),*);)
                }
            },
            Stmt::Const { var, value } => {
                let name = self.ident(*var, self.f.vars[*var].name.span());
                let ann = self.annot(*var);
                let e = self.expr(value)?;
                quote!(let #name #ann = #e;)
            }
            Stmt::Shared(i) => {
                let sh = &self.f.shared[*i];
                let name = self.ident(sh.var, self.f.vars[sh.var].name.span());
                let e = prim_ty(sh.elem);
                let (off, len, id) = (sh.offset, sh.len as usize, sh.array_id);
                quote!(let #name: #rt::SliceMut<#e> = __t.shared::<#e>(#off, #len, #id);)
            }
            Stmt::LocalArray(k) => {
                let la = &self.f.locals[*k];
                let var = &self.f.vars[la.var];
                let name = self.ident(la.var, var.name.span());
                let m = var.mutable.then(|| quote!(mut));
                let n = la.len as usize;
                let elem = self.f.tys.prim_of(la.elem).map(prim_ty);
                let value = match &la.init {
                    ArrayInit::Repeat(v) => {
                        let v = self.expr(v)?;
                        quote!([#v; #n])
                    }
                    ArrayInit::List(vs) => {
                        let vs = vs
                            .iter()
                            .map(|v| self.expr(v))
                            .collect::<Result<Vec<_>>>()?;
                        quote!([#(#vs),*])
                    }
                };
                match elem {
                    Some(t) => quote!(let #m #name: [#t; #n] = #value;),
                    None => quote!(let #m #name = #value;),
                }
            }
            Stmt::Expr(e) => {
                let e = self.expr(e)?;
                quote!(#e;)
            }
            Stmt::Seq(ss) => {
                let mut out = TokenStream::new();
                for s in ss {
                    out.extend(self.stmt(s)?);
                }
                out
            }
            Stmt::Assign {
                place, op, value, ..
            } => self.assign(place, *op, value)?,
            Stmt::While { cond, body } => {
                let c = self.expr(cond)?;
                let b = self.block(body)?;
                quote!(while #c #b)
            }
            Stmt::Loop { body } => {
                let b = self.block(body)?;
                quote!(loop #b)
            }
            Stmt::For { var, range, body } => {
                let name = self.ident(*var, self.f.vars[*var].name.span());
                let m = self.f.vars[*var].mutable.then(|| quote!(mut));
                let a = self.expr(&range.start)?;
                let b = self.expr(&range.end)?;
                let blk = self.block(body)?;
                if let Some(step) = &range.step {
                    let s = self.expr(step)?;
                    let range = if range.inclusive {
                        quote!((#a)..=(#b))
                    } else {
                        quote!((#a)..(#b))
                    };
                    quote!({
                        let __range = #range;
                        let __step: usize = #s;
                        if __step != 0 {
                            for #m #name in __range.step_by(__step) #blk
                        }
                    })
                } else if range.rev {
                    quote!(for #m #name in ((#a)..(#b)).rev() #blk)
                } else if range.inclusive {
                    quote!(for #m #name in (#a)..=(#b) #blk)
                } else {
                    quote!(for #m #name in (#a)..(#b) #blk)
                }
            }
            Stmt::Break => quote!(break;),
            Stmt::Continue => quote!(continue;),
            Stmt::Return(None, _) => quote!(return;),
            Stmt::Return(Some(e), _) => {
                let e = self.expr(e)?;
                quote!(return #e;)
            }
        })
    }

    fn assign(&self, place: &Expr, op: Option<BinOp>, value: &Expr) -> Result<TokenStream> {
        let v = self.expr(value)?;
        let prim = self.prim(place.ty);
        match &place.kind {
            ExprKind::Var(var) => {
                let name = self.ident(*var, place.span);
                Ok(match op {
                    None => quote!(#name = #v;),
                    Some(op) => {
                        let e = bin_tokens(op, prim, quote!(#name), v, false);
                        quote!(#name = #e;)
                    }
                })
            }
            ExprKind::Index(arr, ix) => {
                let ptr = self.element_ptr(*arr, ix)?;
                let store = match op {
                    None => quote!(*__p = __v;),
                    Some(op) => {
                        let e = bin_tokens(op, prim, quote!((*__p)), quote!(__v), false);
                        quote!(*__p = #e;)
                    }
                };
                Ok(quote!({
                    let __v = #v;
                    let __p = #ptr;
                    unsafe { #store }
                }))
            }
            _ => Err(Error::new(
                place.span,
                "only local variables and array elements can be assigned",
            )),
        }
    }
}
