//! Test helpers of the row operations: random frames with nulls, NaN and unicode strings, and
//! the frame's values on the host to check against straightforward host implementations.

use std::cmp::Ordering;

use gpukit::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

/// One value of a column on the host.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum V {
    Null,
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
}

impl V {
    /// Equality for test checks (NaN equals NaN).
    pub(crate) fn same(&self, o: &V) -> bool {
        match (self, o) {
            (V::Float(a), V::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => self == o,
        }
    }

    /// Polars' order of non-null values: numbers, NaN largest, -0.0 == 0.0; strings bytewise.
    pub(crate) fn order(&self, o: &V) -> Ordering {
        match (self, o) {
            (V::Int(a), V::Int(b)) => a.cmp(b),
            (V::Float(a), V::Float(b)) => match (a.is_nan(), b.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => a.partial_cmp(b).unwrap(),
            },
            (V::Str(a), V::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (V::Bool(a), V::Bool(b)) => a.cmp(b),
            _ => panic!("order of {self:?} and {o:?}"),
        }
    }
}

/// A column's values on the host.
pub(crate) fn host(c: &Column) -> Vec<V> {
    let valid = c
        .validity()
        .map(|v| v.to_bools().unwrap())
        .unwrap_or_else(|| vec![true; c.len()]);
    let vals: Vec<V> = match c.data() {
        ColumnData::Bool(a) => a.to_vec().unwrap().into_iter().map(V::Bool).collect(),
        ColumnData::Int32(a) | ColumnData::Date(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|x| V::Int(x as i128))
            .collect(),
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|x| V::Int(x as i128))
            .collect(),
        ColumnData::UInt32(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|x| V::Int(x as i128))
            .collect(),
        ColumnData::UInt64(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|x| V::Int(x as i128))
            .collect(),
        ColumnData::Float32(a) => a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|x| V::Float(x as f64))
            .collect(),
        ColumnData::Float64(a) => a.to_vec().unwrap().into_iter().map(V::Float).collect(),
        ColumnData::Utf8(s) => s.to_strings().unwrap().into_iter().map(V::Str).collect(),
    };
    vals.into_iter()
        .zip(valid)
        .map(|(v, ok)| if ok { v } else { V::Null })
        .collect()
}

/// Every column of a frame on the host, with its name.
pub(crate) fn host_frame(f: &DataFrame) -> Vec<(String, Vec<V>)> {
    f.columns()
        .iter()
        .map(|c| (c.name().to_string(), host(c)))
        .collect()
}

/// Asserts two host columns are equal (NaN equal to NaN).
pub(crate) fn assert_same(a: &[V], b: &[V], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(x.same(y), "{what}: row {i}: {x:?} != {y:?}");
    }
}

/// Asserts two frames hold the same columns and values.
pub(crate) fn assert_frames(a: &DataFrame, b: &DataFrame, what: &str) {
    assert_eq!(a.names(), b.names(), "{what}: names");
    assert_eq!(a.dtypes(), b.dtypes(), "{what}: dtypes");
    for (x, y) in host_frame(a).iter().zip(host_frame(b)) {
        assert_same(&x.1, &y.1, &format!("{what}, column {}", x.0));
    }
}

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

/// A seeded generator.
pub(crate) fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Validity with about `p_null` nulls (never all valid collapsed here: Column::new drops it).
pub(crate) fn random_valid(r: &mut StdRng, n: usize, p_null: f64) -> Vec<bool> {
    (0..n).map(|_| !r.random_bool(p_null)).collect()
}

fn bitmap(valid: &[bool], device: &Device) -> Option<Bitmap> {
    Some(Bitmap::from_bools_on(valid, device).unwrap())
}

/// A random frame of `n` rows on `device`: `i` i64 (few values: duplicates), `f` f64 (NaN,
/// -0.0), `s` str (unicode, empty, shared long prefixes, a NUL byte), `b` bool, `u` u32,
/// `d` date, `g` f32; every column with nulls when `nulls`.
pub(crate) fn random_frame(r: &mut StdRng, n: usize, nulls: bool, device: &Device) -> DataFrame {
    let p = if nulls { 0.2 } else { 0.0 };
    let mut cols = Vec::new();
    let i: Vec<i64> = (0..n).map(|_| r.random_range(-3..4)).collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "i",
            ColumnData::Int64(Array::from_slice_on(&i, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    let f: Vec<f64> = (0..n)
        .map(|_| match r.random_range(0..6) {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            _ => r.random_range(-2..3) as f64 * 0.5,
        })
        .collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "f",
            ColumnData::Float64(Array::from_slice_on(&f, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    let s: Vec<&str> = (0..n)
        .map(|_| WORDS[r.random_range(0..WORDS.len())])
        .collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "s",
            ColumnData::Utf8(Utf8Data::from_strs_on(&s, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    let b: Vec<bool> = (0..n).map(|_| r.random_bool(0.5)).collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "b",
            ColumnData::Bool(Array::from_slice_on(&b, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    let u: Vec<u32> = (0..n)
        .map(|_| r.random_range(0..5u32) * 1_000_000_000)
        .collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "u",
            ColumnData::UInt32(Array::from_slice_on(&u, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    let d: Vec<i32> = (0..n).map(|_| r.random_range(-2..3) * 365).collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "d",
            ColumnData::Date(Array::from_slice_on(&d, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    let g: Vec<f32> = (0..n)
        .map(|_| r.random_range(-2..3) as f32 * 0.25)
        .collect();
    let v = random_valid(r, n, p);
    cols.push(
        Column::new(
            "g",
            ColumnData::Float32(Array::from_slice_on(&g, device).unwrap()),
            bitmap(&v, device),
        )
        .unwrap(),
    );
    DataFrame::new(cols).unwrap()
}

/// The sizes every test runs: empty, one row, a few, more than a block, not a multiple of 8.
pub(crate) const SIZES: [usize; 5] = [0, 1, 7, 300, 1029];
