//! CUDA kernels of NumPy's selection and remaining elementwise functions: `where`, mask fill,
//! mask compaction and scatter, `clip`, `maximum`/`minimum`, `arctan2`, `square`, `sign`, and the float
//! functions (`log2`, `tan`, `arcsin`, `floor`, `isnan`, ...). One module per element type,
//! compiled on first use; each kernel is a grid-stride loop over the elements.

use super::elementwise::Operand;
use super::source::{suffix, PRELUDE};
use super::table::{bits, blocks_for, ALL_DTYPES};
use super::THREADS;
use crate::backend::cuda::{CompiledModule, CudaBackend};
use crate::element::{DType, Element};
use crate::error::Result;
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::{launch_values, PerDevice};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::sync::{Arc, OnceLock};

/// The float functions: name, and the CUDA expression of `x` for `float` and for `double`.
pub(crate) const FLOAT_FNS: [(&str, &str, &str); 15] = [
    ("log2", "log2f(x)", "log2(x)"),
    ("log10", "log10f(x)", "log10(x)"),
    ("exp2", "exp2f(x)", "exp2(x)"),
    ("expm1", "expm1f(x)", "expm1(x)"),
    ("log1p", "log1pf(x)", "log1p(x)"),
    ("tan", "tanf(x)", "tan(x)"),
    ("arcsin", "asinf(x)", "asin(x)"),
    ("arccos", "acosf(x)", "acos(x)"),
    ("arctan", "atanf(x)", "atan(x)"),
    ("sinh", "sinhf(x)", "sinh(x)"),
    ("cosh", "coshf(x)", "cosh(x)"),
    ("floor", "floorf(x)", "floor(x)"),
    ("ceil", "ceilf(x)", "ceil(x)"),
    ("round", "rintf(x)", "rint(x)"),
    ("reciprocal", "1.0f / x", "1.0 / x"),
];

/// The float predicates giving bool: name and CUDA expression of `x`.
pub(crate) const FLOAT_TESTS: [(&str, &str); 3] = [
    ("isnan", "isnan(x)"),
    ("isinf", "isinf(x)"),
    ("isfinite", "isfinite(x)"),
];

const TEMPLATES: &str = r#"
#define GK_LOOP for (gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (gk_u64)gridDim.x * blockDim.x)
template<typename T> __device__ __forceinline__ T gk_sign(T x) {
    if constexpr (gk_traits<T>::is_float) { return x > (T)0 ? (T)1 : (x < (T)0 ? (T)-1 : x); }
    else if constexpr (gk_traits<T>::is_signed) { return x > (T)0 ? (T)1 : (x < (T)0 ? (T)-1 : (T)0); }
    else { return x > (T)0 ? (T)1 : (T)0; } }
/* NumPy's clip: minimum(maximum(x, lo), hi), NaN kept. */
template<typename T> __device__ __forceinline__ T gk_clip(T x, T lo, T hi) {
    return gk_min(gk_max(x, lo), hi); }
template<typename T, typename A, typename B>
__device__ __forceinline__ void gk_where(const bool* c, A a, B b, T* out, gk_u64 n) {
    GK_LOOP { out[i] = c[i] ? a.at(i) : b.at(i); } }
"#;

