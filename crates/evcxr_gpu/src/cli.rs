//! The command line: run as a kernel, install the kernelspec, or warm the compile cache.

use crate::protocol;
use crate::publisher::{fd_logger, Publisher};
use crate::session::config::Config;
use crate::session::progress::{compiling_crate, BuildProgress};
use crate::session::{display, libpath, stderr_tap, workdir, Job, Session};
use anyhow::{anyhow, bail, Context as _};
use std::path::PathBuf;
use std::sync::Arc;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve the kernel described by a connection file.
    Kernel {
        /// The connection file Jupyter wrote.
        connection_file: PathBuf,
    },
    /// Write the kernelspec into a kernels directory.
    Install {
        /// e.g. `.venv/share/jupyter/kernels`.
        kernels_dir: PathBuf,
        /// Directory with the `kernel.json` template and logos.
        template_dir: PathBuf,
    },
    /// Start a session once (builds gpukit into the compile cache), then exit.
    Warm,
    /// Print the version.
    Version,
    /// Print usage.
    Help,
}

/// Usage text.
pub const USAGE: &str = "usage:
  evcxr_gpu --connection-file FILE      serve a Jupyter kernel (what kernel.json runs)
  evcxr_gpu install --kernels-dir DIR [--template DIR]
                                        write the \"Rust (GPU)\" kernelspec into DIR/rust-gpu
  evcxr_gpu warm                        load gpukit once so later kernel starts do not rebuild it
  evcxr_gpu --version | --help
settings (environment): EVCXR_GPU_GPUKIT, EVCXR_GPU_PRELUDE, EVCXR_GPU_OPT, EVCXR_GPU_CACHE_MIB, EVCXR_GPU_WORKDIR";

fn value(args: &[String], i: usize, flag: &str) -> anyhow::Result<String> {
    args.get(i + 1)
        .cloned()
        .ok_or_else(|| anyhow!("{flag} needs a value\n{USAGE}"))
}

/// Parses the arguments (without the program name).
pub fn parse(args: &[String]) -> anyhow::Result<Command> {
    let Some(first) = args.first() else {
        bail!("no arguments\n{USAGE}");
    };
    match first.as_str() {
        "--version" | "-V" => Ok(Command::Version),
        "--help" | "-h" => Ok(Command::Help),
        "--connection-file" | "--control_file" | "-f" => {
            if args.len() != 2 {
                bail!("{first} takes exactly one file\n{USAGE}");
            }
            Ok(Command::Kernel {
                connection_file: PathBuf::from(&args[1]),
            })
        }
        "warm" if args.len() == 1 => Ok(Command::Warm),
        "install" => {
            let here = crate::session::config::built_in_gpukit();
            let mut kernels_dir = None;
            let mut template_dir = here.join("..").join("..").join("kernels").join("rust-gpu");
            let mut i = 1;
            while i < args.len() {
                match args[i].as_str() {
                    "--kernels-dir" => {
                        kernels_dir = Some(PathBuf::from(value(args, i, "--kernels-dir")?))
                    }
                    "--template" => template_dir = PathBuf::from(value(args, i, "--template")?),
                    other => bail!("unknown install option `{other}`\n{USAGE}"),
                }
                i += 2;
            }
            Ok(Command::Install {
                kernels_dir: kernels_dir
                    .ok_or_else(|| anyhow!("install needs --kernels-dir DIR\n{USAGE}"))?,
                template_dir,
            })
        }
        other => bail!("unknown argument `{other}`\n{USAGE}"),
    }
}

/// Runs the command line.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    match parse(args)? {
        Command::Version => {
            println!("evcxr_gpu {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::Help => {
            println!("{USAGE}");
            Ok(())
        }
        Command::Install {
            kernels_dir,
            template_dir,
        } => {
            let exe = std::env::current_exe().context("locating this binary")?;
            let dest = crate::install::install(&kernels_dir, &template_dir, &exe)
                .map_err(|e| anyhow!(e))?;
            println!("installed kernelspec \"Rust (GPU)\" in {}", dest.display());
            Ok(())
        }
        Command::Warm => warm(),
        Command::Kernel { connection_file } => kernel(connection_file),
    }
}

