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
//! gpukit-bench frame --rows N [--csv PATH] [--digests PATH] [--warmup N] [--reps N]
//!                    [--read-reps N] [--dry-run]
//!                                    the frame rows (issue 17) on the GPU (--dry-run: the CPU
//!                                    backend); benches/polars_twin.py is the Polars side
//! gpukit-bench frame --write-csv PATH --rows N   writes the pageview CSV both sides read
//! gpukit-bench ml [--side gpukit|linfa] [--knn-refs N] [--knn-queries Q] [--kmeans-rows N]
//!                 [--ridge-rows N] [--only knn,kmeans,ridge] [--preds PATH] [--warmup N]
//!                 [--reps N] [--dry-run]
//!                                    the ML rows (issue 18): gpukit-ml on the GPU (--dry-run: the
//!                                    CPU backend, small sizes), or linfa on the CPU (a build with
//!                                    --features linfa; exit 3 without); benches/sklearn_twin.py
//!                                    is scikit-learn's side
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
mod frame_digest;
mod frame_rows;
mod gpu;
mod json;
mod kernels;
mod ml_data;
#[cfg(feature = "linfa")]
mod ml_linfa;
mod ml_rows;
mod random_row;
mod rawcuda;
mod sort_rows;
mod svd_row;
mod timing;
mod verify;

use gpukit::prelude::*;
use std::process::ExitCode;
use std::sync::Arc;

const USAGE: &str = "usage: gpukit-bench gpu|ceilings|cpu|diag|frame|ml [--warmup N] [--reps N] \
                     [--n N] [--only S] [--sizes-gib 1,2,4] [--rows N] [--csv PATH] \
                     [--digests PATH] [--write-csv PATH] [--read-reps N] [--side gpukit|linfa] \
                     [--knn-refs N] [--knn-queries N] [--kmeans-rows N] [--ridge-rows N] \
                     [--preds PATH] [--dry-run]";

#[derive(Debug)]
struct Args {
    mode: String,
    warmup: usize,
    reps: usize,
    n: usize,
    only: Option<String>,
    sizes_gib: Vec<usize>,
    dry_run: bool,
    /// Frame mode: rows, CSV to read, digest file, CSV to write, timed reads.
    rows: Option<usize>,
    csv: Option<String>,
    digests: Option<String>,
    write_csv: Option<String>,
    read_reps: usize,
    /// ML mode: the side (gpukit or linfa), sizes, where the KNN predictions go; the flags
    /// that were not given keep the mode's defaults (`ml_rows::MlOpts`).
    side: String,
    knn_refs: Option<usize>,
    knn_queries: Option<usize>,
    kmeans_rows: Option<usize>,
    ridge_rows: Option<usize>,
    preds: Option<String>,
    warmup_given: bool,
    reps_given: bool,
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
        rows: None,
        csv: None,
        digests: None,
        write_csv: None,
        read_reps: 1,
        side: "gpukit".into(),
        knn_refs: None,
        knn_queries: None,
        kmeans_rows: None,
        ridge_rows: None,
        preds: None,
        warmup_given: false,
        reps_given: false,
    };
    while let Some(flag) = it.next() {
        if flag == "--dry-run" {
            a.dry_run = true;
            continue;
        }
        let val = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--warmup" => {
                a.warmup = num(&val)?;
                a.warmup_given = true;
            }
            "--reps" => {
                a.reps = num(&val)?.max(1);
                a.reps_given = true;
            }
            "--side" => a.side = val.clone(),
            "--knn-refs" => a.knn_refs = Some(num(&val)?),
            "--knn-queries" => a.knn_queries = Some(num(&val)?),
            "--kmeans-rows" => a.kmeans_rows = Some(num(&val)?),
            "--ridge-rows" => a.ridge_rows = Some(num(&val)?),
            "--preds" => a.preds = Some(val.clone()),
            "--n" => a.n = num(&val)?,
            "--only" => a.only = Some(val.clone()),
            "--rows" => a.rows = Some(num(&val)?),
            "--csv" => a.csv = Some(val.clone()),
            "--digests" => a.digests = Some(val.clone()),
            "--write-csv" => a.write_csv = Some(val.clone()),
            "--read-reps" => a.read_reps = num(&val)?.max(1),
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

