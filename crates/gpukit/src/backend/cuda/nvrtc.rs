//! NVRTC: CUDA C++ source to PTX and to machine code (a cubin) for one GPU architecture.
//!
//! [`run`] calls NVRTC once, uncached. Callers go through [`super::kernel_cache`], which keeps
//! what NVRTC made in memory and on disk; [`compile_ptx`] and [`compile_cubin`] are its two
//! simple faces (PTX for `%ptx`, a cubin for `%sass`).
//!
//! Compiling for a real architecture (`--gpu-architecture=sm_90`) makes NVRTC produce both the
//! PTX and the machine code in one run; a virtual one (`compute_90`) produces PTX alone, without
//! running the assembler, which is what the PTX-only path asks for.

use super::code::CodeFormat;
use super::kernel_cache;
use crate::error::{Error, Result};
use std::sync::{Arc, OnceLock};

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
/// `name` names the program in errors. Results are cached in memory and on disk (as PTX only:
/// NVRTC targets the virtual architecture, `compute_90` for `sm_90`, and skips the assembler).
/// A rejected program returns [`Error::Compile`] carrying NVRTC's log (with line numbers).
pub(crate) fn compile_ptx(name: &str, source: &str, arch: &str) -> Result<Arc<str>> {
    Ok(kernel_cache::get(name, source, arch, CodeFormat::Ptx)?
        .0
        .ptx
        .clone())
}

/// Compiles CUDA C++ `source` straight to machine code (a cubin) for the real architecture
/// `arch` (e.g. `sm_90`), as `%sass` needs; the same cached cubin a launch loads.
pub(crate) fn compile_cubin(name: &str, source: &str, arch: &str) -> Result<Arc<[u8]>> {
    let (compiled, _) = kernel_cache::get(name, source, arch, CodeFormat::Cubin)?;
    compiled.cubin.clone().ok_or_else(|| Error::Compile {
        name: name.to_string(),
        log: format!("NVRTC produced no machine code for {arch}"),
    })
}

/// What one NVRTC run produced.
#[derive(Debug)]
pub(crate) struct Output {
    /// The PTX (always produced).
    pub(crate) ptx: String,
    /// The machine code, when a real architecture (`sm_XY`) was the target.
    pub(crate) cubin: Option<Vec<u8>>,
}

/// The NVRTC target for `arch` (`sm_90` or `compute_90`) and `format`: the real architecture for
/// machine code, the virtual one of the same number for PTX alone.
pub(crate) fn target(arch: &str, format: CodeFormat) -> Result<String> {
    let number = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()))
        .ok_or_else(|| {
            Error::Other(format!(
                "bad GPU architecture `{arch}` (expected e.g. sm_90)"
            ))
        })?;
    Ok(match format {
        CodeFormat::Cubin => format!("sm_{number}"),
        CodeFormat::Ptx => format!("compute_{number}"),
    })
}

/// The options gpukit compiles every program with, for NVRTC target `target`.
pub(crate) fn options(target: &str) -> Vec<String> {
    vec![
        "-std=c++17".to_string(),
        format!("--gpu-architecture={target}"),
    ]
}

/// Runs NVRTC once on `source` with `options` (no cache). `name` names the program
/// (`NAME.cu` in NVRTC's log) and the errors; a rejected program is [`Error::Compile`] with
/// NVRTC's log. The cubin is read when `cubin` is true (the target must then be real).
pub(crate) fn run(name: &str, source: &str, options: &[String], cubin: bool) -> Result<Output> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::CString;
    nvrtc_version()?;
    let compile_err = |log: String| Error::Compile {
        name: name.to_string(),
        log,
    };
    let src = CString::new(source).map_err(|_| compile_err("source contains a NUL byte".into()))?;
    let file = CString::new(format!("{name}.cu"))
        .map_err(|_| compile_err("program name contains a NUL byte".into()))?;
    if options.iter().any(|o| o.contains('\0')) {
        return Err(compile_err("an option contains a NUL byte".into()));
    }
    let prog = result::create_program(&src, Some(&file))
        .map_err(|e| compile_err(format!("creating the NVRTC program: {e:?}")))?;
    // SAFETY: `prog` is a live program until destroyed at the end; the buffers below have the
    // sizes NVRTC reports.
    unsafe {
        let out = match result::compile_program(prog, options) {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| c_text(&l).trim_end().to_string())
                    .unwrap_or_default();
                Err(compile_err(if log.is_empty() {
                    format!("{e:?}")
                } else {
                    log
                }))
            }
            Ok(()) => result::get_ptx(prog)
                .map_err(|e| compile_err(format!("reading the PTX: {e:?}")))
                .and_then(|ptx| {
                    let cubin = if cubin {
                        let mut size = 0usize;
                        sys::nvrtcGetCUBINSize(prog, &mut size)
                            .result()
                            .map_err(|e| compile_err(format!("no machine code: {e:?}")))?;
                        let mut bytes = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, bytes.as_mut_ptr() as *mut std::ffi::c_char)
                            .result()
                            .map_err(|e| compile_err(format!("reading the machine code: {e:?}")))?;
                        if bytes.is_empty() {
                            return Err(compile_err("NVRTC produced no machine code".into()));
                        }
                        Some(bytes)
                    } else {
                        None
                    };
                    Ok(Output {
                        ptx: c_text(&ptx),
                        cubin,
                    })
                }),
        };
        let _ = result::destroy_program(prog);
        out
    }
}

