//! The kernel cache: what NVRTC made of a source, kept in this process's memory and on disk
//! for later processes.
//!
//! **Key.** An entry is found by a key made from everything that changes NVRTC's output: the
//! source, the compile options, the target architecture, NVRTC's version and the format asked
//! for (a cubin with its PTX, or PTX alone); see [`key`]. The key names the file
//! `KEY.kernel` in the private directory of [`super::cache_dir::cache_dir`].
//!
//! **Entry.** One file: a header line `gpukit-kernel-cache 1 SOURCE_LEN PTX_LEN CUBIN_LEN
//! SHA256`, then the source, the PTX and the cubin (empty for PTX-only entries), back to back.
//! The SHA-256 covers everything after the header. An entry is used only when the hash matches,
//! the stored source equals the source asked for (so a key collision cannot load other code),
//! the PTX is text and, for a cubin entry, the cubin is a CUDA ELF of the architecture asked for.
//! Anything else (missing, unreadable, truncated, corrupted, another format version) is a miss:
//! the source is compiled again and the entry rewritten, never a panic.
//!
//! **Writes** go to a temporary file of a unique name in the same directory, then `rename` it
//! over `KEY.kernel`: a reader (another process sharing the cache) sees the old entry or the new
//! one, never half of one. A cache that cannot be written costs a recompilation next time only.
//!
//! With `GPUKIT_LOG=debug`, every lookup says whether it hit memory, hit the disk, or missed
//! (and why), and how long NVRTC took.

use super::cache_dir::cache_dir;
use super::code::{CodeFormat, CodeOrigin};
use super::nvrtc::{self, nvrtc_version};
use crate::error::{Error, Result};
use crate::log;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What NVRTC produced for one key.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// The PTX (present in every entry: `%ptx` shows it, and it is the fallback of a cubin the
    /// driver refuses).
    pub(crate) ptx: Arc<str>,
    /// The machine code, for [`CodeFormat::Cubin`] entries.
    pub(crate) cubin: Option<Arc<[u8]>>,
    /// Kernel (`.entry`) names in the PTX, in order.
    pub(crate) entries: Vec<String>,
    /// NVRTC's version.
    pub(crate) nvrtc_version: (i32, i32),
}

/// First word of an entry's header.
const MAGIC: &str = "gpukit-kernel-cache";
/// Version of the entry layout; entries of another version are misses.
const LAYOUT: &str = "1";
/// Headers are short; a file whose first line is longer is not an entry.
const MAX_HEADER: usize = 256;

