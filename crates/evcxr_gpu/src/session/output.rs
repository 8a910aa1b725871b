//! The user process's stdout and stderr on their way to the cell.
//!
//! evcxr hands over the two streams line by line on two channels, read by two threads, so their
//! order is lost and stderr can lag behind the end of a step. The kernel's own code in the user
//! process marks the points that matter, and a forwarder thread turns the lines into IOPub
//! messages:
//!
//! * [`COMPLETED_MARKER`] (stdout) ends every rewritten step that ran to its end: without it, a
//!   `?` returned early or the code panicked.
//! * [`STDERR_MARKER`] (stderr) follows it: once it has arrived, all of the step's stderr has.
//! * [`PANIC_BEGIN`] … [`PANIC_END`] (stderr) wrap a panic report (see [`PANIC_HOOK`]); it becomes
//!   the cell's error rather than stream output.
//! * [`CLEAR_OUTPUT`] (stdout, optionally followed by ` wait`) clears the cell's output, like
//!   IPython's `clear_output(wait=...)`.
//! * A display line ([`super::display::MARKER`], stdout) shows or updates a display at once
//!   (gpukit's live monitor).
//!
//! stderr is held back for [`STDERR_HOLD`] before it is published, so that when a step fails the
//! last lines (the message evcxr prints for an error returned with `?`) can become the `error`
//! output instead of appearing twice. Stdout that follows releases held stderr at once.

use super::display;
use crate::publisher::Publisher;
use crossbeam_channel::{Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Printed on stdout by the end of every rewritten Rust step.
pub const COMPLETED_MARKER: &str = "EVCXR_GPU_STEP_COMPLETED";
/// Printed on stderr by the end of every rewritten Rust step, after its own stderr.
pub const STDERR_MARKER: &str = "EVCXR_GPU_STDERR_SYNC";
/// Starts a panic report on stderr.
pub const PANIC_BEGIN: &str = "EVCXR_GPU_PANIC_BEGIN";
/// Ends a panic report on stderr.
pub const PANIC_END: &str = "EVCXR_GPU_PANIC_END";
/// A stdout line that clears the cell's output (`EVCXR_GPU_CLEAR_OUTPUT wait`: when the next
/// output arrives).
pub const CLEAR_OUTPUT: &str = "EVCXR_GPU_CLEAR_OUTPUT";
/// How long stderr waits for the step to fail before it is shown.
pub const STDERR_HOLD: Duration = Duration::from_millis(150);

/// Rust run once in every user process: panic reports are wrapped in [`PANIC_BEGIN`] and
/// [`PANIC_END`] (the report itself is the one the previous hook prints). An environment
/// variable of the user process keeps it from being installed twice.
pub const PANIC_HOOK: &str = "if std::env::var_os(\"EVCXR_GPU_PANIC_HOOK\").is_none() { \
     #[allow(unused_unsafe)] unsafe { std::env::set_var(\"EVCXR_GPU_PANIC_HOOK\", \"1\") }; \
     let previous = std::panic::take_hook(); \
     std::panic::set_hook(Box::new(move |info| { \
         eprintln!(\"EVCXR_GPU_PANIC_BEGIN\"); previous(info); eprintln!(\"EVCXR_GPU_PANIC_END\"); \
     })); }";

/// Lines in a burst become one message; a burst ends after this much quiet (or 64 KiB).
const BURST_GAP: Duration = Duration::from_millis(3);
const BURST_BYTES: usize = 64 * 1024;

/// Why a step stopped early, from what it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A panic report (what the panic hook printed between the markers).
    Panic(String),
    /// The stderr that was still held back: the message of an error returned with `?`.
    Stderr(String),
}

#[derive(Default)]
struct State {
    completed: bool,
    stderr_synced: bool,
    /// stderr not yet published, and when its first line arrived.
    held: String,
    held_since: Option<Instant>,
    /// A complete panic report, and one still arriving.
    panic: Option<String>,
    panic_open: Option<String>,
}

enum Command {
    /// Process every line received so far, then answer.
    Flush(Sender<()>),
    /// Flush, publish everything held back, then answer.
    Release(Sender<()>),
    /// Flush, then hand over (unpublished) the panic report or the held stderr.
    TakeFailure(Sender<Option<Failure>>),
}

/// Forwards the user process's output to the cell (see the module documentation).
pub struct Forwarder {
    commands: Sender<Command>,
    state: Arc<Mutex<State>>,
}

