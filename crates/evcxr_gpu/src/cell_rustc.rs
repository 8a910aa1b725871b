//! Faster compiles of the cell crate: flags added to the rustc command evcxr runs for each cell.
//!
//! evcxr builds every cell as a crate named `ctx` (a `cdylib`, `opt-level` from `:opt`, 16 codegen
//! units, incremental) with cargo, and with its compile cache on (`:cache`, which the kernel
//! turns on) cargo runs rustc through this very binary as `RUSTC_WRAPPER` (evcxr's
//! `runtime_hook` then acts as the wrapper). Before that hook runs, [`wrap`] adds to the `ctx`
//! compile only (never to a dependency, whose cached builds stay as they are):
//!
//! * `-C lto=off`: no local ThinLTO between the cell's 16 codegen units. A cell is a few lines
//!   (plus evcxr's glue and the items earlier cells defined); the local ThinLTO pass costs more
//!   than everything else in its code generation (about 0.1 s of a plain cell's build and 0.4 s
//!   of one with gpukit loaded, measured with `-Z time-passes` on a 2-core machine), and the
//!   code it would inline across units is already inlined within each unit or comes from
//!   gpukit's own optimised rlib.
//!
//! The flags go in by re-executing this binary with them appended (once: [`MARKER`] stops a
//! second round), so evcxr's own wrapper logic sees an ordinary rustc command line. With the
//! cache off (`EVCXR_GPU_CACHE_MIB=0`) cargo calls rustc directly and cells build as evcxr builds
//! them.

use std::ffi::OsString;

/// Set (to `1`) in the environment of the re-executed wrapper, so flags are added only once.
pub const MARKER: &str = "EVCXR_GPU_CELL_FLAGS";
/// evcxr's switch that makes its binary act as the rustc wrapper.
pub const WRAPPER_ENV: &str = "EVCXR_RUSTC_WRAPPER";
/// The name evcxr gives the crate of every cell.
pub const CELL_CRATE: &str = "ctx";
/// What is appended to the rustc command of a cell crate.
pub const CELL_FLAGS: &[&str] = &["-C", "lto=off"];

/// The wrapper's arguments (without the program name: rustc's path, then rustc's arguments)
/// with [`CELL_FLAGS`] appended, if they compile the cell crate and set no LTO of their own.
pub fn cell_args(args: &[OsString]) -> Option<Vec<OsString>> {
    use crate::rustc_args::{codegen_options, crate_name};
    let sets_lto = codegen_options(args).iter().any(|o| o.starts_with("lto"));
    if crate_name(args) != Some(CELL_CRATE) || sets_lto {
        return None;
    }
    let mut out = args.to_vec();
    out.extend(CELL_FLAGS.iter().map(OsString::from));
    Some(out)
}

/// When this process is evcxr's rustc wrapper for a cell crate (and has not been through here),
/// re-executes it with [`CELL_FLAGS`] added; returns (doing nothing) otherwise or if the
/// re-execution cannot start, in which case the cell builds with evcxr's flags.
pub fn wrap() {
    if std::env::var_os(WRAPPER_ENV).is_none() || std::env::var_os(MARKER).is_some() {
        return;
    }
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let Some(new_args) = cell_args(&args) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    use std::os::unix::process::CommandExt;
    // `exec` only returns on failure; the cell then builds without the extra flags.
    let _ = std::process::Command::new(exe)
        .args(new_args)
        .env(MARKER, "1")
        .exec();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_cell_crate_gets_lto_off() {
        let args = os(&[
            "/bin/rustc",
            "--crate-name",
            "ctx",
            "--crate-type",
            "cdylib",
        ]);
        let out = cell_args(&args).unwrap();
        assert_eq!(&out[..args.len()], &args[..]);
        assert_eq!(&out[args.len()..], &os(&["-C", "lto=off"])[..]);
    }

    #[test]
    fn dependencies_and_explicit_lto_are_left_alone() {
        assert!(cell_args(&os(&["/bin/rustc", "--crate-name", "gpukit"])).is_none());
        assert!(cell_args(&os(&["/bin/rustc", "-vV"])).is_none());
        assert!(cell_args(&os(&["/bin/rustc", "--crate-name", "ctx", "-C", "lto=fat"])).is_none());
        assert!(cell_args(&os(&["/bin/rustc", "--crate-name", "ctx", "-Clto=thin"])).is_none());
        // `ctx` as a value of another option is not the crate name.
        assert!(cell_args(&os(&["/bin/rustc", "--cfg", "ctx"])).is_none());
    }
}
