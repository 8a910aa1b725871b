//! Frame-level tests of grouping on the CPU backend against a straightforward host
//! implementation (a `BTreeMap` from key tuples to rows) written here.

use std::collections::{BTreeMap, BTreeSet};

use gpukit::{Array, Device};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{Agg, AggKind};
use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::dtype::{FrameDType, TimeUnit};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

/// A host value of any column type.
#[derive(Debug, Clone, PartialEq)]
enum HV {
    I(i64),
    U(u64),
    F(f64),
    B(bool),
    S(String),
}

/// A host key that orders as the device does: floats by value with -0 = 0 and NaN last,
/// strings by bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum HK {
    I(i64),
    U(u64),
    F(u64),
    B(bool),
    S(Vec<u8>),
}

fn key_of(v: &HV) -> HK {
    match v {
        HV::I(x) => HK::I(*x),
        HV::U(x) => HK::U(*x),
        HV::B(x) => HK::B(*x),
        HV::S(x) => HK::S(x.as_bytes().to_vec()),
        HV::F(x) => {
            let x = if *x == 0.0 { 0.0 } else { *x };
            if x.is_nan() {
                HK::F(u64::MAX)
            } else {
                let b = x.to_bits();
                HK::F(if b >> 63 == 1 { !b } else { b | 1 << 63 })
            }
        }
    }
}

fn host(col: &Column) -> Vec<Option<HV>> {
    let valid = col
        .validity()
        .map(|b| b.to_bools().unwrap())
        .unwrap_or_else(|| vec![true; col.len()]);
    let vals: Vec<HV> = match col.data() {
        ColumnData::Bool(a) => a.to_vec().unwrap().into_iter().map(HV::B).collect(),
        ColumnData::Int32(a) | ColumnData::Date(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| HV::I(v as i64))
            .collect(),
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => {
            a.to_vec().unwrap().into_iter().map(HV::I).collect()
        }
        ColumnData::UInt32(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| HV::U(v as u64))
            .collect(),
        ColumnData::UInt64(a) => a.to_vec().unwrap().into_iter().map(HV::U).collect(),
        ColumnData::Float32(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|v| HV::F(v as f64))
            .collect(),
        ColumnData::Float64(a) => a.to_vec().unwrap().into_iter().map(HV::F).collect(),
        ColumnData::Utf8(s) => s.to_strings().unwrap().into_iter().map(HV::S).collect(),
    };
    vals.into_iter()
        .zip(valid)
        .map(|(v, ok)| ok.then_some(v))
        .collect()
}

fn same(a: &Option<HV>, b: &Option<HV>) -> bool {
    match (a, b) {
        (Some(HV::F(x)), Some(HV::F(y))) => {
            (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0)
        }
        _ => a == b,
    }
}

fn assert_col(got: &Column, want: &[Option<HV>], what: &str) {
    let g = host(got);
    assert_eq!(g.len(), want.len(), "{what}: rows");
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!(same(a, b), "{what}: row {i}: got {a:?}, want {b:?}");
    }
}

