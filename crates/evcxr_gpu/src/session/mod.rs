//! The evcxr session: one `CommandContext` on its own thread, fed with jobs by the protocol layer.
//!
//! At start the session sets evcxr's optimisation level and compile cache, loads gpukit and runs
//! the prelude. Every cell is split into steps ([`crate::cell`]); Rust steps get
//! `gpukit::synchronize()?;` appended (see [`crate::rewrite`]) so that asynchronous GPU errors
//! show in the cell that caused them.

pub mod config;
pub mod errors;
pub mod progress;
pub mod stderr_tap;
pub mod workdir;

use crate::cell;
use crate::magics::{self, Context, Step};
use crate::publisher::Publisher;
use crate::rewrite::append_epilogue;
use config::Config;
use errors::CellError;
use evcxr::{CommandContext, EvalCallbacks, EvalContextOutputs, EvalOutputs};
use jupyter_protocol::Media;
use progress::BuildProgress;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Asks the frontend for a line of input: `(prompt, is_password) -> reply`.
pub type InputFn = Box<dyn Fn(String, bool) -> String + Send>;

/// What executing a cell produced besides streamed output.
#[derive(Debug, Default)]
pub struct ExecuteOutcome {
    /// Values to display (MIME bundles), the last one being the cell's result.
    pub results: Vec<Media>,
    /// The error that stopped the cell, if any.
    pub error: Option<CellError>,
}

/// Completions as byte offsets into the code.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CompletionResult {
    /// Replacement texts.
    pub matches: Vec<String>,
    /// Byte offset where the replaced text starts.
    pub start: usize,
    /// Byte offset where it ends.
    pub end: usize,
}

/// Work for the session thread.
pub enum Job {
    /// Run a cell.
    Execute {
        /// The cell source.
        code: String,
        /// How to ask for input, when the frontend allows it.
        input: Option<InputFn>,
        /// Where the outcome goes.
        reply: oneshot::Sender<ExecuteOutcome>,
    },
    /// Complete the code at a byte offset.
    Complete {
        /// The cell source.
        code: String,
        /// Cursor as a byte offset.
        cursor: usize,
        /// Where the completions go.
        reply: oneshot::Sender<CompletionResult>,
    },
    /// Describe what is under the cursor: `(plain text, html)`.
    Inspect {
        /// The cell source.
        code: String,
        /// Cursor as a byte offset.
        cursor: usize,
        /// Where the description goes.
        reply: oneshot::Sender<Option<(String, String)>>,
    },
}

/// Stops whatever the session is running: the evcxr child process or a shell command.
#[derive(Default)]
pub struct Interrupter {
    child: Mutex<Option<Arc<Mutex<Child>>>>,
    shell_pgid: Mutex<Option<i32>>,
    interrupted: AtomicBool,
}

impl Interrupter {
    /// Interrupts the running cell (kills the user-code process or the shell command's group).
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        if let Some(pgid) = *self.shell_pgid.lock().unwrap_or_else(|p| p.into_inner()) {
            // SAFETY: signalling a process group this session started.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        if let Some(child) = &*self.child.lock().unwrap_or_else(|p| p.into_inner()) {
            let _ = child.lock().unwrap_or_else(|p| p.into_inner()).kill();
        }
    }

    fn take_interrupted(&self) -> bool {
        self.interrupted.swap(false, Ordering::SeqCst)
    }
}

/// Handle to the session thread.
pub struct Session {
    jobs: mpsc::Sender<Job>,
    interrupter: Arc<Interrupter>,
}

impl Session {
    /// Starts the session thread; it loads gpukit immediately and then serves jobs.
    pub fn start(
        config: Config,
        publisher: Arc<Publisher>,
        progress: Arc<BuildProgress>,
    ) -> std::io::Result<Session> {
        let (tx, rx) = mpsc::channel();
        let interrupter = Arc::new(Interrupter::default());
        let intr = interrupter.clone();
        std::thread::Builder::new()
            .name("evcxr-session".into())
            .spawn(move || {
                let mut worker = Worker::start(config, publisher, progress, intr);
                for job in rx {
                    worker.run(job);
                }
            })?;
        Ok(Session {
            jobs: tx,
            interrupter,
        })
    }

