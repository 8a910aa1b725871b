//! `%features NAME...`: turns on optional cargo features of gpukit for the rest of the session,
//! such as `linalg` (matrix decompositions on the CPU backend through faer). Heavy dependencies
//! stay out of every session that does not ask for them; a lesson that needs one says so in a
//! cell of its own, as `%pip install` does in IPython.

use super::{require_gpukit, Context, MagicError, Step};

/// Lowers `%features NAME...` to [`Step::Features`] (the session knows where gpukit is).
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    require_gpukit("%features", ctx)?;
    let names: Vec<String> = args
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(MagicError(
            "%features needs the names of gpukit's features to turn on, e.g. %features linalg"
                .into(),
        ));
    }
    if let Some(bad) = names.iter().find(|n| !is_feature_name(n)) {
        return Err(MagicError(format!(
            "%features: `{bad}` is not a cargo feature name (letters, digits, `_` and `-`)"
        )));
    }
    Ok(Step::Features(names))
}

/// Whether `name` is spelled like a cargo feature.
fn is_feature_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The evcxr command that reloads gpukit from `path` with `features` (and its default ones).
pub fn dep_command(path: &str, features: &[String]) -> String {
    let path = path.replace('\\', "\\\\").replace('"', "\\\"");
    let list: Vec<String> = features.iter().map(|f| format!("\"{f}\"")).collect();
    format!(
        ":dep gpukit = {{ path = \"{path}\", features = [{}] }}",
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn names_are_listed_and_checked() {
        assert_eq!(
            lower(" linalg, candle ", GK).unwrap(),
            Step::Features(vec!["linalg".into(), "candle".into()])
        );
        for bad in ["", "   ", "linalg \"x\"", "a=b"] {
            assert!(lower(bad, GK).is_err(), "{bad}");
        }
        assert!(lower("linalg", Context { gpukit: false }).is_err());
    }

    #[test]
    fn the_dep_command_keeps_the_path_and_adds_the_features() {
        assert_eq!(
            dep_command("/opt/gpu 101/gpukit", &["linalg".into()]),
            ":dep gpukit = { path = \"/opt/gpu 101/gpukit\", features = [\"linalg\"] }"
        );
    }
}
