//! DistFrame on virtual CPU devices: every result equals the same operation on one frame
//! holding all the rows, on random data with nulls, empty partitions and several key types.

use super::*;
use gpukit_frame::datasets::timeseries::timeseries;
use gpukit_frame::group_by::Agg;
use gpukit_frame::{col, lit, Bitmap, Column, ColumnData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CPU: Device = Device::Cpu;

/// A column's cells as comparable host values (`None` for null); floats as `f64`.
#[derive(Debug, PartialEq, Clone)]
enum Cell {
    Null,
    Int(i128),
    Float(f64),
    Text(String),
}

fn cells(c: &Column) -> Vec<Cell> {
    let valid = match c.validity() {
        Some(v) => v.to_bools().unwrap(),
        None => vec![true; c.len()],
    };
    let vals: Vec<Cell> = match c.data() {
        ColumnData::Bool(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| Cell::Int(v as i128))
            .collect(),
        ColumnData::Int32(a) | ColumnData::Date(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| Cell::Int(v as i128))
            .collect(),
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| Cell::Int(v as i128))
            .collect(),
        ColumnData::UInt32(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| Cell::Int(v as i128))
            .collect(),
        ColumnData::UInt64(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| Cell::Int(v as i128))
            .collect(),
        ColumnData::Float32(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| Cell::Float(v as f64))
            .collect(),
        ColumnData::Float64(a) => a.to_vec().unwrap().into_iter().map(Cell::Float).collect(),
        ColumnData::Utf8(s) => s
            .to_strings()
            .unwrap()
            .into_iter()
            .map(Cell::Text)
            .collect(),
    };
    vals.into_iter()
        .zip(valid)
        .map(|(v, ok)| if ok { v } else { Cell::Null })
        .collect()
}

/// Equal names, types and cells; floats within a relative `tol` (0 for exact; at least 1e-5
/// for f32 columns when not exact).
fn assert_frames_eq(a: &DataFrame, b: &DataFrame, tol: f64) {
    assert_eq!(a.names(), b.names());
    assert_eq!(a.dtypes(), b.dtypes());
    for (x, y) in a.columns().iter().zip(b.columns()) {
        let (cx, cy) = (cells(x), cells(y));
        // f32 sums in another order differ in f32's last bits
        let tol = if tol > 0.0 && x.dtype() == FrameDType::Float32 {
            tol.max(1e-5)
        } else {
            tol
        };
        assert_eq!(cx.len(), cy.len(), "column {}", x.name());
        for (i, (p, q)) in cx.iter().zip(&cy).enumerate() {
            let same = match (p, q) {
                (Cell::Float(u), Cell::Float(v)) => {
                    (u.is_nan() && v.is_nan())
                        || (u - v).abs() <= tol * (1.0 + u.abs().max(v.abs()))
                }
                _ => p == q,
            };
            assert!(same, "column {} row {i}: {p:?} != {q:?}", x.name());
        }
    }
}

/// A random frame: an integer key with nulls, a string key, f64 values with nulls (and a
/// few NaN-free extremes), i32 values, booleans, f32 values.
fn random_frame(r: &mut StdRng, rows: usize) -> DataFrame {
    let names = ["ann", "bo", "cy", "dee", "é"];
    let k: Vec<i64> = (0..rows).map(|_| r.random_range(-3..4)).collect();
    let k_valid: Vec<bool> = (0..rows).map(|_| r.random_bool(0.9)).collect();
    let s: Vec<&str> = (0..rows)
        .map(|_| names[r.random_range(0..names.len())])
        .collect();
    let x: Vec<f64> = (0..rows).map(|_| r.random_range(-1.0..1.0)).collect();
    let x_valid: Vec<bool> = (0..rows).map(|_| r.random_bool(0.8)).collect();
    let n: Vec<i32> = (0..rows).map(|_| r.random_range(-1000..1000)).collect();
    let b: Vec<bool> = (0..rows).map(|_| r.random_bool(0.3)).collect();
    let f: Vec<f32> = (0..rows).map(|_| r.random_range(0.0..8.0)).collect();
    DataFrame::new(vec![
        Column::new(
            "k",
            ColumnData::Int64(gpukit::Array::from_slice_on(&k, &CPU).unwrap()),
            Some(Bitmap::from_bools_on(&k_valid, &CPU).unwrap()),
        )
        .unwrap(),
        Column::from_strs_on("s", &s, &CPU).unwrap(),
        Column::new(
            "x",
            ColumnData::Float64(gpukit::Array::from_slice_on(&x, &CPU).unwrap()),
            Some(Bitmap::from_bools_on(&x_valid, &CPU).unwrap()),
        )
        .unwrap(),
        Column::from_slice_on("n", &n, &CPU).unwrap(),
        Column::from_slice_on("b", &b, &CPU).unwrap(),
        Column::from_slice_on("f", &f, &CPU).unwrap(),
    ])
    .unwrap()
}

