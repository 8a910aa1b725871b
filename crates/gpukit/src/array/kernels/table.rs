//! Which built-in kernels exist, where each lives (its module and its fixed slot in a
//! per-device table), and the launch path they share: no allocation, no lock and no hashing of
//! names per launch.

use super::source::{cast_name, cast_source, ops_source, suffix};
use super::{LOOP_BLOCKS_PER_SM, MAX_BLOCKS, THREADS};
use crate::array::op::{BinOp, CmpOp, ReduceOp, UnOp};
use crate::backend::cuda::CudaBackend;
use crate::element::{DType, Element};
use crate::error::Result;
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::{launch_values, PerDevice};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DevicePtrMut};
use std::sync::OnceLock;

/// Which built-in module a kernel lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Module {
    Ops(DType),
    Cast(DType, DType),
}

impl Module {
    /// NVRTC program name and source.
    fn program(self) -> (String, String) {
        match self {
            Module::Ops(d) => (format!("gpukit_ops_{}", suffix(d)), ops_source(d)),
            Module::Cast(a, b) => (format!("gpukit_{}", cast_name(a, b)), cast_source(a, b)),
        }
    }
}

/// Every element type, in [`dtype_index`] order.
pub(super) const ALL_DTYPES: [DType; 8] = [
    DType::Bool,
    DType::U8,
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
];

pub(super) fn dtype_index(d: DType) -> usize {
    match d {
        DType::Bool => 0,
        DType::U8 => 1,
        DType::I32 => 2,
        DType::I64 => 3,
        DType::U32 => 4,
        DType::U64 => 5,
        DType::F32 => 6,
        DType::F64 => 7,
        // `function` turns complex kernels away before a slot is looked up; complex arrays have
        // their own kernels (array::complex).
        DType::Complex64 | DType::Complex128 => {
            unreachable!("complex element types have no built-in kernel table slot")
        }
    }
}

/// Which operands of a two-operand kernel are arrays (`a`) and which scalars (`s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Aa,
    As,
    Sa,
}

impl Form {
    pub(super) fn name(self) -> &'static str {
        match self {
            Form::Aa => "aa",
            Form::As => "as",
            Form::Sa => "sa",
        }
    }
}

/// One built-in kernel (its element type included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Builtin {
    Fill(DType),
    Copy(DType),
    Ramp(DType),
    Powf(DType),
    Reduce(ReduceOp, DType),
    Unary(UnOp, DType),
    Compare(CmpOp, Form, DType),
    Binary(BinOp, Form, DType),
    Cast(DType, DType),
}

/// Slots of one element type's ops module in the function table.
pub(super) const OPS_SLOTS: usize = 48;
/// Slots of a device's function table: the ops modules, then the 64 casts.
pub(super) const SLOTS: usize = ALL_DTYPES.len() * OPS_SLOTS + ALL_DTYPES.len() * ALL_DTYPES.len();

impl Builtin {
    /// The kernel's fixed place in a device's function table.
    pub(super) fn slot(self) -> usize {
        let (d, k) = match self {
            Builtin::Fill(d) => (d, 0),
            Builtin::Copy(d) => (d, 1),
            Builtin::Ramp(d) => (d, 2),
            Builtin::Powf(d) => (d, 3),
            Builtin::Reduce(op, d) => (d, 4 + op as usize),
            Builtin::Unary(op, d) => (d, 7 + op as usize),
            Builtin::Compare(op, f, d) => (d, 15 + 2 * op as usize + f as usize),
            Builtin::Binary(op, f, d) => (d, 27 + 3 * op as usize + f as usize),
            Builtin::Cast(a, b) => {
                return ALL_DTYPES.len() * OPS_SLOTS
                    + dtype_index(a) * ALL_DTYPES.len()
                    + dtype_index(b)
            }
        };
        dtype_index(d) * OPS_SLOTS + k
    }

