//! The CPU executor: blocks in parallel, barriers and shared memory, atomics, bounds errors,
//! launch checks and host arrays.
//!
//! The kernels here are written by hand exactly as `#[kernel]` generates them (see
//! docs/ARCHITECTURE.md, "The kernel ABI"), so these tests pin the ABI the macros and the
//! runtime share. Their CUDA sources are the ones the GPU tests in `launch.rs` also follow.
//!
//! Why this file is long: the CPU executor's behaviours (blocks, barriers, shared memory, atomics, panics) side by side, sharing small kernels.

use gpukit::__private::{
    atomic_add, BlockCtx, CpuArgs, DType, KernelArg, KernelInfo, ParamInfo, ParamKind, SliceArg,
    SliceMutArg, ThreadCtx,
};
use gpukit::prelude::*;
use gpukit::OutOfBounds;

/// `let v = expr?` for the twin's `Option`s: on `None` the thread returns (the error is recorded).
macro_rules! get {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return,
        }
    };
}

fn cpu() -> Device {
    set_default_device(Device::Cpu);
    Device::Cpu
}

// ---------------------------------------------------------------------------------------------
// What `#[kernel]` generates for:
//
// #[kernel]
// fn block_sum(input: &[f32], partial: &mut [f32]) {
//     let tile = shared_array::<f32, 256>();
//     let t = thread_idx().x as usize;
//     let i = grid(1);
//     tile[t] = if i < input.len() { input[i] } else { 0.0 };
//     sync_threads();
//     let mut s = block_dim().x as usize / 2;
//     while s > 0 {
//         if t < s { tile[t] = tile[t] + tile[t + s]; }
//         sync_threads();
//         s /= 2;
//     }
//     if t == 0 { partial[block_idx().x as usize] = tile[0]; }
// }
// ---------------------------------------------------------------------------------------------

#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug)]
pub struct block_sum;

impl block_sum {
    /// Metadata: generated CUDA C++, parameters, CPU twin.
    pub const INFO: KernelInfo = KernelInfo {
        name: "block_sum",
        rust_source: "fn block_sum(input: &[f32], partial: &mut [f32]) { .. }",
        cuda_source: BLOCK_SUM_CUDA,
        device_fns: &[],
        params: &[
            ParamInfo {
                name: "input",
                kind: ParamKind::Slice,
                dtype: DType::F32,
                ndim: 1,
            },
            ParamInfo {
                name: "partial",
                kind: ParamKind::SliceMut,
                dtype: DType::F32,
                ndim: 1,
            },
        ],
        array_names: &["input", "partial", "tile"],
        checked: true,
        proven: None,
        uses_barrier: true,
        shared_bytes: 1024,
        cpu: block_sum_cpu_block,
    };

    /// Launch: `block_sum.launch((blocks, threads), &a, &mut b)`.
    pub fn launch<'a, A0, A1>(
        &self,
        config: impl gpukit::__private::IntoLaunchConfig,
        input: A0,
        partial: A1,
    ) -> gpukit::Result<()>
    where
        A0: SliceArg<'a, f32>,
        A1: SliceMutArg<'a, f32>,
    {
        gpukit::__private::launch(
            &Self::INFO,
            config,
            vec![input.into_kernel_arg(), partial.into_kernel_arg()],
        )
    }

    /// The generated CUDA C++ (with helpers).
    pub fn source(&self) -> String {
        gpukit::__private::full_source(&Self::INFO)
    }

    /// PTX for the default device.
    pub fn ptx(&self) -> gpukit::Result<String> {
        gpukit::__private::ptx(&Self::INFO)
    }
}

