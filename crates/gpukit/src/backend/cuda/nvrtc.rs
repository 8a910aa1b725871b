//! NVRTC: CUDA C++ source to PTX, with a PTX cache in memory and on disk.
//!
//! The disk cache lives in a private directory of this user (see [`cache_dir`]). Each entry is
//! keyed by a hash of the source, the target architecture and the NVRTC version; the source is
//! stored next to the PTX and compared on every hit, so a hash collision can never load the wrong
//! code. The SHA-256 of the PTX is stored beside it too and checked on every load: an entry whose
//! PTX does not match (corrupted, truncated, edited, or written before hashes were stored) is a
//! miss, recompiled and overwritten, never loaded.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
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
    let ptx: Arc<str> = disk_or_compile(cache_dir().as_deref(), &key, name, source, arch)?.into();
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

/// Compiles CUDA C++ `source` straight to machine code (a cubin) for the real architecture
/// `arch` (e.g. `sm_90`), as `%sass` needs. Not cached: it is only for reading.
pub(crate) fn compile_cubin(name: &str, source: &str, arch: &str) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::CString;
    nvrtc_version()?;
    let compile_err = |log: String| Error::Compile {
        name: name.to_string(),
        log,
    };
    let src = CString::new(source).map_err(|_| compile_err("source contains a NUL byte".into()))?;
    let file = CString::new(format!("{name}.cu"))
        .map_err(|_| compile_err("name contains a NUL byte".into()))?;
    let prog = result::create_program(&src, Some(&file))
        .map_err(|e| compile_err(format!("creating the NVRTC program: {e:?}")))?;
    let options = vec![
        "-std=c++17".to_string(),
        format!("--gpu-architecture={arch}"),
    ];
    // SAFETY: `prog` is a live program until destroyed at the end; the buffers below have the
    // sizes NVRTC reports.
    let cubin = unsafe {
        let compiled = result::compile_program(prog, &options);
        let out = match compiled {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        std::ffi::CStr::from_ptr(l.as_ptr())
                            .to_string_lossy()
                            .trim_end()
                            .to_string()
                    })
                    .unwrap_or_else(|_| format!("{e:?}"));
                Err(compile_err(log))
            }
            Ok(()) => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| compile_err(format!("no machine code for {arch}: {e:?}")))?;
                let mut bytes = vec![0u8; size];
                sys::nvrtcGetCUBIN(prog, bytes.as_mut_ptr() as *mut std::ffi::c_char)
                    .result()
                    .map_err(|e| compile_err(format!("reading the machine code: {e:?}")))?;
                Ok(bytes)
            }
        };
        let _ = result::destroy_program(prog);
        out
    };
    cubin
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

/// The verified PTX of entry `key` in the disk cache `dir`, else NVRTC's (then stored there).
fn disk_or_compile(
    dir: Option<&Path>,
    key: &str,
    name: &str,
    source: &str,
    arch: &str,
) -> Result<String> {
    if let Some(ptx) = dir.and_then(|d| read_disk(d, key, source)) {
        return Ok(ptx);
    }
    let ptx = run_nvrtc(name, source, arch)?;
    if let Some(d) = dir {
        write_disk(d, key, source, &ptx);
    }
    Ok(ptx)
}

/// Where the disk cache belongs: `$GPUKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/gpukit/ptx`, else
/// `~/.cache/gpukit/ptx`, else `gpukit-ptx-UID` in the temporary directory (one level, so that
/// no directory another user could own lies on the way).
fn cache_location(var: impl Fn(&str) -> Option<OsString>, uid: u32) -> PathBuf {
    let var = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("GPUKIT_CACHE_DIR") {
        return dir;
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .map(|c| c.join("gpukit").join("ptx"))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("gpukit-ptx-{uid}")))
}

/// The effective user id.
#[cfg(unix)]
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Off Unix, ownership is not checked; the value only names the fallback directory.
#[cfg(not(unix))]
fn euid() -> u32 {
    0
}