/// The expected value of `kind` over `vals` (one group's rows), computed the plain way.
fn expect(kind: AggKind, vals: &[Option<HV>], dtype: FrameDType) -> Option<HV> {
    let present: Vec<&HV> = vals.iter().flatten().collect();
    let as_f = |v: &HV| match v {
        HV::I(x) => *x as f64,
        HV::U(x) => *x as f64,
        HV::F(x) => *x,
        HV::B(x) => *x as u8 as f64,
        HV::S(_) => unreachable!(),
    };
    match kind {
        AggKind::Len => Some(HV::U(vals.len() as u64)),
        AggKind::Count => Some(HV::U(present.len() as u64)),
        AggKind::First => vals[0].clone(),
        AggKind::NUnique => {
            let set: BTreeSet<Option<HK>> = vals.iter().map(|v| v.as_ref().map(key_of)).collect();
            Some(HV::U(set.len() as u64))
        }
        AggKind::Sum => Some(match dtype {
            FrameDType::Float32 | FrameDType::Float64 => {
                let s: f64 = present.iter().map(|v| as_f(v)).sum();
                HV::F(if dtype == FrameDType::Float32 {
                    s as f32 as f64
                } else {
                    s
                })
            }
            FrameDType::UInt32 | FrameDType::UInt64 | FrameDType::Bool => {
                HV::U(present.iter().map(|v| as_f(v) as u64).sum())
            }
            _ => HV::I(
                present
                    .iter()
                    .map(|v| match v {
                        HV::I(x) => *x,
                        _ => 0,
                    })
                    .fold(0i64, i64::wrapping_add),
            ),
        }),
        AggKind::Mean | AggKind::Std => {
            let n = present.len();
            let need = if kind == AggKind::Mean { 1 } else { 2 };
            if n < need {
                return None;
            }
            let m = present.iter().map(|v| as_f(v)).sum::<f64>() / n as f64;
            if kind == AggKind::Mean {
                return Some(HV::F(m));
            }
            let q: f64 = present.iter().map(|v| (as_f(v) - m).powi(2)).sum();
            Some(HV::F((q / (n - 1) as f64).sqrt()))
        }
        AggKind::Min | AggKind::Max => {
            let numbers: Vec<&HV> = present
                .iter()
                .copied()
                .filter(|v| !matches!(v, HV::F(x) if x.is_nan()))
                .collect();
            let pool = if numbers.is_empty() { present } else { numbers };
            let mut best: Option<&HV> = None;
            for v in pool {
                best = match best {
                    None => Some(v),
                    Some(b) => {
                        let better = if kind == AggKind::Min {
                            key_of(v) < key_of(b)
                        } else {
                            key_of(v) > key_of(b)
                        };
                        Some(if better { v } else { b })
                    }
                };
            }
            best.cloned()
        }
    }
}

/// Checks `df.group_by(keys).agg(aggs)` against the host implementation.
fn check(df: &DataFrame, keys: &[&str], aggs: &[Agg]) {
    let out = df.group_by(keys).unwrap().agg(aggs).unwrap();
    let key_vals: Vec<Vec<Option<HV>>> = keys.iter().map(|k| host(df.column(k).unwrap())).collect();
    let mut groups: BTreeMap<Vec<Option<HK>>, Vec<usize>> = BTreeMap::new();
    for r in 0..df.height() {
        let k = key_vals.iter().map(|c| c[r].as_ref().map(key_of)).collect();
        groups.entry(k).or_default().push(r);
    }
    assert_eq!(out.height(), groups.len(), "groups for keys {keys:?}");
    for (j, k) in keys.iter().enumerate() {
        let want: Vec<Option<HV>> = groups
            .values()
            .map(|rows| key_vals[j][rows[0]].clone())
            .collect();
        assert_col(out.column(k).unwrap(), &want, &format!("key {k}"));
    }
    for a in aggs {
        let (vals, dtype) = match a.column() {
            Some(c) => {
                let col = df.column(c).unwrap();
                (host(col), col.dtype())
            }
            None => (vec![None; df.height()], FrameDType::Int64),
        };
        let want: Vec<Option<HV>> = groups
            .values()
            .map(|rows| {
                let g: Vec<Option<HV>> = rows.iter().map(|&r| vals[r].clone()).collect();
                expect(a.kind(), &g, dtype)
            })
            .collect();
        let got = out.column(a.output_name()).unwrap();
        assert_eq!(
            got.dtype(),
            a.output_dtype(df.column(a.column().unwrap_or(keys[0])).unwrap().dtype())
                .unwrap(),
            "{a:?}"
        );
        assert_col(got, &want, &format!("{a:?} by {keys:?}"));
    }
}

fn with_nulls(col: Column, valid: &[bool]) -> Column {
    let name = col.name().to_string();
    let data = col.data().clone();
    Column::new(
        name,
        data,
        Some(Bitmap::from_bools_on(valid, &Device::Cpu).unwrap()),
    )
    .unwrap()
}

