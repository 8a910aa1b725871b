//! Bounds checks on the GPU: an out-of-range index becomes an error at the next
//! synchronisation naming kernel, array, index, length, thread and block; the CUDA context
//! survives and later launches work; the per-device ring of error records wraps with a forced
//! check. The CPU backend gives the same error from the launch itself.
//!
//! GPU tests skip (with a message) where no CUDA GPU is usable, or fail there with
//! `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use gpukit::__private::{
    launch, BlockCtx, CpuArgs, DType, KernelArg, KernelInfo, ParamInfo, ParamKind,
};
use gpukit::prelude::*;
use gpukit::OutOfBounds;

macro_rules! get {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return,
        }
    };
}

// The GPU, held for the whole test: errors are per device, so tests that provoke them must
// not run at the same time. Skips as gpukit::testing says.
use gpukit::testing::serial_gpu_or_skip as gpu;

/// `fn poke(out: &mut [i64], bad: u64)`: every thread writes `out[grid(1)] = 1`, and the thread
/// whose global index is `bad` writes `out[bad + out.len()]` instead.
const POKE: KernelInfo = KernelInfo {
    name: "poke",
    rust_source: "",
    cuda_source: r#"
extern "C" __global__ void poke(long long* out, unsigned long long out_len, unsigned long long bad,
                                unsigned long long* __gk_err) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long j = (i == bad) ? i + out_len : i;
    if (j >= out_len) {
        if (atomicCAS(__gk_err, 0ull, 1ull) == 0ull) {
            __gk_err[1] = 0; __gk_err[2] = j; __gk_err[3] = out_len; __gk_err[4] = 0;
            __gk_err[5] = threadIdx.x; __gk_err[6] = threadIdx.y; __gk_err[7] = threadIdx.z;
            __gk_err[8] = blockIdx.x; __gk_err[9] = blockIdx.y; __gk_err[10] = blockIdx.z;
        }
        return;
    }
    out[j] = 1;
}
"#,
    device_fns: &[],
    params: &[
        ParamInfo {
            name: "out",
            kind: ParamKind::SliceMut,
            dtype: DType::I64,
            ndim: 1,
        },
        ParamInfo {
            name: "bad",
            kind: ParamKind::Scalar,
            dtype: DType::U64,
            ndim: 0,
        },
    ],
    array_names: &["out"],
    checked: true,
    proven: None,
    uses_barrier: false,
    shared_bytes: 0,
    cpu: poke_cpu,
};

fn poke_cpu(__b: &BlockCtx, __a: &CpuArgs) {
    let out = __a.slice_mut::<i64>(0);
    let bad = __a.scalar::<u64>(1);
    __b.for_each_thread(|__t| {
        let i =
            __t.block_idx().x as usize * __t.block_dim().x as usize + __t.thread_idx().x as usize;
        let j = if i as u64 == bad { i + out.len() } else { i };
        get!(out.set(j, 1, __t));
    });
}

/// No thread out of range.
const NONE: u64 = u64::MAX;

fn poke(out: &mut Array<i64>, blocks: usize, threads: usize, bad: u64) -> gpukit::Result<()> {
    launch(
        &POKE,
        (blocks, threads),
        vec![KernelArg::array_mut(out), KernelArg::scalar(bad)],
    )
}

fn oob(e: Error) -> OutOfBounds {
    match e {
        Error::IndexOutOfBounds(b) => *b,
        other => panic!("expected an out-of-bounds error, got: {other}"),
    }
}

fn expected(index: u64) -> OutOfBounds {
    // bad = 700 with 256 threads per block: thread 188 of block 2 writes out[700 + 1024].
    OutOfBounds {
        kernel: "poke".into(),
        array: "out".into(),
        index,
        len: 1024,
        axis: 0,
        thread: [188, 0, 0],
        block: [2, 0, 0],
    }
}

#[test]
fn cpu_reports_from_the_launch() {
    let mut out = Array::<i64>::zeros_on(1024, &Device::Cpu).unwrap();
    let e = poke(&mut out, 4, 256, 700).unwrap_err();
    assert_eq!(oob(e), expected(1724));
    // The other threads wrote.
    assert_eq!(out.to_vec().unwrap().iter().sum::<i64>(), 1023);
}

