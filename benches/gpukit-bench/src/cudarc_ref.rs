//! The reference side "cudarc": the same work as a few gpukit rows, written directly against
//! cudarc with the plainest kernel (one element per thread, 256 threads per block), so the table
//! shows what gpukit adds or saves over raw cudarc as well as over CuPy.
//!
//! Timed and checked like every other side ([`crate::timing`]): a span of CUDA events around
//! the whole call (the result's allocation from the stream-ordered pool included) on a stream of
//! its own, a separate wall-clock run, and every output compared in full with a host reference.

use crate::gpu::{pattern_f32_at, summary_of, Row, Sizes};
use crate::rawcuda::{err, Bracket, RawCuda};
use crate::timing::{floor, measure, per_launch, Clock, Timer};
use crate::verify::Verify;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use gpukit::prelude::*;
use std::sync::Arc;

/// The plain kernels: `b = a * 2` in f64 and f32, and an empty kernel.
const SOURCE: &str = r#"
extern "C" __global__ void times2_f64(const double* a, double* b, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { b[i] = a[i] * 2.0; }
}
extern "C" __global__ void times2_f32(const float* a, float* b, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { b[i] = a[i] * 2.0f; }
}
extern "C" __global__ void empty_kernel() {}
"#;

/// Threads per block of the plain kernels.
const THREADS: u32 = 256;

/// One block of one thread (the empty kernel, the span marker).
const ONE: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (1, 1, 1),
    shared_mem_bytes: 0,
};