fn block_sum_cpu_block(__b: &BlockCtx, __a: &CpuArgs) {
    let input = __a.slice::<f32>(0);
    let partial = __a.slice_mut::<f32>(1);
    __b.run_cooperative(|__t: &ThreadCtx| {
        let tile = __t.shared::<f32>(0, 256, 2);
        let t = __t.thread_idx().x as usize;
        let i =
            __t.block_idx().x as usize * __t.block_dim().x as usize + __t.thread_idx().x as usize;
        let v = if i < input.len() {
            get!(input.get(i, __t))
        } else {
            0.0f32
        };
        get!(tile.set(t, v, __t));
        __t.sync_threads();
        let mut s = __t.block_dim().x as usize / 2;
        while s > 0 {
            if t < s {
                let sum = get!(tile.get(t, __t)) + get!(tile.get(t + s, __t));
                get!(tile.set(t, sum, __t));
            }
            __t.sync_threads();
            s /= 2;
        }
        if t == 0 {
            let v = get!(tile.get(0, __t));
            get!(partial.set(__t.block_idx().x as usize, v, __t));
        }
    });
}

const BLOCK_SUM_CUDA: &str = r#"
#define GK_OOB(id, i, n, ax) do { \
    if (atomicCAS(__gk_err, 0ull, 1ull) == 0ull) { \
        __gk_err[1] = (id); __gk_err[2] = (i); __gk_err[3] = (n); __gk_err[4] = (ax); \
        __gk_err[5] = threadIdx.x; __gk_err[6] = threadIdx.y; __gk_err[7] = threadIdx.z; \
        __gk_err[8] = blockIdx.x; __gk_err[9] = blockIdx.y; __gk_err[10] = blockIdx.z; \
    } \
    return; } while (0)
// @gpukit-device-fns
extern "C" __global__ void block_sum(const float* input, unsigned long long input_len,
                                     float* partial, unsigned long long partial_len,
                                     unsigned long long* __gk_err) {
    __shared__ float tile[256];
    unsigned long long t = threadIdx.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < input_len) { v = input[i]; }
    if (t >= 256ull) GK_OOB(2, t, 256ull, 0);
    tile[t] = v;
    __syncthreads();
    for (unsigned long long s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) {
            if (t + s >= 256ull) GK_OOB(2, t + s, 256ull, 0);
            tile[t] = tile[t] + tile[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        unsigned long long b = blockIdx.x;
        if (b >= partial_len) GK_OOB(1, b, partial_len, 0);
        partial[b] = tile[0];
    }
}
"#;

// ---------------------------------------------------------------------------------------------
// Kernels below are launched through `gpukit::__private::launch` directly (what `launch`
// methods do), to keep the file short.
// ---------------------------------------------------------------------------------------------

/// `fn histogram(data: &[u32], bins: &mut [u32], total: &mut [f32])`: one element per thread,
/// `atomic_add(&mut bins[data[i] as usize % bins.len()], 1); atomic_add(&mut total[0], 0.5);`
const HISTOGRAM: KernelInfo = KernelInfo {
    name: "histogram",
    rust_source: "",
    cuda_source: "",
    device_fns: &[],
    params: &[
        ParamInfo {
            name: "data",
            kind: ParamKind::Slice,
            dtype: DType::U32,
            ndim: 1,
        },
        ParamInfo {
            name: "bins",
            kind: ParamKind::SliceMut,
            dtype: DType::U32,
            ndim: 1,
        },
        ParamInfo {
            name: "total",
            kind: ParamKind::SliceMut,
            dtype: DType::F32,
            ndim: 1,
        },
    ],
    array_names: &["data", "bins", "total"],
    checked: true,
    proven: None,
    uses_barrier: false,
    shared_bytes: 0,
    cpu: histogram_cpu,
};

fn histogram_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let data = __a.slice::<u32>(0);
    let bins = __a.slice_mut::<u32>(1);
    let total = __a.slice_mut::<f32>(2);
    __b.for_each_thread(|__t| {
        let i =
            __t.block_idx().x as usize * __t.block_dim().x as usize + __t.thread_idx().x as usize;
        if i < data.len() {
            let bin = get!(data.get(i, __t)) as usize % bins.len();
            atomic_add(get!(bins.ptr(bin, __t)), 1u32);
            atomic_add(get!(total.ptr(0, __t)), 0.5f32);
        }
    });
}

