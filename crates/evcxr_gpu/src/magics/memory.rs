//! `%memory`: GPU memory used/free from NVML plus gpukit's own live allocations.

use super::{no_args, require_gpukit, Context, MagicError, Step};

/// Lowers `%memory` to `gpukit::nvml::memory_report()`.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    no_args("%memory", args)?;
    require_gpukit("%memory", ctx)?;
    Ok(Step::Rust(
        "gpukit::nvml::memory_report().evcxr_display();".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_to_memory_report() {
        let s = lower("", Context { gpukit: true }).unwrap();
        assert_eq!(
            s,
            Step::Rust("gpukit::nvml::memory_report().evcxr_display();".into())
        );
        assert!(lower("all", Context { gpukit: true })
            .unwrap_err()
            .0
            .contains("no arguments"));
    }
}