/// `b = a * 2` with the plain kernel on `s`.
fn times2<T: DeviceRepr>(
    s: &Arc<CudaStream>,
    kernel: &CudaFunction,
    a: &CudaSlice<T>,
    b: &mut CudaSlice<T>,
) -> Result<()> {
    let n = a.len() as u64;
    let cfg = LaunchConfig {
        grid_dim: ((a.len() as u32).div_ceil(THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = s.launch_builder(kernel);
    launch.arg(a).arg(b).arg(&n);
    // SAFETY: the kernel's parameters are (const T*, T*, u64) as pushed, and both slices hold n.
    unsafe { launch.launch(cfg) }.map_err(err)?;
    Ok(())
}

/// A new `n`-element buffer from the pool (uninitialised, as a library's result would be).
fn alloc<T: DeviceRepr>(s: &Arc<CudaStream>, n: usize) -> Result<CudaSlice<T>> {
    // SAFETY: the caller writes every element before reading any (or checks that it did).
    unsafe { s.alloc::<T>(n) }.map_err(err)
}

/// The row `name`: a new `b = a * 2` per call over `host` copied to the device, checked in full
/// against `reference` with `checker` (`bench_check_f64` or `_f32`).
#[allow(clippy::too_many_arguments)]
fn times2_row<T: DeviceRepr + Copy + Into<f64>>(
    raw: &RawCuda,
    s: &Arc<CudaStream>,
    t: &mut Timer,
    name: &'static str,
    kernel: &CudaFunction,
    checker: &str,
    host: Vec<T>,
    reference: Vec<T>,
    tol: f64,
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let a = s.clone_htod(&host).map_err(err)?;
    drop(host);
    let reference = s.clone_htod(&reference).map_err(err)?;
    let n = a.len();
    let bytes = n * std::mem::size_of::<T>();
    let mut b = alloc::<T>(s, n)?;
    times2(s, kernel, &a, &mut b)?;
    let check = summary_of(&s.clone_dtoh(&b).map_err(err)?);
    drop(b);
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        "every element against a host reference (device checker kernel), pool block poisoned before each call",
        &mut (),
        |_| {
            // the pool blocks the next result may take hold 0xFF (NaN), as on the other sides
            let held = (0..crate::gpu::POOL_POISON)
                .map(|_| alloc::<T>(s, n))
                .collect::<Result<Vec<_>>>()?;
            for p in &held {
                raw.poison(s, raw.ptr(s, p), bytes)?;
            }
            Ok(())
        },
        |_| {
            let mut b = alloc::<T>(s, n)?;
            times2(s, kernel, &a, &mut b)?;
            Ok(b)
        },
        |_, b| raw.compare(s, checker, &b, &reference, tol),
    )?;
    Ok(Row {
        name,
        unit: "op",
        span_ms: m.span_ms,
        host_ms: vec![],
        device_ms: vec![],
        wall_ms: m.wall_ms,
        verify: Some(m.verify),
        check,
        bytes: (bytes * 2) as f64,
        access: "rw",
        span,
        note: "plain kernel, one element per thread; result allocated per call (cuMemAllocAsync)",
    })
}

/// Runs the reference rows whose names `wants` accepts (the names are gpukit's and CuPy's).
pub fn run_all(
    raw: &Arc<RawCuda>,
    sizes: &Sizes,
    warmup: usize,
    reps: usize,
    wants: &dyn Fn(&str) -> bool,
    emit: &mut dyn FnMut(Row),
) -> Result<()> {
    // the "library" stream: the cudarc user's own stream, distinct from the bracket's
    let s = raw.ctx.new_stream().map_err(err)?;
    let ptx = cudarc::nvrtc::compile_ptx(SOURCE).map_err(err)?;
    let module = raw.ctx.load_module(ptx).map_err(err)?;
    let f = |name: &str| module.load_function(name).map_err(err);
    let (t64, t32, empty) = (f("times2_f64")?, f("times2_f32")?, f("empty_kernel")?);
    let mark = raw.function("bench_mark")?;
    let (sync_s, mark_s) = (s.clone(), s.clone());
    let mut t = Timer {
        clock: Clock::Cuda(Bracket::new(raw)?),
        sync: Box::new(move || sync_s.synchronize().map_err(err)),
        mark: Box::new(move |flag, value| {
            let mut b = mark_s.launch_builder(&mark);
            b.arg(&flag).arg(&value);
            // SAFETY: bench_mark takes (u64 flag address, u32 value) as pushed.
            unsafe { b.launch(ONE) }.map_err(err)?;
            Ok(())
        }),
    };
    let n = sizes.n;

    let name = "span floor: nothing between the events";
    if wants(name) {
        let (span_ms, wall_ms) = floor(&mut t, reps)?;
        emit(Row {
            name,
            unit: "floor",
            span_ms,
            host_ms: vec![],
            device_ms: vec![],
            wall_ms,
            verify: None,
            check: vec![],
            bytes: 0.0,
            access: "",
            span: t.how(),
            note: "the bracket's own cost: included in every span of this side",
        });
    }

    let name = "a * 2 (float64, 2^28)";
    if wants(name) {
        let host: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let reference: Vec<f64> = (0..n).map(|i| i as f64 * 2.0).collect();
        emit(times2_row(
            raw,
            &s,
            &mut t,
            name,
            &t64,
            "bench_check_f64",
            host,
            reference,
            0.0,
            warmup,
            reps,
        )?);
    }

    let name = "a * 2 (float32, 2^28)";
    if wants(name) {
        // the same input as the other sides, computed on the host
        let host: Vec<f32> = (0..n).map(pattern_f32_at).collect();
        let reference: Vec<f32> = host.iter().map(|&x| x * 2.0).collect();
        emit(times2_row(
            raw,
            &s,
            &mut t,
            name,
            &t32,
            "bench_check_f32",
            host,
            reference,
            1e-6,
            warmup,
            reps,
        )?);
    }

    let name = "launch overhead: empty kernel";
    if wants(name) {
        let launch = || -> Result<()> {
            // SAFETY: the empty kernel takes no parameters.
            unsafe { s.launch_builder(&empty).launch(ONE) }.map_err(err)?;
            Ok(())
        };
        launch()?;
        s.synchronize().map_err(err)?;
        let (host_ms, wall_ms) = per_launch(reps, sizes.launches, launch, || {
            s.synchronize().map_err(err)
        })?;
        emit(Row {
            name,
            unit: "per_launch",
            span_ms: vec![],
            host_ms,
            device_ms: vec![],
            wall_ms,
            verify: None::<Verify>,
            check: vec![sizes.launches as f64],
            bytes: 0.0,
            access: "",
            span: "",
            note: "stream.launch_builder(..).launch(..)",
        });
    }
    Ok(())
}