impl Forwarder {
    /// Starts the forwarder thread on evcxr's stdout and stderr channels.
    pub fn spawn(
        stdout: Receiver<String>,
        stderr: Receiver<String>,
        publisher: Arc<Publisher>,
    ) -> std::io::Result<Forwarder> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let state = Arc::new(Mutex::new(State::default()));
        let mut thread = Thread {
            publisher,
            state: state.clone(),
            out: Some(stdout),
            err: Some(stderr),
            commands: rx,
            out_text: String::new(),
        };
        std::thread::Builder::new()
            .name("evcxr-output".into())
            .spawn(move || thread.run())?;
        Ok(Forwarder {
            commands: tx,
            state,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets the markers seen so far, before a step runs.
    pub fn reset(&self) {
        let mut s = self.state();
        s.completed = false;
        s.stderr_synced = false;
    }

    fn ask<T>(&self, make: impl FnOnce(Sender<T>) -> Command) -> Option<T> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.commands.send(make(tx)).ok()?;
        rx.recv_timeout(Duration::from_secs(5)).ok()
    }

    /// Waits until every line received so far has been processed.
    pub fn flush(&self) {
        self.ask(Command::Flush);
    }

    /// Publishes everything, held-back stderr included, that has been received so far.
    pub fn release(&self) {
        self.ask(Command::Release);
    }

    /// Whether the step printed [`COMPLETED_MARKER`] (call [`Forwarder::flush`] first).
    pub fn completed(&self) -> bool {
        self.state().completed
    }

    /// After a step that completed: waits (at most `patience`) for its stderr to arrive, then
    /// publishes everything.
    pub fn finish_completed(&self, patience: Duration) {
        let deadline = Instant::now() + patience;
        loop {
            self.flush();
            if self.state().stderr_synced || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.release();
    }

    /// After a step that stopped early: waits (at most `patience`) for a panic report or for the
    /// error message, and hands it over instead of publishing it. `None` if nothing came.
    pub fn take_failure(&self, patience: Duration) -> Option<Failure> {
        let deadline = Instant::now() + patience;
        // Quiet time after the first held line, so a message of several lines arrives whole.
        let mut quiet_since: Option<(Instant, usize)> = None;
        loop {
            self.flush();
            let now = Instant::now();
            {
                let s = self.state();
                if s.panic.is_some() {
                    break;
                }
                if s.panic_open.is_none() && !s.held.is_empty() {
                    match quiet_since {
                        Some((t, len)) if len == s.held.len() => {
                            if now.duration_since(t) >= Duration::from_millis(20) {
                                break;
                            }
                        }
                        _ => quiet_since = Some((now, s.held.len())),
                    }
                }
            }
            if now >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.ask(Command::TakeFailure).flatten()
    }
}

struct Thread {
    publisher: Arc<Publisher>,
    state: Arc<Mutex<State>>,
    out: Option<Receiver<String>>,
    err: Option<Receiver<String>>,
    commands: Receiver<Command>,
    /// Stdout of the current burst, not yet published.
    out_text: String,
}

impl Thread {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn run(&mut self) {
        let never = crossbeam_channel::never::<String>();
        loop {
            let o = self.out.clone().unwrap_or_else(|| never.clone());
            let e = self.err.clone().unwrap_or_else(|| never.clone());
            let c = self.commands.clone();
            let timeout = self.hold_left();
            let mut sel = crossbeam_channel::Select::new();
            let io = sel.recv(&o);
            let ie = sel.recv(&e);
            let ic = sel.recv(&c);
            let op = match timeout {
                Some(t) => match sel.select_timeout(t) {
                    Ok(op) => op,
                    Err(_) => {
                        self.publish_stderr_if_due();
                        continue;
                    }
                },
                None => sel.select(),
            };
            match op.index() {
                i if i == io => match op.recv(&o) {
                    Ok(line) => {
                        self.stdout_line(line);
                        self.burst(&o);
                        self.publish_stdout();
                    }
                    Err(_) => self.out = None,
                },
                i if i == ie => match op.recv(&e) {
                    Ok(line) => self.stderr_line(line),
                    Err(_) => self.err = None,
                },
                i if i == ic => match op.recv(&c) {
                    Ok(cmd) => self.command(cmd, &o, &e),
                    Err(_) => return,
                },
                _ => {}
            }
            self.publish_stderr_if_due();
        }
    }

    /// Time until held-back stderr is due, if any is held.
    fn hold_left(&self) -> Option<Duration> {
        self.state()
            .held_since
            .map(|t| STDERR_HOLD.saturating_sub(t.elapsed()))
    }

    /// Takes the lines that follow at once (a burst) into the same stdout message.
    fn burst(&mut self, o: &Receiver<String>) {
        while self.out_text.len() < BURST_BYTES {
            match o.recv_timeout(BURST_GAP) {
                Ok(line) => self.stdout_line(line),
                Err(_) => break,
            }
        }
    }

    fn stdout_line(&mut self, line: String) {
        if line == COMPLETED_MARKER {
            self.state().completed = true;
            return;
        }
        // What the process printed before this line, on either stream, goes out first.
        self.publish_stderr();
        if let Some(rest) = line.strip_prefix(CLEAR_OUTPUT) {
            let wait = match rest.trim() {
                "" => Some(false),
                "wait" => Some(true),
                _ => None,
            };
            if let Some(wait) = wait {
                self.publish_stdout();
                self.publisher.clear_output(wait);
                return;
            }
        }
        if let Some((before, d)) = display::split_display(&line) {
            // Text printed without a newline just before the display goes out first.
            self.out_text.push_str(before);
            self.publish_stdout();
            if d.update {
                self.publisher.update_display(d.data, &d.id);
            } else {
                self.publisher.display(d.data, Some(&d.id));
            }
            return;
        }
        self.out_text.push_str(&line);
        self.out_text.push('\n');
    }

    fn stderr_line(&mut self, line: String) {
        let mut s = self.state();
        if let Some(report) = &mut s.panic_open {
            if line == PANIC_END {
                s.panic = s.panic_open.take();
            } else {
                report.push_str(&line);
                report.push('\n');
            }
            return;
        }
        match line.as_str() {
            STDERR_MARKER => s.stderr_synced = true,
            PANIC_BEGIN => s.panic_open = Some(String::new()),
            _ => {
                s.held.push_str(&line);
                s.held.push('\n');
                s.held_since.get_or_insert_with(Instant::now);
            }
        }
    }

    fn publish_stdout(&mut self) {
        if !self.out_text.is_empty() {
            self.publisher.stdout(&std::mem::take(&mut self.out_text));
        }
    }

    fn publish_stderr(&mut self) {
        let text = {
            let mut s = self.state();
            s.held_since = None;
            std::mem::take(&mut s.held)
        };
        if !text.is_empty() {
            self.publisher.stderr(&text);
        }
    }

    fn publish_stderr_if_due(&mut self) {
        if self.hold_left() == Some(Duration::ZERO) {
            self.publish_stderr();
        }
    }

    /// Processes every line already waiting on the two channels.
    fn drain(&mut self, o: &Receiver<String>, e: &Receiver<String>) {
        loop {
            let mut any = false;
            while let Ok(line) = e.try_recv() {
                self.stderr_line(line);
                any = true;
            }
            while let Ok(line) = o.try_recv() {
                self.stdout_line(line);
                any = true;
            }
            if !any {
                break;
            }
        }
        self.publish_stdout();
    }

    fn command(&mut self, cmd: Command, o: &Receiver<String>, e: &Receiver<String>) {
        self.drain(o, e);
        match cmd {
            Command::Flush(ack) => {
                let _ = ack.send(());
            }
            Command::Release(ack) => {
                self.publish_stderr();
                // A report that was no step's failure (a panic on another thread) is output.
                let report = {
                    let mut s = self.state();
                    let mut r = s.panic.take().unwrap_or_default();
                    if let Some(open) = s.panic_open.take() {
                        r.push_str(&open);
                    }
                    r
                };
                if !report.is_empty() {
                    self.publisher.stderr(&report);
                }
                let _ = ack.send(());
            }
            Command::TakeFailure(ack) => {
                let failure = {
                    let mut s = self.state();
                    if let Some(report) = s.panic.take().or_else(|| s.panic_open.take()) {
                        Some(Failure::Panic(report))
                    } else {
                        s.held_since = None;
                        let held = std::mem::take(&mut s.held);
                        (!held.trim().is_empty()).then_some(Failure::Stderr(held))
                    }
                };
                // stderr held before a panic report is the cell's own output.
                self.publish_stderr();
                let _ = ack.send(failure);
            }
        }
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
