//! NVRTC: CUDA C++ source to PTX, with a PTX cache in memory and on disk.
//!
//! The disk cache lives in `$GPUKIT_CACHE_DIR` (or `~/.cache/gpukit/ptx`). Each entry is keyed by
//! a hash of the source, the target architecture and the NVRTC version; the source is stored next
//! to the PTX and compared on every hit, so a hash collision can never load the wrong code.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The NVRTC version as `(major, minor)`, or why libnvrtc is unusable.
pub(crate) fn nvrtc_version() -> Result<(i32, i32)> {
    super::probe::nvrtc_probe().map_err(Error::NoGpu)?;
    static VERSION: OnceLock<(i32, i32)> = OnceLock::new();
    Ok(*VERSION.get_or_init(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints; libnvrtc was found by the probe above.
        unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        (major, minor)
    }))
}

/// Compiles CUDA C++ `source` to PTX for `arch` (e.g. `sm_90`) with `-std=c++17`.
///
/// `name` names the program in errors. Results are cached in memory and on disk. A rejected
/// program returns [`Error::Compile`] carrying NVRTC's log (with line numbers).
pub(crate) fn compile_ptx(name: &str, source: &str, arch: &str) -> Result<Arc<str>> {
    if source.contains('\0') || name.contains('\0') {
        return Err(Error::Compile {
            name: name.to_string(),
            log: "source or program name contains a NUL byte".into(),
        });
    }
    if !arch.starts_with("sm_") && !arch.starts_with("compute_") {
        return Err(Error::Other(format!(
            "bad GPU architecture `{arch}` (expected e.g. sm_90)"
        )));
    }
    let (major, minor) = nvrtc_version()?;
    let key = cache_key(source, arch, major, minor);

    crate::process::process_global! {
        fn memory() -> &'static Mutex<HashMap<String, Arc<str>>> = Mutex::new(HashMap::new());
    }
    let memory = memory();
    if let Some(ptx) = memory.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(ptx.clone());
    }
    let ptx: Arc<str> = match read_disk(&key, source) {
        Some(ptx) => ptx.into(),
        None => {
            let ptx = run_nvrtc(name, source, arch)?;
            write_disk(&key, source, &ptx);
            ptx.into()
        }
    };
    memory
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, ptx.clone());
    Ok(ptx)
}

/// The names of the kernels (`.entry` symbols) a PTX module defines, in order.
pub(crate) fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| {
            let rest = line.trim_start();
            let rest = rest.strip_prefix(".visible").unwrap_or(rest).trim_start();
            let rest = rest.strip_prefix(".entry")?.trim_start();
            let end = rest
                .find(|c: char| c == '(' || c.is_whitespace())
                .unwrap_or(rest.len());
            Some(rest[..end].to_string())
        })
        .filter(|n| !n.is_empty())
        .collect()
}

fn run_nvrtc(name: &str, source: &str, arch: &str) -> Result<String> {
    use cudarc::nvrtc::{CompileError, CompileOptions};
    let opts = CompileOptions {
        name: Some(format!("{name}.cu")),
        options: vec!["-std=c++17".into(), format!("--gpu-architecture={arch}")],
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { log, nvrtc, .. }) => {
            let log = log.to_string_lossy().trim_end().to_string();
            Err(Error::Compile {
                name: name.to_string(),
                log: if log.is_empty() {
                    format!("{nvrtc:?}")
                } else {
                    log
                },
            })
        }
        Err(other) => Err(Error::Compile {
            name: name.to_string(),
            log: format!("{other:?}"),
        }),
    }
}

/// 64-bit FNV-1a over the parts, separated so that ("ab","c") and ("a","bc") differ.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(&[0xffu8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn cache_key(source: &str, arch: &str, major: i32, minor: i32) -> String {
    let version = format!("nvrtc{major}.{minor}");
    let h = fnv1a(&[source.as_bytes(), arch.as_bytes(), version.as_bytes()]);
    format!("{arch}-{version}-{h:016x}")
}

/// `$GPUKIT_CACHE_DIR`, else `~/.cache/gpukit/ptx`; `None` when neither can be determined.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GPUKIT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".cache")
            .join("gpukit")
            .join("ptx"),
    )
}

fn read_disk(key: &str, source: &str) -> Option<String> {
    let dir = cache_dir()?;
    let stored_source = std::fs::read_to_string(dir.join(format!("{key}.cu"))).ok()?;
    if stored_source != source {
        return None;
    }
    std::fs::read_to_string(dir.join(format!("{key}.ptx"))).ok()
}

/// Best effort: a cache that cannot be written only costs a recompile next time.
fn write_disk(key: &str, source: &str, ptx: &str) {
    let Some(dir) = cache_dir() else { return };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let unique = format!("{}-{:?}", std::process::id(), std::thread::current().id());
    for (ext, text) in [("ptx", ptx), ("cu", source)] {
        let tmp = dir.join(format!(".{key}.{ext}.{unique}.tmp"));
        if std::fs::write(&tmp, text).is_err()
            || std::fs::rename(&tmp, dir.join(format!("{key}.{ext}"))).is_err()
        {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_entries() {
        let ptx = ".visible .entry add_f32(\n .param .u64 a\n)\n.entry helper (\n.func foo(";
        assert_eq!(ptx_entries(ptx), vec!["add_f32", "helper"]);
    }

    #[test]
    fn keys_differ_by_every_part() {
        let a = cache_key("x", "sm_90", 13, 0);
        assert_ne!(a, cache_key("y", "sm_90", 13, 0));
        assert_ne!(a, cache_key("x", "sm_80", 13, 0));
        assert_ne!(a, cache_key("x", "sm_90", 13, 1));
    }

    #[test]
    fn nul_bytes_are_a_compile_error() {
        let e = compile_ptx("bad", "int x;\0", "sm_90").unwrap_err();
        assert!(matches!(e, Error::Compile { .. }), "{e}");
    }
}
