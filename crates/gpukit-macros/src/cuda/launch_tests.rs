//! Launch tests: the checks a kernel still makes, decided once per launch from its arguments.
//!
//! In the lesson blur, `out[[y, x, c]]` sits under a guard on `img`'s shape (`y < h`, `x < w`
//! with `h = img.shape(0)`, `w = img.shape(1)`) and in `for c in 0..img.shape(2)`: nothing proves
//! it in range inside the kernel, since `out` may be smaller than `img`. But every thread that
//! reaches it has `y < img.shape(0)`, so `img.shape(0) <= out.shape(0)` — a fact about the
//! launch's arguments, the same for every thread — proves its first index, and so on per axis.
//!
//! For each access that keeps its check, [`Facts::launch_tests`] finds such tests: a bound `U`
//! known above the index (from a guard, a loop range, a clamp, a remainder or a constant) that
//! is the same for the whole launch (an array parameter's length or axis, a `usize` scalar
//! parameter, a constant), and the test `U <= bound`. When every checked access of a kernel has
//! its tests, the kernel gets an unchecked twin: a launch whose arguments pass all the tests runs
//! the twin (no access can then be out of range), any other launch the checked kernel, which
//! reports the first bad index exactly as before.

use super::{Facts, Term};
use crate::ir::*;

/// `lhs <= rhs` (or `lhs < rhs` when `strict`), between values fixed for a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::cuda) struct LaunchTest {
    /// The bound known above the index.
    pub(in crate::cuda) lhs: Term,
    /// `<` instead of `<=` (the index itself is the launch value).
    pub(in crate::cuda) strict: bool,
    /// The array's length or axis.
    pub(in crate::cuda) rhs: Term,
}

impl Facts<'_> {
    /// The tests that prove `a[ix]` in range for every thread reaching it here, or `None` when
    /// some index has no bound fixed for the launch. Empty when the access is proven already.
    pub(in crate::cuda) fn launch_tests(&self, a: VarId, ix: &[Expr]) -> Option<Vec<LaunchTest>> {
        let mut tests = Vec::new();
        for (axis, i) in ix.iter().enumerate() {
            let bound = if self.is_view(a) {
                Term::Shape(a, axis)
            } else {
                self.canon(Term::Len(a))
            };
            if self.below(i, &bound, 0).is_some() {
                continue;
            }
            let (lhs, strict) = self.launch_bound(i, 0)?;
            if lhs != bound || strict {
                tests.push(LaunchTest {
                    lhs,
                    strict,
                    rhs: bound,
                });
            }
        }
        Some(tests)
    }

    /// A value fixed for the launch that `e` is below (`strict == false`: `e < U`) or equal to
    /// (`strict == true`: `e == U`, a launch value itself).
    fn launch_bound(&self, e: &Expr, depth: usize) -> Option<(Term, bool)> {
        if depth > 8 {
            return None;
        }
        let e = super::strip(e);
        match self.term(e) {
            Some(Term::Lit(n)) => return Some((Term::Lit(n), true)),
            Some(Term::Var(v)) => {
                if self.is_launch_value(&Term::Var(v)) {
                    return Some((Term::Var(v), true));
                }
                let fixed = self
                    .facts()
                    .find(|f| f.index == v && self.is_launch_value(&f.bound));
                if let Some(f) = fixed {
                    return Some((f.bound.clone(), false));
                }
                return self
                    .defs
                    .get(&v)
                    .and_then(|d| self.launch_bound(d, depth + 1));
            }
            _ => {}
        }
        // The forms `below` knows, with their bound fixed for the launch and known positive.
        let b = match &e.kind {
            ExprKind::Binary(BinOp::Sub, clamped, one) if super::is_lit(one, 1) => {
                let ExprKind::Method(min, inner, hi) = &super::strip(clamped).kind else {
                    return None;
                };
                let ExprKind::Method(max, _, lo) = &super::strip(inner).kind else {
                    return None;
                };
                let lo_ok = super::lit_value(&lo[0]).is_some_and(|l| l >= 1);
                if min.name != "min" || max.name != "max" || !lo_ok {
                    return None;
                }
                self.term(&hi[0])?
            }
            ExprKind::Method(min, _, hi) if min.name == "min" => match &super::strip(&hi[0]).kind {
                ExprKind::Binary(BinOp::Sub, b, one) if super::is_lit(one, 1) => self.term(b)?,
                _ => return None,
            },
            ExprKind::Binary(BinOp::Rem, _, b) => self.term(b)?,
            _ => return None,
        };
        (self.is_launch_value(&b) && self.positive(&b)).then_some((b, false))
    }

    /// Whether a term has one value for a whole launch: a constant, an array parameter's length
    /// or axis, an immutable `usize` scalar parameter.
    fn is_launch_value(&self, t: &Term) -> bool {
        let is_param = |v: &VarId| self.f.params.iter().any(|p| p.var == *v);
        match t {
            Term::Lit(_) => true,
            Term::Len(a) | Term::Shape(a, _) => is_param(a),
            Term::Var(v) => is_param(v) && !self.f.vars[*v].mutable && self.is_usize(*v),
        }
    }
}
