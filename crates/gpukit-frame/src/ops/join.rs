//! Joins: [`DataFrame::join`] on one or more key columns, inner or left, as Polars'
//! `df.join(other, on=..., how="inner" | "left")`.
//!
//! What runs where: on the device, sort-based. (1) Each key pair becomes one `u64` id per row
//! on both sides that is equal exactly when the values are: integers, dates, timestamps and
//! booleans are their order-preserving bits (`sort.rs`); floats and strings are dense ranks
//! over the left and right values together (one argsort, or the string ranking of
//! `sort.rs`); several keys are combined into dense ranks of the tuples (a stable sort by
//! every key and a scan of "differs from the row before"). (2) The right ids are sorted
//! (stable argsort); a kernel finds, for each left row, its run of equal right ids by binary
//! search (`join_bounds`), a scan of the run lengths gives where each left row's output
//! starts, and a second kernel writes the `(left, right)` row pairs (`join_expand`). (3) Both
//! sides are gathered with `take`; a left join's unmatched rows gather index `-1`, which makes
//! the right columns null there. The host sees only the number of output rows.
//!
//! Result: the left columns, then the right columns that are not keys, a right name that
//! clashes with a left one getting the suffix `_right` (Polars'). Row order: left row order;
//! the matches of one left row in right row order (Polars' left join order, and what its
//! inner join gives with `maintain_order="left"`). Null keys match nothing (Polars'
//! `join_nulls=False`); NaN matches NaN and -0.0 matches 0.0.

use gpukit::prelude::*;

use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

use super::kernels::{self as k, grid_for};
use super::sort::{last_i64, pass_bits, sort_key, string_ranks, SortKey};
use super::take::{and_masks, gather, mask_indices, valid_bools};

/// How a join keeps rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinHow {
    /// Only left rows with a match (one output row per matching pair).
    Inner,
    /// Every left row; right columns null where a left row has no match.
    Left,
}

/// The first `n` elements and the rest of `a`, as new arrays.
fn split<T: Element>(a: &Array<T>, n: usize) -> Result<(Array<T>, Array<T>)> {
    let total = a.size();
    Ok((
        a.view().slice(s![..n])?.copy()?,
        a.view().slice(s![n..total])?.copy()?,
    ))
}

/// Dense ranks (`u64`) of floats, NaN equal to NaN and -0.0 to 0.0.
fn float_ranks(x: &Array<f64>) -> Result<Array<u64>> {
    let n = x.size();
    let device = x.device();
    if n == 0 {
        return Ok(Array::<u64>::zeros_on(0, &device)?);
    }
    let order = x.argsort()?;
    let xs = gather(x, &order)?;
    let mut flag = Array::<u64>::zeros_on(n, &device)?;
    let (b, t) = grid_for(n);
    launch!(k::mark_changes_f64[b, t](&xs, &mut flag))?;
    scatter_ranks(&flag, &order)
}

/// Ranks from change flags in sorted order (`cumsum - 1`), scattered back through `order`.
fn scatter_ranks(flag: &Array<u64>, order: &Array<i64>) -> Result<Array<u64>> {
    let n = flag.size();
    let mut rank = flag.cumsum()?;
    rank.sub_in_place(1u64)?;
    let mut out = Array::<u64>::empty_on(n, &flag.device())?;
    let (b, t) = grid_for(n);
    launch!(k::scatter_u64[b, t](&rank, order, &mut out))?;
    Ok(out)
}

/// A float key column's values as `f64`.
fn floats(c: &Column) -> Result<Array<f64>> {
    match c.data() {
        ColumnData::Float32(a) => Ok(a.astype()?),
        ColumnData::Float64(a) => Ok(a.clone()),
        _ => Err(FrameError::Type(format!(
            "column `{}` is {}, not a float",
            c.name(),
            c.dtype()
        ))),
    }
}

