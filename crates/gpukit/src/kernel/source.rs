//! What a kernel compiles to, for the `%ptx` and `%source` magics.

use super::info::{full_source, KernelInfo};
use crate::backend::cuda::{cache_dir, compile_cubin, compile_ptx, CudaBackend, LoadedCode};
use crate::device::{default_device, Device};
use crate::error::{Error, Result};

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

/// How a kernel is loaded on the default GPU (compiling and loading it if needed): machine code
/// for the device or PTX, and where the code came from. On the CPU device this is
/// [`Error::NeedsGpu`].
pub fn code(info: &KernelInfo) -> Result<LoadedCode> {
    match default_device() {
        Device::Cuda(n) => Ok(CudaBackend::get(n)?
            .compile(info.name, &full_source(info))?
            .code
            .clone()),
        Device::Cpu => Err(Error::NeedsGpu {
            what: format!("loading kernel `{}` (its code)", info.name),
        }),
    }
}

/// A kernel's CUDA C++ without gpukit's prelude (the `GPUKIT_PRELUDE_*` sections every generated
/// kernel starts with), and the number of prelude lines left out. Source without a prelude (a
/// `%%cuda` kernel) comes back whole, with 0.
pub fn without_prelude(source: &str) -> (String, usize) {
    let mut kept = Vec::new();
    let mut omitted = 0;
    // Depth of preprocessor conditionals inside a prelude section; 0 outside one.
    let mut depth = 0usize;
    let mut in_header = true;
    let mut seen_section = false;
    for line in source.lines() {
        let t = line.trim_start();
        if depth > 0 {
            omitted += 1;
            if t.starts_with("#if") {
                depth += 1;
            } else if t.starts_with("#endif") {
                depth -= 1;
            }
            continue;
        }
        if t.starts_with("#ifndef GPUKIT_PRELUDE_") {
            omitted += 1;
            depth = 1;
            seen_section = true;
            continue;
        }
        // The prelude's opening comment, and blank lines between sections.
        let header_comment = !seen_section && t.starts_with("//");
        if in_header && (header_comment || t.is_empty()) && source.contains("GPUKIT_PRELUDE_") {
            omitted += 1;
            continue;
        }
        in_header = false;
        kept.push(line);
    }
    if omitted == 0 {
        return (source.to_string(), 0);
    }
    while kept.first().is_some_and(|l| l.trim().is_empty()) {
        kept.remove(0);
    }
    (kept.join("\n"), omitted)
}

/// What `%source NAME` prints: the kernel's own code, with a line saying how much prelude was
/// left out; `full` prints everything NVRTC compiles.
pub fn source_listing(source: &str, full: bool) -> String {
    if full {
        return source.to_string();
    }
    match without_prelude(source) {
        (text, 0) => text,
        (text, n) => format!(
            "// (gpukit's prelude, {n} lines of helpers for Rust semantics, is left out: `%source --full` shows it)\n{text}"
        ),
    }
}

/// The machine code (SASS) a kernel runs as on the default GPU, disassembled by the CUDA
/// toolkit's `cuobjdump` (or `nvdisasm`), for the `%sass` magic. The kernel is compiled by NVRTC
/// straight to a cubin for the device's exact architecture (`FALLBACK_ARCH` when the default
/// device is the CPU). Without the toolkit's tools the error says so.
pub fn sass(info: &KernelInfo) -> Result<String> {
    let arch = match default_device() {
        Device::Cuda(n) => CudaBackend::get(n)?.arch().to_string(),
        Device::Cpu => FALLBACK_ARCH.to_string(),
    };
    let cubin = compile_cubin(info.name, &full_source(info), &arch)?;
    disassemble(info.name, &cubin)
}

impl super::module::CudaKernel {
    /// The machine code (SASS) of this raw CUDA kernel's module on its device, for `%sass`
    /// (see [`sass`]).
    pub fn sass(&self) -> Result<String> {
        let cubin = compile_cubin("module", &self.source, self.backend.arch())?;
        disassemble(self.name(), &cubin)
    }
}

/// Where a CUDA toolkit tool is: on `PATH`, else in `$CUDA_HOME/bin` or `/usr/local/cuda/bin`.
fn toolkit_tool(name: &str) -> Option<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        dirs.push(std::path::Path::new(&home).join("bin"));
    }
    dirs.push("/usr/local/cuda/bin".into());
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Runs `cuobjdump -sass` (or `nvdisasm`) on a cubin written to gpukit's per-user cache folder.
fn disassemble(name: &str, cubin: &[u8]) -> Result<String> {
    let (tool, args): (_, &[&str]) =
        match (toolkit_tool("cuobjdump"), toolkit_tool("nvdisasm")) {
            (Some(t), _) => (t, &["-sass"]),
            (None, Some(t)) => (t, &["-c"]),
            (None, None) => return Err(Error::Other(
                "%sass needs the CUDA toolkit's cuobjdump or nvdisasm, found neither on PATH, in \
                 $CUDA_HOME/bin or in /usr/local/cuda/bin (%ptx shows the PTX without them)"
                    .into(),
            )),
        };
    let dir = cache_dir().ok_or_else(|| {
        Error::Other("%sass: no private cache folder to write the machine code to".into())
    })?;
    let file = dir.join(format!("{name}-{}.cubin", std::process::id()));
    std::fs::write(&file, cubin)
        .map_err(|e| Error::Other(format!("writing {}: {e}", file.display())))?;
    let out = std::process::Command::new(&tool)
        .args(args)
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| Error::Other(format!("running {}: {e}", tool.display())))?;
    if !out.status.success() {
        return Err(Error::Other(format!(
            "{} failed: {}",
            tool.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERATED: &str = "// gpukit prelude: helpers.\n// Only the sections a kernel uses.\n\n#ifndef GPUKIT_PRELUDE_BOUNDS\n#define GPUKIT_PRELUDE_BOUNDS\n#if __CUDA_ARCH__ >= 700\nint a;\n#endif\nint b;\n#endif\n#ifndef GPUKIT_PRELUDE_INT\n#define GPUKIT_PRELUDE_INT\nint c;\n#endif\n\n// helper\n__device__ float f(float x) { return x; }\nextern \"C\" __global__ void k(float* x) {\n    x[0] = f(1.0f);\n}\n";

    #[test]
    fn prelude_sections_are_left_out_and_counted() {
        let (text, n) = without_prelude(GENERATED);
        assert_eq!(
            text,
            "__device__ float f(float x) { return x; }\nextern \"C\" __global__ void k(float* x) {\n    x[0] = f(1.0f);\n}"
                .replace("__device__", "// helper\n__device__")
        );
        assert_eq!(n, 15);
    }

    #[test]
    fn source_without_prelude_is_unchanged() {
        let raw = "// my kernel\nextern \"C\" __global__ void k() {}\n";
        assert_eq!(without_prelude(raw), (raw.to_string(), 0));
        assert_eq!(source_listing(raw, false), raw);
    }

    #[test]
    fn listing_says_what_was_left_out_unless_full() {
        let short = source_listing(GENERATED, false);
        assert!(short.starts_with("// (gpukit's prelude, 15 lines"));
        assert!(short.contains("__global__ void k"));
        assert!(!short.contains("GPUKIT_PRELUDE"));
        assert_eq!(source_listing(GENERATED, true), GENERATED);
    }
}
