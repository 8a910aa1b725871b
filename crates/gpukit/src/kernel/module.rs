//! Raw CUDA C: compile a CUDA C++ source with NVRTC and launch its `extern "C" __global__`
//! kernels with the same `launch!` syntax as Rust kernels (the PyCUDA `SourceModule` lesson).
//!
//! ```no_run
//! use gpukit::prelude::*;
//! # fn main() -> gpukit::Result<()> {
//! let module = Module::from_cuda(r#"
//!     extern "C" __global__ void scale(float* x, float a, unsigned long long n) {
//!         unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
//!         if (i < n) x[i] *= a;
//!     }
//! "#)?;
//! let scale = module.kernel("scale")?;
//! let mut x = Array::<f32>::ones(1000)?;
//! launch!(scale[4, 256](&mut x, 2.0f32, 1000usize))?;
//! # Ok(())
//! # }
//! ```

use super::args::{LaunchArgs, RawArg};
use super::config::{self, IntoLaunchConfig};
use super::cuda;
use crate::backend::cuda::{clear_memory_caches, CompiledModule, CudaBackend, LoadedCode};
use crate::device::{default_device, Device};
use crate::error::{Error, Result};
use cudarc::driver::CudaFunction;
use std::fmt;
use std::sync::Arc;

/// A compiled CUDA C++ source loaded on one device.
#[derive(Clone)]
pub struct Module {
    backend: Arc<CudaBackend>,
    compiled: Arc<CompiledModule>,
    /// The CUDA C++ it was compiled from (for `%sass`).
    source: Arc<str>,
}

impl Module {
    /// Compiles `source` for the default device. On the CPU device this is
    /// [`Error::NeedsGpu`]; NVRTC's complaints are [`Error::Compile`] with its log (the
    /// program is named `module`, so lines read `module.cu(3): error: ...`).
    pub fn from_cuda(source: &str) -> Result<Module> {
        Self::from_cuda_on(source, &default_device())
    }

    /// Compiles `source` for `device`.
    pub fn from_cuda_on(source: &str, device: &Device) -> Result<Module> {
        let ordinal = match device {
            Device::Cpu => {
                return Err(Error::NeedsGpu {
                    what: "compiling raw CUDA C (Module::from_cuda)".into(),
                })
            }
            Device::Cuda(n) => *n,
        };
        let backend = CudaBackend::get(ordinal)?;
        let compiled = backend.compile("module", source)?;
        Ok(Module {
            backend,
            compiled,
            source: source.into(),
        })
    }

    /// The kernel `name` (an `extern "C" __global__` function of the source).
    pub fn kernel(&self, name: &str) -> Result<CudaKernel> {
        let func = self.compiled.function(name)?;
        Ok(CudaKernel {
            name: name.to_string(),
            func,
            backend: self.backend.clone(),
            source: self.source.clone(),
        })
    }

    /// Names of the kernels the source defines, in order (C++ names appear mangled; declare
    /// kernels `extern "C"` to launch them by their plain name).
    pub fn kernel_names(&self) -> Vec<String> {
        self.compiled.entries.clone()
    }

    /// The PTX NVRTC produced (also when the driver loaded the machine code instead).
    pub fn ptx(&self) -> &str {
        &self.compiled.ptx
    }

    /// How the module was loaded: machine code for this GPU (a cubin) or PTX the driver
    /// compiled, why PTX if so, and whether the code was compiled now or came from the disk or
    /// memory cache (as it was when this module was first loaded in the process).
    ///
    /// ```no_run
    /// # use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let m = Module::from_cuda(r#"extern "C" __global__ void nop() {}"#)?;
    /// println!("{}", m.code()); // e.g. "sm_90 machine code (cubin), compiled by NVRTC (NVRTC 13.0, ...)"
    /// assert!(m.code().is_cubin());
    /// # Ok(())
    /// # }
    /// ```
    pub fn code(&self) -> &LoadedCode {
        &self.compiled.code
    }

