//! Turning evcxr and magic errors into Jupyter errors: name, value and a traceback whose
//! compile errors point at cell lines.

use crate::magics::MagicError;
use evcxr::CompilationError;

/// An error as Jupyter shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellError {
    /// Short name, e.g. `CompilationError`.
    pub ename: String,
    /// One-line description.
    pub evalue: String,
    /// The lines shown to the user (ANSI colours allowed).
    pub traceback: Vec<String>,
}

const RED: &str = "\x1b[1;31m";
const BLUE: &str = "\x1b[1;34m";
const RESET: &str = "\x1b[0m";

impl CellError {
    /// An error with a one-line traceback.
    pub fn simple(ename: &str, evalue: &str) -> CellError {
        CellError {
            ename: ename.into(),
            evalue: evalue.into(),
            traceback: vec![format!("{RED}{ename}{RESET}: {evalue}")],
        }
    }

    /// A magic that could not be run.
    pub fn magic(e: &MagicError) -> CellError {
        CellError::simple("MagicError", &e.0)
    }

    /// The cell was interrupted; evcxr restarts its process, so earlier variables are gone.
    pub fn interrupted() -> CellError {
        CellError::simple(
            "KeyboardInterrupt",
            "the cell was interrupted; the Rust process was restarted, so variables from earlier cells are gone (definitions and :dep stay)",
        )
    }

    /// An evcxr error for the cell whose source is `cell`.
    pub fn evcxr(err: &evcxr::Error, cell: &str) -> CellError {
        match err {
            evcxr::Error::CompilationErrors(errors) => compilation(errors, cell),
            evcxr::Error::SubprocessTerminated(msg) => CellError::simple(
                "ProcessTerminated",
                &format!("{}; variables from earlier cells are gone", msg.trim()),
            ),
            evcxr::Error::TypeRedefinedVariablesLost(vars) => CellError::simple(
                "VariablesLost",
                &format!(
                    "a type was redefined, so these variables were dropped: {}",
                    vars.join(", ")
                ),
            ),
            evcxr::Error::Message(msg) => {
                let msg = msg.trim();
                let first = msg.lines().next().unwrap_or("error").to_string();
                CellError {
                    ename: "Error".into(),
                    evalue: first,
                    traceback: msg.lines().map(str::to_string).collect(),
                }
            }
        }
    }
}

/// Renders rustc errors rustc-style, with cell line numbers and the cell's source lines.
pub fn compilation(errors: &[CompilationError], cell: &str) -> CellError {
    let lines: Vec<&str> = cell.split('\n').collect();
    let mut tb = Vec::new();
    for e in errors {
        let code = e.code().map(|c| format!("[{c}]")).unwrap_or_default();
        tb.push(format!("{RED}{}{code}{RESET}: {}", e.level(), e.message()));
        for m in e.spanned_messages() {
            match &m.span {
                Some(span) => {
                    let n = span.start_line;
                    let text = lines.get(n.wrapping_sub(1)).copied().unwrap_or("");
                    let width = n.to_string().len();
                    tb.push(format!(
                        "{BLUE}{:>width$}-->{RESET} cell line {n}, column {}",
                        "", span.start_column
                    ));
                    tb.push(format!("{BLUE}{n} |{RESET} {text}"));
                    let start = span.start_column.saturating_sub(1);
                    let len = if span.end_line == span.start_line {
                        span.end_column.saturating_sub(span.start_column).max(1)
                    } else {
                        text.chars().count().saturating_sub(start).max(1)
                    };
                    tb.push(format!(
                        "{BLUE}{:>width$} |{RESET} {}{RED}{}{RESET} {}",
                        "",
                        " ".repeat(start),
                        "^".repeat(len),
                        m.label
                    ));
                }
                None if !m.label.is_empty() => tb.push(format!("  = {}", m.label)),
                None => {}
            }
        }
        for h in e.help() {
            tb.push(format!("  = help: {h}"));
        }
        if let Some(hint) = e.evcxr_extra_hint() {
            tb.push(format!("  = note: {hint}"));
        }
    }
    let evalue = errors
        .first()
        .map(|e| e.message())
        .unwrap_or_else(|| "compilation failed".into());
    CellError {
        ename: "CompilationError".into(),
        evalue,
        traceback: tb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_errors() {
        let e = CellError::magic(&MagicError("bad".into()));
        assert_eq!(e.ename, "MagicError");
        assert!(e.traceback[0].contains("bad"));
        assert_eq!(CellError::interrupted().ename, "KeyboardInterrupt");
    }

    #[test]
    fn evcxr_messages() {
        let e = CellError::evcxr(&evcxr::Error::Message("first\nsecond".into()), "");
        assert_eq!(e.evalue, "first");
        assert_eq!(e.traceback.len(), 2);
        let e = CellError::evcxr(&evcxr::Error::SubprocessTerminated("signal 9".into()), "");
        assert!(e.evalue.contains("variables from earlier cells are gone"));
    }
}