/// The CUDA source of the module of element type `d`.
pub(crate) fn extra_source(d: DType) -> String {
    use std::fmt::Write;
    let t = d.cuda_name();
    let mut s = format!("{PRELUDE}{TEMPLATES}");
    let mut k = |body: String| {
        // Prefixed: several names (log2, round, ...) are CUDA's own functions.
        let _ = writeln!(s, "extern \"C\" __global__ void gkx_{body}");
    };
    for (form, a, b) in [
        ("aa", "const {t}* a", "const {t}* b"),
        ("as", "const {t}* a", "{t} b"),
        ("sa", "{t} a", "const {t}* b"),
        ("ss", "{t} a", "{t} b"),
    ] {
        let (a, b) = (a.replace("{t}", t), b.replace("{t}", t));
        let wrap = |c: char, decl: &str| {
            if decl.contains('*') {
                format!("gk_arr<{t}>{{{c}}}")
            } else {
                format!("gk_scalar<{t}>{{{c}}}")
            }
        };
        k(format!(
            "where_{form}(const bool* c, {a}, {b}, {t}* out, gk_u64 n) {{ gk_where<{t}>(c, {}, {}, out, n); }}",
            wrap('a', &a),
            wrap('b', &b)
        ));
    }
    k(format!(
        "masked_fill({t}* a, const bool* m, {t} v, gk_u64 n) {{ GK_LOOP {{ if (m[i]) {{ a[i] = v; }} }} }}"
    ));
    k(format!(
        "compact(const {t}* a, const bool* m, const gk_u64* pos, {t}* out, gk_u64 n) {{ GK_LOOP {{ if (m[i]) {{ out[pos[i] - 1] = a[i]; }} }} }}"
    ));
    k(format!(
        "scatter({t}* a, const bool* m, const gk_u64* pos, const {t}* v, gk_u64 n) {{ GK_LOOP {{ if (m[i]) {{ a[i] = v[pos[i] - 1]; }} }} }}"
    ));
    if d != DType::Bool {
        k(format!(
            "clip(const {t}* a, {t} lo, {t} hi, {t}* out, gk_u64 n) {{ GK_LOOP {{ out[i] = gk_clip(a[i], lo, hi); }} }}"
        ));
        k(format!(
            "maximum(const {t}* a, const {t}* b, {t}* out, gk_u64 n) {{ GK_LOOP {{ out[i] = gk_max(a[i], b[i]); }} }}"
        ));
        k(format!(
            "minimum(const {t}* a, const {t}* b, {t}* out, gk_u64 n) {{ GK_LOOP {{ out[i] = gk_min(a[i], b[i]); }} }}"
        ));
        k(format!(
            "square(const {t}* a, {t}* out, gk_u64 n) {{ GK_LOOP {{ out[i] = gk_mul(a[i], a[i]); }} }}"
        ));
        k(format!(
            "sign(const {t}* a, {t}* out, gk_u64 n) {{ GK_LOOP {{ out[i] = gk_sign(a[i]); }} }}"
        ));
    }
    if d.is_float() {
        let atan2 = if d == DType::F32 { "atan2f" } else { "atan2" };
        k(format!(
            "arctan2(const {t}* a, const {t}* b, {t}* out, gk_u64 n) {{ GK_LOOP {{ out[i] = {atan2}(a[i], b[i]); }} }}"
        ));
        for (name, f32_expr, f64_expr) in FLOAT_FNS {
            let e = if d == DType::F32 { f32_expr } else { f64_expr };
            k(format!(
                "{name}(const {t}* a, {t}* out, gk_u64 n) {{ GK_LOOP {{ const {t} x = a[i]; out[i] = {e}; }} }}"
            ));
        }
        for (name, e) in FLOAT_TESTS {
            k(format!(
                "{name}(const {t}* a, bool* out, gk_u64 n) {{ GK_LOOP {{ const {t} x = a[i]; out[i] = {e}; }} }}"
            ));
        }
    }
    s
}

fn program_name(d: DType) -> String {
    format!("gpukit_extra_{}", suffix(d))
}

/// Every element type's module as `(program name, source)`.
pub(super) fn programs() -> Vec<(String, String)> {
    ALL_DTYPES
        .iter()
        .map(|&d| (program_name(d), extra_source(d)))
        .collect()
}

static SOURCES: [OnceLock<String>; 8] = [const { OnceLock::new() }; 8];
static MODULES: PerDevice<[OnceLock<Arc<CompiledModule>>; 8]> = PerDevice::new();

/// Queues kernel `name` of `d`'s module as a grid-stride loop over `n` elements.
fn launch(backend: &CudaBackend, d: DType, name: &str, n: usize, params: &[u64]) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let i = super::table::dtype_index(d);
    let slot = &MODULES.get(backend)[i];
    let module = match slot.get() {
        Some(m) => m.clone(),
        None => {
            let source = SOURCES[i].get_or_init(|| extra_source(d));
            let m = backend.outside_capture_rules(|| backend.compile(&program_name(d), source))?;
            let _ = slot.set(m.clone());
            m
        }
    };
    let name = format!("gkx_{name}");
    let f = module.function(&name)?;
    let config = LaunchConfig {
        grid: Dim3::new(blocks_for(backend, n), 1, 1),
        block: Dim3::new(THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // The parameters match the kernel's signature in `extra_source`; every loop is bounded by
    // `n`, which the callers pass as the length of every buffer (`compact`'s output and
    // `scatter`'s values hold the mask's count, which `pos` never exceeds).
    launch_values(backend, f.cu_function(), &config, params, &name)
}

fn rd<T>(b: &CudaBackend, s: &CudaSlice<T>) -> u64 {
    s.device_ptr(b.stream()).0
}

fn wr<T>(b: &CudaBackend, s: &mut CudaSlice<T>) -> u64 {
    s.device_ptr_mut(b.stream()).0
}

/// `out[i] = c[i] ? a[i] : b[i]` (arrays or scalars).
pub(crate) fn where_<T: Element>(
    backend: &CudaBackend,
    c: &CudaSlice<bool>,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    let op = |o: &Operand<'_, T>| match o {
        Operand::Array(s) => ('a', rd(backend, s)),
        Operand::Scalar(v) => ('s', bits(*v)),
        Operand::Raw(p) => ('a', *p),
    };
    let ((fa, pa), (fb, pb)) = (op(&a), op(&b));
    let name = format!("where_{fa}{fb}");
    let params = [rd(backend, c), pa, pb, wr(backend, out), n as u64];
    launch(backend, T::DTYPE, &name, n, &params)
}

