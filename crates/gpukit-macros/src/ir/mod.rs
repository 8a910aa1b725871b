//! The intermediate representation that `parse` builds and `infer`, `cuda` and `cpu` read.
//!
//! Every expression carries a type variable ([`TyId`]); names are resolved to [`VarId`]s, so
//! shadowing and scoping are settled before code generation.

pub mod ty;

use crate::methods::Method;
use crate::types::Prim;
use proc_macro2::Span;
use ty::{TyId, Tys};

/// Index into [`Func::vars`].
pub type VarId = usize;

/// What kind of item a [`Func`] came from.
#[derive(Clone, Debug)]
pub enum FuncKind {
    /// `#[kernel]` / `#[kernel(unchecked)]`.
    Kernel { checked: bool },
    /// `#[device]`: scalars in, a scalar (or nothing) out.
    Device { ret: Option<Prim> },
    /// `#[vectorize]`: scalars in, one scalar out.
    Vectorize { ret: Prim },
}

/// A translated function and everything code generation needs about it.
pub struct Func {
    /// Kernel, device helper or vectorized function.
    pub kind: FuncKind,
    /// The function's name.
    pub name: syn::Ident,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// The translated body.
    pub body: Block,
    /// Every binding, indexed by [`VarId`].
    pub vars: Vec<Var>,
    /// Type variables of all expressions and bindings.
    pub tys: Tys,
    /// Shared arrays in declaration order (their array ids follow the array parameters).
    pub shared: Vec<SharedArray>,
    /// Per-thread local arrays (`let mut w = [0.0f32; 9];`), in declaration order.
    pub locals: Vec<LocalArray>,
    /// `#[device]` functions called, each once, as written (path) with their CUDA name.
    pub callees: Vec<Callee>,
    /// Whether the body calls `sync_threads()`.
    pub uses_barrier: bool,
}

/// A `#[device]` function called from a body.
#[derive(Clone)]
pub struct Callee {
    /// The path as written at the call.
    pub path: syn::Path,
    /// Name of the C++ function.
    pub cuda: String,
}

/// A parameter.
pub struct Param {
    /// The binding.
    pub var: VarId,
    /// How it is passed.
    pub ty: ParamTy,
    /// Array id for bounds errors (arrays only).
    pub array_id: Option<usize>,
}

/// How a parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamTy {
    /// `&[T]` / `&mut [T]`.
    Slice { elem: Prim, mutable: bool },
    /// `&View2<T>`, `&mut View3<T>`, ...
    View {
        elem: Prim,
        ndim: usize,
        mutable: bool,
    },
    /// A scalar by value.
    Scalar(Prim),
}

/// A `shared_array::<T, N>()`.
pub struct SharedArray {
    /// The binding.
    pub var: VarId,
    /// Element type.
    pub elem: Prim,
    /// Number of elements.
    pub len: u64,
    /// Array id in bounds errors.
    pub array_id: usize,
    /// Byte offset in the CPU backend's per-block shared memory.
    pub offset: usize,
}

/// A per-thread array: `[v; N]` or `[a, b, c]`.
pub struct LocalArray {
    /// The binding.
    pub var: VarId,
    /// Element type variable.
    pub elem: TyId,
    /// Number of elements.
    pub len: u64,
    /// Array id in bounds errors.
    pub array_id: usize,
    /// How the elements start.
    pub init: ArrayInit,
}

/// The initial elements of a local array.
pub enum ArrayInit {
    /// `[v; N]`.
    Repeat(Expr),
    /// `[a, b, c]`.
    List(Vec<Expr>),
}

/// A variable: parameter, local, loop variable, constant or shared array.
pub struct Var {
    /// Name as written in Rust.
    pub name: syn::Ident,
    /// Unique C++ name.
    pub cuda: String,
    /// Type variable.
    pub ty: TyId,
    /// Declared `mut`.
    pub mutable: bool,
}

/// `{ stmts; tail }`.
pub struct Block {
    /// Statements in order.
    pub stmts: Vec<Stmt>,
    /// The value of the block, if it ends in an expression.
    pub tail: Option<Box<Expr>>,
    /// Where it was written.
    pub span: Span,
}

/// A statement.
pub enum Stmt {
    /// `let x = e;`, `let (x, y) = grid2();`, `let x: T;`.
    Let {
        pat: LetPat,
        init: Option<Expr>,
        span: Span,
    },
    /// `const N: T = e;` inside a body.
    Const {
        var: VarId,
        value: Expr,
    },
    /// `let tile = shared_array::<T, N>();` (index into [`Func::shared`]).
    Shared(usize),
    /// `let mut w = [0.0f32; 9];` (index into [`Func::locals`]).
    LocalArray(usize),
    /// Statements in the enclosing scope (what `let (a, b) = (x, y);` becomes).
    Seq(Vec<Stmt>),
    /// An expression evaluated for its effects (`if`, a block, `atomic_add(..)`, `sync_threads()`).
    Expr(Expr),
    /// `place = value` or `place op= value`.
    Assign {
        place: Expr,
        op: Option<BinOp>,
        value: Expr,
        span: Span,
    },
    While {
        cond: Expr,
        body: Block,
    },
    Loop {
        body: Block,
    },
    For {
        var: VarId,
        range: Range,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>, Span),
}

/// The pattern of a `let`.
pub enum LetPat {
    One(VarId),
    Tuple(Vec<VarId>),
}

