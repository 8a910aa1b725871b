//! Strided kernels: copying between any two layouts of one shape (what materialises a view,
//! fills a block of a concatenation, or lays out a transpose), and binary operations and
//! comparisons whose operands have their own strides (views, and broadcasting, where an axis an
//! operand is stretched along has stride 0).
//!
//! Each kernel takes the loop's shape and every operand's strides as plain parameters, up to
//! [`MAX_DIMS`] axes after merging (`view::layout::coalesce`); a loop of more axes runs as one
//! launch per index of its leading axes. Index arithmetic is done in 32 bits where the loop is
//! small enough (divisions are much cheaper), in 64 bits otherwise. A copy whose innermost
//! destination axis is strided in the source while another axis is contiguous there (a
//! transpose) goes through 32x32 tiles in shared memory, so that both sides are read and written
//! in whole rows.

use super::source::{suffix, PRELUDE};
use super::table::{ptr, ptr_mut};
use super::THREADS;
use crate::array::op::{BinOp, CmpOp};
use crate::backend::cuda::CudaBackend;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::{launch_values, PerDevice};
use cudarc::driver::{CudaFunction, CudaSlice};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Most axes one launch handles (after merging).
pub(crate) const MAX_DIMS: usize = 8;

/// NVRTC program name of the copy module.
const COPY_PROGRAM: &str = "gpukit_strided_copy";

/// Parameter lists of `MAX_DIMS` values and the local arrays built from them.
const DIMS_MACROS: &str = r#"
typedef long long gk_i64;
#define GK_MAXD 8
#define GK_P8(T, p) T p##0, T p##1, T p##2, T p##3, T p##4, T p##5, T p##6, T p##7
#define GK_L8(T, p) const T p[GK_MAXD] = {p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7}
/* Element i of a loop over `shape` (ndim axes, the last varying fastest) as offsets along
   K operands' strides; I is the index type of the divisions. */
#define GK_OFFSETS(I, i, ndim, shape, K, strides, offs) { \
    I rem_ = (I)(i); \
    _Pragma("unroll") for (int d_ = GK_MAXD - 1; d_ >= 0; --d_) { \
        if (d_ < (int)(ndim)) { \
            const I len_ = (I)shape[d_]; const I q_ = rem_ / len_; const I idx_ = rem_ - q_ * len_; rem_ = q_; \
            _Pragma("unroll") for (int k_ = 0; k_ < K; ++k_) { offs[k_] += (gk_i64)idx_ * strides[k_][d_]; } \
        } } }
"#;

/// The copy kernels, by element width (1 to 16 bytes).
const COPY_BODY: &str = r#"
struct gk_w16 { gk_u64 a, b; };
template<typename W, typename I>
__device__ __forceinline__ void gk_scopy(const W* src, W* dst, gk_u64 n, gk_u64 ndim,
        const gk_u64* shape, const gk_i64* ss, const gk_i64* ds) {
    const gk_i64* st[2] = {ss, ds};
    for (gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (gk_u64)gridDim.x * blockDim.x) {
        gk_i64 offs[2] = {0, 0};
        GK_OFFSETS(I, i, ndim, shape, 2, st, offs)
        dst[offs[1]] = src[offs[0]];
    } }
/* out[b, r, c] = in[b, r, c] where `in` is contiguous along r and `out` along c: a 32x32 tile
   is read along r and written along c through shared memory (padded against bank conflicts). */