#[test]
fn gpu_reports_at_synchronize_and_the_context_survives() {
    let Some((gpu, _serial)) = gpu() else { return };
    let mut out = Array::<i64>::zeros_on(1024, &gpu).unwrap();
    // Asynchronous: the launch itself succeeds.
    poke(&mut out, 4, 256, 700).unwrap();
    let e = gpu.synchronize().unwrap_err();
    let b = oob(e.clone());
    assert_eq!(b, expected(1724));
    println!("{e}");
    // Reported once.
    gpu.synchronize().unwrap();
    // The context survives: new allocations, launches and copies work.
    let mut fresh = Array::<i64>::zeros_on(1024, &gpu).unwrap();
    poke(&mut fresh, 4, 256, NONE).unwrap();
    assert_eq!(fresh.to_vec().unwrap().iter().sum::<i64>(), 1024);
    assert_eq!(out.to_vec().unwrap().iter().sum::<i64>(), 1023);
}

#[test]
fn gpu_error_names_the_launch_that_failed_among_many() {
    let Some((gpu, _serial)) = gpu() else { return };
    let mut out = Array::<i64>::zeros_on(1024, &gpu).unwrap();
    for _ in 0..10 {
        poke(&mut out, 4, 256, NONE).unwrap();
    }
    poke(&mut out, 4, 256, 700).unwrap();
    for _ in 0..10 {
        poke(&mut out, 4, 256, NONE).unwrap();
    }
    // to_vec synchronises and so reports it too.
    let b = oob(out.to_vec().unwrap_err());
    assert_eq!(b, expected(1724));
    gpukit::synchronize().unwrap();
}

#[test]
fn the_record_ring_wraps_with_a_forced_check() {
    let Some((gpu, _serial)) = gpu() else { return };
    gpukit::synchronize().unwrap();
    let mut out = Array::<i64>::zeros_on(1024, &gpu).unwrap();
    // Far more checked launches than records, no synchronisation in between, all clean.
    for _ in 0..1000 {
        poke(&mut out, 4, 256, NONE).unwrap();
    }
    gpu.synchronize().unwrap();
    // An error early in a long run comes out either from a forced check (a later launch) or
    // from the final synchronisation, and exactly once.
    poke(&mut out, 4, 256, 700).unwrap();
    let mut reported = Vec::new();
    for _ in 0..300 {
        if let Err(e) = poke(&mut out, 4, 256, NONE) {
            reported.push(oob(e));
        }
    }
    if let Err(e) = gpu.synchronize() {
        reported.push(oob(e));
    }
    assert_eq!(reported, [expected(1724)]);
    gpu.synchronize().unwrap();
}

#[test]
fn gpu_and_cpu_report_the_same_error() {
    let Some((gpu, _serial)) = gpu() else { return };
    let mut cpu_out = Array::<i64>::zeros_on(1024, &Device::Cpu).unwrap();
    let cpu_err = oob(poke(&mut cpu_out, 4, 256, 5).unwrap_err());
    let mut gpu_out = Array::<i64>::zeros_on(1024, &gpu).unwrap();
    poke(&mut gpu_out, 4, 256, 5).unwrap();
    let gpu_err = oob(gpu.synchronize().unwrap_err());
    assert_eq!(cpu_err, gpu_err);
    assert_eq!(gpu_err.thread, [5, 0, 0]);
    assert_eq!(cpu_out.to_vec().unwrap(), gpu_out.to_vec().unwrap());
}

/// The same through `#[kernel]`: the generated CUDA code fills the record this runtime reads.
mod generated {
    use gpukit::prelude::*;

    #[kernel]
    pub fn poke2d(out: &mut View2<f32>, bad_row: usize) {
        let (r, c) = grid2();
        if r < out.shape(0) && c < out.shape(1) {
            let col = if r == bad_row { c + out.shape(1) } else { c };
            out[[r, col]] = 1.0;
        }
    }

