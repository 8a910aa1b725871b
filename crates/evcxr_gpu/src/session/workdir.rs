//! The session's crate directory: one of a few persistent slots under the work directory.
//!
//! evcxr builds every cell in a crate directory. Keeping that directory (and its `target/`)
//! between kernel starts means gpukit, a path dependency that evcxr's cache cannot hold, is not
//! rebuilt on the next start. Each running kernel locks its slot, so concurrent kernels get
//! different slots.

use std::fs::File;
use std::os::fd::AsRawFd;
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

/// Locks the first free slot under `root` (creating it), e.g. `root/session-0`.
pub fn acquire(root: &Path) -> std::io::Result<Workdir> {
    std::fs::create_dir_all(root)?;
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
}
