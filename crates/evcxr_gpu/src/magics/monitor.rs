//! `%%monitor [--interval MS]`: runs the cell while sampling the GPUs, with a chart of
//! utilisation and memory that updates in place as the cell runs and stays as its output.
//! Without an NVIDIA GPU it says so in one line and the cell runs as usual.

use super::{require_gpukit, Context, MagicError, Step};
use crate::rewrite::append_epilogue;

/// The sampling interval without `--interval`, ms (gpukit's `nvml::DEFAULT_INTERVAL`).
pub const DEFAULT_INTERVAL_MS: u64 = 100;

/// The shortest and longest sampling interval, ms (gpukit's `nvml::MIN_INTERVAL` and
/// `MAX_INTERVAL`).
pub const INTERVAL_LIMITS_MS: (u64, u64) = (20, 60_000);

const USAGE: &str = "usage: %%monitor [--interval MS]";

/// The monitor, started before the cell's code (the cell's variables stay in the session; this
/// one is the kernel's and `:vars` leaves it out).
const START: &str = "let mut __gk_monitor = gpukit::monitor::LiveMonitor::start";

/// After the cell: wait for the GPU, then draw the final chart. A cell that returns early
/// drops the monitor, which draws it too.
const STOP: &str = "gpukit::synchronize()?; __gk_monitor.finish();";

/// Parses `[--interval MS]` (the words after a magic's own arguments), in milliseconds.
pub(crate) fn parse_interval(magic: &str, words: &[&str], usage: &str) -> Result<u64, MagicError> {
    match words {
        [] => Ok(DEFAULT_INTERVAL_MS),
        ["--interval", rest @ ..] => {
            let Some((ms, extra)) = rest.split_first() else {
                return Err(MagicError(format!(
                    "{magic} --interval needs a number of milliseconds; {usage}"
                )));
            };
            if let Some(x) = extra.first() {
                return Err(MagicError(format!("{magic} does not take `{x}`; {usage}")));
            }
            let (lo, hi) = INTERVAL_LIMITS_MS;
            match ms.parse::<u64>() {
                Ok(v) if (lo..=hi).contains(&v) => Ok(v),
                _ => Err(MagicError(format!(
                    "{magic} --interval needs a whole number of milliseconds from {lo} to {hi} \
                     (NVML's counters do not change faster than every 20 ms), got `{ms}`"
                ))),
            }
        }
        [x, ..] => Err(MagicError(format!("{magic} does not take `{x}`; {usage}"))),
    }
}

/// Rust for a `Duration` of `ms` milliseconds.
pub(crate) fn interval_code(ms: u64) -> String {
    format!("std::time::Duration::from_millis({ms})")
}

/// Lowers `%%monitor [--interval MS]` with the cell body.
pub fn lower(args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let interval = parse_interval("%%monitor", &words, USAGE)?;
    require_gpukit("%%monitor", ctx)?;
    if body.trim().is_empty() {
        return Err(MagicError(
            "%%monitor needs code below the magic line".into(),
        ));
    }
    let body = append_epilogue(body, STOP).unwrap_or_else(|| format!("{body}\n{STOP}"));
    Ok(Step::Rust(format!(
        "{START}({})?;\n{body}",
        interval_code(interval)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn wraps_the_cell_between_start_and_finish() {
        let Step::Rust(code) = lower("", "let a = work();\na + 1", GK).unwrap() else {
            panic!("not rust")
        };
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 3, "the cell's lines stay where they were");
        assert_eq!(
            lines[0],
            "let mut __gk_monitor = gpukit::monitor::LiveMonitor::start(std::time::Duration::from_millis(100))?;"
        );
        assert_eq!(lines[1], "let a = work();");
        // The value of the cell is still its value; the chart is finished before it shows.
        assert!(lines[2].starts_with("match a + 1 { ref __gk_value => { gpukit::synchronize()?;"));
        assert!(
            lines[2].contains("__gk_monitor.finish();") && lines[2].ends_with("__gk_value } }")
        );
        let Step::Rust(code) = lower("--interval 25", "run();", GK).unwrap() else {
            panic!("not rust")
        };
        assert!(code.starts_with(&format!(
            "{START}(std::time::Duration::from_millis(25))?;\n"
        )));
        assert!(code.ends_with("run(); gpukit::synchronize()?; __gk_monitor.finish();"));
    }

    #[test]
    fn bad_input() {
        for (args, body, expect) in [
            ("--interval 10", "x();", "from 20 to 60000"),
            ("--interval", "x();", "needs a number of milliseconds"),
            ("--interval 50 more", "x();", "does not take `more`"),
            ("fast", "x();", "does not take `fast`"),
            ("", " \n", "needs code"),
        ] {
            let e = lower(args, body, GK).unwrap_err().0;
            assert!(e.contains(expect), "{args:?}: {e}");
        }
        assert!(lower("", "x();", Context { gpukit: false })
            .unwrap_err()
            .0
            .contains("needs gpukit"));
    }
}
