//! What `#[kernel]`, `#[device]` and `#[vectorize]` generate: the metadata the runtime launches
//! from, and the complete CUDA C++ source assembled from it.

use super::cpu::{BlockCtx, CpuArgs};
use crate::element::DType;

/// Everything the runtime needs to launch one `#[kernel]` on either backend.
#[derive(Debug, Clone, Copy)]
pub struct KernelInfo {
    /// The kernel's name (the CUDA `extern "C" __global__` symbol too).
    pub name: &'static str,
    /// The Rust item as written, for `%source`.
    pub rust_source: &'static str,
    /// The CUDA C++ translation unit, without the `#[device]` helpers (see [`full_source`]).
    pub cuda_source: &'static str,
    /// The `#[device]` helpers the kernel calls directly.
    pub device_fns: &'static [&'static DeviceFn],
    /// The parameters, in order.
    pub params: &'static [ParamInfo],
    /// Names by array id, as bounds errors report them: array parameters, then shared arrays.
    pub array_names: &'static [&'static str],
    /// Whether indexing is bounds checked (the CUDA kernel then takes a trailing error record).
    pub checked: bool,
    /// A checked kernel's unchecked twin, run by CUDA launches whose arguments prove every
    /// access in range (see [`ProvenTwin`]); `None` for most kernels.
    pub proven: Option<&'static ProvenTwin>,
    /// Whether the body calls `sync_threads()` (the CPU then runs a block's threads as coroutines).
    pub uses_barrier: bool,
    /// Bytes of shared memory per block on the CPU (8-byte aligned slots).
    pub shared_bytes: usize,
    /// The CPU twin: runs one block.
    pub cpu: fn(&BlockCtx, &CpuArgs),
}

/// The unchecked twin of a checked kernel whose remaining checks can be decided per launch.
///
/// `#[kernel]` proves most accesses in range from the body alone (a guard, a loop range, a
/// clamp). An access it cannot prove there may still be proven by the launch's arguments: in the
/// lesson blur, `out[[y, x, c]]` is in range whenever `img.shape(0) <= out.shape(0)` (and so
/// on per axis), since every thread reaching it has `y < img.shape(0)`. When every test holds,
/// the launch runs this twin (the kernel compiled without checks); otherwise the checked kernel,
/// which reports the first bad index exactly as before.
#[derive(Debug)]
pub struct ProvenTwin {
    /// The twin's entry point (`NAME__proven`).
    pub symbol: &'static str,
    /// Its CUDA C++ translation unit, without the `#[device]` helpers.
    pub cuda_source: &'static str,
    /// The tests, all of which must hold.
    pub tests: &'static [LaunchTest],
}

impl ProvenTwin {
    /// Whether every test holds for `args` (the launch's arguments in parameter order; a value
    /// that cannot be read, such as a missing argument, fails the test).
    pub(crate) fn holds(&self, args: &[super::args::KernelArg<'_>]) -> bool {
        self.tests
            .iter()
            .all(|t| match (t.lhs.read(args), t.rhs.read(args)) {
                (Some(l), Some(r)) if t.strict => l < r,
                (Some(l), Some(r)) => l <= r,
                _ => false,
            })
    }
}

/// `lhs <= rhs` (`lhs < rhs` when `strict`) between values fixed for a launch.
#[derive(Debug, Clone, Copy)]
pub struct LaunchTest {
    /// A bound known above an index.
    pub lhs: LaunchValue,
    /// `<` instead of `<=` (the index is the value itself).
    pub strict: bool,
    /// An array's length or axis.
    pub rhs: LaunchValue,
    /// The test in Rust, e.g. `img.shape(0) <= out.shape(0)`.
    pub text: &'static str,
}

/// A value a launch test reads from the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchValue {
    /// The element count of array parameter `n`.
    Len(usize),
    /// Axis `d` of view parameter `n`.
    Shape(usize, usize),
    /// The value of `usize` scalar parameter `n`.
    Scalar(usize),
    /// A constant.
    Lit(u64),
}