/// A random frame of `n` rows: keys of several types (few distinct values, nulls) and values.
fn random_frame(n: usize, seed: u64) -> DataFrame {
    let cpu = Device::Cpu;
    let mut rng = StdRng::seed_from_u64(seed);
    let words = [
        "en",
        "de",
        "fr",
        "日本語",
        "en.m",
        "",
        "Zürich",
        "e",
        "enn",
        "ab\0",
    ];
    let valid = |rng: &mut StdRng, p: f64| (0..n).map(|_| !rng.random_bool(p)).collect::<Vec<_>>();
    let project: Vec<&str> = (0..n)
        .map(|_| words[rng.random_range(0..words.len())])
        .collect();
    let k_int: Vec<i32> = (0..n).map(|_| rng.random_range(-3..4)).collect();
    let k_bool: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
    let floats = [0.5, -0.0, 0.0, f64::NAN, -2.25, 1e300];
    let k_f: Vec<f64> = (0..n)
        .map(|_| floats[rng.random_range(0..floats.len())])
        .collect();
    let k_date: Vec<i32> = (0..n).map(|_| rng.random_range(19000..19005)).collect();
    let requests: Vec<i64> = (0..n).map(|_| rng.random_range(-1000..100_000)).collect();
    let bytes: Vec<f64> = (0..n)
        .map(|_| {
            if rng.random_bool(0.05) {
                f64::NAN
            } else {
                rng.random::<f64>() * 1e6 - 1e5
            }
        })
        .collect();
    let small: Vec<f32> = (0..n).map(|_| rng.random::<f32>() * 10.0).collect();
    let unsigned: Vec<u32> = (0..n).map(|_| rng.random_range(0..u32::MAX)).collect();
    let title: Vec<String> = (0..n)
        .map(|_| format!("Page_{}_é", rng.random_range(0..(n / 3).max(1))))
        .collect();
    let ts: Vec<i64> = (0..n).map(|_| rng.random_range(0..5i64) * 1000).collect();
    let v1 = valid(&mut rng, 0.1);
    let v2 = valid(&mut rng, 0.2);
    let v3 = valid(&mut rng, 0.15);
    let v4 = valid(&mut rng, 0.1);
    let v5 = valid(&mut rng, 0.3);
    DataFrame::new(vec![
        with_nulls(
            Column::from_strs_on("project", &project, &cpu).unwrap(),
            &v1,
        ),
        with_nulls(Column::from_slice_on("k_int", &k_int, &cpu).unwrap(), &v2),
        Column::from_slice_on("k_bool", &k_bool, &cpu).unwrap(),
        Column::from_slice_on("k_f", &k_f, &cpu).unwrap(),
        Column::new(
            "k_date",
            ColumnData::Date(Array::from_slice_on(&k_date, &cpu).unwrap()),
            None,
        )
        .unwrap(),
        with_nulls(
            Column::from_slice_on("requests", &requests, &cpu).unwrap(),
            &v3,
        ),
        with_nulls(Column::from_slice_on("bytes", &bytes, &cpu).unwrap(), &v4),
        Column::from_slice_on("small", &small, &cpu).unwrap(),
        Column::from_slice_on("unsigned", &unsigned, &cpu).unwrap(),
        with_nulls(Column::from_strs_on("title", &title, &cpu).unwrap(), &v5),
        Column::new(
            "ts",
            ColumnData::Timestamp(
                Array::from_slice_on(&ts, &cpu).unwrap(),
                TimeUnit::Millisecond,
            ),
            None,
        )
        .unwrap(),
    ])
    .unwrap()
}

fn all_aggs(col: &str) -> Vec<Agg> {
    vec![
        Agg::count(col).alias(format!("{col}_count")),
        Agg::sum(col).alias(format!("{col}_sum")),
        Agg::mean(col).alias(format!("{col}_mean")),
        Agg::min(col).alias(format!("{col}_min")),
        Agg::max(col).alias(format!("{col}_max")),
        Agg::std(col).alias(format!("{col}_std")),
        Agg::first(col).alias(format!("{col}_first")),
        Agg::n_unique(col).alias(format!("{col}_n_unique")),
    ]
}

fn any_aggs(col: &str) -> Vec<Agg> {
    vec![
        Agg::count(col).alias(format!("{col}_count")),
        Agg::min(col).alias(format!("{col}_min")),
        Agg::max(col).alias(format!("{col}_max")),
        Agg::first(col).alias(format!("{col}_first")),
        Agg::n_unique(col).alias(format!("{col}_n_unique")),
    ]
}

