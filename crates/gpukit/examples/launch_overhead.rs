//! Host overhead of one kernel launch: gpukit next to cudarc and the bare driver call.
//!
//! Build in release (debug numbers measure the debug build of gpukit and cudarc, not the
//! launch path) on the CPU machine, then run the binary where the GPU is:
//!
//! ```text
//! cargo build -p gpukit --release --example launch_overhead
//! target/release/examples/launch_overhead
//! ```
//!
//! Every path launches the same tiny kernel (`y = a * x + y` over 256 `f32`, one block of 256
//! threads) and is measured three ways:
//!
//! * **host**: the time the launching thread spends enqueueing one launch. Launches are timed in
//!   batches of [`BATCH`], the device is synchronised between batches (outside the timed
//!   region), so CUDA's launch queue never fills and the host never waits for the GPU. Median
//!   and 10th-90th percentile over [`BATCHES`] batches.
//! * **sustained**: [`SUSTAINED`] back-to-back launches and one synchronisation, per launch: the
//!   slower of the host and the GPU (here the queue does fill).
//! * **GPU**: the device time per launch with the queue full: a spin kernel keeps the GPU busy
//!   while [`GPU_LAUNCHES`] launches are queued behind it; the run's time minus the spin's time,
//!   per launch. This is what the GPU needs per tiny kernel, whoever launches it.
//!
//! Without a CUDA GPU the example says so and exits.

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig as RawConfig, PushKernelArg,
};
use gpukit::__private::{launch as gk_launch, KernelArg};
use gpukit::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Launches per timed batch (far below CUDA's launch queue depth of about a thousand).
const BATCH: usize = 256;
/// Timed batches per path.
const BATCHES: usize = 200;
/// Back-to-back launches for the sustained rate.
const SUSTAINED: usize = 20_000;
/// Launches queued behind the spin kernel for the GPU time.
const GPU_LAUNCHES: usize = 512;
/// How long the spin kernel keeps the GPU busy, in nanoseconds.
const SPIN_NS: u64 = 20_000_000;
/// Elements of `x` and `y` (one block of threads).
const N: usize = 256;

/// `y = a * x + y`, bounds checked (the default).
#[kernel]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = grid(1);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// The same kernel without bounds checks.
#[kernel(unchecked)]
fn axpy_unchecked(a: f32, x: &[f32], y: &mut [f32]) {
    let i = grid(1);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// A raw CUDA C twin of `axpy_unchecked` (for `Module::from_cuda`) and the spin kernel.
const RAW_SOURCE: &str = r#"
extern "C" __global__ void raw_axpy(float a, const float* x, float* y, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = a * x[i] + y[i]; }
}

extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
"#;

/// One line of the table, times in microseconds per launch.
struct Row {
    path: &'static str,
    host_median: f64,
    host_p10: f64,
    host_p90: f64,
    sustained: f64,
    gpu: f64,
    /// The host could not queue the GPU-time launches within the spin: `gpu` is an upper bound.
    gpu_host_bound: bool,
}

/// Microseconds per launch of `d` over `n` launches.
fn per_launch(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

/// Measures one launch path. `launch` queues one launch, `spin` queues the spin kernel on the
/// same stream, `sync` waits for that stream.
fn measure(
    path: &'static str,
    launch: &mut dyn FnMut(),
    spin: &mut dyn FnMut(u64),
    sync: &mut dyn FnMut(),
) -> Row {
    // Warm up: compilation, module loading, first-use allocations, caches.
    for _ in 0..1000 {
        launch();
    }
    sync();

    let mut batches: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..BATCH {
                launch();
            }
            let host = t0.elapsed();
            sync();
            per_launch(host, BATCH)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    let at = |q: f64| batches[((BATCHES - 1) as f64 * q).round() as usize];

    let t0 = Instant::now();
    for _ in 0..SUSTAINED {
        launch();
    }
    sync();
    let sustained = per_launch(t0.elapsed(), SUSTAINED);

    let mut spin_only = Duration::MAX;
    let mut with_launches = Duration::MAX;
    let mut enqueue = Duration::ZERO;
    for _ in 0..3 {
        let t0 = Instant::now();
        spin(SPIN_NS);
        sync();
        spin_only = spin_only.min(t0.elapsed());

        let t0 = Instant::now();
        spin(SPIN_NS);
        for _ in 0..GPU_LAUNCHES {
            launch();
        }
        enqueue = enqueue.max(t0.elapsed());
        sync();
        with_launches = with_launches.min(t0.elapsed());
    }
    Row {
        path,
        host_median: at(0.5),
        host_p10: at(0.1),
        host_p90: at(0.9),
        sustained,
        gpu: per_launch(with_launches.saturating_sub(spin_only), GPU_LAUNCHES),
        gpu_host_bound: enqueue >= Duration::from_nanos(SPIN_NS),
    }
}

/// A cudarc context of its own on device 0, with or without cudarc's event tracking, its
/// stream, the two kernels loaded from `ptx`, and its own buffers.
struct Raw {
    stream: Arc<CudaStream>,
    kernel: CudaFunction,
    spin: CudaFunction,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
}

impl Raw {
    fn new(axpy_ptx: &str, spin_ptx: &str, event_tracking: bool) -> Raw {
        let ctx = CudaContext::new(0).expect("a cudarc context on device 0");
        if !event_tracking {
            // SAFETY: everything below runs on the one stream created next.
            unsafe { ctx.disable_event_tracking() };
        }
        let stream = ctx.new_stream().expect("a stream");
        let load = |ptx: &str, name: &str| {
            ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))
                .and_then(|m| m.load_function(name))
                .expect("loading the kernel")
        };
        Raw {
            kernel: load(axpy_ptx, "axpy_unchecked"),
            spin: load(spin_ptx, "spin"),
            x: stream.alloc_zeros::<f32>(N).expect("x"),
            y: stream.alloc_zeros::<f32>(N).expect("y"),
            stream,
        }
    }

    fn spin(&self, ns: u64) {
        spin_on(&self.stream, &self.spin, ns);
    }

    fn sync(&self) {
        self.stream.synchronize().expect("synchronize");
    }
}

