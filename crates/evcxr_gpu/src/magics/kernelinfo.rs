//! `%kernelinfo NAME`: registers, shared and local memory, spills, largest block and occupancy of a kernel on the GPU.

use super::{reflect_method, Context, MagicError, Step};

/// Lowers `%kernelinfo NAME` to `NAME.resources()` (a `#[kernel]` or a `%%cuda` kernel); on the CPU
/// device, or where the tools are missing, the reason is printed, not raised.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    reflect_method("%kernelinfo", "resources", args, ctx)
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
