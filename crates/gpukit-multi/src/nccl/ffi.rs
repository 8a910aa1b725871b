//! libnccl opened at run time: finding the library and the few functions gpukit-multi calls.
//!
//! Why not cudarc's `nccl` module: cudarc 0.19.10 loads NCCL only under the names
//! `libnccl.so`, `libnccl.so.13`, `.12`, ... (its CUDA-version candidates), while NCCL's
//! soname is `libnccl.so.2` and the copies on these machines (the `nvidia-nccl-cu13` wheel
//! PyTorch depends on) have no other name, so cudarc would panic; and switching cudarc's
//! `nccl` feature on changes cudarc's build for gpukit too, so every notebook that adds this
//! crate would rebuild cudarc and gpukit. NCCL's C API is small and stable; the declarations
//! below follow `nccl.h` (2.x).

use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The variable naming libnccl: a file, or a folder holding `libnccl.so.2`.
pub const NCCL_LIB_VAR: &str = "GPUKIT_NCCL_LIB";

/// `ncclComm_t`.
pub(crate) type Comm = *mut c_void;

/// `ncclUniqueId`: 128 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct UniqueId {
    pub(crate) internal: [c_char; 128],
}

type GetVersion = unsafe extern "C" fn(*mut c_int) -> c_int;
type GetUniqueId = unsafe extern "C" fn(*mut UniqueId) -> c_int;
type CommInitRank = unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int) -> c_int;
type CommDestroy = unsafe extern "C" fn(Comm) -> c_int;
type GetErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type AllReduce = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    c_int,
    Comm,
    *mut c_void,
) -> c_int;
type Broadcast = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    c_int,
    Comm,
    *mut c_void,
) -> c_int;
type AllGather =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, *mut c_void) -> c_int;
type ReduceScatter = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    c_int,
    Comm,
    *mut c_void,
) -> c_int;

/// The loaded library and its functions (kept for the life of the process).
pub struct NcclLib {
    path: String,
    version: c_int,
    pub(crate) get_unique_id: GetUniqueId,
    pub(crate) comm_init_rank: CommInitRank,
    pub(crate) comm_destroy: CommDestroy,
    get_error_string: GetErrorString,
    pub(crate) all_reduce: AllReduce,
    pub(crate) broadcast: Broadcast,
    pub(crate) all_gather: AllGather,
    pub(crate) reduce_scatter: ReduceScatter,
    _lib: Library,
}

impl NcclLib {
    /// Where the library was loaded from (or the name the loader resolved).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// NCCL's version as `major.minor.patch`.
    pub fn version(&self) -> String {
        let v = self.version;
        // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
        format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
    }