/// SHA-256 of `data` in lowercase hex.
fn sha256_hex(data: &[&[u8]]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for part in data {
        h.update(part);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache key of a compilation: `ARCH-FORMAT-nvrtcMAJOR.MINOR-HASH`, the hash (128 bits of
/// SHA-256) taken over the source, every option, the architecture, the version and the format,
/// each part prefixed by its length so that no two different lists of parts hash alike.
pub(crate) fn key(
    source: &str,
    options: &[String],
    arch: &str,
    (major, minor): (i32, i32),
    format: CodeFormat,
) -> String {
    let version = format!("nvrtc{major}.{minor}");
    let mut parts: Vec<&[u8]> = vec![source.as_bytes()];
    parts.extend(options.iter().map(|o| o.as_bytes()));
    parts.push(arch.as_bytes());
    parts.push(version.as_bytes());
    parts.push(format.name().as_bytes());
    let lengths: Vec<[u8; 8]> = parts
        .iter()
        .map(|p| (p.len() as u64).to_le_bytes())
        .collect();
    let mut framed: Vec<&[u8]> = Vec::with_capacity(2 * parts.len());
    for (len, part) in lengths.iter().zip(&parts) {
        framed.push(len);
        framed.push(part);
    }
    let hash = sha256_hex(&framed);
    format!("{arch}-{}-{version}-{}", format.name(), &hash[..32])
}

crate::process::process_global! {
    /// Compiled code by key, for the whole process.
    fn memory() -> &'static Mutex<HashMap<String, Arc<Compiled>>> = Mutex::new(HashMap::new());
}

/// Forgets every compilation kept in memory (the disk cache stays): the next request of a source
/// reads its disk entry or compiles. For measurements of the disk cache.
pub(crate) fn clear_memory() {
    memory().lock().unwrap_or_else(|p| p.into_inner()).clear();
}

/// The compiled code of `source` for `arch` (`sm_XY`) in `format`, and where it came from:
/// memory, the disk cache, or NVRTC (whose result is then stored in both). `name` names the
/// program in NVRTC's log and in errors; a rejected program is [`Error::Compile`].
pub(crate) fn get(
    name: &str,
    source: &str,
    arch: &str,
    format: CodeFormat,
) -> Result<(Arc<Compiled>, CodeOrigin)> {
    if source.contains('\0') || name.contains('\0') {
        return Err(Error::Compile {
            name: name.to_string(),
            log: "source or program name contains a NUL byte".into(),
        });
    }
    let target = nvrtc::target(arch, format)?;
    let options = nvrtc::options(&target);
    let version = nvrtc_version()?;
    let key = key(source, &options, &target, version, format);
    if let Some(c) = memory().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        log::debug(|| format!("kernel cache: `{name}` found in memory ({key})"));
        return Ok((c.clone(), CodeOrigin::MemoryCache));
    }
    let dir = cache_dir();
    if dir.is_none() {
        log::debug(|| format!("kernel cache: no disk cache, compiling `{name}` ({key})"));
    }
    let (compiled, origin) = disk_or_compile(dir.as_deref(), &key, name, source, &options, format)?;
    let compiled = Arc::new(compiled);
    memory()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, compiled.clone());
    Ok((compiled, origin))
}

/// The verified entry `key` of the disk cache `dir`, else NVRTC's output (then stored there).
fn disk_or_compile(
    dir: Option<&Path>,
    key: &str,
    name: &str,
    source: &str,
    options: &[String],
    format: CodeFormat,
) -> Result<(Compiled, CodeOrigin)> {
    let target = options
        .iter()
        .find_map(|o| o.strip_prefix("--gpu-architecture="))
        .unwrap_or_default()
        .to_string();
    if let Some(d) = dir {
        let started = std::time::Instant::now();
        match read_disk(d, key, source, format, &target) {
            Ok(c) => {
                log::debug(|| {
                    format!(
                        "kernel cache: disk hit for `{name}` ({key}.kernel, read and verified in {:.3} ms)",
                        started.elapsed().as_secs_f64() * 1e3
                    )
                });
                return Ok((c, CodeOrigin::DiskCache));
            }
            Err(why) => {
                log::debug(|| format!("kernel cache: disk miss for `{name}` ({key}): {why}"))
            }
        }
    }
    let started = std::time::Instant::now();
    let out = nvrtc::run(name, source, options, format == CodeFormat::Cubin)?;
    log::debug(|| {
        format!(
            "NVRTC compiled `{name}` for {target} ({}) in {:.1} ms",
            if out.cubin.is_some() {
                "cubin + PTX"
            } else {
                "PTX"
            },
            started.elapsed().as_secs_f64() * 1e3
        )
    });
    if let Some(d) = dir {
        match write_disk(
            d,
            key,
            source,
            &out.ptx,
            out.cubin.as_deref().unwrap_or_default(),
        ) {
            Ok(()) => log::debug(|| format!("kernel cache: stored `{name}` as {key}.kernel")),
            Err(why) => log::debug(|| format!("kernel cache: could not store `{name}`: {why}")),
        }
    }
    Ok((
        Compiled {
            entries: nvrtc::ptx_entries(&out.ptx),
            ptx: out.ptx.into(),
            cubin: out.cubin.map(Into::into),
            nvrtc_version: nvrtc_version()?,
        },
        CodeOrigin::Compiled,
    ))
}

/// The entry's bytes: header line, then source, PTX and cubin.
fn encode(source: &str, ptx: &str, cubin: &[u8]) -> Vec<u8> {
    let hash = sha256_hex(&[source.as_bytes(), ptx.as_bytes(), cubin]);
    let header = format!(
        "{MAGIC} {LAYOUT} {} {} {} {hash}\n",
        source.len(),
        ptx.len(),
        cubin.len()
    );
    let mut bytes = Vec::with_capacity(header.len() + source.len() + ptx.len() + cubin.len());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(source.as_bytes());
    bytes.extend_from_slice(ptx.as_bytes());
    bytes.extend_from_slice(cubin);
    bytes
}

/// The PTX and cubin of an entry's bytes, if they are a whole, unaltered entry of `source` in
/// `format` for NVRTC target `target`; otherwise why not.
fn decode(
    bytes: &[u8],
    source: &str,
    format: CodeFormat,
    target: &str,
) -> std::result::Result<(String, Vec<u8>), String> {
    let end = bytes
        .iter()
        .take(MAX_HEADER)
        .position(|&b| b == b'\n')
        .ok_or("no header line")?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| "header is not text")?;
    let fields: Vec<&str> = header.split(' ').collect();
    let [magic, layout, source_len, ptx_len, cubin_len, hash] = fields[..] else {
        return Err(format!("malformed header {header:?}"));
    };
    if magic != MAGIC || layout != LAYOUT {
        return Err(format!("not an entry of layout {LAYOUT} ({header:?})"));
    }
    let len = |s: &str| s.parse::<usize>().map_err(|_| format!("bad length {s:?}"));
    let (source_len, ptx_len, cubin_len) = (len(source_len)?, len(ptx_len)?, len(cubin_len)?);
    let payload = &bytes[end + 1..];
    let total = source_len
        .checked_add(ptx_len)
        .and_then(|n| n.checked_add(cubin_len));
    if total != Some(payload.len()) {
        return Err(format!(
            "truncated or extended: {} bytes after the header, the header says {}",
            payload.len(),
            total.map_or_else(|| "too many".to_string(), |t| t.to_string())
        ));
    }
    let (stored_source, rest) = payload.split_at(source_len);
    let (ptx, cubin) = rest.split_at(ptx_len);
    if sha256_hex(&[stored_source, ptx, cubin]) != hash {
        return Err("SHA-256 does not match (corrupted or altered)".into());
    }
    if stored_source != source.as_bytes() {
        return Err("the stored source differs (a key collision)".into());
    }
    let ptx = std::str::from_utf8(ptx).map_err(|_| "the PTX is not text")?;
    if ptx.contains('\0') {
        return Err("the PTX contains a NUL byte".into());
    }
    match format {
        CodeFormat::Ptx if !cubin.is_empty() => return Err("a cubin in a PTX-only entry".into()),
        CodeFormat::Cubin => {
            let wanted = target
                .strip_prefix("sm_")
                .and_then(|n| n.parse::<u32>().ok());
            match nvrtc::cubin_sm(cubin) {
                None => return Err("no CUDA ELF machine code in a cubin entry".into()),
                Some(sm) if wanted.is_some_and(|w| w != sm) => {
                    return Err(format!("machine code for sm_{sm}, not {target}"))
                }
                Some(_) => {}
            }
        }
        CodeFormat::Ptx => {}
    }
    Ok((ptx.to_string(), cubin.to_vec()))
}

