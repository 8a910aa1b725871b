//! The row operations (take, filter with masks and expressions, sort_by, join) on the first
//! CUDA device against the same operations on the CPU backend, on random frames with nulls,
//! NaN, duplicates and unicode strings, from empty to 100k rows (many blocks, several
//! string-ranking rounds). The CPU side of each operation is checked against host
//! implementations beside the code (`src/ops/*/tests.rs`, `src/expr/tests.rs`).
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device};
use gpukit_frame::{col, Bitmap, Column, ColumnData, DataFrame, JoinHow, Utf8Data};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SIZES: [usize; 6] = [0, 1, 7, 1029, 20_000, 100_000];

const WORDS: [&str; 10] = [
    "en",
    "de",
    "",
    "Zürich",
    "日本語",
    "en_US",
    "a\u{0}b",
    "ab",
    "Main_Page_of_the_wiki",
    "Main_Page_of_the_wikipedia",
];

fn bitmap(r: &mut StdRng, n: usize) -> Option<Bitmap> {
    let v: Vec<bool> = (0..n).map(|_| !r.random_bool(0.15)).collect();
    Some(Bitmap::from_bools_on(&v, &Device::Cpu).unwrap())
}

/// A random frame on the CPU backend: `i` i64, `f` f64 (NaN, -0.0), `s` str, `b` bool, `u`
/// u32, `d` date, all with nulls, and `n` i64 without.
fn frame(r: &mut StdRng, n: usize) -> DataFrame {
    let cpu = Device::Cpu;
    let i: Vec<i64> = (0..n).map(|_| r.random_range(-2000..2000)).collect();
    let f: Vec<f64> = (0..n)
        .map(|_| match r.random_range(0..50) {
            0 => f64::NAN,
            1 => -0.0,
            _ => r.random_range(-2000..2000) as f64 * 0.5,
        })
        .collect();
    let s: Vec<String> = (0..n)
        .map(|_| {
            let w = WORDS[r.random_range(0..WORDS.len())];
            format!("{w}{}", r.random_range(0..30))
        })
        .collect();
    let b: Vec<bool> = (0..n).map(|_| r.random_bool(0.5)).collect();
    let u: Vec<u32> = (0..n)
        .map(|_| r.random_range(0..4_000_000_000u32))
        .collect();
    let d: Vec<i32> = (0..n).map(|_| r.random_range(-400..400)).collect();
    let plain: Vec<i64> = (0..n as i64).collect();
    let a = |x| Array::from_slice_on(x, &cpu).unwrap();
    DataFrame::new(vec![
        Column::new("i", ColumnData::Int64(a(&i)), bitmap(r, n)).unwrap(),
        Column::new(
            "f",
            ColumnData::Float64(Array::from_slice_on(&f, &cpu).unwrap()),
            bitmap(r, n),
        )
        .unwrap(),
        Column::new(
            "s",
            ColumnData::Utf8(Utf8Data::from_strs_on(&s, &cpu).unwrap()),
            bitmap(r, n),
        )
        .unwrap(),
        Column::new(
            "b",
            ColumnData::Bool(Array::from_slice_on(&b, &cpu).unwrap()),
            bitmap(r, n),
        )
        .unwrap(),
        Column::new(
            "u",
            ColumnData::UInt32(Array::from_slice_on(&u, &cpu).unwrap()),
            bitmap(r, n),
        )
        .unwrap(),
        Column::new(
            "d",
            ColumnData::Date(Array::from_slice_on(&d, &cpu).unwrap()),
            bitmap(r, n),
        )
        .unwrap(),
        Column::new("n", ColumnData::Int64(a(&plain)), None).unwrap(),
    ])
    .unwrap()
}

/// A column's values as text per row (`None` for null), bit-exact for floats.
fn rows(c: &Column) -> Vec<Option<String>> {
    let valid = c
        .validity()
        .map(|v| v.to_bools().unwrap())
        .unwrap_or_else(|| vec![true; c.len()]);
    let vals: Vec<String> = match c.data() {
        ColumnData::Bool(a) => a.to_vec().unwrap().iter().map(|x| x.to_string()).collect(),
        ColumnData::Int32(a) | ColumnData::Date(a) => {
            a.to_vec().unwrap().iter().map(|x| x.to_string()).collect()
        }
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => {
            a.to_vec().unwrap().iter().map(|x| x.to_string()).collect()
        }
        ColumnData::UInt32(a) => a.to_vec().unwrap().iter().map(|x| x.to_string()).collect(),
        ColumnData::UInt64(a) => a.to_vec().unwrap().iter().map(|x| x.to_string()).collect(),
        ColumnData::Float32(a) => a
            .to_vec()
            .unwrap()
            .iter()
            .map(|x| format!("{:x}", x.to_bits()))
            .collect(),
        ColumnData::Float64(a) => a
            .to_vec()
            .unwrap()
            .iter()
            .map(|x| format!("{:x}", x.to_bits()))
            .collect(),
        ColumnData::Utf8(s) => s.to_strings().unwrap(),
    };
    vals.into_iter()
        .zip(valid)
        .map(|(v, ok)| ok.then_some(v))
        .collect()
}

/// Asserts a frame computed on the GPU equals the one computed on the CPU backend.
fn same(gpu: &DataFrame, cpu: &DataFrame, what: &str) {
    assert_eq!(gpu.names(), cpu.names(), "{what}: names");
    assert_eq!(gpu.dtypes(), cpu.dtypes(), "{what}: types");
    assert_eq!(gpu.height(), cpu.height(), "{what}: rows");
    let back = gpu.to_device(&Device::Cpu).unwrap();
    for (g, c) in back.columns().iter().zip(cpu.columns()) {
        assert_eq!(rows(g), rows(c), "{what}: column {}", g.name());
    }
}

