//! Why this file is long: it is one table of every public frame operation run on the same random
//! frames (the generator, the JSON writer and the driver belong together).
//!
//! Every public frame operation == Python Polars' result, on seeded random frames (i64, i32, f64
//! with and without NaN/inf, bool, UTF-8 with multi-byte characters, empty strings, dates,
//! millisecond timestamps; nulls in every column; heights 0, 1, 2, 50 and 5000).
//!
//! The Rust side runs each operation and writes its inputs, parameters and output as JSON (nulls as
//! `null`, floats exactly as their shortest round-trip decimal, NaN and infinities as the strings
//! `"NaN"`, `"inf"`, `"-inf"`); `polars_equal.py` beside this file recomputes each operation with
//! Polars and compares: exactly for integers, strings, booleans, nulls and row order; to a relative
//! 1e-12 for float sums, means, standard deviations and rolling statistics, whose order of
//! summation differs. A mismatch fails this test with the operation, its parameters, the seed and
//! the differing rows.
//!
//! Operations covered: select, drop, drop_in_place, rename, rename_all, with_column (add and
//! replace), head, tail, slice (also negative offsets), take, filter (comparisons with literals and
//! between columns, `is_in`, `is_null`/`is_not_null`, `&`, `|`, `!`), sort_by (one and several
//! keys, both directions, nulls first and last), Column::sort, join (inner and left, one and two
//! keys), group_by with every aggregation (len, count, sum, mean, min, max, std, first, n_unique)
//! on one and two keys, value_counts, unique, n_unique, describe, every `.str()` operation
//! (len_bytes, len_chars, to_uppercase, to_lowercase, contains, starts_with, ends_with, replace,
//! replace_n, replace_all, split_part, split_exact, slice), rolling sum/mean/min/max with
//! window/min_periods/center, map_array (a `#[vectorize]` function and `astype`), map_kernel and
//! apply_rows (`#[kernel]`s, compared with the same arithmetic as a Polars expression),
//! Rolling::apply (a window spread, compared with Polars' rolling max − min), and the CSV write →
//! read round trip (read back by gpukit and by Polars).
//!
//! Where gpukit-frame deliberately differs from Polars, the checker normalises (each is documented
//! on the operation):
//! - `group_by` returns groups sorted by key (nulls first); Polars' order is unspecified, so
//!   Polars' result is sorted the same way before comparing.
//! - `value_counts` breaks ties of equal counts by value (ascending, nulls first); Polars leaves
//!   the tie order open, so its result is sorted by (count desc, value) first.
//! - `unique` is sorted (nulls first); Polars' `unique()` is followed by `sort()`.
//! - `group_by` sums of `i32` are `i64` (64-bit accumulation); Polars keeps `i32`. Polars' result
//!   is cast to `i64` (the values are compared exactly).
//! - Rolling statistics are `f64` whatever the input type (as pandas); Polars keeps `i64` for a
//!   rolling sum/min/max of integers. Polars' result is cast to `f64`.
//! - `describe` describes numeric and boolean columns only, each as `f64`; Polars' describe is run
//!   on the same columns.
//! - CSV: an empty string is written as an empty field, the same as a null, so it reads back as
//!   null (in gpukit and in Polars); the round trip expects null there.
//! - `.str().to_uppercase()`/`to_lowercase()` map only code points in gpukit's case tables
//!   (U+0000–U+017F, U+0300–U+04FF) and copy others (`ǅ`, `ﬁ`, ...) unchanged; Polars' mapping is
//!   applied to each run of covered characters.
//! - Rolling `min`/`max` skip NaN (a window of only NaN gives NaN); Polars' give NaN for any window
//!   holding one. Polars' result is computed with NaN made null, NaN where a window has enough
//!   non-null values but no number.
//! - `sort_by` with nulls last is Polars' `nulls_last=True` (gpukit's default); both null
//!   placements are compared.
//!
//! Backends: the CPU backend always; the first CUDA GPU too where one is usable
//! (`gpukit::testing::serial_gpu_or_skip`) and Python Polars is available. The GPU device machine
//! has no Polars of its own: a run there carries Polars' wheels (docs/gpu-run/polars-equal).
//!
//! Python: `$GPUKIT_POLARS_PYTHON`, else the project venv's `.venv/bin/python` (made by `make
//! install`; `install/requirements.txt` lists polars). Without a Python that imports polars the
//! test prints `skipped: ...`, or fails where `CI` is set.