/// `fn axpy(a: f32, x: &[f32], y: &mut [f32])`: `y[i] = a * x[i] + y[i]` for `i = grid(1)`,
/// without an `i < len` guard (so extra threads index out of range). The scalar comes first:
/// array ids skip it.
const AXPY: KernelInfo = KernelInfo {
    name: "axpy",
    rust_source: "",
    cuda_source: "",
    device_fns: &[],
    params: &[
        ParamInfo {
            name: "a",
            kind: ParamKind::Scalar,
            dtype: DType::F32,
            ndim: 0,
        },
        ParamInfo {
            name: "x",
            kind: ParamKind::Slice,
            dtype: DType::F32,
            ndim: 1,
        },
        ParamInfo {
            name: "y",
            kind: ParamKind::SliceMut,
            dtype: DType::F32,
            ndim: 1,
        },
    ],
    array_names: &["x", "y"],
    checked: true,
    proven: None,
    uses_barrier: false,
    shared_bytes: 0,
    cpu: axpy_cpu,
};

fn axpy_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let a = __a.scalar::<f32>(0);
    let x = __a.slice::<f32>(1);
    let y = __a.slice_mut::<f32>(2);
    __b.for_each_thread(|__t| {
        let i =
            __t.block_idx().x as usize * __t.block_dim().x as usize + __t.thread_idx().x as usize;
        let v = a * get!(x.get(i, __t)) + get!(y.get(i, __t));
        get!(y.set(i, v, __t));
    });
}

/// `fn transpose(a: &View2<i32>, out: &mut View2<i32>)` on a 2-D grid:
/// `let (r, c) = grid2(); if r < a.shape(0) && c < a.shape(1) { out[[c, r]] = a[[r, c]]; }`
const TRANSPOSE: KernelInfo = KernelInfo {
    name: "transpose",
    rust_source: "",
    cuda_source: "",
    device_fns: &[],
    params: &[
        ParamInfo {
            name: "a",
            kind: ParamKind::View,
            dtype: DType::I32,
            ndim: 2,
        },
        ParamInfo {
            name: "out",
            kind: ParamKind::ViewMut,
            dtype: DType::I32,
            ndim: 2,
        },
    ],
    array_names: &["a", "out"],
    checked: true,
    proven: None,
    uses_barrier: false,
    shared_bytes: 0,
    cpu: transpose_cpu,
};

fn transpose_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let a = __a.view::<i32, 2>(0);
    let out = __a.view_mut::<i32, 2>(1);
    __b.for_each_thread(|__t| {
        let r =
            __t.block_idx().x as usize * __t.block_dim().x as usize + __t.thread_idx().x as usize;
        let c =
            __t.block_idx().y as usize * __t.block_dim().y as usize + __t.thread_idx().y as usize;
        if r < a.shape(0) && c < a.shape(1) {
            let v = get!(a.get([r, c], __t));
            get!(out.set([c, r], v, __t));
        }
    });
}

/// `fn early_exit(out: &mut [u32])`: odd threads return before the barrier; even threads pass
/// two barriers and write how many threads of the block wrote a flag before them.
const EARLY_EXIT: KernelInfo = KernelInfo {
    name: "early_exit",
    rust_source: "",
    cuda_source: "",
    device_fns: &[],
    params: &[ParamInfo {
        name: "out",
        kind: ParamKind::SliceMut,
        dtype: DType::U32,
        ndim: 1,
    }],
    array_names: &["out", "flags"],
    checked: true,
    proven: None,
    uses_barrier: true,
    shared_bytes: 64 * 4,
    cpu: early_exit_cpu,
};

fn early_exit_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let out = __a.slice_mut::<u32>(0);
    __b.run_cooperative(|__t| {
        let flags = __t.shared::<u32>(0, 64, 1);
        let t = __t.thread_idx().x as usize;
        if t % 2 == 1 {
            return;
        }
        get!(flags.set(t, 1, __t));
        __t.sync_threads();
        let mut seen = 0u32;
        for j in 0..__t.block_dim().x as usize {
            seen += get!(flags.get(j, __t));
        }
        __t.sync_threads();
        get!(out.set(t, seen, __t));
    });
}

/// A twin that panics in one thread (e.g. an integer division by zero in a debug build).
const PANICS: KernelInfo = KernelInfo {
    name: "panics",
    rust_source: "",
    cuda_source: "",
    device_fns: &[],
    params: &[],
    array_names: &[],
    checked: true,
    proven: None,
    uses_barrier: false,
    shared_bytes: 0,
    cpu: panics_cpu,
};

