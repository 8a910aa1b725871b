//! Typing `let` bindings from the compiler when evcxr's analysis cannot.
//!
//! evcxr persists a cell's variables under the types rust-analyzer infers, and its
//! rust-analyzer does not expand procedural macros (evcxr 0.22 starts no proc-macro server). Items
//! that gpukit's attribute macros generate look to it like the code as written: a `#[vectorize]`
//! function seems to return the scalar of its signature (so `hypotenuse(&a, &b)?` types as `!`),
//! a `#[kernel]` looks like a function without methods (`k.source()` cannot be typed).
//!
//! When a step fails that way, the kernel asks the compiler instead: it checks the cell with
//! every untyped top-level `let` annotated with a marker type of its own ([`probe_code`]); rustc
//! then names each real type in a "mismatched types" error (`expected `__EvcxrGpuProbe0`, found
//! `Array<f32>``), which [`types_from_labels`] reads. The step then runs with those types written
//! into its `let`s ([`annotate`]); nothing of the cell runs before that. The types are rustc's
//! short names, so [`usable_type`] drops the ones that cannot be written in a cell (closures,
//! uninferred `_`, function items, borrowed lifetimes).

use crate::rewrite::{blank_commands, offset, Statements};
use std::collections::BTreeMap;
use syn::spanned::Spanned;
use syn::{Pat, Stmt};

/// The prefix of the marker types of a probe.
pub const PROBE: &str = "__EvcxrGpuProbe";

/// A top-level `let` without a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// Byte offset just past its pattern, where `: Type` goes.
    pub at: usize,
    /// The pattern as written (`x`, `mut y`, `(a, b)`).
    pub pattern: String,
}

/// The untyped top-level `let` bindings of `code` (which may start with evcxr `:` commands), and
/// the byte offset of its first statement. `None` if the code does not parse.
pub fn untyped_lets(code: &str) -> Option<(Vec<Binding>, usize)> {
    let blanked = blank_commands(code);
    let stmts = syn::parse_str::<Statements>(&blanked).ok()?.0;
    let first = stmts
        .first()
        .map(|s| offset(&blanked, s.span().start()))
        .unwrap_or(code.len());
    let lets = stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Local(local) if !matches!(local.pat, Pat::Type(_)) => {
                let start = offset(&blanked, local.pat.span().start());
                let at = offset(&blanked, local.pat.span().end());
                Some(Binding {
                    at,
                    pattern: code.get(start..at)?.to_string(),
                })
            }
            _ => None,
        })
        .collect();
    Some((lets, first))
}

/// `code` with `: T` written after the bindings given a type in `types` (by index in `lets`).
pub fn annotate(code: &str, lets: &[Binding], types: &BTreeMap<usize, String>) -> String {
    let mut out = code.to_string();
    let mut at: Vec<(usize, &str)> = types
        .iter()
        .filter_map(|(i, t)| lets.get(*i).map(|b| (b.at, t.as_str())))
        .collect();
    at.sort_by_key(|(pos, _)| std::cmp::Reverse(*pos));
    for (pos, ty) in at {
        out.insert_str(pos, &format!(": {ty}"));
    }
    out
}

/// Where the annotation of binding `index` lies in `annotate(code, lets, types)`: its line and
/// its first and past-the-end columns (1-based, in characters, as evcxr reports spans).
pub fn annotation_span(
    code: &str,
    lets: &[Binding],
    types: &BTreeMap<usize, String>,
    index: usize,
) -> Option<(usize, usize, usize)> {
    let at = lets.get(index)?.at;
    let ty = types.get(&index)?;
    let before = annotate(
        code,
        lets,
        &types.range(..index).map(|(i, t)| (*i, t.clone())).collect(),
    );
    // Bindings before `index` are earlier in the code, so its offset moved by their annotations.
    let shift: usize = types.range(..index).map(|(_, t)| t.len() + 2).sum();
    let pos = at + shift;
    let head = before.get(..pos)?;
    let line = head.matches('\n').count() + 1;
    let col = head.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some((line, col, col + 2 + ty.chars().count()))
}

/// `code` with every binding in `lets` typed as a marker type of its own (`__EvcxrGpuProbe<i>`),
/// declared before the first statement (at byte `first`): compiling it fails with one
/// "mismatched types" error per binding that names its type.
pub fn probe_code(code: &str, lets: &[Binding], first: usize) -> String {
    let types: BTreeMap<usize, String> = (0..lets.len())
        .map(|i| (i, format!("{PROBE}{i}")))
        .collect();
    let annotated = annotate(code, lets, &types);
    let decls: String = (0..lets.len())
        .map(|i| format!("#[allow(non_camel_case_types)] struct {PROBE}{i}; "))
        .collect();
    // `first` is before every binding, so annotating did not move it.
    format!("{}{decls}{}", &annotated[..first], &annotated[first..])
}