use std::fmt::Write as _;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpukit::prelude::*;
use gpukit::{Array, Device};
use gpukit_frame::group_by::Agg;
use gpukit_frame::rolling::RollingOptions;
use gpukit_frame::{
    col, lit, read_csv_from, write_csv_to, Bitmap, Column, ColumnData, CsvOptions, DataFrame, Expr,
    FrameDType, JoinHow, TimeUnit, Utf8Data,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Frame heights, and how many seeds each gets.
const HEIGHTS: [(usize, u64); 5] = [(0, 1), (1, 3), (2, 3), (50, 3), (5000, 1)];

/// String values: multi-byte characters, case-mapping corners (final sigma, ß, ligatures,
/// dotted I, title case), separators for split/replace, the empty string.
const WORDS: [&str; 16] = [
    "en",
    "de",
    "",
    "Zürich",
    "日本語",
    "en_US:main",
    "ΣΑΣ ΟΔΟΣ",
    "straße",
    "ﬁne",
    "İstanbul",
    "ǅemal",
    "a::b::c",
    "Main_Page",
    "main_page_of_the_wiki",
    "😀 smile 😀",
    "x",
];

// ------------------------------------------------------------------------------------------
// random frames

fn validity(r: &mut StdRng, n: usize, p_null: f64) -> Option<Bitmap> {
    let v: Vec<bool> = (0..n).map(|_| !r.random_bool(p_null)).collect();
    Some(Bitmap::from_bools_on(&v, &Device::Cpu).unwrap())
}

fn column(name: &str, data: ColumnData, valid: Option<Bitmap>) -> Column {
    Column::new(name, data, valid).unwrap()
}

fn arr<T: gpukit::Element>(v: &[T]) -> Array<T> {
    Array::from_slice_on(v, &Device::Cpu).unwrap()
}

fn strings(r: &mut StdRng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let a = WORDS[r.random_range(0..WORDS.len())];
            if r.random_bool(0.3) {
                format!("{a}{}", WORDS[r.random_range(0..WORDS.len())])
            } else {
                a.to_string()
            }
        })
        .collect()
}

/// The left frame: `k` small i64 key, `i` i64, `j` i32, `f` f64 (full mantissas), `g` f64
/// (half-integers with NaN and ±inf), `b` bool, `s` str, `d` date, `t` timestamp (ms); all
/// with nulls.
fn left_frame(r: &mut StdRng, n: usize) -> DataFrame {
    let k: Vec<i64> = (0..n).map(|_| r.random_range(0..5)).collect();
    let i: Vec<i64> = (0..n)
        .map(|_| r.random_range(-1_000_000..1_000_000))
        .collect();
    let j: Vec<i32> = (0..n).map(|_| r.random_range(-1000..1000)).collect();
    let f: Vec<f64> = (0..n).map(|_| r.random_range(-1000.0..1000.0)).collect();
    let g: Vec<f64> = (0..n)
        .map(|_| match r.random_range(0..40) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            _ => r.random_range(-20..20) as f64 * 0.5,
        })
        .collect();
    let b: Vec<bool> = (0..n).map(|_| r.random_bool(0.5)).collect();
    let s = strings(r, n);
    let d: Vec<i32> = (0..n).map(|_| r.random_range(-1000..20_000)).collect();
    let t: Vec<i64> = (0..n)
        .map(|_| r.random_range(-10_000_000_000i64..2_000_000_000_000))
        .collect();
    DataFrame::new(vec![
        column("k", ColumnData::Int64(arr(&k)), validity(r, n, 0.1)),
        column("i", ColumnData::Int64(arr(&i)), validity(r, n, 0.15)),
        column("j", ColumnData::Int32(arr(&j)), validity(r, n, 0.15)),
        column("f", ColumnData::Float64(arr(&f)), validity(r, n, 0.15)),
        column("g", ColumnData::Float64(arr(&g)), validity(r, n, 0.1)),
        column("b", ColumnData::Bool(arr(&b)), validity(r, n, 0.15)),
        column(
            "s",
            ColumnData::Utf8(Utf8Data::from_strs_on(&s, &Device::Cpu).unwrap()),
            validity(r, n, 0.15),
        ),
        column("d", ColumnData::Date(arr(&d)), validity(r, n, 0.1)),
        column(
            "t",
            ColumnData::Timestamp(arr(&t), TimeUnit::Millisecond),
            validity(r, n, 0.1),
        ),
    ])
    .unwrap()
}

/// The right frame of joins: keys `k` and `s` (fewer distinct strings, so two-key matches
/// happen), `v` f64, and `i` (clashes with the left `i`: `i_right`).
fn right_frame(r: &mut StdRng, n: usize) -> DataFrame {
    let k: Vec<i64> = (0..n).map(|_| r.random_range(0..6)).collect();
    let s: Vec<&str> = (0..n)
        .map(|_| WORDS[r.random_range(0..WORDS.len())])
        .collect();
    let v: Vec<f64> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let i: Vec<i64> = (0..n).map(|_| r.random_range(-50..50)).collect();
    DataFrame::new(vec![
        column("k", ColumnData::Int64(arr(&k)), validity(r, n, 0.1)),
        column(
            "s",
            ColumnData::Utf8(Utf8Data::from_strs_on(&s, &Device::Cpu).unwrap()),
            validity(r, n, 0.1),
        ),
        column("v", ColumnData::Float64(arr(&v)), validity(r, n, 0.1)),
        column("i", ColumnData::Int64(arr(&i)), None),
    ])
    .unwrap()
}