/// The entry `key` in `dir` (see [`decode`]), or why it cannot be used.
fn read_disk(
    dir: &Path,
    key: &str,
    source: &str,
    format: CodeFormat,
    target: &str,
) -> std::result::Result<Compiled, String> {
    let path = dir.join(format!("{key}.kernel"));
    let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no entry".to_string(),
        _ => format!("cannot read {}: {e}", path.display()),
    })?;
    let (ptx, cubin) = decode(&bytes, source, format, target)?;
    Ok(Compiled {
        entries: nvrtc::ptx_entries(&ptx),
        ptx: ptx.into(),
        cubin: (format == CodeFormat::Cubin).then(|| cubin.into()),
        nvrtc_version: nvrtc_version().map_err(|e| e.to_string())?,
    })
}

/// Stores an entry atomically: written to a uniquely named temporary file in `dir`, then renamed
/// over `KEY.kernel`.
fn write_disk(
    dir: &Path,
    key: &str,
    source: &str,
    ptx: &str,
    cubin: &[u8],
) -> std::result::Result<(), String> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let tmp = dir.join(format!(".{key}.{unique}.tmp"));
    let dest = dir.join(format!("{key}.kernel"));
    let written = std::fs::write(&tmp, encode(source, ptx, cubin))
        .map_err(|e| format!("writing {}: {e}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, &dest).map_err(|e| format!("renaming to {}: {e}", dest.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(target: &str) -> Vec<String> {
        nvrtc::options(target)
    }

    #[test]
    fn keys_change_with_source_options_arch_version_and_format() {
        let k = |src: &str, o: &[String], arch: &str, v: (i32, i32), f: CodeFormat| {
            key(src, o, arch, v, f)
        };
        let base = k("x", &opts("sm_90"), "sm_90", (13, 0), CodeFormat::Cubin);
        assert_eq!(
            base,
            k("x", &opts("sm_90"), "sm_90", (13, 0), CodeFormat::Cubin)
        );
        assert!(base.starts_with("sm_90-cubin-nvrtc13.0-"), "{base}");
        let others = [
            k("y", &opts("sm_90"), "sm_90", (13, 0), CodeFormat::Cubin),
            k(
                "x",
                &["-std=c++20".into(), "--gpu-architecture=sm_90".into()],
                "sm_90",
                (13, 0),
                CodeFormat::Cubin,
            ),
            k("x", &opts("sm_80"), "sm_80", (13, 0), CodeFormat::Cubin),
            k("x", &opts("sm_90"), "sm_80", (13, 0), CodeFormat::Cubin),
            k("x", &opts("sm_90"), "sm_90", (13, 1), CodeFormat::Cubin),
            k("x", &opts("sm_90"), "sm_90", (12, 0), CodeFormat::Cubin),
            k("x", &opts("sm_90"), "sm_90", (13, 0), CodeFormat::Ptx),
        ];
        for (i, other) in others.iter().enumerate() {
            assert_ne!(&base, other, "variant {i}");
        }
        // Parts are framed: moving a character from one part to the next changes the key.
        let a = key("ab", &["c".into()], "sm_90", (13, 0), CodeFormat::Cubin);
        let b = key("a", &["bc".into()], "sm_90", (13, 0), CodeFormat::Cubin);
        assert_ne!(a, b);
    }

    #[test]
    fn sha256_is_sha256() {
        assert_eq!(
            sha256_hex(&[b"a", b"bc"]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// A cubin-like byte string: a 64-byte CUDA ELF header for SM `sm` (ABI version 8).
    fn fake_cubin(sm: u32) -> Vec<u8> {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[8] = 8;
        elf[18..20].copy_from_slice(&190u16.to_le_bytes());
        elf[48..52].copy_from_slice(&(sm << 8 | 4).to_le_bytes());
        elf
    }

    #[test]
    fn entries_round_trip_and_check_what_they_hold() {
        let cubin = fake_cubin(90);
        let bytes = encode("src", ".entry k(", &cubin);
        assert_eq!(
            decode(&bytes, "src", CodeFormat::Cubin, "sm_90").unwrap(),
            (".entry k(".to_string(), cubin.clone())
        );
        let e = decode(&bytes, "other", CodeFormat::Cubin, "sm_90").unwrap_err();
        assert!(e.contains("stored source differs"), "{e}");
        let e = decode(&bytes, "src", CodeFormat::Cubin, "sm_80").unwrap_err();
        assert!(e.contains("machine code for sm_90, not sm_80"), "{e}");
        let e = decode(&bytes, "src", CodeFormat::Ptx, "compute_90").unwrap_err();
        assert!(e.contains("a cubin in a PTX-only entry"), "{e}");
        let ptx_only = encode("src", "// ptx", &[]);
        assert!(decode(&ptx_only, "src", CodeFormat::Ptx, "compute_90").is_ok());
        let e = decode(&ptx_only, "src", CodeFormat::Cubin, "sm_90").unwrap_err();
        assert!(e.contains("no CUDA ELF"), "{e}");
    }

    #[test]
    fn corrupt_entries_are_misses_never_panics() {
        let good = encode("src", "// ptx", &fake_cubin(90));
        let decode = |b: &[u8]| decode(b, "src", CodeFormat::Cubin, "sm_90");
        // Every truncation, and every single flipped byte, is refused.
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "truncated at {cut}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            assert!(decode(&bad).is_err(), "byte {i} flipped");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(decode(&longer)
            .unwrap_err()
            .contains("truncated or extended"));
        for junk in [
            &b""[..],
            b"\n",
            b"gpukit-kernel-cache 1\n",
            b"gpukit-kernel-cache 2 0 0 0 x\n",
            b"gpukit-kernel-cache 1 99999999999999999999 0 0 x\n",
            b"gpukit-kernel-cache 1 18446744073709551615 18446744073709551615 1 x\n",
            &[0xff; 300],
        ] {
            assert!(decode(junk).is_err(), "{junk:?}");
        }
    }

    #[test]
    fn verified_entries_load_without_compiling() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        let key = "sm_90-cubin-test";
        write_disk(dir, key, "source", ".entry from_cache(", &fake_cubin(90)).unwrap();
        // A hit never reaches NVRTC (which would reject this source).
        let c = read_disk(dir, key, "source", CodeFormat::Cubin, "sm_90");
        if let Err(why) = &c {
            // Without libnvrtc the entry cannot say which NVRTC made it; the rest was checked.
            assert!(why.contains("nvrtc") || why.contains("NVRTC"), "{why}");
            return;
        }
        let c = c.unwrap();
        assert_eq!(c.entries, ["from_cache"]);
        assert_eq!(c.cubin.as_deref(), Some(&fake_cubin(90)[..]));
    }

    #[test]
    fn writes_are_atomic_renames_that_leave_no_temporary_files() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        let key = "sm_90-cubin-atomic";
        // Readers racing a writer see the old entry or the new one, whole, never a mix.
        write_disk(dir, key, "src", "// old ptx", &fake_cubin(90)).unwrap();
        let path = dir.join(format!("{key}.kernel"));
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..200 {
                    let ptx = format!("// new ptx {i} {}", "x".repeat(i * 100));
                    write_disk(dir, key, "src", &ptx, &fake_cubin(90)).unwrap();
                }
            });
            s.spawn(|| {
                for _ in 0..500 {
                    let bytes = std::fs::read(&path).unwrap();
                    let (ptx, _) =
                        decode(&bytes, "src", CodeFormat::Cubin, "sm_90").expect("a whole entry");
                    assert!(ptx.starts_with("// old ptx") || ptx.starts_with("// new ptx"));
                }
            });
        });
        let names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{key}.kernel")], "only the entry is left");
        // A directory that cannot be written is an error to log, and leaves nothing behind.
        let missing = dir.join("gone");
        assert!(write_disk(&missing, key, "src", "p", &[]).is_err());
    }

    #[test]
    fn unreadable_entries_are_misses() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        let e = read_disk(dir, "absent", "s", CodeFormat::Ptx, "compute_90").err();
        assert_eq!(e.as_deref(), Some("no entry"));
        // A directory where the file should be cannot be read: a miss with the reason.
        std::fs::create_dir(dir.join("k.kernel")).unwrap();
        let e = read_disk(dir, "k", "s", CodeFormat::Ptx, "compute_90").unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }

    /// With libnvrtc (no GPU): a corrupted entry is compiled again and rewritten, and the next
    /// lookup is a disk hit giving the same code.
    #[test]
    fn corrupted_entry_is_recompiled_and_rewritten() {
        if !nvrtc::nvrtc_or_skip() {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        let source = "extern \"C\" __global__ void cache_probe(float* x) { x[0] = 1.0f; }";
        let o = opts("sm_90");
        let key = "probe";
        let (fresh, origin) =
            disk_or_compile(Some(dir), key, "probe", source, &o, CodeFormat::Cubin).unwrap();
        assert_eq!(origin, CodeOrigin::Compiled);
        assert_eq!(fresh.entries, ["cache_probe"]);
        assert_eq!(fresh.cubin.as_deref().and_then(nvrtc::cubin_sm), Some(90));
        let (hit, origin) =
            disk_or_compile(Some(dir), key, "probe", source, &o, CodeFormat::Cubin).unwrap();
        assert_eq!(origin, CodeOrigin::DiskCache);
        assert_eq!(hit.cubin, fresh.cubin);
        assert_eq!(hit.ptx, fresh.ptx);
        // Plant other code in the entry: refused by its hash, recompiled, rewritten.
        let path = dir.join(format!("{key}.kernel"));
        let mut planted = std::fs::read(&path).unwrap();
        let at = planted.len() - 10;
        planted[at] ^= 0xff;
        std::fs::write(&path, &planted).unwrap();
        let (again, origin) =
            disk_or_compile(Some(dir), key, "probe", source, &o, CodeFormat::Cubin).unwrap();
        assert_eq!(
            origin,
            CodeOrigin::Compiled,
            "the corrupted entry was loaded"
        );
        assert_eq!(again.ptx, fresh.ptx);
        let (_, origin) =
            disk_or_compile(Some(dir), key, "probe", source, &o, CodeFormat::Cubin).unwrap();
        assert_eq!(origin, CodeOrigin::DiskCache, "the entry was rewritten");
        // Garbage in place of the entry: the same.
        std::fs::write(&path, b"not an entry").unwrap();
        let (_, origin) =
            disk_or_compile(Some(dir), key, "probe", source, &o, CodeFormat::Cubin).unwrap();
        assert_eq!(origin, CodeOrigin::Compiled);
    }
}
