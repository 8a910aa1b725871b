//! `%memory`: device memory as NVML reports it (all processes, and this one) beside what gpukit
//! holds (live arrays, and the pool cache of dropped arrays), saying which number is which.
//! `%memory --free` first gives gpukit's pool cache back to the driver.

use super::{require_gpukit, Context, MagicError, Step};

const REPORT: &str = "gpukit::nvml::memory_report().evcxr_display();";

const FREE: &str = "{ let __gk_freed = gpukit::free_cached_memory()?; gpukit::nvml::memory_report().released(__gk_freed).evcxr_display(); };";

/// Lowers `%memory` to `gpukit::nvml::memory_report()`, and `%memory --free` to
/// `gpukit::free_cached_memory()` followed by the report.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let code = match args.trim() {
        "" => REPORT,
        "--free" => FREE,
        other => {
            return Err(MagicError(format!(
                "%memory does not take `{other}`; usage: %memory [--free]"
            )))
        }
    };
    require_gpukit("%memory", ctx)?;
    Ok(Step::Rust(code.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_to_memory_report() {
        let gk = Context { gpukit: true };
        assert_eq!(lower("", gk).unwrap(), Step::Rust(REPORT.into()));
        let Step::Rust(free) = lower(" --free ", gk).unwrap() else {
            panic!("not rust")
        };
        let (freed, shown) = (
            free.find("free_cached_memory()?").unwrap(),
            free.find("memory_report()").unwrap(),
        );
        assert!(freed < shown, "frees before it reports: {free}");
        assert!(free.contains(".released(__gk_freed)"));
        assert!(lower("all", gk)
            .unwrap_err()
            .0
            .contains("does not take `all`; usage: %memory [--free]"));
        assert!(lower("", Context { gpukit: false })
            .unwrap_err()
            .0
            .contains("needs gpukit"));
    }
}
