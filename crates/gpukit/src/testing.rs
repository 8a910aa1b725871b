//! Support for gpukit's own tests (unit and integration): what a test that needs a CUDA GPU, or
//! only libnvrtc, does where that is missing. Not part of the user-facing API.
//!
//! Without what it needs, a test skips visibly: it prints one line starting with `skipped:` and
//! returns without checking anything. Two variables turn skips into failures, so that a run that
//! is meant to exercise the GPU cannot pass by skipping:
//!
//! - `GPUKIT_TEST_REQUIRE_GPU=1` (set by the GPU pipeline, `tests/gpu/devrun.py`): a test that
//!   needs a usable CUDA GPU fails, with the reason, where there is none.
//! - `GPUKIT_REQUIRE_NVRTC=1` (set by `make test`): a test that needs libnvrtc (to compile CUDA
//!   C++ to PTX, no GPU needed) fails, with the reason, where it cannot be loaded.
//!
//! Each variable accepts `1`, `true` or `yes` (required) and `0`, `false`, `no` or the empty
//! string (not required, as when unset); any other value fails the test, so that a misspelt
//! requirement cannot quietly become a skip.
//!
//! The GPU pipeline runs the test executables with `--show-output` and counts every test whose
//! output has a `skipped:` line as not run. A CUDA GPU is hidden from a test process with
//! `CUDA_VISIBLE_DEVICES=-1`.

use crate::device::Device;
use std::sync::{Mutex, MutexGuard};

/// The variable that makes a GPU test fail, instead of skip, where no CUDA GPU is usable.
pub const REQUIRE_GPU_VAR: &str = "GPUKIT_TEST_REQUIRE_GPU";

/// The variable that makes an NVRTC test fail, instead of skip, where libnvrtc is missing.
pub const REQUIRE_NVRTC_VAR: &str = "GPUKIT_REQUIRE_NVRTC";

/// What a test needs beyond the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A usable CUDA GPU (driver, device and libnvrtc).
    Gpu,
    /// libnvrtc alone (CUDA C++ to PTX; no GPU).
    Nvrtc,
}

impl Need {
    /// The variable that turns a missing `self` into a failure.
    pub fn variable(self) -> &'static str {
        match self {
            Need::Gpu => REQUIRE_GPU_VAR,
            Need::Nvrtc => REQUIRE_NVRTC_VAR,
        }
    }

    /// How a missing `self` is named in skip lines and failures.
    fn missing(self) -> &'static str {
        match self {
            Need::Gpu => "no CUDA GPU",
            Need::Nvrtc => "libnvrtc not available",
        }
    }
}

/// What a test does, decided by [`decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// What the test needs is there: run it.
    Run,
    /// Skip: print this line (it starts with `skipped:`) and return.
    Skip(String),
    /// Fail: panic with this message.
    Fail(String),
}

/// The decision for a test that needs `need`, given why it is unavailable (`None` when it is
/// available) and the value of [`Need::variable`] (`None` when unset).
///
/// A value of the variable that is not understood fails the test even where `need` is
/// available: the run was configured wrongly either way.
pub fn decide(need: Need, unavailable: Option<&str>, variable: Option<&str>) -> Decision {
    let var = need.variable();
    let required = match variable.map(str::trim) {
        None | Some("" | "0" | "false" | "no") => false,
        Some("1" | "true" | "yes") => true,
        Some(other) => {
            return Decision::Fail(format!(
                "{var}={other:?} is not understood: use 1 (a test fails without what it needs) \
                 or 0 (it skips)"
            ))
        }
    };
    match unavailable {
        None => Decision::Run,
        Some(why) if required => {
            Decision::Fail(format!("{var}=1 but {} here: {why}", need.missing()))
        }
        Some(why) => Decision::Skip(format!(
            "skipped: {} ({why}); set {var}=1 to make this a failure",
            need.missing()
        )),
    }
}

/// Applies [`decide`] for `need` with the variable read from the environment: `true` to run,
/// `false` after printing the skip line, a panic to fail.
#[track_caller]
fn carry_out(need: Need, unavailable: Option<String>) -> bool {
    let value = std::env::var_os(need.variable()).map(|v| v.to_string_lossy().into_owned());
    match decide(need, unavailable.as_deref(), value.as_deref()) {
        Decision::Run => true,
        Decision::Skip(line) => {
            println!("{line}");
            false
        }
        Decision::Fail(message) => panic!("{message}"),
    }
}

/// The first CUDA GPU, or `None` after printing why the test is skipped. Panics with the reason
/// instead where `GPUKIT_TEST_REQUIRE_GPU=1`.
#[track_caller]
pub fn gpu_or_skip() -> Option<Device> {
    if !carry_out(Need::Gpu, crate::device::cuda_unavailable_reason()) {
        return None;
    }
    match Device::cuda(0) {
        Ok(device) => Some(device),
        Err(e) => panic!("CUDA reported a usable GPU, but cuda:0 cannot be used: {e}"),
    }
}

