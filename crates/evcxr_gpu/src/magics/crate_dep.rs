//! `%crate NAME [FEATURE...]`: loads one of the project's companion crates that live beside
//! gpukit (such as `gpukit-frame`, GPU DataFrames) into the session, with its prelude. Their
//! heavy dependencies (Arrow's CSV reader, ...) are built only for the notebooks that ask.

use super::{require_gpukit, Context, MagicError, Step};
use std::path::Path;

/// Lowers `%crate NAME [FEATURE...]` to [`Step::Crate`] (the session knows where gpukit is).
pub fn lower(args: &str, ctx: Context) -> Result<Step, MagicError> {
    require_gpukit("%crate", ctx)?;
    let mut words = args
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let Some(name) = words.next() else {
        return Err(MagicError(
            "%crate needs the name of a crate beside gpukit, e.g. %crate gpukit-frame".into(),
        ));
    };
    let features: Vec<String> = words.collect();
    if let Some(bad) = std::iter::once(&name)
        .chain(&features)
        .find(|n| !is_cargo_name(n))
    {
        return Err(MagicError(format!(
            "%crate: `{bad}` is not a cargo crate or feature name (letters, digits, `_` and `-`)"
        )));
    }
    Ok(Step::Crate { name, features })
}

/// Whether `name` is spelled like a cargo package or feature name.
fn is_cargo_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The evcxr commands that load crate `name` from the folder beside gpukit's (`gpukit_path`)
/// with `features`, and import its prelude when it has one; or an error naming the crates
/// that are there.
pub fn commands(gpukit_path: &str, name: &str, features: &[String]) -> Result<String, String> {
    let parent = Path::new(gpukit_path)
        .parent()
        .ok_or_else(|| format!("%crate: gpukit's folder {gpukit_path} has no parent"))?;
    let dir = parent.join(name);
    let lib = dir.join("src").join("lib.rs");
    if !dir.join("Cargo.toml").is_file() || !lib.is_file() {
        let mut there: Vec<String> = std::fs::read_dir(parent)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("Cargo.toml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "gpukit" && n != "gpukit-macros" && n != "evcxr_gpu")
            .collect();
        there.sort();
        return Err(format!(
            "%crate: no crate `{name}` beside gpukit (in {}); there: {}",
            parent.display(),
            if there.is_empty() {
                "none".to_string()
            } else {
                there.join(", ")
            }
        ));
    }
    let path = dir
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let list: Vec<String> = features.iter().map(|f| format!("\"{f}\"")).collect();
    let mut code = format!(
        ":dep {name} = {{ path = \"{path}\", features = [{}] }}",
        list.join(", ")
    );
    let has_prelude = std::fs::read_to_string(&lib).is_ok_and(|s| s.contains("pub mod prelude"));
    if has_prelude {
        code.push_str(&format!("\nuse {}::prelude::*;", name.replace('-', "_")));
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn the_name_comes_first_then_features() {
        assert_eq!(
            lower(" gpukit-frame  polars ", GK).unwrap(),
            Step::Crate {
                name: "gpukit-frame".into(),
                features: vec!["polars".into()]
            }
        );
        for bad in ["", "  ", "gpukit-frame \"x\"", "../etc"] {
            assert!(lower(bad, GK).is_err(), "{bad}");
        }
        assert!(lower("gpukit-frame", Context { gpukit: false }).is_err());
    }

    #[test]
    fn commands_load_the_sibling_crate_and_its_prelude() {
        let root = tempfile::tempdir().unwrap();
        let gk = root.path().join("gpukit");
        let frame = root.path().join("gpukit-frame");
        std::fs::create_dir_all(gk.join("src")).unwrap();
        std::fs::create_dir_all(frame.join("src")).unwrap();
        std::fs::write(gk.join("Cargo.toml"), "").unwrap();
        std::fs::write(frame.join("Cargo.toml"), "").unwrap();
        std::fs::write(frame.join("src/lib.rs"), "pub mod prelude {}").unwrap();
        let code = commands(gk.to_str().unwrap(), "gpukit-frame", &["polars".into()]).unwrap();
        let want = format!(
            ":dep gpukit-frame = {{ path = \"{}\", features = [\"polars\"] }}\nuse gpukit_frame::prelude::*;",
            frame.display()
        );
        assert_eq!(code, want);
        let err = commands(gk.to_str().unwrap(), "gpukit-ml", &[]).unwrap_err();
        assert!(err.contains("no crate `gpukit-ml` beside gpukit"), "{err}");
        assert!(err.contains("there: gpukit-frame"), "{err}");
    }
}