    /// Queues a job; false if the session thread is gone.
    pub fn submit(&self, job: Job) -> bool {
        self.jobs.send(job).is_ok()
    }

    /// The interrupter of this session.
    pub fn interrupter(&self) -> Arc<Interrupter> {
        self.interrupter.clone()
    }
}

/// Forwards evcxr's stdout/stderr lines to the cell; flushes on request.
struct Forwarder {
    flush: crossbeam_channel::Sender<mpsc::Sender<()>>,
}

impl Forwarder {
    fn spawn(outputs: EvalContextOutputs, publisher: Arc<Publisher>) -> std::io::Result<Forwarder> {
        let (ftx, frx) = crossbeam_channel::unbounded::<mpsc::Sender<()>>();
        std::thread::Builder::new()
            .name("evcxr-output".into())
            .spawn(move || forward(outputs, publisher, frx))?;
        Ok(Forwarder { flush: ftx })
    }

    /// Waits until every line evcxr has produced so far has been published.
    fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        if self.flush.send(tx).is_ok() {
            let _ = rx.recv_timeout(Duration::from_secs(5));
        }
    }
}

fn drain(first: String, rx: &crossbeam_channel::Receiver<String>) -> String {
    let mut text = first;
    text.push('\n');
    while text.len() < 64 * 1024 {
        match rx.try_recv() {
            Ok(l) => {
                text.push_str(&l);
                text.push('\n');
            }
            Err(_) => break,
        }
    }
    text
}

fn forward(
    outputs: EvalContextOutputs,
    publisher: Arc<Publisher>,
    flush: crossbeam_channel::Receiver<mpsc::Sender<()>>,
) {
    let never = crossbeam_channel::never::<String>();
    let mut out = Some(outputs.stdout);
    let mut err = Some(outputs.stderr);
    loop {
        let o = out.as_ref().unwrap_or(&never);
        let e = err.as_ref().unwrap_or(&never);
        crossbeam_channel::select! {
            recv(o) -> line => match line {
                Ok(l) => publisher.stdout(&drain(l, o)),
                Err(_) => out = None,
            },
            recv(e) -> line => match line {
                Ok(l) => publisher.stderr(&drain(l, e)),
                Err(_) => err = None,
            },
            recv(flush) -> ack => match ack {
                Ok(ack) => {
                    while let Ok(l) = o.try_recv() {
                        publisher.stdout(&drain(l, o));
                    }
                    while let Ok(l) = e.try_recv() {
                        publisher.stderr(&drain(l, e));
                    }
                    let _ = ack.send(());
                }
                Err(_) => return,
            },
        }
    }
}

/// The state living on the session thread.
struct Worker {
    ctx: Result<CommandContext, String>,
    forwarder: Option<Forwarder>,
    gpukit: bool,
    startup_error: Option<String>,
    publisher: Arc<Publisher>,
    progress: Arc<BuildProgress>,
    interrupter: Arc<Interrupter>,
}

const SYNC: &str = "gpukit::synchronize()?;";

impl Worker {
    fn start(
        config: Config,
        publisher: Arc<Publisher>,
        progress: Arc<BuildProgress>,
        interrupter: Arc<Interrupter>,
    ) -> Worker {
        let mut w = Worker {
            ctx: Err(String::new()),
            forwarder: None,
            gpukit: false,
            startup_error: None,
            publisher,
            progress,
            interrupter,
        };
        match CommandContext::new() {
            Ok((ctx, outputs)) => {
                *w.interrupter
                    .child
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = Some(ctx.process_handle());
                match Forwarder::spawn(outputs, w.publisher.clone()) {
                    Ok(f) => w.forwarder = Some(f),
                    Err(e) => w.startup_error = Some(format!("cannot forward output: {e}")),
                }
                w.ctx = Ok(ctx);
            }
            Err(e) => {
                w.ctx = Err(format!(
                    "evcxr could not start (is cargo installed and on PATH?): {e}"
                ));
                return w;
            }
        }
        w.load(&config);
        w
    }