#[test]
fn random_frames_match_the_host_for_every_key_type() {
    for (n, seed) in [(0usize, 1u64), (1, 2), (2, 3), (57, 4), (1500, 5)] {
        let df = random_frame(n, seed);
        let mut aggs = vec![Agg::len()];
        for c in ["requests", "bytes", "small", "unsigned", "k_bool"] {
            aggs.extend(all_aggs(c));
        }
        for c in ["title", "ts", "k_date"] {
            aggs.extend(any_aggs(c));
        }
        for keys in [
            &["project"][..],
            &["k_int"],
            &["k_bool"],
            &["k_f"],
            &["k_date"],
            &["title"],
            &["project", "k_int"],
            &["k_int", "project", "k_bool"],
            &["k_f", "ts", "k_date"],
        ] {
            let aggs: Vec<Agg> = aggs
                .iter()
                .filter(|a| !keys.contains(&a.column().unwrap_or("")) || a.kind() != AggKind::First)
                .cloned()
                .collect();
            check(&df, keys, &aggs);
        }
    }
}

#[test]
fn one_group_all_null_groups_and_many_groups() {
    let cpu = Device::Cpu;
    // one group; a value column that is entirely null
    let df = DataFrame::new(vec![
        Column::from_strs_on("k", &["x"; 5], &cpu).unwrap(),
        with_nulls(
            Column::from_slice_on("v", &[1.0f64; 5], &cpu).unwrap(),
            &[false; 5],
        ),
    ])
    .unwrap();
    check(&df, &["k"], &all_aggs("v"));
    let out = df
        .group_by(&["k"])
        .unwrap()
        .agg(&[Agg::sum("v"), Agg::len()])
        .unwrap();
    assert_eq!(
        out.column("v")
            .unwrap()
            .values::<f64>()
            .unwrap()
            .to_vec()
            .unwrap(),
        [0.0]
    );
    // every row its own group
    let n = 3000;
    let ids: Vec<i64> = (0..n).rev().collect();
    let names: Vec<String> = (0..n).map(|i| format!("名前{i:05}")).collect();
    let df = DataFrame::new(vec![
        Column::from_slice_on("id", &ids, &cpu).unwrap(),
        Column::from_strs_on("name", &names, &cpu).unwrap(),
    ])
    .unwrap();
    check(&df, &["id"], &[Agg::len(), Agg::first("name")]);
    check(&df, &["name"], &[Agg::len(), Agg::sum("id")]);
    let out = df.group_by(&["id"]).unwrap().agg(&[]).unwrap();
    assert_eq!(
        out.column("id")
            .unwrap()
            .values::<i64>()
            .unwrap()
            .to_vec()
            .unwrap(),
        (0..n).collect::<Vec<_>>()
    );
}

#[test]
fn long_strings_with_shared_prefixes_group_exactly() {
    let cpu = Device::Cpu;
    let base = "x".repeat(200);
    let rows: Vec<String> = (0..400)
        .map(|i| match i % 5 {
            0 => base.clone(),
            1 => format!("{base}a"),
            2 => format!("{base}\0"),
            3 => base[..199].to_string(),
            _ => format!("{base}{}", i % 3),
        })
        .collect();
    let df = DataFrame::new(vec![
        Column::from_strs_on("s", &rows, &cpu).unwrap(),
        Column::from_slice_on("v", &(0..400).collect::<Vec<i32>>(), &cpu).unwrap(),
    ])
    .unwrap();
    check(
        &df,
        &["s"],
        &[Agg::len(), Agg::sum("v"), Agg::min("v").alias("lo")],
    );
    assert_eq!(df.column("s").unwrap().n_unique().unwrap(), 7);
}