    /// Three taps per thread, then an atomic and a store: threads past `img.shape(1)` fail on
    /// axis 1 after their first store and must do neither of the later side effects.
    #[kernel]
    pub fn taps(img: &View3<f32>, out: &mut [f32], count: &mut [u32]) {
        let i = grid(1);
        if i < out.len() {
            out[i] = -1.0;
            let mut s = 0.0f32;
            for k in 0..3 {
                s += img[[0, i, k]];
            }
            atomic_add(&mut count[0], 1);
            out[i] = s;
        }
    }

    /// Row 0 reads `a[[0 - 1, c]]`: usize arithmetic wraps, so the index is `u64::MAX`.
    #[kernel]
    pub fn above(a: &View2<f32>, out: &mut View2<f32>) {
        let (c, r) = grid2();
        if r < out.shape(0) && c < out.shape(1) {
            out[[r, c]] = a[[r - 1, c]] + a[[r, c]];
        }
    }
}

#[test]
fn generated_kernels_report_the_same_error_on_both_backends() {
    use generated::poke2d;
    let mut cpu_out = Array::<f32>::zeros_on((16, 8), &Device::Cpu).unwrap();
    let cpu_err = oob(launch!(poke2d[(2, 1), (8, 8)](&mut cpu_out, 11)).unwrap_err());
    assert_eq!(
        (
            cpu_err.kernel.as_str(),
            cpu_err.array.as_str(),
            cpu_err.axis,
            cpu_err.len
        ),
        ("poke2d", "out", 1, 8)
    );
    assert_eq!(cpu_err.block, [1, 0, 0]);
    assert_eq!(cpu_err.thread[0], 3);
    let Some((gpu, _serial)) = gpu() else { return };
    let mut gpu_out = Array::<f32>::zeros_on((16, 8), &gpu).unwrap();
    launch!(poke2d[(2, 1), (8, 8)](&mut gpu_out, 11)).unwrap();
    let gpu_err = oob(gpu.synchronize().unwrap_err());
    // Which column's thread reports first may differ; everything else agrees.
    assert_eq!(
        (
            gpu_err.kernel.as_str(),
            gpu_err.array.as_str(),
            gpu_err.axis,
            gpu_err.len,
            gpu_err.block
        ),
        ("poke2d", "out", 1, 8, [1, 0, 0])
    );
    assert_eq!(gpu_err.thread[0], 3);
    assert_eq!(gpu_err.index, 8 + gpu_err.thread[1] as u64);
    assert_eq!(cpu_out.to_vec().unwrap(), gpu_out.to_vec().unwrap());
}

/// Checked loads are issued together (the error path never returns), yet a failing thread still
/// stops at the failing access: its earlier store stays, its later atomic and store do not happen.
#[test]
fn failing_threads_stop_before_later_side_effects() {
    use generated::{above, taps};
    let data: Vec<f32> = (0..300).map(|v| v as f32).collect();
    let sums: Vec<f32> = (0..100).map(|i| (9 * i + 3) as f32).collect();
    let mut devices = vec![Device::Cpu];
    let held = gpu();
    if let Some((g, _)) = &held {
        devices.push(*g);
    }
    for dev in &devices {
        let img = Array::from_vec_on(data.clone(), vec![1, 100, 3], dev).unwrap();
        let mut out = Array::<f32>::zeros_on(128, dev).unwrap();
        let mut count = Array::<u32>::zeros_on(1, dev).unwrap();
        let launched = launch!(taps[1, 128](&img, &mut out, &mut count));
        let e = oob(match dev {
            Device::Cpu => launched.unwrap_err(),
            _ => {
                launched.unwrap();
                dev.synchronize().unwrap_err()
            }
        });
        assert_eq!(
            (e.kernel.as_str(), e.array.as_str(), e.axis, e.len, e.block),
            ("taps", "img", 1, 100, [0, 0, 0]),
            "{dev:?}"
        );
        assert!(
            (100..128).contains(&e.index) && e.thread == [e.index as u32, 0, 0],
            "{e}"
        );
        let out = out.to_vec().unwrap();
        assert_eq!(&out[..100], &sums[..], "{dev:?}");
        assert!(out[100..].iter().all(|&v| v == -1.0), "{dev:?}: {out:?}");
        assert_eq!(count.to_vec().unwrap(), [100], "{dev:?}");

        let a = Array::from_vec_on((0..64).map(|v| v as f32).collect(), vec![8, 8], dev).unwrap();
        let mut out = Array::<f32>::full_on(vec![8, 8], 7.0, dev).unwrap();
        let launched = launch!(above[(1, 1), (8, 8)](&a, &mut out));
        let e = oob(match dev {
            Device::Cpu => launched.unwrap_err(),
            _ => {
                launched.unwrap();
                dev.synchronize().unwrap_err()
            }
        });
        assert_eq!(
            (e.array.as_str(), e.index, e.len, e.axis, e.thread[1]),
            ("a", u64::MAX, 8, 0, 0),
            "{dev:?}"
        );
        let out = out.to_vec().unwrap();
        assert!(out[..8].iter().all(|&v| v == 7.0), "{dev:?}: {out:?}");
        for (k, &v) in out.iter().enumerate().skip(8) {
            assert_eq!(v, (2 * k - 8) as f32, "{dev:?} at {k}");
        }
    }
    // The context survives.
    if let Some((g, _)) = &held {
        let x = Array::from_vec_on(vec![1.0f32; 10], 10, g).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![1.0f32; 10]);
    }
}

