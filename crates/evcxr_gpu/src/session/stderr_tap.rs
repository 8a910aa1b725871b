//! Reading the kernel's own stderr, where evcxr echoes cargo's `Compiling ...` lines.
//!
//! File descriptor 2 is replaced by a pipe; a thread reads it line by line and hands each line to
//! a handler. The original stderr (the Jupyter server's log) stays available for logging.

use std::io::{BufRead, BufReader};
use std::os::fd::FromRawFd;

/// Redirects fd 2 into a pipe; returns a duplicate of the original stderr and the pipe's read end.
pub fn install() -> std::io::Result<(i32, std::fs::File)> {
    let mut fds = [0i32; 2];
    // SAFETY: plain POSIX calls on descriptors this function owns; results are checked.
    unsafe {
        let original = libc::dup(2);
        if original < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(original, libc::F_SETFD, libc::FD_CLOEXEC);
        if libc::dup2(fds[1], 2) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::close(fds[1]);
        Ok((original, std::fs::File::from_raw_fd(fds[0])))
    }
}

/// Reads `pipe` on a thread, calling `on_line` for every line (without its line break).
pub fn spawn_reader(
    pipe: std::fs::File,
    on_line: impl Fn(&str) + Send + 'static,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("stderr-tap".into())
        .spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        on_line(line.trim_end_matches(['\n', '\r']));
                    }
                }
            }
        })
        .map(|_| ())
}