const RAW_CONFIG: RawConfig = RawConfig {
    grid_dim: (1, 1, 1),
    block_dim: (N as u32, 1, 1),
    shared_mem_bytes: 0,
};

/// cudarc's safe launch builder (what a cudarc user writes).
fn cudarc_builder(path: &'static str, raw: &mut Raw) -> Row {
    let (a, n) = (1.0f32, N as u64);
    let (stream, spin) = (raw.stream.clone(), raw.spin.clone());
    let Raw { kernel, x, y, .. } = raw;
    let mut launch = || {
        let mut b = stream.launch_builder(kernel);
        b.arg(&a).arg(&*x).arg(&n).arg(&mut *y).arg(&n);
        // SAFETY: the arguments match axpy_unchecked(float, const float*, ull, float*, ull).
        unsafe { b.launch(RAW_CONFIG) }.expect("launch");
    };
    measure(
        path,
        &mut launch,
        &mut |ns| spin_on(&stream, &spin, ns),
        &mut || stream.synchronize().expect("synchronize"),
    )
}

/// Queues the spin kernel for `ns` nanoseconds on `stream`.
fn spin_on(stream: &CudaStream, spin: &CudaFunction, ns: u64) {
    let mut b = stream.launch_builder(spin);
    b.arg(&ns);
    // SAFETY: `spin(unsigned long long)`.
    unsafe { b.launch(RawConfig::for_num_elems(1)) }.expect("spin");
}