fn panics_cpu(__b: &BlockCtx, _: &CpuArgs) {
    __b.for_each_thread(|__t| {
        if __t.block_idx().x == 2 && __t.thread_idx().x == 3 {
            panic!("attempt to divide by zero");
        }
    });
}

/// A twin that calls `sync_threads()` although its INFO says it does not.
const UNDECLARED_BARRIER: KernelInfo = KernelInfo {
    name: "undeclared_barrier",
    uses_barrier: false,
    cpu: undeclared_barrier_cpu,
    ..PANICS
};

fn undeclared_barrier_cpu(__b: &BlockCtx, _: &CpuArgs) {
    __b.for_each_thread(|__t| __t.sync_threads());
}

fn oob(e: Error) -> OutOfBounds {
    match e {
        Error::IndexOutOfBounds(b) => *b,
        other => panic!("expected an out-of-bounds error, got: {other}"),
    }
}

#[test]
fn block_reduction_with_shared_memory_and_barriers() {
    let dev = cpu();
    let n = 10_000;
    let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let input = Array::from_vec_on(data.clone(), n, &dev).unwrap();
    let blocks = n.div_ceil(256);
    let mut partial = Array::<f32>::zeros_on(blocks, &dev).unwrap();
    launch!(block_sum[blocks, 256](&input, &mut partial)).unwrap();
    let partial = partial.to_vec().unwrap();
    for (b, p) in partial.iter().enumerate() {
        let expect: f32 = data[b * 256..((b + 1) * 256).min(n)].iter().sum();
        assert_eq!(*p, expect, "block {b}");
    }
    assert_eq!(partial.iter().sum::<f32>(), data.iter().sum::<f32>());
}

#[test]
fn threads_that_returned_count_as_arrived_at_barriers() {
    let dev = cpu();
    let mut out = Array::<u32>::zeros_on(64 * 3, &dev).unwrap();
    gpukit::__private::launch(&EARLY_EXIT, (3, 64), vec![KernelArg::array_mut(&mut out)]).unwrap();
    let out = out.to_vec().unwrap();
    for (i, v) in out.iter().enumerate() {
        // Block 0 only (ids < 64) writes, at even threads, having seen the 32 even flags.
        let expect = if i < 64 && i % 2 == 0 { 32 } else { 0 };
        assert_eq!(*v, expect, "out[{i}]");
    }
    // One thread per block: its barriers never wait.
    let mut one = Array::<u32>::zeros_on(1, &dev).unwrap();
    gpukit::__private::launch(&EARLY_EXIT, (3, 1), vec![KernelArg::array_mut(&mut one)]).unwrap();
    assert_eq!(one.to_vec().unwrap(), [1]);
}

#[test]
fn atomics_histogram() {
    let dev = cpu();
    let n = 100_003usize;
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let arr = Array::from_vec_on(data.clone(), n, &dev).unwrap();
    let mut bins = Array::<u32>::zeros_on(16, &dev).unwrap();
    let mut total = Array::<f32>::zeros_on(1, &dev).unwrap();
    gpukit::__private::launch(
        &HISTOGRAM,
        (n.div_ceil(128), 128),
        vec![
            KernelArg::array(&arr),
            KernelArg::array_mut(&mut bins),
            KernelArg::array_mut(&mut total),
        ],
    )
    .unwrap();
    let mut expect = [0u32; 16];
    data.iter().for_each(|&d| expect[d as usize % 16] += 1);
    assert_eq!(bins.to_vec().unwrap(), expect);
    assert_eq!(total.to_vec().unwrap(), [n as f32 * 0.5]);
}