/// `whole` cut into `sizes.len()` row blocks of those sizes.
fn split(whole: &DataFrame, sizes: &[usize]) -> Vec<DataFrame> {
    let mut at = 0;
    sizes
        .iter()
        .map(|&n| {
            let p = whole.slice(at as i64, n).unwrap();
            at += n;
            p
        })
        .collect()
}

fn all_aggs() -> Vec<Agg> {
    vec![
        Agg::len(),
        Agg::count("x").alias("x_count"),
        Agg::sum("x").alias("x_sum"),
        Agg::mean("x").alias("x_mean"),
        Agg::min("x").alias("x_min"),
        Agg::max("x").alias("x_max"),
        Agg::sum("n").alias("n_sum"),
        Agg::mean("n").alias("n_mean"),
        Agg::min("n").alias("n_min"),
        Agg::max("s").alias("s_max"),
        Agg::sum("b").alias("b_sum"),
        Agg::mean("b").alias("b_mean"),
        Agg::sum("f").alias("f_sum"),
        Agg::first("n").alias("n_first"),
    ]
}

#[test]
fn group_by_equals_one_frame_on_random_data() {
    let mut r = StdRng::seed_from_u64(19);
    for (workers, sizes) in [
        (3, vec![700, 0, 1, 299, 1000]),
        (2, vec![5, 5]),
        (4, vec![1]),
        (1, vec![300, 300, 300]),
    ] {
        let pool = DevicePool::virtual_cpu(workers).unwrap();
        let whole = random_frame(&mut r, sizes.iter().sum());
        let dist = DistFrame::from_partitions(&pool, split(&whole, &sizes)).unwrap();
        assert_eq!(dist.height(), whole.height());
        assert_eq!(dist.n_partitions(), sizes.len());
        assert_eq!(dist.partition_heights(), sizes);
        for keys in [vec!["k"], vec!["s"], vec!["s", "k"], vec!["b"]] {
            let aggs = all_aggs();
            let want = whole.group_by(&keys).unwrap().agg(&aggs).unwrap();
            let got = dist.group_by(&keys).unwrap().agg(&aggs).unwrap();
            assert_frames_eq(&got, &want, 1e-9);
        }
        // collect gives the rows back in order
        assert_frames_eq(&dist.collect().unwrap(), &whole, 0.0);
        assert_frames_eq(&dist.gather().unwrap(), &whole, 0.0);
    }
}

