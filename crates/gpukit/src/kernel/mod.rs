//! Launching kernels written in Rust (`#[kernel]`) and raw CUDA C on both backends.
//!
//! This layer sits on `backend` and `device` and knows nothing of `Array`: it takes type-erased
//! arguments ([`args::KernelArg`]), which the array layer builds from its arrays. The
//! `#[vectorize]` runtime, which returns arrays, lives in the array layer.
//!
//! Modules, one concept each: `config` (grid and block sizes), `info` (what the macros
//! generate), `args` (what a launch accepts), `launch` (argument checks and dispatch), `cpu`
//! (the CPU executor), `cuda` (the CUDA launch path), `bounds` (out-of-bounds reports of CUDA
//! kernels), `module` (raw CUDA C), `profile` (per-kernel times), `graph` (capture and replay),
//! `source` (PTX and source of a kernel), `views` (the
//! `View2`/`View3` parameter types) and `macros` (`launch!`).

pub(crate) mod args;
pub(crate) mod bounds;
pub(crate) mod config;
pub(crate) mod cpu;
pub(crate) mod cuda;
pub mod graph;
pub(crate) mod info;
pub(crate) mod launch;
mod macros;
pub(crate) mod module;
pub mod profile;
pub mod resources;
pub(crate) mod source;

pub use source::{source_listing, without_prelude};
pub(crate) mod views;

/// Public items re-exported at the crate root and in the prelude.
pub mod exports {
    pub use super::config::{Dim3, IntoDim3, IntoLaunchConfig, LaunchConfig};
    pub use super::graph::{Graph, GraphUpdate};
    pub use super::module::{CudaKernel, Module};
    pub use super::profile::{self, ProfileRecord};
    pub use super::resources::{KernelResources, Occupancy};
    pub use super::views::{View2, View3};
    pub use crate::{graph, launch};
}
