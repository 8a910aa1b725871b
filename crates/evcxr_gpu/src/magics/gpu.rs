//! `%gpu`: the NVML device table (name, driver, memory, utilisation, temperature, power,
//! processes), or "no NVIDIA GPU, running on CPU".
//!
//! `%gpu --watch [SECONDS] [--interval MS]` watches the GPUs instead: a chart of utilisation and
//! memory that updates in place for SECONDS (default 10), then stays as the final chart.

use super::monitor::{interval_code, parse_interval};
use super::{require_gpukit, Context, MagicError, Step};

/// How long `%gpu --watch` watches without a number, seconds.
pub const DEFAULT_WATCH_SECONDS: f64 = 10.0;

/// The longest `%gpu --watch`, seconds (as gpukit's `monitor::MAX_WATCH_SECONDS`).
pub const MAX_WATCH_SECONDS: f64 = 3600.0;

const USAGE: &str = "usage: %gpu | %gpu --watch [SECONDS] [--interval MS]";

/// Lowers `%gpu` to `gpukit::nvml::device_table()`, displayed as text and HTML, and
/// `%gpu --watch` to `gpukit::monitor::watch_every`.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let Some((&first, rest)) = words.split_first() else {
        require_gpukit("%gpu", ctx)?;
        return Ok(Step::Rust(
            "gpukit::nvml::device_table().evcxr_display();".into(),
        ));
    };
    if first != "--watch" {
        return Err(MagicError(format!(
            "%gpu does not take `{}`; {USAGE}",
            args.trim()
        )));
    }
    let (seconds, rest) = match rest.first() {
        Some(s) if !s.starts_with("--") => (parse_seconds(s)?, &rest[1..]),
        _ => (DEFAULT_WATCH_SECONDS, rest),
    };
    let interval = parse_interval("%gpu --watch", rest, USAGE)?;
    require_gpukit("%gpu --watch", ctx)?;
    Ok(Step::Rust(format!(
        "gpukit::monitor::watch_every({seconds:?}, {})?;",
        interval_code(interval)
    )))
}

fn parse_seconds(s: &str) -> Result<f64, MagicError> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= MAX_WATCH_SECONDS => Ok(v),
        _ => Err(MagicError(format!(
            "%gpu --watch needs a number of seconds above 0 and at most {MAX_WATCH_SECONDS}, \
             got `{s}`; {USAGE}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    fn rust(step: Step) -> String {
        match step {
            Step::Rust(code) => code,
            other => panic!("not rust: {other:?}"),
        }
    }

    #[test]
    fn lowers_to_device_table() {
        let s = lower(" ", GK).unwrap();
        assert_eq!(
            s,
            Step::Rust("gpukit::nvml::device_table().evcxr_display();".into())
        );
        let e = lower("x", GK).unwrap_err().0;
        assert!(e.contains("does not take `x`") && e.contains(USAGE), "{e}");
    }

    #[test]
    fn watch_takes_seconds_and_an_interval() {
        assert_eq!(
            rust(lower("--watch", GK).unwrap()),
            "gpukit::monitor::watch_every(10.0, std::time::Duration::from_millis(100))?;"
        );
        assert_eq!(
            rust(lower(" --watch 2.5 ", GK).unwrap()),
            "gpukit::monitor::watch_every(2.5, std::time::Duration::from_millis(100))?;"
        );
        assert_eq!(
            rust(lower("--watch 30 --interval 50", GK).unwrap()),
            "gpukit::monitor::watch_every(30.0, std::time::Duration::from_millis(50))?;"
        );
        assert_eq!(
            rust(lower("--watch --interval 20", GK).unwrap()),
            "gpukit::monitor::watch_every(10.0, std::time::Duration::from_millis(20))?;"
        );
    }

    #[test]
    fn bad_watch_arguments_are_clear_errors() {
        for (args, expect) in [
            ("--watch 0", "above 0 and at most 3600"),
            ("--watch -3", "above 0 and at most 3600"),
            ("--watch 4000", "above 0 and at most 3600"),
            ("--watch ten", "got `ten`"),
            ("--watch 5 6", "does not take `6`"),
            ("--watch 5 --interval", "needs a number of milliseconds"),
            ("--watch 5 --interval 5", "20 to 60000"),
            ("--interval 50", "does not take"),
        ] {
            let e = lower(args, GK).unwrap_err().0;
            assert!(e.contains(expect), "{args}: {e}");
        }
        let e = lower("--watch", Context { gpukit: false }).unwrap_err().0;
        assert!(e.contains("needs gpukit"), "{e}");
    }
}
