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

    /// Puts `lines` (what the process printed before it failed) at the top of the traceback.
    pub fn prepend(&mut self, lines: Vec<String>) {
        if !lines.is_empty() {
            self.traceback.splice(0..0, lines);
        }
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

/// The message of a panic report as Rust's panic hook prints it: the line(s) after
/// `thread '…' panicked at FILE:LINE:COL:`, before the backtrace; the first line of the report
/// if it has another shape.
pub fn panic_message(report: &[String]) -> String {
    let mut lines = report.iter().map(|l| l.trim_end());
    let first = lines
        .clone()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("panic");
    if !lines.any(|l| l.starts_with("thread ") && l.contains(" panicked at ")) {
        return first.to_string();
    }
    let message: Vec<&str> = lines
        .take_while(|l| {
            !l.starts_with("stack backtrace:") && !l.starts_with("note: run with `RUST_BACKTRACE")
        })
        .collect();
    let message = message.join("\n");
    let message = message.trim();
    if message.is_empty() {
        first.to_string()
    } else {
        message.to_string()
    }
}

/// A panic report without the backtrace frames below the cell's code (evcxr's runtime and the
/// kernel's `main`, the same in every report): frames are kept up to the last one in the
/// function evcxr wraps the cell in (`run_user_code_N`), or, where frames could not be named,
/// up to the first of evcxr's runtime.
pub fn trim_backtrace(report: Vec<String>) -> Vec<String> {
    let is_frame = |l: &str| {
        let t = l.trim_start();
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && t[digits..].starts_with(": ")
    };
    let after_user = report
        .iter()
        .rposition(|l| is_frame(l) && l.contains("run_user_code_"))
        .and_then(|last| {
            report
                .iter()
                .skip(last + 1)
                .position(|l| is_frame(l))
                .map(|i| i + last + 1)
        });
    let runtime = || {
        report
            .iter()
            .position(|l| is_frame(l) && l.contains("evcxr::runtime::"))
    };
    let Some(cut) = after_user.or_else(runtime) else {
        return report;
    };
    let resume = report
        .iter()
        .skip(cut)
        .position(|l| !is_frame(l) && !l.trim_start().starts_with("at "))
        .map(|i| i + cut)
        .unwrap_or(report.len());
    let mut out = report[..cut].to_vec();
    out.push(format!(
        "      ({} frames of evcxr's runtime left out)",
        report[cut..resume].iter().filter(|l| is_frame(l)).count()
    ));
    out.extend_from_slice(&report[resume..]);
    out
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
    fn panic_messages() {
        let report: Vec<String> = [
            "",
            "thread '<unnamed>' (3636) panicked at src/lib.rs:106:1:",
            "deliberate",
            "stack backtrace:",
            "   0: __rustc::rust_begin_unwind",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(panic_message(&report), "deliberate");
        let two = [
            "thread 'main' panicked at a.rs:1:1:",
            "line one",
            "line two",
        ]
        .map(String::from);
        assert_eq!(panic_message(&two), "line one\nline two");
        assert_eq!(
            panic_message(&["custom hook text".to_string()]),
            "custom hook text"
        );
        assert_eq!(panic_message(&[]), "panic");
        let mut e = CellError::simple("ProcessTerminated", "signal 6");
        e.prepend(vec!["fatal: out of memory".into()]);
        assert_eq!(e.traceback[0], "fatal: out of memory");
        assert_eq!(e.traceback.len(), 2);
    }

    #[test]
    fn backtraces_stop_at_the_cell() {
        let report: Vec<String> = [
            "thread '<unnamed>' panicked at src/lib.rs:1:1:",
            "boom",
            "stack backtrace:",
            "   0: __rustc::rust_begin_unwind",
            "             at /rustc/x/panicking.rs:689:5",
            "   1: ctx::helper",
            "   2: ctx::run_user_code_6::{{closure}}",
            "   3: core::ops::function::FnOnce::call_once",
            "             at /rustc/x/function.rs:1:1",
            "  12: evcxr_gpu::main",
            "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
        ]
        .map(String::from)
        .to_vec();
        let t = trim_backtrace(report.clone());
        assert_eq!(t[..7], report[..7]);
        assert_eq!(t[7], "      (2 frames of evcxr's runtime left out)");
        assert_eq!(t[8], report[10]);
        assert_eq!(t.len(), 9);
        let unnamed: Vec<String> = [
            "stack backtrace:",
            "   2: <unknown>",
            "  10: evcxr::runtime::Runtime::run_loop",
            "  11: evcxr::runtime::runtime_hook",
            "  12: evcxr_gpu::main",
            "note: Some details are omitted",
        ]
        .map(String::from)
        .to_vec();
        let t = trim_backtrace(unnamed);
        assert_eq!(t[1], "   2: <unknown>");
        assert_eq!(t[2], "      (3 frames of evcxr's runtime left out)");
        assert_eq!(t.len(), 4);
        let no_frames = vec!["custom".to_string()];
        assert_eq!(trim_backtrace(no_frames.clone()), no_frames);
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
