//! Ordering rows: [`Column::arg_sort`], [`Column::sort`], [`DataFrame::sort_by`] (one or
//! several keys, each ascending or descending), and the dense ranks of strings that sorts and
//! joins on string keys use.
//!
//! What runs where: everything on the device; the host sees one scalar per string-ranking
//! round. Every sort is a chain of gpukit's **stable** `argsort` over `u64` keys (or floats):
//!
//! - **Keys.** Integers, dates, timestamps and booleans become `u64` whose unsigned order is
//!   theirs (signed values get their sign bit flipped, `key_i64`); descending flips every bit,
//!   so a stable ascending argsort of the key is a stable descending sort. Floats are sorted
//!   as floats (gpukit's order: NaN last, -0.0 equal to 0.0); descending sorts the negated
//!   values and then moves NaN to the front with one more stable pass (Polars: NaN is the
//!   largest value). Strings become their dense ranks (below).
//! - **Nulls** go last (pandas' default `na_position="last"`; Polars' `nulls_last=True`) or
//!   first ([`DataFrame::sort_by_with`]): after a key's value pass, a stable pass on its null
//!   flags moves them, keeping their order from the passes before.
//! - **Several keys** sort least-significant first (LSD): the last key's pass, then each
//!   earlier key's pass on the order so far (its keys gathered through the order). Stability
//!   makes ties of an earlier key keep the later keys' order.
//! - **Strings** are ranked by prefix doubling over 7-byte chunks: round `k` takes bytes
//!   `7k..7k+7` of each string, big-endian in the key's high 56 bits, and in its low byte how
//!   many bytes the string still has from there (capped at 8), so a string that ends sorts
//!   before a longer one with the same bytes (also when the longer one goes on with NUL bytes).
//!   Rows are sorted by (rank so far, chunk key) with two stable passes, then new dense ranks
//!   are a scan of "differs from the row before". Only rows still tied after a full chunk
//!   (both strings go on) need another round, and the rounds stop when no such tie is left,
//!   so the number of rounds is the longest shared prefix of two rows / 7 + 1, not the longest
//!   string. Equal strings would tie to their end, so they are grouped first: a 64-bit hash of
//!   each string, a stable argsort by hash, and a kernel that starts a new group where the hash
//!   or the bytes differ from the row before (a hash collision only splits a group, never
//!   merges two strings); one string per group is ranked, and every row takes its group's
//!   rank. Bytewise order of UTF-8 is code point order, Polars' string order.

use gpukit::prelude::*;

use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

use super::kernels::{self as k, grid_for};
use super::take::{gather, gather_strings, last, valid_bools};

/// Launch helper: `(blocks, threads)` for `n` items.
fn cfg(n: usize) -> (u32, u32) {
    grid_for(n)
}

/// `idx` gathered through `order` (`idx[order]`).
fn compose(idx: &Array<i64>, order: &Array<i64>) -> Result<Array<i64>> {
    gather(idx, order)
}

/// Flags (`u64`, 0 or 1) where `valid` is false.
pub(crate) fn null_flags(valid: &Array<bool>) -> Result<Array<u64>> {
    let n = valid.size();
    let mut out = Array::<u64>::empty_on(n, &valid.device())?;
    if n > 0 {
        let (b, t) = cfg(n);
        launch!(k::null_flags[b, t](valid, &mut out))?;
    }
    Ok(out)
}

/// Sort keys `u64` of signed integers widened to `i64` (descending: bits flipped).
fn keys_signed(x: &Array<i64>, desc: bool) -> Result<Array<u64>> {
    let n = x.size();
    let mut out = Array::<u64>::empty_on(n, &x.device())?;
    if n > 0 {
        let (b, t) = cfg(n);
        launch!(k::key_i64[b, t](x, desc, &mut out))?;
    }
    Ok(out)
}

/// Sort keys of unsigned values (descending: bits flipped).
fn keys_unsigned(x: &Array<u64>, desc: bool) -> Result<Array<u64>> {
    if !desc {
        return Ok(x.clone());
    }
    let n = x.size();
    let mut out = Array::<u64>::empty_on(n, &x.device())?;
    if n > 0 {
        let (b, t) = cfg(n);
        launch!(k::key_u64[b, t](x, desc, &mut out))?;
    }
    Ok(out)
}

/// A column's values prepared for sorting, over its original rows.
pub(crate) enum SortKey {
    /// Unsigned keys in the wanted order.
    Bits(Array<u64>),
    /// Floats: sorted as floats (descending: negated, then NaN first).
    Float(Array<f64>),
}

