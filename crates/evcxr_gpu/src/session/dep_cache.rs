//! Keeping evcxr's compiled-dependency cache honest.
//!
//! evcxr caches the compiler's output for every dependency (`~/.cache/evcxr`, one directory per
//! entry) and copies it into a session's build tree on a hit, dep-info (`.d`) file included. A
//! dep-info file lists every source the crate was compiled from by absolute path, and for crates
//! that include files their build script generated (thiserror 2, for one) that path lies in the
//! build tree of the session that first compiled them. Once that tree is gone (a temporary work
//! directory, a removed slot), cargo finds the listed file missing, compiles the crate again,
//! evcxr answers from the cache with the same dep-info, and the crate is "recompiled" in every
//! cell from then on. [`prune_stale_entries`] removes such entries before a session starts, so
//! the next build compiles them once for real and caches an entry that points at files that
//! exist.

use std::path::{Path, PathBuf};

/// evcxr's cache directory (`dirs::cache_dir()/evcxr`, as evcxr computes it on Linux).
pub fn evcxr_cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if Path::new(&d).is_absolute() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(base.join("evcxr"))
}

/// The prerequisites of a Makefile-style dep-info file: every path after a `target:`, with
/// `\ ` unescaped to a space.
pub fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        // A rule is `target: prerequisites`; the target itself may contain escaped spaces and
        // colons only inside drive letters, which do not occur on Linux.
        let Some((_, deps)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        out.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            out.push(PathBuf::from(current));
        }
    }
    out
}

/// Whether the cache entry in `entry` lists, in any of its dep-info files, an absolute path that
/// no longer exists.
fn is_stale(entry: &Path) -> bool {
    let Ok(files) = std::fs::read_dir(entry) else {
        return false;
    };
    files.flatten().any(|f| {
        let path = f.path();
        path.extension().is_some_and(|e| e == "d")
            && std::fs::read_to_string(&path).is_ok_and(|text| {
                dep_info_sources(&text)
                    .iter()
                    .any(|p| p.is_absolute() && !p.exists())
            })
    })
}

/// Removes the entries of the cache in `dir` whose dep-info names files that are gone; returns
/// how many. Entries that cannot be read are left alone (evcxr treats them as misses).
pub fn prune_stale_entries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| is_stale(&e.path()))
        .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_prerequisites_are_read_with_escaped_spaces() {
        let text = "/t/libx.rlib: /src/lib.rs /out\\ dir/private.rs\n\n/src/lib.rs:\n";
        assert_eq!(
            dep_info_sources(text),
            vec![
                PathBuf::from("/src/lib.rs"),
                PathBuf::from("/out dir/private.rs")
            ]
        );
    }

    #[test]
    fn entries_naming_missing_files_are_removed_and_the_rest_kept() {
        let cache = tempfile::tempdir().unwrap();
        let source = cache.path().join("lib.rs");
        std::fs::write(&source, "").unwrap();
        let good = cache.path().join("1");
        let stale = cache.path().join("2");
        let unreadable = cache.path().join("3");
        for d in [&good, &stale, &unreadable] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(good.join("a.d"), format!("x.rlib: {}\n", source.display())).unwrap();
        std::fs::write(
            stale.join("b.d"),
            format!("x.rlib: {} /gone/out/private.rs\n", source.display()),
        )
        .unwrap();
        std::fs::write(unreadable.join("c.d"), [0xff, 0xfe]).unwrap();
        assert_eq!(prune_stale_entries(cache.path()), 1);
        assert!(good.exists() && unreadable.exists() && !stale.exists());
        assert_eq!(prune_stale_entries(&cache.path().join("missing")), 0);
    }
}