template<typename W>
__device__ __forceinline__ void gk_tcopy(const W* src, W* dst, gk_u64 nb, gk_u64 nr, gk_u64 nc,
        gk_i64 sb, gk_i64 sc, gk_i64 db, gk_i64 dr) {
    __shared__ W tile[32][33];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const gk_u64 c0 = (gk_u64)blockIdx.x * 32;
    for (gk_u64 b = blockIdx.z; b < nb; b += gridDim.z) {
        for (gk_u64 r0 = (gk_u64)blockIdx.y * 32; r0 < nr; r0 += (gk_u64)gridDim.y * 32) {
            #pragma unroll
            for (int j = 0; j < 32; j += 8) {
                const gk_u64 r = r0 + tx, c = c0 + ty + j;
                if (r < nr && c < nc) { tile[ty + j][tx] = src[(gk_i64)b * sb + (gk_i64)r + (gk_i64)c * sc]; }
            }
            __syncthreads();
            #pragma unroll
            for (int j = 0; j < 32; j += 8) {
                const gk_u64 r = r0 + ty + j, c = c0 + tx;
                if (r < nr && c < nc) { dst[(gk_i64)b * db + (gk_i64)r * dr + (gk_i64)c] = tile[tx][ty + j]; }
            }
            __syncthreads();
        } } }
#define GK_SCOPY(W, NAME, I) extern "C" __global__ void NAME(const W* src, W* dst, gk_u64 n, gk_u64 ndim, \
    GK_P8(gk_u64, s), GK_P8(gk_i64, a), GK_P8(gk_i64, b)) { \
    GK_L8(gk_u64, s); GK_L8(gk_i64, a); GK_L8(gk_i64, b); gk_scopy<W, I>(src, dst, n, ndim, s, a, b); }
#define GK_TCOPY(W, NAME) extern "C" __global__ void NAME(const W* src, W* dst, gk_u64 nb, gk_u64 nr, gk_u64 nc, \
    gk_i64 sb, gk_i64 sc, gk_i64 db, gk_i64 dr) { gk_tcopy<W>(src, dst, nb, nr, nc, sb, sc, db, dr); }
GK_SCOPY(unsigned char, gk_scopy_w1_i32, unsigned) GK_SCOPY(unsigned char, gk_scopy_w1_i64, gk_u64)
GK_SCOPY(unsigned short, gk_scopy_w2_i32, unsigned) GK_SCOPY(unsigned short, gk_scopy_w2_i64, gk_u64)
GK_SCOPY(unsigned, gk_scopy_w4_i32, unsigned) GK_SCOPY(unsigned, gk_scopy_w4_i64, gk_u64)
GK_SCOPY(gk_u64, gk_scopy_w8_i32, unsigned) GK_SCOPY(gk_u64, gk_scopy_w8_i64, gk_u64)
GK_SCOPY(gk_w16, gk_scopy_w16_i32, unsigned) GK_SCOPY(gk_w16, gk_scopy_w16_i64, gk_u64)
GK_TCOPY(unsigned char, gk_tcopy_w1) GK_TCOPY(unsigned short, gk_tcopy_w2) GK_TCOPY(unsigned, gk_tcopy_w4)
GK_TCOPY(gk_u64, gk_tcopy_w8) GK_TCOPY(gk_w16, gk_tcopy_w16)
"#;

/// The strided binary kernels (operands with strides, a contiguous output).
const BINARY_BODY: &str = r#"
template<typename R, typename T, typename I, typename Op>
__device__ __forceinline__ void gk_sbin(const T* a, const T* b, R* out, gk_u64 n, gk_u64 ndim,
        const gk_u64* shape, const gk_i64* as, const gk_i64* bs, Op op) {
    const gk_i64* st[2] = {as, bs};
    for (gk_u64 i = (gk_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (gk_u64)gridDim.x * blockDim.x) {
        gk_i64 offs[2] = {0, 0};
        GK_OFFSETS(I, i, ndim, shape, 2, st, offs)
        out[i] = op(a[offs[0]], b[offs[1]]);
    } }
"#;

/// The copy module's source.
fn copy_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| format!("typedef unsigned long long gk_u64;\n{DIMS_MACROS}{COPY_BODY}"))
}

/// NVRTC program name of the strided binary module of `d`.
fn binary_program(d: DType) -> String {
    format!("gpukit_strided_{}", suffix(d))
}

/// Name of the strided kernel of operation `op` (`add`, `lt`, ...) on `d` with index width `w`.
fn binary_name(op: &str, d: DType, wide: bool) -> String {
    format!("sb_{op}_{}_{}", suffix(d), if wide { "i64" } else { "i32" })
}

