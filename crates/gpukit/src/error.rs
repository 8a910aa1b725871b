//! The one error type of gpukit. Every fallible call returns [`Result`].

use std::fmt;

/// Result alias used by every fallible gpukit call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gpukit, with enough detail to act on.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// No usable CUDA device (no driver, no device, no libnvrtc, or a bad index).
    #[error("no usable CUDA device: {0}")]
    NoGpu(String),
    /// The operation exists only on a CUDA GPU (raw CUDA C, PTX, CUDA events).
    #[error("{what} needs a CUDA GPU; the current device is the CPU")]
    NeedsGpu {
        /// What was attempted.
        what: String,
    },
    /// The device could not satisfy an allocation.
    #[error("out of memory on {device}: requested {requested} bytes, {free} bytes free")]
    OutOfMemory {
        /// Device name, e.g. `cuda:0`.
        device: String,
        /// Bytes asked for.
        requested: usize,
        /// Bytes free at the time of the request.
        free: usize,
    },
    /// Two arrays (or an array and a kernel parameter) disagree on shape.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// Arrays live on different devices.
    #[error("device mismatch: {0}")]
    DeviceMismatch(String),
    /// Grid or block dimensions are not launchable.
    #[error("bad launch configuration for `{kernel}`: {reason}")]
    LaunchConfig {
        /// Kernel name.
        kernel: String,
        /// What is wrong with the grid/block sizes.
        reason: String,
    },
    /// An index inside a kernel was out of range (bounds checks are on by default).
    #[error("{0}")]
    IndexOutOfBounds(Box<OutOfBounds>),
    /// NVRTC rejected CUDA C++ source; `log` holds its messages with line numbers.
    #[error("CUDA compile error in `{name}`:\n{log}")]
    Compile {
        /// Program (kernel or module) name.
        name: String,
        /// NVRTC's log.
        log: String,
    },
    /// A kernel name that a module does not define.
    #[error("no kernel named `{name}` in this module (it has: {available})")]
    UnknownKernel {
        /// Requested name.
        name: String,
        /// Comma separated list of available kernels.
        available: String,
    },
    /// A kernel argument does not fit the kernel's parameter.
    #[error("argument `{param}` of `{kernel}`: {reason}")]
    Argument {
        /// Kernel name.
        kernel: String,
        /// Parameter name.
        param: String,
        /// What is wrong.
        reason: String,
    },
    /// A fatal fault destroyed the device's CUDA context (an illegal address, say): the arrays
    /// that lived there are gone. `message` says what happened and whether gpukit could reset
    /// the device for new work.
    #[error("{message}")]
    DeviceLost {
        /// Device name, e.g. `cuda:0`.
        device: String,
        /// What happened, what is lost, and the state of the device now.
        message: String,
    },
    /// An operation that cannot be part of a graph was called while a graph was being captured
    /// (waiting for the device, host copies, allocation), or the capture failed.
    #[error("{what} cannot run inside a graph capture: {reason}")]
    GraphCapture {
        /// What was attempted.
        what: String,
        /// Why it cannot be captured, and what to do instead.
        reason: String,
    },
    /// A linear-algebra routine has no answer for this input (a singular matrix, no
    /// convergence), like NumPy's `LinAlgError`; the message names the function and the shape.
    #[error("linear algebra error: {0}")]
    LinAlg(String),
    /// An error reported by the CUDA driver, NVRTC or a CUDA library.
    #[error("CUDA error: {0}")]
    Cuda(String),
    /// Anything else, described in words.
    #[error("{0}")]
    Other(String),
}

/// Where a kernel indexed out of range: kernel, thread, block, parameter, index and length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfBounds {
    /// Kernel name.
    pub kernel: String,
    /// Name of the array parameter (or shared array) that was indexed.
    pub array: String,
    /// The offending index (for multi-dimensional views, the flat index along the failing axis).
    pub index: u64,
    /// The length of the indexed axis.
    pub len: u64,
    /// The axis that failed (0 for 1-D slices).
    pub axis: u32,
    /// threadIdx (x, y, z).
    pub thread: [u32; 3],
    /// blockIdx (x, y, z).
    pub block: [u32; 3],
}

impl fmt::Display for OutOfBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "index out of bounds in kernel `{}`: {}[{}] with length {} (axis {}) at thread ({}, {}, {}) of block ({}, {}, {})",
            self.kernel,
            self.array,
            self.index,
            self.len,
            self.axis,
            self.thread[0],
            self.thread[1],
            self.thread[2],
            self.block[0],
            self.block[1],
            self.block[2],
        )
    }
}

impl From<OutOfBounds> for Error {
    fn from(e: OutOfBounds) -> Self {
        Error::IndexOutOfBounds(Box::new(e))
    }
}

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Self {
        Error::Cuda(e.to_string())
    }
}
