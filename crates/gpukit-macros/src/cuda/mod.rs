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

/// A value fixed for a whole launch, as the runtime reads it from the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchValue {
    /// The element count of array parameter `n`.
    Len(usize),
    /// Axis `d` of view parameter `n`.
    Shape(usize, usize),
    /// The value of `usize` scalar parameter `n`.
    Scalar(usize),
    /// A constant.
    Lit(u128),
}

/// `lhs <= rhs` (`lhs < rhs` when `strict`) on a launch's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwinTest {
    /// The bound known above an index.
    pub lhs: LaunchValue,
    /// `<` instead of `<=`.
    pub strict: bool,
    /// An array's length or axis.
    pub rhs: LaunchValue,
    /// The test in Rust, e.g. `img.shape(0) <= out.shape(0)`.
    pub text: String,
}

/// A checked kernel's unchecked twin: run instead of it when every test holds, which proves
/// every access of the kernel in range (see `proven::launch_tests`).
pub struct Twin {
    /// The twin's entry point.
    pub symbol: String,
    /// Its CUDA C++ translation unit.
    pub source: String,
    /// The tests, all of which must hold.
    pub tests: Vec<TwinTest>,
}

/// What a kernel compiles to: its translation unit and, for a checked kernel whose remaining
/// checks can be decided per launch, an unchecked twin.
pub struct KernelSources {
    /// The kernel as written (checked unless `#[kernel(unchecked)]`).
    pub kernel: String,
    /// The twin, if any.
    pub twin: Option<Twin>,
}

/// The kernel's translation unit and its unchecked twin where one applies.
pub fn kernel_sources(f: &mut Func) -> Result<KernelSources> {
    let checked = matches!(f.kind, FuncKind::Kernel { checked: true });
    let name = f.name.to_string();
    let (kernel, tests) = kernel_source_and_tests(f, &name)?;
    let tests = match tests {
        Some(t) if checked && !t.is_empty() => t,
        _ => return Ok(KernelSources { kernel, twin: None }),
    };
    let symbol = format!("{name}__proven");
    f.kind = FuncKind::Kernel { checked: false };
    let twin_source = kernel_source_and_tests(f, &symbol).map(|(s, _)| s);
    f.kind = FuncKind::Kernel { checked: true };
    let tests: Vec<TwinTest> = tests.iter().map(|t| twin_test(f, t)).collect();
    let texts: Vec<&str> = tests.iter().map(|t| t.text.as_str()).collect();
    let note = format!(
        "// A launch whose arguments have {} runs `{symbol}`, this kernel without checks:\n\
         // every access is then in range. Other launches run it as below.\n",
        texts.join(" && ")
    );
    let head = format!("extern \"C\" __global__ void {name}(");
    let kernel = kernel.replacen(&head, &format!("{note}{head}"), 1);
    Ok(KernelSources {
        kernel,
        twin: Some(Twin {
            symbol,
            source: twin_source?,
            tests,
        }),
    })
}

/// A launch test in the runtime's terms.
fn twin_test(f: &Func, t: &proven::LaunchTest) -> TwinTest {
    let param = |v: VarId| {
        f.params
            .iter()
            .position(|p| p.var == v)
            .expect("launch values are parameters")
    };
    let value = |t: &proven::Term| match t {
        proven::Term::Lit(n) => (LaunchValue::Lit(*n), n.to_string()),
        proven::Term::Var(v) => (LaunchValue::Scalar(param(*v)), f.vars[*v].name.to_string()),
        proven::Term::Len(a) => (
            LaunchValue::Len(param(*a)),
            format!("{}.len()", f.vars[*a].name),
        ),
        proven::Term::Shape(a, d) => (
            LaunchValue::Shape(param(*a), *d),
            format!("{}.shape({d})", f.vars[*a].name),
        ),
    };
    let (lhs, l) = value(&t.lhs);
    let (rhs, r) = value(&t.rhs);
    let op = if t.strict { "<" } else { "<=" };
    TwinTest {
        lhs,
        strict: t.strict,
        rhs,
        text: format!("{l} {op} {r}"),
    }
}

/// The CUDA C++ translation unit of a kernel: prelude, device-helper marker, kernel (without
/// the twin's note; what `kernel_sources` gives for `#[kernel(unchecked)]`).
#[cfg(test)]
pub fn kernel_source(f: &Func) -> Result<String> {
    kernel_source_and_tests(f, &f.name.to_string()).map(|(s, _)| s)
}

/// The translation unit with entry point `symbol`, and the launch tests that would decide
/// every check it kept (`None`: some check cannot be decided per launch).
#[allow(clippy::type_complexity)]
fn kernel_source_and_tests(
    f: &Func,
    symbol: &str,
) -> Result<(String, Option<Vec<proven::LaunchTest>>)> {
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
        "extern \"C\" __global__ void {symbol}({}) {{",
        params.join(", ")
    ));
    g.indent += 1;
    for v in views {
        g.line(&v);
    }
    g.block_stmts(&f.body)?;
    g.indent -= 1;
    g.line("}");
    let tests = g.launch_tests.take();
    Ok((
        format!("{}{DEVICE_FNS_MARKER}\n\n{}", prelude_for(&g.out), g.out),
        tests,
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
    /// What the checked accesses so far need to be decided per launch (`None`: some cannot be).
    launch_tests: std::cell::RefCell<Option<Vec<proven::LaunchTest>>>,
}

impl<'a> Gen<'a> {
    fn new(f: &'a Func) -> Gen<'a> {
        Gen {
            f,
            out: String::new(),
            indent: 0,
            facts: proven::Facts::new(f),
            launch_tests: std::cell::RefCell::new(Some(Vec::new())),
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