/// The strided binary module of element type `d`: every comparison, and for numeric types every
/// arithmetic operation, each in 32- and 64-bit indexing.
fn binary_source(d: DType) -> String {
    let t = d.cuda_name();
    let mut src = format!("{PRELUDE}{DIMS_MACROS}{BINARY_BODY}");
    let mut ops: Vec<(&str, &str)> = CmpOp::ALL.iter().map(|o| (o.name(), "bool")).collect();
    if d != DType::Bool {
        ops.extend(BinOp::ALL.iter().map(|o| (o.name(), t)));
    }
    for (o, r) in ops {
        for wide in [false, true] {
            let name = binary_name(o, d, wide);
            let i = if wide { "gk_u64" } else { "unsigned" };
            src.push_str(&format!(
                "extern \"C\" __global__ void {name}(const {t}* a, const {t}* b, {r}* out, gk_u64 n, gk_u64 ndim, \
                 GK_P8(gk_u64, s), GK_P8(gk_i64, x), GK_P8(gk_i64, y)) {{ GK_L8(gk_u64, s); GK_L8(gk_i64, x); \
                 GK_L8(gk_i64, y); gk_sbin<{r}, {t}, {i}>(a, b, out, n, ndim, s, x, y, gk_op_{o}()); }}\n"
            ));
        }
    }
    src
}

/// The binary module's source of `d`, made once.
fn binary_source_cached(d: DType) -> &'static str {
    static SOURCES: OnceLock<Mutex<HashMap<DType, &'static str>>> = OnceLock::new();
    let mut map = SOURCES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    map.entry(d)
        .or_insert_with(|| Box::leak(binary_source(d).into_boxed_str()))
}

/// Every strided module as `(program name, source)`, for warming the caches and NVRTC tests.
pub(super) fn programs() -> Vec<(String, String)> {
    let mut v = vec![(COPY_PROGRAM.to_string(), copy_source().to_string())];
    for d in super::table::ALL_DTYPES {
        v.push((binary_program(d), binary_source(d)));
    }
    v
}

/// Loaded strided kernels of one device, by name.
#[derive(Default)]
struct Loaded(Mutex<HashMap<String, CudaFunction>>);

static LOADED: PerDevice<Loaded> = PerDevice::new();

/// The kernel `name` of module `program` on `backend` (compiled and loaded on first use).
fn function(
    backend: &CudaBackend,
    program: &str,
    source: &str,
    name: &str,
) -> Result<CudaFunction> {
    let loaded = LOADED.get(backend);
    if let Some(f) = loaded.0.lock().unwrap_or_else(|p| p.into_inner()).get(name) {
        return Ok(f.clone());
    }
    let f = backend.outside_capture_rules(|| backend.compile(program, source)?.function(name))?;
    loaded
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(name.to_string(), f.clone());
    Ok(f)
}

/// A device address moved by `elements` elements of `T` (negative allowed).
fn offset_ptr<T>(base: u64, elements: isize) -> u64 {
    base.wrapping_add_signed(elements as i64 * std::mem::size_of::<T>() as i64)
}

/// One operand of a strided loop: the device address of its element `[0, 0, ...]` and its
/// strides along the loop's axes (in elements).
#[derive(Debug, Clone)]
pub(crate) struct StridedOperand {
    /// Address of the first element.
    pub(crate) ptr: u64,
    /// Strides, one per axis of the loop.
    pub(crate) strides: Vec<isize>,
}

impl StridedOperand {
    /// The operand `buffer` read from element `offset` with `strides`.
    pub(crate) fn new<T>(
        backend: &CudaBackend,
        buffer: &CudaSlice<T>,
        offset: usize,
        strides: &[isize],
    ) -> StridedOperand {
        StridedOperand {
            ptr: offset_ptr::<T>(ptr(backend, buffer), offset as isize),
            strides: strides.to_vec(),
        }
    }

