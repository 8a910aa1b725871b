//! Loaded modules: compiled code (from [`super::kernel_cache`]) loaded on one device, as
//! machine code for its architecture or, where the driver refuses that or
//! `GPUKIT_KERNEL_CODE=ptx` asks for it, as PTX ([`super::code`]).

use super::code::{self, CodeFormat, LoadedCode, KERNEL_CODE_VAR};
use super::fault::{self, driver_err};
use super::kernel_cache;
use super::{backends_in_use, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::{CudaFunction, CudaModule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A compiled and loaded CUDA module: its PTX, how it was loaded, and its kernels by name.
pub(crate) struct CompiledModule {
    /// Program name given to NVRTC.
    pub(crate) name: String,
    /// The PTX NVRTC produced (for `%ptx`; loaded only where machine code was not).
    pub(crate) ptx: Arc<str>,
    /// Kernel (`.entry`) names in the PTX, in order.
    pub(crate) entries: Vec<String>,
    /// What the driver loaded (machine code or PTX) and where it came from.
    pub(crate) code: LoadedCode,
    /// The format `GPUKIT_KERNEL_CODE` asked for when it was loaded.
    requested: CodeFormat,
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

impl CompiledModule {
    /// The kernel `name`, or [`Error::UnknownKernel`] listing the kernels this module has.
    pub(crate) fn function(&self, name: &str) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        if !self.entries.iter().any(|e| e == name) {
            return Err(Error::UnknownKernel {
                name: name.to_string(),
                available: self.entries.join(", "),
            });
        }
        let f = self.module.load_function(name)?;
        functions.insert(name.to_string(), f.clone());
        Ok(f)
    }
}

impl std::fmt::Debug for CompiledModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledModule")
            .field("name", &self.name)
            .field("entries", &self.entries)
            .field("code", &self.code)
            .finish()
    }
}

impl CudaBackend {
    /// Compiles `source` with NVRTC for this device and loads it: machine code (a cubin) for
    /// its architecture, or PTX where the driver refuses the cubin or `GPUKIT_KERNEL_CODE=ptx`
    /// asks for it ([`code`]). Compiled code is cached in memory and on disk
    /// ([`kernel_cache`]); loaded modules are cached per source on this device.
    pub(crate) fn compile(&self, name: &str, source: &str) -> Result<Arc<CompiledModule>> {
        self.ensure_usable()?;
        let format = code::requested_format()?;
        if let Some(m) = self
            .modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(source)
            .filter(|m| m.requested == format)
        {
            crate::log::debug(|| {
                format!(
                    "`{name}`: module already loaded on cuda:{} ({})",
                    self.ordinal, m.code
                )
            });
            return Ok(m.clone());
        }
        let (compiled, origin) = kernel_cache::get(name, source, &self.arch, format)?;
        let driver_version = code::driver_version();
        if let Some(driver) = driver_version.filter(|d| compiled.nvrtc_version > *d) {
            crate::log::debug(|| {
                format!(
                    "NVRTC {}.{} is newer than the driver (CUDA {}.{}): the driver may not \
                     compile its PTX, so its machine code is loaded first",
                    compiled.nvrtc_version.0, compiled.nvrtc_version.1, driver.0, driver.1
                )
            });
        }
        let started = std::time::Instant::now();
        let (module, ptx_reason) = self.load(name, &compiled, format)?;
        let code = LoadedCode {
            format: if ptx_reason.is_none() {
                CodeFormat::Cubin
            } else {
                CodeFormat::Ptx
            },
            arch: self.arch.clone(),
            origin,
            nvrtc_version: compiled.nvrtc_version,
            driver_version,
            ptx_reason,
        };
        crate::log::debug(|| {
            format!(
                "loaded `{name}` on cuda:{} in {:.3} ms: {code}",
                self.ordinal,
                started.elapsed().as_secs_f64() * 1e3
            )
        });
        let compiled = Arc::new(CompiledModule {
            name: name.to_string(),
            entries: compiled.entries.clone(),
            ptx: compiled.ptx.clone(),
            code,
            requested: format,
            module,
            functions: Mutex::new(HashMap::new()),
        });
        self.modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(source.to_string(), compiled.clone());
        Ok(compiled)
    }