/// The strings of `a` then those of `b`, as one string column's data.
fn concat_strings(a: &Utf8Data, b: &Utf8Data) -> Result<Utf8Data> {
    let shift = a.bytes().size() as i64;
    let mut tail = b.offsets().view().slice(s![1..])?.copy()?;
    tail.add_in_place(shift)?;
    let offsets = Array::concatenate(&[a.offsets(), &tail], 0)?;
    let bytes = Array::concatenate(&[a.bytes(), b.bytes()], 0)?;
    Ok(Utf8Data::from_parts_unchecked(offsets, bytes))
}

/// Per-row ids of one key pair, left then right, equal exactly when the values are.
fn key_ids(l: &Column, r: &Column) -> Result<(Array<u64>, Array<u64>)> {
    let nl = l.len();
    match (l.data(), r.data()) {
        (ColumnData::Utf8(a), ColumnData::Utf8(b)) => {
            split(&string_ranks(&concat_strings(a, b)?)?, nl)
        }
        (ColumnData::Float32(_) | ColumnData::Float64(_), _) => {
            let both = Array::concatenate(&[&floats(l)?, &floats(r)?], 0)?;
            split(&float_ranks(&both)?, nl)
        }
        _ => match (sort_key(l, false)?, sort_key(r, false)?) {
            (SortKey::Bits(a), SortKey::Bits(b)) => Ok((a, b)),
            _ => Err(FrameError::Type(format!(
                "join key `{}` of type {} has no equality key",
                l.name(),
                l.dtype()
            ))),
        },
    }
}

/// Dense ids of tuples of keys (each array over the same rows): a stable LSD sort by every
/// key, then a scan of "any key differs from the row before".
fn tuple_ids(keys: &[Array<u64>]) -> Result<Array<u64>> {
    let n = keys[0].size();
    let device = keys[0].device();
    if n == 0 {
        return Ok(Array::<u64>::zeros_on(0, &device)?);
    }
    let mut perm: Option<Array<i64>> = None;
    for key in keys.iter().rev() {
        perm = Some(pass_bits(perm.as_ref(), key)?);
    }
    let perm = match perm {
        Some(p) => p,
        None => Array::arange_on(0i64, n as i64, &device)?,
    };
    let mut flag = Array::<u64>::zeros_on(n, &device)?;
    let (b, t) = grid_for(n);
    for key in keys {
        let ks = gather(key, &perm)?;
        launch!(k::mark_changes[b, t](&ks, &mut flag))?;
    }
    scatter_ranks(&flag, &perm)
}

/// Where every key of a side is valid (`None`: no key has nulls).
fn keys_valid(cols: &[&Column]) -> Result<Option<Array<bool>>> {
    let mut acc: Option<Array<bool>> = None;
    for c in cols {
        if let Some(v) = valid_bools(c)? {
            acc = Some(match acc {
                None => v,
                Some(a) => and_masks(&a, &v)?,
            });
        }
    }
    Ok(acc)
}

/// The `(left, right)` row pairs of a join of the key ids (`-1` on the right for a kept
/// unmatched left row), in left order, each left row's matches in right order.
fn join_pairs(
    lid: &Array<u64>,
    lvalid: Option<&Array<bool>>,
    rid: &Array<u64>,
    rvalid: Option<&Array<bool>>,
    how: JoinHow,
) -> Result<(Array<i64>, Array<i64>)> {
    let device = lid.device();
    let nl = lid.size();
    if nl == 0 {
        let empty = Array::<i64>::zeros_on(0, &device)?;
        return Ok((empty.clone(), empty));
    }
    // right rows with a null key never match: leave them out
    let (rid, rows) = match rvalid {
        Some(v) => {
            let rows = mask_indices(v)?;
            (gather(rid, &rows)?, Some(rows))
        }
        None => (rid.clone(), None),
    };
    let order = rid.argsort()?;
    let rsorted = gather(&rid, &order)?;
    let rperm = match rows {
        Some(rows) => gather(&rows, &order)?,
        None => order,
    };
    let ones;
    let lvalid = match lvalid {
        Some(v) => v,
        None => {
            ones = Array::<bool>::full_on(nl, true, &device)?;
            &ones
        }
    };
    let mut lo = Array::<i64>::empty_on(nl, &device)?;
    let mut count = Array::<i64>::empty_on(nl, &device)?;
    let mut emit = Array::<i64>::empty_on(nl, &device)?;
    let (b, t) = grid_for(nl);
    let keep = how == JoinHow::Left;
    launch!(k::join_bounds[b, t](
        lid, lvalid, &rsorted, keep, &mut lo, &mut count, &mut emit
    ))?;
    let mut start = emit.cumsum()?;
    let total = last_i64(&start)? as usize;
    start.sub_in_place(&emit)?;
    let mut left_idx = Array::<i64>::empty_on(total, &device)?;
    let mut right_idx = Array::<i64>::empty_on(total, &device)?;
    if total > 0 {
        let rperm = if rperm.size() == 0 {
            Array::<i64>::zeros_on(1, &device)?
        } else {
            rperm
        };
        launch!(k::join_expand[b, t](
            &lo,
            &count,
            &emit,
            &start,
            &rperm,
            &mut left_idx,
            &mut right_idx
        ))?;
    }
    Ok((left_idx, right_idx))
}

