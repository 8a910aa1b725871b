//! Kernels compiled for this GPU: modules load as machine code (a cubin for the device's exact
//! architecture) and run; `GPUKIT_KERNEL_CODE=ptx` loads PTX instead and runs too; a module
//! compiled once is found in the disk cache after the memory cache is cleared (as by a new
//! process), and a corrupted entry is compiled again.
//!
//! GPU tests skip (with a message) where no CUDA GPU is usable, or fail there with
//! `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). They run one at a time (the lock of
//! `serial_gpu_or_skip`), since some set `GPUKIT_KERNEL_CODE` or `GPUKIT_CACHE_DIR` for the
//! process while they run.

use gpukit::prelude::*;
use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{CodeFormat, CodeOrigin};

/// A kernel source no earlier run compiled: `out[i] = i * MUL` under a unique comment.
fn fresh_source(tag: &str, mul: i32) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "// {tag} {} {nanos} {}\n\
         extern \"C\" __global__ void times(int* out, int n) {{\n\
         \x20   int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         \x20   if (i < n) out[i] = i * {mul};\n\
         }}\n",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Launches `times` of `module` over 1000 elements and checks every one.
fn runs(module: &Module, gpu: &Device, mul: i32) {
    let k = module.kernel("times").unwrap();
    let n = 1000i32;
    let mut out = Array::<i32>::full_on(n as usize, -1, gpu).unwrap();
    launch!(k[4, 256](&mut out, n)).unwrap();
    let v = out.to_vec().unwrap();
    assert!(
        v.iter().enumerate().all(|(i, &x)| x == i as i32 * mul),
        "{v:?}"
    );
}

/// `sm_XY` of the device, from its compute capability.
fn arch(gpu: &Device) -> String {
    match gpu.properties().unwrap() {
        gpukit::DeviceProperties::Cuda(p) => {
            format!("sm_{}{}", p.compute_capability.0, p.compute_capability.1)
        }
        other => panic!("not a CUDA device: {other:?}"),
    }
}

