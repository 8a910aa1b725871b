//! Group-by, `value_counts`, `unique`, `n_unique` and `describe` on a CUDA device against the
//! CPU backend, on random frames with nulls (up to ~1M rows, unicode string keys). The kernels
//! reduce each group in row order on both backends, so results must be equal bit for bit,
//! floats included.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails
//! there with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The same operations are checked
//! against a host implementation on the CPU backend beside the code
//! (`src/group_by/tests.rs`, `src/describe.rs`).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device};
use gpukit_frame::group_by::Agg;
use gpukit_frame::{Bitmap, Column, ColumnData, DataFrame, TimeUnit};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A column's rows on the host, as comparable text (floats as their bits).
fn rows(col: &Column) -> Vec<Option<String>> {
    let valid = col
        .validity()
        .map(|b| b.to_bools().unwrap())
        .unwrap_or_else(|| vec![true; col.len()]);
    fn txt<T: std::fmt::Debug>(v: Vec<T>) -> Vec<String> {
        v.into_iter().map(|x| format!("{x:?}")).collect()
    }
    let vals = match col.data() {
        ColumnData::Bool(a) => txt(a.to_vec().unwrap()),
        ColumnData::Int32(a) | ColumnData::Date(a) => txt(a.to_vec().unwrap()),
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => txt(a.to_vec().unwrap()),
        ColumnData::UInt32(a) => txt(a.to_vec().unwrap()),
        ColumnData::UInt64(a) => txt(a.to_vec().unwrap()),
        ColumnData::Float32(a) => txt(a.to_vec().unwrap().into_iter().map(f32::to_bits).collect()),
        ColumnData::Float64(a) => txt(a.to_vec().unwrap().into_iter().map(f64::to_bits).collect()),
        ColumnData::Utf8(s) => s.to_strings().unwrap(),
    };
    vals.into_iter()
        .zip(valid)
        .map(|(v, ok)| ok.then_some(v))
        .collect()
}

/// Asserts two frames hold the same names, types, nulls and values (floats bit for bit).
fn assert_same(gpu: &DataFrame, cpu: &DataFrame, what: &str) {
    assert_eq!(gpu.names(), cpu.names(), "{what}: names");
    assert_eq!(gpu.dtypes(), cpu.dtypes(), "{what}: types");
    for (g, c) in gpu.columns().iter().zip(cpu.columns()) {
        let (rg, rc) = (rows(g), rows(c));
        assert_eq!(rg.len(), rc.len(), "{what}: column {} rows", g.name());
        if let Some(i) = (0..rg.len()).find(|&i| rg[i] != rc[i]) {
            panic!(
                "{what}: column {} row {i}: GPU {:?}, CPU {:?}",
                g.name(),
                rg[i],
                rc[i]
            );
        }
    }
}

fn nulls(col: Column, rng: &mut StdRng, p: f64, dev: &Device) -> Column {
    let valid: Vec<bool> = (0..col.len()).map(|_| !rng.random_bool(p)).collect();
    let name = col.name().to_string();
    let data = col.data().clone();
    Column::new(
        name,
        data,
        Some(Bitmap::from_bools_on(&valid, dev).unwrap()),
    )
    .unwrap()
}

/// A pageview-like frame of `n` rows on the CPU backend: Zipf-ish projects (unicode included),
/// many titles, long-tailed requests, nulls in most columns.
fn frame(n: usize, seed: u64) -> DataFrame {
    let cpu = Device::Cpu;
    let mut rng = StdRng::seed_from_u64(seed);
    let projects: Vec<String> = (0..300)
        .map(|i| match i {
            0 => "en".to_string(),
            1 => "日本語".to_string(),
            2 => "zürich.m".to_string(),
            _ => format!("p{i}"),
        })
        .collect();
    let zipf = |rng: &mut StdRng, m: usize| {
        let u: f64 = rng.random();
        ((m as f64).powf(u) as usize).saturating_sub(1).min(m - 1)
    };
    let project: Vec<&str> = (0..n)
        .map(|_| projects[zipf(&mut rng, 300)].as_str())
        .collect();
    let title: Vec<String> = (0..n)
        .map(|_| format!("Title_{}_é", zipf(&mut rng, n.max(2))))
        .collect();
    let requests: Vec<i64> = (0..n)
        .map(|_| (1.0 / (1.0 - rng.random::<f64>() * 0.999)) as i64)
        .collect();
    let bytes: Vec<f64> = (0..n)
        .map(|_| {
            if rng.random_bool(0.01) {
                f64::NAN
            } else {
                rng.random::<f64>() * 1e5
            }
        })
        .collect();
    let ratio: Vec<f32> = (0..n).map(|_| rng.random::<f32>() - 0.5).collect();
    let hour: Vec<i32> = (0..n).map(|_| rng.random_range(0..24)).collect();
    let flag: Vec<bool> = (0..n).map(|_| rng.random_bool(0.3)).collect();
    let day: Vec<i32> = (0..n).map(|_| 19_000 + rng.random_range(0..7)).collect();
    let ts: Vec<i64> = (0..n).map(|_| rng.random_range(0..1_000_000)).collect();
    let cols = vec![
        nulls(
            Column::from_strs_on("project", &project, &cpu).unwrap(),
            &mut rng,
            0.01,
            &cpu,
        ),
        nulls(
            Column::from_strs_on("title", &title, &cpu).unwrap(),
            &mut rng,
            0.05,
            &cpu,
        ),
        nulls(
            Column::from_slice_on("requests", &requests, &cpu).unwrap(),
            &mut rng,
            0.1,
            &cpu,
        ),
        nulls(
            Column::from_slice_on("bytes", &bytes, &cpu).unwrap(),
            &mut rng,
            0.1,
            &cpu,
        ),
        Column::from_slice_on("ratio", &ratio, &cpu).unwrap(),
        nulls(
            Column::from_slice_on("hour", &hour, &cpu).unwrap(),
            &mut rng,
            0.02,
            &cpu,
        ),
        Column::from_slice_on("flag", &flag, &cpu).unwrap(),
        Column::new(
            "day",
            ColumnData::Date(Array::from_slice_on(&day, &cpu).unwrap()),
            None,
        )
        .unwrap(),
        Column::new(
            "ts",
            ColumnData::Timestamp(Array::from_slice_on(&ts, &cpu).unwrap(), TimeUnit::Second),
            None,
        )
        .unwrap(),
    ];
    DataFrame::new(cols).unwrap()
}

