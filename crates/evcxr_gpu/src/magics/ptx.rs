//! `%ptx NAME`: the PTX a kernel (a `#[kernel]` or a `%%cuda` kernel) compiled to.

use super::{ident_arg, require_gpukit, Context, MagicError, Step};

/// Lowers `%ptx NAME` to `NAME.ptx()`; "needs a CUDA GPU" errors are printed, not raised.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let name = ident_arg("%ptx", args)?;
    require_gpukit("%ptx", ctx)?;
    let code = format!(
        "match {name}.ptx() {{ Ok(p) => println!(\"{{}}\", p), Err(e @ (gpukit::Error::NeedsGpu {{ .. }} | gpukit::Error::NoGpu(_))) => println!(\"%ptx {name}: {{}}\", e), Err(e) => Err(e)?, }}"
    );
    Ok(Step::Reflect {
        magic: "%ptx",
        name,
        code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_to_ptx_call() {
        let Step::Reflect { magic, name, code } = lower("saxpy", Context { gpukit: true }).unwrap()
        else {
            panic!("not reflect")
        };
        assert_eq!((magic, name.as_str()), ("%ptx", "saxpy"));
        assert!(code.starts_with("match saxpy.ptx()"));
        assert!(code.contains("NeedsGpu"));
        assert!(lower("", Context { gpukit: true }).is_err());
    }
}