/// `cuLaunchKernel` itself, through cudarc's `sys` bindings: the floor for every path above.
fn driver_call(raw: &Raw) -> Row {
    use cudarc::driver::DevicePtr;
    let (mut a, mut n) = (1.0f32, N as u64);
    let mut xp = raw.x.device_ptr(&raw.stream).0;
    let mut yp = raw.y.device_ptr(&raw.stream).0;
    let func = raw.kernel.cu_function();
    let stream = raw.stream.cu_stream();
    let mut launch = || {
        let mut params: [*mut c_void; 5] = [
            &mut a as *mut f32 as *mut c_void,
            &mut xp as *mut u64 as *mut c_void,
            &mut n as *mut u64 as *mut c_void,
            &mut yp as *mut u64 as *mut c_void,
            &mut n as *mut u64 as *mut c_void,
        ];
        // SAFETY: the parameters match axpy_unchecked; the buffers outlive the stream's work
        // (`raw` is synchronised before it is dropped).
        let r = unsafe {
            sys::cuLaunchKernel(
                func,
                1,
                1,
                1,
                N as u32,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "cuLaunchKernel");
    };
    measure(
        "cuLaunchKernel (cudarc::driver::sys)",
        &mut launch,
        &mut |ns| raw.spin(ns),
        &mut || raw.sync(),
    )
}

fn main() -> gpukit::Result<()> {
    if gpukit::cuda_device_count() == 0 {
        println!(
            "launch_overhead: no CUDA GPU here ({}); nothing to measure",
            gpukit::cuda_unavailable_reason().unwrap_or_default()
        );
        return Ok(());
    }
    let gpu = Device::cuda(0)?;
    set_default_device(gpu);
    let module = Module::from_cuda(RAW_SOURCE)?;
    let raw_axpy = module.kernel("raw_axpy")?;
    let spin = module.kernel("spin")?;
    let x = Array::<f32>::ones_on(N, &gpu)?;
    let mut y = Array::<f32>::zeros_on(N, &gpu)?;
    let a = 1.0f32;

    let mut rows = Vec::new();
    {
        let mut spin_gk = |ns: u64| launch!(spin[1, 1](ns)).expect("spin");
        let mut sync_gk = || gpu.synchronize().expect("synchronize");
        rows.push(measure(
            "gpukit launch!, checked #[kernel]",
            &mut || launch!(axpy[1, N](a, &x, &mut y)).expect("launch"),
            &mut spin_gk,
            &mut sync_gk,
        ));
        rows.push(measure(
            "gpukit launch!, #[kernel(unchecked)]",
            &mut || launch!(axpy_unchecked[1, N](a, &x, &mut y)).expect("launch"),
            &mut spin_gk,
            &mut sync_gk,
        ));
        rows.push(measure(
            "gpukit, checked, arguments in an array",
            &mut || {
                gk_launch(
                    &axpy::INFO,
                    (1, N),
                    [
                        KernelArg::scalar(a),
                        KernelArg::array(&x),
                        KernelArg::array_mut(&mut y),
                    ],
                )
                .expect("launch")
            },
            &mut spin_gk,
            &mut sync_gk,
        ));
        rows.push(measure(
            "gpukit, unchecked, arguments in an array",
            &mut || {
                gk_launch(
                    &axpy_unchecked::INFO,
                    (1, N),
                    [
                        KernelArg::scalar(a),
                        KernelArg::array(&x),
                        KernelArg::array_mut(&mut y),
                    ],
                )
                .expect("launch")
            },
            &mut spin_gk,
            &mut sync_gk,
        ));
        rows.push(measure(
            "gpukit launch!, raw CUDA C (Module::from_cuda)",
            &mut || launch!(raw_axpy[1, N](a, &x, &mut y, N)).expect("launch"),
            &mut spin_gk,
            &mut sync_gk,
        ));
    }

    let axpy_ptx = axpy_unchecked.ptx()?;
    let spin_ptx = module.ptx().to_string();
    let mut tracked = Raw::new(&axpy_ptx, &spin_ptx, true);
    rows.push(cudarc_builder(
        "cudarc launch_builder, event tracking on",
        &mut tracked,
    ));
    tracked.sync();
    let mut untracked = Raw::new(&axpy_ptx, &spin_ptx, false);
    rows.push(cudarc_builder(
        "cudarc launch_builder, event tracking off",
        &mut untracked,
    ));
    rows.push(driver_call(&untracked));
    untracked.sync();

    let name = CudaContext::new(0)
        .and_then(|c| c.name())
        .unwrap_or_else(|_| "?".into());
    print_table(&name, &rows);
    Ok(())
}

fn print_table(device: &str, rows: &[Row]) {
    let build = if cfg!(debug_assertions) {
        "DEBUG build: these numbers measure unoptimised code; build with --release"
    } else {
        "release build"
    };
    println!("# Kernel launch overhead on {device} (cuda:0), {build}");
    println!();
    println!(
        "Kernel: y = a * x + y over {N} f32, 1 block of {N} threads. host: enqueue time per launch, \
         median and p10-p90 over {BATCHES} batches of {BATCH} launches, synchronised between batches. \
         sustained: {SUSTAINED} back-to-back launches and one synchronize. GPU: device time per launch \
         with {GPU_LAUNCHES} launches queued behind a {} ms spin kernel. All in microseconds per launch.",
        SPIN_NS / 1_000_000
    );
    println!();
    println!("| path | host median | host p10-p90 | sustained | GPU |");
    println!("|---|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.2} | {:.2}-{:.2} | {:.2} | {:.2}{} |",
            r.path,
            r.host_median,
            r.host_p10,
            r.host_p90,
            r.sustained,
            r.gpu,
            if r.gpu_host_bound {
                " (host-bound: upper bound)"
            } else {
                ""
            }
        );
    }
    let floor = rows.last().map_or(0.0, |r| r.host_median);
    println!();
    for r in rows.iter().filter(|r| r.path.starts_with("gpukit")) {
        println!(
            "{}: {:+.2} us per launch over cuLaunchKernel",
            r.path,
            r.host_median - floor
        );
    }
}
