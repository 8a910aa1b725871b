//! Signatures: what a `#[kernel]`, `#[device]` or `#[vectorize]` function may declare,
//! its parameters and their types, and the primitive a type names.

use super::Parser;
use crate::ir::*;
use crate::types::{Prim, ELEMENT_TYPES};
use syn::{Error, Result};

impl Parser {
    pub(super) fn signature_common(&self, sig: &syn::Signature, what: &str) -> Result<()> {
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            return Err(Error::new_spanned(
                &sig.generics,
                format!("a {what} cannot be generic: write one per element type"),
            ));
        }
        if let Some(a) = &sig.asyncness {
            return Err(Error::new(a.span, format!("a {what} cannot be async")));
        }
        if let Some(c) = &sig.constness {
            return Err(Error::new(c.span, format!("a {what} cannot be const")));
        }
        if let Some(v) = &sig.variadic {
            return Err(Error::new_spanned(
                v,
                "variadic functions are not supported",
            ));
        }
        if let Some(abi) = &sig.abi {
            return Err(Error::new_spanned(
                abi,
                format!("a {what} cannot declare an ABI"),
            ));
        }
        Ok(())
    }

    pub(super) fn param_parts<'a>(
        &self,
        input: &'a syn::FnArg,
    ) -> Result<(&'a syn::Ident, bool, &'a syn::Type)> {
        match input {
            syn::FnArg::Receiver(r) => Err(Error::new_spanned(
                r,
                "kernel functions are free functions: no `self`",
            )),
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    Ok((&pi.ident, pi.mutability.is_some(), &pt.ty))
                }
                other => Err(Error::new_spanned(
                    other,
                    "parameters are plain names (`x: f32`), not patterns",
                )),
            },
        }
    }
}

/// The primitive a type path names (`f32`, `usize`, ...).
pub(super) fn prim_of_type(ty: &syn::Type) -> Option<Prim> {
    match ty {
        syn::Type::Path(tp) if tp.qself.is_none() => {
            let id = tp.path.get_ident()?;
            Prim::from_rust(&id.to_string())
        }
        syn::Type::Paren(p) => prim_of_type(&p.elem),
        syn::Type::Group(g) => prim_of_type(&g.elem),
        _ => None,
    }
}

pub(super) fn kernel_param_ty(ty: &syn::Type) -> Result<ParamTy> {
    let unsupported = || {
        Error::new_spanned(ty,
            "unsupported parameter type: kernels take `&[T]`, `&mut [T]`, `&View2<T>`, `&View3<T>` (or `&mut`), and scalars (bool, integers, f32, f64)",
        )
    };
    let element = |t: &syn::Type| -> Result<Prim> {
        match prim_of_type(t) {
            Some(p) if p.is_element() => Ok(p),
            _ => Err(Error::new_spanned(
                t,
                format!("array elements must be one of {ELEMENT_TYPES}"),
            )),
        }
    };
    match ty {
        syn::Type::Reference(r) => {
            if r.lifetime.is_some() {
                return Err(Error::new_spanned(&r.lifetime,
                    "kernel parameters take no lifetimes",
                ));
            }
            let mutable = r.mutability.is_some();
            match &*r.elem {
                syn::Type::Slice(s) => Ok(ParamTy::Slice {
                    elem: element(&s.elem)?,
                    mutable,
                }),
                syn::Type::Path(tp) if tp.qself.is_none() => {
                    let seg = tp.path.segments.last().ok_or_else(unsupported)?;
                    let ndim = match seg.ident.to_string().as_str() {
                        "View2" => 2,
                        "View3" => 3,
                        _ => return Err(unsupported()),
                    };
                    let arg = match &seg.arguments {
                        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => {
                            match &a.args[0] {
                                syn::GenericArgument::Type(t) => t,
                                _ => return Err(unsupported()),
                            }
                        }
                        _ => {
                            return Err(Error::new_spanned(seg,
                                format!("write the element type: `View{ndim}<f32>`"),
                            ))
                        }
                    };
                    Ok(ParamTy::View {
                        elem: element(arg)?,
                        ndim,
                        mutable,
                    })
                }
                _ => Err(unsupported()),
            }
        }
        _ => match prim_of_type(ty) {
            Some(p) if p.dtype().is_some() => Ok(ParamTy::Scalar(p)),
            Some(p) => Err(Error::new_spanned(ty,
                format!("scalar parameters of type `{p}` are not supported: use i32, i64, u32, u64, usize, isize, u8, f32, f64 or bool"),
            )),
            None => Err(unsupported()),
        },
    }
}
