//! Group-by scaling across GPUs (issue 19's speed row): Dask's `groupby('name').x.mean()` on
//! the `timeseries` data set, partitioned the same way on one GPU and on every GPU, each run
//! checked against the other, reported as rows per second and the ratio.
//!
//! ```text
//! cargo run --release -p gpukit-multi --features frame --example groupby_scaling -- \
//!     [partitions=30] [rows_per_partition=2592000] [iters=5] [warmup=2]
//! ```
//!
//! The defaults give 77.76 million rows (30 partitions of 30 days of seconds each), the size of
//! the course's Dask example. The data is made on the workers (`DistFrame::from_map`) before
//! timing; a timed run is the whole distributed group-by: local aggregates on every worker, the
//! partial tables gathered onto GPU 0, the combine there, and the result read back to the host.
//! Without a GPU it runs on `GPUKIT_CPU_DEVICES` virtual CPU devices (default 2) and says that
//! this measures nothing about speed.

use gpukit::{Error, Result};
use gpukit_frame::datasets::timeseries::timeseries;
use gpukit_frame::group_by::Agg;
use gpukit_frame::DataFrame;
use gpukit_multi::{DevicePool, DistFrame};
use std::time::Instant;

fn frame_err(e: gpukit_frame::FrameError) -> Error {
    Error::Other(e.to_string())
}

/// Median seconds of `iters` timed runs (after `warmup` untimed ones) and the last result.
fn time_group_by(ddf: &DistFrame, iters: usize, warmup: usize) -> Result<(f64, DataFrame)> {
    let run = || -> Result<DataFrame> {
        let out = ddf
            .group_by(&["name"])
            .and_then(|g| g.agg(&[Agg::mean("x")]))
            .map_err(frame_err)?;
        // reading the means back waits for the devices
        out.column("x")
            .map_err(frame_err)?
            .values::<f64>()
            .map_err(frame_err)?
            .to_vec()?;
        Ok(out)
    };
    for _ in 0..warmup {
        run()?;
    }
    let mut secs = Vec::with_capacity(iters);
    let mut last = None;
    for _ in 0..iters {
        let t = Instant::now();
        last = Some(run()?);
        secs.push(t.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    Ok((secs[secs.len() / 2], last.expect("at least one run")))
}

fn means(df: &DataFrame) -> Result<(Vec<String>, Vec<f64>)> {
    let names = match df.column("name").map_err(frame_err)?.data() {
        gpukit_frame::ColumnData::Utf8(s) => s.to_strings().map_err(frame_err)?,
        _ => return Err(Error::Other("`name` is not a string column".into())),
    };
    let x = df
        .column("x")
        .map_err(frame_err)?
        .values::<f64>()
        .map_err(frame_err)?
        .to_vec()?;
    Ok((names, x))
}

fn main() -> Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.replace('_', "").parse().unwrap_or_else(|_| {
                panic!("arguments: partitions rows_per_partition iters warmup (whole numbers), got {a:?}")
            })
        })
        .collect();
    let parts = args.first().copied().unwrap_or(30).max(1);
    let rows_pp = args.get(1).copied().unwrap_or(2_592_000);
    let iters = args.get(2).copied().unwrap_or(5).max(1);
    let warmup = args.get(3).copied().unwrap_or(2);
    let mut all = DevicePool::new()?;
    let gpus = !all.is_virtual_cpu();
    if !gpus {
        if all.len() == 1 {
            all = DevicePool::virtual_cpu(2)?;
        }
        eprintln!(
            "groupby_scaling: no GPU; {} virtual CPU devices (checks the results, measures no speed-up)",
            all.len()
        );
    }
    let one = DevicePool::with_devices(vec![all.device(0)?])?;
    let ts = timeseries(parts, 2026).with_rows_per_partition(rows_pp);
    let rows = ts.rows();
    let make = |pool: &DevicePool| {
        DistFrame::from_map(pool, parts, move |i, ctx| ts.partition(i, &ctx.device()))
            .map_err(frame_err)
    };
    // one GPU first, then its frame is dropped before every GPU gets theirs
    let (t1, r1) = {
        let ddf = make(&one)?;
        time_group_by(&ddf, iters, warmup)?
    };
    let (tn, rn) = {
        let ddf = make(&all)?;
        time_group_by(&ddf, iters, warmup)?
    };
    let (n1, m1) = means(&r1)?;
    let (nn, mn) = means(&rn)?;
    let diff = m1
        .iter()
        .zip(&mn)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    if n1 != nn || diff > 1e-12 {
        return Err(Error::Other(format!(
            "results differ: names equal {}, largest mean difference {diff:e}",
            n1 == nn
        )));
    }
    let n = all.len();
    let kind = if gpus { "GPU" } else { "virtual CPU device" };
    println!(
        "gpukit-multi groupby(name).x.mean() {rows} rows in {parts} partitions: 1 {kind} {:.3} ms ({:.1} Mrows/s), {n} {kind}(s) {:.3} ms ({:.1} Mrows/s), speed-up {:.2}x [results equal, {} groups, max |diff| {diff:.1e}]",
        t1 * 1e3,
        rows as f64 / t1 / 1e6,
        tn * 1e3,
        rows as f64 / tn / 1e6,
        t1 / tn,
        n1.len()
    );
    Ok(())
}
