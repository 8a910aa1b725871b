//! Environment settings every process of gpukit-multi keeps: NVLink multicast off in NCCL.
//!
//! NCCL's NVLink SHARP ("NVLS") path uses NVLink multicast objects; on the shared machines this
//! project runs on, a program that creates them can put the host's GPUs out of service for
//! everyone, so `NCCL_NVLS_ENABLE` must be `0`. gpukit-multi sets it to `0` in the process when
//! it is unset (before libnccl is loaded, which reads it), refuses any other value, and the
//! launcher passes `0` to every process it starts.

use gpukit::{Error, Result};

/// The variable that switches NCCL's NVLink multicast (NVLS) path.
pub const NVLS_VAR: &str = "NCCL_NVLS_ENABLE";

/// Sets `NCCL_NVLS_ENABLE=0` when unset; an error when it is set to anything but `0`.
///
/// Called before libnccl is loaded. Setting a variable is not synchronised with other threads
/// reading the environment at that instant; set `NCCL_NVLS_ENABLE=0` before starting a program
/// that reads the environment from many threads.
pub fn ensure_nvls_off() -> Result<()> {
    match std::env::var(NVLS_VAR) {
        Ok(v) if v.trim() == "0" => Ok(()),
        Ok(v) => Err(Error::Other(format!(
            "{NVLS_VAR}={v:?}: gpukit-multi keeps NVLink multicast off (it can take the shared \
             GPUs of a host out of service); set {NVLS_VAR}=0 or leave it unset"
        ))),
        Err(_) => {
            std::env::set_var(NVLS_VAR, "0");
            Ok(())
        }
    }
}