/// The sort key of `col`'s values (nulls not handled here). Equal values give equal keys, so
/// a `Bits` key also serves as a join key.
pub(crate) fn sort_key(col: &Column, desc: bool) -> Result<SortKey> {
    Ok(match col.data() {
        ColumnData::Bool(a) => SortKey::Bits(keys_unsigned(&a.astype::<u64>()?, desc)?),
        ColumnData::Int32(a) | ColumnData::Date(a) => {
            SortKey::Bits(keys_signed(&a.astype::<i64>()?, desc)?)
        }
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => SortKey::Bits(keys_signed(a, desc)?),
        ColumnData::UInt32(a) => SortKey::Bits(keys_unsigned(&a.astype::<u64>()?, desc)?),
        ColumnData::UInt64(a) => SortKey::Bits(keys_unsigned(a, desc)?),
        ColumnData::Float32(a) => SortKey::Float(a.astype::<f64>()?),
        ColumnData::Float64(a) => SortKey::Float(a.clone()),
        ColumnData::Utf8(s) => SortKey::Bits(keys_unsigned(&string_ranks(s)?, desc)?),
    })
}

/// One stable pass: the order `perm` (or the identity when `None`) refined by `key`; returns
/// the new order.
pub(crate) fn pass_bits(perm: Option<&Array<i64>>, key: &Array<u64>) -> Result<Array<i64>> {
    match perm {
        None => Ok(key.argsort()?),
        Some(p) => {
            let order = gather(key, p)?.argsort()?;
            compose(p, &order)
        }
    }
}

/// One key's passes (values, then NaN for descending floats, then nulls).
fn refine(
    perm: Option<&Array<i64>>,
    col: &Column,
    desc: bool,
    nulls_last: bool,
) -> Result<Array<i64>> {
    // A null row's value slot holds any value: make it one constant so that the value pass
    // keeps null rows in their order so far.
    let valid = valid_bools(col)?;
    let mut p = match sort_key(col, desc)? {
        SortKey::Bits(mut keys) => {
            if let Some(v) = &valid {
                let n = keys.size();
                let (b, t) = cfg(n);
                launch!(k::fill_invalid_u64[b, t](&mut keys, v, 0u64))?;
            }
            pass_bits(perm, &keys)?
        }
        SortKey::Float(x) => {
            let x = match &valid {
                Some(v) => Array::where_(v, &x, 0.0)?,
                None => x,
            };
            let x = match perm {
                None => x,
                Some(p) => gather(&x, p)?,
            };
            let vals = if desc { x.neg()? } else { x.clone() };
            let order = vals.argsort()?;
            let mut p = match perm {
                None => order.clone(),
                Some(p) => compose(p, &order)?,
            };
            if desc {
                // NaN first: a stable pass on "is a number" (0 for NaN).
                let nan = gather(&x.isnan()?, &order)?;
                p = compose(&p, &null_flags(&nan)?.argsort()?)?;
            }
            p
        }
    };
    if let Some(valid) = valid {
        let v = gather(&valid, &p)?;
        let flags = if nulls_last {
            null_flags(&v)?
        } else {
            v.astype::<u64>()?
        };
        p = compose(&p, &flags.argsort()?)?;
    }
    Ok(p)
}

/// The order (row indices) that sorts `cols` by each key in turn (LSD chain of stable passes).
pub(crate) fn lexsort(
    cols: &[&Column],
    descending: &[bool],
    nulls_last: bool,
) -> Result<Array<i64>> {
    let Some(first) = cols.first() else {
        return Err(FrameError::Input("sort needs at least one key".into()));
    };
    let n = first.len();
    if n == 0 {
        return Ok(Array::<i64>::zeros_on(0, &first.device())?);
    }
    let mut perm: Option<Array<i64>> = None;
    for (c, d) in cols.iter().zip(descending).rev() {
        perm = Some(refine(perm.as_ref(), c, *d, nulls_last)?);
    }
    match perm {
        Some(p) => Ok(p),
        None => Ok(Array::arange_on(0i64, n as i64, &first.device())?),
    }
}

/// Dense ranks of strings in bytewise order (0 for the smallest; equal strings share a rank),
/// computed on the device: equal strings are grouped by hash first, and only one string of each
/// group is ranked by prefix doubling (see the module doc).
pub fn string_ranks(s: &Utf8Data) -> Result<Array<u64>> {
    let n = s.len();
    let device = s.device();
    if n == 0 {
        return Ok(Array::<u64>::zeros_on(0, &device)?);
    }
    let bytes = if s.bytes().is_empty() {
        Array::<u8>::zeros_on(1, &device)?
    } else {
        s.bytes().clone()
    };
    let (b, t) = cfg(n);
    let mut hash = Array::<u64>::empty_on(n, &device)?;
    launch!(k::str_hash[b, t](s.offsets(), &bytes, &mut hash))?;
    let order = hash.argsort()?;
    let hs = gather(&hash, &order)?;
    let mut flag = Array::<u64>::empty_on(n, &device)?;
    launch!(k::str_group_flags[b, t](s.offsets(), &bytes, &order, &hs, &mut flag))?;
    let firsts = order.masked(&flag.astype::<bool>()?)?;
    let mut group = flag.cumsum()?.astype::<i64>()?;
    group.sub_in_place(1i64)?;
    let reps = gather_strings(s, &firsts)?;
    let rep_ranks = prefix_doubling_ranks(&reps)?;
    // the rank of the row at sorted position i is its group's; scatter back to the rows
    let ranks_sorted = gather(&rep_ranks, &group)?;
    let mut out = Array::<u64>::empty_on(n, &device)?;
    launch!(k::scatter_u64[b, t](&ranks_sorted, &order, &mut out))?;
    Ok(out)
}

