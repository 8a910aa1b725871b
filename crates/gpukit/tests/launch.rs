//! Launch paths on a CUDA GPU, compared with the CPU backend: device arrays (slices, views,
//! scalars, shared memory and barriers, atomics), host arrays, unchecked kernels, device
//! mismatches, profiling, and the host overhead of one launch.
//!
//! Every test skips (with a message) where no CUDA GPU is usable. The kernels are written by
//! hand as `#[kernel]` generates them (docs/ARCHITECTURE.md, "The kernel ABI").
//!
//! Why this file is long: every launch-path check (configurations, argument kinds, errors) with the kernels they need, one test each.

use gpukit::__private::{
    atomic_add, launch, BlockCtx, CpuArgs, DType, KernelArg, KernelInfo, ParamInfo, ParamKind,
    SliceArg, SliceMutArg,
};
use gpukit::prelude::*;
use std::time::Instant;

macro_rules! get {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return,
        }
    };
}

/// The bounds-check helper the generated CUDA code uses (records the first failure, returns).
macro_rules! gk_prelude {
    () => {
        r#"
#define GK_OOB(id, i, n, ax) do { \
    if (atomicCAS(__gk_err, 0ull, 1ull) == 0ull) { \
        __gk_err[1] = (id); __gk_err[2] = (i); __gk_err[3] = (n); __gk_err[4] = (ax); \
        __gk_err[5] = threadIdx.x; __gk_err[6] = threadIdx.y; __gk_err[7] = threadIdx.z; \
        __gk_err[8] = blockIdx.x; __gk_err[9] = blockIdx.y; __gk_err[10] = blockIdx.z; \
    } \
    return; } while (0)
#define GK_GRID1 ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x)
"#
    };
}

// The GPU, held for the whole test: profiling sessions and timings are process-wide, so GPU
// tests do not run at the same time. Skips as gpukit::testing says.
use gpukit::testing::serial_gpu_or_skip as gpu;

const fn p(name: &'static str, kind: ParamKind, dtype: DType, ndim: usize) -> ParamInfo {
    ParamInfo {
        name,
        kind,
        dtype,
        ndim,
    }
}

/// `fn axpy(a: f32, x: &[f32], y: &mut [f32]) { let i = grid(1); y[i] = a * x[i] + y[i]; }`
const AXPY: KernelInfo = KernelInfo {
    name: "axpy",
    rust_source: "",
    cuda_source: concat!(
        gk_prelude!(),
        r#"
extern "C" __global__ void axpy(float a, const float* x, unsigned long long x_len,
                                float* y, unsigned long long y_len, unsigned long long* __gk_err) {
    unsigned long long i = GK_GRID1;
    if (i >= x_len) GK_OOB(0, i, x_len, 0);
    float xv = x[i];
    if (i >= y_len) GK_OOB(1, i, y_len, 0);
    y[i] = __fmul_rn(a, xv) + y[i];
}
"#
    ),
    device_fns: &[],
    params: &[
        p("a", ParamKind::Scalar, DType::F32, 0),
        p("x", ParamKind::Slice, DType::F32, 1),
        p("y", ParamKind::SliceMut, DType::F32, 1),
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
        let xv = get!(x.get(i, __t));
        let v = a * xv + get!(y.get(i, __t));
        get!(y.set(i, v, __t));
    });
}

/// `#[kernel(unchecked)] fn axpy_unchecked(a: f32, x: &[f32], y: &mut [f32])` with an
/// `if i < y.len()` guard: no error record parameter.
const AXPY_UNCHECKED: KernelInfo = KernelInfo {
    name: "axpy_unchecked",
    cuda_source: concat!(
        gk_prelude!(),
        r#"
extern "C" __global__ void axpy_unchecked(float a, const float* x, unsigned long long x_len,
                                          float* y, unsigned long long y_len) {
    unsigned long long i = GK_GRID1;
    if (i < y_len) { y[i] = __fmul_rn(a, x[i]) + y[i]; }
}
"#
    ),
    checked: false,
    proven: None,
    cpu: axpy_unchecked_cpu,
    ..AXPY
};

