//! What a kernel's module was loaded as: machine code for this GPU (a cubin) or PTX that the
//! driver compiles at load, and where that code came from (NVRTC, the disk cache, memory).
//!
//! gpukit loads machine code by default: NVRTC already runs the assembler when it compiles for
//! the device's real architecture, so loading the cubin saves the driver's second compilation of
//! the PTX. PTX is loaded instead when the driver refuses the cubin (its error is kept in
//! [`LoadedCode::ptx_reason`]) or when `GPUKIT_KERNEL_CODE=ptx` asks for it.

use crate::error::{Error, Result};
use std::fmt;

/// The variable that chooses the code gpukit loads: `cubin` (the default) or `ptx`.
pub const KERNEL_CODE_VAR: &str = "GPUKIT_KERNEL_CODE";

/// The form of compiled code handed to the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeFormat {
    /// Machine code (SASS in a cubin) for the device's exact architecture, loaded as is.
    Cubin,
    /// PTX, which the driver compiles to machine code when the module is loaded.
    Ptx,
}

impl CodeFormat {
    /// The lowercase name used in cache keys, logs and `GPUKIT_KERNEL_CODE`.
    pub fn name(self) -> &'static str {
        match self {
            CodeFormat::Cubin => "cubin",
            CodeFormat::Ptx => "ptx",
        }
    }
}

/// Where the compiled code of a module came from when it was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeOrigin {
    /// NVRTC compiled the source just now (nothing was cached).
    Compiled,
    /// Read from the on-disk kernel cache (compiled by an earlier process, or earlier in this
    /// one before the memory cache was cleared).
    DiskCache,
    /// Found in this process's memory (compiled or read earlier in this process).
    MemoryCache,
}

impl CodeOrigin {
    /// A few words for messages: "compiled by NVRTC", "from the disk cache", ...
    pub fn describe(self) -> &'static str {
        match self {
            CodeOrigin::Compiled => "compiled by NVRTC",
            CodeOrigin::DiskCache => "from the disk cache",
            CodeOrigin::MemoryCache => "from this process's memory",
        }
    }
}

/// How one module was loaded on a device (`Module::code()`, a `#[kernel]`'s `code()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedCode {
    /// What the driver loaded.
    pub format: CodeFormat,
    /// The architecture the code was compiled for, e.g. `sm_90`.
    pub arch: String,
    /// Where the compiled code came from.
    pub origin: CodeOrigin,
    /// NVRTC's version `(major, minor)`.
    pub nvrtc_version: (i32, i32),
    /// The CUDA version the driver supports `(major, minor)`, where it could be read.
    pub driver_version: Option<(i32, i32)>,
    /// Why PTX was loaded instead of machine code (`None` when machine code was loaded).
    pub ptx_reason: Option<String>,
}

impl LoadedCode {
    /// Whether the driver runs machine code NVRTC made for this GPU (no compilation at load).
    pub fn is_cubin(&self) -> bool {
        self.format == CodeFormat::Cubin
    }
}

impl fmt::Display for LoadedCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.nvrtc_version;
        match self.format {
            CodeFormat::Cubin => write!(f, "{} machine code (cubin)", self.arch)?,
            CodeFormat::Ptx => write!(f, "PTX for {} (the driver compiles it at load)", self.arch)?,
        }
        write!(f, ", {} (NVRTC {major}.{minor}", self.origin.describe())?;
        if let Some((dmaj, dmin)) = self.driver_version {
            write!(f, ", driver CUDA {dmaj}.{dmin}")?;
        }
        write!(f, ")")?;
        if let Some(why) = &self.ptx_reason {
            write!(f, "; PTX because {why}")?;
        }
        Ok(())
    }
}

/// The format `GPUKIT_KERNEL_CODE` asks for, given its value (`None`: unset).
pub(crate) fn parse_requested(value: Option<&str>) -> Result<CodeFormat> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "cubin" | "sass") => Ok(CodeFormat::Cubin),
        Some("ptx") => Ok(CodeFormat::Ptx),
        Some(_) => Err(Error::Other(format!(
            "{KERNEL_CODE_VAR}={:?} is not understood: use `cubin` (machine code for this GPU, \
             the default) or `ptx` (PTX the driver compiles at load)",
            value.unwrap_or_default()
        ))),
    }
}

/// The format to load now (read from `GPUKIT_KERNEL_CODE` at each compilation).
pub(crate) fn requested_format() -> Result<CodeFormat> {
    parse_requested(std::env::var(KERNEL_CODE_VAR).ok().as_deref())
}

/// The CUDA version the driver supports, e.g. `(13, 0)`; `None` if the driver does not say.
/// Call only once the driver is known to load (after the probe).
pub(crate) fn driver_version() -> Option<(i32, i32)> {
    let mut v = 0i32;
    // SAFETY: writes one int; libcuda was loaded by the probe before any backend exists.
    let ok = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        == cudarc::driver::sys::CUresult::CUDA_SUCCESS;
    (ok && v > 0).then_some((v / 1000, (v % 1000) / 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_picks_cubin_or_ptx_and_rejects_the_rest() {
        for v in [None, Some(""), Some("cubin"), Some(" CUBIN "), Some("sass")] {
            assert_eq!(parse_requested(v).unwrap(), CodeFormat::Cubin, "{v:?}");
        }
        assert_eq!(parse_requested(Some("PTX")).unwrap(), CodeFormat::Ptx);
        let e = parse_requested(Some("elf")).unwrap_err().to_string();
        assert!(
            e.contains("GPUKIT_KERNEL_CODE=\"elf\" is not understood"),
            "{e}"
        );
    }

    #[test]
    fn display_says_what_was_loaded_and_why() {
        let mut code = LoadedCode {
            format: CodeFormat::Cubin,
            arch: "sm_90".into(),
            origin: CodeOrigin::DiskCache,
            nvrtc_version: (13, 0),
            driver_version: Some((13, 0)),
            ptx_reason: None,
        };
        assert!(code.is_cubin());
        assert_eq!(
            code.to_string(),
            "sm_90 machine code (cubin), from the disk cache (NVRTC 13.0, driver CUDA 13.0)"
        );
        code.format = CodeFormat::Ptx;
        code.origin = CodeOrigin::Compiled;
        code.ptx_reason = Some("GPUKIT_KERNEL_CODE=ptx".into());
        let s = code.to_string();
        assert!(
            s.starts_with("PTX for sm_90 (the driver compiles it at load), compiled by NVRTC"),
            "{s}"
        );
        assert!(s.ends_with("; PTX because GPUKIT_KERNEL_CODE=ptx"), "{s}");
    }
}
