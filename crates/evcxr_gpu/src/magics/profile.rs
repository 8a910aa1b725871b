//! `%%profile`: runs the cell and prints a table of every kernel it launched, with calls and
//! GPU time measured by CUDA events. On the CPU backend it says that it needs a CUDA GPU and runs
//! the cell unprofiled.

use super::{no_args, require_gpukit, Context, MagicError, Step};
use crate::rewrite::append_epilogue;

const START: &str = "let __gk_profiling = gpukit::default_device().is_cuda(); if __gk_profiling { gpukit::profile::start()?; } else { println!(\"%%profile needs a CUDA GPU (the default device is {}); running the cell without profiling\", gpukit::default_device()); }";

const STOP: &str =
    "if __gk_profiling { gpukit::synchronize()?; println!(\"{}\", gpukit::profile::stop()?); }";

/// Lowers `%%profile` with the cell body.
pub fn lower(args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    no_args("%%profile", args)?;
    require_gpukit("%%profile", ctx)?;
    if body.trim().is_empty() {
        return Err(MagicError(
            "%%profile needs code below the magic line".into(),
        ));
    }
    let body = append_epilogue(body, STOP).unwrap_or_else(|| format!("{body}\n{STOP}"));
    Ok(Step::Rust(format!("{START}\n{body}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_cell_between_start_and_stop() {
        let Step::Rust(code) = lower("", "run();\nlaunch()", Context { gpukit: true }).unwrap()
        else {
            panic!("not rust")
        };
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].contains("gpukit::profile::start()?"));
        assert_eq!(lines[1], "run();");
        assert!(lines[2].starts_with("{ let __gk_value = launch(); if __gk_profiling"));
    }

    #[test]
    fn bad_input() {
        let gk = Context { gpukit: true };
        assert!(lower("x", "a", gk).is_err());
        assert!(lower("", " ", gk).unwrap_err().0.contains("needs code"));
    }
}