    /// The operand `buffer`, written from element `offset` with `strides`.
    pub(crate) fn new_mut<T>(
        backend: &CudaBackend,
        buffer: &mut CudaSlice<T>,
        offset: usize,
        strides: &[isize],
    ) -> StridedOperand {
        StridedOperand {
            ptr: offset_ptr::<T>(ptr_mut(backend, buffer), offset as isize),
            strides: strides.to_vec(),
        }
    }
}

/// What [`for_each_block`] runs per block: a launch over a shape with its operands.
type BlockLaunch<'a> = &'a mut dyn FnMut(&[usize], &[StridedOperand]) -> Result<()>;

/// Runs `launch(shape, operands)` for a loop over `shape` (already merged; operands' strides in
/// bytes), splitting off leading axes while there are more than [`MAX_DIMS`]: one launch per
/// index of them, with each operand's address moved to that index.
fn for_each_block(
    shape: &[usize],
    operands: &[StridedOperand],
    launch: BlockLaunch<'_>,
) -> Result<()> {
    if shape.len() <= MAX_DIMS {
        return launch(shape, operands);
    }
    for i in 0..shape[0] {
        let moved: Vec<StridedOperand> = operands
            .iter()
            .map(|o| StridedOperand {
                ptr: o.ptr.wrapping_add_signed(i as i64 * o.strides[0] as i64),
                strides: o.strides[1..].to_vec(),
            })
            .collect();
        for_each_block(&shape[1..], &moved, launch)?;
    }
    Ok(())
}

/// `operands` with strides in bytes (for [`for_each_block`], which moves addresses).
fn to_bytes<T>(operands: &[StridedOperand]) -> Vec<StridedOperand> {
    let w = std::mem::size_of::<T>() as isize;
    operands
        .iter()
        .map(|o| StridedOperand {
            ptr: o.ptr,
            strides: o.strides.iter().map(|s| s * w).collect(),
        })
        .collect()
}

/// Strides in bytes back in elements of `T`.
fn to_elements<T>(strides: &[isize]) -> Vec<isize> {
    let w = std::mem::size_of::<T>() as isize;
    strides.iter().map(|s| s / w).collect()
}

/// Kernel parameters of a loop over `shape` (at most [`MAX_DIMS`] axes) with operands'
/// strides: `n, ndim`, the shape padded with 1, then each operand's strides padded with 0.
fn loop_params(shape: &[usize], strides: &[Vec<isize>], params: &mut Vec<u64>) {
    params.push(shape.iter().product::<usize>() as u64);
    params.push(shape.len() as u64);
    params.extend((0..MAX_DIMS).map(|k| shape.get(k).copied().unwrap_or(1) as u64));
    for s in strides {
        params.extend((0..MAX_DIMS).map(|k| s.get(k).copied().unwrap_or(0) as i64 as u64));
    }
}

/// Whether 32-bit index arithmetic covers a loop over `shape`.
fn narrow(shape: &[usize]) -> bool {
    shape.iter().product::<usize>() <= u32::MAX as usize
}

/// Grid of a one-element-per-thread grid-stride loop over `n` elements.
fn grid(backend: &CudaBackend, n: usize) -> u32 {
    let cap = backend.properties().multiprocessors.max(1) * 16;
    n.div_ceil(THREADS as usize).clamp(1, cap as usize) as u32
}

