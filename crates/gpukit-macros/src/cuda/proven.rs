//! Which element accesses of a checked kernel cannot go out of bounds, so their check can go.
//!
//! While [`Gen`](super::Gen) walks a body it keeps [`Facts`]: statements of the form
//! `index < bound` that hold at the current point, each with the reason it holds. An access whose
//! every index is proven below its array's length (slices) or axis (views) is emitted as
//! `a.at(i)`, which reads without a check, followed by a comment naming the reasons; every other
//! access keeps its check and reports exactly as before.
//!
//! Facts come from:
//! - a guard: `if i < a.len() { .. }`, `if y < h && x < w { .. }` (in the `then` branch), and the
//!   `else` branch of `if i >= n { .. } else { .. }`;
//! - an early exit: `if i >= n { return; }` (or `||` of such tests) for the rest of the block;
//! - a loop: `for k in start..end` gives `k < end` in the body (`..=end - 1` too, when `end > 0`);
//! - an access already made: after a statement that indexes `a[i]` unconditionally, `i < a.len()`
//!   holds (a failed check ends the thread);
//! - the index's own form: `e.max(1).min(b) - 1`, `e.min(b - 1)` and `e % b` are below `b`
//!   wherever `b > 0` is known (a fact `_ < b` proves it).
//!
//! Only immutable bindings take part (a `let` or loop variable that cannot change after the fact
//! was established); `let h = img.shape(0)` and `let j = i` are seen through, so `i < h` counts as
//! `i < img.shape(0)`.

use crate::ir::ty::Ty;
use crate::ir::*;
use crate::types::Prim;
use std::collections::HashMap;

#[cfg(test)]
#[path = "proven_tests.rs"]
mod tests;

#[path = "launch_tests.rs"]
mod launch_tests;
pub(super) use launch_tests::LaunchTest;

/// A value a fact talks about: a binding, an array's length, a view's axis, a constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Term {
    Var(VarId),
    Len(VarId),
    Shape(VarId, usize),
    Lit(u128),
}

/// `index < bound`, with why it holds (for the comment beside the access).
#[derive(Clone, Debug)]
struct Fact {
    index: VarId,
    bound: Term,
    why: &'static str,
}

/// What is known at the current point of a body: facts in nested scopes, and the definitions of
/// immutable bindings (to see through `let h = img.shape(0)` and `let yy = ...clamp...`).
pub(super) struct Facts<'a> {
    f: &'a Func,
    scopes: Vec<Vec<Fact>>,
    defs: HashMap<VarId, &'a Expr>,
}