#[kernel]
fn two_loads(a: &[f32], b: &[f32], out: &mut [f32], i: usize, j: usize) {
    if grid(1) == 0 {
        out[0] = a[i] + b[j];
    }
}

/// With both operands out of range, the left one is reported, as Rust evaluates it first (C++
/// does not promise an order; the generated code sequences the two loads).
#[test]
fn the_left_of_two_bad_indices_is_reported_as_in_rust() {
    let mut devices = vec![Device::Cpu];
    let held = gpu();
    if let Some((g, _)) = &held {
        devices.push(*g);
    }
    for dev in devices {
        let a = Array::<f32>::ones_on(4, &dev).unwrap();
        let b = Array::<f32>::ones_on(8, &dev).unwrap();
        let mut out = Array::<f32>::zeros_on(1, &dev).unwrap();
        let r = launch!(two_loads[1, 32](&a, &b, &mut out, 10usize, 20usize))
            .and_then(|()| dev.synchronize());
        match r {
            Err(Error::IndexOutOfBounds(e)) => {
                assert_eq!(
                    (e.array.as_str(), e.index, e.len),
                    ("a", 10, 4),
                    "on {dev}: {e}"
                )
            }
            other => panic!("on {dev}: expected an out-of-bounds error, got {other:?}"),
        }
    }
}

/// Bounds-check elision (gpukit-macros `cuda/proven.rs`): accesses proven in range run without a
/// check and give the same results; a look-alike guard that is off by one keeps its check and
/// still reports, on both backends.
mod elision {
    use gpukit::prelude::*;

    /// Every access proven: guard, early return, clamp.
    #[kernel]
    pub fn shifted_copy(a: &[f32], out: &mut [f32], d: usize) {
        let i = grid(1);
        if i >= out.len() {
            return;
        }
        let n = a.len();
        if i < n {
            let j = (i + d).max(1).min(n) - 1;
            out[i] = a[i] + a[j];
        }
    }

    /// `out` is guarded by `img`'s shape, not its own: checked in the kernel, decided per launch
    /// (an unchecked twin runs when `img.shape(d) <= out.shape(d)` on both axes).
    #[kernel]
    pub fn doubled_into(img: &View2<f32>, out: &mut View2<f32>) {
        let (x, y) = grid2();
        if y < img.shape(0) && x < img.shape(1) {
            out[[y, x]] = img[[y, x]] * 2.0;
        }
    }

    /// `<=` where `<` was meant: the thread at `i == out.len()` must fail.
    #[kernel]
    pub fn off_by_one(out: &mut [f32]) {
        let i = grid(1);
        if i <= out.len() {
            out[i] = 1.0;
        }
    }
}

