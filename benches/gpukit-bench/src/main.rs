//! gpukit-bench: gpukit's side of the benchmarks (issues 6 and 12).
//!
//! ```text
//! gpukit-bench gpu [--warmup N] [--reps N] [--only SUBSTRING] [--dry-run]
//!                                    one round of the GPU workloads (gpukit, then the raw-cudarc
//!                                    reference rows); --dry-run: the same harness on the CPU
//!                                    backend at tiny sizes (checks the harness, not for results)
//! gpukit-bench ceilings [--reps N] [--sizes-gib 1,2,4]
//!                                    memory ceilings: 128-bit copy/write/read kernels through
//!                                    gpukit, the driver's memcpy and memset through raw cudarc
//! gpukit-bench cpu [--reps N] [--n ELEMENTS] [--only SUBSTRING]   CPU backend against ndarray
//! gpukit-bench diag [--reps BATCHES]                             host time of tiny operations
//! ```
//!
//! Each row is printed as one JSON line on stdout (progress on stderr). benches/run.sh runs the GPU
//! rounds alternately with benches/cupy_twin.py on the device; benches/benchlib.py checks the
//! sides against each other and writes docs/bench/results.json. How spans, wall times and checks
//! are defined: benches/README.md.

mod ceilings;
mod cpu;
mod cudarc_ref;
mod fft;
mod first_launch;
mod gpu;
mod json;
mod kernels;
mod random_row;
mod rawcuda;
mod sort_rows;
mod svd_row;
mod timing;
mod verify;

use gpukit::prelude::*;
use std::process::ExitCode;
use std::sync::Arc;

const USAGE: &str = "usage: gpukit-bench gpu|ceilings|cpu|diag [--warmup N] [--reps N] [--n N] \
                     [--only S] [--sizes-gib 1,2,4] [--dry-run]";

#[derive(Debug)]
struct Args {
    mode: String,
    warmup: usize,
    reps: usize,
    n: usize,
    only: Option<String>,
    sizes_gib: Vec<usize>,
    dry_run: bool,
}

fn parse(args: impl IntoIterator<Item = String>) -> std::result::Result<Args, String> {
    let mut it = args.into_iter();
    let mode = it.next().ok_or(USAGE)?;
    let mut a = Args {
        mode,
        warmup: 3,
        reps: 10,
        n: 1 << 24,
        only: None,
        sizes_gib: vec![1, 2, 4],
        dry_run: false,
    };
    while let Some(flag) = it.next() {
        if flag == "--dry-run" {
            a.dry_run = true;
            continue;
        }
        let val = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--warmup" => a.warmup = num(&val)?,
            "--reps" => a.reps = num(&val)?.max(1),
            "--n" => a.n = num(&val)?,
            "--only" => a.only = Some(val.clone()),
            "--sizes-gib" => {
                a.sizes_gib = val
                    .split(',')
                    .map(|s| num(s.trim()))
                    .collect::<std::result::Result<_, _>>()?;
                if a.sizes_gib.is_empty() || a.sizes_gib.contains(&0) {
                    return Err(format!("--sizes-gib {val}: sizes of at least 1 GiB"));
                }
            }
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    Ok(a)
}

/// Prints a row as one JSON line on stdout and its median on stderr.
fn print_row(side: &str, row: &gpu::Row) {
    let ok = match &row.verify {
        Some(v) if v.ok() => "checked",
        Some(_) => "CHECK FAILED",
        None => "",
    };
    eprintln!(
        "{side}: {:<60} {:>10.4} ms {ok}",
        row.name,
        row.headline_ms()
    );
    println!("{}", row.json(side).render());
}

/// `gpukit-bench gpu`: gpukit's rows, then raw cudarc's, timed with CUDA event brackets.
fn gpu_mode(a: &Args) -> Result<()> {
    let mut opts = gpu::Opts {
        warmup: a.warmup,
        reps: a.reps,
        only: a.only.clone(),
        sizes: gpu::FULL,
    };
    if a.dry_run {
        opts.sizes = gpu::DRY;
        let dev = Device::cpu();
        let checker = verify::Checker::for_device(&dev)?;
        return gpu::run_all(
            &opts,
            dev,
            &mut timing::Timer::host(),
            &checker,
            &mut |row| print_row("gpukit-dry-run", &row),
        );
    }
    let dev = Device::cuda(0)?;
    set_default_device(dev);
    let raw = Arc::new(rawcuda::RawCuda::new()?);
    let checker = verify::Checker::for_device(&dev)?;
    let mark = checker
        .module()
        .ok_or_else(|| Error::Other("no harness module on a GPU".into()))?
        .kernel("bench_mark")?;
    let mut timer = timing::Timer {
        clock: timing::Clock::Cuda(rawcuda::Bracket::new(&raw)?),
        sync: Box::new(synchronize),
        mark: Box::new(move |flag, value| launch!(mark[1usize, 1usize](flag, value))),
    };
    gpu::run_all(&opts, dev, &mut timer, &checker, &mut |row| {
        print_row("gpukit", &row)
    })?;
    drop(timer);
    cudarc_ref::run_all(
        &raw,
        &opts.sizes,
        opts.warmup,
        opts.reps,
        &|n| opts.wants(n),
        &mut |row| print_row("cudarc", &row),
    )
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = match args.mode.as_str() {
        "gpu" => gpu_mode(&args),
        "ceilings" => ceilings::run(args.reps, &args.sizes_gib, &mut |j| {
            eprintln!("ceiling: {}", j.render());
            println!("{}", j.render())
        }),
        "cpu" => cpu::run_all(args.n, args.reps, args.only.as_deref(), &mut |j| {
            println!("{}", j.render())
        }),
        "diag" => gpu::diag(args.reps),
        other => {
            eprintln!("unknown mode {other}: gpu, ceilings, cpu or diag");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpukit-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> std::result::Result<Args, String> {
        parse(v.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_flags() {
        let a = args(&["gpu", "--reps", "4", "--dry-run", "--only", "sum"]).unwrap();
        assert_eq!((a.mode.as_str(), a.reps, a.dry_run), ("gpu", 4, true));
        assert_eq!(a.only.as_deref(), Some("sum"));
        let a = args(&["ceilings", "--sizes-gib", "1, 4"]).unwrap();
        assert_eq!(a.sizes_gib, vec![1, 4]);
        assert!(args(&["ceilings", "--sizes-gib", "0"]).is_err());
        assert!(args(&["gpu", "--reps"])
            .unwrap_err()
            .contains("needs a value"));
        assert!(args(&["gpu", "--bogus", "1"])
            .unwrap_err()
            .contains("unknown option"));
        assert!(args(&[]).is_err());
    }
}
