//! `%kernelinfo NAME`: registers, shared and local memory, spills, largest block and occupancy of a kernel on the GPU.

use super::{ident_arg, require_gpukit, Context, MagicError, Step};

/// Lowers `%kernelinfo NAME` to `NAME.resources()` (a `#[kernel]` or a `%%cuda` kernel); on the CPU
/// device, or where the tools are missing, the reason is printed, not raised.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let name = ident_arg("%kernelinfo", args)?;
    require_gpukit("%kernelinfo", ctx)?;
    let code = format!(
        "match {name}.resources() {{ Ok(r) => println!(\"{{}}\", r), Err(e @ (gpukit::Error::NeedsGpu {{ .. }} | gpukit::Error::NoGpu(_) | gpukit::Error::Other(_))) => println!(\"%kernelinfo {name}: {{}}\", e), Err(e) => Err(e)?, }}"
    );
    Ok(Step::Reflect {
        magic: "%kernelinfo",
        name,
        code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_to_a_method_call() {
        let Step::Reflect { magic, name, code } = lower("blur", Context { gpukit: true }).unwrap()
        else {
            panic!("not reflect")
        };
        assert_eq!((magic, name.as_str()), ("%kernelinfo", "blur"));
        assert!(code.starts_with("match blur.resources()"), "{code}");
        assert!(code.contains("NeedsGpu"));
        assert!(lower("", Context { gpukit: true }).is_err());
        assert!(lower("blur", Context { gpukit: false }).is_err());
    }
}
