//! The two backends: the host CPU and CUDA GPUs (through cudarc), and the allocation tracker.

pub mod cpu;
pub mod cuda;
pub mod memory;
