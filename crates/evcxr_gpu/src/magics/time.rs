//! `%time STATEMENT` and `%%time`: wall time of the code, including device synchronisation.

use super::{no_args, Context, MagicError, Step};
use crate::rewrite::append_epilogue;

/// A closure `__gk_fmt(seconds) -> String` with IPython-like units ("1.23 ms"), for generated code.
pub(crate) const FMT_TIME: &str = "let __gk_fmt = |s: f64| -> String { let (v, u) = if s >= 1.0 { (s, \"s\") } else if s >= 1e-3 { (s * 1e3, \"ms\") } else if s >= 1e-6 { (s * 1e6, \"µs\") } else { (s * 1e9, \"ns\") }; let d = if v >= 100.0 { 0 } else if v >= 10.0 { 1 } else { 2 }; format!(\"{:.*} {}\", d, v, u) };";

const START: &str = "let __gk_t0 = std::time::Instant::now();";

/// The statements run after the timed code: synchronise, then print the wall time.
fn epilogue(ctx: Context) -> String {
    let (sync, note) = if ctx.gpukit {
        ("gpukit::synchronize()?; ", " (device synchronised)")
    } else {
        ("", "")
    };
    format!(
        "{sync}{{ {FMT_TIME} println!(\"Wall time: {{}}{note}\", __gk_fmt(__gk_t0.elapsed().as_secs_f64())); }}"
    )
}

fn timed(code: &str, ctx: Context) -> String {
    let epi = epilogue(ctx);
    append_epilogue(code, &epi).unwrap_or_else(|| format!("{code}\n{epi}"))
}

/// Lowers `%%time`: the body, timed; its trailing expression is still displayed.
pub fn lower_cell(args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    no_args("%%time", args)?;
    if body.trim().is_empty() {
        return Err(MagicError("%%time needs code below the magic line".into()));
    }
    Ok(Step::Rust(format!("{START}\n{}", timed(body, ctx))))
}

/// Lowers `%time STATEMENT` (one line).
pub fn lower_line(args: &str, ctx: Context) -> Result<Step, MagicError> {
    if args.trim().is_empty() {
        return Err(MagicError("%time needs a statement: %time EXPR".into()));
    }
    Ok(Step::Rust(format!("{START} {}", timed(args.trim(), ctx))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn cell_keeps_lines_and_tail() {
        let Step::Rust(code) = lower_cell("", "let a = 2;\na * 3", GK).unwrap() else {
            panic!("not rust")
        };
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], START);
        assert_eq!(lines[1], "let a = 2;");
        assert!(lines[2].starts_with("match a * 3 { ref __gk_value => { gpukit::synchronize()?;"));
        assert!(lines[2].contains("Wall time") && lines[2].ends_with("__gk_value } }"));
    }

    #[test]
    fn line_form_is_one_line() {
        let Step::Rust(code) = lower_line(" work();", GK).unwrap() else {
            panic!("not rust")
        };
        assert_eq!(code.lines().count(), 1);
        assert!(code.starts_with(START) && code.contains("work(); gpukit::synchronize()?;"));
    }

    #[test]
    fn without_gpukit_no_sync() {
        let Step::Rust(code) = lower_line("1", Context { gpukit: false }).unwrap() else {
            panic!("not rust")
        };
        assert!(!code.contains("gpukit"));
    }

    #[test]
    fn bad_input() {
        assert!(lower_cell("-x", "1", GK)
            .unwrap_err()
            .0
            .contains("no arguments"));
        assert!(lower_cell("", "  \n", GK)
            .unwrap_err()
            .0
            .contains("needs code"));
        assert!(lower_line(" ", GK)
            .unwrap_err()
            .0
            .contains("needs a statement"));
    }
}