fn aggs() -> Vec<Agg> {
    vec![
        Agg::len(),
        Agg::count("requests").alias("requests_count"),
        Agg::sum("requests"),
        Agg::mean("requests").alias("requests_mean"),
        Agg::std("requests").alias("requests_std"),
        Agg::min("requests").alias("requests_min"),
        Agg::max("requests").alias("requests_max"),
        Agg::sum("bytes"),
        Agg::mean("bytes").alias("bytes_mean"),
        Agg::std("bytes").alias("bytes_std"),
        Agg::min("bytes").alias("bytes_min"),
        Agg::max("bytes").alias("bytes_max"),
        Agg::sum("ratio"),
        Agg::std("ratio").alias("ratio_std"),
        Agg::sum("flag"),
        Agg::mean("flag").alias("flag_mean"),
        Agg::first("title"),
        Agg::min("title").alias("title_min"),
        Agg::max("title").alias("title_max"),
        Agg::n_unique("title").alias("titles"),
        Agg::first("ts"),
        Agg::max("day"),
    ]
}

fn check_group_by(n: usize, seed: u64, key_sets: &[&[&str]]) {
    let Some((dev, _lock)) = gpu() else { return };
    let cpu = frame(n, seed);
    let on_gpu = cpu.to_device(&dev).unwrap();
    for keys in key_sets {
        let a: Vec<Agg> = aggs()
            .into_iter()
            .filter(|a| !keys.contains(&a.output_name()))
            .collect();
        let g = on_gpu.group_by(keys).unwrap().agg(&a).unwrap();
        assert_eq!(g.device(), Some(dev), "the result stays on the GPU");
        let c = cpu.group_by(keys).unwrap().agg(&a).unwrap();
        assert_same(&g, &c, &format!("group_by {keys:?}, {n} rows"));
    }
}

#[test]
fn group_by_on_the_gpu_equals_the_cpu_backend_on_small_frames() {
    for (n, seed) in [(0usize, 1u64), (1, 2), (5, 3), (1000, 4)] {
        check_group_by(
            n,
            seed,
            &[
                &["project"],
                &["hour"],
                &["flag"],
                &["day", "flag"],
                &["project", "hour", "flag"],
                &["title"],
                &["bytes"],
            ],
        );
    }
}

#[test]
fn group_by_on_the_gpu_equals_the_cpu_backend_on_a_million_rows() {
    check_group_by(1 << 20, 7, &[&["project"]]);
}

#[test]
fn group_by_many_string_keys_on_the_gpu() {
    check_group_by(200_000, 8, &[&["title", "flag"]]);
}

#[test]
fn value_counts_unique_and_describe_on_the_gpu_equal_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let cpu = frame(100_000, 9);
    let on_gpu = cpu.to_device(&dev).unwrap();
    for name in ["project", "title", "hour", "bytes", "flag"] {
        let g = on_gpu.value_counts(name).unwrap();
        let c = cpu.value_counts(name).unwrap();
        assert_same(&g, &c, &format!("value_counts {name}"));
        let (gc, cc) = (on_gpu.column(name).unwrap(), cpu.column(name).unwrap());
        assert_eq!(
            gc.n_unique().unwrap(),
            cc.n_unique().unwrap(),
            "n_unique {name}"
        );
        let gu = DataFrame::new(vec![gc.unique().unwrap()]).unwrap();
        let cu = DataFrame::new(vec![cc.unique().unwrap()]).unwrap();
        assert_same(&gu, &cu, &format!("unique {name}"));
    }
    assert_same(
        &on_gpu.describe().unwrap(),
        &cpu.describe().unwrap(),
        "describe",
    );
    let empty = frame(0, 10).to_device(&dev).unwrap();
    assert_same(
        &empty.describe().unwrap(),
        &frame(0, 10).describe().unwrap(),
        "describe of an empty frame",
    );
}

#[test]
fn bad_aggregations_are_errors_on_the_gpu_too() {
    let Some((dev, _lock)) = gpu() else { return };
    let df = frame(100, 11).to_device(&dev).unwrap();
    let e = df
        .group_by(&["project"])
        .unwrap()
        .agg(&[Agg::mean("title")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("mean of column `title` of type str"), "{e}");
    let e = df.group_by(&["nope"]).unwrap_err().to_string();
    assert!(e.contains("no column named `nope`"), "{e}");
}
