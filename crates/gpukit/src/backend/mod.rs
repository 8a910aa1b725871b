//! The two backends: the host CPU and CUDA GPUs (through cudarc). This layer moves bytes and
//! runs compiled functions; it knows nothing of arrays, kernels written in Rust, or the
//! [`Device`](crate::Device) type built on top of it.

pub(crate) mod cpu;
pub(crate) mod cpu_capture;
pub(crate) mod cuda;