    fn load(&mut self, config: &Config) {
        let Ok(ctx) = &mut self.ctx else { return };
        let code = config.startup_code();
        match ctx.execute(&code) {
            Ok(_) => self.gpukit = config.gpukit.is_some(),
            Err(e) => {
                let err = CellError::evcxr(&e, &code);
                self.startup_error = Some(format!(
                    "the session start-up code failed, so gpukit is not loaded:\n{}\n{}",
                    code,
                    err.traceback.join("\n")
                ));
                let _ = ctx.execute(&format!(
                    ":opt {}\n:cache {}",
                    config.opt_level, config.cache_mib
                ));
            }
        }
        self.progress.finish();
    }

    fn run(&mut self, job: Job) {
        match job {
            Job::Execute { code, input, reply } => {
                let outcome = self.execute(&code, input);
                let _ = reply.send(outcome);
            }
            Job::Complete {
                code,
                cursor,
                reply,
            } => {
                let _ = reply.send(self.complete(&code, cursor));
            }
            Job::Inspect {
                code,
                cursor,
                reply,
            } => {
                let r = match &mut self.ctx {
                    Ok(ctx) => ctx
                        .hover_at(&code, cursor.min(code.len()))
                        .ok()
                        .filter(|(p, _)| !p.trim().is_empty()),
                    Err(_) => None,
                };
                let _ = reply.send(r);
            }
        }
    }

    fn execute(&mut self, code: &str, input: Option<InputFn>) -> ExecuteOutcome {
        self.interrupter.take_interrupted();
        if let Some(e) = self.startup_error.take() {
            self.publisher.stderr(&format!("evcxr_gpu: {e}\n"));
        }
        let mut outcome = ExecuteOutcome::default();
        if let Err(e) = &self.ctx {
            outcome.error = Some(CellError::simple("SessionError", e));
            return outcome;
        }
        let steps = match cell::parse(
            code,
            Context {
                gpukit: self.gpukit,
            },
        ) {
            Ok(s) => s,
            Err(e) => {
                outcome.error = Some(CellError::magic(&e));
                return outcome;
            }
        };
        for step in steps {
            let r = match step {
                Step::Print(text) => {
                    self.publisher.stdout(&text);
                    Ok(None)
                }
                Step::Shell(cmd) => self.shell(&cmd).map(|_| None),
                Step::Rust(rust) => self.eval(&rust, &input),
            };
            if let Some(f) = &self.forwarder {
                f.flush();
            }
            match r {
                Ok(Some(media)) => outcome.results.push(media),
                Ok(None) => {}
                Err(e) => {
                    outcome.error = Some(e);
                    break;
                }
            }
        }
        self.progress.finish();
        outcome
    }

    fn eval_raw(
        &mut self,
        code: &str,
        input: &Option<InputFn>,
    ) -> Result<EvalOutputs, evcxr::Error> {
        let Ok(ctx) = &mut self.ctx else {
            return Err(evcxr::Error::Message("no evcxr session".into()));
        };
        let mut callbacks = EvalCallbacks {
            input_reader: &|req| match input {
                Some(f) => f(req.prompt, req.is_password),
                None => String::new(),
            },
        };
        ctx.execute_with_callbacks(code, &mut callbacks)
    }

