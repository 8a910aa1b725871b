//! Test helpers: translate items from source text, and compile CUDA C++ with NVRTC.

use crate::ir::Func;
use crate::{cuda, infer, parse};

/// Parses and infers a `#[kernel]` written as source text.
pub fn kernel_ir(src: &str, checked: bool) -> syn::Result<Func> {
    let item: syn::ItemFn = syn::parse_str(src).expect("test source parses as a fn");
    let mut f = parse::kernel(&item, checked)?;
    infer::infer(&mut f)?;
    Ok(f)
}

/// The CUDA C++ of a checked `#[kernel]` written as source text.
pub fn kernel_cuda(src: &str) -> String {
    cuda::kernel_source(&kernel_ir(src, true).expect("translates")).expect("generates")
}

/// The error message a kernel produces.
pub fn kernel_error(src: &str) -> String {
    match kernel_ir(src, true).and_then(|f| cuda::kernel_source(&f)) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e.to_string(),
    }
}

/// The kernel body without the prelude.
pub fn body(cuda_source: &str) -> &str {
    let at = cuda_source
        .find(cuda::DEVICE_FNS_MARKER)
        .expect("marker present");
    &cuda_source[at..]
}

/// Compiles `source` to PTX for compute_90 with NVRTC. Returns `false` (after printing why) when
/// libnvrtc cannot be loaded, unless `GPUKIT_REQUIRE_NVRTC=1`, in which case that fails.
/// A compile error panics with NVRTC's log and the numbered source.
pub fn nvrtc_compiles(source: &str) -> bool {
    nvrtc_ptx(source).is_some()
}

/// The PTX NVRTC makes of `source` for compute_90 (the options gpukit uses), or `None` (after
/// printing why) when libnvrtc cannot be loaded, unless `GPUKIT_REQUIRE_NVRTC=1`, in which case
/// that fails. A compile error panics with NVRTC's log and the numbered source.
pub fn nvrtc_ptx(source: &str) -> Option<String> {
    // SAFETY: only probes whether the shared library can be loaded.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        if std::env::var("GPUKIT_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("GPUKIT_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded (put its folder on LD_LIBRARY_PATH)");
        }
        println!("skipped: libnvrtc not found (NVRTC compile check not run)");
        return None;
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some("compute_90"),
        options: vec!["-std=c++17".to_string()],
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Some(ptx.to_src()),
        Err(e) => {
            let numbered: String = source
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:4} {l}\n", i + 1))
                .collect();
            panic!("NVRTC rejected the generated source: {e:?}\n{numbered}");
        }
    }
}
