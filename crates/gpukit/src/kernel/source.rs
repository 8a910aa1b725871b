//! What a kernel compiles to, for the `%ptx` and `%source` magics.

use super::info::{full_source, KernelInfo};
use crate::backend::cuda::{compile_ptx, CudaBackend};
use crate::device::{default_device, Device};
use crate::error::Result;

/// Architecture PTX is produced for when the default device is the CPU (the course's H100).
pub const FALLBACK_ARCH: &str = "sm_90";

/// The PTX of a kernel for the default device, compiling it if needed. With the CPU as the
/// default device the PTX is produced for [`FALLBACK_ARCH`] (this needs only libnvrtc, no GPU).
pub fn ptx(info: &KernelInfo) -> Result<String> {
    let source = full_source(info);
    match default_device() {
        Device::Cuda(n) => Ok(CudaBackend::get(n)?
            .compile(info.name, &source)?
            .ptx
            .to_string()),
        Device::Cpu => Ok(compile_ptx(info.name, &source, FALLBACK_ARCH)?.to_string()),
    }
}