#[test]
fn filter_then_group_by_equals_one_frame() {
    let mut r = StdRng::seed_from_u64(8);
    let pool = DevicePool::virtual_cpu(3).unwrap();
    let whole = random_frame(&mut r, 2000);
    let dist = DistFrame::from_partitions(&pool, split(&whole, &[400, 600, 1000, 0])).unwrap();
    let e = col("x").gt(lit(0.25)) & col("s").ne(lit("bo"));
    let f1 = whole.filter_expr(&e).unwrap();
    let fd = dist.filter(&e).unwrap();
    assert_eq!(fd.n_partitions(), 4);
    assert_eq!(fd.height(), f1.height());
    assert_frames_eq(&fd.collect().unwrap(), &f1, 0.0);
    let aggs = [Agg::mean("x"), Agg::len(), Agg::max("n")];
    assert_frames_eq(
        &fd.group_by(&["s"]).unwrap().agg(&aggs).unwrap(),
        &f1.group_by(&["s"]).unwrap().agg(&aggs).unwrap(),
        1e-9,
    );
    // every row filtered away: an empty result with the right columns
    let none = dist.filter(&col("n").gt(lit(5000))).unwrap();
    assert_eq!(none.height(), 0);
    let g = none.group_by(&["k"]).unwrap().agg(&aggs).unwrap();
    assert_eq!(g.height(), 0);
    assert_eq!(g.names(), ["k", "x", "len", "n"]);
}

#[test]
fn timeseries_from_map_groups_like_one_frame() {
    let pool = DevicePool::virtual_cpu(4).unwrap();
    let ts = timeseries(6, 42).with_rows_per_partition(5000);
    let dist = DistFrame::from_map(&pool, ts.n_partitions(), move |i, ctx| {
        ts.partition(i, &ctx.device())
    })
    .unwrap();
    assert_eq!(dist.height(), 30_000);
    assert_eq!(
        dist.partition_devices(),
        vec![CPU; 6],
        "partition i on worker i % 4"
    );
    let whole = ts.frame(&CPU).unwrap();
    assert_frames_eq(&dist.collect().unwrap(), &whole, 0.0);
    let aggs = [Agg::mean("x"), Agg::sum("id"), Agg::min("y"), Agg::len()];
    let got = dist.group_by(&["name"]).unwrap().agg(&aggs).unwrap();
    assert_eq!(got.height(), 26);
    assert_frames_eq(
        &got,
        &whole.group_by(&["name"]).unwrap().agg(&aggs).unwrap(),
        1e-9,
    );
    let shown = dist.to_string();
    assert!(
        shown.contains("30000 rows") && shown.contains("6 partitions on 4 devices"),
        "{shown}"
    );
}

#[test]
fn bad_input_is_an_error_naming_it() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let mut r = StdRng::seed_from_u64(1);
    let whole = random_frame(&mut r, 50);
    let e = DistFrame::from_partitions(&pool, vec![])
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least one partition"), "{e}");
    let other = whole.select(&["k", "s"]).unwrap();
    let e = DistFrame::from_partitions(&pool, vec![whole.head(3).unwrap(), other])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("partition 1 has columns (k: i64, s: str)"),
        "{e}"
    );
    let dist = DistFrame::from_partitions(&pool, split(&whole, &[20, 30])).unwrap();
    let e = dist.group_by(&["nope"]).unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
    let e = dist
        .group_by(&["k"])
        .unwrap()
        .agg(&[Agg::std("x")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not combine"), "{e}");
    let e = dist
        .group_by(&["k"])
        .unwrap()
        .agg(&[Agg::sum("s")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`s`"), "{e}");
    let e = dist
        .filter(&col("missing").gt(lit(1)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing"), "{e}");
}

#[test]
fn a_failing_partition_names_its_worker_and_the_pool_goes_on() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let e = DistFrame::from_map(&pool, 3, |i, ctx| {
        if i == 1 {
            Err(gpukit_frame::FrameError::Input(format!(
                "partition {i} refused"
            )))
        } else {
            timeseries(3, 0)
                .with_rows_per_partition(10)
                .partition(i, &ctx.device())
        }
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("worker 1") && e.contains("partition 1 refused"),
        "{e}"
    );
    let ok = DistFrame::from_map(&pool, 3, |i, ctx| {
        timeseries(3, 0)
            .with_rows_per_partition(10)
            .partition(i, &ctx.device())
    })
    .unwrap();
    assert_eq!(ok.height(), 30);
}
