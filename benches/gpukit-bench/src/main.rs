//! gpukit-bench: gpukit's side of the benchmarks (issue 6).
//!
//! ```text
//! gpukit-bench gpu [--warmup N] [--reps N] [--only SUBSTRING]   one round of the GPU workloads
//!                                                                (gpukit, then the raw-cudarc reference rows)
//! gpukit-bench cpu [--reps N] [--n ELEMENTS] [--only SUBSTRING] CPU backend against ndarray
//! gpukit-bench diag [--reps BATCHES]                             host time of tiny operations
//! ```
//!
//! Each row is printed as one JSON line on stdout (progress on stderr). benches/run.sh runs the GPU
//! rounds alternately with benches/cupy_twin.py on the device; benches/collect.py checks the two
//! sides against each other and writes docs/bench/results.json.

mod cpu;
mod cudarc_ref;
mod gpu;
mod json;
mod kernels;
mod timing;

use std::process::ExitCode;

struct Args {
    mode: String,
    warmup: usize,
    reps: usize,
    n: usize,
    only: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mode = it
        .next()
        .ok_or("usage: gpukit-bench gpu|cpu|diag [--warmup N] [--reps N] [--n N] [--only S]")?;
    let mut a = Args {
        mode,
        warmup: 3,
        reps: 10,
        n: 1 << 24,
        only: None,
    };
    while let Some(flag) = it.next() {
        let val = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = || {
            val.parse::<usize>()
                .map_err(|e| format!("{flag} {val}: {e}"))
        };
        match flag.as_str() {
            "--warmup" => a.warmup = num()?,
            "--reps" => a.reps = num()?.max(1),
            "--n" => a.n = num()?,
            "--only" => a.only = Some(val.clone()),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

/// Prints a row as one JSON line on stdout and its median on stderr.
fn print_row(side: &str, row: &gpu::Row) {
    let m = timing::median(
        &row.samples
            .iter()
            .map(|s| s.gpu_ms.unwrap_or(s.wall_ms))
            .collect::<Vec<_>>(),
    );
    eprintln!("{side}: {:<60} {:>10.4} ms", row.name, m);
    println!("{}", row.json(side).render());
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = match args.mode.as_str() {
        "gpu" => {
            let opts = gpu::Opts {
                warmup: args.warmup,
                reps: args.reps,
                only: args.only.clone(),
            };
            gpu::run_all(&opts, &mut |row| print_row("gpukit", &row)).and_then(|()| {
                cudarc_ref::run_all(opts.warmup, opts.reps, &|n| opts.wants(n), &mut |row| {
                    print_row("cudarc", &row)
                })
            })
        }
        "cpu" => cpu::run_all(args.n, args.reps, args.only.as_deref(), &mut |j| {
            println!("{}", j.render())
        }),
        "diag" => gpu::diag(args.reps),
        other => {
            eprintln!("unknown mode {other}: gpu, cpu or diag");
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
