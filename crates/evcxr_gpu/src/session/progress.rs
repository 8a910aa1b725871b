//! Build progress shown in the cell: "compiling 37/112 crates: serde".
//!
//! evcxr echoes cargo's `Compiling NAME` lines on the kernel's stderr (see [`super::stderr_tap`]).
//! The total comes from the `Cargo.lock` of the session's crate, which cargo writes before it
//! compiles anything. One display is shown per cell and updated in place.

use crate::publisher::{text_media, Publisher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The crate name in a cargo `Compiling NAME vX.Y.Z` line.
pub fn compiling_crate(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("Compiling ")?;
    let name = rest.split_whitespace().next()?;
    name.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        .then_some(name)
}

/// Number of packages in a `Cargo.lock`, not counting the session's own crate.
pub fn dependency_count(lock: &str) -> usize {
    lock.lines()
        .filter(|l| l.trim() == "[[package]]")
        .count()
        .saturating_sub(1)
}

/// The progress line for `done` crates of `total` (when known).
pub fn progress_line(done: usize, total: Option<usize>, current: &str) -> String {
    match total {
        Some(t) if t >= done => format!("compiling {done}/{t} crates: {current}"),
        _ => format!("compiling {done} crates: {current}"),
    }
}

struct State {
    display_id: Option<String>,
    done: usize,
    total: Option<usize>,
    current: String,
    started: Instant,
    last_sent: Option<Instant>,
}

/// Tracks dependency builds and shows them in the running cell.
pub struct BuildProgress {
    publisher: Arc<Publisher>,
    lock_file: PathBuf,
    state: Mutex<State>,
}

const MIN_INTERVAL: Duration = Duration::from_millis(250);

impl BuildProgress {
    /// Progress for the session crate whose lock file is `lock_file`.
    pub fn new(publisher: Arc<Publisher>, lock_file: PathBuf) -> Self {
        BuildProgress {
            publisher,
            lock_file,
            state: Mutex::new(State {
                display_id: None,
                done: 0,
                total: None,
                current: String::new(),
                started: Instant::now(),
                last_sent: None,
            }),
        }
    }

    /// Records that cargo started compiling `name`.
    pub fn crate_started(&self, name: &str) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.done == 0 {
            s.started = Instant::now();
            s.total = std::fs::read_to_string(&self.lock_file)
                .ok()
                .map(|l| dependency_count(&l));
        }
        s.done += 1;
        s.current = name.to_string();
        let due = s.last_sent.is_none_or(|t| t.elapsed() >= MIN_INTERVAL);
        if self.publisher.parent().is_none() {
            self.publisher.log(&progress_line(s.done, s.total, name));
            return;
        }
        if due {
            let line = progress_line(s.done, s.total, name);
            self.show(&mut s, line);
        }
    }

    fn show(&self, s: &mut State, text: String) {
        match &s.display_id {
            Some(id) => self.publisher.update_display(text_media(&text), id),
            None => {
                let id = format!("evcxr-gpu-build-{}", uuid::Uuid::new_v4());
                self.publisher.display(text_media(&text), Some(&id));
                s.display_id = Some(id);
            }
        }
        s.last_sent = Some(Instant::now());
    }

    /// Ends the progress of the current cell with a summary line, if anything was compiled.
    pub fn finish(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.done > 0 && self.publisher.parent().is_some() {
            let text = format!(
                "compiled {} crate{} in {:.1} s",
                s.done,
                if s.done == 1 { "" } else { "s" },
                s.started.elapsed().as_secs_f64()
            );
            self.show(&mut s, text);
        }
        s.display_id = None;
        s.done = 0;
        s.total = None;
        s.last_sent = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jupyter_protocol::{ExecuteRequest, JupyterMessage};

    #[test]
    fn parses_cargo_lines() {
        assert_eq!(compiling_crate("   Compiling serde v1.0.1"), Some("serde"));
        assert_eq!(
            compiling_crate("Compiling ctx v1.0.0 (/tmp/x)"),
            Some("ctx")
        );
        assert_eq!(compiling_crate("warning: unused"), None);
        assert_eq!(compiling_crate("Compiling "), None);
    }

    #[test]
    fn counts_lock_packages() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\n\n[[package]]\nname = \"ctx\"\n";
        assert_eq!(dependency_count(lock), 1);
        assert_eq!(
            progress_line(3, Some(10), "syn"),
            "compiling 3/10 crates: syn"
        );
        assert_eq!(progress_line(3, None, "syn"), "compiling 3 crates: syn");
    }

    #[test]
    fn one_display_updated_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("Cargo.lock");
        std::fs::write(&lock, "[[package]]\n[[package]]\n[[package]]\n").unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let publisher = Arc::new(Publisher::new(tx, Box::new(|_| {})));
        let req: JupyterMessage = ExecuteRequest::new("".into()).into();
        publisher.set_parent(Some(req));
        let p = BuildProgress::new(publisher, lock);
        p.crate_started("a");
        p.crate_started("b");
        p.finish();
        let first = rx.try_recv().unwrap();
        assert_eq!(first.header.msg_type, "display_data");
        let text = serde_json::to_value(&first.content).unwrap();
        assert_eq!(text["data"]["text/plain"], "compiling 1/2 crates: a");
        let last = rx.try_recv().unwrap();
        assert_eq!(last.header.msg_type, "update_display_data");
        let text = serde_json::to_value(&last.content).unwrap();
        assert!(text["data"]["text/plain"]
            .as_str()
            .unwrap()
            .starts_with("compiled 2 crates in"));
    }
}
