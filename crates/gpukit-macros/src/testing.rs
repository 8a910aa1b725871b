//! Test helpers: translate items from source text, and compile CUDA C++ with NVRTC.

use crate::ir::Func;
use crate::{cuda, infer, parse};

/// Parses and infers a `#[kernel]` written as source text.
pub fn kernel_ir(src: &str, checked: bool) -> syn::Result<Func> {
    let item: syn::ItemFn = syn::parse_str(src).expect("test source parses as a fn");
    let mut f = parse::kernel(&item, checked)?;
    infer::infer(&mut f)?;
    Ok(f)
}

/// The CUDA C++ of a checked `#[kernel]` written as source text.
pub fn kernel_cuda(src: &str) -> String {
    kernel_sources(src).kernel
}

/// The CUDA C++ of a checked `#[kernel]` written as source text, and its unchecked twin if any.
pub fn kernel_sources(src: &str) -> cuda::KernelSources {
    cuda::kernel_sources(&mut kernel_ir(src, true).expect("translates")).expect("generates")
}

/// The error message a kernel produces.
pub fn kernel_error(src: &str) -> String {
    match kernel_ir(src, true).and_then(|mut f| cuda::kernel_sources(&mut f)) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e.to_string(),
    }
}

/// The kernel body without the prelude.
pub fn body(cuda_source: &str) -> &str {
    let at = cuda_source
        .find(cuda::DEVICE_FNS_MARKER)
        .expect("marker present");
    &cuda_source[at..]
}

/// The variable that makes an NVRTC check fail, instead of skip, where libnvrtc is missing (the
/// rule of `gpukit::testing`, restated here: this crate cannot depend on gpukit).
const REQUIRE_NVRTC_VAR: &str = "GPUKIT_REQUIRE_NVRTC";

/// What an NVRTC check does, given whether libnvrtc can be loaded and the value of
/// `GPUKIT_REQUIRE_NVRTC` (`None` when unset): `Ok(None)` to run, `Ok(Some(line))` to print the
/// one-line skip (it starts with `skipped:`, which the GPU pipeline counts as a test not run) and
/// return, `Err(message)` to fail. `1`, `true` and `yes` require libnvrtc; `0`, `false`, `no` and
/// the empty string do not; any other value fails even where libnvrtc loads, so that a misspelt
/// requirement cannot quietly become a skip.
fn nvrtc_decision(present: bool, variable: Option<&str>) -> Result<Option<String>, String> {
    const WHY: &str = "libnvrtc cannot be loaded; put its folder on LD_LIBRARY_PATH";
    let required = match variable.map(str::trim) {
        None | Some("" | "0" | "false" | "no") => false,
        Some("1" | "true" | "yes") => true,
        Some(other) => {
            return Err(format!(
                "{REQUIRE_NVRTC_VAR}={other:?} is not understood: use 1 (a test fails without \
                 what it needs) or 0 (it skips)"
            ))
        }
    };
    match (present, required) {
        (true, _) => Ok(None),
        (false, true) => Err(format!(
            "{REQUIRE_NVRTC_VAR}=1 but libnvrtc not available here: {WHY}"
        )),
        (false, false) => Ok(Some(format!(
            "skipped: libnvrtc not available ({WHY}); set {REQUIRE_NVRTC_VAR}=1 to make this a failure"
        ))),
    }
}

/// Compiles `source` to PTX for compute_90 with NVRTC. Returns `false` (after printing why) when
/// libnvrtc cannot be loaded, unless `GPUKIT_REQUIRE_NVRTC=1`, in which case that fails
/// ([`nvrtc_decision`]).
/// A compile error panics with NVRTC's log and the numbered source.
pub fn nvrtc_compiles(source: &str) -> bool {
    nvrtc_ptx(source).is_some()
}

/// The PTX NVRTC makes of `source` for compute_90 (the options gpukit uses), or `None` (after
/// printing why) when libnvrtc cannot be loaded, unless `GPUKIT_REQUIRE_NVRTC=1`, in which case
/// that fails. A compile error panics with NVRTC's log and the numbered source.
pub fn nvrtc_ptx(source: &str) -> Option<String> {
    // SAFETY: only probes whether the shared library can be loaded.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    let value = std::env::var_os(REQUIRE_NVRTC_VAR).map(|v| v.to_string_lossy().into_owned());
    match nvrtc_decision(present, value.as_deref()) {
        Ok(None) => {}
        Ok(Some(skip_line)) => {
            println!("{skip_line}");
            return None;
        }
        Err(failure) => panic!("{failure}"),
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some("compute_90"),
        options: vec!["-std=c++17".to_string()],
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Some(ptx.to_src()),
        Err(e) => {
            let numbered: String = source
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:4} {l}\n", i + 1))
                .collect();
            panic!("NVRTC rejected the generated source: {e:?}\n{numbered}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_nvrtc_runs() {
        for v in [None, Some(""), Some("0"), Some("1"), Some(" yes ")] {
            assert_eq!(nvrtc_decision(true, v), Ok(None), "{v:?}");
        }
    }

    #[test]
    fn missing_nvrtc_skips_visibly_unless_required() {
        for v in [None, Some(""), Some("0"), Some("false"), Some("no")] {
            let line = match nvrtc_decision(false, v) {
                Ok(Some(line)) => line,
                other => panic!("{v:?}: expected a skip, got {other:?}"),
            };
            assert!(
                line.starts_with("skipped: libnvrtc not available ("),
                "{line}"
            );
            assert!(
                line.contains("GPUKIT_REQUIRE_NVRTC=1") && !line.contains('\n'),
                "{line}"
            );
        }
    }

    #[test]
    fn missing_nvrtc_fails_with_the_reason_when_required() {
        for v in ["1", "true", "yes", " 1\n"] {
            let e = nvrtc_decision(false, Some(v)).expect_err(v);
            assert!(
                e.starts_with("GPUKIT_REQUIRE_NVRTC=1 but libnvrtc not available here: "),
                "{e}"
            );
        }
    }

    #[test]
    fn a_misspelt_requirement_fails_even_where_nvrtc_loads() {
        for present in [true, false] {
            let e = nvrtc_decision(present, Some("ture")).expect_err("not understood");
            assert!(
                e.contains("GPUKIT_REQUIRE_NVRTC=\"ture\" is not understood"),
                "{e}"
            );
        }
    }
}