/// Creates `dir` (and missing parents) with mode 0700 and checks that only this user can use it:
/// a directory, or a link of this user's to one, owned by this user and not writable by group or
/// others. One that others may only read or enter is tightened to 0700; anything else is refused
/// with the reason, since PTX loaded from there could have been planted by another user.
fn ensure_private(dir: &Path) -> std::result::Result<(), String> {
    let shown = dir.display();
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {shown}: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let uid = euid();
        let link = std::fs::symlink_metadata(dir).map_err(|e| format!("{shown}: {e}"))?;
        if link.file_type().is_symlink() && link.uid() != uid {
            return Err(format!(
                "{shown} is a symbolic link owned by uid {}, not by this user (uid {uid})",
                link.uid()
            ));
        }
        let meta = std::fs::metadata(dir).map_err(|e| format!("{shown}: {e}"))?;
        if !meta.is_dir() {
            return Err(format!("{shown} is not a directory"));
        }
        if meta.uid() != uid {
            return Err(format!(
                "{shown} is owned by uid {}, not by this user (uid {uid})",
                meta.uid()
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(format!(
                "other users can write to {shown} (mode {mode:o}); if nobody else did, `chmod 700 {shown}`"
            ));
        }
        if mode != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot make {shown} private: {e}"))?;
        }
    }
    Ok(())
}

/// The disk cache's directory (see [`cache_location`]), made private to this user; `None`, with
/// the reason printed once per process, when it cannot be (the cache is then memory-only).
pub(crate) fn cache_dir() -> Option<PathBuf> {
    let dir = cache_location(|k| std::env::var_os(k), euid());
    match ensure_private(&dir) {
        Ok(()) => Some(dir),
        Err(why) => {
            crate::process::process_global! {
                fn warned() -> &'static std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
            }
            if !warned().swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("gpukit: not using the PTX disk cache: {why}");
            }
            None
        }
    }
}

/// SHA-256 of `data` in lowercase hex.
fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The PTX of entry `key` in `dir` if its source is `source` and its stored SHA-256 matches.
fn read_disk(dir: &Path, key: &str, source: &str) -> Option<String> {
    let stored_source = std::fs::read_to_string(dir.join(format!("{key}.cu"))).ok()?;
    if stored_source != source {
        return None;
    }
    let ptx = std::fs::read_to_string(dir.join(format!("{key}.ptx"))).ok()?;
    let hash = std::fs::read_to_string(dir.join(format!("{key}.sha256"))).ok()?;
    (hash.trim() == sha256_hex(ptx.as_bytes())).then_some(ptx)
}

