//! The session's crate directory: one of a few persistent slots under the work directory.
//!
//! evcxr builds every cell in a crate directory. Keeping that directory (and its `target/`)
//! between kernel starts means gpukit, a path dependency that evcxr's cache cannot hold, is not
//! rebuilt on the next start. Each running kernel locks its slot, so concurrent kernels get
//! different slots.

use std::fs::{DirBuilder, File, Permissions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Slots tried before giving up; a kernel beyond that gets a fresh temporary directory.
pub const SLOTS: usize = 8;

/// A locked slot; the lock is released when this is dropped (or the process ends).
#[derive(Debug)]
pub struct Workdir {
    /// The crate directory evcxr uses (`EVCXR_TMPDIR`).
    pub path: PathBuf,
    _lock: File,
}

fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor owned by `file`.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn refuse(dir: &Path, why: String) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "refusing to use {} as a private directory: {why}",
            dir.display()
        ),
    )
}

/// Makes `dir` a directory only this user can use: creates it (and missing parents) with mode
/// 0700, then checks it. It must be a directory (or a link owned by this user to one) owned by
/// this user and not writable by group or others; a directory that others may only read or
/// enter (such as one made with the default umask) is tightened to 0700. Anything else is
/// refused with an error saying why, since code built and loaded from there could have been
/// planted by another user.
pub fn ensure_private(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
        })?;
    let uid = euid();
    let link = std::fs::symlink_metadata(dir)?;
    if link.file_type().is_symlink() && link.uid() != uid {
        return Err(refuse(
            dir,
            format!(
                "it is a symbolic link owned by uid {}, not by this user (uid {uid})",
                link.uid()
            ),
        ));
    }
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(refuse(dir, "it is not a directory".into()));
    }
    if meta.uid() != uid {
        return Err(refuse(
            dir,
            format!(
                "it is owned by uid {}, not by this user (uid {uid})",
                meta.uid()
            ),
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(
            dir,
            format!(
                "other users can write to it (mode {mode:o}); if nobody else did, `chmod 700 {}` and restart",
                dir.display()
            ),
        ));
    }
    if mode != 0o700 {
        std::fs::set_permissions(dir, Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Locks the first free slot under `root` (made private with [`ensure_private`]), e.g.
/// `root/session-0`.
pub fn acquire(root: &Path) -> std::io::Result<Workdir> {
    ensure_private(root)?;
    for i in 0..SLOTS {
        let path = root.join(format!("session-{i}"));
        std::fs::create_dir_all(&path)?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(root.join(format!("session-{i}.lock")))?;
        if try_lock(&lock) {
            return Ok(Workdir { path, _lock: lock });
        }
    }
    Err(std::io::Error::other(format!(
        "all {SLOTS} session directories under {} are in use",
        root.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_sessions_get_different_slots_and_reuse_them() {
        let root = tempfile::tempdir().unwrap();
        let a = acquire(root.path()).unwrap();
        let b = acquire(root.path()).unwrap();
        assert_eq!(a.path, root.path().join("session-0"));
        assert_eq!(b.path, root.path().join("session-1"));
        drop(a);
        let c = acquire(root.path()).unwrap();
        assert_eq!(c.path, root.path().join("session-0"));
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o7777
    }

    fn set_mode(p: &Path, m: u32) {
        std::fs::set_permissions(p, Permissions::from_mode(m)).unwrap();
    }

    #[test]
    fn private_directories_are_created_0700() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("cache").join("evcxr_gpu");
        ensure_private(&d).unwrap();
        assert_eq!(mode(&d), 0o700);
        assert_eq!(mode(&t.path().join("cache")), 0o700);
        let w = acquire(&t.path().join("work")).unwrap();
        assert_eq!(mode(&t.path().join("work")), 0o700);
        assert!(w.path.is_dir());
    }

    #[test]
    fn readable_by_others_is_tightened() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("old");
        std::fs::create_dir(&d).unwrap();
        set_mode(&d, 0o755);
        ensure_private(&d).unwrap();
        assert_eq!(mode(&d), 0o700);
    }

    #[test]
    fn writable_by_others_is_refused() {
        let t = tempfile::tempdir().unwrap();
        for m in [0o777, 0o770, 0o1777, 0o702] {
            let d = t.path().join(format!("open{m:o}"));
            std::fs::create_dir(&d).unwrap();
            set_mode(&d, m);
            let e = ensure_private(&d).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
            assert!(e.to_string().contains("other users can write"), "{e}");
            assert_eq!(mode(&d), m, "left as it was");
            assert!(acquire(&d).is_err());
        }
    }

    #[test]
    fn files_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("file");
        std::fs::write(&f, "").unwrap();
        assert!(ensure_private(&f).is_err());
    }

    /// A directory (and a link) owned by another user: made with chown when running as root,
    /// else `/`, which root owns.
    #[test]
    fn directories_of_other_users_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let (dir, link) = if euid() == 0 {
            let d = t.path().join("theirs");
            std::fs::create_dir(&d).unwrap();
            set_mode(&d, 0o700);
            std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
            let mine = t.path().join("mine");
            std::fs::create_dir(&mine).unwrap();
            let l = t.path().join("their-link");
            std::os::unix::fs::symlink(&mine, &l).unwrap();
            std::os::unix::fs::lchown(&l, Some(65534), Some(65534)).unwrap();
            (d, Some(l))
        } else {
            (PathBuf::from("/"), None)
        };
        let e = ensure_private(&dir).unwrap_err();
        assert!(e.to_string().contains("not by this user"), "{e}");
        if let Some(l) = link {
            let e = ensure_private(&l).unwrap_err();
            assert!(
                e.to_string().contains("symbolic link owned by uid 65534"),
                "{e}"
            );
        }
        // A link of our own to a private directory is fine (e.g. a cache moved to another disk).
        let target = t.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let ours = t.path().join("our-link");
        std::os::unix::fs::symlink(&target, &ours).unwrap();
        ensure_private(&ours).unwrap();
        assert_eq!(mode(&target), 0o700);
    }
}