fn axpy_unchecked_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let a = __a.scalar::<f32>(0);
    let x = __a.slice::<f32>(1);
    let y = __a.slice_mut::<f32>(2);
    __b.for_each_thread(|__t| {
        let i =
            __t.block_idx().x as usize * __t.block_dim().x as usize + __t.thread_idx().x as usize;
        if i < y.len() {
            unsafe { *y.ptr_unchecked(i) = a * x.get_unchecked(i) + y.get_unchecked(i) };
        }
    });
}

/// `fn transpose(a: &View2<i32>, out: &mut View2<i32>)`:
/// `let (r, c) = grid2(); if r < a.shape(0) && c < a.shape(1) { out[[c, r]] = a[[r, c]]; }`
const TRANSPOSE: KernelInfo = KernelInfo {
    name: "transpose",
    rust_source: "",
    cuda_source: concat!(
        gk_prelude!(),
        r#"
extern "C" __global__ void transpose(const int* a, unsigned long long a_d0, unsigned long long a_d1,
                                     int* out, unsigned long long out_d0, unsigned long long out_d1,
                                     unsigned long long* __gk_err) {
    unsigned long long r = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long c = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (r < a_d0 && c < a_d1) {
        int v = a[r * a_d1 + c];
        if (c >= out_d0) GK_OOB(1, c, out_d0, 0);
        if (r >= out_d1) GK_OOB(1, r, out_d1, 1);
        out[c * out_d1 + r] = v;
    }
}
"#
    ),
    device_fns: &[],
    params: &[
        p("a", ParamKind::View, DType::I32, 2),
        p("out", ParamKind::ViewMut, DType::I32, 2),
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

/// `fn histogram(data: &[u32], bins: &mut [u32], total: &mut [f32])` with atomics.
const HISTOGRAM: KernelInfo = KernelInfo {
    name: "histogram",
    rust_source: "",
    cuda_source: concat!(
        gk_prelude!(),
        r#"
extern "C" __global__ void histogram(const unsigned int* data, unsigned long long data_len,
                                     unsigned int* bins, unsigned long long bins_len,
                                     float* total, unsigned long long total_len,
                                     unsigned long long* __gk_err) {
    unsigned long long i = GK_GRID1;
    if (i < data_len) {
        unsigned long long bin = data[i] % bins_len;
        if (bin >= bins_len) GK_OOB(1, bin, bins_len, 0);
        atomicAdd(&bins[bin], 1u);
        if (0ull >= total_len) GK_OOB(2, 0ull, total_len, 0);
        atomicAdd(&total[0], 0.5f);
    }
}
"#
    ),
    device_fns: &[],
    params: &[
        p("data", ParamKind::Slice, DType::U32, 1),
        p("bins", ParamKind::SliceMut, DType::U32, 1),
        p("total", ParamKind::SliceMut, DType::F32, 1),
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

/// `fn block_sum(input: &[f32], partial: &mut [f32])`: shared memory and barriers.
const BLOCK_SUM: KernelInfo = KernelInfo {
    name: "block_sum",
    rust_source: "",
    cuda_source: concat!(
        gk_prelude!(),
        r#"
extern "C" __global__ void block_sum(const float* input, unsigned long long input_len,
                                     float* partial, unsigned long long partial_len,
                                     unsigned long long* __gk_err) {
    __shared__ float tile[256];
    unsigned long long t = threadIdx.x;
    unsigned long long i = GK_GRID1;
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
"#
    ),
    device_fns: &[],
    params: &[
        p("input", ParamKind::Slice, DType::F32, 1),
        p("partial", ParamKind::SliceMut, DType::F32, 1),
    ],
    array_names: &["input", "partial", "tile"],
    checked: true,
    proven: None,
    uses_barrier: true,
    shared_bytes: 1024,
    cpu: block_sum_cpu,
};

fn block_sum_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let input = __a.slice::<f32>(0);
    let partial = __a.slice_mut::<f32>(1);
    __b.run_cooperative(|__t| {
        let tile = __t.shared::<f32>(0, 256, 2);
        let t = __t.thread_idx().x as usize;
        let i = __t.block_idx().x as usize * __t.block_dim().x as usize + t;
        let v = if i < input.len() {
            get!(input.get(i, __t))
        } else {
            0.0
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

/// Deterministic pseudo-random numbers (xorshift).
fn noise(n: usize, seed: u64) -> Vec<u32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as u32
        })
        .collect()
}

/// Runs `axpy` on `dev` and returns `y`.
fn run_axpy(info: &KernelInfo, dev: &Device, x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    let n = x.len();
    let xd = Array::from_vec_on(x.to_vec(), n, dev).unwrap();
    let mut yd = Array::from_vec_on(y.to_vec(), n, dev).unwrap();
    launch(
        info,
        (n.div_ceil(128).max(1), 128),
        vec![
            KernelArg::scalar(a),
            KernelArg::array(&xd),
            KernelArg::array_mut(&mut yd),
        ],
    )
    .unwrap_or_else(|e| panic!("{} on {dev} with n = {n}: {e}", info.name));
    yd.to_vec().unwrap()
}

#[test]
fn slices_and_scalars_match_the_cpu_on_many_sizes() {
    let Some((gpu, _serial)) = gpu() else { return };
    for (k, n) in [1usize, 127, 128, 129, 1000, 4096, 100_003]
        .into_iter()
        .enumerate()
    {
        let x: Vec<f32> = noise(n, k as u64 + 1)
            .iter()
            .map(|&v| (v % 1000) as f32 / 7.0)
            .collect();
        let y: Vec<f32> = noise(n, k as u64 + 99)
            .iter()
            .map(|&v| (v % 1000) as f32)
            .collect();
        // Exactly n threads (no out-of-range thread) for the checked kernel.
        let xd = Array::from_vec_on(x.clone(), n, &gpu).unwrap();
        let mut yd = Array::from_vec_on(y.clone(), n, &gpu).unwrap();
        launch(
            &AXPY,
            (n, 1),
            vec![
                KernelArg::scalar(1.5f32),
                KernelArg::array(&xd),
                KernelArg::array_mut(&mut yd),
            ],
        )
        .unwrap();
        let xc = Array::from_vec_on(x.clone(), n, &Device::Cpu).unwrap();
        let mut yc = Array::from_vec_on(y.clone(), n, &Device::Cpu).unwrap();
        launch(
            &AXPY,
            (n, 1),
            vec![
                KernelArg::scalar(1.5f32),
                KernelArg::array(&xc),
                KernelArg::array_mut(&mut yc),
            ],
        )
        .unwrap();
        assert_eq!(yd.to_vec().unwrap(), yc.to_vec().unwrap(), "n = {n}");
        assert_eq!(
            run_axpy(&AXPY_UNCHECKED, &gpu, &x, &y, -2.0),
            run_axpy(&AXPY_UNCHECKED, &Device::Cpu, &x, &y, -2.0)
        );
    }
}

#[test]
fn views_on_2d_grids_match_the_cpu() {
    let Some((gpu, _serial)) = gpu() else { return };
    for (rows, cols) in [(1usize, 1usize), (3, 5), (17, 33), (64, 64), (300, 7)] {
        let data: Vec<i32> = noise(rows * cols, 5).iter().map(|&v| v as i32).collect();
        let mut results = Vec::new();
        for dev in [gpu, Device::Cpu] {
            let a = Array::from_vec_on(data.clone(), (rows, cols), &dev).unwrap();
            let mut out = Array::<i32>::zeros_on((cols, rows), &dev).unwrap();
            launch!(
                transpose_kernel[(rows.div_ceil(8), cols.div_ceil(8)), (8, 8)](&a, &mut out)
            )
            .unwrap();
            results.push(out.to_vec().unwrap());
        }
        let expect: Vec<i32> = (0..cols * rows)
            .map(|k| data[(k % rows) * cols + k / rows])
            .collect();
        assert_eq!(results[0], expect, "{rows}x{cols} on the GPU");
        assert_eq!(results[1], expect, "{rows}x{cols} on the CPU");
    }
}

/// A `launch` method as `#[kernel]` generates it, for `launch!` with views.
#[allow(non_camel_case_types)]
struct transpose_kernel;

impl transpose_kernel {
    fn launch<'a, A0: SliceArg<'a, i32>, A1: SliceMutArg<'a, i32>>(
        &self,
        config: impl gpukit::__private::IntoLaunchConfig,
        a: A0,
        out: A1,
    ) -> gpukit::Result<()> {
        launch(
            &TRANSPOSE,
            config,
            vec![a.into_kernel_arg(), out.into_kernel_arg()],
        )
    }
}

#[test]
fn shared_memory_barriers_and_atomics_match_the_cpu() {
    let Some((gpu, _serial)) = gpu() else { return };
    let n = 50_001usize;
    let data = noise(n, 42);
    let values: Vec<f32> = data.iter().map(|&v| (v % 16) as f32).collect();
    let blocks = n.div_ceil(256);
    let mut sums = Vec::new();
    let mut hists = Vec::new();
    for dev in [gpu, Device::Cpu] {
        let input = Array::from_vec_on(values.clone(), n, &dev).unwrap();
        let mut partial = Array::<f32>::zeros_on(blocks, &dev).unwrap();
        launch(
            &BLOCK_SUM,
            (blocks, 256),
            vec![KernelArg::array(&input), KernelArg::array_mut(&mut partial)],
        )
        .unwrap();
        sums.push(partial.to_vec().unwrap());

        let d = Array::from_vec_on(data.clone(), n, &dev).unwrap();
        let mut bins = Array::<u32>::zeros_on(32, &dev).unwrap();
        let mut total = Array::<f32>::zeros_on(1, &dev).unwrap();
        launch(
            &HISTOGRAM,
            (n.div_ceil(128), 128),
            vec![
                KernelArg::array(&d),
                KernelArg::array_mut(&mut bins),
                KernelArg::array_mut(&mut total),
            ],
        )
        .unwrap();
        hists.push((bins.to_vec().unwrap(), total.to_vec().unwrap()));
    }
    // Sums of small integers in f32 are exact in any order.
    assert_eq!(sums[0], sums[1]);
    assert_eq!(hists[0], hists[1]);
    assert_eq!(hists[0].0.iter().sum::<u32>() as usize, n);
    assert_eq!(hists[0].1, [n as f32 * 0.5]);
}

#[test]
fn host_arrays_are_copied_in_and_out() {
    let Some((gpu, _serial)) = gpu() else { return };
    set_default_device(gpu);
    // No gpukit array among the arguments: the launch goes to the default device (the GPU).
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut y = ndarray::Array1::<f32>::from_elem(1000, 1.0);
    launch(
        &AXPY,
        (8, 125),
        vec![
            KernelArg::scalar(2.0f32),
            SliceArg::<f32>::into_kernel_arg(&x),
            SliceMutArg::<f32>::into_kernel_arg(&mut y),
        ],
    )
    .unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 2.0 * i as f32 + 1.0));

    // A non-contiguous ndarray for a writable view: staged, copied back, written back.
    let a = ndarray::Array2::from_shape_fn((5, 3), |(i, j)| (10 * i + j) as i32);
    let mut out = ndarray::Array2::<i32>::zeros((5, 3));
    {
        let mut out_t = out.view_mut().reversed_axes(); // 3x5, not C-contiguous
        launch!(transpose_kernel[(1, 1), (8, 8)](&a, &mut out_t)).unwrap();
    }
    assert_eq!(out, a);

    // Mixed: a device array and a host array.
    let xd = Array::from_vec_on(x.clone(), 1000, &gpu).unwrap();
    let mut yh = vec![0.0f32; 1000];
    launch(
        &AXPY,
        (1000, 1),
        vec![
            KernelArg::scalar(1.0f32),
            KernelArg::array(&xd),
            SliceMutArg::<f32>::into_kernel_arg(&mut yh),
        ],
    )
    .unwrap();
    assert_eq!(yh, x);
}

#[test]
fn arrays_on_different_devices_are_refused() {
    let Some((gpu, _serial)) = gpu() else { return };
    let x = Array::<f32>::ones_on(10, &gpu).unwrap();
    let mut y = Array::<f32>::ones_on(10, &Device::Cpu).unwrap();
    let e = launch(
        &AXPY,
        (1, 10),
        vec![
            KernelArg::scalar(1.0f32),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ],
    )
    .unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch(_)), "{e}");
    assert!(
        e.to_string().contains("cuda:0") && e.to_string().contains("cpu"),
        "{e}"
    );
    // Configuration errors come before any device work.
    let mut y = Array::<f32>::ones_on(10, &gpu).unwrap();
    let e = launch(
        &AXPY,
        (1, 2048),
        vec![
            KernelArg::scalar(1.0f32),
            KernelArg::array(&x),
            KernelArg::array_mut(&mut y),
        ],
    )
    .unwrap_err();
    assert!(matches!(e, Error::LaunchConfig { .. }), "{e}");
}

