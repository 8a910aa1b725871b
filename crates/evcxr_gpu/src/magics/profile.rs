//! `%%profile`: runs the cell and prints a table of every kernel it launched, with calls and
//! time per kernel: GPU time from CUDA events on a GPU, host wall time on the CPU backend.

use super::{no_args, require_gpukit, Context, MagicError, Step};
use crate::rewrite::append_epilogue;

const START: &str = "gpukit::profile::start();";

/// Stops profiling and prints the records as a table.
const STOP: &str = "gpukit::synchronize()?; { let __gk_records = gpukit::profile::stop()?; if __gk_records.is_empty() { println!(\"%%profile: no kernel was launched in this cell\"); } else { println!(\"{:<28} {:>7} {:>6} {:>12} {:>12} {:>12} {:>12}\", \"kernel\", \"device\", \"calls\", \"total ms\", \"mean ms\", \"min ms\", \"max ms\"); for r in &__gk_records { println!(\"{:<28} {:>7} {:>6} {:>12.4} {:>12.4} {:>12.4} {:>12.4}\", r.kernel, r.device.to_string(), r.calls, r.total_ms, r.mean_ms(), r.min_ms, r.max_ms); } if __gk_records.iter().any(|r| !r.device.is_cuda()) { println!(\"(cpu rows: host wall time of CPU-backend launches; cuda rows: GPU time from CUDA events)\"); } } }";

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
        assert_eq!(lines[0], START);
        assert_eq!(lines[1], "run();");
        assert!(
            lines[2].starts_with("match launch() { ref __gk_value => { gpukit::synchronize()?;")
        );
        assert!(lines[2].contains("gpukit::profile::stop()?"));
    }

    #[test]
    fn bad_input() {
        let gk = Context { gpukit: true };
        assert!(lower("x", "a", gk).is_err());
        assert!(lower("", " ", gk).unwrap_err().0.contains("needs code"));
    }
}
