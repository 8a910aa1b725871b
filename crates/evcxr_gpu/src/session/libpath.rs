//! Making the Rust standard library's shared object findable by the user-code process.
//!
//! evcxr compiles cells with `-C prefer-dynamic`, so each cell's `.so` needs `libstd-*.so` from
//! the toolchain. rustc records it as a path relative to the `deps/` directory, but evcxr loads a
//! copy one directory higher, which only resolves when the session directory's relative route to
//! the toolchain passes through `/`. Putting the toolchain's library directory on
//! `LD_LIBRARY_PATH` makes it resolve wherever the session directory is.

use std::path::PathBuf;
use std::process::Command;

/// `<sysroot>/lib/rustlib/<host>/lib` of the `rustc` on PATH.
pub fn std_lib_dir() -> Option<PathBuf> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8(sysroot.stdout).ok()?.trim().to_string();
    let vv = Command::new("rustc").arg("-vV").output().ok()?;
    let vv = String::from_utf8(vv.stdout).ok()?;
    let host = vv
        .lines()
        .find_map(|l| l.strip_prefix("host: "))?
        .trim()
        .to_string();
    let dir = PathBuf::from(sysroot)
        .join("lib")
        .join("rustlib")
        .join(host)
        .join("lib");
    dir.is_dir().then_some(dir)
}

/// `current` (a `LD_LIBRARY_PATH` value) with `dir` in front, unless it is already there.
pub fn prepend(current: Option<&str>, dir: &str) -> String {
    match current.filter(|c| !c.is_empty()) {
        Some(c) if c.split(':').any(|p| p == dir) => c.to_string(),
        Some(c) => format!("{dir}:{c}"),
        None => dir.to_string(),
    }
}

/// Puts the standard library directory on `LD_LIBRARY_PATH` (call before threads start).
pub fn export() {
    if let Some(dir) = std_lib_dir() {
        let current = std::env::var("LD_LIBRARY_PATH").ok();
        let value = prepend(current.as_deref(), &dir.display().to_string());
        std::env::set_var("LD_LIBRARY_PATH", value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepends_once() {
        assert_eq!(prepend(None, "/a"), "/a");
        assert_eq!(prepend(Some(""), "/a"), "/a");
        assert_eq!(prepend(Some("/b"), "/a"), "/a:/b");
        assert_eq!(prepend(Some("/b:/a"), "/a"), "/b:/a");
    }

    #[test]
    fn finds_the_toolchain_std() {
        let dir = std_lib_dir().expect("rustc on PATH");
        let has_std = std::fs::read_dir(dir).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("libstd-")
        });
        assert!(has_std);
    }
}
