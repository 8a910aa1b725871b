//! `%gpu`: the NVML device table (name, driver, memory, utilisation, temperature, power,
//! processes), or "no NVIDIA GPU, running on CPU".

use super::{no_args, require_gpukit, Context, MagicError, Step};

/// Lowers `%gpu` to `gpukit::nvml::device_table()`, displayed as text and HTML.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    no_args("%gpu", args)?;
    require_gpukit("%gpu", ctx)?;
    Ok(Step::Rust(
        "gpukit::nvml::device_table().evcxr_display();".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_to_device_table() {
        let s = lower(" ", Context { gpukit: true }).unwrap();
        assert_eq!(
            s,
            Step::Rust("gpukit::nvml::device_table().evcxr_display();".into())
        );
        assert!(lower("x", Context { gpukit: true }).is_err());
    }
}