/// Best effort: a cache that cannot be written only costs a recompile next time.
fn write_disk(dir: &Path, key: &str, source: &str, ptx: &str) {
    let unique = format!("{}-{:?}", std::process::id(), std::thread::current().id());
    let hash = sha256_hex(ptx.as_bytes());
    for (ext, text) in [("ptx", ptx), ("cu", source), ("sha256", hash.as_str())] {
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
    fn sha256_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn verified_entries_load_without_compiling() {
        let t = tempdir();
        let dir = t.path();
        write_disk(dir, "k", "source", "// ptx from the cache");
        assert_eq!(
            std::fs::read_to_string(dir.join("k.sha256")).unwrap(),
            sha256_hex(b"// ptx from the cache")
        );
        // A hit never reaches NVRTC (which would reject this source and arch).
        let ptx = disk_or_compile(Some(dir), "k", "t", "source", "sm_bogus").unwrap();
        assert_eq!(ptx, "// ptx from the cache");
        assert_eq!(read_disk(dir, "k", "other source"), None);
    }

    #[test]
    fn altered_entries_are_misses() {
        let t = tempdir();
        let dir = t.path();
        write_disk(dir, "k", "source", "// good ptx");
        std::fs::write(dir.join("k.ptx"), "// planted ptx").unwrap();
        assert_eq!(read_disk(dir, "k", "source"), None, "changed PTX");
        write_disk(dir, "k", "source", "// good ptx");
        std::fs::write(dir.join("k.ptx"), "// good").unwrap();
        assert_eq!(read_disk(dir, "k", "source"), None, "truncated PTX");
        write_disk(dir, "k", "source", "// good ptx");
        std::fs::write(dir.join("k.sha256"), sha256_hex(b"x")).unwrap();
        assert_eq!(read_disk(dir, "k", "source"), None, "changed hash");
        write_disk(dir, "k", "source", "// good ptx");
        std::fs::remove_file(dir.join("k.sha256")).unwrap();
        assert_eq!(read_disk(dir, "k", "source"), None, "entry without a hash");
    }

    /// Runs where libnvrtc loads (no GPU needed); with `GPUKIT_REQUIRE_NVRTC=1` a missing
    /// libnvrtc is a failure instead of a skip.
    #[test]
    fn corrupted_cache_entry_is_recompiled_not_loaded() {
        if let Err(why) = nvrtc_version() {
            if std::env::var("GPUKIT_REQUIRE_NVRTC").as_deref() == Ok("1") {
                panic!("GPUKIT_REQUIRE_NVRTC=1 but {why}");
            }
            println!("skipped: {why}");
            return;
        }
        let t = tempdir();
        let dir = t.path();
        let source = "extern \"C\" __global__ void cache_probe(float* x) { x[0] = 1.0f; }";
        let fresh = disk_or_compile(Some(dir), "k", "probe", source, "sm_80").unwrap();
        assert!(fresh.contains(".entry cache_probe("), "{fresh}");
        let planted = fresh.replace("cache_probe", "cache_evil_");
        std::fs::write(dir.join("k.ptx"), &planted).unwrap();
        let again = disk_or_compile(Some(dir), "k", "probe", source, "sm_80").unwrap();
        assert_eq!(again, fresh, "the corrupted PTX was loaded");
        assert_eq!(std::fs::read_to_string(dir.join("k.ptx")).unwrap(), fresh);
        assert_eq!(read_disk(dir, "k", source).as_deref(), Some(fresh.as_str()));
    }

    #[test]
    fn cache_location_is_per_user() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            cache_location(env(&[]), 1234),
            std::env::temp_dir().join("gpukit-ptx-1234")
        );
        assert_eq!(
            cache_location(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "")]), 1),
            PathBuf::from("/home/u/.cache/gpukit/ptx")
        );
        assert_eq!(
            cache_location(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")]), 1),
            PathBuf::from("/c/gpukit/ptx")
        );
        assert_eq!(
            cache_location(env(&[("GPUKIT_CACHE_DIR", "/g"), ("HOME", "/h")]), 1),
            PathBuf::from("/g")
        );
    }

    /// A fresh private directory for one test, removed when dropped.
    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[cfg(unix)]
    mod private_dirs {
        use super::super::*;
        use std::os::unix::fs::{MetadataExt, PermissionsExt};

        fn mode(p: &Path) -> u32 {
            std::fs::metadata(p).unwrap().mode() & 0o7777
        }

        fn set_mode(p: &Path, m: u32) {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        }

        #[test]
        fn created_0700_tightened_or_refused() {
            let t = super::tempdir();
            let root = t.path();
            let d = root.join("a").join("b");
            ensure_private(&d).unwrap();
            assert_eq!((mode(&root.join("a")), mode(&d)), (0o700, 0o700));
            set_mode(&d, 0o755);
            ensure_private(&d).unwrap();
            assert_eq!(mode(&d), 0o700, "readable by others is tightened");
            for m in [0o777, 0o770, 0o1777, 0o702] {
                set_mode(&d, m);
                let e = ensure_private(&d).unwrap_err();
                assert!(e.contains("other users can write"), "{e}");
                assert_eq!(mode(&d), m, "left as it was");
            }
            let f = root.join("file");
            std::fs::write(&f, "").unwrap();
            assert!(ensure_private(&f).unwrap_err().contains("cannot create"));
        }

        /// Owned by another user: made with chown when running as root, else `/` (root's).
        #[test]
        fn other_users_directories_are_refused() {
            let t = super::tempdir();
            let root = t.path();
            if euid() == 0 {
                let d = root.join("theirs");
                std::fs::create_dir(&d).unwrap();
                set_mode(&d, 0o700);
                std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
                let e = ensure_private(&d).unwrap_err();
                assert!(e.contains("owned by uid 65534, not by this user"), "{e}");
                let mine = root.join("mine");
                std::fs::create_dir(&mine).unwrap();
                let link = root.join("their-link");
                std::os::unix::fs::symlink(&mine, &link).unwrap();
                std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
                let e = ensure_private(&link).unwrap_err();
                assert!(e.contains("symbolic link owned by uid 65534"), "{e}");
            } else {
                let e = ensure_private(Path::new("/")).unwrap_err();
                assert!(e.contains("owned by uid 0, not by this user"), "{e}");
            }
            assert_eq!(std::fs::metadata(root).unwrap().uid(), euid());
        }
    }

    #[test]
    fn nul_bytes_are_a_compile_error() {
        let e = compile_ptx("bad", "int x;\0", "sm_90").unwrap_err();
        assert!(matches!(e, Error::Compile { .. }), "{e}");
    }
}