// ------------------------------------------------------------------------------------------
// JSON

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_f64(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("\"NaN\"");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "\"inf\"" } else { "\"-inf\"" });
    } else {
        let _ = write!(out, "{x:?}");
    }
}

fn dtype_name(d: FrameDType) -> String {
    match d {
        FrameDType::Bool => "bool".into(),
        FrameDType::Int32 => "i32".into(),
        FrameDType::Int64 => "i64".into(),
        FrameDType::UInt32 => "u32".into(),
        FrameDType::UInt64 => "u64".into(),
        FrameDType::Float32 => "f32".into(),
        FrameDType::Float64 => "f64".into(),
        FrameDType::Utf8 => "str".into(),
        FrameDType::Date => "date".into(),
        FrameDType::Timestamp(u) => format!("datetime[{}]", u.short_name().replace('μ', "u")),
    }
}

/// Writes one value per row, `null` where `valid` is false.
fn json_values<T>(
    out: &mut String,
    v: &[T],
    valid: &Option<Vec<bool>>,
    mut f: impl FnMut(&mut String, &T),
) {
    out.push('[');
    for (row, x) in v.iter().enumerate() {
        if row > 0 {
            out.push(',');
        }
        if valid.as_ref().is_some_and(|m| !m[row]) {
            out.push_str("null");
        } else {
            f(out, x);
        }
    }
    out.push(']');
}

fn json_column(out: &mut String, c: &Column) {
    let c = c.to_device(&Device::Cpu).unwrap();
    out.push_str("{\"name\":");
    json_str(out, c.name());
    let _ = write!(out, ",\"dtype\":\"{}\",\"values\":", dtype_name(c.dtype()));
    let valid = c.validity().map(|b| b.to_bools().unwrap());
    let int = |o: &mut String, x: &dyn std::fmt::Display| {
        let _ = write!(o, "{x}");
    };
    match c.data() {
        ColumnData::Bool(a) => json_values(out, &a.to_vec().unwrap(), &valid, |o, x| int(o, x)),
        ColumnData::Int32(a) | ColumnData::Date(a) => {
            json_values(out, &a.to_vec().unwrap(), &valid, |o, x| int(o, x))
        }
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => {
            json_values(out, &a.to_vec().unwrap(), &valid, |o, x| int(o, x))
        }
        ColumnData::UInt32(a) => json_values(out, &a.to_vec().unwrap(), &valid, |o, x| int(o, x)),
        ColumnData::UInt64(a) => json_values(out, &a.to_vec().unwrap(), &valid, |o, x| int(o, x)),
        ColumnData::Float32(a) => json_values(out, &a.to_vec().unwrap(), &valid, |o, x| {
            json_f64(o, *x as f64)
        }),
        ColumnData::Float64(a) => {
            json_values(out, &a.to_vec().unwrap(), &valid, |o, x| json_f64(o, *x))
        }
        ColumnData::Utf8(s) => {
            json_values(out, &s.to_strings().unwrap(), &valid, |o, x| json_str(o, x))
        }
    }
    out.push('}');
}

fn json_frame(df: &DataFrame) -> String {
    let mut out = String::new();
    let _ = write!(out, "{{\"height\":{},\"columns\":[", df.height());
    for (n, c) in df.columns().iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        json_column(&mut out, c);
    }
    out.push_str("]}");
    out
}

// ------------------------------------------------------------------------------------------
// filter expressions, built for gpukit and written for the checker

