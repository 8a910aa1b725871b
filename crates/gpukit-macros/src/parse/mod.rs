//! syn -> IR. Everything outside the kernel language becomes a `syn::Error` at its span that
//! says what is supported, so that no C++ is ever generated for code that would fail later.
//!
//! One [`Parser`] reads a function; its methods are spread over files by the grammar they read:
//! `signature` (signatures, parameter types), `stmts` (blocks, statements, loops, assignments),
//! `bindings` (`let`: scalars, tuples, local and shared arrays), `exprs` (operators, literals,
//! paths, indexing, `if`), `calls` (methods, intrinsics, atomics, `#[device]` calls) and
//! `matching` (`match`). This file holds the entry points and the parser's state.

mod bindings;
mod calls;
mod exprs;
mod matching;
mod signature;
mod stmts;
#[cfg(test)]
mod tests;

use crate::ir::ty::{Ty, Tys};
use crate::ir::*;
use crate::names::Namer;
use crate::types::{Prim, ELEMENT_TYPES};
use proc_macro2::Span;
use signature::{kernel_param_ty, prim_of_type};
use std::collections::HashMap;
use syn::{Error, Result};

/// What a body may use besides plain arithmetic.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Kernel,
    Device,
    Vectorize,
}

/// Parses a `#[kernel]` function.
pub fn kernel(item: &syn::ItemFn, checked: bool) -> Result<Func> {
    let mut p = Parser::new(Mode::Kernel);
    p.signature_common(&item.sig, "kernel")?;
    let name = item.sig.ident.to_string();
    if name.starts_with("r#") {
        return Err(Error::new_spanned(
            &item.sig.ident,
            "a kernel keeps its name in CUDA C++: raw identifiers cannot name kernels",
        ));
    }
    if crate::names::is_reserved(&name) {
        return Err(Error::new_spanned(&item.sig.ident,
            format!("`{name}` is a reserved word or built-in in CUDA C++, where the kernel keeps its name: choose another name (e.g. `{name}_kernel`)"),
        ));
    }
    if let syn::ReturnType::Type(_, ty) = &item.sig.output {
        return Err(Error::new_spanned(
            ty,
            "a kernel returns nothing: write results into `&mut [T]` parameters",
        ));
    }
    let mut params = Vec::new();
    let mut arrays = 0;
    for input in &item.sig.inputs {
        let (name, mutable, ty) = p.param_parts(input)?;
        let pty = kernel_param_ty(ty)?;
        let (tyv, array_id) = match pty {
            ParamTy::Slice { elem, mutable } => (p.tys.known(Ty::Slice { elem, mutable }), true),
            ParamTy::View {
                elem,
                ndim,
                mutable,
            } => (
                p.tys.known(Ty::View {
                    elem,
                    ndim,
                    mutable,
                }),
                true,
            ),
            ParamTy::Scalar(s) => (p.tys.prim(s), false),
        };
        let var = p.declare(name, tyv, mutable);
        let array_id = array_id.then(|| {
            arrays += 1;
            arrays - 1
        });
        params.push(Param {
            var,
            ty: pty,
            array_id,
        });
    }
    p.array_count = arrays;
    let body = p.block(&item.block)?;
    if let Some(t) = &body.tail {
        if !matches!(t.kind, ExprKind::If(..) | ExprKind::Block(_)) {
            return Err(Error::new(
                t.span,
                "a kernel returns nothing: end this expression with `;`",
            ));
        }
    }
    Ok(p.finish(
        FuncKind::Kernel { checked },
        item.sig.ident.clone(),
        params,
        body,
    ))
}

/// Parses a `#[device]` function.
pub fn device(item: &syn::ItemFn) -> Result<Func> {
    scalar_fn(item, Mode::Device)
}

/// Parses a `#[vectorize]` function.
pub fn vectorize(item: &syn::ItemFn) -> Result<Func> {
    scalar_fn(item, Mode::Vectorize)
}

