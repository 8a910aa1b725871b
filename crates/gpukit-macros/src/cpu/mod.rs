//! IR -> the Rust CPU twin: the same body compiled natively, with the semantics the CUDA side
//! has (wrapping integer arithmetic, division by zero gives 0, bounds-checked element access
//! that ends the thread after the runtime records the error).
//!
//! Literals carry explicit suffixes wherever inference fixed their type, so `rustc` checks the
//! types this crate inferred; user identifiers keep their spans so errors point at user code.
//!
//! This file emits a kernel's parameter setup and thread loop; one [`Twin`] writes the body, its
//! methods spread by what they emit: `stmts` (statements) and `exprs` (expressions).

mod exprs;
mod stmts;

use crate::ir::*;
use crate::types::Prim;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Result;

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

/// Writes the Rust twin of one function body.
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
