//! The session's side of [`crate::annotate`]: noticing that evcxr could not type a step's
//! variables, asking the compiler, and running the step again with the compiler's types.

use super::{InputFn, Worker};
use crate::annotate::{annotate, annotation_span, probe_code, types_from_labels, untyped_lets};
use evcxr::{CompilationError, EvalOutputs};
use std::collections::BTreeMap;

/// A step's result, whether it was rewritten to print the completion markers, and the code that
/// ran.
pub(super) type Run = (Result<EvalOutputs, evcxr::Error>, bool, String);

/// Whether `e` says evcxr's analysis could not type a variable: it gave up, or the type it
/// chose does not compile (an error in the code evcxr generates to store variables).
pub(super) fn is_inference_failure(e: &evcxr::Error) -> bool {
    match e {
        evcxr::Error::Message(m) => m.contains("Couldn't automatically determine type of variable"),
        evcxr::Error::CompilationErrors(errors) => errors
            .iter()
            .any(|e| e.level() == "error" && !e.is_from_user_code()),
        _ => false,
    }
}

/// Whether compile error `e` points into the cell at `line`, columns `start..end`.
fn touches(e: &CompilationError, (line, start, end): (usize, usize, usize)) -> bool {
    e.spanned_messages().iter().filter_map(|m| m.span).any(|s| {
        let from = if s.start_line == line {
            s.start_column
        } else {
            0
        };
        let to = if s.end_line == line {
            s.end_column
        } else {
            usize::MAX
        };
        s.start_line <= line && line <= s.end_line && from < end && start < to
    })
}

impl Worker {
    /// rustc's types for the bindings `lets` of `code`, by index (see
    /// [`crate::annotate::probe_code`]); nothing of the cell runs.
    fn compiler_types(
        &mut self,
        code: &str,
        lets: &[crate::annotate::Binding],
        first: usize,
    ) -> BTreeMap<usize, String> {
        let probe = probe_code(code, lets, first);
        let Ok(ctx) = &mut self.ctx else {
            return BTreeMap::new();
        };
        match ctx.check(&probe) {
            Ok(errors) => types_from_labels(
                errors
                    .iter()
                    .flat_map(|e| e.spanned_messages().iter().map(|m| m.label.as_str())),
            ),
            Err(_) => BTreeMap::new(),
        }
    }

    /// After `code` failed because evcxr could not type its variables: runs it again with the
    /// types the compiler gives its untyped `let`s written in. Annotations the compiler rejects
    /// (a type name not in scope here) are dropped and the rest tried again. Returns the new
    /// run, or `None` (with, in `note`, what the compiler said) when no annotation helped.
    pub(super) fn run_with_compiler_types(
        &mut self,
        code: &str,
        input: &Option<InputFn>,
        note: &mut Option<String>,
    ) -> Result<Option<Run>, crate::session::CellError> {
        let Some((mut lets, first)) = untyped_lets(code) else {
            return Ok(None);
        };
        // The magics' own variables have types the analysis knows.
        lets.retain(|b| {
            !b.pattern
                .trim_start_matches("mut ")
                .trim_start()
                .starts_with(crate::session::vars::RESERVED_PREFIX)
        });
        if lets.is_empty() {
            return Ok(None);
        }
        let mut types = self.compiler_types(code, &lets, first);
        let said: Vec<String> = types
            .iter()
            .map(|(i, t)| format!("`{}: {t}`", lets[*i].pattern))
            .collect();
        while !types.is_empty() {
            let annotated = annotate(code, &lets, &types);
            let (result, marked) = self.run_step(&annotated, input)?;
            let rejected: Vec<usize> = match &result {
                Err(evcxr::Error::CompilationErrors(errors)) => types
                    .keys()
                    .copied()
                    .filter(|i| {
                        annotation_span(code, &lets, &types, *i)
                            .is_some_and(|span| errors.iter().any(|e| touches(e, span)))
                    })
                    .collect(),
                _ => Vec::new(),
            };
            if rejected.is_empty() {
                if result.as_ref().err().is_some_and(is_inference_failure) {
                    break;
                }
                return Ok(Some((result, marked, annotated)));
            }
            for i in rejected {
                types.remove(&i);
            }
        }
        if !said.is_empty() {
            *note = Some(format!(
                "evcxr_gpu: the analysis cannot see what macros generate; the compiler types {}. Writing the type in the `let` may help.",
                said.join(", ")
            ));
        }
        Ok(None)
    }
}
