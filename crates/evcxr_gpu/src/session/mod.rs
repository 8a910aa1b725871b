//! The evcxr session: one `CommandContext` on its own thread, fed with jobs by the protocol layer.
//!
//! At start the session sets evcxr's optimisation level and compile cache, loads gpukit and runs
//! the prelude. Every cell is split into steps ([`crate::cell`]); Rust steps get
//! `gpukit::synchronize()?;` appended (see [`crate::rewrite`]) so that asynchronous GPU errors
//! show in the cell that caused them.
//!
//! Why this file is long: the session is one state machine (start-up, cells, magics lowering, completion, interrupts); its helpers already live in the sibling files.

pub mod config;
pub mod dep_cache;
pub mod display;
pub mod errors;
pub mod libpath;
pub mod output;
pub mod progress;
pub mod show;
pub mod stderr_tap;
pub mod sync;
mod typing;
pub mod vars;
pub mod workdir;

use crate::cell;
use crate::magics::{self, Context, Step};
use crate::publisher::Publisher;
use crate::rewrite::append_epilogue;
use config::Config;
use errors::CellError;
use evcxr::{CommandContext, EvalCallbacks, EvalOutputs};
use jupyter_protocol::Media;
use output::{Failure, Forwarder, PANIC_HOOK, STDERR_MARKER};
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
    /// What the cell displayed, in order: a MIME bundle and whether it is the value of a trailing
    /// expression (an `execute_result`) rather than an explicit display (`display_data`).
    pub results: Vec<(Media, bool)>,
    /// The error that stopped the cell, if any.
    pub error: Option<CellError>,
    /// Text for the pager (`%doc`), as MIME bundles.
    pub pages: Vec<Media>,
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
    /// Evaluate `(name, expression)` pairs after a cell (`user_expressions`): each result's MIME
    /// bundle or error.
    Expressions {
        /// The expressions, named.
        expressions: Vec<(String, String)>,
        /// Where the results go, with their names.
        reply: oneshot::Sender<Vec<(String, Result<Media, CellError>)>>,
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

pub use output::COMPLETED_MARKER;

/// The state living on the session thread.
struct Worker {
    ctx: Result<CommandContext, String>,
    forwarder: Option<Forwarder>,
    gpukit: bool,
    /// Where the session's gpukit crate is (for `%features`).
    gpukit_path: Option<String>,
    startup_error: Option<String>,
    /// `%%cuda` kernels not compiled because the default device was the CPU.
    skipped_cuda: std::collections::BTreeSet<String>,
    /// `%%cuda` kernels defined in the session: module variable and CUDA source.
    cuda_kernels: std::collections::BTreeMap<String, (String, String)>,
    publisher: Arc<Publisher>,
    progress: Arc<BuildProgress>,
    interrupter: Arc<Interrupter>,
    /// Whether [`show::OFF`] ran (a cell changed evcxr's value formatting).
    show_off: bool,
    /// The user process the panic hook ([`PANIC_HOOK`]) was installed in (evcxr starts a new
    /// one after a crash or an interrupt).
    hooked_pid: Option<u32>,
}

use sync::SYNC;

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
            gpukit_path: None,
            startup_error: None,
            skipped_cuda: Default::default(),
            cuda_kernels: Default::default(),
            publisher,
            progress,
            interrupter,
            show_off: false,
            hooked_pid: None,
        };
        match CommandContext::new() {
            Ok((ctx, outputs)) => {
                *w.interrupter
                    .child
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = Some(ctx.process_handle());
                match Forwarder::spawn(outputs.stdout, outputs.stderr, w.publisher.clone()) {
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

    /// `%features`: reloads gpukit with `names` turned on (cargo builds what they add once;
    /// evcxr's cache keeps it for later sessions).
    fn features(
        &mut self,
        names: &[String],
        input: &Option<InputFn>,
    ) -> Result<Option<(Media, bool)>, CellError> {
        let Some(path) = self.gpukit_path.clone() else {
            return Err(CellError::simple(
                "MagicError",
                "%features: this session did not load gpukit (EVCXR_GPU_GPUKIT=none)",
            ));
        };
        self.eval(&crate::magics::features::dep_command(&path, names), input)?;
        self.publisher
            .stdout(&format!("gpukit features on: {}\n", names.join(", ")));
        Ok(None)
    }

    /// `%crate`: loads the companion crate `name` from beside gpukit (cargo builds it and what
    /// it adds once; evcxr's cache keeps it for later sessions) and imports its prelude.
    fn load_crate(
        &mut self,
        name: &str,
        features: &[String],
        input: &Option<InputFn>,
    ) -> Result<Option<(Media, bool)>, CellError> {
        let Some(path) = self.gpukit_path.clone() else {
            return Err(CellError::simple(
                "MagicError",
                "%crate: this session did not load gpukit (EVCXR_GPU_GPUKIT=none)",
            ));
        };
        let code = crate::magics::crate_dep::commands(&path, name, features)
            .map_err(|e| CellError::simple("MagicError", &e))?;
        self.eval(&code, input)?;
        self.publisher.stdout(&format!("loaded {name}\n"));
        Ok(None)
    }

    fn load(&mut self, config: &Config) {
        let Ok(ctx) = &mut self.ctx else { return };
        if config.cache_mib > 0 {
            if let Some(dir) = dep_cache::evcxr_cache_dir() {
                let pruned = dep_cache::prune_stale_entries(&dir);
                if pruned > 0 {
                    self.publisher.log(&format!(
                        "evcxr_gpu: removed {pruned} entr{} of evcxr's dependency cache that \
                         named files no longer there",
                        if pruned == 1 { "y" } else { "ies" }
                    ));
                }
            }
        }
        let show_items = std::env::var_os("EVCXR_TMPDIR")
            .and_then(|dir| show::items(std::path::Path::new(&dir)))
            .unwrap_or_default();
        let code = format!(
            "{}\n{}\n{show_items}",
            config.startup_code(),
            process_hooks(config.gpukit.is_some())
        );
        // A first build can fail for reasons that do not repeat (several kernels starting at once
        // and contending for cargo's locks and evcxr's cache; a compiler killed from outside):
        // one more try before the session goes on without gpukit.
        let result = ctx.execute(&code).or_else(|e| {
            eprintln!("evcxr_gpu: the start-up code failed ({e}); trying once more");
            ctx.execute(&code)
        });
        match result {
            Ok(_) => {
                self.gpukit = config.gpukit.is_some();
                self.gpukit_path = config.gpukit.as_ref().map(|p| p.display().to_string());
                self.hooked_pid = self.user_pid();
            }
            Err(e) => {
                let err = CellError::evcxr(&e, &code);
                self.startup_error = Some(format!(
                    "the session start-up code failed, so gpukit is not loaded:\n{}\n{}",
                    config.startup_code(),
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
            Job::Expressions { expressions, reply } => {
                let results = expressions
                    .into_iter()
                    .map(|(name, expr)| {
                        let r = self.expression(&expr);
                        (name, r)
                    })
                    .collect();
                let _ = reply.send(results);
            }
            Job::Inspect {
                code,
                cursor,
                reply,
            } => {
                let _ = reply.send(self.hover(&code, cursor));
            }
        }
    }

    /// rust-analyzer's description of what is at `cursor` in `code`: `(plain text, html)`.
    fn hover(&mut self, code: &str, cursor: usize) -> Option<(String, String)> {
        match &mut self.ctx {
            Ok(ctx) => ctx
                .hover_at(code, cursor.min(code.len()))
                .ok()
                .filter(|(p, _)| !p.trim().is_empty()),
            Err(_) => None,
        }
    }

    /// Evaluates one user expression (borrowed, so no variable is moved) and returns how it
    /// displays.
    fn expression(&mut self, expr: &str) -> Result<Media, CellError> {
        let expr = expr.trim().trim_end_matches(';').trim_end();
        if expr.is_empty() {
            return Err(CellError::simple("SyntaxError", "the expression is empty"));
        }
        if self.ctx.is_err() {
            return Err(CellError::simple("SessionError", "evcxr is not running"));
        }
        match self.eval(&format!("&({expr})"), &None)? {
            Some((media, _)) => Ok(media),
            None => Ok(crate::publisher::text_media("()")),
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
                Step::Rust(rust) if vars::is_vars_command(&rust) => Ok(self
                    .ctx
                    .as_ref()
                    .ok()
                    .map(|ctx| (vars::vars_media(ctx.variables_and_types()), false))),
                Step::Rust(rust) => {
                    if !self.show_off && show::changes_formatting(&rust) {
                        // evcxr's `:fmt`/`:types` apply to its own fallback only.
                        self.show_off = true;
                        let _ = self.eval_raw(show::OFF, &None);
                    }
                    self.eval(&rust, &input)
                }
                Step::Cuda {
                    code,
                    kernels,
                    module_var,
                    source,
                } => self.cuda(&code, &kernels, &module_var, &source, &input),
                Step::Reflect { magic, name, code } => self.reflect(magic, &name, &code, &input),
                Step::Features(names) => self.features(&names, &input),
                Step::Crate { name, features } => self.load_crate(&name, &features, &input),
                Step::Doc(name) => match self.hover(&name, name.len()) {
                    Some((plain, html)) => {
                        outcome.pages.push(
                            serde_json::from_value(
                                serde_json::json!({ "text/plain": plain, "text/html": html }),
                            )
                            .unwrap_or_default(),
                        );
                        Ok(None)
                    }
                    None => Err(CellError::simple(
                        "MagicError",
                        &format!("%doc: no documentation found for `{name}`"),
                    )),
                },
            };
            if let Some(f) = &self.forwarder {
                f.release();
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

    /// The process id of the user-code process.
    fn user_pid(&self) -> Option<u32> {
        let ctx = self.ctx.as_ref().ok()?;
        let child = ctx.process_handle();
        let id = child.lock().unwrap_or_else(|p| p.into_inner()).id();
        Some(id)
    }

    /// Installs the panic hook (and, with gpukit, registers the synchronisation of
    /// [`sync::REGISTER`]) in the user process if this process does not have them yet.
    fn ensure_panic_hook(&mut self) {
        let pid = self.user_pid();
        if pid.is_some() && pid != self.hooked_pid {
            // Tried once per process: if it does not compile now, it will not later either.
            let _ = self.eval_raw(&process_hooks(self.gpukit), &None);
            self.hooked_pid = pid;
        }
    }

    /// Runs `code` rewritten to end with the completion markers (and a gpukit synchronisation);
    /// returns evcxr's result and whether the markers are expected.
    fn run_step(
        &mut self,
        code: &str,
        input: &Option<InputFn>,
    ) -> Result<(Result<EvalOutputs, evcxr::Error>, bool), CellError> {
        let markers = format!("eprintln!(\"{STDERR_MARKER}\"); println!(\"{COMPLETED_MARKER}\");");
        let epilogue = if self.gpukit {
            format!("{SYNC} {markers}")
        } else {
            markers
        };
        let rewritten = append_epilogue(code, &epilogue).filter(|r| r != code);
        if let Some(f) = &self.forwarder {
            f.reset();
        }
        let Some(rewritten) = rewritten else {
            return Ok((self.eval_raw(code, input), false));
        };
        Ok(match self.eval_raw(&rewritten, input) {
            // Variables evcxr cannot type: the code as written would fail the same way.
            Err(e) if typing::is_inference_failure(&e) => (Err(e), true),
            // The appended code cannot be the cause of a type error the user's code does not
            // have, but some values cannot be borrowed for display; evaluate the cell as
            // written then, for exact error messages or a result, and sync apart.
            Err(evcxr::Error::CompilationErrors(_)) => {
                let r = self.eval_raw(code, input);
                if r.is_ok() && self.gpukit {
                    if let Err(e) = self.eval_raw(SYNC, input) {
                        return Err(self.error(&e, SYNC));
                    }
                }
                (r, false)
            }
            other => (other, true),
        })
    }

    /// Evaluates one Rust step, synchronising gpukit at its end.
    fn eval(
        &mut self,
        code: &str,
        input: &Option<InputFn>,
    ) -> Result<Option<(Media, bool)>, CellError> {
        self.ensure_panic_hook();
        let is_value = matches!(
            crate::rewrite::tail(code),
            Some(crate::rewrite::Tail::Expr { .. })
        );
        let (mut result, mut expect_marker) = self.run_step(code, input)?;
        let mut ran = code.to_string();
        let mut note = None;
        if result
            .as_ref()
            .err()
            .is_some_and(typing::is_inference_failure)
        {
            if let Some((r, marked, annotated)) =
                self.run_with_compiler_types(code, input, &mut note)?
            {
                (result, expect_marker, ran) = (r, marked, annotated);
            }
        }
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                let mut err = self.error(&e, &ran);
                if let Some(note) = note {
                    err.traceback.push(note);
                }
                if let Some(f) = &self.forwarder {
                    // What a crashing process printed last explains the crash: it goes with the
                    // error rather than before it.
                    if matches!(e, evcxr::Error::SubprocessTerminated(_)) {
                        if let Some(failure) = f.take_failure(Duration::from_millis(300)) {
                            err.prepend(failure_lines(&failure));
                        }
                    }
                    f.release();
                }
                return Err(err);
            }
        };
        if let Some(f) = &self.forwarder {
            f.flush();
            if expect_marker && !f.completed() {
                if self.interrupter.take_interrupted() {
                    f.release();
                    return Err(CellError::interrupted());
                }
                // evcxr reads the process's stderr on its own thread: give the report or the
                // message a moment to arrive so it can name the error.
                let failure = f.take_failure(Duration::from_secs(3));
                f.release();
                return Err(step_failure(failure));
            }
            if expect_marker {
                f.finish_completed(Duration::from_secs(2));
            } else {
                f.release();
            }
        }
        if let Some(t) = out.timing {
            self.publisher
                .stdout(&format!("Took {}ms\n", t.as_millis()));
        }
        let only_unit = out.content_by_mime_type.len() == 1
            && out.get("text/plain").map(str::trim) == Some("()");
        if out.content_by_mime_type.is_empty() || only_unit {
            return Ok(None);
        }
        let map: serde_json::Map<String, serde_json::Value> = out
            .content_by_mime_type
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect();
        Ok(serde_json::from_value(serde_json::Value::Object(map))
            .ok()
            .map(|m| (m, is_value)))
    }

    fn has_variable(&self, name: &str) -> bool {
        match &self.ctx {
            Ok(ctx) => ctx.variables_and_types().any(|(v, _)| v == name),
            Err(_) => false,
        }
    }

    /// Runs a `%%cuda` cell when the default device is a GPU; otherwise says why it does not.
    fn cuda(
        &mut self,
        code: &str,
        kernels: &[String],
        module_var: &str,
        source: &str,
        input: &Option<InputFn>,
    ) -> Result<Option<(Media, bool)>, CellError> {
        let probe = "gpukit::default_device().is_cuda()";
        let on_gpu = match self.eval_raw(probe, input) {
            Ok(out) => out.get("text/plain").map(str::trim) == Some("true"),
            Err(e) => return Err(self.error(&e, probe)),
        };
        if !on_gpu {
            self.publisher.stdout(&format!(
                "%%cuda needs a CUDA GPU: the default device is the CPU, so {} {} not compiled (on a machine with a GPU each becomes a kernel variable)\n",
                kernels.join(", "),
                if kernels.len() == 1 { "was" } else { "were" }
            ));
            self.skipped_cuda.extend(kernels.iter().cloned());
            return Ok(None);
        }
        let r = self.eval(code, input);
        if r.is_ok() {
            for k in kernels {
                self.skipped_cuda.remove(k);
                self.cuda_kernels
                    .insert(k.clone(), (module_var.to_string(), source.to_string()));
            }
        }
        r
    }

    /// `%ptx`/`%source`: `%%cuda` kernels are answered from their module and cell; kernels that
    /// were not compiled (no GPU) get a clear message; `#[kernel]`s run `code`.
    fn reflect(
        &mut self,
        magic: &str,
        name: &str,
        code: &str,
        input: &Option<InputFn>,
    ) -> Result<Option<(Media, bool)>, CellError> {
        if self.skipped_cuda.contains(name) && !self.has_variable(name) {
            self.publisher.stdout(&format!(
                "{magic} {name}: needs a CUDA GPU; the %%cuda cell that defines {name} was not compiled because the default device is the CPU\n"
            ));
            return Ok(None);
        }
        if let Some((module_var, source)) = self.cuda_kernels.get(name).cloned() {
            if self.has_variable(&module_var) {
                if magic == "%source" {
                    self.publisher.stdout(&format!("{}\n", source.trim_end()));
                    return Ok(None);
                }
                if magic == "%ptx" {
                    return self.eval(&format!("println!(\"{{}}\", {module_var}.ptx());"), input);
                }
            }
        }
        self.eval(code, input)
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

/// What runs once in every user process: the panic hook and, in a gpukit session, the
/// registration of the step synchronisation ([`sync`]). Statements only, ending in `;`, so evcxr
/// has no value to display and compiles it once.
fn process_hooks(gpukit: bool) -> String {
    if gpukit {
        format!("{PANIC_HOOK};\n{}", sync::REGISTER)
    } else {
        format!("{PANIC_HOOK};")
    }
}

/// The lines of what a failed step printed.
fn failure_lines(failure: &Failure) -> Vec<String> {
    let (Failure::Panic(text) | Failure::Stderr(text)) = failure;
    text.trim_matches('\n')
        .lines()
        .map(str::to_string)
        .collect()
}

/// The error of a step that stopped before its end, from what it printed.
fn step_failure(failure: Option<Failure>) -> CellError {
    let Some(failure) = failure else {
        return CellError::simple("Error", "the cell returned early with an error (`?`)");
    };
    let traceback = failure_lines(&failure);
    match failure {
        Failure::Panic(_) => CellError {
            ename: "Panic".into(),
            evalue: errors::panic_message(&traceback),
            traceback: errors::trim_backtrace(traceback),
        },
        Failure::Stderr(_) => CellError {
            ename: "Error".into(),
            evalue: traceback
                .iter()
                .find(|l| !l.trim().is_empty())
                .cloned()
                .unwrap_or_default(),
            traceback,
        },
    }
}

/// Completes magic names when the cursor is in `%name` or `%%name` at the start of a line where
/// a magic can start (not inside a string, a comment or an unfinished statement).
pub fn complete_magic(code: &str, cursor: usize) -> Option<CompletionResult> {
    let line_start = code[..cursor].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let before = &code[line_start..cursor];
    if !crate::escapes::escape_lines(&code[..cursor])
        .last()
        .copied()
        .unwrap_or(false)
    {
        return None;
    }
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

    #[test]
    fn no_magic_completion_where_a_magic_cannot_start() {
        let in_string = "let s = \"\n%ti";
        assert!(complete_magic(in_string, in_string.len()).is_none());
        let continued = "let x = 10\n%ti";
        assert!(complete_magic(continued, continued.len()).is_none());
        let after_statement = "let s = \"\n%\";\n%ti";
        let r = complete_magic(after_statement, after_statement.len()).unwrap();
        assert_eq!(r.matches, vec!["%time", "%timeit"]);
    }
}
