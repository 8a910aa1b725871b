//! Finding out, without letting cudarc panic, whether CUDA can be used here.
//!
//! cudarc (with `dynamic-loading`) panics on first use when it cannot load libcuda or libnvrtc.
//! This module opens the same libraries with `libloading` first, initialises the driver and
//! counts devices, and caches the answer for the life of the process.

use libloading::Library;
use std::os::raw::{c_int, c_uint};
use std::sync::OnceLock;

/// Number of usable CUDA devices, or a one-line reason why CUDA cannot be used.
///
/// A usable CUDA device needs the driver (libcuda), at least one device, and libnvrtc
/// (every gpukit kernel is compiled at run time).
pub(crate) fn probe() -> Result<usize, String> {
    static PROBE: OnceLock<Result<usize, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let count = driver_device_count()?;
            nvrtc_probe()?;
            Ok(count)
        })
        .clone()
}

/// Whether libnvrtc can be loaded (under one of the names cudarc tries), or why not.
///
/// NVRTC works without a GPU, so this is separate from [`probe`]: PTX can be produced on a
/// machine that has libnvrtc but no driver.
pub(crate) fn nvrtc_probe() -> Result<(), String> {
    static NVRTC: OnceLock<Result<(), String>> = OnceLock::new();
    NVRTC
        .get_or_init(|| {
            let names = cudarc::get_lib_name_candidates("nvrtc");
            let found = open_first(&names)
                .or_else(|| open_in_known_dirs(&names, &["libnvrtc-builtins.so."]));
            match found {
                Some(_) => Ok(()),
                None => Err(format!(
                    "libnvrtc not found (searched {}; put the folder holding libnvrtc.so.13 on LD_LIBRARY_PATH)",
                    short_list(&names)
                )),
            }
        })
        .clone()
}

/// Whether libcublas can be loaded (under one of the names cudarc tries, or from a known CUDA
/// folder together with its libcublasLt), or why not. cudarc panics on a missing libcublas, so
/// every use of cuBLAS asks this first.
pub(crate) fn cublas_probe() -> Result<(), String> {
    static CUBLAS: OnceLock<Result<(), String>> = OnceLock::new();
    CUBLAS
        .get_or_init(|| {
            let names = cudarc::get_lib_name_candidates("cublas");
            let found =
                open_first(&names).or_else(|| open_in_known_dirs(&names, &["libcublasLt.so."]));
            match found {
                Some(_) => Ok(()),
                None => Err(format!(
                    "libcublas not found (searched {}; put the folder holding libcublas.so.13 on \
                     LD_LIBRARY_PATH, e.g. from `pip install nvidia-cublas`)",
                    short_list(&names)
                )),
            }
        })
        .clone()
}

/// Whether libcurand can be loaded (under one of the names cudarc tries), or why not.
///
/// cuRAND is needed only by `gpukit::random` on a CUDA device, so it is not part of [`probe`]:
/// a machine without it still runs every other CUDA operation, and random arrays on the GPU
/// return this reason as an error instead of letting cudarc panic.
pub(crate) fn curand_probe() -> Result<(), String> {
    static CURAND: OnceLock<Result<(), String>> = OnceLock::new();
    CURAND
        .get_or_init(|| {
            let names = cudarc::get_lib_name_candidates("curand");
            match open_first(&names).or_else(|| open_in_known_dirs(&names, &[])) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "libcurand not found (searched {}; install the CUDA toolkit's cuRAND or the \
                     `nvidia-curand` wheel and put the folder holding libcurand.so on LD_LIBRARY_PATH)",
                    short_list(&names)
                )),
            }
        })
        .clone()
}

/// Whether libcufft can be loaded (under one of the names cudarc tries), or why not.
///
/// cuFFT is needed only by `gpukit::fft` on a CUDA device; cudarc panics when it cannot load
/// the library, so every use of cuFFT asks this first and returns the reason as an error.
pub(crate) fn cufft_probe() -> Result<(), String> {
    static CUFFT: OnceLock<Result<(), String>> = OnceLock::new();
    CUFFT
        .get_or_init(|| {
            let names = cudarc::get_lib_name_candidates("cufft");
            match open_first(&names).or_else(|| open_in_known_dirs(&names, &[])) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "libcufft not found (searched {}; install the CUDA toolkit's cuFFT or the \
                     `nvidia-cufft` wheel and put the folder holding libcufft.so on LD_LIBRARY_PATH)",
                    short_list(&names)
                )),
            }
        })
        .clone()
}