/// Sets an environment variable for the life of the guard (the test holds the GPU lock, so no
/// other test of this file reads it meanwhile).
struct EnvVar(&'static str, Option<std::ffi::OsString>);

impl EnvVar {
    fn set(name: &'static str, value: impl AsRef<std::ffi::OsStr>) -> EnvVar {
        let old = std::env::var_os(name);
        std::env::set_var(name, value);
        EnvVar(name, old)
    }
}

impl Drop for EnvVar {
    fn drop(&mut self) {
        match &self.1 {
            Some(v) => std::env::set_var(self.0, v),
            None => std::env::remove_var(self.0),
        }
    }
}

#[test]
fn modules_load_as_machine_code_for_this_gpu_and_run() {
    let Some((gpu, _serial)) = gpu() else { return };
    let _code = EnvVar::set("GPUKIT_KERNEL_CODE", "cubin");
    let module = Module::from_cuda_on(&fresh_source("cubin", 3), &gpu).unwrap();
    let code = module.code().clone();
    println!("{code}");
    assert_eq!(code.format, CodeFormat::Cubin, "{code}");
    assert!(code.is_cubin() && code.ptx_reason.is_none(), "{code}");
    assert_eq!(code.arch, arch(&gpu));
    assert_eq!(
        code.origin,
        CodeOrigin::Compiled,
        "a fresh source is compiled"
    );
    // The PTX is still there for %ptx.
    assert!(module.ptx().contains(".entry times"), "{}", module.ptx());
    runs(&module, &gpu, 3);
}

#[test]
fn ptx_is_loaded_when_asked_for_and_runs() {
    let Some((gpu, _serial)) = gpu() else { return };
    let _code = EnvVar::set("GPUKIT_KERNEL_CODE", "ptx");
    let module = Module::from_cuda_on(&fresh_source("ptx", 5), &gpu).unwrap();
    let code = module.code().clone();
    println!("{code}");
    assert_eq!(code.format, CodeFormat::Ptx, "{code}");
    assert!(
        code.ptx_reason
            .as_deref()
            .is_some_and(|r| r.contains("GPUKIT_KERNEL_CODE=ptx")),
        "{code}"
    );
    runs(&module, &gpu, 5);
    // A variable that means nothing is an error naming it, not a silent default.
    let _bad = EnvVar::set("GPUKIT_KERNEL_CODE", "elf");
    let e = Module::from_cuda_on(&fresh_source("bad", 1), &gpu).unwrap_err();
    assert!(e.to_string().contains("GPUKIT_KERNEL_CODE"), "{e}");
}

#[test]
fn a_warm_disk_cache_is_hit_and_a_corrupt_entry_recompiled() {
    let Some((gpu, _serial)) = gpu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let _cache = EnvVar::set("GPUKIT_CACHE_DIR", dir.path());
    let _code = EnvVar::set("GPUKIT_KERNEL_CODE", "cubin");
    let source = fresh_source("warm", 7);

    let cold = Module::from_cuda_on(&source, &gpu).unwrap();
    assert_eq!(cold.code().origin, CodeOrigin::Compiled, "{}", cold.code());
    let entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "one entry written: {entries:?}");
    assert!(entries[0].extension().is_some_and(|e| e == "kernel"));

    // As a new process would: nothing in memory, the entry on disk.
    Module::clear_memory_cache();
    let started = std::time::Instant::now();
    let warm = Module::from_cuda_on(&source, &gpu).unwrap();
    let k = warm.kernel("times").unwrap();
    let mut one = Array::<i32>::full_on(1, -1, &gpu).unwrap();
    launch!(k[1, 1](&mut one, 1i32)).unwrap();
    synchronize().unwrap();
    let first_launch = started.elapsed();
    println!(
        "warm-cache first launch: {:.3} ms ({})",
        first_launch.as_secs_f64() * 1e3,
        warm.code()
    );
    assert_eq!(warm.code().origin, CodeOrigin::DiskCache, "{}", warm.code());
    assert!(warm.code().is_cubin(), "{}", warm.code());
    assert_eq!(warm.ptx(), cold.ptx());
    runs(&warm, &gpu, 7);
    // The module stays loaded: asking again gives the same module, no lookup.
    let again = Module::from_cuda_on(&source, &gpu).unwrap();
    assert_eq!(again.code(), warm.code());

    // A corrupted entry is compiled again (never loaded), and rewritten.
    let mut bytes = std::fs::read(&entries[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entries[0], &bytes).unwrap();
    Module::clear_memory_cache();
    let rebuilt = Module::from_cuda_on(&source, &gpu).unwrap();
    assert_eq!(
        rebuilt.code().origin,
        CodeOrigin::Compiled,
        "{}",
        rebuilt.code()
    );
    runs(&rebuilt, &gpu, 7);
    Module::clear_memory_cache();
    let healed = Module::from_cuda_on(&source, &gpu).unwrap();
    assert_eq!(
        healed.code().origin,
        CodeOrigin::DiskCache,
        "{}",
        healed.code()
    );
}

#[kernel]
fn add_three(out: &mut [i32]) {
    let i = grid(1);
    if i < out.len() {
        out[i] += 3;
    }
}

#[test]
fn rust_kernels_report_their_code() {
    let Some((gpu, _serial)) = gpu() else { return };
    let _code = EnvVar::set("GPUKIT_KERNEL_CODE", "cubin");
    set_default_device(gpu);
    let mut a = Array::<i32>::zeros_on(300, &gpu).unwrap();
    launch!(add_three[2, 256](&mut a)).unwrap();
    assert!(a.to_vec().unwrap().iter().all(|&x| x == 3));
    let code = add_three.code().unwrap();
    println!("{code}");
    assert!(code.is_cubin(), "{code}");
    assert_eq!(code.arch, arch(&gpu));
}

/// Without a GPU, asking how a kernel is loaded is the usual "needs a GPU" error (this part runs
/// on every machine); with one, the answer is machine code.
#[test]
fn code_of_a_kernel_needs_a_gpu_and_says_so() {
    if !gpukit::default_device().is_cuda() {
        let e = gpukit::__private::code(&add_three::INFO);
        assert!(matches!(e, Err(Error::NeedsGpu { .. })), "{e:?}");
        return;
    }
    let Some((_gpu, _serial)) = gpu() else { return };
    let _code = EnvVar::set("GPUKIT_KERNEL_CODE", "cubin");
    let code = gpukit::__private::code(&add_three::INFO).unwrap();
    assert!(code.is_cubin(), "{code}");
}

/// Set for the child processes of [`the_debug_log_reports_misses_and_hits`].
const LOG_CHILD: &str = "GPUKIT_TEST_KERNEL_CODE_LOG_CHILD";

/// In a child process of [`the_debug_log_reports_misses_and_hits`] only: compiles `add_three`
/// for the default device, as `%ptx` does (its log goes to stderr). Elsewhere it does nothing.
#[test]
fn debug_log_child() {
    if std::env::var_os(LOG_CHILD).is_none() {
        return;
    }
    let ptx = add_three.ptx().unwrap();
    assert!(ptx.contains(".entry"), "{ptx}");
}

/// `GPUKIT_LOG=debug` says what the kernel cache did: a new process with an empty cache misses
/// and compiles, the next one finds the entry on disk. Needs libnvrtc only (the default device
/// decides whether a cubin or PTX entry is used; both are logged the same way).
#[test]
fn the_debug_log_reports_misses_and_hits() {
    if !gpukit::testing::nvrtc_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "debug_log_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(LOG_CHILD, "1")
            .env("GPUKIT_LOG", "debug")
            .env("GPUKIT_CACHE_DIR", dir.path())
            .env_remove("GPUKIT_KERNEL_CODE")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "child failed: {stderr}");
        stderr
    };
    let first = run();
    assert!(
        first.contains("gpukit[debug]: kernel cache: disk miss for `add_three`"),
        "{first}"
    );
    assert!(
        first.contains("gpukit[debug]: NVRTC compiled `add_three`"),
        "{first}"
    );
    assert!(
        first.contains("gpukit[debug]: kernel cache: stored `add_three`"),
        "{first}"
    );
    let second = run();
    assert!(
        second.contains("gpukit[debug]: kernel cache: disk hit for `add_three`"),
        "{second}"
    );
    assert!(!second.contains("NVRTC compiled"), "{second}");
}