#[test]
fn out_of_bounds_error_names_kernel_array_index_thread_and_block() {
    let dev = cpu();
    let x = Array::<f32>::ones_on(1000, &dev).unwrap();
    let mut y = Array::<f32>::ones_on(1000, &dev).unwrap();
    // 4 x 256 = 1024 threads for 1000 elements: threads 232.. of block 3 are out of range.
    let e = gpukit::__private::launch(
        &AXPY,
        (4, 256),
        vec![
            KernelArg::scalar(2.0f32),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ],
    )
    .unwrap_err();
    let b = oob(e.clone());
    assert_eq!(b.kernel, "axpy");
    assert_eq!(b.array, "x");
    assert_eq!(b.len, 1000);
    assert_eq!(b.axis, 0);
    assert_eq!(b.block, [3, 0, 0]);
    assert!(b.thread[0] >= 232 && b.thread[1..] == [0, 0], "{b:?}");
    assert_eq!(b.index, 3 * 256 + b.thread[0] as u64);
    let text = e.to_string();
    assert!(
        text.contains("axpy") && text.contains("x[") && text.contains("length 1000"),
        "{text}"
    );
    // Threads in range did their work; the launch after the error works.
    assert!(y.to_vec().unwrap().iter().all(|&v| v == 3.0));
    gpukit::__private::launch(
        &AXPY,
        (4, 250),
        vec![
            KernelArg::scalar(1.0f32),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ],
    )
    .unwrap();
    assert!(y.to_vec().unwrap().iter().all(|&v| v == 4.0));
}

#[test]
fn out_of_bounds_in_shared_arrays_and_views() {
    let dev = cpu();
    // 512 threads: thread 256 writes tile[256] (the shared array is 256 long).
    let input = Array::<f32>::ones_on(512, &dev).unwrap();
    let mut partial = Array::<f32>::zeros_on(1, &dev).unwrap();
    let b = oob(launch!(block_sum[1, 512](&input, &mut partial)).unwrap_err());
    assert_eq!((b.array.as_str(), b.len, b.block), ("tile", 256, [0, 0, 0]));
    assert!(b.index >= 256 && b.index == b.thread[0] as u64, "{b:?}");

    // A 3x5 matrix into a 5x2 output: out[[c, r]] with r = 2 is out of range on axis 1.
    let a = Array::<i32>::from_vec_on((0..15).collect(), (3, 5), &dev).unwrap();
    let mut out = Array::<i32>::zeros_on((5, 2), &dev).unwrap();
    let e = gpukit::__private::launch(
        &TRANSPOSE,
        ((1, 1), (4, 8)),
        vec![KernelArg::array(&a), KernelArg::array_mut(&mut out)],
    )
    .unwrap_err();
    let b = oob(e);
    assert_eq!((b.kernel.as_str(), b.array.as_str()), ("transpose", "out"));
    assert_eq!((b.index, b.len, b.axis), (2, 2, 1));
    assert_eq!(b.thread[0], 2);
}

#[test]
fn views_on_a_2d_grid() {
    let dev = cpu();
    let a = Array::<i32>::from_vec_on((0..12).collect(), (3, 4), &dev).unwrap();
    let mut out = Array::<i32>::zeros_on((4, 3), &dev).unwrap();
    gpukit::__private::launch(
        &TRANSPOSE,
        ((2, 2), (2, 2)),
        vec![KernelArg::array(&a), KernelArg::array_mut(&mut out)],
    )
    .unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
    );
}

#[test]
fn launch_configuration_is_validated() {
    let dev = cpu();
    let input = Array::<f32>::ones_on(8, &dev).unwrap();
    let mut partial = Array::<f32>::zeros_on(8, &dev).unwrap();
    let reason = |r: gpukit::Result<()>| match r.unwrap_err() {
        Error::LaunchConfig { kernel, reason } => {
            assert_eq!(kernel, "block_sum");
            reason
        }
        other => panic!("expected a launch configuration error, got: {other}"),
    };
    assert!(reason(launch!(block_sum[0, 32](&input, &mut partial))).contains("zero"));
    assert!(reason(launch!(block_sum[1, 1025](&input, &mut partial))).contains("1025"));
    assert!(reason(launch!(block_sum[1, (32, 64)](&input, &mut partial))).contains("2048"));
    assert!(reason(launch!(block_sum[(1, 70000), 32](&input, &mut partial))).contains("limit"));
    assert!(reason(launch!(block_sum[1, (1, 1, 65)](&input, &mut partial))).contains("limit"));
    assert!(reason(launch!(block_sum[-2, 32](&input, &mut partial))).contains("-2"));
    // Valid forms: integers of any type, 2- and 3-tuples.
    let blocks: usize = 2;
    launch!(block_sum[blocks, 256u32](&input, &mut partial)).unwrap();
    launch!(block_sum[(2, 1), (256, 1, 1)](&input, &mut partial)).unwrap();
}

