//! The kernel's magics: `%name args` line magics, `%%name args` cell magics and `!cmd`.
//!
//! Each magic lives in its own module with its argument parser and its lowering. Magics that
//! touch the user's state (variables, the GPU) are lowered to Rust that evcxr evaluates in the
//! user's process, so the same gpukit calls run with or without the magic; the others (`%lsmagic`,
//! `!cmd`) are carried out by the kernel itself.

pub mod crate_dep;
pub mod cuda;
pub mod device;
pub mod doc;
pub mod features;
pub mod gpu;
pub mod graph;
pub mod kernelinfo;
pub mod lsmagic;
pub mod memory;
pub mod monitor;
pub mod profile;
pub mod ptx;
pub mod sass;
pub mod shell;
pub mod source;
pub mod time;
pub mod timeit;

use std::fmt;

/// One unit of work a cell turns into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Rust (and evcxr `:` commands) for evcxr, with lines aligned to the cell's lines.
    Rust(String),
    /// Text the kernel writes to the cell's stdout itself.
    Print(String),
    /// A shell command the kernel runs, streaming its output into the cell.
    Shell(String),
    /// A `%%cuda` cell: `code` defines `kernels`; it runs only when the default device is a GPU.
    Cuda {
        /// Rust that compiles the module and binds one variable per kernel.
        code: String,
        /// The kernel (variable) names it defines.
        kernels: Vec<String>,
        /// The variable holding the compiled `gpukit::Module` (for `%ptx`).
        module_var: String,
        /// The CUDA C++ source as written in the cell (for `%source`).
        source: String,
    },
    /// `%doc NAME`: the kernel looks up the documentation of `NAME` and pages it.
    Doc(String),
    /// `%features NAME...`: the session reloads gpukit with these cargo features turned on.
    Features(Vec<String>),
    /// `%crate NAME [FEATURE...]`: the session loads a companion crate that lives beside gpukit.
    Crate {
        /// The crate's package name (`gpukit-frame`).
        name: String,
        /// Its cargo features to turn on.
        features: Vec<String>,
    },
    /// `%ptx`/`%source` of kernel `name`: `code` prints it, unless `name` is a `%%cuda` kernel
    /// that was not compiled because there is no GPU.
    Reflect {
        /// The magic, for messages.
        magic: &'static str,
        /// The kernel variable.
        name: String,
        /// Rust that prints the reflection.
        code: String,
    },
}

/// What lowering needs to know about the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Whether gpukit was loaded into the session (magics that call it need it).
    pub gpukit: bool,
}

/// A magic that cannot be run as written: unknown name, bad arguments, or a missing library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MagicError(pub String);

impl fmt::Display for MagicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MagicError {}

/// Line magics with a one-line description, in the order `%lsmagic` lists them.
pub const LINE_MAGICS: &[(&str, &str)] = &[
    (
        "gpu",
        "device table from NVML: name, driver, memory, utilisation, temperature, power, processes; \
         %gpu --watch [SECONDS] [--interval MS]: a live chart of utilisation and memory",
    ),
    (
        "memory",
        "GPU memory: NVML's numbers (device, this process) beside gpukit's live arrays and pool \
         cache; %memory --free gives the pool cache back",
    ),
    (
        "device",
        "show the default device, or set it: %device cpu | %device cuda:N",
    ),
    (
        "time",
        "%time EXPR: wall time of one statement, device synchronised",
    ),
    (
        "timeit",
        "%timeit [-n N] [-r R] [--graph] EXPR: mean ± std of repeated runs, device synchronised",
    ),
    ("ptx", "%ptx NAME: the PTX a kernel compiled to"),
    (
        "kernelinfo",
        "%kernelinfo NAME: registers, memory, spills and occupancy of a kernel on the GPU",
    ),
    (
        "sass",
        "%sass NAME: the machine code (SASS) of a kernel, via cuobjdump",
    ),
    (
        "source",
        "%source [--full] NAME: the CUDA C++ source of a kernel (--full: with gpukit's prelude)",
    ),
    (
        "doc",
        "%doc NAME: the documentation of a Rust item (e.g. %doc Vec::new), in the pager",
    ),
    (
        "features",
        "%features NAME...: turn on optional gpukit features for the session (e.g. linalg)",
    ),
    (
        "crate",
        "%crate NAME [FEATURE...]: load a crate that ships beside gpukit (e.g. gpukit-frame)",
    ),
    ("lsmagic", "list the magics"),
];

