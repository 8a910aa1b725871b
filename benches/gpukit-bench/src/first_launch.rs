//! First launch of a kernel this process has never launched: the time from asking for the
//! module to the first launch's synchronised return, with a cold kernel cache (NVRTC compiles
//! the source now) and a warm one (an earlier compilation left the machine code on disk, so only
//! the disk read, the module load and the launch remain), beside NVRTC's own floor (compiling an
//! empty kernel, nothing loaded or launched).
//!
//! Every timed call uses a source no earlier call used (a unique comment), so no memory cache
//! can answer. For the warm row the source is compiled and launched once untimed (that writes
//! its cache entry), then [`Module::clear_memory_cache`] empties the process's memory caches, as
//! a new process would find them. The rows use a private cache directory (`GPUKIT_CACHE_DIR`)
//! removed afterwards, so the user's cache is neither read nor filled. The CuPy twin does the
//! same with `RawKernel`, `CUPY_CACHE_DIR` and `cupy.clear_memo()`.

use crate::gpu::{Opts, Row};
use crate::verify::{Outcome, Verify};
use gpukit::prelude::*;
use gpukit::{CodeFormat, CodeOrigin, DeviceProperties};

/// Cold kernel cache: NVRTC, cache write, module load, launch, synchronise.
pub const COLD: &str = "first launch of a new kernel, cold kernel cache (compile + load + launch)";
/// Warm kernel cache: disk read, module load, launch, synchronise.
pub const WARM: &str =
    "first launch of a new kernel, warm kernel cache (disk read + load + launch)";
/// NVRTC alone on an empty kernel (gpukit's options, the device's architecture).
pub const FLOOR: &str = "NVRTC floor: compile an empty kernel (no load, no launch)";

/// The value the kernel writes (the rows' check value on every side).
const VALUE: i32 = 42;