/// Everything a running session needs, set up before any thread starts.
struct Setup {
    session: Session,
    publisher: Arc<Publisher>,
    iopub_rx: tokio::sync::mpsc::UnboundedReceiver<jupyter_protocol::JupyterMessage>,
    _workdir: Option<workdir::Workdir>,
}

fn setup() -> anyhow::Result<Setup> {
    let config = Config::from_env().map_err(|e| anyhow!(e))?;
    // Environment changes happen here, before any thread exists.
    libpath::export();
    // The process evcxr starts to run the cells inherits this: gpukit may print display lines.
    std::env::set_var(display::UPDATES_VAR, "1");
    let wd = if std::env::var_os("EVCXR_TMPDIR").is_none() {
        match workdir::acquire(&config.workdir) {
            Ok(w) => {
                std::env::set_var("EVCXR_TMPDIR", &w.path);
                Some(w)
            }
            Err(e) => {
                // evcxr then makes its own private temporary directory (random name, 0700).
                eprintln!(
                    "evcxr_gpu: {e}; this session uses a new private temporary directory instead (nothing is kept for the next start)"
                );
                None
            }
        }
    } else {
        None
    };
    let lock_file = std::env::var_os("EVCXR_TMPDIR")
        .map(|d| PathBuf::from(d).join("Cargo.lock"))
        .unwrap_or_default();
    let (orig_stderr, pipe) = stderr_tap::install().context("redirecting stderr")?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let publisher = Arc::new(Publisher::new(tx, fd_logger(orig_stderr)));
    let progress = Arc::new(BuildProgress::new(publisher.clone(), lock_file));
    let (p, pr) = (publisher.clone(), progress.clone());
    stderr_tap::spawn_reader(pipe, move |line| match compiling_crate(line) {
        Some(name) => pr.crate_started(name),
        None => p.log(line),
    })?;
    let session = Session::start(config, publisher.clone(), progress)?;
    Ok(Setup {
        session,
        publisher,
        iopub_rx: rx,
        _workdir: wd,
    })
}

fn kernel(connection_file: PathBuf) -> anyhow::Result<()> {
    let info = protocol::read_connection_file(&connection_file)?;
    // Before `setup` taps stderr, so the line goes to the kernel's own log, once.
    if let Some(warning) = protocol::key_warning(&info) {
        eprintln!("{warning}");
    }
    let s = setup()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(protocol::serve(info, s.session, s.publisher, s.iopub_rx))
}

fn warm() -> anyhow::Result<()> {
    let s = setup()?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let probe = "let __gk_warm = gpukit::default_device(); __gk_warm.to_string()";
    if !s.session.submit(Job::Execute {
        code: probe.into(),
        input: None,
        reply: tx,
    }) {
        bail!("the session thread stopped");
    }
    let outcome = rx
        .blocking_recv()
        .map_err(|_| anyhow!("the session ended before answering"))?;
    if let Some(e) = outcome.error {
        bail!(
            "warming failed: {}: {}\n{}",
            e.ename,
            e.evalue,
            e.traceback.join("\n")
        );
    }
    s.publisher
        .log("evcxr_gpu: compile cache warm (gpukit built)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_commands() {
        assert_eq!(
            parse(&a(&["--connection-file", "/c.json"])).unwrap(),
            Command::Kernel {
                connection_file: "/c.json".into()
            }
        );
        assert_eq!(parse(&a(&["warm"])).unwrap(), Command::Warm);
        assert_eq!(parse(&a(&["--version"])).unwrap(), Command::Version);
        let Command::Install { kernels_dir, .. } =
            parse(&a(&["install", "--kernels-dir", "/k"])).unwrap()
        else {
            panic!("not install")
        };
        assert_eq!(kernels_dir, PathBuf::from("/k"));
    }

    #[test]
    fn bad_command_lines_explain() {
        assert!(parse(&[]).unwrap_err().to_string().contains("usage"));
        assert!(parse(&a(&["--connection-file"])).is_err());
        assert!(parse(&a(&["install"]))
            .unwrap_err()
            .to_string()
            .contains("--kernels-dir"));
        assert!(parse(&a(&["install", "--kernels-dir"]))
            .unwrap_err()
            .to_string()
            .contains("needs a value"));
        assert!(parse(&a(&["frob"]))
            .unwrap_err()
            .to_string()
            .contains("unknown argument"));
    }
}