/// Queues `dst[idx] = src[idx]` for every index of `shape` (already merged, no element-free
/// loop), each side with its own strides.
pub(crate) fn copy<T: Element>(
    backend: &CudaBackend,
    shape: &[usize],
    src: StridedOperand,
    dst: StridedOperand,
) -> Result<()> {
    let w = std::mem::size_of::<T>();
    if !matches!(w, 1 | 2 | 4 | 8 | 16) {
        return Err(Error::Other(format!(
            "internal: no strided copy for elements of {w} bytes"
        )));
    }
    if let Some(t) = tile_plan(shape, &src.strides, &dst.strides) {
        return tile_copy(backend, w, t, &src, &dst);
    }
    let ops = to_bytes::<T>(&[src, dst]);
    let source = copy_source();
    for_each_block(shape, &ops, &mut |shape, ops| {
        let name = format!(
            "gk_scopy_w{w}_{}",
            if narrow(shape) { "i32" } else { "i64" }
        );
        let f = function(backend, COPY_PROGRAM, source, &name)?;
        let strides: Vec<Vec<isize>> = ops.iter().map(|o| to_elements::<T>(&o.strides)).collect();
        let mut params = vec![ops[0].ptr, ops[1].ptr];
        loop_params(shape, &strides, &mut params);
        let n = shape.iter().product();
        let config = LaunchConfig {
            grid: Dim3::new(grid(backend, n), 1, 1),
            block: Dim3::new(THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        launch_values(backend, f.cu_function(), &config, &params, &name)
    })
}

/// A copy that runs as tiles: `(b, r, c)` axes of the merged loop (`b` absent for two axes),
/// where the source is contiguous along `r` and the destination along `c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TilePlan {
    /// Lengths of the batch, row and column axes.
    pub(crate) len: [usize; 3],
    /// The loop's axis of each of batch, row and column (batch: `usize::MAX` when absent).
    pub(crate) axis: [usize; 3],
}

/// The tiled plan of a merged copy loop, when it is a (batched) transpose: two or three axes,
/// the destination contiguous along the last, the source contiguous along another while strided
/// along the last.
pub(crate) fn tile_plan(shape: &[usize], src: &[isize], dst: &[isize]) -> Option<TilePlan> {
    let n = shape.len();
    if !(2..=3).contains(&n) || dst[n - 1] != 1 || src[n - 1].abs() == 1 {
        return None;
    }
    let r = (0..n - 1).find(|&k| src[k] == 1)?;
    let b = (0..n - 1).find(|&k| k != r);
    let len = [b.map_or(1, |b| shape[b]), shape[r], shape[n - 1]];
    if len[2].div_ceil(32) > i32::MAX as usize {
        return None;
    }
    Some(TilePlan {
        len,
        axis: [b.unwrap_or(usize::MAX), r, n - 1],
    })
}

fn tile_copy(
    backend: &CudaBackend,
    w: usize,
    t: TilePlan,
    src: &StridedOperand,
    dst: &StridedOperand,
) -> Result<()> {
    let name = format!("gk_tcopy_w{w}");
    let f = function(backend, COPY_PROGRAM, copy_source(), &name)?;
    let stride = |o: &StridedOperand, a: usize| if a == usize::MAX { 0 } else { o.strides[a] };
    let [nb, nr, nc] = t.len;
    let params = [
        src.ptr,
        dst.ptr,
        nb as u64,
        nr as u64,
        nc as u64,
        stride(src, t.axis[0]) as i64 as u64,
        stride(src, t.axis[2]) as i64 as u64,
        stride(dst, t.axis[0]) as i64 as u64,
        stride(dst, t.axis[1]) as i64 as u64,
    ];
    let config = LaunchConfig {
        grid: Dim3::new(
            nc.div_ceil(32) as u32,
            nr.div_ceil(32).clamp(1, 65_535) as u32,
            nb.clamp(1, 65_535) as u32,
        ),
        block: Dim3::new(32, 8, 1),
        shared_mem_bytes: 0,
    };
    launch_values(backend, f.cu_function(), &config, &params, &name)
}

/// The operation of a strided binary kernel: arithmetic (same output type) or a comparison.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StridedOp {
    /// `+ - * / %`.
    Arith(BinOp),
    /// `== != < <= > >=`, giving `bool`.
    Compare(CmpOp),
}