/// As [`gpu_or_skip`], with a lock held for the rest of the test, so that the GPU tests of one
/// test executable run one at a time (errors, profiling sessions and timings are per device or
/// per process). The lock is taken after deciding, so a skipping test never waits for it.
#[track_caller]
pub fn serial_gpu_or_skip() -> Option<(Device, MutexGuard<'static, ()>)> {
    static GPU_TURN: Mutex<()> = Mutex::new(());
    let device = gpu_or_skip()?;
    Some((device, GPU_TURN.lock().unwrap_or_else(|p| p.into_inner())))
}

/// Whether libnvrtc can be loaded; `false` after printing why the test is skipped. Panics with
/// the reason instead where `GPUKIT_REQUIRE_NVRTC=1`.
#[track_caller]
pub fn nvrtc_or_skip() -> bool {
    carry_out(Need::Nvrtc, crate::backend::cuda::nvrtc_probe().err())
}

/// Asserts that every `#[kernel]` in `kernels` compiles to PTX with NVRTC (the CUDA C++ the
/// macro made, with its `#[device]` helpers) and has its entry point; a failure names the kernel
/// and shows its whole source. Needs libnvrtc only, no GPU: without it the test is skipped as
/// [`nvrtc_or_skip`] says. For the companion crates' "every kernel compiles" tests.
#[track_caller]
pub fn assert_kernels_compile(kernels: &[&crate::kernel::info::KernelInfo]) {
    if !nvrtc_or_skip() {
        return;
    }
    for info in kernels {
        match crate::kernel::source::ptx(info) {
            Ok(ptx) => assert!(
                ptx.contains(&format!(".entry {}(", info.name)),
                "PTX of `{}` lacks its entry point",
                info.name
            ),
            Err(e) => panic!(
                "`{}` does not compile:\n{e}\n{}",
                info.name,
                crate::kernel::info::full_source(info)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHY: &str = "no NVIDIA driver (libcuda.so.1 not found)";

    #[test]
    fn available_runs_whatever_the_variable_says() {
        for need in [Need::Gpu, Need::Nvrtc] {
            for v in [
                None,
                Some(""),
                Some("0"),
                Some("1"),
                Some("true"),
                Some(" yes "),
            ] {
                assert_eq!(decide(need, None, v), Decision::Run, "{need:?} {v:?}");
            }
        }
    }

    #[test]
    fn missing_skips_visibly_unless_required() {
        for v in [None, Some(""), Some("0"), Some("false"), Some("no")] {
            match decide(Need::Gpu, Some(WHY), v) {
                Decision::Skip(line) => {
                    assert!(line.starts_with("skipped: no CUDA GPU ("), "{line}");
                    assert!(
                        line.contains(WHY) && line.contains(REQUIRE_GPU_VAR),
                        "{line}"
                    );
                    assert!(!line.contains('\n'), "one line: {line}");
                }
                other => panic!("{v:?}: expected a skip, got {other:?}"),
            }
        }
        match decide(Need::Nvrtc, Some("libnvrtc not found"), None) {
            Decision::Skip(line) => {
                assert!(
                    line.starts_with("skipped: libnvrtc not available ("),
                    "{line}"
                );
                assert!(line.contains(REQUIRE_NVRTC_VAR), "{line}");
            }
            other => panic!("expected a skip, got {other:?}"),
        }
    }

    #[test]
    fn missing_fails_with_the_reason_when_required() {
        for v in ["1", "true", "yes", " 1\n"] {
            assert_eq!(
                decide(Need::Gpu, Some(WHY), Some(v)),
                Decision::Fail(format!(
                    "GPUKIT_TEST_REQUIRE_GPU=1 but no CUDA GPU here: {WHY}"
                )),
                "{v:?}"
            );
        }
        assert_eq!(
            decide(Need::Nvrtc, Some("libnvrtc not found"), Some("1")),
            Decision::Fail(
                "GPUKIT_REQUIRE_NVRTC=1 but libnvrtc not available here: libnvrtc not found".into()
            )
        );
    }

    #[test]
    fn the_variables_are_independent() {
        // Requiring NVRTC does not require a GPU, and the other way round: each test is decided
        // by its own variable only (the caller reads the one `need` names).
        assert_eq!(Need::Gpu.variable(), "GPUKIT_TEST_REQUIRE_GPU");
        assert_eq!(Need::Nvrtc.variable(), "GPUKIT_REQUIRE_NVRTC");
        assert!(matches!(
            decide(Need::Gpu, Some(WHY), None),
            Decision::Skip(_)
        ));
    }

    #[test]
    fn values_not_understood_fail_even_where_available() {
        for v in ["2", "on", "ture", "-1"] {
            for unavailable in [None, Some(WHY)] {
                match decide(Need::Gpu, unavailable, Some(v)) {
                    Decision::Fail(m) => {
                        assert!(m.starts_with("GPUKIT_TEST_REQUIRE_GPU="), "{m}");
                        assert!(m.contains("not understood") && m.contains(v), "{m}");
                    }
                    other => panic!("{v:?}: expected a failure, got {other:?}"),
                }
            }
        }
    }
}