fn scalar_fn(item: &syn::ItemFn, mode: Mode) -> Result<Func> {
    let what = if mode == Mode::Device {
        "#[device] function"
    } else {
        "#[vectorize] function"
    };
    let mut p = Parser::new(mode);
    p.signature_common(&item.sig, what)?;
    let ret = match &item.sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some(prim_of_type(ty).ok_or_else(|| {
            Error::new_spanned(
                ty,
                format!("a {what} returns a scalar (bool, integers, f32, f64)"),
            )
        })?),
    };
    let mut params = Vec::new();
    for input in &item.sig.inputs {
        let (name, mutable, ty) = p.param_parts(input)?;
        let prim = prim_of_type(ty).ok_or_else(|| {
            Error::new_spanned(ty,
                format!("a {what} takes scalars (bool, integers, f32, f64); arrays belong to #[kernel] functions"),
            )
        })?;
        if mode == Mode::Vectorize && !prim.is_element() {
            return Err(Error::new_spanned(
                ty,
                format!("#[vectorize] inputs are array element types: {ELEMENT_TYPES}"),
            ));
        }
        let t = p.tys.prim(prim);
        let var = p.declare(name, t, mutable);
        params.push(Param {
            var,
            ty: ParamTy::Scalar(prim),
            array_id: None,
        });
    }
    let kind = match mode {
        Mode::Vectorize => {
            let ret = ret.ok_or_else(|| {
                Error::new_spanned(
                    &item.sig,
                    "a #[vectorize] function returns one value per element: add `-> T`",
                )
            })?;
            if !ret.is_element() {
                return Err(Error::new_spanned(
                    &item.sig.output,
                    format!("#[vectorize] results are array element types: {ELEMENT_TYPES}"),
                ));
            }
            if params.is_empty() || params.len() > 4 {
                return Err(Error::new_spanned(
                    &item.sig.inputs,
                    "a #[vectorize] function takes 1 to 4 inputs",
                ));
            }
            FuncKind::Vectorize { ret }
        }
        _ => FuncKind::Device { ret },
    };
    p.ret = ret;
    let body = p.block(&item.block)?;
    if ret.is_some() && body.tail.is_none() && !ends_in_return(&body) {
        return Err(Error::new(
            body.span,
            "this function must end with the value it returns (an expression without `;`) or a `return`",
        ));
    }
    Ok(p.finish(kind, item.sig.ident.clone(), params, body))
}

fn ends_in_return(b: &Block) -> bool {
    matches!(
        b.stmts.last(),
        Some(Stmt::Return(..)) | Some(Stmt::Loop { .. })
    )
}

/// The state of translating one function: its bindings and scopes, type variables, arrays,
/// callees, and what the body has used so far.
struct Parser {
    mode: Mode,
    vars: Vec<Var>,
    tys: Tys,
    scopes: Vec<HashMap<String, VarId>>,
    names: Namer,
    shared: Vec<SharedArray>,
    shared_bytes: usize,
    locals: Vec<LocalArray>,
    local_elems: u64,
    callees: Vec<Callee>,
    uses_barrier: bool,
    array_count: usize,
    loops: usize,
    consts: HashMap<VarId, u128>,
    ret: Option<Prim>,
}

impl Parser {
    fn new(mode: Mode) -> Parser {
        Parser {
            mode,
            vars: Vec::new(),
            tys: Tys::default(),
            scopes: vec![HashMap::new()],
            names: Namer::default(),
            shared: Vec::new(),
            shared_bytes: 0,
            locals: Vec::new(),
            local_elems: 0,
            callees: Vec::new(),
            uses_barrier: false,
            array_count: 0,
            loops: 0,
            consts: HashMap::new(),
            ret: None,
        }
    }

    fn finish(self, kind: FuncKind, name: syn::Ident, params: Vec<Param>, body: Block) -> Func {
        Func {
            kind,
            name,
            params,
            body,
            vars: self.vars,
            tys: self.tys,
            shared: self.shared,
            locals: self.locals,
            callees: self.callees,
            uses_barrier: self.uses_barrier,
        }
    }

    fn declare(&mut self, name: &syn::Ident, ty: usize, mutable: bool) -> VarId {
        let cuda = self.names.fresh(&name.to_string());
        self.vars.push(Var {
            name: name.clone(),
            cuda,
            ty,
            mutable,
        });
        let id = self.vars.len() - 1;
        let key = name.to_string().trim_start_matches("r#").to_string();
        self.scopes.last_mut().expect("scope").insert(key, id);
        id
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.scopes.push(HashMap::new());
        let r = f(self);
        self.scopes.pop();
        r
    }

    fn mk(&mut self, kind: ExprKind, ty: usize, span: Span) -> Expr {
        Expr { kind, ty, span }
    }
}

fn macro_error(m: &syn::Macro) -> Error {
    Error::new_spanned(m,
        format!(
            "macros (`{}!`) are not supported in kernel code: it is translated to CUDA C++ and macros cannot be translated",
            path_string(&m.path)
        ),
    )
}

fn path_string(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}