/// Queues `out[i] = a[idx] op b[idx]` for every index `idx` of `shape` (already merged, no
/// element-free loop), `i` its C-order position (`out` contiguous, `R` the result type).
pub(crate) fn binary<T: Element, R: Element>(
    backend: &CudaBackend,
    op: StridedOp,
    shape: &[usize],
    a: StridedOperand,
    b: StridedOperand,
    out: u64,
) -> Result<()> {
    let d = T::DTYPE;
    let opname = match op {
        StridedOp::Arith(o) => o.name(),
        StridedOp::Compare(o) => o.name(),
    };
    let program = binary_program(d);
    let source = binary_source_cached(d);
    let out_strides = crate::array::view::c_strides(shape);
    let out_op = StridedOperand {
        ptr: out,
        strides: out_strides,
    };
    let ops = [to_bytes::<T>(&[a, b]), to_bytes::<R>(&[out_op])].concat();
    for_each_block(shape, &ops, &mut |shape, ops| {
        let name = binary_name(opname, d, !narrow(shape));
        let f = function(backend, &program, source, &name)?;
        let strides = [
            to_elements::<T>(&ops[0].strides),
            to_elements::<T>(&ops[1].strides),
        ];
        let mut params = vec![ops[0].ptr, ops[1].ptr, ops[2].ptr];
        loop_params(shape, &strides, &mut params);
        let n = shape.iter().product();
        let config = LaunchConfig {
            grid: Dim3::new(grid(backend, n), 1, 1),
            block: Dim3::new(THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        launch_values(backend, f.cu_function(), &config, &params, &name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strided modules compile with NVRTC (no GPU needed), define every kernel the launch
    /// code names, and keep their index arrays in registers (no local memory).
    #[test]
    fn strided_kernels_compile_without_local_memory() {
        if !crate::testing::nvrtc_or_skip() {
            return;
        }
        let compile = |name: &str, src: &str| {
            crate::backend::cuda::compile_ptx(name, src, "sm_90").unwrap_or_else(|e| panic!("{e}"))
        };
        let ptx = compile(COPY_PROGRAM, copy_source());
        let entries = crate::backend::cuda::ptx_entries(&ptx);
        for w in [1, 2, 4, 8, 16] {
            for k in [
                format!("gk_scopy_w{w}_i32"),
                format!("gk_scopy_w{w}_i64"),
                format!("gk_tcopy_w{w}"),
            ] {
                assert!(entries.contains(&k), "{k}");
            }
        }
        assert!(
            !ptx.contains("ld.local") && !ptx.contains("st.local"),
            "copy kernels spill"
        );
        for d in [DType::F64, DType::Bool, DType::U8] {
            let ptx = compile(&binary_program(d), &binary_source(d));
            let entries = crate::backend::cuda::ptx_entries(&ptx);
            assert!(entries.contains(&binary_name("lt", d, false)), "{d:?}");
            assert!(entries.contains(&binary_name("ge", d, true)), "{d:?}");
            assert_eq!(
                entries.contains(&binary_name("add", d, true)),
                d != DType::Bool
            );
            assert!(
                !ptx.contains("ld.local") && !ptx.contains("st.local"),
                "{d:?} spills"
            );
        }
    }

    #[test]
    fn transposes_take_the_tiled_path() {
        // (4, 6) transposed: merged loop [6, 4], source strides [1, 6], destination [4, 1].
        let t = tile_plan(&[6, 4], &[1, 6], &[4, 1]).unwrap();
        assert_eq!((t.len, t.axis), ([1, 6, 4], [usize::MAX, 0, 1]));
        // Batched: (2, 4, 6) with the last two axes swapped.
        let t = tile_plan(&[2, 6, 4], &[24, 1, 6], &[24, 4, 1]).unwrap();
        assert_eq!(t.len, [2, 6, 4]);
        // Batch axis innermost among the others.
        let t = tile_plan(&[6, 2, 4], &[1, 24, 6], &[8, 4, 1]).unwrap();
        assert_eq!((t.len, t.axis), ([2, 6, 4], [1, 0, 2]));
        // Not transposes: contiguous, strided without a contiguous axis, four axes.
        assert!(tile_plan(&[24], &[1], &[1]).is_none());
        assert!(tile_plan(&[6, 4], &[2, 12], &[4, 1]).is_none());
        assert!(tile_plan(&[6, 4], &[-1, 6], &[4, 1]).is_none());
        assert!(tile_plan(&[2, 2, 2, 2], &[1, 2, 4, 8], &[8, 4, 2, 1]).is_none());
    }
}
