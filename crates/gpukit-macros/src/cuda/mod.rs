//! IR -> CUDA C++ with Rust semantics: integer arithmetic wraps at its width, integer `/` and
//! `%` behave as in Rust (division by zero gives 0 instead of panicking), float -> integer `as`
//! saturates, f32 math stays f32, indexing is bounds checked unless `unchecked`.
//!
//! The helpers live in a prelude (`prelude.cu`, sectioned by `prelude.rs`) so that every
//! translation unit is self-contained.
//!
//! This file emits the parts around a body: a kernel's signature and parameter views, a
//! `#[device]` function, the `#[vectorize]` kernel. One [`Gen`] writes the body; its methods are
//! spread by what they emit: `stmts` (statements) and `exprs` (expressions).

mod exprs;
mod prelude;
mod proven;
mod stmts;
#[cfg(test)]
mod tests;

use crate::ir::ty::{Opaque, Ty};
use crate::ir::*;
use crate::types::Prim;
use prelude::prelude_for;
use syn::{Error, Result};

/// Where `#[device]` helpers go in a kernel's source (see `gpukit::__private::full_source`).
pub const DEVICE_FNS_MARKER: &str = "// @gpukit-device-fns";

/// The CUDA C++ translation unit of a kernel: prelude, device-helper marker, kernel.
pub fn kernel_source(f: &Func) -> Result<String> {
    let checked = matches!(f.kind, FuncKind::Kernel { checked: true });
    let mut g = Gen::new(f);
    let mut params = Vec::new();
    let mut views = Vec::new();
    for p in &f.params {
        let name = &f.vars[p.var].cuda;
        match p.ty {
            ParamTy::Slice { elem, mutable } => {
                let t = elem_ty(elem, mutable);
                params.push(format!("{t}* {name}__ptr"));
                params.push(format!("unsigned long long {name}__len"));
                views.push(if checked {
                    format!(
                        "const __gk_slice<{t}> {name}{{{name}__ptr, {name}__len, {}, __gk_err}};",
                        p.array_id.unwrap_or(0)
                    )
                } else {
                    format!("const __gk_uslice<{t}> {name}{{{name}__ptr, {name}__len}};")
                });
            }
            ParamTy::View {
                elem,
                ndim,
                mutable,
            } => {
                let t = elem_ty(elem, mutable);
                params.push(format!("{t}* {name}__ptr"));
                let dims: Vec<String> = (0..ndim).map(|d| format!("{name}__d{d}")).collect();
                for d in &dims {
                    params.push(format!("unsigned long long {d}"));
                }
                views.push(if checked {
                    format!(
                        "const __gk_view<{t}, {ndim}> {name}{{{name}__ptr, {{{}}}, {}, __gk_err}};",
                        dims.join(", "),
                        p.array_id.unwrap_or(0)
                    )
                } else {
                    format!(
                        "const __gk_uview<{t}, {ndim}> {name}{{{name}__ptr, {{{}}}}};",
                        dims.join(", ")
                    )
                });
            }
            ParamTy::Scalar(s) => params.push(format!("{} {name}", s.cuda())),
        }
    }
    if checked {
        params.push("unsigned long long* __gk_err".to_string());
    }
    g.line(&format!(
        "extern \"C\" __global__ void {}({}) {{",
        f.name,
        params.join(", ")
    ));
    g.indent += 1;
    for v in views {
        g.line(&v);
    }
    g.block_stmts(&f.body)?;
    g.indent -= 1;
    g.line("}");
    Ok(format!(
        "{}{DEVICE_FNS_MARKER}\n\n{}",
        prelude_for(&g.out),
        g.out
    ))
}

/// The declaration and the definition of a `#[device]` function.
pub fn device_fn(f: &Func) -> Result<(String, String)> {
    let ret = match f.kind {
        FuncKind::Device { ret } => ret,
        FuncKind::Vectorize { ret } => Some(ret),
        FuncKind::Kernel { .. } => None,
    };
    let head = format!(
        "__device__ {} gk_dev_{}({})",
        ret.map_or("void", Prim::cuda),
        f.name,
        f.params
            .iter()
            .map(|p| match p.ty {
                ParamTy::Scalar(s) => format!("{} {}", s.cuda(), f.vars[p.var].cuda),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut g = Gen::new(f);
    g.line(&format!("{head} {{"));
    g.indent += 1;
    g.block_stmts_returning(&f.body, ret.is_some())?;
    g.indent -= 1;
    g.line("}");
    Ok((
        format!("{head};"),
        format!("{}{}", prelude_for(&g.out), g.out),
    ))
}

/// The complete translation unit of a `#[vectorize]` function: prelude, the function, and the
/// grid-stride kernel `{name}_vectorized` that applies it with broadcasting of length-1 inputs.
pub fn vectorize_source(f: &Func) -> Result<String> {
    let FuncKind::Vectorize { ret } = f.kind else {
        return Err(Error::new(f.name.span(), "not a #[vectorize] function"));
    };
    let (_, def) = device_fn(f)?;
    let mut params = Vec::new();
    let mut args = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let ParamTy::Scalar(s) = p.ty else { continue };
        params.push(format!("const {}* in{i}", s.cuda()));
        params.push(format!("unsigned long long in{i}_len"));
        args.push(format!("in{i}_len == 1 ? in{i}[0] : in{i}[i]"));
    }
    params.push(format!("{}* out", ret.cuda()));
    params.push("unsigned long long n".to_string());
    Ok(format!(
        "{def}\nextern \"C\" __global__ void {name}_vectorized({params}) {{\n    \
         for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n         \
         i += (unsigned long long)blockDim.x * gridDim.x) {{\n        \
         out[i] = gk_dev_{name}({args});\n    }}\n}}\n",
        name = f.name,
        params = params.join(", "),
        args = args.join(", ")
    ))
}

fn elem_ty(elem: Prim, mutable: bool) -> String {
    if mutable {
        elem.cuda().to_string()
    } else {
        format!("const {}", elem.cuda())
    }
}

/// Writes the C++ of one function, line by line.
struct Gen<'a> {
    f: &'a Func,
    out: String,
    indent: usize,
    /// What is known to be in range at the current line (bounds-check elision).
    facts: proven::Facts<'a>,
}

impl<'a> Gen<'a> {
    fn new(f: &'a Func) -> Gen<'a> {
        Gen {
            f,
            out: String::new(),
            indent: 0,
            facts: proven::Facts::new(f),
        }
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// Whether element accesses are bounds checked (a `#[kernel]` without `unchecked`).
    fn checked(&self) -> bool {
        matches!(self.f.kind, FuncKind::Kernel { checked: true })
    }

    fn prim(&self, t: usize) -> Option<Prim> {
        self.f.tys.prim_of(t)
    }

    /// The C++ spelling of a type.
    fn ty(&self, t: usize, span: proc_macro2::Span) -> Result<String> {
        Ok(match self.f.tys.get(t) {
            Ty::Prim(p) => p.cuda().to_string(),
            Ty::Dim3 => "uint3".to_string(),
            Ty::Opaque(Opaque::Ret(f)) => format!("__gk_ret<decltype(&{f})>"),
            Ty::Opaque(Opaque::Param(f, n)) => format!("__gk_arg<{n}, decltype(&{f})>"),
            other => {
                return Err(Error::new(
                    span,
                    format!(
                        "a value of type `{}` cannot be stored in a variable in kernel code",
                        crate::ir::ty::describe_ty(&other)
                    ),
                ))
            }
        })
    }
}
