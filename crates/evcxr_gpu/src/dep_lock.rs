//! One build of a dependency at a time across kernels that share evcxr's compile cache.
//!
//! With the cache on, cargo runs every rustc through this binary, and evcxr's wrapper looks the
//! compile up in `~/.cache/evcxr`. On a hit it copies the artifacts out and rewrites the entry's
//! `hits` counter; on a miss it compiles and then fills the entry. None of this is locked, so
//! several kernels starting at once (a notebook runner executing four notebooks side by side)
//! race on the same entries: one kernel reads a `hits` file another is rewriting, finds it
//! empty, and the wrapper fails the build with "cannot parse integer from empty string" — the
//! session then starts without gpukit. Both kernels also compile the same crate twice.
//!
//! [`hold`] takes an exclusive lock named after the dependency's build (its crate name and
//! cargo's `-C metadata` hash, which is the same in every session with the same dependency
//! graph) before evcxr's wrapper runs, and keeps it until the process exits. A second kernel
//! building the same crate waits, then finds the first one's entry complete: a cache hit.
//! Different crates still build in parallel, and each process holds one lock, so no two can
//! wait on each other. The cell crate (`ctx`, built incrementally) is never cached by evcxr and
//! is not locked.

use std::ffi::OsString;
use std::fs::File;
use std::path::PathBuf;

/// evcxr's variable that turns its compile cache on for a build.
const CACHE_ENABLED_ENV: &str = "EVCXR_CACHE_ENABLED";

/// The lock's name for a rustc command line (rustc's arguments, without the wrapper's own and
/// the rustc path): `<crate>-<metadata>`, or `None` for a build evcxr does not cache (an
/// incremental one, or one without a crate name or metadata hash).
pub fn lock_name(args: &[OsString]) -> Option<String> {
    use crate::rustc_args::{codegen_options, crate_name};
    let options = codegen_options(args);
    if options.iter().any(|o| o.starts_with("incremental=")) {
        return None;
    }
    let name = crate_name(args)?;
    let hash = options.iter().find_map(|o| o.strip_prefix("metadata="))?;
    let safe = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    (safe(name) && safe(hash)).then(|| format!("{name}-{hash}"))
}

/// Where the lock files live: beside evcxr's cache, not inside it (evcxr treats every entry of
/// its directory as a cache entry).
fn lock_dir() -> Option<PathBuf> {
    let cache = crate::session::dep_cache::evcxr_cache_dir()?;
    Some(cache.with_file_name("evcxr_gpu-locks"))
}

/// When this process is evcxr's rustc wrapper for a cached dependency build, blocks until it
/// holds that build's lock and returns the locked file (the lock ends when the process does).
/// Returns `None`, without waiting, for any other process or when no lock can be taken; the
/// build then runs unlocked, as evcxr runs it.
pub fn hold() -> Option<File> {
    std::env::var_os(crate::cell_rustc::WRAPPER_ENV)?;
    std::env::var_os(CACHE_ENABLED_ENV)?;
    // The wrapper's arguments are rustc's path, then rustc's own arguments.
    let args: Vec<OsString> = std::env::args_os().skip(2).collect();
    let name = lock_name(&args)?;
    let dir = lock_dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    let file = File::create(dir.join(format!("{name}.lock"))).ok()?;
    file.lock().ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn a_dependency_build_is_named_by_crate_and_metadata() {
        let a = args(
            "--crate-name rawpointer --edition=2015 src/lib.rs --crate-type lib \
             -C opt-level=2 -C metadata=37421f86ec485f9f -C extra-filename=-93bd --cap-lints allow",
        );
        assert_eq!(
            lock_name(&a).as_deref(),
            Some("rawpointer-37421f86ec485f9f")
        );
        let joined = args("--crate-name cudarc -Cmetadata=abc123 -Copt-level=2");
        assert_eq!(lock_name(&joined).as_deref(), Some("cudarc-abc123"));
    }

    #[test]
    fn incremental_and_incomplete_builds_are_not_locked() {
        let cell =
            args("--crate-name ctx -C metadata=24ae -C incremental=/w/target/debug/incremental");
        assert_eq!(lock_name(&cell), None);
        assert_eq!(lock_name(&args("--crate-name foo -C opt-level=2")), None);
        assert_eq!(lock_name(&args("-C metadata=24ae")), None);
        assert_eq!(lock_name(&args("--crate-name ../evil -C metadata=1")), None);
    }

    #[test]
    fn the_lock_excludes_a_second_holder_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = File::create(&path).unwrap();
        first.lock().unwrap();
        let second = File::create(&path).unwrap();
        assert!(second.try_lock().is_err(), "a second holder got the lock");
        drop(first);
        assert!(second.try_lock().is_ok(), "the lock outlived its holder");
    }
}
