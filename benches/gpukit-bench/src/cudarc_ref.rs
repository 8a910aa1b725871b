//! The reference side "cudarc": the same work as a few gpukit rows, written directly against
//! cudarc with the plainest kernel (one element per thread, 256 threads per block), so the table
//! shows what gpukit adds or saves over raw cudarc as well as over CuPy.
//!
//! Timing matches the gpukit side: CUDA events around each operation on the stream that runs it
//! (`gpu_ms`), and the host time between two synchronisations (`wall_ms`). Launch rows time the
//! host per launch, as gpukit's launch rows do.

use crate::gpu::{pattern_f32, summary_of, Row, LAUNCHES, N};
use crate::timing::{per_launch, Sample};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};
use gpukit::prelude::*;
use std::sync::Arc;
use std::time::Instant;

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

/// Event flags for events that can be timed.
const TIMED: sys::CUevent_flags = sys::CUevent_flags::CU_EVENT_DEFAULT;

/// Threads per block of the plain kernels.
const THREADS: u32 = 256;

/// cudarc's context, stream and the compiled plain kernels.
struct Raw {
    stream: Arc<CudaStream>,
    times2_f64: CudaFunction,
    times2_f32: CudaFunction,
    empty: CudaFunction,
}

/// A cudarc error as a gpukit error, so the bench has one error type.
fn err(e: impl std::fmt::Display) -> Error {
    Error::Cuda(format!("raw cudarc: {e}"))
}

impl Raw {
    fn new() -> Result<Raw> {
        let ctx = CudaContext::new(0).map_err(err)?;
        let stream = ctx.new_stream().map_err(err)?;
        let ptx = cudarc::nvrtc::compile_ptx(SOURCE).map_err(err)?;
        let module = ctx.load_module(ptx).map_err(err)?;
        let f = |name: &str| module.load_function(name).map_err(err);
        Ok(Raw {
            times2_f64: f("times2_f64")?,
            times2_f32: f("times2_f32")?,
            empty: f("empty_kernel")?,
            stream,
        })
    }

    /// `b = a * 2` with the plain kernel.
    fn times2<T: DeviceRepr>(
        &self,
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
        let mut launch = self.stream.launch_builder(kernel);
        launch.arg(a).arg(b).arg(&n);
        // SAFETY: the kernel's parameters are (const T*, T*, u64) as pushed, and both slices hold n.
        unsafe { launch.launch(cfg) }.map_err(err)?;
        Ok(())
    }

    /// The row `name`: `b = a * 2` over `host` copied to the device, checked once, then timed.
    fn times2_row<T: DeviceRepr + ValidAsZeroBits + Copy + Into<f64>>(
        &self,
        name: &'static str,
        kernel: &CudaFunction,
        host: Vec<T>,
        warmup: usize,
        reps: usize,
    ) -> Result<Row> {
        let s = &self.stream;
        let a = s.clone_htod(&host).map_err(err)?;
        drop(host);
        let mut b = s.alloc_zeros::<T>(a.len()).map_err(err)?;
        self.times2(kernel, &a, &mut b)?;
        let check = summary_of(&s.clone_dtoh(&b).map_err(err)?);
        let samples = self.measure(warmup, reps, || self.times2(kernel, &a, &mut b))?;
        Ok(Row {
            name,
            samples,
            check,
            bytes: (a.len() * std::mem::size_of::<T>() * 2) as f64,
            unit: "op",
            note: "plain kernel, one element per thread",
        })
    }

    /// Event and host times of `op`, `warmup` times untimed, then `reps` timed.
    fn measure(
        &self,
        warmup: usize,
        reps: usize,
        mut op: impl FnMut() -> Result<()>,
    ) -> Result<Vec<Sample>> {
        for _ in 0..warmup {
            op()?;
        }
        self.stream.synchronize().map_err(err)?;
        let mut out = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t0 = Instant::now();
            // cudarc's events default to CU_EVENT_DISABLE_TIMING: ask for timing ones
            let start = self.stream.record_event(Some(TIMED)).map_err(err)?;
            op()?;
            let end = self.stream.record_event(Some(TIMED)).map_err(err)?;
            self.stream.synchronize().map_err(err)?;
            let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
            let gpu_ms = start.elapsed_ms(&end).map_err(err)? as f64;
            out.push(Sample {
                gpu_ms: Some(gpu_ms),
                wall_ms,
            });
        }
        Ok(out)
    }
}

/// Runs the reference rows whose names `wants` accepts (the names are gpukit's and CuPy's).
pub fn run_all(
    warmup: usize,
    reps: usize,
    wants: &dyn Fn(&str) -> bool,
    emit: &mut dyn FnMut(Row),
) -> Result<()> {
    let raw = Raw::new()?;
    let s = &raw.stream;

    let name = "a * 2 (float64, 2^28)";
    if wants(name) {
        let host: Vec<f64> = (0..N).map(|i| i as f64).collect();
        emit(raw.times2_row(name, &raw.times2_f64, host, warmup, reps)?);
    }

    let name = "a * 2 (float32, 2^28)";
    if wants(name) {
        // the same input as the other sides, made by gpukit and copied to the host once
        let host = pattern_f32(N)?.to_vec()?;
        emit(raw.times2_row(name, &raw.times2_f32, host, warmup, reps)?);
    }

    let name = "launch overhead: empty kernel";
    if wants(name) {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = || -> Result<()> {
            // SAFETY: the empty kernel takes no parameters.
            unsafe { s.launch_builder(&raw.empty).launch(cfg) }.map_err(err)?;
            Ok(())
        };
        launch()?;
        s.synchronize().map_err(err)?;
        let samples = per_launch(reps, LAUNCHES, launch, || s.synchronize().map_err(err))?;
        emit(Row {
            name,
            samples,
            check: vec![LAUNCHES as f64],
            bytes: 0.0,
            unit: "per_launch",
            note: "stream.launch_builder(..).launch(..)",
        });
    }
    Ok(())
}