    /// Evaluates one Rust step, synchronising gpukit at its end.
    fn eval(&mut self, code: &str, input: &Option<InputFn>) -> Result<Option<Media>, CellError> {
        let synced = if self.gpukit {
            append_epilogue(code, SYNC).filter(|r| r != code)
        } else {
            None
        };
        let result = match synced {
            Some(rewritten) => match self.eval_raw(&rewritten, input) {
                // The appended code cannot be the cause of a type error the user's code does not
                // have, but some values (borrows of temporaries) cannot be bound; evaluate the
                // cell as written then, for exact error messages or a result, and sync apart.
                Err(evcxr::Error::CompilationErrors(_)) => {
                    let r = self.eval_raw(code, input);
                    if r.is_ok() {
                        if let Err(e) = self.eval_raw(SYNC, input) {
                            return Err(self.error(&e, SYNC));
                        }
                    }
                    r
                }
                other => other,
            },
            None => self.eval_raw(code, input),
        };
        match result {
            Ok(out) => {
                if let Some(t) = out.timing {
                    self.publisher
                        .stdout(&format!("Took {}ms\n", t.as_millis()));
                }
                if out.content_by_mime_type.is_empty() {
                    return Ok(None);
                }
                let map: serde_json::Map<String, serde_json::Value> = out
                    .content_by_mime_type
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect();
                Ok(serde_json::from_value(serde_json::Value::Object(map)).ok())
            }
            Err(e) => Err(self.error(&e, code)),
        }
    }

    fn error(&self, e: &evcxr::Error, code: &str) -> CellError {
        if self.interrupter.take_interrupted() {
            CellError::interrupted()
        } else {
            CellError::evcxr(e, code)
        }
    }

    /// Runs `!cmd` with `sh -c`, streaming its output.
    fn shell(&mut self, cmd: &str) -> Result<(), CellError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| CellError::simple("ShellError", &format!("cannot run `{cmd}`: {e}")))?;
        *self
            .interrupter
            .shell_pgid
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(child.id() as i32);
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let p = self.publisher.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    p.stdout(&format!("{line}\n"));
                }
            }));
        }
        if let Some(err) = child.stderr.take() {
            let p = self.publisher.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    p.stderr(&format!("{line}\n"));
                }
            }));
        }
        let status = child.wait();
        for r in readers {
            let _ = r.join();
        }
        *self
            .interrupter
            .shell_pgid
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
        if self.interrupter.take_interrupted() {
            return Err(CellError::interrupted());
        }
        match status {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(CellError::simple(
                "ShellError",
                &format!("`{cmd}` failed ({s})"),
            )),
            Err(e) => Err(CellError::simple("ShellError", &format!("`{cmd}`: {e}"))),
        }
    }

    fn complete(&mut self, code: &str, cursor: usize) -> CompletionResult {
        let cursor = cursor.min(code.len());
        if let Some(r) = complete_magic(code, cursor) {
            return r;
        }
        match &mut self.ctx {
            Ok(ctx) => match ctx.completions(code, cursor) {
                Ok(c) => CompletionResult {
                    matches: c.completions.into_iter().map(|c| c.code).collect(),
                    start: c.start_offset,
                    end: c.end_offset,
                },
                Err(_) => CompletionResult {
                    matches: vec![],
                    start: cursor,
                    end: cursor,
                },
            },
            Err(_) => CompletionResult::default(),
        }
    }
}

/// Completes magic names when the cursor is in `%name` or `%%name` at the start of a line.
pub fn complete_magic(code: &str, cursor: usize) -> Option<CompletionResult> {
    let line_start = code[..cursor].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let before = &code[line_start..cursor];
    let (prefix, typed, list) = if let Some(p) = before.strip_prefix("%%") {
        ("%%", p, magics::CELL_MAGICS)
    } else if let Some(p) = before.strip_prefix('%') {
        ("%", p, magics::LINE_MAGICS)
    } else {
        return None;
    };
    if !typed.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some(CompletionResult {
        matches: list
            .iter()
            .filter(|(n, _)| n.starts_with(typed))
            .map(|(n, _)| format!("{prefix}{n}"))
            .collect(),
        start: line_start,
        end: cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_magic_names() {
        let r = complete_magic("let x = 1;\n%ti", 14).unwrap();
        assert_eq!(r.matches, vec!["%time", "%timeit"]);
        assert_eq!((r.start, r.end), (11, 14));
        let r = complete_magic("%%cu", 4).unwrap();
        assert_eq!(r.matches, vec!["%%cuda"]);
        assert!(complete_magic("let x", 5).is_none());
        assert!(complete_magic("%time x.s", 9).is_none());
    }
}
