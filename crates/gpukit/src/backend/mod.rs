//! The two backends, the host CPU and CUDA GPUs (through cudarc), and the tracker of gpukit's
//! own allocations ([`memory::memory_stats`]).

pub(crate) mod cpu;
pub(crate) mod cuda;
pub mod memory;