impl LaunchValue {
    /// The value for `args`, if it can be read.
    fn read(self, args: &[super::args::KernelArg<'_>]) -> Option<u64> {
        match self {
            LaunchValue::Lit(n) => Some(n),
            LaunchValue::Len(n) => Some(args.get(n)?.shape()?.iter().product::<usize>() as u64),
            LaunchValue::Shape(n, d) => Some(*args.get(n)?.shape()?.get(d)? as u64),
            LaunchValue::Scalar(n) => args.get(n)?.scalar_bits(),
        }
    }
}

/// One kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    /// Name as written.
    pub name: &'static str,
    /// Slice, mutable slice, view, mutable view or scalar.
    pub kind: ParamKind,
    /// Element type.
    pub dtype: DType,
    /// Number of dimensions: 1 for slices, 2 or 3 for views, 0 for scalars.
    pub ndim: usize,
}

/// How a parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// `&[T]`: pointer and length.
    Slice,
    /// `&mut [T]`: pointer and length.
    SliceMut,
    /// `&View2<T>` / `&View3<T>`: pointer and the extent of each axis.
    View,
    /// `&mut View2<T>` / `&mut View3<T>`: pointer and the extent of each axis.
    ViewMut,
    /// A scalar, by value.
    Scalar,
}

impl ParamKind {
    /// Whether the kernel may write through this parameter.
    pub fn is_mut(self) -> bool {
        matches!(self, ParamKind::SliceMut | ParamKind::ViewMut)
    }

    /// Whether the parameter is an array (slice or view).
    pub fn is_array(self) -> bool {
        !matches!(self, ParamKind::Scalar)
    }
}

/// A `#[device]` helper: its CUDA declaration and definition, and the helpers it calls.
#[derive(Debug, Clone, Copy)]
pub struct DeviceFn {
    /// The function's name.
    pub name: &'static str,
    /// CUDA prototype, e.g. `__device__ float clamp01(float x);`.
    pub decl: &'static str,
    /// CUDA definition.
    pub def: &'static str,
    /// `#[device]` helpers this one calls.
    pub callees: &'static [&'static DeviceFn],
}

/// What `#[vectorize]` generates besides the wrapper function.
#[derive(Debug, Clone, Copy)]
pub struct VectorizeInfo {
    /// The function's name; the CUDA kernel is `{name}_vectorized`.
    pub name: &'static str,
    /// Number of inputs (1 to 4).
    pub arity: usize,
    /// The Rust item as written.
    pub rust_source: &'static str,
    /// Complete CUDA C++ translation unit holding `{name}_vectorized`.
    pub cuda_source: &'static str,
}

/// The line in [`KernelInfo::cuda_source`] that [`full_source`] replaces with the `#[device]`
/// helpers. Without it the helpers are put first.
pub const DEVICE_FNS_MARKER: &str = "// @gpukit-device-fns";

/// The complete CUDA C++ of a kernel: the `#[device]` helpers it reaches (each once: all
/// declarations, then all definitions) placed at [`DEVICE_FNS_MARKER`], and the kernel.
pub fn full_source(info: &KernelInfo) -> String {
    source_with_helpers(info.cuda_source, info.device_fns)
}

/// `cuda_source` with the `#[device]` helpers `device_fns` (and those they call) in place of its
/// marker: the source of a kernel or of its unchecked twin.
pub(crate) fn source_with_helpers(cuda_source: &str, device_fns: &[&DeviceFn]) -> String {
    let mut order: Vec<&DeviceFn> = Vec::new();
    for f in device_fns {
        collect(f, &mut order);
    }
    let mut helpers = String::new();
    for f in &order {
        helpers.push_str(f.decl.trim_end());
        helpers.push('\n');
    }
    for f in &order {
        helpers.push('\n');
        helpers.push_str(f.def.trim_end());
        helpers.push('\n');
    }
    match cuda_source.find(DEVICE_FNS_MARKER) {
        Some(at) => {
            let end = cuda_source[at..]
                .find('\n')
                .map_or(cuda_source.len(), |n| at + n + 1);
            format!("{}{}{}", &cuda_source[..at], helpers, &cuda_source[end..])
        }
        None if helpers.is_empty() => cuda_source.to_string(),
        None => format!("{helpers}\n{}", cuda_source),
    }
}