#[test]
fn arguments_are_checked_against_the_signature() {
    let dev = cpu();
    let x = Array::<f32>::ones_on(4, &dev).unwrap();
    let mut y = Array::<f32>::ones_on(4, &dev).unwrap();
    let xi = Array::<i32>::ones_on(4, &dev).unwrap();
    let mut yi = Array::<i32>::ones_on(4, &dev).unwrap();
    let arg_err = |r: gpukit::Result<()>| match r.unwrap_err() {
        Error::Argument {
            kernel,
            param,
            reason,
        } => (kernel, param, reason),
        other => panic!("expected an argument error, got: {other}"),
    };
    // A 1-D array for a 2-D view.
    let (k, p, why) = arg_err(gpukit::__private::launch(
        &TRANSPOSE,
        (1, 1),
        vec![KernelArg::array(&xi), KernelArg::array_mut(&mut yi)],
    ));
    assert_eq!((k.as_str(), p.as_str()), ("transpose", "a"));
    assert!(why.contains("2-d"), "{why}");
    // Read-only array for a `&mut` parameter.
    let (_, p, why) = arg_err(gpukit::__private::launch(
        &AXPY,
        (1, 4),
        vec![
            KernelArg::scalar(1.0f32),
            KernelArg::array(&x),
            KernelArg::array(&y),
        ],
    ));
    assert_eq!(p, "y");
    assert!(why.contains("&mut"), "{why}");
    // Wrong scalar type, array for a scalar, wrong count.
    let (_, p, why) = arg_err(gpukit::__private::launch(
        &AXPY,
        (1, 4),
        vec![
            KernelArg::scalar(1.0f64),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ],
    ));
    assert_eq!(p, "a");
    assert!(why.contains("float32") && why.contains("float64"), "{why}");
    let (_, p, _) = arg_err(gpukit::__private::launch(
        &AXPY,
        (1, 4),
        vec![
            KernelArg::array(&x),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ],
    ));
    assert_eq!(p, "a");
    let (_, _, why) = arg_err(gpukit::__private::launch(
        &AXPY,
        (1, 4),
        vec![KernelArg::scalar(1.0f32)],
    ));
    assert!(why.contains("takes 3 argument(s) but 1"), "{why}");
}

#[test]
fn host_arrays_are_used_and_written_back() {
    cpu();
    // ndarray (C order), Vec and slices.
    let input = ndarray::Array1::from_iter((0..300).map(|i| i as f32));
    let mut partial = vec![0.0f32; 2];
    launch!(block_sum[2, 256](&input, &mut partial)).unwrap();
    assert_eq!(
        partial,
        [(0..256).sum::<i32>() as f32, (256..300).sum::<i32>() as f32]
    );
    let data: Vec<f32> = vec![1.0; 10];
    let mut part = [0.0f32; 1];
    launch!(block_sum[1, 16](&data[..], &mut part[..])).unwrap();
    assert_eq!(part, [10.0]);

    // A non-contiguous 2-D ndarray (a transposed view) for both parameters of `transpose`.
    let a = ndarray::Array2::from_shape_fn((4, 3), |(i, j)| (10 * i + j) as i32);
    let at = a.t(); // 3x4, not C-contiguous
    let mut out = ndarray::Array2::<i32>::zeros((3, 4));
    let mut out_t = out.view_mut().reversed_axes(); // 4x3 view, not C-contiguous
    gpukit::__private::launch(
        &TRANSPOSE,
        ((1, 1), (4, 4)),
        vec![
            SliceArg::<i32>::into_kernel_arg(&at),
            SliceMutArg::<i32>::into_kernel_arg(&mut out_t),
        ],
    )
    .unwrap();
    // out_t[[c, r]] = at[[r, c]] = a[[c, r]], so out = a transposed.
    assert_eq!(out, a.t());
}