#[test]
fn profile_times_gpu_launches_with_events() {
    let Some((gpu, _serial)) = gpu() else { return };
    let n = 1 << 20;
    let x = Array::<f32>::ones_on(n, &gpu).unwrap();
    let mut y = Array::<f32>::ones_on(n, &gpu).unwrap();
    gpukit::profile::start();
    for _ in 0..5 {
        launch(
            &AXPY,
            (n / 256, 256),
            vec![
                KernelArg::scalar(1.0f32),
                KernelArg::array(&x),
                KernelArg::array_mut(&mut y),
            ],
        )
        .unwrap();
    }
    let records = gpukit::profile::stop().unwrap();
    let r = records
        .iter()
        .find(|r| r.kernel == "axpy")
        .expect("axpy profiled");
    assert_eq!((r.calls, r.device), (5, gpu));
    assert!(r.min_ms > 0.0 && r.min_ms <= r.max_ms, "{r}");
    println!("{r}");
    assert_eq!(y.to_vec().unwrap()[0], 6.0);
}

/// Host time of one asynchronous launch, reported (no assertion on the number).
///
/// Launches are timed in batches of 256 with the device synchronised between batches, outside
/// the timed region, so the launch queue never fills and the host never waits for the GPU;
/// the median batch is reported. The GPU's own rate (many back-to-back launches and one
/// synchronisation) is reported separately. Meaningful numbers need a release build:
/// `cargo test -p gpukit --release --test launch host_overhead -- --nocapture`, or the table
/// of `cargo run -p gpukit --release --example launch_overhead`.
#[test]
fn host_overhead_per_launch_is_measured() {
    let Some((gpu, _serial)) = gpu() else { return };
    let x = Array::<f32>::ones_on(256, &gpu).unwrap();
    let mut y = Array::<f32>::zeros_on(256, &gpu).unwrap();
    for (name, info) in [("checked", &AXPY), ("unchecked", &AXPY_UNCHECKED)] {
        let mut go = || {
            launch(
                info,
                (1, 256),
                [
                    KernelArg::scalar(1.0f32),
                    KernelArg::array(&x),
                    KernelArg::array_mut(&mut y),
                ],
            )
            .unwrap()
        };
        let (host, sustained) = overhead(&mut go, &mut || gpu.synchronize().unwrap());
        println!(
            "launch overhead (gpukit {name}): {host:.2} us host time per launch (median of {BATCHES} batches of {BATCH}), {sustained:.2} us per launch sustained ({SUSTAINED} back to back, GPU included){}",
            build_note()
        );
    }
    raw_cudarc_overhead();
}