/// Depth-first, callees before callers, each helper once (by name).
fn collect<'a>(f: &'a DeviceFn, order: &mut Vec<&'a DeviceFn>) {
    if order.iter().any(|g| g.name == f.name) {
        return;
    }
    // Mark first so that (mutually) recursive helpers terminate.
    order.push(f);
    let at = order.len() - 1;
    for c in f.callees {
        collect(c, order);
    }
    // Move the caller after its callees.
    let me = order.remove(at);
    order.push(me);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEAF: DeviceFn = DeviceFn {
        name: "leaf",
        decl: "__device__ float leaf(float x);",
        def: "__device__ float leaf(float x) { return x; }",
        callees: &[],
    };
    const MID: DeviceFn = DeviceFn {
        name: "mid",
        decl: "__device__ float mid(float x);",
        def: "__device__ float mid(float x) { return leaf(x); }",
        callees: &[&LEAF],
    };

    fn no_cpu(_: &BlockCtx, _: &CpuArgs) {}

    fn info(src: &'static str, fns: &'static [&'static DeviceFn]) -> KernelInfo {
        KernelInfo {
            name: "k",
            rust_source: "",
            cuda_source: src,
            device_fns: fns,
            params: &[],
            array_names: &[],
            checked: false,
            proven: None,
            uses_barrier: false,
            shared_bytes: 0,
            cpu: no_cpu,
        }
    }

    #[test]
    fn a_twin_runs_only_when_every_launch_test_holds() {
        use crate::kernel::args::KernelArg;
        use crate::Array;
        const TESTS: &[LaunchTest] = &[
            LaunchTest {
                lhs: LaunchValue::Shape(0, 1),
                strict: false,
                rhs: LaunchValue::Len(1),
                text: "img.shape(1) <= out.len()",
            },
            LaunchTest {
                lhs: LaunchValue::Scalar(2),
                strict: true,
                rhs: LaunchValue::Shape(0, 0),
                text: "i < img.shape(0)",
            },
        ];
        let twin = ProvenTwin {
            symbol: "k__proven",
            cuda_source: "",
            tests: TESTS,
        };
        let img = Array::<f32>::zeros([4, 6]).unwrap();
        let (out6, out5) = (
            Array::<f32>::zeros(6).unwrap(),
            Array::<f32>::zeros(5).unwrap(),
        );
        let args = |out, i: usize| {
            [
                KernelArg::array(&img),
                KernelArg::array(out),
                KernelArg::scalar(i as u64),
            ]
        };
        assert!(twin.holds(&args(&out6, 3)));
        assert!(!twin.holds(&args(&out5, 3)), "6 <= 5 fails");
        assert!(!twin.holds(&args(&out6, 4)), "4 < 4 fails");
        // A value that cannot be read (a missing or mistyped argument) fails its test.
        assert!(!twin.holds(&args(&out6, 3)[..2]));
        let wrong = [
            KernelArg::array(&img),
            KernelArg::array(&out6),
            KernelArg::scalar(3i32),
        ];
        assert!(!twin.holds(&wrong));
    }

    #[test]
    fn helpers_once_declarations_first_at_marker() {
        let src = full_source(&info(
            "#include <x>\n// @gpukit-device-fns\n__global__ void k() {}\n",
            &[&MID, &LEAF],
        ));
        assert_eq!(src.matches("float leaf(float x);").count(), 1);
        assert_eq!(src.matches("{ return x; }").count(), 1);
        let decl_mid = src.find("float mid(float x);").unwrap();
        let def_leaf = src.find("{ return x; }").unwrap();
        assert!(src.find("#include").unwrap() < decl_mid);
        assert!(decl_mid < def_leaf);
        assert!(def_leaf < src.find("__global__").unwrap());
        assert!(!src.contains(DEVICE_FNS_MARKER));
    }

    #[test]
    fn helpers_prepended_without_marker() {
        let src = full_source(&info("__global__ void k() {}", &[&MID]));
        assert!(src.find("leaf(float x);").unwrap() < src.find("__global__").unwrap());
        assert_eq!(full_source(&info("x", &[])), "x");
        assert_eq!(
            full_source(&info("a\n// @gpukit-device-fns\nb", &[])),
            "a\nb"
        );
    }
}