    /// The kernel's name in its module (and in profiles and errors).
    pub(super) fn name(self) -> String {
        match self {
            Builtin::Fill(d) => format!("fill_{}", suffix(d)),
            Builtin::Copy(d) => format!("copy_{}", suffix(d)),
            Builtin::Ramp(d) => format!("ramp_{}", suffix(d)),
            Builtin::Powf(d) => format!("powf_as_{}", suffix(d)),
            Builtin::Reduce(op, d) => format!("{}_{}", op.name(), suffix(d)),
            Builtin::Unary(op, d) => format!("{}_{}", op.name(), suffix(d)),
            Builtin::Compare(op, f, d) => format!("{}_{}_{}", op.name(), f.name(), suffix(d)),
            Builtin::Binary(op, f, d) => format!("{}_{}_{}", op.name(), f.name(), suffix(d)),
            Builtin::Cast(a, b) => cast_name(a, b),
        }
    }

    /// Whether the kernel is for a complex element type (those are not in the table).
    #[inline]
    fn is_complex(self) -> bool {
        match self {
            Builtin::Fill(d)
            | Builtin::Copy(d)
            | Builtin::Ramp(d)
            | Builtin::Powf(d)
            | Builtin::Reduce(_, d)
            | Builtin::Unary(_, d)
            | Builtin::Compare(_, _, d)
            | Builtin::Binary(_, _, d) => d.is_complex(),
            Builtin::Cast(a, b) => a.is_complex() || b.is_complex(),
        }
    }

    pub(super) fn module(self) -> Module {
        match self {
            Builtin::Fill(d)
            | Builtin::Copy(d)
            | Builtin::Ramp(d)
            | Builtin::Powf(d)
            | Builtin::Reduce(_, d)
            | Builtin::Unary(_, d)
            | Builtin::Compare(_, _, d)
            | Builtin::Binary(_, _, d) => Module::Ops(d),
            Builtin::Cast(a, b) => Module::Cast(a, b),
        }
    }
}

/// Every built-in module as `(program name, source)`.
pub(crate) fn all_sources() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = ALL_DTYPES
        .iter()
        .map(|&d| Module::Ops(d).program())
        .collect();
    for &a in &ALL_DTYPES {
        for &b in &ALL_DTYPES {
            v.push(Module::Cast(a, b).program());
        }
    }
    // The small modules outside the table (random numbers, eye's diagonal, complex arrays,
    // linalg's layouts).
    for (name, source) in [
        super::random::program(),
        super::diagonal::program(),
        super::complex::program(),
        super::layout::program(),
    ] {
        v.push((name.to_string(), source.to_string()));
    }
    v.extend(super::sort::programs());
    v.extend(super::strided::programs());
    v.extend(super::axes::programs());
    v.extend(super::extra::programs());
    v
}

/// Compiles and loads every built-in module on `backend` (filling the kernel cache); returns how
/// many modules there are.
pub(crate) fn precompile(backend: &CudaBackend) -> Result<usize> {
    let sources = all_sources();
    for (name, source) in &sources {
        backend.compile(name, source)?;
    }
    Ok(sources.len())
}

/// A loaded built-in kernel.
pub(super) struct Loaded {
    func: CudaFunction,
    name: String,
}

/// One device's built-in kernels, each in its fixed slot, loaded on first use.
pub(super) struct Table(Box<[OnceLock<Loaded>]>);

impl Default for Table {
    fn default() -> Table {
        Table((0..SLOTS).map(|_| OnceLock::new()).collect())
    }
}

pub(super) static FUNCTIONS: PerDevice<Table> = PerDevice::new();

/// The built-in kernel `k` on `backend`'s device: two atomic loads once it is loaded.
#[inline]
pub(super) fn function(backend: &CudaBackend, k: Builtin) -> Result<&'static Loaded> {
    if k.is_complex() {
        return Err(complex_unsupported(k));
    }
    let slot = &FUNCTIONS.get(backend).0[k.slot()];
    match slot.get() {
        Some(f) => Ok(f),
        None => load(backend, k, slot),
    }
}

/// The error for a built-in operation asked of a complex array on a GPU.
#[cold]
fn complex_unsupported(k: Builtin) -> crate::error::Error {
    crate::error::Error::Other(format!(
        "`{}` is not available for complex arrays on a GPU (complex arrays have +, -, *, /, re, im, \
         abs, conj, astype to and from floats, and gpukit::fft)",
        k.name()
    ))
}