/// A source no other call used: `first_launch(out, v)` writes `out[0] = v`.
fn fresh_source(tag: &str, body: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "// gpukit-bench {tag} {} {nanos} {}\n{body}\n",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

const KERNEL: &str = "extern \"C\" __global__ void first_launch(int* out, int v) { out[0] = v; }";
const EMPTY: &str = "extern \"C\" __global__ void empty_kernel() {}";

/// Loads `source`, launches `first_launch` once into `out` and waits; returns how the module
/// was loaded.
fn first(source: &str, dev: &Device, out: &mut Array<i32>) -> Result<gpukit::LoadedCode> {
    let module = Module::from_cuda_on(source, dev)?;
    let k = module.kernel("first_launch")?;
    launch!(k[1, 1](&mut *out, VALUE))?;
    synchronize()?;
    Ok(module.code().clone())
}

/// The outcome of one timed call: the value written, and the code loaded as `expected` says
/// (a wrong origin or format counts as a wrong output: the row would not measure what it says).
fn outcome(out: &Array<i32>, code: &gpukit::LoadedCode, expected: CodeOrigin) -> Result<Outcome> {
    let value = out.to_vec()?[0] as f64;
    let right_code = code.origin == expected && code.format == CodeFormat::Cubin;
    Ok(Outcome::scalar(
        if right_code { value } else { f64::NAN },
        VALUE as f64,
        0.0,
    ))
}

/// Restores an environment variable when dropped.
struct EnvGuard(&'static str, Option<std::ffi::OsString>);

impl Drop for EnvGuard {
    fn drop(&mut self) {
        match &self.1 {
            Some(v) => std::env::set_var(self.0, v),
            None => std::env::remove_var(self.0),
        }
    }
}

/// The three rows, on a CUDA device (none on the CPU backend: nothing is compiled there).
pub fn rows(opts: &Opts, dev: Device, emit: &mut dyn FnMut(Row)) -> Result<()> {
    if !dev.is_cuda() || ![COLD, WARM, FLOOR].iter().any(|n| opts.wants(n)) {
        return Ok(());
    }
    let reps = opts.reps.max(3);
    let dir = std::env::temp_dir().join(format!("gpukit-bench-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _restore = EnvGuard("GPUKIT_CACHE_DIR", std::env::var_os("GPUKIT_CACHE_DIR"));
    std::env::set_var("GPUKIT_CACHE_DIR", &dir);
    let result = measure(opts, reps, &dev, emit);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure(opts: &Opts, reps: usize, dev: &Device, emit: &mut dyn FnMut(Row)) -> Result<()> {
    let mut out = Array::<i32>::full_on(1, -1, dev)?;
    // NVRTC and the driver's module loader are warm (libraries loaded, first-use costs paid).
    first(&fresh_source("warm-up", KERNEL), dev, &mut out)?;
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;

    for (name, warm) in [(COLD, false), (WARM, true)] {
        if !opts.wants(name) {
            continue;
        }
        let mut times = Vec::with_capacity(reps);
        let mut verify = Verify::new(
            "the value the kernel wrote (output poisoned before), and the code loaded as the row says",
        );
        for _ in 0..reps {
            let source = fresh_source(if warm { "warm" } else { "cold" }, KERNEL);
            if warm {
                first(&source, dev, &mut out)?; // compiles and writes the cache entry
                Module::clear_memory_cache();
            }
            out.fill(-1)?;
            synchronize()?;
            let t0 = std::time::Instant::now();
            let code = first(&source, dev, &mut out)?;
            times.push(ms(t0));
            let expected = if warm {
                CodeOrigin::DiskCache
            } else {
                CodeOrigin::Compiled
            };
            verify.push(outcome(&out, &code, expected)?);
        }
        emit(Row {
            name,
            unit: "latency",
            span_ms: vec![],
            host_ms: times.clone(),
            device_ms: vec![],
            wall_ms: times,
            verify: Some(verify),
            check: vec![VALUE as f64],
            bytes: 0.0,
            access: "",
            span: "host clock from asking for the module to the first launch's synchronised return",
            note: if warm {
                "Module::from_cuda + kernel + launch! + synchronize, machine code read from gpukit's disk cache (memory caches cleared)"
            } else {
                "Module::from_cuda + kernel + launch! + synchronize, a source never compiled before (NVRTC to a cubin, stored, loaded)"
            },
        });
    }

    if opts.wants(FLOOR) {
        let arch = match dev.properties()? {
            DeviceProperties::Cuda(p) => {
                format!("sm_{}{}", p.compute_capability.0, p.compute_capability.1)
            }
            DeviceProperties::Cpu(_) => return Ok(()),
        };
        let mut times = Vec::with_capacity(reps);
        let mut verify = Verify::new("NVRTC returned code defining the kernel");
        for _ in 0..reps {
            let source = fresh_source("floor", EMPTY);
            let options = cudarc::nvrtc::CompileOptions {
                options: vec!["-std=c++17".into(), format!("--gpu-architecture={arch}")],
                ..Default::default()
            };
            let t0 = std::time::Instant::now();
            let ptx = cudarc::nvrtc::compile_ptx_with_opts(&source, options)
                .map_err(|e| Error::Other(format!("NVRTC floor: {e:?}")))?;
            times.push(ms(t0));
            let defined = ptx.to_src().contains(".entry empty_kernel");
            verify.push(Outcome::scalar(
                if defined { VALUE as f64 } else { f64::NAN },
                VALUE as f64,
                0.0,
            ));
        }
        emit(Row {
            name: FLOOR,
            unit: "latency",
            span_ms: vec![],
            host_ms: times.clone(),
            device_ms: vec![],
            wall_ms: times,
            verify: Some(verify),
            check: vec![VALUE as f64],
            bytes: 0.0,
            access: "",
            span: "host clock around nvrtcCompileProgram (real architecture: PTX and machine code)",
            note: "NVRTC's own time for the smallest program, the floor under the cold-cache row; no CuPy twin",
        });
    }
    Ok(())
}