    /// NCCL's text for a result code.
    pub(crate) fn error_string(&self, code: c_int) -> String {
        // SAFETY: ncclGetErrorString returns a static C string for any code.
        let p = unsafe { (self.get_error_string)(code) };
        if p.is_null() {
            return format!("NCCL error {code}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// `Ok` for ncclSuccess, else an error naming `what` and NCCL's text.
    pub(crate) fn check(&self, what: &str, code: c_int) -> gpukit::Result<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(gpukit::Error::Cuda(format!(
                "{what} failed: {} (NCCL {code}; NCCL_DEBUG=WARN prints NCCL's own reason)",
                self.error_string(code)
            )))
        }
    }
}

/// libnccl, loaded once per process, or why it cannot be (never a panic).
pub fn library() -> Result<&'static NcclLib, String> {
    static LIB: OnceLock<Result<NcclLib, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<NcclLib, String> {
    crate::env::ensure_nvls_off().map_err(|e| e.to_string())?;
    let mut tried = Vec::new();
    for candidate in candidates()? {
        let shown = candidate.display().to_string();
        // SAFETY: loading libnccl runs its (trusted) initialisers only.
        match unsafe { Library::new(&candidate) } {
            Ok(lib) => return symbols(lib, shown),
            Err(e) => tried.push(format!("{shown} ({e})")),
        }
    }
    if std::env::var_os(NCCL_LIB_VAR).is_none() {
        if let Some(p) = ask_python() {
            // SAFETY: as above.
            match unsafe { Library::new(&p) } {
                Ok(lib) => return symbols(lib, p.display().to_string()),
                Err(e) => tried.push(format!("{} ({e})", p.display())),
            }
        }
    }
    Err(format!(
        "libnccl not found (tried {}); set {NCCL_LIB_VAR} to libnccl.so.2 or its folder, e.g. \
         the one of the nvidia-nccl-cu13 wheel that PyTorch installs: python3 -c \"import \
         nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))\"",
        if tried.is_empty() {
            "nothing".to_string()
        } else {
            tried.join(", ")
        }
    ))
}

/// Where to look, in order: `GPUKIT_NCCL_LIB` (alone, when set), the loader's search path
/// (`LD_LIBRARY_PATH`, the system), then the `nvidia/nccl/lib` folder of Python
/// installations in the usual places (and, if none loads, the one `python3` on `PATH`
/// imports).
fn candidates() -> Result<Vec<PathBuf>, String> {
    if let Some(v) = std::env::var_os(NCCL_LIB_VAR).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v);
        if p.is_dir() {
            return Ok(vec![p.join("libnccl.so.2"), p.join("libnccl.so")]);
        }
        if !p.exists() {
            return Err(format!("{NCCL_LIB_VAR}={} does not exist", p.display()));
        }
        return Ok(vec![p]);
    }
    let mut out: Vec<PathBuf> = vec!["libnccl.so.2".into(), "libnccl.so".into()];
    for dir in python_site_dirs() {
        for sub in ["nvidia/nccl/lib/libnccl.so.2", "torch/lib/libnccl.so.2"] {
            let p = dir.join(sub);
            if p.exists() {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// `site-packages` / `dist-packages` folders of the Python installations in usual places
/// (system, /usr/local, /opt/conda, the active virtual environment, the user's).
fn python_site_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = vec![
        "/usr/local/lib".into(),
        "/usr/lib".into(),
        "/opt/conda/lib".into(),
    ];
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            roots.push(Path::new(&v).join("lib"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(Path::new(&home).join(".local/lib"));
    }
    let mut out = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        for py in pythons {
            for site in ["site-packages", "dist-packages"] {
                let d = py.join(site);
                if d.is_dir() {
                    out.push(d);
                }
            }
        }
    }
    out
}

/// Last resort: the NCCL wheel of the `python3` on `PATH` (PyTorch's dependency), if any.
fn ask_python() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && p.exists()).then_some(p)
}

fn symbols(lib: Library, path: String) -> Result<NcclLib, String> {
    // SAFETY: the types above are nccl.h's signatures of these symbols.
    unsafe {
        macro_rules! sym {
            ($name:literal, $t:ty) => {
                *lib.get::<$t>($name)
                    .map_err(|e| format!("{path} has no {}: {e}", String::from_utf8_lossy($name)))?
            };
        }
        let get_version: GetVersion = sym!(b"ncclGetVersion", GetVersion);
        let mut version = 0;
        let code = get_version(&mut version);
        if code != 0 {
            return Err(format!("{path}: ncclGetVersion failed ({code})"));
        }
        Ok(NcclLib {
            version,
            get_unique_id: sym!(b"ncclGetUniqueId", GetUniqueId),
            comm_init_rank: sym!(b"ncclCommInitRank", CommInitRank),
            comm_destroy: sym!(b"ncclCommDestroy", CommDestroy),
            get_error_string: sym!(b"ncclGetErrorString", GetErrorString),
            all_reduce: sym!(b"ncclAllReduce", AllReduce),
            broadcast: sym!(b"ncclBroadcast", Broadcast),
            all_gather: sym!(b"ncclAllGather", AllGather),
            reduce_scatter: sym!(b"ncclReduceScatter", ReduceScatter),
            path,
            _lib: lib,
        })
    }
}