/// `gpukit-bench frame`: the frame rows on the first GPU (the CPU backend with --dry-run), or
/// only the CSV with --write-csv.
fn frame_mode(a: &Args) -> Result<()> {
    let boxed = |e: Box<dyn std::error::Error>| Error::Other(e.to_string());
    if let Some(path) = &a.write_csv {
        let rows = a
            .rows
            .ok_or_else(|| Error::Other("--write-csv needs --rows".into()))?;
        return frame_rows::write_csv_file(std::path::Path::new(path), rows).map_err(boxed);
    }
    let (device, side, default_rows) = if a.dry_run {
        (Device::cpu(), "gpukit-frame-dry-run", 5000)
    } else {
        (Device::cuda(0)?, "gpukit-frame", 10_000_000)
    };
    let opts = frame_rows::FrameOpts {
        rows: a.rows.unwrap_or(default_rows),
        warmup: a.warmup,
        reps: a.reps,
        read_reps: a.read_reps,
        csv: a.csv.as_ref().map(std::path::PathBuf::from),
        digests: a.digests.as_ref().map(std::path::PathBuf::from),
    };
    let mut digest_lines = String::new();
    frame_rows::run(
        &opts,
        device,
        side,
        &mut |j| println!("{}", j.render()),
        &mut |j| {
            digest_lines.push_str(&j.render());
            digest_lines.push('\n');
        },
    )
    .map_err(boxed)?;
    if let Some(path) = &opts.digests {
        std::fs::write(path, digest_lines)
            .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// `gpukit-bench ml`: the ML rows, gpukit-ml on the first GPU (the CPU backend with --dry-run)
/// or linfa on the CPU (`--side linfa`).
fn ml_mode(a: &Args) -> std::result::Result<(), (u8, String)> {
    let mut opts = if a.dry_run {
        ml_rows::MlOpts::dry()
    } else {
        ml_rows::MlOpts::full()
    };
    let set = |field: &mut usize, v: Option<usize>| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(&mut opts.knn_refs, a.knn_refs);
    set(&mut opts.knn_queries, a.knn_queries);
    set(&mut opts.kmeans_rows, a.kmeans_rows);
    set(&mut opts.ridge_rows, a.ridge_rows);
    if a.warmup_given {
        opts.warmup = a.warmup;
    }
    if a.reps_given {
        opts.reps = a.reps;
    }
    opts.only = a.only.clone();
    opts.preds = a.preds.as_ref().map(std::path::PathBuf::from);
    if opts.wants("kmeans") && opts.kmeans_rows < ml_rows::CLUSTERS {
        return Err((
            2,
            format!("--kmeans-rows must be at least {}", ml_rows::CLUSTERS),
        ));
    }
    if opts.wants("knn") && (opts.knn_refs < ml_rows::K || opts.knn_queries == 0) {
        return Err((
            2,
            format!(
                "--knn-refs must be at least {} and --knn-queries at least 1",
                ml_rows::K
            ),
        ));
    }
    let err = |e: Box<dyn std::error::Error>| (1u8, e.to_string());
    let mut emit = |j: json::Json| println!("{}", j.render());
    match a.side.as_str() {
        "gpukit" => {
            let (device, side) = if a.dry_run {
                (Device::cpu(), "gpukit-dry-run")
            } else {
                (Device::cuda(0).map_err(|e| (1, e.to_string()))?, "gpukit")
            };
            ml_rows::run(&opts, device, side, &mut emit).map_err(err)
        }
        #[cfg(feature = "linfa")]
        "linfa" => ml_linfa::run(&opts, &mut emit).map_err(err),
        #[cfg(not(feature = "linfa"))]
        "linfa" => Err((
            3,
            "this gpukit-bench was built without feature `linfa` \
             (cargo build --release -p gpukit-bench --features linfa)"
                .into(),
        )),
        other => Err((2, format!("--side {other}: gpukit or linfa"))),
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if args.mode == "ml" {
        return match ml_mode(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err((code, e)) => {
                eprintln!("gpukit-bench ml: {e}");
                ExitCode::from(code)
            }
        };
    }
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
        "frame" => frame_mode(&args),
        other => {
            eprintln!("unknown mode {other}: gpu, ceilings, cpu, diag, frame or ml");
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
        let a = args(&[
            "frame",
            "--rows",
            "100",
            "--csv",
            "/tmp/x.csv",
            "--read-reps",
            "2",
        ])
        .unwrap();
        assert_eq!(
            (a.rows, a.csv.as_deref(), a.read_reps),
            (Some(100), Some("/tmp/x.csv"), 2)
        );
        let a = args(&[
            "ml",
            "--side",
            "linfa",
            "--knn-queries",
            "1000",
            "--preds",
            "/tmp/p.i64",
            "--only",
            "knn",
        ])
        .unwrap();
        assert_eq!(
            (
                a.side.as_str(),
                a.knn_queries,
                a.preds.as_deref(),
                a.reps_given
            ),
            ("linfa", Some(1000), Some("/tmp/p.i64"), false)
        );
    }

    #[test]
    fn ml_mode_refuses_bad_sizes_and_sides() {
        let a = args(&["ml", "--dry-run", "--kmeans-rows", "10"]).unwrap();
        assert_eq!(ml_mode(&a).unwrap_err().0, 2);
        let a = args(&["ml", "--dry-run", "--side", "sklearn"]).unwrap();
        assert_eq!(ml_mode(&a).unwrap_err().0, 2);
        #[cfg(not(feature = "linfa"))]
        {
            let a = args(&["ml", "--side", "linfa"]).unwrap();
            assert_eq!(ml_mode(&a).unwrap_err().0, 3);
        }
    }
}