#[test]
fn take_and_filter_match_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut r = StdRng::seed_from_u64(1);
    for n in SIZES {
        let cpu = frame(&mut r, n);
        let g = cpu.to_device(&dev).unwrap();
        let m = if n == 0 { 0 } else { n + 11 };
        let idx: Vec<i64> = (0..m).map(|_| r.random_range(0..n as i64)).collect();
        let (ic, ig) = (
            Array::from_slice_on(&idx, &Device::Cpu).unwrap(),
            Array::from_slice_on(&idx, &dev).unwrap(),
        );
        same(
            &g.take(&ig).unwrap(),
            &cpu.take(&ic).unwrap(),
            &format!("take, n={n}"),
        );
        if n > 0 {
            let bad = Array::from_slice_on(&[0i64, n as i64], &dev).unwrap();
            let e = g.take(&bad).unwrap_err().to_string();
            assert!(e.contains(&format!("index {n} is out of range")), "{e}");
        }
        let keep: Vec<bool> = (0..n).map(|_| r.random_bool(0.3)).collect();
        let (kc, kg) = (
            Array::from_slice_on(&keep, &Device::Cpu).unwrap(),
            Array::from_slice_on(&keep, &dev).unwrap(),
        );
        same(
            &g.filter(&kg).unwrap(),
            &cpu.filter(&kc).unwrap(),
            &format!("filter mask, n={n}"),
        );
        let bc = cpu.column("b").unwrap();
        let bg = g.column("b").unwrap();
        same(
            &g.filter(bg).unwrap(),
            &cpu.filter(bc).unwrap(),
            &format!("filter bool column, n={n}"),
        );
    }
}

#[test]
fn expression_filters_match_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut r = StdRng::seed_from_u64(2);
    let exprs = [
        col("i").gt(1000),
        col("i").le(-1500) | col("b").eq(true),
        col("f").lt(2.5) & !col("b"),
        col("f").eq(0.0) | col("f").ge(f64::NAN),
        col("s").eq("en7") | col("s").ge("Zürich"),
        col("s").is_in(&["de3", "日本語12", "", "Main_Page_of_the_wikipedia29"]),
        col("i").is_in(&[1, 2, 3, 49, -2000, 1999]) & col("u").gt(2_000_000_000u32),
        col("u").lt(col("i")) | col("s").is_null(),
        col("f").is_not_null() & col("n").ne(5),
        col("s").lt(col("s")).is_null(),
    ];
    for n in SIZES {
        let cpu = frame(&mut r, n);
        let g = cpu.to_device(&dev).unwrap();
        for (k, e) in exprs.iter().enumerate() {
            same(
                &g.filter(e).unwrap(),
                &cpu.filter(e).unwrap(),
                &format!("filter expr {k} ({e:?}), n={n}"),
            );
            let (ec, eg) = (e.evaluate(&cpu).unwrap(), e.evaluate(&g).unwrap());
            assert_eq!(
                rows(&eg.to_device(&Device::Cpu).unwrap()),
                rows(&ec),
                "evaluate expr {k}, n={n}"
            );
        }
        let err = g.filter(col("s").gt(1)).unwrap_err().to_string();
        assert!(
            err.contains("column `s` of type str with 1 of type i64"),
            "{err}"
        );
    }
}

#[test]
fn sorts_match_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut r = StdRng::seed_from_u64(3);
    let keys: [(&[&str], &[bool]); 8] = [
        (&["i"], &[false]),
        (&["f"], &[true]),
        (&["s"], &[false]),
        (&["s"], &[true]),
        (&["b", "s", "i"], &[false, true, false]),
        (&["u", "f"], &[true, false]),
        (&["d"], &[false]),
        (&["f", "s"], &[false, false]),
    ];
    for n in SIZES {
        let cpu = frame(&mut r, n);
        let g = cpu.to_device(&dev).unwrap();
        for (by, desc) in keys {
            for nulls_last in [true, false] {
                let (oc, og) = (
                    cpu.arg_sort_by(by, desc, nulls_last).unwrap(),
                    g.arg_sort_by(by, desc, nulls_last).unwrap(),
                );
                assert_eq!(
                    og.to_vec().unwrap(),
                    oc.to_vec().unwrap(),
                    "order by {by:?} {desc:?} nulls_last={nulls_last}, n={n}"
                );
            }
            same(
                &g.sort_by(by, desc).unwrap(),
                &cpu.sort_by(by, desc).unwrap(),
                &format!("sort_by {by:?}, n={n}"),
            );
        }
    }
}

#[test]
fn joins_match_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut r = StdRng::seed_from_u64(4);
    for (nl, nr) in [
        (0, 3),
        (3, 0),
        (1, 1),
        (1029, 700),
        (20_000, 5_000),
        (100_000, 1_000),
    ] {
        let lc = frame(&mut r, nl);
        let rc = frame(&mut r, nr);
        let (lg, rg) = (lc.to_device(&dev).unwrap(), rc.to_device(&dev).unwrap());
        for on in [&["i"][..], &["s"], &["f"], &["d"], &["i", "s"], &["b", "d"]] {
            for how in [JoinHow::Inner, JoinHow::Left] {
                same(
                    &lg.join(&rg, on, how).unwrap(),
                    &lc.join(&rc, on, how).unwrap(),
                    &format!("{how:?} join on {on:?}, {nl} x {nr}"),
                );
            }
        }
    }
}
