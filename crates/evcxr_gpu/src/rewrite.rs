//! Adding statements before and after the Rust of a cell without breaking its final expression.
//!
//! evcxr displays a cell's trailing expression (one without `;`). To run something after the
//! user's code (device synchronisation after every cell, the end of `%%time`), a trailing
//! expression `E` becomes `match E { ref __gk_value => { <epilogue> __gk_value } }`: still the
//! trailing expression, so it is still displayed; `ref` borrows instead of moving, so a variable
//! shown at the end of a cell stays in the session (evcxr itself displays by reference), and
//! temporaries live until evcxr's display statement ends. No new variable reaches the session.
//! Insertions never add line breaks inside the user's code, so error line numbers stay the cell's.

use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Block, Stmt};

/// The statements of a block's body (what a cell is).
pub(crate) struct Statements(pub(crate) Vec<Stmt>);

impl Parse for Statements {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        Block::parse_within(input).map(Statements)
    }
}

/// Where a cell's Rust statements end, as byte offsets into the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The code has no statements (only comments, blank lines or evcxr commands).
    Empty,
    /// The last statement is a trailing expression at `start..end`.
    Expr {
        /// Byte offset of the expression's first character.
        start: usize,
        /// Byte offset just past the expression.
        end: usize,
    },
    /// The last statement ends (with its `;` or `}`) at byte offset `end`.
    Statement {
        /// Byte offset just past the last statement.
        end: usize,
    },
}

/// Replaces evcxr `:` command lines (which come before any Rust) by spaces, keeping offsets.
pub(crate) fn blank_commands(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut in_rust = false;
    for line in code.split_inclusive('\n') {
        let t = line.trim_start_matches(' ');
        let is_command = !in_rust && t.starts_with(':');
        if is_command {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
            continue;
        }
        let trimmed = line.trim();
        if !trimmed.is_empty() && !trimmed.starts_with("//") {
            in_rust = true;
        }
        out.push_str(line);
    }
    out
}

/// Byte offset of a proc-macro2 line/column (1-based line, column in chars) in `code`.
pub(crate) fn offset(code: &str, lc: proc_macro2::LineColumn) -> usize {
    let mut line_start = 0;
    for _ in 1..lc.line {
        match code[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return code.len(),
        }
    }
    let line = &code[line_start..];
    line.char_indices()
        .nth(lc.column)
        .map(|(i, _)| line_start + i)
        .unwrap_or(code.len())
}

/// Finds how the Rust in `code` ends; `None` if it does not parse (evcxr then reports the error).
pub fn tail(code: &str) -> Option<Tail> {
    let blanked = blank_commands(code);
    let stmts = syn::parse_str::<Statements>(&blanked).ok()?.0;
    let Some(last) = stmts.last() else {
        return Some(Tail::Empty);
    };
    let span = last.span();
    let start = offset(&blanked, span.start());
    let end = offset(&blanked, span.end());
    let is_expr = match last {
        Stmt::Expr(_, None) => true,
        Stmt::Macro(m) => m.semi_token.is_none(),
        _ => false,
    };
    Some(if is_expr {
        Tail::Expr { start, end }
    } else {
        Tail::Statement { end }
    })
}

/// Appends `epilogue` (statements, each ending in `;`) after the Rust in `code`, keeping a
/// trailing expression displayed. `None` if `code` does not parse.
pub fn append_epilogue(code: &str, epilogue: &str) -> Option<String> {
    Some(match tail(code)? {
        Tail::Empty => code.to_string(),
        Tail::Statement { end } => format!("{} {epilogue}{}", &code[..end], &code[end..]),
        Tail::Expr { start, end } => format!(
            "{}match {} {{ ref __gk_value => {{ {epilogue} __gk_value }} }}{}",
            &code[..start],
            &code[start..end],
            &code[end..]
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPI: &str = "gpukit::synchronize()?;";

    #[test]
    fn trailing_expression_stays_displayed() {
        let out = append_epilogue("let x = 1;\nx + 1", EPI).unwrap();
        assert_eq!(
            out,
            "let x = 1;\nmatch x + 1 { ref __gk_value => { gpukit::synchronize()?; __gk_value } }"
        );
    }

    #[test]
    fn statements_get_epilogue_after_them_not_after_comments() {
        let out = append_epilogue("let x = 1; // note", EPI).unwrap();
        assert_eq!(out, "let x = 1; gpukit::synchronize()?; // note");
    }

    #[test]
    fn items_and_macros() {
        let out = append_epilogue("fn f() {}", EPI).unwrap();
        assert_eq!(out, "fn f() {} gpukit::synchronize()?;");
        let out = append_epilogue("println!(\"hi\")", EPI).unwrap();
        assert!(out.starts_with("match println!(\"hi\") { ref __gk_value => {"));
        let out = append_epilogue("println!(\"hi\");", EPI).unwrap();
        assert_eq!(out, "println!(\"hi\"); gpukit::synchronize()?;");
    }

    #[test]
    fn lines_are_preserved() {
        let code = "let a = 1;\n\n// c\nlet b = a\n    + 2;\nb";
        let out = append_epilogue(code, EPI).unwrap();
        assert_eq!(out.lines().count(), code.lines().count());
    }

    #[test]
    fn evcxr_commands_are_skipped() {
        let code = ":dep rand = \"0.9\"\nlet x = 2;\nx";
        let out = append_epilogue(code, EPI).unwrap();
        assert!(out.starts_with(":dep rand = \"0.9\"\nlet x = 2;\nmatch x { ref __gk_value"));
        assert_eq!(append_epilogue(":vars", EPI).unwrap(), ":vars");
    }

    #[test]
    fn unicode_columns() {
        let code = "let s = \"é\"; s";
        let out = append_epilogue(code, EPI).unwrap();
        assert!(
            out.ends_with("match s { ref __gk_value => { gpukit::synchronize()?; __gk_value } }")
        );
    }

    #[test]
    fn empty_and_invalid() {
        assert_eq!(tail("// only a comment\n"), Some(Tail::Empty));
        assert_eq!(tail("let x = ;"), None);
        assert_eq!(append_epilogue("", EPI).unwrap(), "");
    }
}
