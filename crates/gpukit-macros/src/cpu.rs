//! IR -> the Rust CPU twin: the same body compiled natively, with the semantics the CUDA side
//! has (wrapping integer arithmetic, division by zero gives 0, bounds-checked element access
//! that ends the thread after the runtime records the error).
//!
//! Literals carry explicit suffixes wherever inference fixed their type, so `rustc` checks the
//! types this crate inferred; user identifiers keep their spans so errors point at user code.

use crate::ir::ty::Ty;
use crate::ir::*;
use crate::types::Prim;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Error, Result};

/// The private path of the runtime.
fn rt() -> TokenStream {
    quote!(::gpukit::__private)
}

/// The body of `fn(__b: &BlockCtx, __a: &CpuArgs)` for a kernel.
pub fn kernel_body(f: &Func) -> Result<TokenStream> {
    let rt = rt();
    let g = Twin::new(f);
    let mut setup = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let name = g.ident(p.var, Span::call_site());
        let t = match p.ty {
            ParamTy::Slice { elem, mutable } => {
                let e = prim_ty(elem);
                if mutable {
                    quote!(__a.slice_mut::<#e>(#i))
                } else {
                    quote!(__a.slice::<#e>(#i))
                }
            }
            ParamTy::View {
                elem,
                ndim,
                mutable,
            } => {
                let e = prim_ty(elem);
                if mutable {
                    quote!(__a.view_mut::<#e, #ndim>(#i))
                } else {
                    quote!(__a.view::<#e, #ndim>(#i))
                }
            }
            ParamTy::Scalar(s) => {
                let carrier = prim_ty(s.carrier());
                let st = prim_ty(s);
                if s.carrier() == s {
                    quote!(__a.scalar::<#carrier>(#i))
                } else {
                    quote!(__a.scalar::<#carrier>(#i) as #st)
                }
            }
        };
        let m = f.vars[p.var].mutable.then(|| quote!(mut));
        setup.push(quote!(let #m #name = #t;));
    }
    let body = g.block_stmts(&f.body)?;
    let runner = if f.uses_barrier {
        quote!(run_cooperative)
    } else {
        quote!(for_each_thread)
    };
    Ok(quote! {
        #(#setup)*
        __b.#runner(move |__t: &#rt::ThreadCtx| { #body });
    })
}

/// The body block of a `#[device]` or `#[vectorize]` function.
pub fn scalar_body(f: &Func) -> Result<TokenStream> {
    let g = Twin::new(f);
    g.block(&f.body)
}

/// The Rust type of a primitive.
pub fn prim_ty(p: Prim) -> TokenStream {
    let id = format_ident!("{}", p.rust());
    quote!(#id)
}

struct Twin<'a> {
    f: &'a Func,
    checked: bool,
}

impl<'a> Twin<'a> {
    fn new(f: &'a Func) -> Twin<'a> {
        Twin {
            f,
            checked: !matches!(f.kind, FuncKind::Kernel { checked: false }),
        }
    }

    fn ident(&self, v: VarId, span: Span) -> syn::Ident {
        let mut id = self.f.vars[v].name.clone();
        id.set_span(span);
        id
    }

    fn prim(&self, t: usize) -> Option<Prim> {
        self.f.tys.prim_of(t)
    }

    fn block(&self, b: &Block) -> Result<TokenStream> {
        let inner = self.block_stmts(b)?;
        Ok(quote!({ #inner }))
    }

    fn block_stmts(&self, b: &Block) -> Result<TokenStream> {
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
                    quote!({
                        let __range = (#a)..(#b);
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
    fn element_ptr(&self, arr: VarId, ix: &[Expr]) -> Result<TokenStream> {
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

    fn expr(&self, e: &Expr) -> Result<TokenStream> {
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
fn bin_tokens(
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
fn axis_expr(i: Intrinsic, axis: usize) -> TokenStream {
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

#[cfg(test)]
mod tests {
    use crate::testing::kernel_ir;

    fn twin(src: &str, checked: bool) -> String {
        super::kernel_body(&kernel_ir(src, checked).expect("translates"))
            .expect("generates")
            .to_string()
    }

    #[test]
    fn parameters_threads_and_checked_access() {
        let t = twin("fn k(a: &[i32], b: &mut View2<f32>, n: usize) { let i = grid(1); b[[i, 0]] = (a[i] + 1) as f32; }", true);
        for e in [
            "let a = __a . slice :: < i32 > (0usize) ;",
            "let b = __a . view_mut :: < f32 , 2usize > (1usize) ;",
            "let n = __a . scalar :: < u64 > (2usize) as usize ;",
            "__b . for_each_thread (move | __t : & :: gpukit :: __private :: ThreadCtx |",
            "a . get (i , __t)",
            "None => return",
            "b . ptr ([i , 0usize] , __t)",
            ". wrapping_add (1i32)",
        ] {
            assert!(t.contains(e), "missing `{e}` in {t}");
        }
    }

    #[test]
    fn barriers_run_cooperatively_and_unchecked_skips_checks() {
        let t = twin("fn k(a: &mut [f32]) { let s = shared_array::<f32, 8>(); s[0] = a[0]; sync_threads(); a[0] = s[1]; }", false);
        for e in [
            "run_cooperative",
            "__t . shared :: < f32 > (0usize , 8usize , 1usize)",
            "get_unchecked",
            "ptr_unchecked",
            "__t . sync_threads ()",
        ] {
            assert!(t.contains(e), "missing `{e}` in {t}");
        }
    }

    #[test]
    fn division_by_zero_and_literal_suffixes() {
        let t = twin(
            "fn k(a: &mut [u8]) { let x = 0.5; a[0] = a[1] / a[2]; let y: f32 = x; }",
            true,
        );
        assert!(
            t.contains("if __r == 0 { 0 } else { __l . wrapping_div (__r) }"),
            "{t}"
        );
        assert!(t.contains("let x : f32 = 0.5f32 ;"), "{t}");
    }
}