/// Launches per timed batch: far below CUDA's launch queue depth (about a thousand).
const BATCH: usize = 256;
/// Timed batches.
const BATCHES: usize = 100;
/// Back-to-back launches for the sustained rate.
const SUSTAINED: usize = 20_000;

/// Median host microseconds per launch over batches, and microseconds per launch of a long
/// back-to-back run including the final synchronisation.
fn overhead(launch: &mut dyn FnMut(), sync: &mut dyn FnMut()) -> (f64, f64) {
    for _ in 0..BATCH {
        launch();
    }
    sync();
    let mut batches: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..BATCH {
                launch();
            }
            let host = t0.elapsed().as_secs_f64() * 1e6 / BATCH as f64;
            sync();
            host
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    let t0 = Instant::now();
    for _ in 0..SUSTAINED {
        launch();
    }
    sync();
    let sustained = t0.elapsed().as_secs_f64() * 1e6 / SUSTAINED as f64;
    (batches[BATCHES / 2], sustained)
}

fn build_note() -> &'static str {
    if cfg!(debug_assertions) {
        " [debug build: not representative]"
    } else {
        ""
    }
}

/// The same unchecked kernel launched with cudarc directly (its builder, event tracking off),
/// as the reference for the numbers above.
fn raw_cudarc_overhead() {
    use cudarc::driver::{CudaContext, LaunchConfig as RawConfig, PushKernelArg};
    set_default_device(Device::cuda(0).unwrap());
    let ptx = gpukit::__private::ptx(&AXPY_UNCHECKED).unwrap();
    let ctx = CudaContext::new(0).unwrap();
    // SAFETY: only this function's stream uses the buffers below.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)).unwrap();
    let f = module.load_function("axpy_unchecked").unwrap();
    let x = stream.alloc_zeros::<f32>(256).unwrap();
    let mut y = stream.alloc_zeros::<f32>(256).unwrap();
    let (a, n) = (1.0f32, 256u64);
    let cfg = RawConfig {
        grid_dim: (1, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut go = || {
        let mut b = stream.launch_builder(&f);
        b.arg(&a).arg(&x).arg(&n).arg(&mut y).arg(&n);
        // SAFETY: the arguments match axpy_unchecked's signature.
        unsafe { b.launch(cfg) }.unwrap();
    };
    let (host, sustained) = overhead(&mut go, &mut || stream.synchronize().unwrap());
    println!(
        "launch overhead (raw cudarc): {host:.2} us host time per launch, {sustained:.2} us per launch sustained{}",
        build_note()
    );
}

/// Checked launches of two kernels in alternation need a new error record each: more of them
/// than the ring holds force checks, which neither lose nor repeat an error, and the first
/// error in stream order wins over a later one of another kernel.
#[test]
fn alternating_checked_kernels_wrap_the_record_ring() {
    let Some((gpu, _serial)) = gpu() else { return };
    gpukit::synchronize().unwrap();
    let x = Array::<f32>::ones_on(256, &gpu).unwrap();
    let mut y = Array::<f32>::zeros_on(256, &gpu).unwrap();
    let input = Array::<f32>::ones_on(512, &gpu).unwrap();
    let mut partial = Array::<f32>::zeros_on(2, &gpu).unwrap();
    let mut short = Array::<f32>::zeros_on(1, &gpu).unwrap();
    let axpy = |blocks: usize, y: &mut Array<f32>| {
        launch(
            &AXPY,
            (blocks, 256),
            [
                KernelArg::scalar(1.0f32),
                KernelArg::array(&x),
                KernelArg::array_mut(y),
            ],
        )
    };
    let sum = |partial: &mut Array<f32>| {
        launch(
            &BLOCK_SUM,
            (2, 256),
            [KernelArg::array(&input), KernelArg::array_mut(partial)],
        )
    };
    let oob = |e: Error| match e {
        Error::IndexOutOfBounds(b) => *b,
        other => panic!("expected an out-of-bounds error, got: {other}"),
    };
    // Clean: far more alternations than records.
    for _ in 0..1500 {
        axpy(1, &mut y).unwrap();
        sum(&mut partial).unwrap();
    }
    gpu.synchronize().unwrap();
    assert_eq!(partial.to_vec().unwrap(), [256.0, 256.0]);

    // Two kernels fail before one synchronisation: the first in stream order is reported.
    axpy(1, &mut y).unwrap();
    sum(&mut short).unwrap();
    axpy(2, &mut y).unwrap();
    let e = oob(gpu.synchronize().unwrap_err());
    assert_eq!(
        (e.kernel.as_str(), e.array.as_str(), e.index, e.len, e.block),
        ("block_sum", "partial", 1, 1, [1, 0, 0]),
        "{e}"
    );
    gpu.synchronize().unwrap();

    // An error early in a long alternating run comes out exactly once: from a forced check
    // (a later launch) or from the final synchronisation.
    axpy(2, &mut y).unwrap();
    let mut reported = Vec::new();
    for _ in 0..1500 {
        if let Err(e) = axpy(1, &mut y) {
            reported.push(oob(e));
        }
        if let Err(e) = sum(&mut partial) {
            reported.push(oob(e));
        }
    }
    if let Err(e) = gpu.synchronize() {
        reported.push(oob(e));
    }
    assert_eq!(reported.len(), 1, "{reported:?}");
    let e = &reported[0];
    assert_eq!(
        (e.kernel.as_str(), e.array.as_str(), e.len),
        ("axpy", "x", 256)
    );
    assert!((256..512).contains(&e.index) && e.block == [1, 0, 0], "{e}");
    gpu.synchronize().unwrap();
}

/// GPU time of a bandwidth-bound kernel with and without bounds checks (reported).
#[test]
fn bounds_check_cost_is_measured() {
    let Some((gpu, _serial)) = gpu() else { return };
    let n = 1 << 26;
    let x = Array::<f32>::ones_on(n, &gpu).unwrap();
    let mut y = Array::<f32>::zeros_on(n, &gpu).unwrap();
    let mut times = Vec::new();
    for info in [&AXPY, &AXPY_UNCHECKED] {
        let run = |y: &mut Array<f32>| {
            launch(
                info,
                (n / 256, 256),
                vec![
                    KernelArg::scalar(1.0f32),
                    KernelArg::array(&x),
                    KernelArg::array_mut(y),
                ],
            )
            .unwrap()
        };
        run(&mut y);
        gpukit::synchronize().unwrap();
        gpukit::profile::start();
        for _ in 0..20 {
            run(&mut y);
        }
        let r = gpukit::profile::stop().unwrap();
        let r = r.iter().find(|r| r.kernel == info.name).unwrap().clone();
        let gbs = 3.0 * 4.0 * n as f64 / (r.min_ms * 1e-3) / 1e9;
        println!("{}: best {:.3} ms, {:.0} GB/s", info.name, r.min_ms, gbs);
        times.push(r.min_ms);
    }
    println!(
        "bounds checks cost {:+.1}% on a {n}-element axpy",
        (times[0] / times[1] - 1.0) * 100.0
    );
    assert_eq!(y.to_vec().unwrap()[n - 1], 40.0 + 2.0);
}

/// Runs without a GPU too (NVRTC only): the hand-written CUDA sources above compile.
#[test]
fn handwritten_sources_compile_with_nvrtc() {
    if !gpukit::testing::nvrtc_or_skip() {
        return;
    }
    for info in [&AXPY, &AXPY_UNCHECKED, &TRANSPOSE, &HISTOGRAM, &BLOCK_SUM] {
        match gpukit::__private::ptx(info) {
            Ok(ptx) => assert!(ptx.contains(&format!(".entry {}", info.name)), "{ptx}"),
            Err(e) => panic!("{}: {e}", info.name),
        }
    }
}

/// The same launch paths through `#[kernel]` itself (the macros' generated code against this
/// runtime), GPU against CPU.
mod generated {
    use gpukit::prelude::*;

    #[kernel]
    pub fn tour(input: &[i64], output: &mut [f64]) {
        let i = grid(1);
        if i < input.len() {
            output[i] = input[i] as f64;
        }
    }

    #[kernel]
    pub fn reduce(input: &[f32], partial: &mut [f32]) {
        let tile = shared_array::<f32, 128>();
        let t = thread_idx().x as usize;
        let i = grid(1);
        tile[t] = if i < input.len() { input[i] } else { 0.0 };
        sync_threads();
        let mut s = block_dim().x as usize / 2;
        while s > 0 {
            if t < s {
                tile[t] += tile[t + s];
            }
            sync_threads();
            s /= 2;
        }
        if t == 0 {
            partial[block_idx().x as usize] = tile[0];
        }
    }

    #[kernel]
    pub fn histogram(data: &[u32], bins: &mut [u32]) {
        let start = grid(1);
        let stride = gridsize(1);
        for i in (start..data.len()).step_by(stride) {
            atomic_add(&mut bins[(data[i] % 32) as usize], 1);
        }
    }

    #[kernel]
    pub fn gray(img: &View3<u8>, out: &mut View2<f32>, scale: f32) {
        let (x, y) = grid2();
        if x < img.shape(0) && y < img.shape(1) {
            let r = img[[x, y, 0]] as f32;
            let g = img[[x, y, 1]] as f32;
            let b = img[[x, y, 2]] as f32;
            out[[x, y]] = scale * (r + g + b);
        }
    }
}

#[test]
fn generated_kernels_match_between_gpu_and_cpu() {
    use generated::*;
    let Some((gpu, _serial)) = gpu() else { return };
    let mut outs = Vec::new();
    for dev in [gpu, Device::Cpu] {
        let data = Array::arange_on(0i64, 1000, &dev).unwrap();
        let mut out = Array::<f64>::zeros_on(1000, &dev).unwrap();
        launch!(tour[4, 256](&data, &mut out)).unwrap();

        let values: Vec<f32> = noise(10_000, 3).iter().map(|&v| (v % 8) as f32).collect();
        let input = Array::from_vec_on(values, 10_000, &dev).unwrap();
        let mut partial = Array::<f32>::zeros_on(79, &dev).unwrap();
        launch!(reduce[79, 128](&input, &mut partial)).unwrap();

        let d = Array::from_vec_on(noise(100_000, 9), 100_000, &dev).unwrap();
        let mut bins = Array::<u32>::zeros_on(32, &dev).unwrap();
        launch!(histogram[16, 128](&d, &mut bins)).unwrap();

        let img = Array::from_vec_on(
            noise(30 * 20 * 3, 4).iter().map(|&v| v as u8).collect(),
            (30, 20, 3),
            &dev,
        )
        .unwrap();
        let mut g = Array::<f32>::zeros_on((30, 20), &dev).unwrap();
        launch!(gray[(4, 3), (8, 8)](&img, &mut g, 0.5)).unwrap();

        outs.push((
            out.to_vec().unwrap(),
            partial.to_vec().unwrap(),
            bins.to_vec().unwrap(),
            g.to_vec().unwrap(),
        ));
    }
    assert_eq!(outs[0].0, outs[1].0, "tour");
    assert_eq!(outs[0].1, outs[1].1, "reduce");
    assert_eq!(outs[0].2, outs[1].2, "histogram");
    assert_eq!(outs[0].3, outs[1].3, "gray");
    assert_eq!(outs[0].2.iter().sum::<u32>(), 100_000);
}

#[test]
fn generated_kernels_run_on_the_cpu() {
    use generated::*;
    let dev = Device::Cpu;
    let data = Array::arange_on(0i64, 10, &dev).unwrap();
    let mut out = Array::<f64>::zeros_on(10, &dev).unwrap();
    launch!(tour[1, 10](&data, &mut out)).unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        (0..10).map(|i| i as f64).collect::<Vec<_>>()
    );
    let input = Array::<f32>::ones_on(300, &dev).unwrap();
    let mut partial = Array::<f32>::zeros_on(3, &dev).unwrap();
    launch!(reduce[3, 128](&input, &mut partial)).unwrap();
    assert_eq!(partial.to_vec().unwrap(), [128.0, 128.0, 44.0]);
}