impl DataFrame {
    /// Joins `other` on the key columns `on` (present in both frames with one type each):
    /// `JoinHow::Inner` keeps matching pairs, `JoinHow::Left` every left row (right columns
    /// null where unmatched). Columns: the left ones, then the right non-key ones (a clashing
    /// name gets `_right`). Rows in left order, a left row's matches in right order. Keys of
    /// different types, or a missing key, are errors naming the columns and types.
    pub fn join(&self, other: &DataFrame, on: &[&str], how: JoinHow) -> Result<DataFrame> {
        if on.is_empty() {
            return Err(FrameError::Input(
                "join needs at least one key column".into(),
            ));
        }
        let mut lcols = Vec::new();
        let mut rcols = Vec::new();
        for name in on {
            let l = self.column(name)?;
            let r = other.column(name).map_err(|e| match e {
                FrameError::UnknownColumn { name, available } => FrameError::Input(format!(
                    "join key `{name}` is not a column of the right frame (it has: {available})"
                )),
                e => e,
            })?;
            if l.dtype() != r.dtype() {
                return Err(FrameError::Type(format!(
                    "join key `{name}`: the left column `{}` is {} but the right column `{}` is {}",
                    l.name(),
                    l.dtype(),
                    r.name(),
                    r.dtype()
                )));
            }
            if l.device() != r.device() {
                return Err(FrameError::Input(format!(
                    "join key `{name}`: the left frame is on {} but the right on {}",
                    l.device(),
                    r.device()
                )));
            }
            lcols.push(l);
            rcols.push(r);
        }
        let nl = self.height();
        let mut lkeys = Vec::new();
        let mut rkeys = Vec::new();
        for (l, r) in lcols.iter().zip(&rcols) {
            let (a, b) = key_ids(l, r)?;
            lkeys.push(a);
            rkeys.push(b);
        }
        let (lid, rid) = if lkeys.len() == 1 {
            (lkeys.remove(0), rkeys.remove(0))
        } else {
            let both = lkeys
                .iter()
                .zip(&rkeys)
                .map(|(a, b)| Ok(Array::concatenate(&[a, b], 0)?))
                .collect::<Result<Vec<_>>>()?;
            split(&tuple_ids(&both)?, nl)?
        };
        let lvalid = keys_valid(&lcols)?;
        let rvalid = keys_valid(&rcols)?;
        let (li, ri) = join_pairs(&lid, lvalid.as_ref(), &rid, rvalid.as_ref(), how)?;
        let mut out = self.take_unchecked(&li, false)?.into_columns();
        let left_names: Vec<String> = self.names().iter().map(|s| s.to_string()).collect();
        for c in other.columns() {
            if on.contains(&c.name()) {
                continue;
            }
            let taken = c.take_unchecked(&ri, how == JoinHow::Left)?;
            let name = if left_names.iter().any(|n| n == c.name()) {
                format!("{}_right", c.name())
            } else {
                c.name().to_string()
            };
            out.push(taken.renamed(name));
        }
        DataFrame::new(out)
    }
}

#[cfg(test)]
mod tests;
