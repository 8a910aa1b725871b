//! # gpukit
//!
//! Concise GPU programming for Rust notebooks, in the spirit of CuPy and Numba:
//! device arrays ([`Array`]), kernels written in Rust ([`kernel`](macro@kernel)), raw CUDA C
//! ([`Module::from_cuda`]), and a CPU backend that runs the same code on machines without a GPU.
//! Notebooks also get charts ([`plot`]: `gpukit::plot::line(&x, &y)?`), images ([`image`]),
//! the GPU's state ([`nvml`]) and a live chart of it while code runs ([`monitor`]).
//!
//! ```
//! use gpukit::prelude::*;
//!
//! #[kernel]
//! fn double_it(input: &[f64], output: &mut [f64]) {
//!     let i = grid(1);
//!     if i < input.len() {
//!         output[i] = input[i] * 2.0;
//!     }
//! }
//!
//! # fn main() -> gpukit::Result<()> {
//! let data = Array::arange(0.0, 10.0)?;
//! let mut out = Array::<f64>::zeros(10)?;
//! launch!(double_it[1, 10](&data, &mut out))?;
//! println!("{out}");
//! # assert_eq!(out.sum()?, 90.0);
//! # Ok(())
//! # }
//! ```
//!
//! ## Compiled kernels
//!
//! Kernels are compiled by NVRTC at first launch into machine code for the GPU they run on (a
//! cubin for its exact architecture, e.g. `sm_90`), cached on disk so that a later process
//! only reads and loads it; [`Module::code`] (and a `#[kernel]`'s `code()`) says what was loaded
//! and from where. Three environment variables change this:
//!
//! - `GPUKIT_CACHE_DIR`: the kernel cache's directory (default `~/.cache/gpukit/kernels`).
//! - `GPUKIT_KERNEL_CODE=ptx`: load PTX, which the driver compiles at load, instead of machine
//!   code (gpukit falls back to PTX by itself where the driver refuses the machine code).
//! - `GPUKIT_LOG=debug`: print the cache's hits and misses, NVRTC's compile times and each
//!   module load on stderr.

pub mod array;
pub mod backend;
pub mod device;
pub mod element;
pub mod error;
pub mod image;
pub mod kernel;
mod log;
pub mod monitor;
pub mod nvml;
pub mod plot;
mod process;
#[doc(hidden)]
pub mod testing;

pub use array::fft;
pub use array::linalg;
pub use array::random;
pub use array::Array;
pub use array::{
    concatenate, keepdims, stack, ArrayView, ArrayViewMut, AsView, AxisArg, AxisIndex, IntoAxis,
    IntoRhs, IntoShape, IntoViewOperand, NewShape, PinnedBuffer, Rhs, ViewOperand,
};
/// How a kernel was loaded: machine code or PTX, and from where (`Module::code()`).
pub use backend::cuda::{CodeFormat, CodeOrigin, LoadedCode};
/// The candle tensor crate that [`Array::into_candle`] and [`Array::from_candle`] convert to and
/// from (feature `candle`).
#[cfg(feature = "candle")]
pub use candle_core;
/// The cudarc crate gpukit is built on (the same version and features), for calling CUDA
/// libraries on gpukit memory: [`Array::cuda_view`], [`Array::from_cudarc`].
pub use cudarc;
pub use device::memory::{free_cached_memory, memory_stats, pool_stats, MemoryStats, PoolStats};
pub use device::{
    cuda_device_count, cuda_devices_in_use, cuda_unavailable_reason, default_device,
    set_default_device, synchronize, with_device, CpuProperties, CudaProperties, Device,
    DeviceGuard, DeviceProperties, IntoDevice,
};
/// The dlpark crate (DLPack) that [`Array::into_dlpack`] and [`Array::from_dlpack`] speak.
#[cfg(feature = "dlpack")]
pub use dlpark;
pub use element::{Complex, ComplexPart, DType, Element, Float, Numeric, Scalar};
pub use error::{Error, OutOfBounds, Result};
pub use gpukit_macros::{device, kernel, vectorize};
pub use kernel::exports::*;
/// The ndarray crate gpukit converts from and to, so notebooks can name host arrays without `:dep`.
pub use ndarray;
pub use ndarray::{s, NewAxis};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// Everything a notebook needs, in one `use gpukit::prelude::*;`.
///
/// Charts are not glob-imported (their names, `line`, `bar`, ..., are too common): call them
/// through the module, `gpukit::plot::line(&x, &y)?`, or `use gpukit::plot;` and `plot::line`.
pub mod prelude {
    pub use crate::array::fft;
    pub use crate::array::{concatenate, stack, ArrayView, ArrayViewMut};
    pub use crate::array::{keepdims, random, Array, PinnedBuffer};
    pub use crate::device::{default_device, set_default_device, synchronize, with_device, Device};
    pub use crate::element::{Complex, DType, Element, Float, Numeric};
    pub use crate::error::{Error, Result};
    pub use crate::kernel::exports::*;
    pub use gpukit_macros::{device, kernel, vectorize};
    pub use ndarray;
    pub use ndarray::{s, NewAxis};
}