    /// Loads compiled code: the cubin when `format` asks for machine code and the driver
    /// accepts it, else the PTX. Returns the module and why PTX was loaded (`None`: the cubin).
    fn load(
        &self,
        name: &str,
        compiled: &kernel_cache::Compiled,
        format: CodeFormat,
    ) -> Result<(Arc<CudaModule>, Option<String>)> {
        let load_ptx = |why: String| {
            self.ctx
                .load_module(cudarc::nvrtc::Ptx::from_src(compiled.ptx.to_string()))
                .map(|m| (m, Some(why.clone())))
                .map_err(|e| {
                    driver_err(
                        &format!("loading `{name}` as PTX for {} (after: {why})", self.arch),
                        e,
                    )
                })
        };
        let cubin = match (format, &compiled.cubin) {
            (CodeFormat::Ptx, _) => {
                return load_ptx(format!("{KERNEL_CODE_VAR}=ptx asked for it"));
            }
            (CodeFormat::Cubin, None) => {
                return load_ptx("the compiled code has no machine code".into());
            }
            (CodeFormat::Cubin, Some(cubin)) => cubin,
        };
        match self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))
        {
            Ok(m) => Ok((m, None)),
            Err(e) if fault::is_sticky(&e) => Err(driver_err(
                &format!("loading the machine code of `{name}`"),
                e,
            )),
            Err(e) => {
                let (major, minor) = compiled.nvrtc_version;
                let driver = code::driver_version()
                    .map_or("unknown".to_string(), |(a, b)| format!("{a}.{b}"));
                let why = format!(
                    "the driver (CUDA {driver}) refused the {} machine code NVRTC {major}.{minor} \
                     made: {e}",
                    self.arch
                );
                crate::log::debug(|| format!("`{name}`: {why}; loading its PTX instead"));
                load_ptx(why)
            }
        }
    }

    /// Forgets the modules loaded on this device (modules still in use stay loaded until they
    /// are dropped); the next compilation of a source loads it again.
    pub(crate) fn forget_modules(&self) {
        self.modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// Forgets every compiled kernel this process keeps in memory: the loaded modules of every
/// device and the compiled code (the disk cache stays). The next `Module::from_cuda` of a source
/// reads its disk entry, or compiles. Functions of `#[kernel]`s already launched stay loaded.
pub(crate) fn clear_memory_caches() {
    kernel_cache::clear_memory();
    for b in backends_in_use() {
        b.forget_modules();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Device 0's backend, or `None` after a `skipped:` line where no CUDA GPU is usable (a
    /// failure there with `GPUKIT_TEST_REQUIRE_GPU=1`). The backend layer's copy of the rule
    /// of `crate::testing`, which sits above it.
    fn gpu_or_skip() -> Option<Arc<CudaBackend>> {
        match super::super::probe().and_then(|_| CudaBackend::get(0).map_err(|e| e.to_string())) {
            Ok(b) => Some(b),
            Err(why) => {
                let required = std::env::var("GPUKIT_TEST_REQUIRE_GPU")
                    .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
                assert!(!required, "GPUKIT_TEST_REQUIRE_GPU=1 but {why}");
                println!("skipped: {why}");
                None
            }
        }
    }

    /// The fallback itself: machine code the driver refuses (built for an older major
    /// architecture than the device's, which SASS never runs on) is replaced by the entry's
    /// PTX (which does run: the driver compiles PTX for newer GPUs), and the reason is kept.
    #[test]
    fn a_refused_cubin_falls_back_to_the_ptx() {
        let Some(backend) = gpu_or_skip() else { return };
        let (major, _) = backend.properties().compute_capability;
        if major < 8 {
            println!("skipped: needs a GPU of compute capability 8.0 or newer, this is {major}.x");
            return;
        }
        let source = "extern \"C\" __global__ void refused(int* x) { x[0] = 7; }";
        let out = super::super::nvrtc::run(
            "refused",
            source,
            &super::super::nvrtc::options("sm_75"),
            true,
        )
        .unwrap();
        let compiled = kernel_cache::Compiled {
            entries: super::super::nvrtc::ptx_entries(&out.ptx),
            ptx: out.ptx.into(),
            cubin: out.cubin.map(Into::into),
            nvrtc_version: super::super::nvrtc_version().unwrap(),
        };
        let (module, why) = backend
            .load("refused", &compiled, CodeFormat::Cubin)
            .unwrap();
        let why = why.expect("the sm_75 machine code was refused, the PTX loaded");
        assert!(
            why.contains("refused the") && why.contains("machine code"),
            "{why}"
        );
        module.load_function("refused").unwrap();
        // Asked for machine code and given it, nothing is refused.
        let own = super::super::nvrtc::run(
            "own",
            source,
            &super::super::nvrtc::options(backend.arch()),
            true,
        )
        .unwrap();
        let compiled = kernel_cache::Compiled {
            entries: vec!["refused".into()],
            ptx: own.ptx.into(),
            cubin: own.cubin.map(Into::into),
            nvrtc_version: compiled.nvrtc_version,
        };
        let (_, why) = backend.load("own", &compiled, CodeFormat::Cubin).unwrap();
        assert_eq!(why, None);
    }
}
