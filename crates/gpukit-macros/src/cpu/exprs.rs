//! Expressions of the twin: element access (checked or not), operators with the CUDA side's
//! semantics, casts, intrinsics, atomics, `if` chains and suffixed literals.

use super::{prim_ty, rt, Twin};
use crate::ir::ty::Ty;
use crate::ir::*;
use crate::types::Prim;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Error, Result};

impl Twin<'_> {
    /// The local array behind `arr`, if it is one.
    fn local(&self, arr: VarId) -> Option<&LocalArray> {
        match self.f.tys.get(self.f.vars[arr].ty) {
            Ty::Local(k) => Some(&self.f.locals[k]),
            _ => None,
        }
    }

    /// Reports an out-of-bounds index of a local array and ends the thread.
    fn local_oob(la: &LocalArray) -> TokenStream {
        let (id, n) = (la.array_id, la.len as usize);
        quote!({ __t.report_oob(#id, __i, #n, 0); return })
    }

    /// A `*mut T` to an element, ending the thread if the index is out of bounds.
    pub(super) fn element_ptr(&self, arr: VarId, ix: &[Expr]) -> Result<TokenStream> {
        let name = self.ident(arr, Span::call_site());
        let idx = self.index_arg(arr, ix)?;
        if let Some(la) = self.local(arr) {
            let oob = Self::local_oob(la);
            let t = self
                .f
                .tys
                .prim_of(la.elem)
                .map_or_else(|| quote!(_), prim_ty);
            return Ok(if self.checked {
                quote!({ let __i: usize = #idx; match #name.get_mut(__i) { ::core::option::Option::Some(__e) => __e as *mut #t, ::core::option::Option::None => #oob } })
            } else {
                quote!(unsafe { #name.get_unchecked_mut(#idx) as *mut #t })
            });
        }
        Ok(if self.checked {
            quote!(match #name.ptr(#idx, __t) { ::core::option::Option::Some(__p) => __p, ::core::option::Option::None => return })
        } else {
            quote!(unsafe { #name.ptr_unchecked(#idx) })
        })
    }

    fn index_arg(&self, arr: VarId, ix: &[Expr]) -> Result<TokenStream> {
        let parts = ix
            .iter()
            .map(|i| self.expr(i))
            .collect::<Result<Vec<_>>>()?;
        Ok(match self.f.tys.get(self.f.vars[arr].ty) {
            Ty::View { .. } => quote!([#(#parts),*]),
            _ => {
                let p = &parts[0];
                quote!(#p)
            }
        })
    }

    pub(super) fn expr(&self, e: &Expr) -> Result<TokenStream> {
        let rt = rt();
        let sp = e.span;
        Ok(match &e.kind {
            ExprKind::Lit(l) => self.lit(l, e.ty, sp),
            ExprKind::Var(v) => {
                let id = self.ident(*v, sp);
                quote!(#id)
            }
            ExprKind::Const(c) => {
                let t = prim_ty(c.prim);
                if let Some(name) = c.name.strip_prefix("consts::") {
                    let n = format_ident!("{}", name);
                    quote!(::core::#t::consts::#n)
                } else {
                    let n = format_ident!("{}", c.name);
                    quote!(<#t>::#n)
                }
            }
            ExprKind::Paren(x) => {
                let x = self.expr(x)?;
                quote!((#x))
            }
            ExprKind::Unary(op, x) => {
                let xs = self.expr(x)?;
                match (op, self.prim(x.ty)) {
                    (UnOp::Neg, Some(p)) if p.is_int() => quote_spanned!(sp=> (#xs).wrapping_neg()),
                    (UnOp::Neg, _) => quote_spanned!(sp=> (-#xs)),
                    (UnOp::Not, _) => quote_spanned!(sp=> (!#xs)),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (sa, sb) = (self.expr(a)?, self.expr(b)?);
                bin_tokens(*op, self.prim(a.ty), sa, sb, true)
            }
            ExprKind::Cast(x, to) => {
                let xs = self.expr(x)?;
                let t = prim_ty(*to);
                quote_spanned!(sp=> ((#xs) as #t))
            }
            ExprKind::Index(arr, ix) => {
                let name = self.ident(*arr, Span::call_site());
                let idx = self.index_arg(*arr, ix)?;
                if let Some(la) = self.local(*arr) {
                    let oob = Self::local_oob(la);
                    return Ok(if self.checked {
                        quote_spanned!(sp=> ({ let __i: usize = #idx; match #name.get(__i) { ::core::option::Option::Some(__e) => *__e, ::core::option::Option::None => #oob } }))
                    } else {
                        quote_spanned!(sp=> (unsafe { *#name.get_unchecked(#idx) }))
                    });
                }
                if self.checked {
                    quote_spanned!(sp=> (match #name.get(#idx, __t) { ::core::option::Option::Some(__x) => __x, ::core::option::Option::None => return }))
                } else {
                    quote_spanned!(sp=> (unsafe { #name.get_unchecked(#idx) }))
                }
            }
            ExprKind::Len(arr) => {
                let name = self.ident(*arr, sp);
                match self.f.tys.get(self.f.vars[*arr].ty) {
                    Ty::View { ndim, .. } => {
                        let dims = (0..ndim).map(|d| quote!(#name.shape(#d)));
                        quote!((1usize #(* #dims)*))
                    }
                    _ => quote!(#name.len()),
                }
            }
            ExprKind::Shape(arr, d) => {
                let name = self.ident(*arr, sp);
                quote!(#name.shape(#d))
            }
            ExprKind::Method(m, recv, args) => {
                let r = self.expr(recv)?;
                let a = args
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>>>()?;
                let prim = self.prim(recv.ty);
                let is_int = prim.is_some_and(Prim::is_int);
                match m.name {
                    "clamp" => {
                        let (lo, hi) = (&a[0], &a[1]);
                        quote_spanned!(sp=> ({ let (__x, __lo, __hi) = (#r, #lo, #hi); if __x < __lo { __lo } else if __x > __hi { __hi } else { __x } }))
                    }
                    "abs" if is_int => quote_spanned!(sp=> (#r).wrapping_abs()),
                    "pow" if is_int => {
                        let e = &a[0];
                        quote_spanned!(sp=> (#r).wrapping_pow(#e))
                    }
                    name => {
                        let n = syn::Ident::new(name, sp);
                        quote_spanned!(sp=> (#r).#n(#(#a),*))
                    }
                }
            }
            ExprKind::Call(c, args) => {
                let path = &self.f.callees[*c].path;
                let a = args
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>>>()?;
                quote_spanned!(sp=> #path(#(#a),*))
            }
            ExprKind::Intrinsic(i) => match i {
                Intrinsic::Grid(1) | Intrinsic::GridSize(1) => axis_expr(*i, 0),
                Intrinsic::Grid(_) | Intrinsic::GridSize(_) => return Err(Error::new(
                    sp,
                    "grid2()/grid3()/gridsize2()/gridsize3() are used as `let (x, y) = grid2();`",
                )),
                Intrinsic::ThreadIdx => quote!(__t.thread_idx()),
                Intrinsic::BlockIdx => quote!(__t.block_idx()),
                Intrinsic::BlockDim => quote!(__t.block_dim()),
                Intrinsic::GridDim => quote!(__t.grid_dim()),
                Intrinsic::SyncThreads => quote!(__t.sync_threads()),
            },
            ExprKind::Field(x, a) => {
                let xs = self.expr(x)?;
                let n = format_ident!("{}", a.name());
                quote!((#xs).#n)
            }
            ExprKind::Atomic(op, place, args) => {
                let ExprKind::Index(arr, ix) = &place.kind else {
                    return Err(Error::new(place.span, "atomics work on array elements"));
                };
                let ptr = self.element_ptr(*arr, ix)?;
                let a = args
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>>>()?;
                let f = format_ident!("{}", op.name());
                quote_spanned!(sp=> ({ let __p = #ptr; #rt::#f(__p, #(#a),*) }))
            }
            ExprKind::If(..) => {
                let i = self.if_chain(e)?;
                quote!((#i))
            }
            ExprKind::Block(b) => self.block(b)?,
        })
    }

    /// `if c { .. } else if .. { .. } else { .. }` without surrounding parentheses.
    fn if_chain(&self, e: &Expr) -> Result<TokenStream> {
        let ExprKind::If(c, then, els) = &e.kind else {
            return self.expr(e);
        };
        let cs = self.expr(c)?;
        let t = self.block(then)?;
        Ok(match els {
            Some(x) => {
                let xs = match &x.kind {
                    ExprKind::If(..) => self.if_chain(x)?,
                    ExprKind::Block(b) => self.block(b)?,
                    _ => {
                        let inner = self.expr(x)?;
                        quote!({ #inner })
                    }
                };
                quote!(if #cs #t else #xs)
            }
            None => quote!(if #cs #t),
        })
    }

    fn lit(&self, l: &Lit, ty: usize, sp: Span) -> TokenStream {
        let prim = self.prim(ty);
        match l {
            Lit::Bool(b) => quote_spanned!(sp=> #b),
            Lit::Int(v) => {
                let text = match prim {
                    Some(p) if p.is_float() => format!("{v}.0{p}"),
                    Some(p) => format!("{v}{p}"),
                    None => v.to_string(),
                };
                let lit = syn::LitInt::new(&text, sp);
                quote!(#lit)
            }
            Lit::Float(s) => {
                let mut s = s.clone();
                if s.ends_with('.') {
                    s.push('0');
                }
                if !s.contains(['.', 'e', 'E']) {
                    s.push_str(".0");
                }
                if let Some(p) = prim {
                    s.push_str(p.rust());
                }
                let lit = syn::LitFloat::new(&s, sp);
                quote!(#lit)
            }
        }
    }
}

/// `a op b` with the CUDA side's semantics; `prim` is the operands' type when known.
pub(super) fn bin_tokens(
    op: BinOp,
    prim: Option<Prim>,
    a: TokenStream,
    b: TokenStream,
    _paren: bool,
) -> TokenStream {
    let int = prim.filter(|p| p.is_int());
    let Some(t) = int else {
        let sym: TokenStream = op.symbol().parse().expect("operator");
        return quote!((#a #sym #b));
    };
    if op.is_comparison() {
        let sym: TokenStream = op.symbol().parse().expect("operator");
        return quote!((#a #sym #b));
    }
    let ty = prim_ty(t);
    match op {
        BinOp::Add => quote!((#a).wrapping_add(#b)),
        BinOp::Sub => quote!((#a).wrapping_sub(#b)),
        BinOp::Mul => quote!((#a).wrapping_mul(#b)),
        BinOp::Div => {
            quote!({ let (__l, __r): (#ty, #ty) = (#a, #b); if __r == 0 { 0 } else { __l.wrapping_div(__r) } })
        }
        BinOp::Rem => {
            quote!({ let (__l, __r): (#ty, #ty) = (#a, #b); if __r == 0 { 0 } else { __l.wrapping_rem(__r) } })
        }
        BinOp::Shl => quote!((#a).wrapping_shl((#b) as u32)),
        BinOp::Shr => quote!((#a).wrapping_shr((#b) as u32)),
        _ => {
            let sym: TokenStream = op.symbol().parse().expect("operator");
            quote!((#a #sym #b))
        }
    }
}

/// The `axis` component of `grid*()` / `gridsize*()`.
pub(super) fn axis_expr(i: Intrinsic, axis: usize) -> TokenStream {
    let a = format_ident!("{}", ["x", "y", "z"][axis]);
    match i {
        Intrinsic::GridSize(_) => {
            quote!((__t.block_dim().#a as usize * __t.grid_dim().#a as usize))
        }
        _ => {
            quote!((__t.block_idx().#a as usize * __t.block_dim().#a as usize + __t.thread_idx().#a as usize))
        }
    }
}