impl<'a> Facts<'a> {
    /// No facts yet, for the body of `f`; the definitions of its immutable bindings are read
    /// once (each binding has one definition, and is used only where it is in scope).
    pub(super) fn new(f: &'a Func) -> Facts<'a> {
        let mut defs = HashMap::new();
        collect_block(f, &f.body, &mut defs);
        Facts {
            f,
            scopes: vec![Vec::new()],
            defs,
        }
    }

    /// Opens a scope (a block, a branch, a loop body).
    pub(super) fn push(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Closes the innermost scope and forgets its facts.
    pub(super) fn pop(&mut self) {
        self.scopes.pop();
        if self.scopes.is_empty() {
            self.scopes.push(Vec::new());
        }
    }

    fn add(&mut self, facts: Vec<Fact>) {
        self.scopes
            .last_mut()
            .expect("a scope is always open")
            .extend(facts);
    }

    /// Adds what `cond` being true proves (the `then` branch of an `if`).
    pub(super) fn assume(&mut self, cond: &Expr) {
        let facts = self.when_true(cond);
        self.add(facts);
    }

    /// Adds what `cond` being false proves (an `else` branch, or after `if cond { return; }`).
    pub(super) fn assume_not(&mut self, cond: &Expr) {
        let facts = self.when_false(cond);
        self.add(facts);
    }

    /// Adds `var < end` for the body of `for var in start..end` (or `..=end - 1` with `end > 0`).
    pub(super) fn assume_loop(&mut self, var: VarId, r: &Range) {
        if self.f.vars[var].mutable || !self.is_usize(var) {
            return;
        }
        let bound = if r.inclusive {
            match &strip(&r.end).kind {
                ExprKind::Binary(BinOp::Sub, b, one) if is_lit(one, 1) => match self.term(b) {
                    Some(t) if self.positive(&t) => Some(t),
                    _ => None,
                },
                _ => None,
            }
        } else {
            self.term(&r.end)
        };
        if let Some(bound) = bound {
            self.add(vec![Fact {
                index: var,
                bound,
                why: "loop range",
            }]);
        }
    }

    /// Adds the facts of the accesses a statement makes whatever happens (outside `if`, blocks and
    /// the right side of `&&`/`||`): once `a[i]` was checked, `i < a.len()` for the rest.
    pub(super) fn assume_accessed(&mut self, e: &Expr) {
        let mut facts = Vec::new();
        self.accesses(e, &mut facts);
        self.add(facts);
    }

    fn accesses(&self, e: &Expr, out: &mut Vec<Fact>) {
        match &e.kind {
            ExprKind::Index(a, ix) => {
                for i in ix {
                    self.accesses(i, out);
                }
                for (axis, i) in ix.iter().enumerate() {
                    let Some(Term::Var(v)) = self.term(i) else {
                        continue;
                    };
                    let bound = if self.is_view(*a) {
                        Term::Shape(*a, axis)
                    } else {
                        self.canon(Term::Len(*a))
                    };
                    out.push(Fact {
                        index: v,
                        bound,
                        why: "checked before",
                    });
                }
            }
            ExprKind::Binary(op, a, b) => {
                self.accesses(a, out);
                if !op.is_logical() {
                    self.accesses(b, out);
                }
            }
            ExprKind::Unary(_, x) | ExprKind::Cast(x, _) | ExprKind::Paren(x) => {
                self.accesses(x, out)
            }
            ExprKind::Field(x, _) => self.accesses(x, out),
            ExprKind::Method(_, r, args) => {
                self.accesses(r, out);
                args.iter().for_each(|a| self.accesses(a, out));
            }
            ExprKind::Call(_, args) => args.iter().for_each(|a| self.accesses(a, out)),
            ExprKind::Atomic(_, place, args) => {
                self.accesses(place, out);
                args.iter().for_each(|a| self.accesses(a, out));
            }
            _ => {}
        }
    }

    /// Why every index of `a[ix]` is in range, or `None` when one of them is not proven.
    pub(super) fn proves_access(&self, a: VarId, ix: &[Expr]) -> Option<String> {
        let view = self.is_view(a);
        let mut reasons = Vec::new();
        for (axis, i) in ix.iter().enumerate() {
            let bound = if view {
                Term::Shape(a, axis)
            } else {
                self.canon(Term::Len(a))
            };
            let why = self.below(i, &bound, 0)?;
            reasons.push(format!("{} {why}", self.describe(i)));
        }
        Some(reasons.join(", "))
    }

    /// Why `e < bound` holds here, if it is known.
    fn below(&self, e: &Expr, bound: &Term, depth: usize) -> Option<&'static str> {
        if depth > 8 {
            return None;
        }
        let e = strip(e);
        if let Some(Term::Var(v)) = self.term(e) {
            let implies = |f: &&Fact| {
                f.index == v
                    && (&f.bound == bound
                        || matches!((&f.bound, bound), (Term::Lit(m), Term::Lit(n)) if m <= n))
            };
            if let Some(fact) = self.facts().find(implies) {
                return Some(fact.why);
            }
            if let Some(def) = self.defs.get(&v) {
                return self.below(def, bound, depth + 1);
            }
        }
        if let Some(Term::Lit(n)) = self.term(e) {
            if let Term::Lit(m) = bound {
                return (n < *m).then_some("constant");
            }
        }
        if !self.positive(bound) {
            return None;
        }
        match &e.kind {
            // e.max(lo).min(b) - 1 with lo >= 1: in 1..=b before the `- 1`.
            ExprKind::Binary(BinOp::Sub, clamped, one) if is_lit(one, 1) => {
                let ExprKind::Method(min, inner, hi) = &strip(clamped).kind else {
                    return None;
                };
                let ExprKind::Method(max, _, lo) = &strip(inner).kind else {
                    return None;
                };
                if min.name != "min" || max.name != "max" {
                    return None;
                }
                let lo_ok = lit_value(&lo[0]).is_some_and(|l| l >= 1);
                (lo_ok && self.term(&hi[0]).as_ref() == Some(bound)).then_some("clamped")
            }
            // e.min(b - 1)
            ExprKind::Method(min, _, hi) if min.name == "min" => match &strip(&hi[0]).kind {
                ExprKind::Binary(BinOp::Sub, b, one) if is_lit(one, 1) => {
                    (self.term(b).as_ref() == Some(bound)).then_some("clamped")
                }
                _ => None,
            },
            // e % b
            ExprKind::Binary(BinOp::Rem, _, b) => {
                (self.term(b).as_ref() == Some(bound)).then_some("remainder")
            }
            _ => None,
        }
    }

    /// Whether `bound > 0` is known: some index is below it, or it is a positive constant.
    fn positive(&self, bound: &Term) -> bool {
        match bound {
            Term::Lit(n) => *n > 0,
            _ => self.facts().any(|f| &f.bound == bound),
        }
    }

    fn facts(&self) -> impl Iterator<Item = &Fact> {
        self.scopes.iter().flatten()
    }

    /// Facts proven by `cond == true`.
    fn when_true(&self, cond: &Expr) -> Vec<Fact> {
        match &strip(cond).kind {
            ExprKind::Binary(BinOp::And, a, b) => {
                let mut v = self.when_true(a);
                v.extend(self.when_true(b));
                v
            }
            ExprKind::Binary(BinOp::Lt, i, b) | ExprKind::Binary(BinOp::Gt, b, i) => {
                self.fact(i, b, "guard")
            }
            ExprKind::Unary(UnOp::Not, x) => self.when_false(x),
            _ => Vec::new(),
        }
    }

    /// Facts proven by `cond == false`.
    fn when_false(&self, cond: &Expr) -> Vec<Fact> {
        match &strip(cond).kind {
            ExprKind::Binary(BinOp::Or, a, b) => {
                let mut v = self.when_false(a);
                v.extend(self.when_false(b));
                v
            }
            ExprKind::Binary(BinOp::Ge, i, b) | ExprKind::Binary(BinOp::Le, b, i) => {
                self.fact(i, b, "guard")
            }
            ExprKind::Unary(UnOp::Not, x) => self.when_true(x),
            _ => Vec::new(),
        }
    }

    fn fact(&self, i: &Expr, b: &Expr, why: &'static str) -> Vec<Fact> {
        match (self.term(i), self.term(b)) {
            (Some(Term::Var(index)), Some(bound)) if self.is_usize(index) => {
                vec![Fact { index, bound, why }]
            }
            _ => Vec::new(),
        }
    }

    /// The term an expression stands for, seen through immutable aliases, if it is one.
    fn term(&self, e: &Expr) -> Option<Term> {
        let t = match &strip(e).kind {
            ExprKind::Var(v) if !self.f.vars[*v].mutable => Term::Var(*v),
            ExprKind::Len(a) => Term::Len(*a),
            ExprKind::Shape(a, d) => Term::Shape(*a, *d),
            ExprKind::Lit(Lit::Int(n)) => Term::Lit(*n),
            _ => return None,
        };
        Some(self.canon(t))
    }

    /// `Var(h)` with `let h = img.shape(0)` becomes `Shape(img, 0)`; `Len` of a shared or local
    /// array becomes its constant length; `Len` of a one-axis view is its `Shape(_, 0)`.
    fn canon(&self, t: Term) -> Term {
        let mut t = t;
        for _ in 0..16 {
            t = match t {
                Term::Var(v) => match self.defs.get(&v).map(|d| &strip(d).kind) {
                    Some(ExprKind::Var(w)) if !self.f.vars[*w].mutable => Term::Var(*w),
                    Some(ExprKind::Len(a)) => Term::Len(*a),
                    Some(ExprKind::Shape(a, d)) => Term::Shape(*a, *d),
                    Some(ExprKind::Lit(Lit::Int(n))) => Term::Lit(*n),
                    _ => return Term::Var(v),
                },
                Term::Len(a) => match self.fixed_len(a) {
                    Some(n) => Term::Lit(n as u128),
                    None => return Term::Len(a),
                },
                other => return other,
            };
        }
        t
    }

    fn fixed_len(&self, a: VarId) -> Option<u64> {
        let shared = self.f.shared.iter().find(|s| s.var == a).map(|s| s.len);
        shared.or_else(|| self.f.locals.iter().find(|l| l.var == a).map(|l| l.len))
    }

    /// Facts are kept for `usize` bindings only: indices are `usize`, and `x < b` with an
    /// unsigned `x` is what proves `b > 0`.
    fn is_usize(&self, v: VarId) -> bool {
        self.f.tys.prim_of(self.f.vars[v].ty) == Some(Prim::Usize)
    }

    fn is_view(&self, a: VarId) -> bool {
        matches!(self.f.tys.get(self.f.vars[a].ty), Ty::View { .. })
    }

    /// A short Rust spelling of an index for the comment (`yy`, or `index` for an expression).
    fn describe(&self, e: &Expr) -> String {
        match &strip(e).kind {
            ExprKind::Var(v) => self.f.vars[*v].name.to_string(),
            ExprKind::Lit(Lit::Int(n)) => n.to_string(),
            _ => "index".to_string(),
        }
    }
}

fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(x) => strip(x),
        _ => e,
    }
}