/// Dense ranks by prefix doubling over 7-byte chunks (see the module doc); rounds continue
/// while two rows tie on every chunk so far and both go on, so equal strings cost rounds up
/// to their length: [`string_ranks`] calls it on one string per group of equal ones.
fn prefix_doubling_ranks(s: &Utf8Data) -> Result<Array<u64>> {
    let n = s.len();
    let device = s.device();
    if n == 0 {
        return Ok(Array::<u64>::zeros_on(0, &device)?);
    }
    let bytes = if s.bytes().is_empty() {
        Array::<u8>::zeros_on(1, &device)?
    } else {
        s.bytes().clone()
    };
    let (b, t) = cfg(n);
    let mut perm = Array::arange_on(0i64, n as i64, &device)?;
    let mut rank = Array::<u64>::zeros_on(n, &device)?;
    let mut chunk = 0usize;
    loop {
        let mut key = Array::<u64>::empty_on(n, &device)?;
        launch!(k::str_chunk_key[b, t](s.offsets(), &bytes, &perm, chunk, &mut key))?;
        // sort by (rank, key): key first, then rank, both stable
        let o1 = key.argsort()?;
        let r1 = gather(&rank, &o1)?;
        let o2 = r1.argsort()?;
        let order = compose(&o1, &o2)?;
        perm = compose(&perm, &order)?;
        let key = gather(&key, &order)?;
        let rank_sorted = gather(&r1, &o2)?;
        let mut flag = Array::<u64>::empty_on(n, &device)?;
        let mut open = Array::<u64>::empty_on(n, &device)?;
        launch!(k::str_rank_flags[b, t](&rank_sorted, &key, &mut flag, &mut open))?;
        rank = flag.cumsum()?;
        rank.sub_in_place(1u64)?;
        if open.sum()? == 0 {
            break;
        }
        chunk += 1;
    }
    // ranks are in sorted order; scatter them back to the rows
    let mut out = Array::<u64>::empty_on(n, &device)?;
    launch!(k::scatter_u64[b, t](&rank, &perm, &mut out))?;
    Ok(out)
}

impl Column {
    /// The row indices that sort the column (stable: equal values keep their order), as
    /// Polars' `arg_sort`: ascending or `descending`, NaN after every number (first when
    /// descending: NaN is the largest), nulls last.
    pub fn arg_sort(&self, descending: bool) -> Result<Array<i64>> {
        lexsort(&[self], &[descending], true)
    }

    /// The indices that sort the column ascending (NumPy's `argsort(kind="stable")` name for
    /// [`Column::arg_sort`]`(false)`): NaN after numbers, nulls last.
    pub fn argsort(&self) -> Result<Array<i64>> {
        self.arg_sort(false)
    }

    /// The column sorted (see [`Column::arg_sort`]).
    pub fn sort(&self, descending: bool) -> Result<Column> {
        let order = self.arg_sort(descending)?;
        self.take_unchecked(&order, false)
    }
}

impl DataFrame {
    /// The rows sorted by the columns `by`, the first most significant, each ascending or
    /// descending as `descending` says (one flag for all, or one per key); stable, nulls
    /// last, NaN after numbers (first when descending), as pandas' `sort_values` and Polars'
    /// `sort(by, descending, nulls_last=True, maintain_order=True)`.
    pub fn sort_by(&self, by: &[&str], descending: &[bool]) -> Result<DataFrame> {
        self.sort_by_with(by, descending, true)
    }

    /// [`DataFrame::sort_by`] with nulls first (`nulls_last: false`, Polars' default) or last.
    pub fn sort_by_with(
        &self,
        by: &[&str],
        descending: &[bool],
        nulls_last: bool,
    ) -> Result<DataFrame> {
        let order = self.arg_sort_by(by, descending, nulls_last)?;
        self.take_unchecked(&order, false)
    }

    /// The row order [`DataFrame::sort_by_with`] would give, as indices.
    pub fn arg_sort_by(
        &self,
        by: &[&str],
        descending: &[bool],
        nulls_last: bool,
    ) -> Result<Array<i64>> {
        if by.is_empty() {
            return Err(FrameError::Input(
                "sort_by needs at least one column".into(),
            ));
        }
        let desc: Vec<bool> = match descending.len() {
            0 => vec![false; by.len()],
            1 => vec![descending[0]; by.len()],
            m if m == by.len() => descending.to_vec(),
            m => {
                return Err(FrameError::Length(format!(
                    "sort_by: {} key(s) ({}) but {m} descending flags",
                    by.len(),
                    by.join(", ")
                )))
            }
        };
        let cols = by
            .iter()
            .map(|n| self.column(n))
            .collect::<Result<Vec<_>>>()?;
        lexsort(&cols, &desc, nulls_last)
    }
}

/// The last element of `a`, used by the join (re-exported for it).
pub(crate) fn last_i64(a: &Array<i64>) -> Result<i64> {
    Ok(last(a)?.unwrap_or(0))
}

#[cfg(test)]
mod tests;