/// The iteration of a `for` loop.
pub struct Range {
    /// First value.
    pub start: Expr,
    /// Bound (excluded, or included with `..=`).
    pub end: Expr,
    /// `a..=b`.
    pub inclusive: bool,
    /// `.step_by(s)`.
    pub step: Option<Expr>,
    /// `.rev()`.
    pub rev: bool,
    /// Where it was written.
    pub span: Span,
}

/// An expression and its type variable.
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Type variable.
    pub ty: TyId,
    /// Where it was written.
    pub span: Span,
}

/// A literal.
#[derive(Clone, Debug)]
pub enum Lit {
    /// Decimal digits.
    Int(u128),
    /// Decimal text as written, without suffix or underscores.
    Float(String),
    Bool(bool),
}

/// Thread and grid intrinsics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// `grid(1)`, `grid2()`, `grid3()`: absolute thread position (1 to 3 axes).
    Grid(usize),
    /// `gridsize(1)`, `gridsize2()`, `gridsize3()`: threads in the whole grid per axis.
    GridSize(usize),
    ThreadIdx,
    BlockIdx,
    BlockDim,
    GridDim,
    SyncThreads,
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Max,
    Min,
    Exch,
    Cas,
}

impl AtomicOp {
    /// The intrinsic's name in the kernel language (and in the CPU runtime).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Exch => "atomic_exch",
            AtomicOp::Cas => "atomic_cas",
        }
    }
}

/// `.x`, `.y`, `.z` of a `Dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    /// `x`, `y` or `z`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The operator as both languages write it.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// `==`, `<`, ...
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// `<<`, `>>`.
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }

    /// `&&`, `||`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// A named constant of a primitive type (`f32::MAX`, `std::f64::consts::PI`).
#[derive(Clone, Debug)]
pub struct NamedConst {
    /// The type the constant belongs to.
    pub prim: Prim,
    /// `MAX`, `consts::PI`, ...
    pub name: String,
}

/// Expression forms.
pub enum ExprKind {
    Lit(Lit),
    Var(VarId),
    Const(NamedConst),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, Prim),
    /// `a[i]` (one index) or `v[[i, j]]` (one index per axis); `base` is a variable.
    Index(VarId, Vec<Expr>),
    /// `a.len()` of a slice, shared array or view (elements in all).
    Len(VarId),
    /// `v.shape(d)`.
    Shape(VarId, usize),
    /// A math method: `x.sqrt()`, `a.min(b)`.
    Method(Method, Box<Expr>, Vec<Expr>),
    /// A call of a `#[device]` function (index into [`Func::callees`]).
    Call(usize, Vec<Expr>),
    Intrinsic(Intrinsic),
    /// `.x` of a `Dim3` value.
    Field(Box<Expr>, Axis),
    /// `atomic_add(&mut a[i], v)`; the place is an `Index` expression.
    Atomic(AtomicOp, Box<Expr>, Vec<Expr>),
    If(Box<Expr>, Block, Option<Box<Expr>>),
    Block(Block),
    Paren(Box<Expr>),
}

impl Expr {
    /// Whether evaluating this expression can be observed beyond its value: in a checked
    /// kernel an element access (which may report an out-of-bounds index and end the thread),
    /// and always an atomic. Rust evaluates such operands left to right; C++ leaves the order
    /// of operands unspecified, so the CUDA code sequences them explicitly. (`#[device]`
    /// functions take and return scalars only: calling one has no effect to order.)
    pub fn is_observable(&self, checked: bool) -> bool {
        let obs = |e: &Expr| e.is_observable(checked);
        match &self.kind {
            ExprKind::Index(_, ix) => checked || ix.iter().any(obs),
            ExprKind::Atomic(..) => true,
            ExprKind::Call(_, args) => args.iter().any(obs),
            ExprKind::Unary(_, e) | ExprKind::Cast(e, _) | ExprKind::Paren(e) => obs(e),
            ExprKind::Field(e, _) => obs(e),
            ExprKind::Binary(_, a, b) => obs(a) || obs(b),
            ExprKind::Method(_, r, a) => obs(r) || a.iter().any(obs),
            ExprKind::If(..) | ExprKind::Block(_) => true,
            _ => false,
        }
    }

    /// Whether this expression can become a C++ expression without statements: `if` and
    /// blocks only when every branch is a lone expression.
    pub fn is_pure(&self) -> bool {
        match &self.kind {
            ExprKind::If(c, then, els) => {
                c.is_pure() && block_is_pure(then) && els.as_ref().is_some_and(|e| e.is_pure())
            }
            ExprKind::Block(b) => block_is_pure(b),
            ExprKind::Unary(_, e) | ExprKind::Cast(e, _) | ExprKind::Paren(e) => e.is_pure(),
            ExprKind::Field(e, _) => e.is_pure(),
            ExprKind::Binary(_, a, b) => a.is_pure() && b.is_pure(),
            ExprKind::Index(_, ix) => ix.iter().all(Expr::is_pure),
            ExprKind::Method(_, r, a) => r.is_pure() && a.iter().all(Expr::is_pure),
            ExprKind::Call(_, a) => a.iter().all(Expr::is_pure),
            ExprKind::Atomic(_, p, a) => p.is_pure() && a.iter().all(Expr::is_pure),
            _ => true,
        }
    }
}

/// A block with no statements whose tail is pure.
pub fn block_is_pure(b: &Block) -> bool {
    b.stmts.is_empty() && b.tail.as_ref().is_some_and(|t| t.is_pure())
}