#[test]
fn a_panicking_twin_becomes_an_error_naming_thread_and_block() {
    cpu();
    let e = gpukit::__private::launch(&PANICS, (4, 8), vec![]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("panics") && text.contains("divide by zero"),
        "{text}"
    );
    assert!(
        text.contains("thread (3, 0, 0) of block (2, 0, 0)"),
        "{text}"
    );
}

#[test]
fn a_barrier_in_a_kernel_not_marked_uses_barrier_is_an_error() {
    cpu();
    let e = gpukit::__private::launch(&UNDECLARED_BARRIER, (1, 4), vec![]).unwrap_err();
    assert!(e.to_string().contains("uses_barrier"), "{e}");
    // One thread per block needs no barrier.
    gpukit::__private::launch(&UNDECLARED_BARRIER, (3, 1), vec![]).unwrap();
}

#[test]
fn raw_cuda_needs_a_gpu() {
    let e = Module::from_cuda_on("extern \"C\" __global__ void k() {}", &Device::Cpu).unwrap_err();
    assert!(matches!(e, Error::NeedsGpu { .. }), "{e}");
}

#[test]
fn profile_times_cpu_launches() {
    let dev = cpu();
    // A kernel of its own: the other tests launch theirs concurrently.
    const PROFILED: KernelInfo = KernelInfo {
        name: "profiled",
        ..AXPY
    };
    let x = Array::<f32>::ones_on(1024, &dev).unwrap();
    let mut y = Array::<f32>::zeros_on(1024, &dev).unwrap();
    gpukit::profile::start();
    for _ in 0..3 {
        let args = vec![
            KernelArg::scalar(1.0f32),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ];
        gpukit::__private::launch(&PROFILED, (4, 256), args).unwrap();
    }
    let records = gpukit::profile::stop().unwrap();
    let r = records
        .iter()
        .find(|r| r.kernel == "profiled")
        .expect("profiled kernel");
    assert_eq!((r.calls, r.device), (3, Device::Cpu));
    assert!(r.total_ms > 0.0 && r.min_ms <= r.max_ms);
}

#[test]
fn generated_sources_are_assembled() {
    let src = block_sum.source();
    assert!(src.contains("extern \"C\" __global__ void block_sum"));
    assert!(!src.contains("@gpukit-device-fns"));
}

#[test]
fn handwritten_cuda_source_compiles_with_nvrtc() {
    cpu();
    if !gpukit::testing::nvrtc_or_skip() {
        return;
    }
    match block_sum.ptx() {
        Ok(ptx) => assert!(ptx.contains(".entry block_sum"), "{ptx}"),
        Err(e) => panic!("{e}"),
    }
}

/// A barrier kernel whose thread 5 panics while the others wait at the barrier.
const PANICS_AT_BARRIER: KernelInfo = KernelInfo {
    name: "panics_at_barrier",
    uses_barrier: true,
    cpu: panics_at_barrier_cpu,
    ..PANICS
};

fn panics_at_barrier_cpu(__b: &BlockCtx, _: &CpuArgs) {
    __b.run_cooperative(|__t| {
        __t.sync_threads();
        if __t.thread_idx().x == 5 {
            panic!("boom");
        }
        __t.sync_threads();
    });
}

#[test]
fn a_panic_among_suspended_coroutines_is_an_error_and_later_launches_work() {
    let dev = cpu();
    let e = gpukit::__private::launch(&PANICS_AT_BARRIER, (2, 64), vec![]).unwrap_err();
    assert!(
        e.to_string().contains("boom") && e.to_string().contains("thread (5, 0, 0)"),
        "{e}"
    );
    // The worker threads' coroutine stacks are still usable.
    let input = Array::<f32>::ones_on(4096, &dev).unwrap();
    let mut partial = Array::<f32>::zeros_on(16, &dev).unwrap();
    launch!(block_sum[16, 256](&input, &mut partial)).unwrap();
    assert_eq!(partial.to_vec().unwrap(), [256.0; 16]);
}