/// Compiles (through the backend's PTX and module caches) and loads `k`.
#[cold]
pub(super) fn load(
    backend: &CudaBackend,
    k: Builtin,
    slot: &'static OnceLock<Loaded>,
) -> Result<&'static Loaded> {
    let (program, source) = k.module().program();
    let name = k.name();
    // Possibly inside a graph capture: loading is not stream work (see
    // `CudaBackend::outside_capture_rules`).
    let func =
        backend.outside_capture_rules(|| backend.compile(&program, &source)?.function(&name))?;
    let _ = slot.set(Loaded { func, name });
    Ok(slot.get().expect("set just above"))
}

/// Queues `f` on `blocks` blocks of [`THREADS`] with its parameters as `u64` slots.
#[inline]
pub(super) fn launch(backend: &CudaBackend, f: &Loaded, blocks: u32, params: &[u64]) -> Result<()> {
    let config = LaunchConfig {
        grid: Dim3::new(blocks, 1, 1),
        block: Dim3::new(THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // The parameters match the kernel's signature in its source (each caller below pushes them
    // in the declared order); every loop is bounded by the element count passed with them.
    launch_values(backend, f.func.cu_function(), &config, params, &f.name)
}

/// Queues kernel `name` of a small module outside the table (`program`, compiled and loaded
/// through the backend's caches on first use) as a grid-stride loop over `n` items.
pub(super) fn launch_module(
    backend: &CudaBackend,
    (program, source): (&str, &str),
    name: &str,
    n: usize,
    params: &[u64],
) -> Result<()> {
    let f = backend.compile(program, source)?.function(name)?;
    let config = LaunchConfig {
        grid: Dim3::new(blocks_for(backend, n), 1, 1),
        block: Dim3::new(THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    launch_values(backend, f.cu_function(), &config, params, name)
}

/// The device address of a buffer, for reading.
#[inline]
pub(super) fn ptr<T>(backend: &CudaBackend, s: &CudaSlice<T>) -> u64 {
    s.device_ptr(backend.stream()).0
}

/// The device address of a buffer, for writing.
#[inline]
pub(super) fn ptr_mut<T>(backend: &CudaBackend, s: &mut CudaSlice<T>) -> u64 {
    s.device_ptr_mut(backend.stream()).0
}

/// A scalar parameter's slot: its bytes in the low bytes of a `u64` (what the kernel reads).
/// Elements are at most 8 bytes except `Complex<f64>`, whose scalars travel as two `f64`
/// parameters (`kernels::complex`); it never comes here, and would keep only its real part.
#[inline]
pub(super) fn bits<T: Element>(v: T) -> u64 {
    debug_assert!(
        std::mem::size_of::<T>() <= 8,
        "{} scalar as one slot",
        T::DTYPE
    );
    let mut b = 0u64;
    let n = std::mem::size_of::<T>().min(8);
    // SAFETY: copies `n` bytes from a live `T` of at least `n` bytes into the 8 bytes of `b`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            &v as *const T as *const u8,
            &mut b as *mut u64 as *mut u8,
            n,
        )
    };
    b
}

/// Grid of a one-element-per-thread grid-stride loop over `work` items: enough blocks to fill
/// the GPU, capped so that threads loop on large arrays.
pub(super) fn blocks_for(backend: &CudaBackend, work: usize) -> u32 {
    let cap = backend.properties().multiprocessors.max(1) * LOOP_BLOCKS_PER_SM;
    work.div_ceil(THREADS as usize).clamp(1, cap as usize) as u32
}

/// Grid of an elementwise kernel over `n` elements of `T` (`vector`: through 16-byte packs):
/// one thread per pack (see the kernels' source for why).
pub(super) fn ew_blocks<T>(backend: &CudaBackend, n: usize, vector: bool) -> u32 {
    if !vector {
        return blocks_for(backend, n);
    }
    n.div_ceil(per_pack::<T>())
        .div_ceil(THREADS as usize)
        .clamp(1, MAX_BLOCKS) as u32
}

/// Elements per 16-byte pack.
pub(super) fn per_pack<T>() -> usize {
    (16 / std::mem::size_of::<T>()).max(1)
}
