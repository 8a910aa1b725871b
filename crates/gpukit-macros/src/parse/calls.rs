//! Calls: array methods (`len`, `shape`), math methods, `f32::sqrt(x)`-style calls, thread
//! and grid intrinsics, atomics, and calls of `#[device]` functions.

use super::{path_string, Mode, Parser};
use crate::ir::ty::Ty;
use crate::ir::*;
use crate::methods;
use crate::types::Prim;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Error, Result};

/// The intrinsics, for error messages.
const INTRINSICS: &str = "grid(1), grid2(), grid3(), gridsize(1), gridsize2(), gridsize3(), thread_idx(), block_idx(), block_dim(), grid_dim(), sync_threads(), shared_array::<T, N>(), atomic_add, atomic_sub, atomic_max, atomic_min, atomic_exch and atomic_cas";

/// Names learners reach for (from CUDA C++ and Numba) that are not intrinsics here.
const UNSUPPORTED_INTRINSICS: &[&str] = &[
    "syncthreads",
    "__syncthreads",
    "syncwarp",
    "sync_warp",
    "__syncwarp",
    "threadfence",
    "thread_fence",
    "__threadfence",
    "shfl_sync",
    "shfl_down_sync",
    "shfl_up_sync",
    "shfl_xor_sync",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_inc",
    "atomic_dec",
    "atomicAdd",
    "lane_id",
    "warp_size",
    "local_array",
    "const_array",
    "thread_id",
    "block_id",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "printf",
    "laneid",
];