#[test]
fn value_counts_unique_and_n_unique() {
    let cpu = Device::Cpu;
    let c = with_nulls(
        Column::from_strs_on("p", &["en", "de", "en", "fr", "de", "en", "x", "fr"], &cpu).unwrap(),
        &[true, true, true, true, true, true, false, false],
    );
    let vc = c.value_counts().unwrap();
    assert_eq!(vc.names(), ["p", "count"]);
    assert_col(
        vc.column("p").unwrap(),
        &[
            Some(HV::S("en".into())),
            None,
            Some(HV::S("de".into())),
            Some(HV::S("fr".into())),
        ],
        "value_counts values",
    );
    assert_eq!(
        vc.column("count")
            .unwrap()
            .values::<u32>()
            .unwrap()
            .to_vec()
            .unwrap(),
        [3, 2, 2, 1]
    );
    assert_eq!(c.n_unique().unwrap(), 4);
    assert_col(
        &c.unique().unwrap(),
        &[
            None,
            Some(HV::S("de".into())),
            Some(HV::S("en".into())),
            Some(HV::S("fr".into())),
        ],
        "unique",
    );
    let df = DataFrame::new(vec![c]).unwrap();
    assert_eq!(df.value_counts("p").unwrap().height(), 4);
    let e = df.value_counts("q").unwrap_err().to_string();
    assert!(e.contains("no column named `q`"), "{e}");
    let empty = Column::from_slice_on::<f64>("e", &[], &cpu).unwrap();
    assert_eq!(empty.value_counts().unwrap().shape(), (0, 2));
    assert_eq!(empty.n_unique().unwrap(), 0);
    let f = Column::from_slice_on("f", &[f64::NAN, 1.0, -0.0, 0.0, f64::NAN], &cpu).unwrap();
    assert_eq!(f.n_unique().unwrap(), 3);
    let vc = f.value_counts().unwrap();
    let v = vc
        .column("f")
        .unwrap()
        .values::<f64>()
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!((v[0], v[2]), (0.0, 1.0));
    assert!(v[1].is_nan());
}

#[test]
fn bad_input_is_an_error_naming_the_column() {
    let df = random_frame(10, 9);
    let e = df.group_by(&["nope"]).unwrap_err().to_string();
    assert!(e.contains("no column named `nope`"), "{e}");
    let e = df.group_by::<&str>(&[]).unwrap_err().to_string();
    assert!(e.contains("at least one key"), "{e}");
    let e = df.group_by(&["k_int", "k_int"]).unwrap_err().to_string();
    assert!(e.contains("`k_int` is named twice"), "{e}");
    let g = df.group_by(&["k_int"]).unwrap();
    let e = g.agg(&[Agg::sum("project")]).unwrap_err().to_string();
    assert!(e.contains("sum of column `project` of type str"), "{e}");
    let e = g.agg(&[Agg::mean("ts")]).unwrap_err().to_string();
    assert!(
        e.contains("mean of column `ts` of type datetime[ms]"),
        "{e}"
    );
    let e = g.agg(&[Agg::std("k_date")]).unwrap_err().to_string();
    assert!(e.contains("std of column `k_date` of type date"), "{e}");
    let e = g.agg(&[Agg::max("missing")]).unwrap_err().to_string();
    assert!(e.contains("no column named `missing`"), "{e}");
    let e = g
        .agg(&[Agg::sum("requests"), Agg::mean("requests")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("two output columns would be named `requests`"),
        "{e}"
    );
    let e = g.agg(&[Agg::first("k_int")]).unwrap_err().to_string();
    assert!(e.contains("`k_int`"), "{e}");
    // the frame is untouched
    assert_eq!(df.shape(), (10, 11));
}

#[test]
fn sums_are_the_same_bits_every_run() {
    let df = random_frame(5000, 11);
    let run = || {
        let out = df
            .group_by(&["project"])
            .unwrap()
            .agg(&[Agg::sum("bytes"), Agg::std("small")])
            .unwrap();
        let a = out
            .column("bytes")
            .unwrap()
            .values::<f64>()
            .unwrap()
            .to_vec()
            .unwrap();
        let b = out
            .column("small")
            .unwrap()
            .values::<f64>()
            .unwrap()
            .to_vec()
            .unwrap();
        (
            a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn utf8_helper_round_trips() {
    // the string gather keeps unicode rows whole
    let s = Utf8Data::from_strs_on(&["é", "日本"], &Device::Cpu).unwrap();
    assert_eq!(s.to_strings().unwrap(), ["é", "日本"]);
}
