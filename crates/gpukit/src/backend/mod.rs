//! The two backends: the host CPU and CUDA GPUs (through cudarc).

pub mod cpu;
pub mod cuda;
