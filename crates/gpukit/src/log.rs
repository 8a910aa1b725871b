//! gpukit's diagnostic log: lines on stderr, off unless the environment variable `GPUKIT_LOG`
//! asks for them.
//!
//! `GPUKIT_LOG=debug` prints what gpukit decides behind the scenes, one line each, prefixed
//! `gpukit[debug]:` (today: kernel compilation, the kernel cache's hits and misses, and whether a
//! module was loaded as machine code or as PTX). Unset, empty, `off` or any other value prints
//! nothing. The variable is read at each message, so a notebook can turn the log on and off with
//! `std::env::set_var` between cells; messages are only built when they are printed.

/// The variable that turns the log on.
pub(crate) const VAR: &str = "GPUKIT_LOG";

/// Whether a value of [`VAR`] turns debug messages on (`debug`, any case, surrounding spaces
/// ignored).
fn wants_debug(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case("debug"))
}

/// Whether debug messages are printed now.
pub(crate) fn debug_enabled() -> bool {
    wants_debug(std::env::var(VAR).ok().as_deref())
}

/// Prints the message `message()` builds, as one `gpukit[debug]:` line on stderr, when
/// `GPUKIT_LOG=debug`; otherwise builds nothing.
pub(crate) fn debug(message: impl FnOnce() -> String) {
    if debug_enabled() {
        eprintln!("gpukit[debug]: {}", message());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_debug_turns_it_on() {
        for on in ["debug", "DEBUG", " Debug "] {
            assert!(wants_debug(Some(on)), "{on:?}");
        }
        for off in [None, Some(""), Some("off"), Some("info"), Some("1")] {
            assert!(!wants_debug(off), "{off:?}");
        }
    }
}