#[test]
fn proven_accesses_run_unchecked_and_a_misleading_guard_still_fails() {
    use elision::{off_by_one, shifted_copy};
    let mut devices = vec![Device::Cpu];
    let held = gpu();
    if let Some((g, _)) = &held {
        devices.push(*g);
    }
    for dev in &devices {
        let host: Vec<f32> = (0..1000).map(|k| k as f32).collect();
        let a = Array::from_slice_on(&host, dev).unwrap();
        let mut out = Array::<f32>::zeros_on(1000, dev).unwrap();
        // More threads than elements: the extra ones leave at the early return.
        launch!(shifted_copy[4, 256](&a, &mut out, 3)).unwrap();
        dev.synchronize().unwrap();
        let want: Vec<f32> = (0..1000)
            .map(|i| host[i] + host[(i + 3).clamp(1, 1000) - 1])
            .collect();
        assert_eq!(out.to_vec().unwrap(), want, "on {dev}");

        let mut small = Array::<f32>::zeros_on(100, dev).unwrap();
        let launched = launch!(off_by_one[1, 128](&mut small));
        let err = match launched {
            Err(e) => e,
            Ok(()) => dev
                .synchronize()
                .expect_err("the off-by-one access must be reported"),
        };
        let b = oob(err);
        assert_eq!(
            (b.kernel.as_str(), b.array.as_str(), b.index, b.len),
            ("off_by_one", "out", 100, 100),
            "on {dev}"
        );
    }
}

/// A kernel whose remaining check the launch's shapes decide: with `out` as large as `img` it
/// runs its unchecked twin and gives the right result; with a smaller `out` it runs checked and
/// reports the first bad index as always, on both backends.
#[test]
fn launches_whose_shapes_prove_every_access_run_the_twin_and_others_still_report() {
    use elision::doubled_into;
    let twin = doubled_into::INFO.proven.expect("an unchecked twin");
    let tests: Vec<&str> = twin.tests.iter().map(|t| t.text).collect();
    assert_eq!(
        tests,
        [
            "img.shape(0) <= out.shape(0)",
            "img.shape(1) <= out.shape(1)"
        ]
    );
    assert_eq!(twin.symbol, "doubled_into__proven");
    let mut devices = vec![Device::Cpu];
    let held = gpu();
    if let Some((g, _)) = &held {
        devices.push(*g);
    }
    for dev in &devices {
        let (h, w) = (37, 53);
        let host: Vec<f32> = (0..h * w).map(|k| k as f32).collect();
        let img = Array::from_vec_on(host.clone(), [h, w], dev).unwrap();
        for out_shape in [[h, w], [h + 3, w + 1]] {
            let mut out = Array::<f32>::full_on(out_shape, -1.0, dev).unwrap();
            launch!(doubled_into[(w.div_ceil(16), h.div_ceil(16)), (16, 16)](&img, &mut out))
                .unwrap();
            dev.synchronize().unwrap();
            let got = out.to_vec().unwrap();
            for y in 0..out_shape[0] {
                for x in 0..out_shape[1] {
                    let want = if y < h && x < w {
                        2.0 * host[y * w + x]
                    } else {
                        -1.0
                    };
                    assert_eq!(got[y * out_shape[1] + x], want, "({y}, {x}) on {dev}");
                }
            }
        }
        // `out` one row short: the tests fail, the checked kernel runs and reports row `h - 1`.
        let mut short = Array::<f32>::zeros_on([h - 1, w], dev).unwrap();
        let launched =
            launch!(doubled_into[(w.div_ceil(16), h.div_ceil(16)), (16, 16)](&img, &mut short));
        let err = match launched {
            Err(e) => e,
            Ok(()) => dev
                .synchronize()
                .expect_err("the short `out` must be reported"),
        };
        let b = oob(err);
        assert_eq!(
            (b.kernel.as_str(), b.array.as_str(), b.index, b.len, b.axis),
            ("doubled_into", "out", (h - 1) as u64, (h - 1) as u64, 0),
            "on {dev}"
        );
    }
}
