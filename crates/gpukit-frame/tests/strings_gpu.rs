//! String operations, rolling windows and row UDFs of gpukit-frame on a CUDA device against
//! the CPU backend (the same kernels' native twins) on random data: unicode strings of every
//! UTF-8 width, empty strings, nulls, empty and one-row columns.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side is tested against host
//! implementations beside the code (`src/str_ops/*.rs`, `src/rolling/tests.rs`, `src/udf.rs`).

use gpukit::prelude::*;
use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit_frame::rolling::RollingOptions;
use gpukit_frame::{Bitmap, Column, ColumnData, DataFrame, Utf8Data};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const POOL: &[char] = &[
    'a', 'b', 'A', 'B', 'z', '0', ' ', '_', ':', '.', '\'', 'é', 'É', 'ß', 'ÿ', 'µ', 'ı', 'İ', 'ŉ',
    'Σ', 'σ', 'ς', 'ΐ', 'Ω', '\u{301}', 'Ж', 'ж', 'Ӏ', '日', '本', '😀',
];

/// `n` random strings (up to `max` characters, often empty) with about one in five null, as
/// a column on the CPU backend.
fn strings(seed: u64, n: usize, max: usize) -> Column {
    let mut rng = StdRng::seed_from_u64(seed);
    let values: Vec<String> = (0..n)
        .map(|_| {
            let k = rng.random_range(0..=max);
            (0..k)
                .map(|_| POOL[rng.random_range(0..POOL.len())])
                .collect()
        })
        .collect();
    let valid: Vec<bool> = (0..n).map(|_| rng.random_range(0..5) != 0).collect();
    let cpu = Device::Cpu;
    Column::new(
        "page_title",
        ColumnData::Utf8(Utf8Data::from_strs_on(&values, &cpu).unwrap()),
        Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
    )
    .unwrap()
}

/// A column's rows on the host as text (`None` where null), whatever its type.
fn rows(c: &Column) -> Vec<Option<String>> {
    let valid = c
        .validity()
        .map_or(vec![true; c.len()], |b| b.to_bools().unwrap());
    let text: Vec<String> = match c.data() {
        ColumnData::Utf8(s) => s.to_strings().unwrap(),
        ColumnData::Bool(a) => a.to_vec().unwrap().iter().map(|v| v.to_string()).collect(),
        ColumnData::UInt32(a) => a.to_vec().unwrap().iter().map(|v| v.to_string()).collect(),
        ColumnData::Float64(a) => a
            .to_vec()
            .unwrap()
            .iter()
            .map(|v| format!("{v:e}"))
            .collect(),
        other => panic!("unexpected {:?}", other.dtype()),
    };
    text.into_iter()
        .zip(valid)
        .map(|(t, ok)| ok.then_some(t))
        .collect()
}

/// Runs `op` on the CPU column and on its copy on `dev`, and checks the results are equal
/// (and that the GPU result lives on the GPU).
fn same(dev: &Device, cpu: &Column, what: &str, op: impl Fn(&Column) -> Column) {
    let on_gpu = cpu.to_device(dev).unwrap();
    let g = op(&on_gpu);
    assert_eq!(g.device(), *dev, "{what}: result not on the GPU");
    let c = op(cpu);
    assert_eq!(g.name(), c.name(), "{what}");
    assert_eq!(g.dtype(), c.dtype(), "{what}");
    assert_eq!(rows(&g), rows(&c), "{what}");
}

#[test]
fn string_ops_on_the_gpu_equal_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    for (seed, n) in [(1u64, 0usize), (2, 1), (3, 2), (4, 1000), (5, 100_000)] {
        let col = strings(seed, n, 16);
        let s = |what: &str, op: &dyn Fn(&Column) -> Column| same(&dev, &col, what, op);
        s("len_bytes", &|c| c.str().len_bytes().unwrap());
        s("len_chars", &|c| c.str().len_chars().unwrap());
        s("to_uppercase", &|c| c.str().to_uppercase().unwrap());
        s("to_lowercase", &|c| c.str().to_lowercase().unwrap());
        for pat in ["a", "ab", "Σ", "日本", ""] {
            s("contains", &|c| c.str().contains(pat).unwrap());
            s("starts_with", &|c| c.str().starts_with(pat).unwrap());
            s("ends_with", &|c| c.str().ends_with(pat).unwrap());
        }
        s("replace", &|c| c.str().replace("a", "XYZ").unwrap());
        s("replace_all", &|c| c.str().replace_all("ß", "ss").unwrap());
        s("replace_all shrink", &|c| {
            c.str().replace_all("ab", "").unwrap()
        });
        for part in 0..3 {
            s("split_part", &|c| c.str().split_part("_", part).unwrap());
        }
        s("slice", &|c| c.str().slice(1, Some(3)).unwrap());
        s("slice from end", &|c| c.str().slice(-4, None).unwrap());
        // Against std too, so both backends are not wrong together.
        let up = rows(&col.to_device(&dev).unwrap().str().to_uppercase().unwrap());
        let want: Vec<Option<String>> = rows(&col)
            .into_iter()
            .map(|r| r.map(|t| t.to_uppercase()))
            .collect();
        assert_eq!(up, want, "to_uppercase vs std, {n} rows");
    }
}

