//! `%source [--full] NAME`: the CUDA C++ a kernel compiles from (generated for `#[kernel]`, as
//! written for `%%cuda`). Generated kernels start with gpukit's prelude of helpers; it is left out
//! (with a line saying so) unless `--full` is given.

use super::{ident_arg, require_gpukit, Context, MagicError, Step};

/// Lowers `%source [--full] NAME` to printing `gpukit::kernel::source_listing`.
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let full = words.contains(&"--full");
    let rest: Vec<&str> = words.into_iter().filter(|w| *w != "--full").collect();
    if let Some(flag) = rest.iter().find(|w| w.starts_with("--")) {
        return Err(MagicError(format!(
            "%source: unknown option `{flag}` (usage: %source [--full] NAME)"
        )));
    }
    let name = ident_arg("%source", &rest.join(" "))?;
    require_gpukit("%source", ctx)?;
    let code =
        format!("println!(\"{{}}\", gpukit::kernel::source_listing(&{name}.source(), {full}));");
    Ok(Step::Reflect {
        magic: "%source",
        name,
        code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: Context = Context { gpukit: true };

    #[test]
    fn lowers_to_the_listing_without_the_prelude() {
        assert_eq!(
            lower(" foo", CTX).unwrap(),
            Step::Reflect {
                magic: "%source",
                name: "foo".into(),
                code: "println!(\"{}\", gpukit::kernel::source_listing(&foo.source(), false));"
                    .into()
            }
        );
        assert!(lower("a.b", CTX).is_err());
    }

    #[test]
    fn full_prints_everything_before_or_after_the_name() {
        for args in ["--full foo", "foo --full"] {
            let Step::Reflect { name, code, .. } = lower(args, CTX).unwrap() else {
                panic!("not reflect")
            };
            assert_eq!(name, "foo");
            assert!(code.ends_with("(&foo.source(), true));"), "{code}");
        }
    }

    #[test]
    fn unknown_options_and_missing_names_are_errors() {
        assert!(lower("--short foo", CTX)
            .unwrap_err()
            .0
            .contains("unknown option `--short`"));
        assert!(lower("--full", CTX)
            .unwrap_err()
            .0
            .contains("needs a kernel name"));
        assert!(lower("foo", Context { gpukit: false }).is_err());
    }
}