/// The text of a NUL-terminated buffer NVRTC filled (up to its first NUL).
fn c_text(buf: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// ELF machine number of NVIDIA CUDA code.
const EM_CUDA: u16 = 190;

/// The SM number (90 for `sm_90`) a cubin was built for, read from its ELF header; `None` when
/// `bytes` is not a 64-bit little-endian CUDA ELF. CUDA's ELF ABI version 8 and later keep the
/// SM number in bits 8-15 of `e_flags` (NVRTC 13.0: `0x06005a04` for sm_90); earlier versions in
/// bits 0-7 (NVRTC 12.6: `0x005a055a`).
pub(crate) fn cubin_sm(bytes: &[u8]) -> Option<u32> {
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return None;
    }
    let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
    if machine != EM_CUDA {
        return None;
    }
    let flags = u32::from_le_bytes([bytes[48], bytes[49], bytes[50], bytes[51]]);
    let abi_version = bytes[8];
    Some(if abi_version >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    })
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

/// Whether libnvrtc loads, for tests that need it: `false` (after a `skipped:` line) where it
/// does not; a failure there with `GPUKIT_REQUIRE_NVRTC=1`. (`crate::testing` sits above the
/// backend layer, so the backend's tests carry this small copy of its rule.)
#[cfg(test)]
pub(crate) fn nvrtc_or_skip() -> bool {
    match nvrtc_version() {
        Ok(_) => true,
        Err(why) => {
            let required = std::env::var("GPUKIT_REQUIRE_NVRTC")
                .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
            assert!(!required, "GPUKIT_REQUIRE_NVRTC=1 but {why}");
            println!("skipped: {why}");
            false
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
    fn nul_bytes_are_a_compile_error() {
        let e = compile_ptx("bad", "int x;\0", "sm_90").unwrap_err();
        assert!(matches!(e, Error::Compile { .. }), "{e}");
    }

    #[test]
    fn targets_real_for_machine_code_virtual_for_ptx() {
        assert_eq!(target("sm_90", CodeFormat::Cubin).unwrap(), "sm_90");
        assert_eq!(target("sm_90", CodeFormat::Ptx).unwrap(), "compute_90");
        assert_eq!(target("compute_90a", CodeFormat::Cubin).unwrap(), "sm_90a");
        for bad in ["90", "sm_", "sm_9 0", "gfx90a"] {
            assert!(target(bad, CodeFormat::Cubin).is_err(), "{bad}");
        }
    }

    #[test]
    fn cubin_sm_reads_the_elf_header_and_rejects_the_rest() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2; // 64-bit
        elf[5] = 1; // little-endian
        elf[18..20].copy_from_slice(&EM_CUDA.to_le_bytes());
        elf[8] = 8; // ABI version 8: SM in bits 8-15
        elf[48..52].copy_from_slice(&0x0600_5a04u32.to_le_bytes());
        assert_eq!(cubin_sm(&elf), Some(90));
        elf[8] = 7; // older ABI: SM in bits 0-7
        elf[48..52].copy_from_slice(&0x0050_0550u32.to_le_bytes());
        assert_eq!(cubin_sm(&elf), Some(0x50));
        let mut x86 = elf.clone();
        x86[18..20].copy_from_slice(&62u16.to_le_bytes());
        assert_eq!(cubin_sm(&x86), None);
        assert_eq!(cubin_sm(b"// PTX"), None);
        assert_eq!(cubin_sm(&elf[..40]), None);
    }

    /// NVRTC alone (no GPU): a cubin for sm_90 is a CUDA ELF for SM 90, and the same run gives
    /// the PTX too. Skips without libnvrtc, fails there with `GPUKIT_REQUIRE_NVRTC=1`.
    #[test]
    fn nvrtc_makes_an_sm_90_elf_and_its_ptx_in_one_run() {
        if !nvrtc_or_skip() {
            return;
        }
        let source = "extern \"C\" __global__ void elf_probe(float* x) { x[0] = 2.0f; }";
        let out = run("elf_probe", source, &options("sm_90"), true).unwrap();
        let cubin = out.cubin.expect("a cubin for sm_90");
        assert_eq!(&cubin[..4], b"\x7fELF");
        assert_eq!(cubin_sm(&cubin), Some(90));
        assert!(out.ptx.contains(".entry elf_probe("), "{}", out.ptx);
        let ptx_only = run("elf_probe", source, &options("compute_90"), false).unwrap();
        assert!(ptx_only.cubin.is_none());
        assert!(ptx_only.ptx.contains(".target sm_90"), "{}", ptx_only.ptx);
        let e = run("broken", "this is not C++", &options("sm_90"), true).unwrap_err();
        assert!(e.to_string().contains("broken.cu"), "{e}");
    }
}