impl Parser {
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall) -> Result<Expr> {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            return Err(Error::new_spanned(
                &m.turbofish,
                "method type arguments are not supported in kernel code",
            ));
        }
        // Array methods.
        if name == "len" || name == "shape" {
            let arr = match &*m.receiver {
                syn::Expr::Path(p) => p
                    .path
                    .get_ident()
                    .and_then(|id| self.lookup(&id.to_string())),
                _ => None,
            };
            if let Some(v) = arr {
                let vty = self.tys.get(self.vars[v].ty);
                let t = self.tys.prim(Prim::Usize);
                match (name.as_str(), vty) {
                    ("len", Ty::Slice { .. } | Ty::View { .. } | Ty::Local(_))
                        if m.args.is_empty() =>
                    {
                        return Ok(self.mk(ExprKind::Len(v), t, span))
                    }
                    ("shape", Ty::View { ndim, .. }) if m.args.len() == 1 => {
                        let d = match &m.args[0] {
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Int(i),
                                ..
                            }) => i.base10_parse::<usize>()?,
                            other => {
                                return Err(Error::new_spanned(
                                    other,
                                    "the axis of `shape(d)` must be an integer literal",
                                ))
                            }
                        };
                        if d >= ndim {
                            return Err(Error::new_spanned(
                                &m.args,
                                format!(
                                    "`{}` has {ndim} axes (0..{ndim}); there is no axis {d}",
                                    self.vars[v].name
                                ),
                            ));
                        }
                        return Ok(self.mk(ExprKind::Shape(v, d), t, span));
                    }
                    ("shape", Ty::Slice { .. }) => {
                        return Err(Error::new_spanned(
                            &m.method,
                            "slices have `len()`; `shape(d)` is for views",
                        ))
                    }
                    _ => {}
                }
            }
        }
        if matches!(
            name.as_str(),
            "iter"
                | "iter_mut"
                | "into_iter"
                | "enumerate"
                | "zip"
                | "map"
                | "sum"
                | "collect"
                | "fold"
        ) {
            return Err(Error::new_spanned(&m.method,
                format!("`.{name}()` is not supported: kernel code uses index loops (`for i in 0..a.len()`)"),
            ));
        }
        let Some(meth) = methods::lookup(&name) else {
            return Err(Error::new_spanned(&m.method,
                format!("unsupported method `{name}`: kernel code supports `len()`, `shape(d)` and the math methods {}", methods::names()),
            ));
        };
        let recv = self.expr(&m.receiver)?;
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect::<Result<_>>()?;
        self.method_expr(meth, recv, args, span, m.method.span())
    }

    fn method_expr(
        &mut self,
        meth: methods::Method,
        recv: Expr,
        args: Vec<Expr>,
        span: Span,
        name_span: Span,
    ) -> Result<Expr> {
        if args.len() != meth.args.len() {
            return Err(Error::new(
                name_span,
                format!("`{}` takes {} argument(s)", meth.name, meth.args.len()),
            ));
        }
        let t = self.tys.any();
        Ok(self.mk(ExprKind::Method(meth, Box::new(recv), args), t, span))
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Result<Expr> {
        let span = c.span();
        let syn::Expr::Path(p) = &*c.func else {
            return Err(Error::new_spanned(
                &c.func,
                "only named functions can be called in kernel code",
            ));
        };
        if p.qself.is_some() {
            return Err(Error::new_spanned(
                c,
                "qualified paths are not supported in kernel code",
            ));
        }
        let segs = &p.path.segments;
        let last = segs.last().expect("path has a segment");
        let name = last.ident.to_string();
        // `f32::sqrt(x)`: a method called as a function.
        if segs.len() == 2 {
            if let Some(prim) = Prim::from_rust(&segs[0].ident.to_string()) {
                let Some(meth) = methods::lookup(&name) else {
                    return Err(Error::new_spanned(last,
                        format!("unsupported function `{prim}::{name}`: kernel code supports the math methods {}", methods::names()),
                    ));
                };
                let mut args = c.args.iter();
                let Some(first) = args.next() else {
                    return Err(Error::new_spanned(
                        c,
                        format!("`{prim}::{name}` needs a receiver argument"),
                    ));
                };
                let recv = self.expr(first)?;
                let pt = self.tys.prim(prim);
                self.tys.unify(recv.ty, pt, recv.span)?;
                let rest: Vec<Expr> = args.map(|a| self.expr(a)).collect::<Result<_>>()?;
                return self.method_expr(meth, recv, rest, span, last.span());
            }
        }
        if segs.len() == 1 && last.arguments.is_none() {
            if let Some(e) = self.intrinsic(&name, c)? {
                return Ok(e);
            }
        }
        if segs.len() == 1 && UNSUPPORTED_INTRINSICS.contains(&name.as_str()) {
            return Err(Error::new_spanned(
                c,
                format!("`{name}` is not an intrinsic of the kernel language; it has {INTRINSICS}"),
            ));
        }
        if name == "shared_array" {
            return Err(Error::new_spanned(c, "`shared_array::<T, N>()` must be bound with `let`: `let tile = shared_array::<f32, 256>();`"));
        }
        let type_like = segs.iter().any(|s| {
            s.ident
                .to_string()
                .chars()
                .next()
                .is_some_and(|ch| ch.is_uppercase())
        }) || !last.arguments.is_none();
        if type_like {
            return Err(Error::new_spanned(
                c,
                format!("`{}` is not supported in kernel code: there is no heap, String, Vec or Box on the GPU; kernels call #[device] functions, math methods and intrinsics", path_string(&p.path)),
            ));
        }
        if self.mode == Mode::Vectorize {
            return Err(Error::new_spanned(
                c,
                "a #[vectorize] function cannot call other functions: write the computation inline, or use a #[kernel] with #[device] helpers",
            ));
        }
        if self.lookup(&name).is_some() && segs.len() == 1 {
            return Err(Error::new_spanned(
                c,
                format!("`{name}` is a variable, not a function"),
            ));
        }
        let cuda = format!("gk_dev_{name}");
        let idx = match self.callees.iter().position(|k| k.path == p.path) {
            Some(i) => i,
            None => {
                self.callees.push(Callee {
                    path: p.path.clone(),
                    cuda,
                });
                self.callees.len() - 1
            }
        };
        let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect::<Result<_>>()?;
        let t = self.tys.any();
        Ok(self.mk(ExprKind::Call(idx, args), t, span))
    }

    fn intrinsic(&mut self, name: &str, c: &syn::ExprCall) -> Result<Option<Expr>> {
        let span = c.span();
        let known = [
            "grid",
            "grid2",
            "grid3",
            "gridsize",
            "gridsize2",
            "gridsize3",
            "thread_idx",
            "block_idx",
            "block_dim",
            "grid_dim",
            "sync_threads",
            "atomic_add",
            "atomic_sub",
            "atomic_max",
            "atomic_min",
            "atomic_exch",
            "atomic_cas",
        ];
        if !known.contains(&name) {
            return Ok(None);
        }
        if self.mode != Mode::Kernel {
            return Err(Error::new_spanned(
                c,
                format!("`{name}()` is only available in #[kernel] functions: pass what a helper needs as arguments"),
            ));
        }
        let nargs = |n: usize| -> Result<()> {
            if c.args.len() == n {
                Ok(())
            } else {
                Err(Error::new_spanned(
                    c,
                    format!("`{name}` takes {n} argument(s)"),
                ))
            }
        };
        let intr = match name {
            "grid" | "gridsize" => {
                nargs(1)?;
                match &c.args[0] {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "1" => {}
                    other => {
                        return Err(Error::new_spanned(other,
                            format!("`{name}(1)` gives the 1-D position; use `{name}2()` or `{name}3()` for 2-D or 3-D grids"),
                        ))
                    }
                }
                if name == "grid" {
                    Intrinsic::Grid(1)
                } else {
                    Intrinsic::GridSize(1)
                }
            }
            "grid2" | "grid3" | "gridsize2" | "gridsize3" => {
                nargs(0)?;
                let n = if name.ends_with('2') { 2 } else { 3 };
                if name.starts_with("gridsize") {
                    Intrinsic::GridSize(n)
                } else {
                    Intrinsic::Grid(n)
                }
            }
            "thread_idx" => {
                nargs(0)?;
                Intrinsic::ThreadIdx
            }
            "block_idx" => {
                nargs(0)?;
                Intrinsic::BlockIdx
            }
            "block_dim" => {
                nargs(0)?;
                Intrinsic::BlockDim
            }
            "grid_dim" => {
                nargs(0)?;
                Intrinsic::GridDim
            }
            "sync_threads" => {
                nargs(0)?;
                self.uses_barrier = true;
                Intrinsic::SyncThreads
            }
            _ => return self.atomic(name, c).map(Some),
        };
        let t = match intr {
            Intrinsic::Grid(1) | Intrinsic::GridSize(1) => self.tys.prim(Prim::Usize),
            Intrinsic::Grid(n) | Intrinsic::GridSize(n) => self.tys.known(Ty::Tuple(n)),
            Intrinsic::SyncThreads => self.tys.known(Ty::Unit),
            _ => self.tys.known(Ty::Dim3),
        };
        Ok(Some(self.mk(ExprKind::Intrinsic(intr), t, span)))
    }

    fn atomic(&mut self, name: &str, c: &syn::ExprCall) -> Result<Expr> {
        let span = c.span();
        let op = match name {
            "atomic_add" => AtomicOp::Add,
            "atomic_sub" => AtomicOp::Sub,
            "atomic_max" => AtomicOp::Max,
            "atomic_min" => AtomicOp::Min,
            "atomic_exch" => AtomicOp::Exch,
            _ => AtomicOp::Cas,
        };
        let want = if op == AtomicOp::Cas { 3 } else { 2 };
        let usage = if op == AtomicOp::Cas {
            "write `atomic_cas(&mut a[i], expected, new)`"
        } else {
            "write `atomic_...(&mut a[i], value)`"
        };
        if c.args.len() != want {
            return Err(Error::new_spanned(
                c,
                format!("`{name}` takes {want} arguments: {usage}"),
            ));
        }
        let place = match &c.args[0] {
            syn::Expr::Reference(r) if r.mutability.is_some() => match &*r.expr {
                syn::Expr::Index(_) => {
                    let place = self.place(&r.expr)?;
                    if let ExprKind::Index(v, _) = place.kind {
                        if matches!(self.tys.get(self.vars[v].ty), Ty::Local(_)) {
                            return Err(Error::new_spanned(
                                &r.expr,
                                "atomics work on array parameters and shared arrays; a local array belongs to one thread",
                            ));
                        }
                    }
                    place
                }
                other => {
                    return Err(Error::new_spanned(
                        other,
                        format!("atomics work on array elements: {usage}"),
                    ))
                }
            },
            other => {
                return Err(Error::new_spanned(
                    other,
                    format!("the first argument is a mutable array element: {usage}"),
                ))
            }
        };
        let args: Vec<Expr> = c
            .args
            .iter()
            .skip(1)
            .map(|a| self.expr(a))
            .collect::<Result<_>>()?;
        let t = self.tys.any();
        Ok(self.mk(ExprKind::Atomic(op, Box::new(place), args), t, span))
    }
}
