//! `%sass NAME`: the machine code (SASS) a kernel runs as, from the CUDA toolkit's cuobjdump.

use super::{reflect_method, Context, MagicError, Step};

/// Lowers `%sass NAME` to `NAME.sass()` (a `#[kernel]` or a `%%cuda` kernel); on the CPU
/// device, or where the tools are missing, the reason is printed, not raised.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    reflect_method("%sass", "sass", args, ctx)
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
        assert_eq!((magic, name.as_str()), ("%sass", "blur"));
        assert!(code.starts_with("match blur.sass()"), "{code}");
        assert!(code.contains("NeedsGpu"));
        assert!(lower("", Context { gpukit: true }).is_err());
        assert!(lower("blur", Context { gpukit: false }).is_err());
    }
}