/// Whether libcusolver can be loaded (under one of the names cudarc tries, or from a known CUDA
/// folder together with the libraries it links: nvJitLink, cuBLASLt, cuBLAS, cuSPARSE), or why
/// not. cuSOLVER is needed only by the decompositions of `gpukit::linalg` on a CUDA device, so it
/// is not part of [`probe`]; cudarc panics on a missing libcusolver, so every use asks this first.
pub(crate) fn cusolver_probe() -> Result<(), String> {
    static CUSOLVER: OnceLock<Result<(), String>> = OnceLock::new();
    CUSOLVER
        .get_or_init(|| {
            let names = cudarc::get_lib_name_candidates("cusolver");
            let deps = [
                "libnvJitLink.so.",
                "libcublasLt.so.",
                "libcublas.so.",
                "libcusparse.so.",
            ];
            match open_first(&names).or_else(|| open_in_known_dirs(&names, &deps)) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "libcusolver not found (searched {}; install the CUDA toolkit's cuSOLVER or \
                     the `nvidia-cusolver` wheel and put the folder holding libcusolver.so on \
                     LD_LIBRARY_PATH)",
                    short_list(&names)
                )),
            }
        })
        .clone()
}

/// Opens the first library of `names` that loads and keeps it loaded for the process.
fn open_first(names: &[String]) -> Option<&'static Library> {
    for name in names {
        // SAFETY: loading the CUDA driver or NVRTC runs only their (trusted) initialisers.
        if let Ok(lib) = unsafe { Library::new(name) } {
            return Some(Box::leak(Box::new(lib)));
        }
    }
    None
}

/// Folders where CUDA libraries live when they are not on the loader's search path.
fn known_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(std::path::PathBuf::from(root).join("lib64"));
        }
    }
    for d in [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/local/cuda/targets/sbsa-linux/lib",
        "/usr/lib/wsl/lib",
    ] {
        dirs.push(d.into());
    }
    dirs
}

/// Opens a versioned library (`libnvrtc.so.13`, ...) from a known folder by its full path and
/// keeps it loaded, after the libraries of that folder whose names start with one of
/// `companions`, in that order (NVRTC loads `libnvrtc-builtins.so.13.0` by name; cuSOLVER links
/// cuBLAS, cuSPARSE and nvJitLink). The loader then resolves later loads by name
/// (cudarc's, NVRTC's) to these libraries, because a loaded library answers to its soname.
fn open_in_known_dirs(names: &[String], companions: &[&str]) -> Option<&'static Library> {
    let versioned: Vec<&String> = names.iter().filter(|n| n.contains(".so.")).collect();
    for dir in known_dirs() {
        for name in &versioned {
            let path = dir.join(name);
            if !path.exists() {
                continue;
            }
            for prefix in companions {
                for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let file = entry.file_name();
                    if file.to_string_lossy().starts_with(*prefix) {
                        // SAFETY: as in `open_first`.
                        if let Ok(lib) = unsafe { Library::new(entry.path()) } {
                            Box::leak(Box::new(lib));
                        }
                    }
                }
            }
            // SAFETY: as in `open_first`.
            if let Ok(lib) = unsafe { Library::new(&path) } {
                return Some(Box::leak(Box::new(lib)));
            }
        }
    }
    None
}

