//! DistFrame on real GPUs (feature `frame`; the workspace tests and the GPU pipeline build it
//! with `--features gpukit-multi/frame`): partitions on every GPU, group-by results against one
//! GPU and against the CPU backend, filter, collect.
//!
//! Every test skips visibly ("skipped: ...") without a usable GPU, or fails there with
//! `GPUKIT_TEST_REQUIRE_GPU=1`. With one GPU the pool has one worker (the test says so).
#![cfg(feature = "frame")]

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::Device;
use gpukit_frame::datasets::timeseries::timeseries;
use gpukit_frame::group_by::Agg;
use gpukit_frame::{col, lit, DataFrame};
use gpukit_multi::{DevicePool, DistFrame};

fn f64s(df: &DataFrame, name: &str) -> Vec<f64> {
    df.column(name)
        .unwrap()
        .values::<f64>()
        .unwrap()
        .to_vec()
        .unwrap()
}

fn i64s(df: &DataFrame, name: &str) -> Vec<i64> {
    df.column(name)
        .unwrap()
        .values::<i64>()
        .unwrap()
        .to_vec()
        .unwrap()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max)
}

#[test]
fn timeseries_group_by_on_every_gpu_equals_one_gpu_and_the_cpu() {
    let Some((dev0, _g)) = gpu() else { return };
    let pool = DevicePool::new().expect("a pool on the GPUs");
    assert!(pool.devices().iter().all(|d| d.is_cuda()), "{pool}");
    if pool.len() == 1 {
        println!("one GPU: the pool has one worker");
    }
    let ts = timeseries(8, 7).with_rows_per_partition(100_000);
    let ddf = DistFrame::from_map(&pool, ts.n_partitions(), move |i, ctx| {
        ts.partition(i, &ctx.device())
    })
    .unwrap();
    println!("{ddf}");
    assert_eq!(ddf.height(), 800_000);
    let devices = ddf.partition_devices();
    for (i, p) in ddf.partitions().iter().enumerate() {
        assert_eq!(p.device(), Some(devices[i]), "partition {i}");
        assert_eq!(devices[i], pool.device(i % pool.len()).unwrap());
    }
    let aggs = [
        Agg::mean("x"),
        Agg::sum("id"),
        Agg::min("y"),
        Agg::max("id").alias("id_max"),
        Agg::len(),
        Agg::count("y").alias("y_count"),
    ];
    let all = ddf.group_by(&["name"]).unwrap().agg(&aggs).unwrap();
    assert_eq!(all.device(), Some(dev0));
    let one = ts.frame(&dev0).unwrap();
    let cpu = ts.frame(&Device::Cpu).unwrap();
    let want = one.group_by(&["name"]).unwrap().agg(&aggs).unwrap();
    let want_cpu = cpu.group_by(&["name"]).unwrap().agg(&aggs).unwrap();
    assert_eq!(all.names(), want.names());
    assert_eq!(all.dtypes(), want.dtypes());
    assert_eq!(all.height(), 26);
    for w in [&want, &want_cpu] {
        assert!(max_diff(&f64s(&all, "x"), &f64s(w, "x")) < 1e-12);
        assert_eq!(f64s(&all, "y"), f64s(w, "y"));
        assert_eq!(i64s(&all, "id"), i64s(w, "id"));
        assert_eq!(i64s(&all, "id_max"), i64s(w, "id_max"));
        for c in ["len", "y_count"] {
            let a = all
                .column(c)
                .unwrap()
                .values::<u32>()
                .unwrap()
                .to_vec()
                .unwrap();
            let b = w
                .column(c)
                .unwrap()
                .values::<u32>()
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(a, b, "{c}");
        }
    }
    // filter on the workers, then group
    let e = col("x").gt(lit(0.5));
    let f_all = ddf.filter(&e).unwrap();
    let f_one = one.filter_expr(&e).unwrap();
    assert_eq!(f_all.height(), f_one.height());
    let g_all = f_all
        .group_by(&["name"])
        .unwrap()
        .agg(&[Agg::mean("y")])
        .unwrap();
    let g_one = f_one
        .group_by(&["name"])
        .unwrap()
        .agg(&[Agg::mean("y")])
        .unwrap();
    assert!(max_diff(&f64s(&g_all, "y"), &f64s(&g_one, "y")) < 1e-12);
    // collect joins the partitions in order on GPU 0
    let back = ddf.collect().unwrap();
    assert_eq!(back.device(), Some(dev0));
    assert_eq!(f64s(&back, "x"), f64s(&one, "x"));
    assert_eq!(i64s(&back, "timestamp"), i64s(&one, "timestamp"));
    println!(
        "{} workers: group-by of {} rows equals one GPU and the CPU",
        pool.len(),
        ddf.height()
    );
}
