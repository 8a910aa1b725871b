//! syn -> IR. Everything outside the kernel language becomes a `syn::Error` at its span that
//! says what is supported, so that no C++ is ever generated for code that would fail later.

use crate::ir::ty::{Ty, Tys};
use crate::ir::*;
use crate::methods;
use crate::names::Namer;
use crate::types::{Prim, ELEMENT_TYPES};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{Error, Result};

/// Elements of all local arrays of one kernel (they live on each thread's stack).
const MAX_LOCAL_ELEMS: u64 = 2048;

/// Static shared memory a CUDA block may declare.
const MAX_SHARED_BYTES: usize = 48 * 1024;

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

/// The primitive a type path names (`f32`, `usize`, ...).
fn prim_of_type(ty: &syn::Type) -> Option<Prim> {
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

fn kernel_param_ty(ty: &syn::Type) -> Result<ParamTy> {
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

    fn signature_common(&self, sig: &syn::Signature, what: &str) -> Result<()> {
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

    fn param_parts<'a>(
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

    fn block(&mut self, b: &syn::Block) -> Result<Block> {
        self.scoped(|p| p.block_inner(b))
    }

    fn block_inner(&mut self, b: &syn::Block) -> Result<Block> {
        let mut stmts = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => stmts.push(self.local(l)?),
                syn::Stmt::Item(item) => stmts.push(self.item(item)?),
                syn::Stmt::Macro(m) => return Err(macro_error(&m.mac)),
                syn::Stmt::Expr(e, semi) => {
                    let last = i + 1 == n;
                    if last && semi.is_none() && !is_statement_expr(e) {
                        tail = Some(Box::new(self.expr(e)?));
                    } else {
                        stmts.push(self.stmt_expr(e)?);
                    }
                }
            }
        }
        Ok(Block {
            stmts,
            tail,
            span: b.span(),
        })
    }

    fn item(&mut self, item: &syn::Item) -> Result<Stmt> {
        match item {
            syn::Item::Const(c) => {
                let prim = prim_of_type(&c.ty).ok_or_else(|| {
                    Error::new_spanned(&c.ty, "constants in kernel code are scalars (bool, integers, f32, f64)")
                })?;
                let value = self.expr(&c.expr)?;
                let lit = match &value.kind {
                    ExprKind::Lit(Lit::Int(v)) => Some(*v),
                    _ => None,
                };
                let t = self.tys.prim(prim);
                let var = self.declare(&c.ident, t, false);
                if let Some(v) = lit {
                    self.consts.insert(var, v);
                }
                Ok(Stmt::Const { var, value })
            }
            syn::Item::Macro(m) => Err(macro_error(&m.mac)),
            other => Err(Error::new_spanned(other,
                "only `const` items can be declared inside kernel code (no fn, struct, use, static, ...)",
            )),
        }
    }

    fn local(&mut self, l: &syn::Local) -> Result<Stmt> {
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

    fn stmt_expr(&mut self, e: &syn::Expr) -> Result<Stmt> {
        match e {
            syn::Expr::Assign(a) => {
                let place = self.place(&a.left)?;
                let value = self.expr(&a.right)?;
                Ok(Stmt::Assign {
                    place,
                    op: None,
                    value,
                    span: a.span(),
                })
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let place = self.place(&b.left)?;
                let value = self.expr(&b.right)?;
                Ok(Stmt::Assign {
                    place,
                    op: compound_op(&b.op),
                    value,
                    span: b.span(),
                })
            }
            syn::Expr::While(w) => {
                no_label(&w.label)?;
                let cond = self.cond(&w.cond)?;
                let body = self.loop_body(&w.body)?;
                Ok(Stmt::While { cond, body })
            }
            syn::Expr::Loop(l) => {
                no_label(&l.label)?;
                let body = self.loop_body(&l.body)?;
                Ok(Stmt::Loop { body })
            }
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    return Err(Error::new_spanned(
                        b,
                        "`break` takes no label or value in kernel code",
                    ));
                }
                if self.loops == 0 {
                    return Err(Error::new_spanned(b, "`break` outside of a loop"));
                }
                Ok(Stmt::Break)
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return Err(Error::new_spanned(
                        c,
                        "`continue` takes no label in kernel code",
                    ));
                }
                if self.loops == 0 {
                    return Err(Error::new_spanned(c, "`continue` outside of a loop"));
                }
                Ok(Stmt::Continue)
            }
            syn::Expr::Return(r) => {
                let value = match &r.expr {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                Ok(Stmt::Return(value, r.span()))
            }
            syn::Expr::Paren(p) => self.stmt_expr(&p.expr),
            other => Ok(Stmt::Expr(self.expr(other)?)),
        }
    }

    fn cond(&mut self, e: &syn::Expr) -> Result<Expr> {
        if let syn::Expr::Let(l) = e {
            return Err(Error::new_spanned(
                l,
                "`if let` / `while let` are not supported: kernel code has no enums or patterns",
            ));
        }
        self.expr(e)
    }

    fn loop_body(&mut self, b: &syn::Block) -> Result<Block> {
        self.loops += 1;
        let r = self.block(b);
        self.loops -= 1;
        r
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Result<Stmt> {
        no_label(&f.label)?;
        let usage = "for loops iterate over integer ranges: `for i in a..b`, `a..=b`, `(a..b).step_by(s)`, `(a..b).rev()`";
        let mut step = None;
        let mut rev = false;
        let mut range_expr = &*f.expr;
        if let syn::Expr::MethodCall(m) = range_expr {
            match m.method.to_string().as_str() {
                "step_by" if m.args.len() == 1 => step = Some(&m.args[0]),
                "rev" if m.args.is_empty() => rev = true,
                _ => return Err(Error::new_spanned(&m.method, usage)),
            }
            range_expr = &m.receiver;
        }
        while let syn::Expr::Paren(p) = range_expr {
            range_expr = &p.expr;
        }
        let syn::Expr::Range(r) = range_expr else {
            return Err(Error::new_spanned(&f.expr, usage));
        };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return Err(Error::new_spanned(
                r,
                "ranges in for loops need a start and an end (`a..b`)",
            ));
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        if rev && inclusive {
            return Err(Error::new_spanned(
                r,
                "`(a..=b).rev()` is not supported: write `(a..b + 1).rev()`",
            ));
        }
        let start = self.expr(start)?;
        let end = self.expr(end)?;
        let step = match step {
            Some(s) => Some(self.expr(s)?),
            None => None,
        };
        let range = Range {
            start,
            end,
            inclusive,
            step,
            rev,
            span: r.span(),
        };
        self.scoped(|p| {
            let (name, mutable) = match &*f.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    (pi.ident.clone(), pi.mutability.is_some())
                }
                syn::Pat::Wild(w) => (syn::Ident::new("_i", w.span()), false),
                other => {
                    return Err(Error::new_spanned(
                        other,
                        "the loop variable is a plain name: `for i in ..`",
                    ))
                }
            };
            let t = p.tys.any();
            let var = p.declare(&name, t, mutable);
            let body = p.loop_body(&f.body)?;
            Ok(Stmt::For { var, range, body })
        })
    }

    /// The left side of an assignment: a mutable local or an array element.
    fn place(&mut self, e: &syn::Expr) -> Result<Expr> {
        match e {
            syn::Expr::Paren(p) => self.place(&p.expr),
            syn::Expr::Path(_) => {
                let x = self.expr(e)?;
                if let ExprKind::Var(v) = x.kind {
                    if matches!(
                        self.tys.get(self.vars[v].ty),
                        Ty::Slice { .. } | Ty::View { .. } | Ty::Local(_)
                    ) {
                        return Err(Error::new_spanned(
                            e,
                            "cannot assign to a whole array: assign its elements (`a[i] = ..`)",
                        ));
                    }
                    return Ok(x);
                }
                Err(Error::new_spanned(
                    e,
                    "only local variables and array elements can be assigned",
                ))
            }
            syn::Expr::Index(ix) => {
                let x = self.index(ix)?;
                if let ExprKind::Index(v, _) = x.kind {
                    if let Ty::Slice { mutable: false, .. } | Ty::View { mutable: false, .. } =
                        self.tys.get(self.vars[v].ty)
                    {
                        return Err(Error::new_spanned(&ix.expr,
                            format!(
                                "cannot write to `{}`: it is a read-only parameter; declare it `&mut`",
                                self.vars[v].name
                            ),
                        ));
                    }
                    if matches!(self.tys.get(self.vars[v].ty), Ty::Local(_))
                        && !self.vars[v].mutable
                    {
                        return Err(Error::new_spanned(
                            &ix.expr,
                            format!(
                                "cannot write to `{}`: declare it `let mut`",
                                self.vars[v].name
                            ),
                        ));
                    }
                }
                Ok(x)
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => Err(Error::new_spanned(
                u,
                "dereferencing is not supported: kernel code has no references",
            )),
            syn::Expr::Field(f) => Err(Error::new_spanned(
                f,
                "fields cannot be assigned in kernel code",
            )),
            other => Err(Error::new_spanned(
                other,
                "only local variables and array elements can be assigned",
            )),
        }
    }

    fn mk(&mut self, kind: ExprKind, ty: usize, span: Span) -> Expr {
        Expr { kind, ty, span }
    }

    fn expr(&mut self, e: &syn::Expr) -> Result<Expr> {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Paren(p) => {
                let x = self.expr(&p.expr)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Paren(Box::new(x)), t, span))
            }
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ => {
                        return Err(Error::new_spanned(u.op,
                            "dereferencing is not supported: kernel code has no references",
                        ))
                    }
                };
                let x = self.expr(&u.expr)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Unary(op, Box::new(x)), t, span))
            }
            syn::Expr::Binary(b) => {
                let Some(op) = bin_op(&b.op) else {
                    return Err(Error::new_spanned(b.op,
                        "assignments are statements in kernel code: write `x += y;` on its own",
                    ));
                };
                let l = self.expr(&b.left)?;
                let r = self.expr(&b.right)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Binary(op, Box::new(l), Box::new(r)), t, span))
            }
            syn::Expr::Cast(c) => {
                let x = self.expr(&c.expr)?;
                let p = prim_of_type(&c.ty).ok_or_else(|| {
                    Error::new_spanned(&c.ty, "`as` converts to a primitive type (bool, integers, f32, f64)")
                })?;
                let t = self.tys.prim(p);
                Ok(self.mk(ExprKind::Cast(Box::new(x), p), t, span))
            }
            syn::Expr::Index(ix) => self.index(ix),
            syn::Expr::MethodCall(m) => self.method(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::Field(f) => {
                let axis = match &f.member {
                    syn::Member::Named(id) if id == "x" => Axis::X,
                    syn::Member::Named(id) if id == "y" => Axis::Y,
                    syn::Member::Named(id) if id == "z" => Axis::Z,
                    _ => {
                        return Err(Error::new_spanned(&f.member,
                            "only `.x`, `.y` and `.z` of thread_idx(), block_idx(), block_dim() and grid_dim() are supported; destructure grid2() with `let (x, y) = grid2();`",
                        ))
                    }
                };
                let x = self.expr(&f.base)?;
                let t = self.tys.prim(Prim::U32);
                Ok(self.mk(ExprKind::Field(Box::new(x), axis), t, span))
            }
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    return Err(Error::new_spanned(e, "labeled blocks are not supported"));
                }
                let blk = self.block(&b.block)?;
                let t = self.tys.any();
                Ok(self.mk(ExprKind::Block(blk), t, span))
            }
            syn::Expr::Unsafe(u) => Err(Error::new(u.unsafe_token.span, "`unsafe` blocks are not needed or supported in kernel code")),
            syn::Expr::Closure(_) => Err(Error::new_spanned(e, "closures are not supported in kernel code: write a #[device] function")),
            syn::Expr::Macro(m) => Err(macro_error(&m.mac)),
            syn::Expr::Reference(_) => Err(Error::new_spanned(
                e,
                "references cannot be taken in kernel code (only `atomic_*(&mut a[i], ..)` takes `&mut a[i]`)",
            )),
            syn::Expr::Struct(_) => Err(Error::new_spanned(e, "struct literals are not supported in kernel code: use scalars and array parameters")),
            syn::Expr::Tuple(_) => Err(Error::new_spanned(e, "tuples are not supported in kernel code (except `let (x, y) = grid2();`)")),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => Err(Error::new_spanned(
                e,
                "array literals are local arrays, written as the whole value of a `let`: `let mut w = [0.0f32; 9];` (per-block memory is `shared_array::<T, N>()`)",
            )),
            syn::Expr::Match(m) => self.match_expr(m),
            syn::Expr::Range(_) => Err(Error::new_spanned(e, "ranges are only supported as the iterator of a `for` loop")),
            syn::Expr::Let(_) => Err(Error::new_spanned(e, "`if let` / `while let` are not supported: kernel code has no enums or patterns")),
            syn::Expr::Try(_) => Err(Error::new_spanned(e, "the `?` operator is not supported in kernel code")),
            syn::Expr::Await(_) | syn::Expr::Async(_) => Err(Error::new_spanned(e, "async is not supported in kernel code")),
            syn::Expr::While(_) | syn::Expr::ForLoop(_) | syn::Expr::Loop(_) => Err(Error::new_spanned(
                e,
                "loops are statements in kernel code; they cannot produce values",
            )),
            syn::Expr::Assign(_) => Err(Error::new_spanned(e, "assignments are statements in kernel code: write `x = y;` on its own")),
            syn::Expr::Break(_) | syn::Expr::Continue(_) | syn::Expr::Return(_) => Err(Error::new_spanned(
                e,
                "`break`, `continue` and `return` are statements in kernel code: end them with `;`",
            )),
            _ => Err(Error::new_spanned(e, "this expression is not supported in kernel code")),
        }
    }

    fn lit(&mut self, l: &syn::Lit) -> Result<Expr> {
        let span = l.span();
        // Negative literals appear in patterns (`-1..=5`): a negation of the positive literal.
        let negated = match l {
            syn::Lit::Int(i) if i.base10_digits().starts_with('-') => Some(syn::Lit::Int(
                syn::LitInt::new(&format!("{}{}", &i.base10_digits()[1..], i.suffix()), span),
            )),
            syn::Lit::Float(f) if f.base10_digits().starts_with('-') => Some(syn::Lit::Float(
                syn::LitFloat::new(&format!("{}{}", &f.base10_digits()[1..], f.suffix()), span),
            )),
            _ => None,
        };
        if let Some(pos) = negated {
            let x = self.lit(&pos)?;
            let t = self.tys.any();
            return Ok(self.mk(ExprKind::Unary(UnOp::Neg, Box::new(x)), t, span));
        }
        match l {
            syn::Lit::Int(i) => {
                let suffix = i.suffix();
                if let Some(p) = Prim::from_rust(suffix).filter(|p| p.is_float()) {
                    let t = self.tys.prim(p);
                    let text = format!("{}.0", i.base10_digits());
                    return Ok(self.mk(ExprKind::Lit(Lit::Float(text)), t, span));
                }
                let v: u128 = i.base10_parse()?;
                if v > u64::MAX as u128 {
                    return Err(Error::new(
                        span,
                        "integer literals in kernel code fit in 64 bits",
                    ));
                }
                let t = match suffix {
                    "" => self.tys.int(),
                    s => match Prim::from_rust(s) {
                        Some(p) if p.is_int() => self.tys.prim(p),
                        _ => {
                            return Err(Error::new_spanned(
                                l,
                                format!("unsupported literal suffix `{s}`"),
                            ))
                        }
                    },
                };
                Ok(self.mk(ExprKind::Lit(Lit::Int(v)), t, span))
            }
            syn::Lit::Float(f) => {
                let t = match f.suffix() {
                    "" => self.tys.float(),
                    "f32" => self.tys.prim(Prim::F32),
                    "f64" => self.tys.prim(Prim::F64),
                    s => {
                        return Err(Error::new_spanned(
                            l,
                            format!("unsupported literal suffix `{s}`"),
                        ))
                    }
                };
                Ok(self.mk(
                    ExprKind::Lit(Lit::Float(f.base10_digits().to_string())),
                    t,
                    span,
                ))
            }
            syn::Lit::Bool(b) => {
                let t = self.tys.prim(Prim::Bool);
                Ok(self.mk(ExprKind::Lit(Lit::Bool(b.value)), t, span))
            }
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => Err(Error::new_spanned(
                l,
                "strings are not supported in kernel code (no String, &str or heap on the GPU)",
            )),
            _ => Err(Error::new_spanned(
                l,
                "only integer, float and bool literals are supported in kernel code",
            )),
        }
    }

    fn path_expr(&mut self, p: &syn::ExprPath) -> Result<Expr> {
        let span = p.span();
        if p.qself.is_some() {
            return Err(Error::new_spanned(
                p,
                "qualified paths are not supported in kernel code",
            ));
        }
        if let Some(id) = p.path.get_ident() {
            let name = id.to_string();
            return match self.lookup(name.trim_start_matches("r#")) {
                Some(v) => {
                    let t = self.vars[v].ty;
                    Ok(self.mk(ExprKind::Var(v), t, span))
                }
                None => Err(Error::new_spanned(p,
                    format!("cannot find `{name}` in this kernel: kernel code uses its parameters, its own `let` and `const` bindings, and constants like `f32::MAX` or `std::f32::consts::PI` (the macro cannot see items declared outside the function)"),
                )),
            };
        }
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let (prim, name) = match segs.as_slice() {
            ["std" | "core", t, "consts", c] | [t, "consts", c] => (Prim::from_rust(t), *c),
            [t, c] | ["std" | "core", t, c] => (Prim::from_rust(t), *c),
            _ => (None, ""),
        };
        let is_consts = segs.contains(&"consts");
        if let Some(prim) = prim {
            if named_const_ok(prim, name, is_consts) {
                let t = self.tys.prim(prim);
                return Ok(self.mk(
                    ExprKind::Const(NamedConst {
                        prim,
                        name: if is_consts {
                            format!("consts::{name}")
                        } else {
                            name.to_string()
                        },
                    }),
                    t,
                    span,
                ));
            }
        }
        Err(Error::new_spanned(p,
            "unsupported path: kernel code knows `MIN`, `MAX` of integer types, `MIN`, `MAX`, `EPSILON`, `INFINITY`, `NEG_INFINITY`, `NAN` of f32/f64, and `std::f32::consts::*` / `std::f64::consts::*`",
        ))
    }

    fn index(&mut self, ix: &syn::ExprIndex) -> Result<Expr> {
        let span = ix.span();
        let base = match &*ix.expr {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| self.lookup(&id.to_string())),
            _ => None,
        };
        let Some(v) = base else {
            return Err(Error::new_spanned(
                &ix.expr,
                "only array parameters, shared arrays and local arrays (by name) can be indexed",
            ));
        };
        let ndim = match self.tys.get(self.vars[v].ty) {
            Ty::Slice { .. } | Ty::Local(_) => 1,
            Ty::View { ndim, .. } => ndim,
            _ => {
                return Err(Error::new_spanned(
                    &ix.expr,
                    format!(
                    "`{}` is not an array: only array parameters, shared arrays and local arrays can be indexed",
                    self.vars[v].name
                ),
                ))
            }
        };
        if let syn::Expr::Range(_) = &*ix.index {
            return Err(Error::new_spanned(
                &ix.index,
                "slicing (`a[i..j]`) is not supported: index elements one at a time",
            ));
        }
        let idx: Vec<Expr> = match (&*ix.index, ndim) {
            (syn::Expr::Array(a), n) if n > 1 => {
                if a.elems.len() != n {
                    return Err(Error::new_spanned(
                        &ix.index,
                        format!(
                            "`{}` has {n} axes: index it with {n} indices (`[[{}]]`)",
                            self.vars[v].name,
                            ["i", "j", "k"][..n].join(", ")
                        ),
                    ));
                }
                a.elems
                    .iter()
                    .map(|e| self.expr(e))
                    .collect::<Result<_>>()?
            }
            (_, 1) => vec![self.expr(&ix.index)?],
            (_, n) => {
                return Err(Error::new_spanned(
                    &ix.index,
                    format!(
                        "`{}` has {n} axes: index it as `{}[[{}]]`",
                        self.vars[v].name,
                        self.vars[v].name,
                        ["i", "j", "k"][..n].join(", ")
                    ),
                ))
            }
        };
        let t = self.tys.any();
        Ok(self.mk(ExprKind::Index(v, idx), t, span))
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Result<Expr> {
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

    fn call(&mut self, c: &syn::ExprCall) -> Result<Expr> {
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

    /// `match` on integers and bools becomes an `if` chain on the scrutinee (computed once).
    /// Arms: literals, `a | b`, ranges `a..=b` / `a..b` / `a..`, guards, and a final `_` or
    /// name that catches the rest.
    fn match_expr(&mut self, m: &syn::ExprMatch) -> Result<Expr> {
        let span = m.span();
        let scrut = self.expr(&m.expr)?;
        let Some(last) = m.arms.last() else {
            return Err(Error::new_spanned(
                m,
                "a `match` in kernel code needs arms, the last one `_ => ..`",
            ));
        };
        let catch_all = matches!(last.pat, syn::Pat::Wild(_))
            || matches!(&last.pat, syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none());
        if !catch_all || last.guard.is_some() {
            return Err(Error::new_spanned(
                &last.pat,
                "the last arm of a `match` in kernel code catches everything else: `_ => ..` (or a name, without a guard)",
            ));
        }
        self.scoped(|p| {
            let mut stmts = Vec::new();
            let var = match scrut.kind {
                ExprKind::Var(v) => v,
                _ => {
                    let t = p.tys.any();
                    let tmp = p.declare(&syn::Ident::new("__gk_match", span), t, false);
                    p.scopes.last_mut().expect("scope").remove("__gk_match");
                    p.vars[tmp].name = syn::Ident::new(&p.vars[tmp].cuda, span);
                    stmts.push(Stmt::Let {
                        pat: LetPat::One(tmp),
                        init: Some(scrut),
                        span,
                    });
                    tmp
                }
            };
            let mut chain = p.arm_body(last, Some(var))?;
            for arm in m.arms.iter().rev().skip(1) {
                let (cond, body) = p.scoped(|p| {
                    let cond = match (&arm.pat, &arm.guard) {
                        // `x if guard`: the name stands for the scrutinee.
                        (syn::Pat::Ident(pi), Some((_, g)))
                            if pi.mutability.is_none()
                                && pi.by_ref.is_none()
                                && pi.subpat.is_none() =>
                        {
                            p.scopes
                                .last_mut()
                                .expect("scope")
                                .insert(pi.ident.to_string(), var);
                            p.expr(g)?
                        }
                        (pat, guard) => {
                            let c = p.pat_cond(pat, var)?;
                            match guard {
                                Some((_, g)) => {
                                    let g = p.expr(g)?;
                                    p.bin(BinOp::And, c, g)
                                }
                                None => c,
                            }
                        }
                    };
                    Ok((cond, p.arm_body(arm, None)?))
                })?;
                let then = into_block(body);
                let t = p.tys.any();
                chain = p.mk(
                    ExprKind::If(Box::new(cond), then, Some(Box::new(chain))),
                    t,
                    arm.span(),
                );
            }
            if stmts.is_empty() {
                return Ok(chain);
            }
            let t = p.tys.any();
            let block = Block {
                stmts,
                tail: Some(Box::new(chain)),
                span,
            };
            Ok(p.mk(ExprKind::Block(block), t, span))
        })
    }

    /// The body of an arm; `bind` binds the final arm's name to the scrutinee.
    fn arm_body(&mut self, arm: &syn::Arm, bind: Option<VarId>) -> Result<Expr> {
        self.scoped(|p| {
            let mut stmts = Vec::new();
            if let (syn::Pat::Ident(pi), Some(v)) = (&arm.pat, bind) {
                if pi.mutability.is_none() {
                    // The name stands for the scrutinee.
                    p.scopes
                        .last_mut()
                        .expect("scope")
                        .insert(pi.ident.to_string(), v);
                }
            }
            let copy = matches!(&arm.pat, syn::Pat::Ident(pi) if pi.mutability.is_some());
            if let (syn::Pat::Ident(pi), Some(v), true) = (&arm.pat, bind, copy) {
                let t = p.tys.any();
                let name = p.declare(&pi.ident, t, pi.mutability.is_some());
                let ty = p.vars[v].ty;
                let init = Expr {
                    kind: ExprKind::Var(v),
                    ty,
                    span: pi.span(),
                };
                stmts.push(Stmt::Let {
                    pat: LetPat::One(name),
                    init: Some(init),
                    span: pi.span(),
                });
            }
            let (more, tail) = if is_statement_expr(&arm.body) {
                (vec![p.stmt_expr(&arm.body)?], None)
            } else {
                (Vec::new(), Some(Box::new(p.expr(&arm.body)?)))
            };
            stmts.extend(more);
            let span = arm.body.span();
            if stmts.is_empty() {
                if let Some(t) = tail {
                    return Ok(*t);
                }
            }
            let t = p.tys.any();
            Ok(p.mk(ExprKind::Block(Block { stmts, tail, span }), t, span))
        })
    }

    /// The condition under which `pat` matches the variable `v`.
    fn pat_cond(&mut self, pat: &syn::Pat, v: VarId) -> Result<Expr> {
        let var = |p: &mut Self| {
            let ty = p.vars[v].ty;
            Expr {
                kind: ExprKind::Var(v),
                ty,
                span: pat.span(),
            }
        };
        match pat {
            syn::Pat::Lit(l) => {
                let lit = self.expr(&syn::Expr::Lit(l.clone()))?;
                let x = var(self);
                Ok(self.bin(BinOp::Eq, x, lit))
            }
            syn::Pat::Or(o) => {
                let mut cond: Option<Expr> = None;
                for c in &o.cases {
                    let e = self.pat_cond(c, v)?;
                    cond = Some(match cond {
                        None => e,
                        Some(prev) => self.bin(BinOp::Or, prev, e),
                    });
                }
                cond.ok_or_else(|| Error::new_spanned(o, "empty pattern"))
            }
            syn::Pat::Range(r) => {
                let mut cond: Option<Expr> = None;
                if let Some(a) = &r.start {
                    let a = self.expr(a)?;
                    let x = var(self);
                    cond = Some(self.bin(BinOp::Ge, x, a));
                }
                if let Some(b) = &r.end {
                    let b = self.expr(b)?;
                    let x = var(self);
                    let op = if matches!(r.limits, syn::RangeLimits::Closed(_)) { BinOp::Le } else { BinOp::Lt };
                    let e = self.bin(op, x, b);
                    cond = Some(match cond {
                        None => e,
                        Some(prev) => self.bin(BinOp::And, prev, e),
                    });
                }
                cond.ok_or_else(|| Error::new_spanned(r, "a range pattern needs a bound"))
            }
            syn::Pat::Paren(p) => self.pat_cond(&p.pat, v),
            syn::Pat::Path(pp) if pp.path.get_ident().is_some() => {
                let c = self.path_expr(pp)?;
                let x = var(self);
                Ok(self.bin(BinOp::Eq, x, c))
            }
            syn::Pat::Wild(_) | syn::Pat::Ident(_) => Err(Error::new_spanned(
                pat,
                "only the last arm of a `match` can catch everything (`_` or a name)",
            )),
            other => Err(Error::new_spanned(
                other,
                "`match` in kernel code supports literal patterns, `a | b`, ranges (`1..=9`), local constants, guards and a final `_`",
            )),
        }
    }

    fn bin(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        let span = a.span;
        let t = self.tys.any();
        self.mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), t, span)
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Result<Expr> {
        let span = i.span();
        let cond = self.cond(&i.cond)?;
        let then = self.block(&i.then_branch)?;
        let els = match &i.else_branch {
            Some((_, e)) => Some(Box::new(self.expr(e)?)),
            None => None,
        };
        let t = self.tys.any();
        Ok(self.mk(ExprKind::If(Box::new(cond), then, els), t, span))
    }
}

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