/// `libnvrtc.so, libnvrtc.so.13, ...`: the Linux names people recognise first, then a count.
fn short_list(names: &[String]) -> String {
    let plain = |n: &&String| n.ends_with(".so") && !n.contains("64");
    let versioned = |n: &&String| n.contains(".so.");
    let mut shown: Vec<&str> = names
        .iter()
        .filter(plain)
        .chain(names.iter().filter(versioned))
        .map(String::as_str)
        .take(4)
        .collect();
    if shown.is_empty() {
        shown = names.iter().map(String::as_str).take(4).collect();
    }
    let rest = names.len().saturating_sub(shown.len());
    if rest > 0 {
        format!("{} and {rest} other names", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

type CuInit = unsafe extern "C" fn(c_uint) -> c_int;
type CuDeviceGetCount = unsafe extern "C" fn(*mut c_int) -> c_int;

/// CUDA_ERROR_NO_DEVICE from cuda.h.
const CUDA_ERROR_NO_DEVICE: c_int = 100;

/// Loads libcuda (under the names cudarc tries), calls `cuInit(0)` and `cuDeviceGetCount`.
fn driver_device_count() -> Result<usize, String> {
    let mut names = vec!["libcuda.so.1".to_string()];
    for lib in ["cuda", "nvcuda"] {
        names.extend(cudarc::get_lib_name_candidates(lib));
    }
    let lib = open_first(&names)
        .ok_or_else(|| "no NVIDIA driver (libcuda.so.1 not found)".to_string())?;
    // SAFETY: the symbols have the signatures documented in cuda.h.
    unsafe {
        let init: libloading::Symbol<CuInit> = lib
            .get(b"cuInit\0")
            .map_err(|e| format!("NVIDIA driver library is unusable (cuInit missing: {e})"))?;
        let count_fn: libloading::Symbol<CuDeviceGetCount> =
            lib.get(b"cuDeviceGetCount\0").map_err(|e| {
                format!("NVIDIA driver library is unusable (cuDeviceGetCount missing: {e})")
            })?;
        match init(0) {
            0 => {}
            CUDA_ERROR_NO_DEVICE => return Err("no CUDA device".into()),
            code => {
                return Err(format!(
                    "the NVIDIA driver failed to initialise (cuInit: {})",
                    describe(code)
                ))
            }
        }
        let mut count: c_int = 0;
        match count_fn(&mut count) {
            0 if count > 0 => Ok(count as usize),
            0 => Err("no CUDA device".into()),
            code => Err(format!("cuDeviceGetCount failed: {}", describe(code))),
        }
    }
}

/// The names of the driver errors a probe can meet, with the error number.
fn describe(code: c_int) -> String {
    let what = match code {
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY: libcuda is the toolkit's stub, not the driver",
        35 => "CUDA_ERROR_INSUFFICIENT_DRIVER: the driver is too old",
        46 => "CUDA_ERROR_DEVICES_UNAVAILABLE: devices busy or unavailable",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        304 => "CUDA_ERROR_OPERATING_SYSTEM",
        999 => "CUDA_ERROR_UNKNOWN",
        _ => "error",
    };
    format!("{what} ({code})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_is_cached_and_consistent() {
        let a = probe();
        let b = probe();
        assert_eq!(a, b);
        if let Err(why) = a {
            assert!(
                !why.is_empty() && !why.contains('\n'),
                "one-line reason: {why}"
            );
        }
    }

    #[test]
    fn driver_errors_are_named() {
        assert!(describe(35).contains("too old"));
        assert_eq!(describe(12345), "error (12345)");
    }

    #[test]
    fn cublas_reason_names_the_library() {
        assert_eq!(cublas_probe(), cublas_probe());
        if let Err(why) = cublas_probe() {
            assert!(why.starts_with("libcublas not found"), "{why}");
            assert!(!why.contains('\n'), "{why}");
        }
    }

    #[test]
    fn curand_reason_names_the_library() {
        assert_eq!(curand_probe(), curand_probe(), "cached");
        if let Err(why) = curand_probe() {
            assert!(why.starts_with("libcurand not found"), "{why}");
            assert!(!why.contains('\n'), "one line: {why}");
        }
    }

    #[test]
    fn cufft_reason_names_the_library() {
        assert_eq!(cufft_probe(), cufft_probe(), "cached");
        if let Err(why) = cufft_probe() {
            assert!(why.starts_with("libcufft not found"), "{why}");
            assert!(!why.contains('\n'), "one line: {why}");
        }
    }

    #[test]
    fn cusolver_reason_names_the_library() {
        assert_eq!(cusolver_probe(), cusolver_probe(), "cached");
        if let Err(why) = cusolver_probe() {
            assert!(why.starts_with("libcusolver not found"), "{why}");
            assert!(!why.contains('\n'), "one line: {why}");
        }
    }

    #[test]
    fn nvrtc_reason_names_the_library() {
        if let Err(why) = nvrtc_probe() {
            assert!(why.starts_with("libnvrtc not found"), "{why}");
        }
    }
}
