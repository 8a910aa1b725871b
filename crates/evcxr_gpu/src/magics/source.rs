//! `%source NAME`: the CUDA C++ a kernel compiles from (generated for `#[kernel]`, as written
//! for `%%cuda`).

use super::{ident_arg, require_gpukit, Context, MagicError, Step};

/// Lowers `%source NAME` to printing `NAME.source()`.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let name = ident_arg("%source", args)?;
    require_gpukit("%source", ctx)?;
    let code = format!("println!(\"{{}}\", {name}.source());");
    Ok(Step::Reflect {
        magic: "%source",
        name,
        code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_to_source_call() {
        assert_eq!(
            lower(" foo", Context { gpukit: true }).unwrap(),
            Step::Reflect {
                magic: "%source",
                name: "foo".into(),
                code: "println!(\"{}\", foo.source());".into()
            }
        );
        assert!(lower("a.b", Context { gpukit: true }).is_err());
    }
}