/// `e` as the block of an `if` branch.
fn into_block(e: Expr) -> Block {
    match e.kind {
        ExprKind::Block(b) => b,
        _ => Block {
            stmts: Vec::new(),
            span: e.span,
            tail: Some(Box::new(e)),
        },
    }
}

fn elem_size(p: Prim) -> usize {
    (p.bits() / 8) as usize
}

fn named_const_ok(prim: Prim, name: &str, consts: bool) -> bool {
    if consts {
        return prim.is_float()
            && matches!(
                name,
                "PI" | "TAU"
                    | "E"
                    | "SQRT_2"
                    | "LN_2"
                    | "LN_10"
                    | "LOG2_E"
                    | "LOG10_E"
                    | "FRAC_PI_2"
                    | "FRAC_PI_3"
                    | "FRAC_PI_4"
                    | "FRAC_PI_6"
                    | "FRAC_PI_8"
                    | "FRAC_1_PI"
                    | "FRAC_2_PI"
                    | "FRAC_2_SQRT_PI"
                    | "FRAC_1_SQRT_2"
                    | "LOG2_10"
                    | "LOG10_2"
            );
    }
    if prim.is_float() {
        matches!(
            name,
            "MIN" | "MAX" | "EPSILON" | "INFINITY" | "NEG_INFINITY" | "NAN" | "MIN_POSITIVE"
        )
    } else {
        prim.is_int() && matches!(name, "MIN" | "MAX")
    }
}

