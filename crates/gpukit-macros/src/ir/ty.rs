//! The types of the IR: what a type variable ([`TyId`]) of an expression or binding resolves to
//! ([`Ty`]), and the table of type variables ([`Tys`]) with its unification. `infer` walks a
//! [`Func`](super::Func) and feeds this table; `parse` creates the variables and code generation
//! reads the resolved types.

use crate::types::Prim;
use proc_macro2::Span;
use syn::Error;

/// Index of a type variable.
pub type TyId = usize;

/// A resolved (or partly resolved) type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Prim(Prim),
    Unit,
    /// `thread_idx()` and friends: a struct of three `u32`.
    Dim3,
    /// `(usize, usize)` from `grid2()` and the like.
    Tuple(usize),
    Slice {
        elem: Prim,
        mutable: bool,
    },
    View {
        elem: Prim,
        ndim: usize,
        mutable: bool,
    },
    /// A per-thread local array (index into `Func::locals`).
    Local(usize),
    /// A type only the `#[device]` function's signature knows.
    Opaque(Opaque),
}

/// Where an opaque type comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opaque {
    /// The result of the C++ function.
    Ret(String),
    /// Parameter `n` of the C++ function.
    Param(String, usize),
}

/// The state of one type variable.
#[derive(Clone, Debug)]
pub enum Term {
    /// Anything.
    Any,
    /// `{integer}`.
    Int,
    /// `{float}`.
    Float,
    Known(Ty),
}

/// The table of type variables (a union-find forest).
#[derive(Default)]
pub struct Tys {
    parent: Vec<usize>,
    term: Vec<Term>,
}

impl Tys {
    fn push(&mut self, t: Term) -> TyId {
        self.parent.push(self.parent.len());
        self.term.push(t);
        self.parent.len() - 1
    }

    /// A fresh unconstrained variable.
    pub fn any(&mut self) -> TyId {
        self.push(Term::Any)
    }

    /// A fresh `{integer}`.
    pub fn int(&mut self) -> TyId {
        self.push(Term::Int)
    }

    /// A fresh `{float}`.
    pub fn float(&mut self) -> TyId {
        self.push(Term::Float)
    }

    /// A variable bound to `ty`.
    pub fn known(&mut self, ty: Ty) -> TyId {
        self.push(Term::Known(ty))
    }

    /// A variable bound to a primitive.
    pub fn prim(&mut self, p: Prim) -> TyId {
        self.known(Ty::Prim(p))
    }

    fn find(&self, mut t: TyId) -> TyId {
        while self.parent[t] != t {
            t = self.parent[t];
        }
        t
    }

    /// The state of `t` (of the root of its class).
    pub fn term(&self, t: TyId) -> &Term {
        &self.term[self.find(t)]
    }

    /// The type of `t` after inference and defaulting.
    pub fn get(&self, t: TyId) -> Ty {
        match &self.term[self.find(t)] {
            Term::Known(ty) => ty.clone(),
            Term::Int => Ty::Prim(Prim::I32),
            Term::Float => Ty::Prim(Prim::F64),
            Term::Any => Ty::Unit,
        }
    }

    /// The primitive type of `t`, if it resolved to one.
    pub fn prim_of(&self, t: TyId) -> Option<Prim> {
        match self.get(t) {
            Ty::Prim(p) => Some(p),
            _ => None,
        }
    }

    fn describe(&self, t: TyId) -> String {
        match &self.term[self.find(t)] {
            Term::Any => "_".into(),
            Term::Int => "{integer}".into(),
            Term::Float => "{float}".into(),
            Term::Known(ty) => describe_ty(ty),
        }
    }

    /// Makes `a` and `b` the same type, or explains at `span` why they cannot be.
    pub fn unify(&mut self, a: TyId, b: TyId, span: Span) -> syn::Result<()> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let merged = match (&self.term[ra], &self.term[rb]) {
            (Term::Any, t) | (t, Term::Any) => Some(t.clone()),
            (Term::Int, Term::Int) => Some(Term::Int),
            (Term::Float, Term::Float) => Some(Term::Float),
            (Term::Known(Ty::Opaque(o)), Term::Int | Term::Float)
            | (Term::Int | Term::Float, Term::Known(Ty::Opaque(o))) => {
                Some(Term::Known(Ty::Opaque(o.clone())))
            }
            (Term::Known(Ty::Opaque(_)), Term::Known(t))
            | (Term::Known(t), Term::Known(Ty::Opaque(_))) => Some(Term::Known(t.clone())),
            (Term::Int, Term::Known(Ty::Prim(p))) | (Term::Known(Ty::Prim(p)), Term::Int)
                if p.is_int() =>
            {
                Some(Term::Known(Ty::Prim(*p)))
            }
            (Term::Float, Term::Known(Ty::Prim(p))) | (Term::Known(Ty::Prim(p)), Term::Float)
                if p.is_float() =>
            {
                Some(Term::Known(Ty::Prim(*p)))
            }
            (Term::Known(x), Term::Known(y)) if x == y => Some(Term::Known(x.clone())),
            _ => None,
        };
        match merged {
            Some(t) => {
                self.parent[rb] = ra;
                self.term[ra] = t;
                Ok(())
            }
            None => Err(Error::new(
                span,
                format!(
                    "mismatched types: expected `{}`, found `{}` (kernel code follows Rust's typing: convert with `as`)",
                    self.describe(a),
                    self.describe(b)
                ),
            )),
        }
    }

    /// Requires `t` to be an integer (`{integer}` if still open).
    pub fn want_int(&mut self, t: TyId, span: Span) -> syn::Result<()> {
        let i = self.int();
        self.unify(t, i, span)
    }

    /// Requires `t` to be a float (`{float}` if still open).
    pub fn want_float(&mut self, t: TyId, span: Span) -> syn::Result<()> {
        let f = self.float();
        self.unify(t, f, span)
    }

    /// Requires `t` to be the primitive `p`.
    pub fn want(&mut self, t: TyId, p: Prim, span: Span) -> syn::Result<()> {
        let k = self.prim(p);
        self.unify(t, k, span)
    }
}

/// A type as Rust prints it.
pub fn describe_ty(ty: &Ty) -> String {
    match ty {
        Ty::Prim(p) => p.rust().to_string(),
        Ty::Unit => "()".into(),
        Ty::Dim3 => "Dim3".into(),
        Ty::Tuple(n) => format!("({})", vec!["usize"; *n].join(", ")),
        Ty::Slice { elem, mutable } => {
            format!("&{}[{elem}]", if *mutable { "mut " } else { "" })
        }
        Ty::View {
            elem,
            ndim,
            mutable,
        } => format!("&{}View{ndim}<{elem}>", if *mutable { "mut " } else { "" }),
        Ty::Local(_) => "[_; N]".into(),
        Ty::Opaque(Opaque::Ret(f)) => format!("<result of {f}>"),
        Ty::Opaque(Opaque::Param(f, n)) => format!("<parameter {n} of {f}>"),
    }
}