    /// Forgets the compiled kernels this process keeps in memory (loaded modules of every
    /// device, compiled code); the on-disk kernel cache stays. The next `Module::from_cuda` of
    /// a source reads the disk cache or compiles, as a new process would. Modules and kernels
    /// already in hand keep working, and `#[kernel]`s already launched stay loaded. Meant for
    /// measuring the disk cache (the benchmark's warm-cache row).
    pub fn clear_memory_cache() {
        clear_memory_caches();
    }

    /// The device the module is loaded on.
    pub fn device(&self) -> Device {
        self.backend.device()
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Module(on {}, kernels: {})",
            self.device(),
            self.compiled.entries.join(", ")
        )
    }
}

/// One kernel of a [`Module`], launched with `launch!(k[blocks, threads](args...))`.
///
/// Arguments are passed in order: gpukit arrays (and host arrays, copied in and out) as a
/// pointer to their first element, scalars by value with their exact Rust type. The CUDA
/// signature is not known to gpukit, so matching it is up to the caller, as in PyCUDA.
#[derive(Clone)]
pub struct CudaKernel {
    name: String,
    pub(super) func: CudaFunction,
    pub(super) backend: Arc<CudaBackend>,
    /// The module's CUDA C++ (for `%sass`).
    pub(super) source: Arc<str>,
}

impl CudaKernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device it runs on.
    pub fn device(&self) -> Device {
        self.backend.device()
    }

    /// Launches with arguments built by [`RawArg::into_raw_arg`] (what `launch!` does), given
    /// as an array (no allocation) or a `Vec`. Every gpukit array must live on the kernel's
    /// device.
    pub fn launch_with<'a>(
        &self,
        config: impl IntoLaunchConfig,
        mut args: impl LaunchArgs<'a>,
    ) -> Result<()> {
        let config = config::resolve(config, &self.name)?;
        cuda::launch_raw(
            &self.name,
            &self.backend,
            self.func.cu_function(),
            &config,
            args.as_mut_args(),
        )
    }
}

impl fmt::Debug for CudaKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudaKernel({} on {})", self.name, self.device())
    }
}

/// `launch` methods of every arity for [`CudaKernel`], so that `launch!` (which calls
/// `k.launch(config, a, b, ..)`) works for raw kernels as for `#[kernel]`s. `launch!` imports
/// the one trait matching its argument count; generated kernels' own `launch` takes precedence.
#[allow(clippy::too_many_arguments, clippy::extra_unused_lifetimes)]
pub mod arity {
    use super::*;

    macro_rules! arity_trait {
        ($($tr:ident ($($a:ident: $A:ident),*);)*) => {$(
            /// `CudaKernel::launch` with this many arguments (imported by `launch!`).
            pub trait $tr {
                /// Launches with `config` (`(blocks, threads)`) and these arguments.
                fn launch<'a, $($A: RawArg<'a>),*>(&self, config: impl IntoLaunchConfig, $($a: $A),*) -> Result<()>;
            }
            impl $tr for CudaKernel {
                fn launch<'a, $($A: RawArg<'a>),*>(&self, config: impl IntoLaunchConfig, $($a: $A),*) -> Result<()> {
                    self.launch_with(config, [$($a.into_raw_arg()),*])
                }
            }
        )*};
    }

    arity_trait! {
        Launch0 ();
        Launch1 (a0: A0);
        Launch2 (a0: A0, a1: A1);
        Launch3 (a0: A0, a1: A1, a2: A2);
        Launch4 (a0: A0, a1: A1, a2: A2, a3: A3);
        Launch5 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4);
        Launch6 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5);
        Launch7 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6);
        Launch8 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7);
        Launch9 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8);
        Launch10 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9);
        Launch11 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10);
        Launch12 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10, a11: A11);
        Launch13 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10, a11: A11, a12: A12);
        Launch14 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10, a11: A11, a12: A12, a13: A13);
        Launch15 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10, a11: A11, a12: A12, a13: A13, a14: A14);
        Launch16 (a0: A0, a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10, a11: A11, a12: A12, a13: A13, a14: A14, a15: A15);
    }
}