#[test]
fn string_kernels_walk_more_rows_than_one_grid() {
    // 65,535 blocks of 256 threads cover 16.7M rows; more rows take the grid-stride loop.
    let Some((dev, _lock)) = gpu() else { return };
    let n = 17_000_000usize;
    let values: Vec<&str> = (0..n)
        .map(|i| match i % 3 {
            0 => "en",
            1 => "de.m",
            _ => "",
        })
        .collect();
    let col = Column::from_strs_on("project", &values, &dev).unwrap();
    let hits = col.str().contains("en").unwrap();
    let v = hits.values::<bool>().unwrap().to_vec().unwrap();
    assert_eq!(v.iter().filter(|b| **b).count(), n.div_ceil(3));
    assert_eq!(v[n - 1], (n - 1).is_multiple_of(3));
    let up = col.str().to_uppercase().unwrap();
    if let ColumnData::Utf8(s) = up.data() {
        assert_eq!(
            s.bytes().size(),
            values.iter().map(|v| v.len()).sum::<usize>()
        );
        let offsets = s.offsets().to_vec().unwrap();
        for row in [0, 1, 2, n - 2, n - 1] {
            let len = (offsets[row + 1] - offsets[row]) as usize;
            assert_eq!(len, values[row].len(), "row {row}");
        }
        let tail = Utf8Data::from_strs_on(&["x"], &dev).unwrap();
        assert_eq!(tail.len(), 1);
    }
}

#[test]
fn rolling_on_the_gpu_equals_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(9);
    for n in [0usize, 1, 2, 999, 200_000] {
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
        let valid: Vec<bool> = (0..n).map(|_| rng.random_range(0..6) != 0).collect();
        let cpu = Device::Cpu;
        let col = Column::new(
            "requests",
            ColumnData::Float64(Array::from_slice_on(&x, &cpu).unwrap()),
            Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
        )
        .unwrap();
        for (window, min_periods, center) in
            [(1, 1, false), (3, 2, true), (7, 7, false), (50, 10, true)]
        {
            let o = RollingOptions::new(window)
                .min_periods(min_periods)
                .center(center);
            let what = format!("n={n} {o:?}");
            same(&dev, &col, &what, |c| c.rolling(o).sum().unwrap());
            same(&dev, &col, &what, |c| c.rolling(o).mean().unwrap());
            same(&dev, &col, &what, |c| c.rolling(o).min().unwrap());
            same(&dev, &col, &what, |c| c.rolling(o).max().unwrap());
        }
    }
}

#[kernel]
fn window_mean_abs(values: &[f64], valid: &[u8], starts: &[i64], ends: &[i64], out: &mut [f64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let mut s = 0.0f64;
        let mut c = 0.0f64;
        for j in (starts[i] as usize)..(ends[i] as usize) {
            if valid[j] == 1 {
                s += values[j].abs();
                c += 1.0;
            }
        }
        out[i] = if c > 0.0 { s / c } else { 0.0 };
    }
}

#[kernel]
fn bytes_per_request(bytes: &[i64], requests: &[i64], out: &mut [f64]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = if requests[i] > 0 {
            bytes[i] as f64 / requests[i] as f64
        } else {
            0.0
        };
    }
}

#[test]
fn udfs_on_the_gpu_equal_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut rng = StdRng::seed_from_u64(10);
    for n in [0usize, 1, 5000] {
        let r: Vec<i64> = (0..n).map(|_| rng.random_range(0..100)).collect();
        let b: Vec<i64> = (0..n).map(|_| rng.random_range(0..100_000)).collect();
        let valid: Vec<bool> = (0..n).map(|_| rng.random_range(0..4) != 0).collect();
        let cpu = Device::Cpu;
        let df = DataFrame::new(vec![
            Column::new(
                "requests",
                ColumnData::Int64(Array::from_slice_on(&r, &cpu).unwrap()),
                Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
            )
            .unwrap(),
            Column::from_slice_on("bytes", &b, &cpu).unwrap(),
        ])
        .unwrap();
        let run = |df: &DataFrame| {
            df.apply_rows(&["bytes", "requests"], "avg", |cfg, ins, out| {
                Ok(bytes_per_request.launch(
                    cfg,
                    ins.values::<i64>("bytes")?,
                    ins.values::<i64>("requests")?,
                    out,
                )?)
            })
            .unwrap()
        };
        let g = run(&df.to_device(&dev).unwrap());
        let c = run(&df);
        let (ga, ca) = (g.column("avg").unwrap(), c.column("avg").unwrap());
        assert_eq!(ga.device(), dev);
        assert_eq!(rows(ga), rows(ca), "apply_rows, {n} rows");
        let o = RollingOptions::new(5).min_periods(2).center(true);
        let apply = |c: &Column| {
            c.rolling(o)
                .apply(|cfg, w| {
                    window_mean_abs.launch(cfg, w.values, w.valid, w.starts, w.ends, w.out)
                })
                .unwrap()
        };
        same(&dev, ca, &format!("rolling apply, {n} rows"), apply);
    }
}