fn is_statement_expr(e: &syn::Expr) -> bool {
    matches!(
        e,
        syn::Expr::While(_)
            | syn::Expr::ForLoop(_)
            | syn::Expr::Loop(_)
            | syn::Expr::Assign(_)
            | syn::Expr::Break(_)
            | syn::Expr::Continue(_)
            | syn::Expr::Return(_)
    ) || matches!(e, syn::Expr::Binary(b) if compound_op(&b.op).is_some())
}

fn no_label(l: &Option<syn::Label>) -> Result<()> {
    match l {
        Some(l) => Err(Error::new_spanned(
            l,
            "loop labels are not supported in kernel code",
        )),
        None => Ok(()),
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

fn bin_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) => BinOp::Add,
        B::Sub(_) => BinOp::Sub,
        B::Mul(_) => BinOp::Mul,
        B::Div(_) => BinOp::Div,
        B::Rem(_) => BinOp::Rem,
        B::BitAnd(_) => BinOp::BitAnd,
        B::BitOr(_) => BinOp::BitOr,
        B::BitXor(_) => BinOp::BitXor,
        B::Shl(_) => BinOp::Shl,
        B::Shr(_) => BinOp::Shr,
        B::Eq(_) => BinOp::Eq,
        B::Ne(_) => BinOp::Ne,
        B::Lt(_) => BinOp::Lt,
        B::Le(_) => BinOp::Le,
        B::Gt(_) => BinOp::Gt,
        B::Ge(_) => BinOp::Ge,
        B::And(_) => BinOp::And,
        B::Or(_) => BinOp::Or,
        _ => return None,
    })
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(_) => BinOp::Add,
        B::SubAssign(_) => BinOp::Sub,
        B::MulAssign(_) => BinOp::Mul,
        B::DivAssign(_) => BinOp::Div,
        B::RemAssign(_) => BinOp::Rem,
        B::BitAndAssign(_) => BinOp::BitAnd,
        B::BitOrAssign(_) => BinOp::BitOr,
        B::BitXorAssign(_) => BinOp::BitXor,
        B::ShlAssign(_) => BinOp::Shl,
        B::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::kernel_error;

    fn scalar_fn_error(src: &str, device: bool) -> String {
        let item: syn::ItemFn = syn::parse_str(src).expect("parses");
        let r = if device {
            super::device(&item)
        } else {
            super::vectorize(&item)
        };
        match r {
            Ok(_) => panic!("expected an error for {src}"),
            Err(e) => e.to_string(),
        }
    }

    /// Odd inputs give errors or translations, never a panic.
    #[test]
    fn odd_inputs_never_panic() {
        for body in [
            "a[0] = 340282366920938463463374607431768211455;",
            "a[0] = -170141183460469231731687303715884105728 as f32;",
            "let r#type = 1.0; a[0] = r#type;",
            "",
            "a[[0]] = 1.0;",
            "v[0] = 1;",
            "let s = v.shape(5);",
            "let d = 1; let s = v.shape(d);",
            "let g = grid();",
            "atomic_add(a[0], 1.0);",
            "let mut x = 1.0; atomic_add(&mut x, 1.0);",
            "let t = shared_array::<f32>();",
            "let t = shared_array::<f32, 0>();",
            "let (p, q) = (1, 2, 3);",
            "loop { break 5; }",
            "let t = thread_idx(); let z = t.w;",
            "unsafe { a[0] = 1.0; }",
            "let x = a; ",
            "a = b;",
            "let f = f32::frobnicate(1.0);",
            "let f = f32::sqrt();",
            "for i in 0.. { }",
            "for i in (0..4).step_by(1).rev() { }",
            "let x = if true { 1 };",
            "let x: f32 = if true { 1.0 } else { return; };",
            "break;",
            "let x = std::f32::consts::NOPE;",
            "let x = 1 + ; ",
            "let w: [f32; 3] = [1.0; 4];",
            "let w = [];",
            "let w = [a];",
            "let w = [0; 5000];",
            "let mut w = [0; N];",
            "let w: [f32; 2]; ",
            "let mut w = [0.0; 3]; let z = w; a[0] = w[5];",
        ] {
            let src = format!("fn k(a: &mut [f32], b: &[i32], v: &mut View2<i32>) {{ {body} }}");
            let outcome = std::panic::catch_unwind(|| {
                if let Ok(item) = syn::parse_str::<syn::ItemFn>(&src) {
                    if let Ok(mut f) = super::kernel(&item, true) {
                        if crate::infer::infer(&mut f).is_ok() {
                            let _ = crate::cuda::kernel_source(&f);
                            let _ = crate::cpu::kernel_body(&f);
                        }
                    }
                }
            });
            assert!(outcome.is_ok(), "panicked on `{body}`");
        }
        let e = kernel_error("fn r#match(a: &mut [f32]) {}");
        assert!(e.contains("raw identifiers"), "{e}");
    }

    #[test]
    fn helpers_take_scalars_and_no_thread_intrinsics() {
        for (src, device, msg) in [
            ("fn h(a: &[f32]) -> f32 { a[0] }", true, "takes scalars"),
            (
                "fn h(x: f32) -> f32 { x + grid(1) as f32 }",
                true,
                "only available in #[kernel]",
            ),
            (
                "fn h(x: f32) -> f32 { let t = shared_array::<f32, 4>(); x }",
                true,
                "shared arrays exist only in #[kernel]",
            ),
            (
                "fn h(x: f32) -> f32 { let y = x; }",
                true,
                "must end with the value it returns",
            ),
            ("fn f(x: f32) {}", false, "add `-> T`"),
            ("fn f(x: i16) -> f32 { 1.0 }", false, "array element types"),
            (
                "fn f(x: f32) -> f32 { helper(x) }",
                false,
                "cannot call other functions",
            ),
            (
                "fn f(a: f32, b: f32, c: f32, d: f32, e: f32) -> f32 { a }",
                false,
                "1 to 4 inputs",
            ),
        ] {
            let e = scalar_fn_error(src, device);
            assert!(e.contains(msg), "for `{src}` expected `{msg}`, got `{e}`");
        }
    }

    #[test]
    fn unsupported_constructs_are_errors_with_guidance() {
        for (src, msg) in [
        ("fn k(a: &mut [f32]) { let f = |x: f32| x; }", "closures are not supported"),
        ("fn k(a: &mut [f32]) { println!(\"hi\"); }", "macros (`println!`) are not supported"),
        ("fn k(a: &mut [f32]) { let v = Vec::new(); }", "there is no heap"),
        ("fn k(a: &mut [f32]) { let r = &a[0]; }", "references cannot be taken"),
        ("fn k(a: &mut [f32]) { a[0] = a.iter().sum(); }", "kernel code uses index loops"),
        ("fn k(a: &mut [f32]) { a[0] = a[0].frobnicate(); }", "unsupported method `frobnicate`"),
        ("fn k(a: &mut String) { }", "unsupported parameter type"),
        ("fn k(a: &[f32]) { a[0] = 1.0; }", "read-only parameter; declare it `&mut`"),
        ("fn k(a: &mut [f32]) { a[0] = 1; }", "mismatched types"),
        ("fn k(a: &mut [f32]) { let i: u32 = 0; a[i] = 1.0; }", "mismatched types"),
        (
            "fn k(a: &mut [f32]) { match 1 { 0 => a[0] = 1.0, 1 => {} } }",
            "the last arm of a `match` in kernel code catches everything else",
        ),
        (
            "fn k(a: &mut [f32]) { match 1 { _ => {} _ => {} } }",
            "only the last arm of a `match` can catch everything",
        ),
        (
            "fn k(a: &mut [f32]) { let p = 1; match p { Some(x) => {} _ => {} } }",
            "`match` in kernel code supports literal patterns",
        ),
        ("fn k(a: &mut [f32]) { let p = Point { x: 1 }; }", "struct literals are not supported"),
        ("fn k(a: &mut [f32]) { a[0] = undefined_var; }", "cannot find `undefined_var`"),
        ("fn k(a: &mut [f32]) { let (x, y) = grid(2); }", "use `grid2()`"),
        ("fn k(a: &mut [f32]) { let t = shared_array::<f32, M>(); }", "is not a `const` declared in this kernel"),
        ("fn k(a: &mut [f32]) { let t = shared_array::<f64, 10000>(); }", "at most 49152 bytes"),
        ("fn k(a: &mut [u32]) { a[0] = -a[0]; }", "cannot negate a value of type `u32`"),
        ("fn k(a: &mut [f32]) -> f32 { 1.0 }", "a kernel returns nothing"),
        ("fn k<T>(a: &mut [T]) { }", "cannot be generic"),
        ("fn double(a: &mut [f32]) { }", "reserved word"),
        ("fn k(a: &mut [f32]) { a[0] = a[1..2][0]; }", "only array parameters, shared arrays and local arrays"),
        ("fn k(a: &mut [f32]) { let s = \"x\"; }", "strings are not supported"),
        ("fn k(a: &mut [f32]) { for x in a { } }", "for loops iterate over integer ranges"),
        ("fn k(a: &mut [f32]) { 'outer: loop { break 'outer; } }", "loop labels are not supported"),
        ("fn k(a: &mut [f32]) { a[0] = f32::sqrt(2.0, 3.0); }", "takes 0 argument(s)"),
        ("fn k(a: &mut [f32]) { let x = 1.0; a[0] = (x + if x > 0.0 { let y = 1.0; y } else { 0.0 }) as f32; }", "compute it into a variable first"),
    ] {
        let e = kernel_error(src);
        assert!(e.contains(msg), "for `{src}` expected `{msg}`, got `{e}`");
    }
    }
}