#[derive(Clone)]
enum L {
    I(i64),
    F(f64),
    S(&'static str),
    B(bool),
}

impl L {
    fn lit(&self) -> Expr {
        match self {
            L::I(v) => lit(*v),
            L::F(v) => lit(*v),
            L::S(v) => lit(*v),
            L::B(v) => lit(*v),
        }
    }
    fn json(&self, out: &mut String) {
        match self {
            L::I(v) => {
                let _ = write!(out, "{v}");
            }
            L::F(v) => json_f64(out, *v),
            L::S(v) => json_str(out, v),
            L::B(v) => {
                let _ = write!(out, "{v}");
            }
        }
    }
}

#[derive(Clone)]
enum F {
    Lit(&'static str, &'static str, L),
    Cols(&'static str, &'static str, &'static str),
    IsIn(&'static str, Vec<L>),
    Null(&'static str, bool),
    And(Box<F>, Box<F>),
    Or(Box<F>, Box<F>),
    Not(Box<F>),
}

fn cmp(a: Expr, op: &str, b: Expr) -> Expr {
    match op {
        "==" => a.eq(b),
        "!=" => a.ne(b),
        "<" => a.lt(b),
        "<=" => a.le(b),
        ">" => a.gt(b),
        ">=" => a.ge(b),
        _ => unreachable!("operator {op}"),
    }
}

impl F {
    fn expr(&self) -> Expr {
        match self {
            F::Lit(c, op, l) => cmp(col(*c), op, l.lit()),
            F::Cols(a, op, b) => cmp(col(*a), op, col(*b)),
            F::IsIn(c, ls) => {
                let lits: Vec<gpukit_frame::ops::compare::Lit> = ls
                    .iter()
                    .map(|l| match l {
                        L::I(v) => (*v).into(),
                        L::F(v) => (*v).into(),
                        L::S(v) => (*v).into(),
                        L::B(v) => (*v).into(),
                    })
                    .collect();
                col(*c).is_in(&lits)
            }
            F::Null(c, true) => col(*c).is_null(),
            F::Null(c, false) => col(*c).is_not_null(),
            F::And(a, b) => a.expr() & b.expr(),
            F::Or(a, b) => a.expr() | b.expr(),
            F::Not(a) => !a.expr(),
        }
    }
    fn json(&self, out: &mut String) {
        match self {
            F::Lit(c, op, l) => {
                let _ = write!(out, "[\"cmp\",\"{c}\",\"{op}\",");
                l.json(out);
                out.push(']');
            }
            F::Cols(a, op, b) => {
                let _ = write!(out, "[\"cmpcol\",\"{a}\",\"{op}\",\"{b}\"]");
            }
            F::IsIn(c, ls) => {
                let _ = write!(out, "[\"is_in\",\"{c}\",[");
                for (n, l) in ls.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    l.json(out);
                }
                out.push_str("]]");
            }
            F::Null(c, null) => {
                let _ = write!(
                    out,
                    "[\"{}\",\"{c}\"]",
                    if *null { "is_null" } else { "is_not_null" }
                );
            }
            F::And(a, b) | F::Or(a, b) => {
                let _ = write!(
                    out,
                    "[\"{}\",",
                    if matches!(self, F::And(..)) {
                        "and"
                    } else {
                        "or"
                    }
                );
                a.json(out);
                out.push(',');
                b.json(out);
                out.push(']');
            }
            F::Not(a) => {
                out.push_str("[\"not\",");
                a.json(out);
                out.push(']');
            }
        }
    }
}

fn filters() -> Vec<F> {
    let gt_i = F::Lit("i", ">", L::I(0));
    let en = F::Lit("s", "==", L::S("en"));
    let f_le = F::Lit("f", "<=", L::F(12.5));
    let isin_k = F::IsIn("k", vec![L::I(1), L::I(3)]);
    let isin_s = F::IsIn(
        "s",
        vec![L::S("en"), L::S("Zürich"), L::S(""), L::S("日本語")],
    );
    vec![
        gt_i.clone(),
        F::Lit("i", "==", L::I(5)),
        F::Lit("j", "!=", L::I(3)),
        F::Lit("j", "<", L::I(-100)),
        f_le.clone(),
        F::Lit("g", ">=", L::F(0.0)),
        F::Lit("g", "<", L::F(f64::INFINITY)),
        en.clone(),
        F::Lit("s", ">", L::S("Main")),
        F::Lit("s", "!=", L::S("")),
        F::Lit("b", "==", L::B(true)),
        F::Cols("i", ">", "k"),
        F::Cols("f", "<=", "g"),
        F::Cols("k", "==", "j"),
        isin_k.clone(),
        isin_s.clone(),
        F::Null("i", true),
        F::Null("s", false),
        F::And(Box::new(gt_i.clone()), Box::new(en.clone())),
        F::Or(Box::new(isin_k.clone()), Box::new(f_le.clone())),
        F::And(
            Box::new(F::Or(
                Box::new(isin_s),
                Box::new(F::Lit("b", "==", L::B(false))),
            )),
            Box::new(F::Not(Box::new(F::Null("d", true)))),
        ),
        F::Not(Box::new(F::Or(Box::new(gt_i), Box::new(en)))),
    ]
}

// ------------------------------------------------------------------------------------------
// user functions

/// A row kernel over two columns: `i + j` as i64.
#[kernel]
fn add_ij(i: &[i64], j: &[i32], out: &mut [i64]) {
    let t = grid(1);
    if t < out.len() {
        out[t] = i[t] + j[t] as i64;
    }
}

/// One column's rows at least 100.
#[kernel]
fn at_least_100(v: &[i64], out: &mut [bool]) {
    let t = grid(1);
    if t < out.len() {
        out[t] = v[t] >= 100;
    }
}

/// An affine map (exact in both orders of evaluation: `x * 0.5` is exact).
#[vectorize]
fn half_plus_three(x: f64) -> f64 {
    x * 0.5 + 3.0
}

/// The spread (largest minus smallest valid value) of each row's window.
#[kernel]
fn window_spread(values: &[f64], valid: &[u8], starts: &[i64], ends: &[i64], out: &mut [f64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let mut lo = f64::INFINITY;
        let mut hi = -f64::INFINITY;
        for j in (starts[i] as usize)..(ends[i] as usize) {
            if valid[j] == 1 {
                lo = lo.min(values[j]);
                hi = hi.max(values[j]);
            }
        }
        out[i] = hi - lo;
    }
}

// ------------------------------------------------------------------------------------------
// the driver

/// What an operation gives: a frame, columns (written as a frame), or a number.
enum Out {
    Frame(DataFrame),
    Cols(Vec<Column>),
    Count(usize),
}

impl From<DataFrame> for Out {
    fn from(d: DataFrame) -> Out {
        Out::Frame(d)
    }
}

impl From<Column> for Out {
    fn from(c: Column) -> Out {
        Out::Cols(vec![c])
    }
}

struct Cases {
    json: String,
    n: usize,
}

impl Cases {
    /// Runs `f` and records the operation `op` with its parameters (a JSON object), the input
    /// frames and the output (or the error).
    fn case<O: Into<Out>>(
        &mut self,
        op: &str,
        params: &str,
        seed: u64,
        inputs: &[&str],
        f: impl FnOnce() -> gpukit_frame::Result<O>,
    ) {
        if self.n > 0 {
            self.json.push_str(",\n");
        }
        self.n += 1;
        let _ = write!(
            self.json,
            "{{\"op\":\"{op}\",\"seed\":{seed},\"params\":{params},\"inputs\":["
        );
        for (n, i) in inputs.iter().enumerate() {
            if n > 0 {
                self.json.push(',');
            }
            json_str(&mut self.json, i);
        }
        self.json.push_str("],");
        match f().map(Into::into) {
            Ok(Out::Frame(d)) => {
                let _ = write!(self.json, "\"output\":{}", json_frame(&d));
            }
            Ok(Out::Cols(c)) => {
                let d = DataFrame::new(c).unwrap();
                let _ = write!(self.json, "\"output\":{}", json_frame(&d));
            }
            Ok(Out::Count(n)) => {
                let _ = write!(self.json, "\"count\":{n}");
            }
            Err(e) => {
                self.json.push_str("\"error\":");
                json_str(&mut self.json, &e.to_string());
            }
        }
        self.json.push('}');
    }
}

fn q(s: &str) -> String {
    let mut o = String::new();
    json_str(&mut o, s);
    o
}

/// Runs every operation on frames of every height on `device`; the JSON document for the
/// checker.
fn run_all(device: &Device) -> String {
    let mut frames = String::new();
    let mut cases = Cases {
        json: String::new(),
        n: 0,
    };
    for (height, seeds) in HEIGHTS {
        for seed in 0..seeds {
            let seed = seed + 1000 * height as u64;
            let mut r = StdRng::seed_from_u64(seed);
            let host = left_frame(&mut r, height);
            // few right rows: a join on `k` (5 values) matches each left row many times
            let right_height = r.random_range(0..height.min(12) + 2);
            let right_host = right_frame(&mut r, right_height);
            let lname = format!("L{seed}");
            let rname = format!("R{seed}");
            if !frames.is_empty() {
                frames.push_str(",\n");
            }
            let _ = write!(
                frames,
                "{}:{},\n{}:{}",
                q(&lname),
                json_frame(&host),
                q(&rname),
                json_frame(&right_host)
            );
            let df = host.to_device(device).unwrap();
            let right = right_host.to_device(device).unwrap();
            run_frame(&mut cases, &mut r, seed, &df, &right, &lname, &rname);
        }
    }
    format!(
        "{{\"frames\":{{\n{frames}}},\n\"cases\":[\n{}]}}\n",
        cases.json
    )
}

#[allow(clippy::too_many_arguments)]
fn run_frame(
    c: &mut Cases,
    r: &mut StdRng,
    seed: u64,
    df: &DataFrame,
    right: &DataFrame,
    l: &str,
    rn: &str,
) {
    let h = df.height();
    let dev = df.device().unwrap();
    let one = [l];
    // columns and rows
    c.case("select", r#"{"columns":["s","i","d"]}"#, seed, &one, || {
        df.select(&["s", "i", "d"])
    });
    c.case("drop", r#"{"columns":["f","b"]}"#, seed, &one, || {
        df.drop(&["f", "b"])
    });
    c.case("rename", r#"{"old":"i","new":"x"}"#, seed, &one, || {
        let mut d = df.clone();
        d.rename("i", "x")?;
        Ok(d)
    });
    let names = ["K", "I", "J", "F", "G", "B", "S", "D", "T"];
    c.case(
        "rename_all",
        &format!("{{\"names\":{names:?}}}"),
        seed,
        &one,
        || {
            let mut d = df.clone();
            d.rename_all(&names)?;
            Ok(d)
        },
    );
    c.case(
        "drop_in_place",
        r#"{"column":"s","part":"taken"}"#,
        seed,
        &one,
        || df.clone().drop_in_place("s"),
    );
    c.case(
        "drop_in_place",
        r#"{"column":"s","part":"rest"}"#,
        seed,
        &one,
        || {
            let mut d = df.clone();
            d.drop_in_place("s")?;
            Ok(d)
        },
    );
    let w: Vec<i64> = (0..h).map(|_| r.random_range(-9..9)).collect();
    let wj = format!(
        "{{\"name\":\"w\",\"values\":{}}}",
        json_frame(
            &DataFrame::new(vec![Column::from_slice_on("w", &w, &Device::Cpu).unwrap()]).unwrap()
        )
    );
    c.case("with_column", &wj, seed, &one, || {
        let mut d = df.clone();
        d.with_column(Column::from_slice_on("w", &w, &dev)?)?;
        Ok(d)
    });
    let wj2 = wj.replacen("\"name\":\"w\"", "\"name\":\"j\"", 1);
    c.case("with_column", &wj2, seed, &one, || {
        let mut d = df.clone();
        d.with_column(Column::from_slice_on("j", &w, &dev)?)?;
        Ok(d)
    });
    for n in [0, 1, 3, h / 2, h + 2] {
        c.case("head", &format!("{{\"n\":{n}}}"), seed, &one, || df.head(n));
        c.case("tail", &format!("{{\"n\":{n}}}"), seed, &one, || df.tail(n));
    }
    for (off, len) in [
        (0i64, 1usize),
        (1, h),
        (-2, 1),
        (-(h as i64) - 3, 2),
        (h as i64 / 3, 7),
    ] {
        c.case(
            "slice",
            &format!("{{\"offset\":{off},\"length\":{len}}}"),
            seed,
            &one,
            || df.slice(off, len),
        );
    }
    let idx: Vec<i64> = if h == 0 {
        vec![]
    } else {
        (0..h + 3).map(|_| r.random_range(0..h as i64)).collect()
    };
    c.case(
        "take",
        &format!("{{\"indices\":{idx:?}}}"),
        seed,
        &one,
        || df.take(&Array::from_slice_on(&idx, &dev)?),
    );
    // filters
    for f in filters() {
        let mut p = String::from("{\"expr\":");
        f.json(&mut p);
        p.push('}');
        c.case("filter", &p, seed, &one, || df.filter_expr(&f.expr()));
    }
    // sorts
    let sorts: [(&[&str], &[bool]); 9] = [
        (&["i"], &[false]),
        (&["i"], &[true]),
        (&["s"], &[false]),
        (&["s"], &[true]),
        (&["g"], &[false]),
        (&["g"], &[true]),
        (&["k", "s"], &[false, true]),
        (&["b", "g", "d"], &[true, false, true]),
        (&["k", "j", "t"], &[false]),
    ];
    for (by, desc) in sorts {
        for nulls_last in [true, false] {
            let p =
                format!("{{\"by\":{by:?},\"descending\":{desc:?},\"nulls_last\":{nulls_last}}}");
            c.case("sort_by", &p, seed, &one, || {
                df.sort_by_with(by, desc, nulls_last)
            });
        }
    }
    for name in ["i", "g", "s", "b", "d"] {
        for desc in [false, true] {
            let p = format!("{{\"column\":\"{name}\",\"descending\":{desc}}}");
            c.case("column_sort", &p, seed, &one, || {
                df.column(name)?.sort(desc)
            });
        }
    }
    // joins
    for on in [&["k"][..], &["k", "s"][..], &["s"][..]] {
        for (how, name) in [(JoinHow::Inner, "inner"), (JoinHow::Left, "left")] {
            let p = format!("{{\"on\":{on:?},\"how\":\"{name}\"}}");
            c.case("join", &p, seed, &[l, rn], || df.join(right, on, how));
        }
    }
    // group_by
    let aggs = |cols: &[&str]| -> (Vec<Agg>, String) {
        let mut a = vec![Agg::len()];
        let mut j = vec![r#"["len",null,"len"]"#.to_string()];
        for &cname in cols {
            type Make = fn(String) -> Agg;
            let kinds: [(&str, Make); 8] = [
                ("count", |c| Agg::count(c)),
                ("sum", |c| Agg::sum(c)),
                ("mean", |c| Agg::mean(c)),
                ("min", |c| Agg::min(c)),
                ("max", |c| Agg::max(c)),
                ("std", |c| Agg::std(c)),
                ("first", |c| Agg::first(c)),
                ("n_unique", |c| Agg::n_unique(c)),
            ];
            for (kind, make) in kinds {
                let numeric_only = matches!(kind, "sum" | "mean" | "std");
                if numeric_only && matches!(cname, "s" | "d" | "t" | "b") {
                    continue;
                }
                let alias = format!("{cname}_{kind}");
                a.push(make(cname.to_string()).alias(alias.clone()));
                j.push(format!("[\"{kind}\",\"{cname}\",\"{alias}\"]"));
            }
        }
        (a, format!("[{}]", j.join(",")))
    };
    let value_cols = ["i", "j", "f", "g", "b", "s", "d", "t"];
    for keys in [
        &["k"][..],
        &["s"][..],
        &["k", "b"][..],
        &["g"][..],
        &["d"][..],
    ] {
        let vals: Vec<&str> = value_cols
            .iter()
            .copied()
            .filter(|v| !keys.contains(v))
            .collect();
        let (a, aj) = aggs(&vals);
        let p = format!("{{\"keys\":{keys:?},\"aggs\":{aj}}}");
        c.case("group_by", &p, seed, &one, || df.group_by(keys)?.agg(&a));
    }
    for name in ["k", "s", "b", "g", "d", "j"] {
        let p = format!("{{\"column\":\"{name}\"}}");
        c.case("value_counts", &p, seed, &one, || df.value_counts(name));
        c.case("unique", &p, seed, &one, || df.column(name)?.unique());
        c.case("n_unique", &p, seed, &one, || {
            Ok(Out::Count(df.column(name)?.n_unique()?))
        });
    }
    c.case("describe", "{}", seed, &one, || df.describe());
    // strings
    let s = df.column("s").unwrap();
    let st = s.str();
    c.case("str", r#"{"fn":"len_bytes"}"#, seed, &one, || {
        st.len_bytes()
    });
    c.case("str", r#"{"fn":"len_chars"}"#, seed, &one, || {
        st.len_chars()
    });
    c.case("str", r#"{"fn":"to_uppercase"}"#, seed, &one, || {
        st.to_uppercase()
    });
    c.case("str", r#"{"fn":"to_lowercase"}"#, seed, &one, || {
        st.to_lowercase()
    });
    for pat in ["e", "Σ", "😀", "_", "::", "main"] {
        let pj = q(pat);
        c.case(
            "str",
            &format!(r#"{{"fn":"contains","pat":{pj}}}"#),
            seed,
            &one,
            || st.contains(pat),
        );
        c.case(
            "str",
            &format!(r#"{{"fn":"starts_with","pat":{pj}}}"#),
            seed,
            &one,
            || st.starts_with(pat),
        );
        c.case(
            "str",
            &format!(r#"{{"fn":"ends_with","pat":{pj}}}"#),
            seed,
            &one,
            || st.ends_with(pat),
        );
        let to = "«Ü»";
        let tj = q(to);
        c.case(
            "str",
            &format!(r#"{{"fn":"replace","pat":{pj},"to":{tj}}}"#),
            seed,
            &one,
            || st.replace(pat, to),
        );
        c.case(
            "str",
            &format!(r#"{{"fn":"replace_all","pat":{pj},"to":""}}"#),
            seed,
            &one,
            || st.replace_all(pat, ""),
        );
        c.case(
            "str",
            &format!(r#"{{"fn":"replace_n","pat":{pj},"to":{tj},"n":2}}"#),
            seed,
            &one,
            || st.replace_n(pat, to, 2),
        );
        c.case(
            "str",
            &format!(r#"{{"fn":"split_part","pat":{pj},"index":1}}"#),
            seed,
            &one,
            || st.split_part(pat, 1),
        );
        c.case(
            "str",
            &format!(r#"{{"fn":"split_exact","pat":{pj},"n":2}}"#),
            seed,
            &one,
            || Ok(Out::Cols(st.split_exact(pat, 2)?)),
        );
    }
    for (off, len) in [
        (0i64, Some(3usize)),
        (2, None),
        (-3, Some(2)),
        (-20, Some(25)),
        (1, Some(0)),
    ] {
        let lj = len.map_or("null".to_string(), |v| v.to_string());
        c.case(
            "str",
            &format!(r#"{{"fn":"slice","offset":{off},"length":{lj}}}"#),
            seed,
            &one,
            || st.slice(off, len),
        );
    }
    // rolling
    for name in ["i", "f", "g", "j"] {
        for (w, m, center) in [
            (1, 1, false),
            (3, 3, false),
            (3, 1, true),
            (4, 2, false),
            (4, 2, true),
            (7, 5, true),
        ] {
            let cl = df.column(name).unwrap();
            let ro = cl.rolling(RollingOptions::new(w).min_periods(m).center(center));
            for stat in ["sum", "mean", "min", "max"] {
                let p = format!(
                    r#"{{"column":"{name}","stat":"{stat}","window":{w},"min_periods":{m},"center":{center}}}"#
                );
                c.case("rolling", &p, seed, &one, || match stat {
                    "sum" => ro.sum(),
                    "mean" => ro.mean(),
                    "min" => ro.min(),
                    _ => ro.max(),
                });
            }
            if name == "f" {
                let p =
                    format!(r#"{{"column":"f","window":{w},"min_periods":{m},"center":{center}}}"#);
                c.case("rolling_spread", &p, seed, &one, || {
                    ro.apply(|cfg, a| {
                        window_spread.launch(cfg, a.values, a.valid, a.starts, a.ends, a.out)
                    })
                });
            }
        }
    }
    // user functions
    c.case("apply_rows_add_ij", "{}", seed, &one, || {
        df.apply_rows(&["i", "j"], "ij", |cfg, cols, out| {
            Ok(add_ij.launch(cfg, cols.values::<i64>("i")?, cols.values::<i32>("j")?, out)?)
        })
    });
    c.case("map_kernel_at_least_100", "{}", seed, &one, || {
        df.column("i")?
            .map_kernel(|cfg, v: &Array<i64>, out: &mut Array<bool>| {
                at_least_100.launch(cfg, v, out)
            })
    });
    c.case("map_array_half_plus_three", "{}", seed, &one, || {
        df.column("f")?
            .map_array(|x: &Array<f64>| half_plus_three(x))
    });
    c.case("map_array_astype_f64", "{}", seed, &one, || {
        df.column("i")?
            .map_array(|x: &Array<i64>| x.astype::<f64>())
    });
    // CSV write -> read
    let mut buf = Vec::new();
    let written = write_csv_to(df, &mut buf, b',');
    let text = String::from_utf8(buf).unwrap_or_default();
    let schema: Vec<(String, FrameDType)> = df
        .columns()
        .iter()
        .map(|c| (c.name().to_string(), c.dtype()))
        .collect();
    c.case(
        "csv_roundtrip",
        &format!("{{\"csv\":{}}}", q(&text)),
        seed,
        &one,
        || {
            written?;
            read_csv_from(
                Cursor::new(text.as_bytes()),
                &CsvOptions::new().with_schema(&schema).with_device(&dev),
            )
        },
    );
}

// ------------------------------------------------------------------------------------------
// Python

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A Python that imports polars, or why there is none.
fn polars_python() -> Result<PathBuf, String> {
    let python = match std::env::var_os("GPUKIT_POLARS_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => workspace_root().join(".venv/bin/python"),
    };
    match Command::new(&python)
        .args(["-c", "import polars; print(polars.__version__)"])
        .output()
    {
        Ok(o) if o.status.success() => Ok(python),
        Ok(o) => Err(format!(
            "{} cannot import polars: {}",
            python.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {}: {e}", python.display())),
    }
}

/// Python with polars, or `None` after printing why the test is skipped (a panic where `CI`
/// is set and `ci_must_run`: CI must run the CPU comparison).
fn polars_or_skip(what: &str, ci_must_run: bool) -> Option<PathBuf> {
    match polars_python() {
        Ok(p) => Some(p),
        Err(why) if ci_must_run && std::env::var_os("CI").is_some() => {
            panic!("{what}: CI is set but no Python with polars: {why} (set GPUKIT_POLARS_PYTHON or run `make install`)")
        }
        Err(why) => {
            println!("skipped: {what}: no Python with polars ({why}; set GPUKIT_POLARS_PYTHON)");
            None
        }
    }
}

/// Writes the cases of `device` and runs the checker; panics with its report on a mismatch.
fn check_against_polars(python: &Path, device: &Device, tag: &str) {
    let json = run_all(device);
    let dir = std::env::temp_dir().join(format!("gpukit-polars-equal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.json"));
    std::fs::write(&path, json).unwrap();
    let checker = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/polars_equal.py");
    let out = Command::new(python)
        .arg(&checker)
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", checker.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    if out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        panic!(
            "{tag}: gpukit-frame differs from Polars (cases kept in {}):\n{stdout}\n{stderr}",
            path.display()
        );
    }
}

#[test]
fn every_operation_equals_polars_on_the_cpu_backend() {
    let Some(python) = polars_or_skip("every_operation_equals_polars_on_the_cpu_backend", true)
    else {
        return;
    };
    check_against_polars(&python, &Device::Cpu, "cpu");
}

#[test]
fn every_operation_equals_polars_on_the_gpu() {
    let Some((gpu, _turn)) = gpukit::testing::serial_gpu_or_skip() else {
        return;
    };
    let Some(python) = polars_or_skip("every_operation_equals_polars_on_the_gpu", false) else {
        return;
    };
    check_against_polars(&python, &gpu, "gpu");
}