/// Cell magics with a one-line description.
pub const CELL_MAGICS: &[(&str, &str)] = &[
    (
        "cuda",
        "CUDA C++ cell compiled with NVRTC; each extern \"C\" __global__ becomes a kernel variable",
    ),
    ("time", "wall time of the cell, device synchronised"),
    (
        "timeit",
        "%%timeit [-n N] [-r R] [--graph]: IPython-style timing of the cell, device synchronised \
         every loop (--graph: the cell captured once as a graph, each loop replays it)",
    ),
    (
        "graph",
        "%%graph [NAME] [-n N]: capture the cell's launches and in-place array operations into a \
         gpukit::Graph and replay it N times (default 1; with NAME: kept as a variable, 0)",
    ),
    (
        "profile",
        "table of every kernel launched in the cell: calls and GPU time (CUDA events)",
    ),
    (
        "monitor",
        "%%monitor [--interval MS]: run the cell with a live chart of GPU utilisation and memory",
    ),
];

/// The known magics in one line each, for error messages.
pub fn known_magics() -> String {
    let line: Vec<String> = LINE_MAGICS.iter().map(|(n, _)| format!("%{n}")).collect();
    let cell: Vec<String> = CELL_MAGICS.iter().map(|(n, _)| format!("%%{n}")).collect();
    format!(
        "line magics: {}; cell magics: {}; shell escape: !cmd",
        line.join(" "),
        cell.join(" ")
    )
}

/// Lowers the line magic `%name args`.
pub fn lower_line(name: &str, args: &str, ctx: Context) -> Result<Step, MagicError> {
    match name {
        "gpu" => gpu::lower(args, ctx),
        "memory" => memory::lower(args, ctx),
        "device" => device::lower(args, ctx),
        "time" => time::lower_line(args, ctx),
        "timeit" => timeit::lower_line(args, ctx),
        "ptx" => ptx::lower(args, ctx),
        "kernelinfo" => kernelinfo::lower(args, ctx),
        "sass" => sass::lower(args, ctx),
        "source" => source::lower(args, ctx),
        "doc" => doc::lower(args),
        "features" => features::lower(args, ctx),
        "crate" => crate_dep::lower(args, ctx),
        "lsmagic" => lsmagic::lower(args),
        _ if CELL_MAGICS.iter().any(|(n, _)| *n == name) => Err(MagicError(format!(
            "%{name} is a cell magic: write %%{name} on the first line of the cell"
        ))),
        _ => Err(unknown(&format!("%{name}"))),
    }
}

/// Lowers the cell magic `%%name args` whose body is `body` (the lines after the magic line).
pub fn lower_cell(name: &str, args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    match name {
        "cuda" => cuda::lower(args, body, ctx),
        "time" => time::lower_cell(args, body, ctx),
        "timeit" => timeit::lower_cell(args, body, ctx),
        "graph" => graph::lower(args, body, ctx),
        "profile" => profile::lower(args, body, ctx),
        "monitor" => monitor::lower(args, body, ctx),
        _ => Err(unknown(&format!("%%{name}"))),
    }
}

fn unknown(what: &str) -> MagicError {
    MagicError(format!(
        "unknown magic {what}. Known magics: {}",
        known_magics()
    ))
}

/// The error for magics that call gpukit in a session that did not load it.
pub(crate) fn require_gpukit(magic: &str, ctx: Context) -> Result<(), MagicError> {
    if ctx.gpukit {
        Ok(())
    } else {
        Err(MagicError(format!(
            "{magic} needs gpukit, which this session did not load (see EVCXR_GPU_GPUKIT and EVCXR_GPU_PRELUDE)"
        )))
    }
}

/// The error for magics that take no arguments.
pub(crate) fn no_args(magic: &str, args: &str) -> Result<(), MagicError> {
    if args.trim().is_empty() {
        Ok(())
    } else {
        Err(MagicError(format!(
            "{magic} takes no arguments (got `{}`)",
            args.trim()
        )))
    }
}

/// Parses one Rust identifier argument (a kernel variable name).
pub(crate) fn ident_arg(magic: &str, args: &str) -> Result<String, MagicError> {
    let a = args.trim();
    let ok = !a.is_empty()
        && !a.starts_with(|c: char| c.is_ascii_digit())
        && a.chars().all(|c| c.is_alphanumeric() || c == '_');
    if ok {
        Ok(a.to_string())
    } else if a.is_empty() {
        Err(MagicError(format!(
            "{magic} needs a kernel name: {magic} NAME"
        )))
    } else {
        Err(MagicError(format!(
            "{magic} needs one kernel name (a Rust identifier), got `{a}`"
        )))
    }
}

