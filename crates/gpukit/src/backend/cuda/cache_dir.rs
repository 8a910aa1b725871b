//! Where the kernel cache lives on disk: a directory private to this user.
//!
//! Code loaded onto the GPU from a directory another user can write to could have been planted
//! there, so the directory is created with mode 0700 and refused (the cache then stays in
//! memory) when it is anyone else's or others may write to it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the disk cache belongs: `$GPUKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/gpukit/kernels`, else
/// `~/.cache/gpukit/kernels`, else `gpukit-kernels-UID` in the temporary directory (one level, so that
/// no directory another user could own lies on the way).
fn cache_location(var: impl Fn(&str) -> Option<OsString>, uid: u32) -> PathBuf {
    let var = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("GPUKIT_CACHE_DIR") {
        return dir;
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .map(|c| c.join("gpukit").join("kernels"))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("gpukit-kernels-{uid}")))
}

/// The effective user id.
#[cfg(unix)]
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Off Unix, ownership is not checked; the value only names the fallback directory.
#[cfg(not(unix))]
fn euid() -> u32 {
    0
}

/// Creates `dir` (and missing parents) with mode 0700 and checks that only this user can use it:
/// a directory, or a link of this user's to one, owned by this user and not writable by group or
/// others. One that others may only read or enter is tightened to 0700; anything else is refused
/// with the reason, since code loaded from there could have been planted by another user.
fn ensure_private(dir: &Path) -> std::result::Result<(), String> {
    let shown = dir.display();
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {shown}: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let uid = euid();
        let link = std::fs::symlink_metadata(dir).map_err(|e| format!("{shown}: {e}"))?;
        if link.file_type().is_symlink() && link.uid() != uid {
            return Err(format!(
                "{shown} is a symbolic link owned by uid {}, not by this user (uid {uid})",
                link.uid()
            ));
        }
        let meta = std::fs::metadata(dir).map_err(|e| format!("{shown}: {e}"))?;
        if !meta.is_dir() {
            return Err(format!("{shown} is not a directory"));
        }
        if meta.uid() != uid {
            return Err(format!(
                "{shown} is owned by uid {}, not by this user (uid {uid})",
                meta.uid()
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(format!(
                "other users can write to {shown} (mode {mode:o}); if nobody else did, `chmod 700 {shown}`"
            ));
        }
        if mode != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot make {shown} private: {e}"))?;
        }
    }
    Ok(())
}

/// The disk cache's directory (see [`cache_location`]), made private to this user; `None`, with
/// the reason printed once per process, when it cannot be (the cache is then memory-only).
pub(crate) fn cache_dir() -> Option<PathBuf> {
    let dir = cache_location(|k| std::env::var_os(k), euid());
    match ensure_private(&dir) {
        Ok(()) => Some(dir),
        Err(why) => {
            crate::process::process_global! {
                fn warned() -> &'static std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
            }
            if !warned().swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("gpukit: not using the kernel disk cache: {why}");
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_location_is_per_user() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            cache_location(env(&[]), 1234),
            std::env::temp_dir().join("gpukit-kernels-1234")
        );
        assert_eq!(
            cache_location(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "")]), 1),
            PathBuf::from("/home/u/.cache/gpukit/kernels")
        );
        assert_eq!(
            cache_location(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")]), 1),
            PathBuf::from("/c/gpukit/kernels")
        );
        assert_eq!(
            cache_location(env(&[("GPUKIT_CACHE_DIR", "/g"), ("HOME", "/h")]), 1),
            PathBuf::from("/g")
        );
    }

    /// A fresh private directory for one test, removed when dropped.
    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[cfg(unix)]
    mod private_dirs {
        use super::super::*;
        use std::os::unix::fs::{MetadataExt, PermissionsExt};

        fn mode(p: &Path) -> u32 {
            std::fs::metadata(p).unwrap().mode() & 0o7777
        }

        fn set_mode(p: &Path, m: u32) {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        }

        #[test]
        fn created_0700_tightened_or_refused() {
            let t = super::tempdir();
            let root = t.path();
            let d = root.join("a").join("b");
            ensure_private(&d).unwrap();
            assert_eq!((mode(&root.join("a")), mode(&d)), (0o700, 0o700));
            set_mode(&d, 0o755);
            ensure_private(&d).unwrap();
            assert_eq!(mode(&d), 0o700, "readable by others is tightened");
            for m in [0o777, 0o770, 0o1777, 0o702] {
                set_mode(&d, m);
                let e = ensure_private(&d).unwrap_err();
                assert!(e.contains("other users can write"), "{e}");
                assert_eq!(mode(&d), m, "left as it was");
            }
            let f = root.join("file");
            std::fs::write(&f, "").unwrap();
            assert!(ensure_private(&f).unwrap_err().contains("cannot create"));
        }

        /// Owned by another user: made with chown when running as root, else `/` (root's).
        #[test]
        fn other_users_directories_are_refused() {
            let t = super::tempdir();
            let root = t.path();
            if euid() == 0 {
                let d = root.join("theirs");
                std::fs::create_dir(&d).unwrap();
                set_mode(&d, 0o700);
                std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
                let e = ensure_private(&d).unwrap_err();
                assert!(e.contains("owned by uid 65534, not by this user"), "{e}");
                let mine = root.join("mine");
                std::fs::create_dir(&mine).unwrap();
                let link = root.join("their-link");
                std::os::unix::fs::symlink(&mine, &link).unwrap();
                std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
                let e = ensure_private(&link).unwrap_err();
                assert!(e.contains("symbolic link owned by uid 65534"), "{e}");
            } else {
                let e = ensure_private(Path::new("/")).unwrap_err();
                assert!(e.contains("owned by uid 0, not by this user"), "{e}");
            }
            assert_eq!(std::fs::metadata(root).unwrap().uid(), euid());
        }
    }
}