/// `a[i] = v` where `m[i]`.
pub(crate) fn masked_fill<T: Element>(
    backend: &CudaBackend,
    a: &mut CudaSlice<T>,
    m: &CudaSlice<bool>,
    v: T,
    n: usize,
) -> Result<()> {
    let params = [wr(backend, a), rd(backend, m), bits(v), n as u64];
    launch(backend, T::DTYPE, "masked_fill", n, &params)
}

/// `out[pos[i] - 1] = a[i]` where `m[i]` (`pos`: the inclusive count of `m`).
pub(crate) fn compact<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    m: &CudaSlice<bool>,
    pos: &CudaSlice<u64>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    let params = [
        rd(backend, a),
        rd(backend, m),
        rd(backend, pos),
        wr(backend, out),
        n as u64,
    ];
    launch(backend, T::DTYPE, "compact", n, &params)
}

/// `a[i] = v[pos[i] - 1]` where `m[i]`.
pub(crate) fn scatter<T: Element>(
    backend: &CudaBackend,
    a: &mut CudaSlice<T>,
    m: &CudaSlice<bool>,
    pos: &CudaSlice<u64>,
    v: &CudaSlice<T>,
    n: usize,
) -> Result<()> {
    let params = [
        wr(backend, a),
        rd(backend, m),
        rd(backend, pos),
        rd(backend, v),
        n as u64,
    ];
    launch(backend, T::DTYPE, "scatter", n, &params)
}

/// `out[i] = clip(a[i], lo, hi)`.
pub(crate) fn clip<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    lo: T,
    hi: T,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    let params = [
        rd(backend, a),
        bits(lo),
        bits(hi),
        wr(backend, out),
        n as u64,
    ];
    launch(backend, T::DTYPE, "clip", n, &params)
}

/// `out[i] = name(a[i], b[i])` (`maximum`, `minimum`).
pub(crate) fn binary_fn<T: Element>(
    backend: &CudaBackend,
    name: &str,
    a: &CudaSlice<T>,
    b: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    let params = [rd(backend, a), rd(backend, b), wr(backend, out), n as u64];
    launch(backend, T::DTYPE, name, n, &params)
}

/// `out[i] = name(a[i])` (the float functions, `square`, `sign`, and the predicates into bool).
pub(crate) fn unary_fn<T: Element, U: Element>(
    backend: &CudaBackend,
    name: &str,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<U>,
    n: usize,
) -> Result<()> {
    let params = [rd(backend, a), wr(backend, out), n as u64];
    launch(backend, T::DTYPE, name, n, &params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element type's module compiles and has the kernels the launches name (no GPU
    /// needed; skipped visibly without libnvrtc).
    #[test]
    fn modules_have_the_kernels_launched() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        for &d in &ALL_DTYPES {
            let ptx =
                crate::backend::cuda::compile_ptx(&program_name(d), &extra_source(d), "sm_90")
                    .unwrap_or_else(|e| panic!("{e}"));
            let entries = crate::backend::cuda::ptx_entries(&ptx);
            let mut want: Vec<String> = ["aa", "as", "sa", "ss"]
                .iter()
                .map(|f| format!("where_{f}"))
                .chain(["masked_fill", "compact", "scatter"].map(String::from))
                .collect();
            if d != DType::Bool {
                want.extend(["clip", "maximum", "minimum", "square", "sign"].map(String::from));
            }
            if d.is_float() {
                want.extend(FLOAT_FNS.iter().map(|f| f.0.to_string()));
                want.push("arctan2".to_string());
                want.extend(FLOAT_TESTS.iter().map(|f| f.0.to_string()));
            }
            for name in want {
                assert!(entries.contains(&format!("gkx_{name}")), "{d}: {name}");
            }
        }
    }
}