/// Wraps `text` as a Rust raw string literal whose delimiter does not occur in it.
pub(crate) fn raw_string(text: &str) -> String {
    let mut hashes = 1;
    while text.contains(&format!("\"{}", "#".repeat(hashes))) {
        hashes += 1;
    }
    let h = "#".repeat(hashes);
    format!("r{h}\"{text}\"{h}")
}

/// `%magic NAME` lowered to `NAME.method()` printed with `{}`; a missing GPU or tool (`NeedsGpu`,
/// `NoGpu`, `Other`) is printed as `%magic NAME: reason` instead of failing the cell.
pub(crate) fn reflect_method(
    magic: &'static str,
    method: &str,
    args: &str,
    ctx: Context,
) -> Result<Step, MagicError> {
    let name = ident_arg(magic, args)?;
    require_gpukit(magic, ctx)?;
    let code = format!(
        "match {name}.{method}() {{ Ok(r) => println!(\"{{}}\", r), Err(e @ (gpukit::Error::NeedsGpu {{ .. }} | gpukit::Error::NoGpu(_) | gpukit::Error::Other(_))) => println!(\"{magic} {name}: {{}}\", e), Err(e) => Err(e)?, }}"
    );
    Ok(Step::Reflect { magic, name, code })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn unknown_magic_lists_known_ones() {
        let e = lower_line("nope", "", GK).unwrap_err();
        assert!(e.0.contains("unknown magic %nope"));
        assert!(e.0.contains("%gpu") && e.0.contains("%%cuda") && e.0.contains("!cmd"));
        let e = lower_cell("nope", "", "", GK).unwrap_err();
        assert!(e.0.contains("unknown magic %%nope"));
    }

    #[test]
    fn cell_magic_used_as_line_magic_explains() {
        let e = lower_line("cuda", "", GK).unwrap_err();
        assert!(e.0.contains("%%cuda"));
    }

    #[test]
    fn identifiers() {
        assert_eq!(ident_arg("%ptx", " saxpy ").unwrap(), "saxpy");
        assert!(ident_arg("%ptx", "")
            .unwrap_err()
            .0
            .contains("needs a kernel name"));
        assert!(ident_arg("%ptx", "a b").is_err());
        assert!(ident_arg("%ptx", "1a").is_err());
        assert!(ident_arg("%ptx", "a;b").is_err());
    }

    #[test]
    fn raw_strings_survive_quotes_and_hashes() {
        assert_eq!(raw_string("a"), "r#\"a\"#");
        assert_eq!(raw_string("x\"#y"), "r##\"x\"#y\"##");
    }

    #[test]
    fn the_monitor_magics_are_listed_and_dispatched() {
        let known = known_magics();
        assert!(
            known.contains("%gpu") && known.contains("%%monitor"),
            "{known}"
        );
        assert!(matches!(
            lower_cell("monitor", "", "x();", GK),
            Ok(Step::Rust(_))
        ));
        assert!(matches!(
            lower_line("gpu", "--watch 1", GK),
            Ok(Step::Rust(_))
        ));
        assert!(matches!(
            lower_line("memory", "--free", GK),
            Ok(Step::Rust(_))
        ));
        assert!(lower_line("monitor", "", GK)
            .unwrap_err()
            .0
            .contains("%%monitor"));
    }

    #[test]
    fn the_graph_magics_are_listed_and_dispatched() {
        let known = known_magics();
        assert!(known.contains("%%graph"), "{known}");
        assert!(matches!(
            lower_cell("graph", "g -n 2", "a.fill(1.0)?;", GK),
            Ok(Step::Rust(_))
        ));
        assert!(matches!(
            lower_cell("timeit", "--graph", "a.fill(1.0)?;", GK),
            Ok(Step::Rust(_))
        ));
        assert!(lower_line("graph", "", GK)
            .unwrap_err()
            .0
            .contains("%%graph"));
    }

    #[test]
    fn gpukit_required() {
        let no = Context { gpukit: false };
        assert!(lower_line("gpu", "", no)
            .unwrap_err()
            .0
            .contains("needs gpukit"));
        assert!(lower_line("lsmagic", "", no).is_ok());
    }
}