/// The types rustc gave the bindings of a probe, by index, from the labels of its errors
/// (`expected `__EvcxrGpuProbe3`, found `String``). Types that cannot be written in a cell are
/// left out.
pub fn types_from_labels<'a>(labels: impl IntoIterator<Item = &'a str>) -> BTreeMap<usize, String> {
    let mut found = BTreeMap::new();
    for label in labels {
        let Some(rest) = label.strip_prefix("expected `") else {
            continue;
        };
        let Some(rest) = rest.strip_prefix(PROBE) else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(index) = digits.parse::<usize>() else {
            continue;
        };
        let Some(ty) = rest[digits.len()..]
            .strip_prefix("`, found `")
            .and_then(|t| t.strip_suffix('`'))
        else {
            continue;
        };
        if usable_type(ty) {
            found.entry(index).or_insert_with(|| ty.to_string());
        }
    }
    found
}

/// Whether rustc's name for a type can be written as a `let` type in a cell.
pub fn usable_type(ty: &str) -> bool {
    if ty.is_empty()
        || ty.contains('{')
        || ty.contains('`')
        || ty.contains("impl ")
        || ty.contains("[type error]")
        || ty.contains('!')
        || ty.contains(PROBE)
    {
        return false;
    }
    // Only `'static` can outlive the cell; an uninferred `_` is no type.
    let mut words = ty.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''));
    !words.any(|w| w == "_" || (w.starts_with('\'') && w != "'static"))
        && syn::parse_str::<syn::Type>(ty).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_untyped_top_level_lets() {
        let code = ":dep x\nlet a = f();\nlet b: u8 = 1;\nlet mut c = g(&a)?; { let inner = 1; }\nlet (d, e) = (1, 2);\nc";
        let (lets, first) = untyped_lets(code).unwrap();
        let patterns: Vec<&str> = lets.iter().map(|l| l.pattern.as_str()).collect();
        assert_eq!(patterns, ["a", "mut c", "(d, e)"]);
        assert_eq!(&code[first..first + 5], "let a");
        assert_eq!(
            &code[..lets[1].at],
            ":dep x\nlet a = f();\nlet b: u8 = 1;\nlet mut c"
        );
        assert!(untyped_lets("let x = ;").is_none());
        assert_eq!(untyped_lets("").unwrap(), (vec![], 0));
    }

    #[test]
    fn probes_and_annotates() {
        let code = "let a = f();\nlet é = g(&a)?;";
        let (lets, first) = untyped_lets(code).unwrap();
        let probe = probe_code(code, &lets, first);
        assert!(probe.starts_with(&format!("#[allow(non_camel_case_types)] struct {PROBE}0; ")));
        assert!(probe.contains(&format!(
            "let a: {PROBE}0 = f();\nlet é: {PROBE}1 = g(&a)?;"
        )));
        let types: BTreeMap<usize, String> = [(1, "Array<f32>".to_string())].into();
        let annotated = annotate(code, &lets, &types);
        assert_eq!(annotated, "let a = f();\nlet é: Array<f32> = g(&a)?;");
        assert_eq!(annotation_span(code, &lets, &types, 1), Some((2, 6, 18)));
        assert_eq!(annotation_span(code, &lets, &types, 0), None);
        let both: BTreeMap<usize, String> = [(0, "u8".to_string()), (1, "f32".to_string())].into();
        assert_eq!(
            annotate(code, &lets, &both),
            "let a: u8 = f();\nlet é: f32 = g(&a)?;"
        );
        assert_eq!(annotation_span(code, &lets, &both, 0), Some((1, 6, 10)));
        let one_line = "let a = f(); let b = g();";
        let (lets, _) = untyped_lets(one_line).unwrap();
        let both: BTreeMap<usize, String> = [(0, "u8".to_string()), (1, "f32".to_string())].into();
        let annotated = annotate(one_line, &lets, &both);
        assert_eq!(annotated, "let a: u8 = f(); let b: f32 = g();");
        let (line, start, end) = annotation_span(one_line, &lets, &both, 1).unwrap();
        assert_eq!((line, &annotated[start - 1..end - 1]), (1, ": f32"));
    }

    #[test]
    fn reads_types_from_mismatch_labels() {
        let labels = [
            format!("expected `{PROBE}0`, found `Array<f32>`"),
            format!("expected `{PROBE}1`, found integer"),
            format!("expected `{PROBE}2`, found `Result<Array<f32>, Error>`"),
            format!("expected `{PROBE}3`, found `Vec<_>`"),
            format!("expected `{PROBE}4`, found closure"),
            "expected due to this".to_string(),
            format!("expected `{PROBE}0`, found `Other`"),
            format!("expected `{PROBE}5`, found `&str`"),
        ];
        let found = types_from_labels(labels.iter().map(String::as_str));
        let want: BTreeMap<usize, String> = [
            (0, "Array<f32>".to_string()),
            (2, "Result<Array<f32>, Error>".to_string()),
            (5, "&str".to_string()),
        ]
        .into();
        assert_eq!(found, want);
    }

    #[test]
    fn usable_types() {
        for ok in [
            "String",
            "&'static str",
            "(u8, Array<f32>)",
            "[f32; 3]",
            "Box<dyn Fn()>",
            "bump",
        ] {
            assert!(usable_type(ok), "{ok}");
        }
        for bad in [
            "Vec<_>",
            "&'a str",
            "fn(f32) -> f32 {add}",
            "impl Iterator<Item = u8>",
            "!",
            "{integer}",
            "",
            "Result<!, E>",
        ] {
            assert!(!usable_type(bad), "{bad}");
        }
    }
}
