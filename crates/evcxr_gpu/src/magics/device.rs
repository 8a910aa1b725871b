//! `%device` shows the default device; `%device cpu` and `%device cuda:N` change it.

use super::{require_gpukit, Context, MagicError, Step};

/// The device a `%device` argument names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Show the current default device.
    Show,
    /// The CPU backend.
    Cpu,
    /// CUDA device `N`.
    Cuda(usize),
}

/// Parses the argument of `%device`.
pub fn parse(args: &str) -> Result<Target, MagicError> {
    let a = args.trim().to_ascii_lowercase();
    let bad = || {
        MagicError(format!(
            "%device takes `cpu` or `cuda:N` (N = 0, 1, ...), got `{}`",
            args.trim()
        ))
    };
    match a.as_str() {
        "" => Ok(Target::Show),
        "cpu" => Ok(Target::Cpu),
        "cuda" | "gpu" => Ok(Target::Cuda(0)),
        _ => {
            let n = a
                .strip_prefix("cuda:")
                .or_else(|| a.strip_prefix("gpu:"))
                .ok_or_else(bad)?;
            n.parse::<usize>().map(Target::Cuda).map_err(|_| bad())
        }
    }
}

/// Lowers `%device [cpu|cuda:N]` to `gpukit::set_default_device` / `gpukit::default_device`.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let target = parse(args)?;
    require_gpukit("%device", ctx)?;
    let show = "println!(\"default device: {}\", gpukit::default_device());";
    // GPUKIT_DEVICE carries the choice to the gpukit copies of later cells (see
    // session::config::PIN_DEVICE).
    let set = |device: String| {
        format!("let __gk_device = {device}; gpukit::set_default_device(__gk_device); unsafe {{ std::env::set_var(\"GPUKIT_DEVICE\", __gk_device.to_string()) }} {show}")
    };
    Ok(Step::Rust(match target {
        Target::Show => show.to_string(),
        Target::Cpu => set("gpukit::Device::cpu()".into()),
        Target::Cuda(n) => set(format!("gpukit::Device::cuda({n})?")),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices() {
        assert_eq!(parse("").unwrap(), Target::Show);
        assert_eq!(parse(" CPU ").unwrap(), Target::Cpu);
        assert_eq!(parse("cuda").unwrap(), Target::Cuda(0));
        assert_eq!(parse("cuda:3").unwrap(), Target::Cuda(3));
        assert_eq!(parse("gpu:1").unwrap(), Target::Cuda(1));
        for bad in ["cuda:", "cuda:-1", "cuda:x", "tpu", "cpu cuda"] {
            assert!(parse(bad).unwrap_err().0.contains("cuda:N"), "{bad}");
        }
    }

    #[test]
    fn lowering_validates_cuda_at_run_time() {
        let Step::Rust(code) = lower("cuda:1", Context { gpukit: true }).unwrap() else {
            panic!("not rust")
        };
        assert!(code.starts_with("let __gk_device = gpukit::Device::cuda(1)?;"));
        assert!(code.contains("std::env::set_var(\"GPUKIT_DEVICE\""));
        let Step::Rust(code) = lower("", Context { gpukit: true }).unwrap() else {
            panic!("not rust")
        };
        assert!(code.starts_with("println!"));
    }
}
