//! All-reduce bandwidth through gpukit-multi's NCCL communicators, one worker thread per GPU,
//! reported as nccl-tests does: algorithm bandwidth = bytes / time, bus bandwidth = algbw *
//! 2 (n - 1) / n. `benches/allreduce_torch.py` measures the same through PyTorch.
//!
//! ```text
//! cargo run --release -p gpukit-multi --example allreduce_bw -- [MiB=1024] [iters=20] [warmup=5]
//! ```

use gpukit::{Array, Result};
use gpukit_multi::{CollectiveBackend, DevicePool, ReduceOp};
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse().unwrap_or_else(|_| {
                panic!("arguments: MiB iters warmup (whole numbers), got {a:?}")
            })
        })
        .collect();
    let mib = args.first().copied().unwrap_or(1024);
    let iters = args.get(1).copied().unwrap_or(20).max(1);
    let warmup = args.get(2).copied().unwrap_or(5);
    let pool = DevicePool::new()?;
    if pool.is_virtual_cpu() {
        eprintln!("allreduce_bw: no GPU (this measures NCCL on GPUs)");
        std::process::exit(2);
    }
    let backend = pool.init_collectives()?;
    if !matches!(backend, CollectiveBackend::Nccl { .. }) {
        eprintln!("allreduce_bw: collectives are not NCCL here: {backend}");
        std::process::exit(2);
    }
    let n = pool.len();
    let elems = mib * (1 << 20) / 4;
    let secs = pool.on_each(move |ctx| {
        let comm = ctx.comm()?;
        let dev = ctx.device();
        // correctness first: ones all-reduced are n everywhere
        let mut check = Array::<f32>::ones(vec![1 << 20])?;
        comm.all_reduce(&mut check, ReduceOp::Sum)?;
        if check.min()? != n as f32 || check.max()? != n as f32 {
            return Err(gpukit::Error::Other("all-reduce check failed".into()));
        }
        let mut a = Array::<f32>::full_on(vec![elems], 1.0 / n as f32, &dev)?;
        for _ in 0..warmup {
            comm.all_reduce(&mut a, ReduceOp::Sum)?;
        }
        dev.synchronize()?;
        comm.barrier()?;
        let t = Instant::now();
        for _ in 0..iters {
            comm.all_reduce(&mut a, ReduceOp::Sum)?;
        }
        dev.synchronize()?;
        let secs = t.elapsed().as_secs_f64() / iters as f64;
        // the whole result: every element is (1/n)·n^rounds after `rounds` sums of n copies
        let expected = (n as f64).powi((warmup + iters) as i32 - 1);
        let (lo, hi) = (a.min()? as f64, a.max()? as f64);
        if lo != hi || (lo - expected).abs() > 1e-5 * expected {
            return Err(gpukit::Error::Other(format!(
                "all-reduce result: elements in [{lo}, {hi}], expected all {expected}"
            )));
        }
        Ok(secs)
    })?;
    let t = secs.iter().cloned().fold(0.0, f64::max);
    let bytes = (elems * 4) as f64;
    let algbw = bytes / t / 1e9;
    let busbw = algbw * 2.0 * (n as f64 - 1.0) / n as f64;
    println!(
        "gpukit-multi allreduce f32 {mib} MiB on {n} GPU(s) [{backend}]: {:.3} ms, algbw {algbw:.1} GB/s, busbw {busbw:.1} GB/s [result checked: every element]",
        t * 1e3
    );
    Ok(())
}