fn lit_value(e: &Expr) -> Option<u128> {
    match &strip(e).kind {
        ExprKind::Lit(Lit::Int(n)) => Some(*n),
        _ => None,
    }
}

fn is_lit(e: &Expr, n: u128) -> bool {
    lit_value(e) == Some(n)
}

/// The `let v = init` (and `const`) definitions of immutable bindings in a block, nested ones too.
fn collect_block<'a>(f: &Func, b: &'a Block, defs: &mut HashMap<VarId, &'a Expr>) {
    for s in &b.stmts {
        collect_stmt(f, s, defs);
    }
    if let Some(t) = &b.tail {
        collect_expr(f, t, defs);
    }
}

fn collect_stmt<'a>(f: &Func, s: &'a Stmt, defs: &mut HashMap<VarId, &'a Expr>) {
    match s {
        Stmt::Let {
            pat: LetPat::One(v),
            init: Some(e),
            ..
        }
        | Stmt::Const { var: v, value: e } => {
            if !f.vars[*v].mutable {
                defs.insert(*v, e);
            }
            collect_expr(f, e, defs);
        }
        Stmt::Let { init, .. } => init.iter().for_each(|e| collect_expr(f, e, defs)),
        Stmt::Seq(ss) => ss.iter().for_each(|s| collect_stmt(f, s, defs)),
        Stmt::Expr(e) => collect_expr(f, e, defs),
        Stmt::Assign { place, value, .. } => {
            collect_expr(f, place, defs);
            collect_expr(f, value, defs);
        }
        Stmt::While { cond, body } => {
            collect_expr(f, cond, defs);
            collect_block(f, body, defs);
        }
        Stmt::Loop { body } | Stmt::For { body, .. } => collect_block(f, body, defs),
        Stmt::Return(Some(e), _) => collect_expr(f, e, defs),
        _ => {}
    }
}

fn collect_expr<'a>(f: &Func, e: &'a Expr, defs: &mut HashMap<VarId, &'a Expr>) {
    match &e.kind {
        ExprKind::If(c, then, els) => {
            collect_expr(f, c, defs);
            collect_block(f, then, defs);
            els.iter().for_each(|x| collect_expr(f, x, defs));
        }
        ExprKind::Block(b) => collect_block(f, b, defs),
        ExprKind::Paren(x) => collect_expr(f, x, defs),
        _ => {}
    }
}
