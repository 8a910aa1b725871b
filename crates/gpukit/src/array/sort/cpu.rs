//! Sorting on the CPU backend: rows in parallel (rayon), each sorted by its keys; a row that is
//! most of the array (fewer rows than threads) is sorted by a parallel sort instead.

use super::keys::{key, unkey};
use crate::backend::cpu::{alloc_filled, map_new};
use crate::element::{Element, Numeric};
use crate::error::Result;
use rayon::prelude::*;

/// Sorts each chunk of `len` of `v` (`len > 0`), in parallel over rows, or inside each row when
/// there are fewer rows than threads.
fn for_each_row<E: Send + Ord>(v: &mut [E], len: usize) {
    if v.len() / len < rayon::current_num_threads() {
        v.chunks_mut(len).for_each(|row| row.par_sort_unstable());
    } else {
        v.par_chunks_mut(len).for_each(|row| row.sort_unstable());
    }
}

/// Each row of `len` elements of `v` sorted (NaN last; -0.0 before +0.0).
pub(super) fn sort<T: Numeric>(v: &[T], len: usize) -> Result<Vec<T>> {
    if v.is_empty() || len == 0 {
        return Ok(Vec::new());
    }
    let mut keys = map_new(v, |&x| key(x, false))?;
    for_each_row(&mut keys, len);
    map_new(&keys, |&k| unkey::<T>(k))
}

/// For each row of `len` elements of `v`, the stable order: the indices (inside the row) of its
/// elements from smallest to largest, ties in their original order.
pub(super) fn argsort<T: Numeric>(v: &[T], len: usize) -> Result<Vec<i64>> {
    if v.is_empty() || len == 0 {
        return Ok(Vec::new());
    }
    // (key, index) pairs: the indices in a row are distinct, so an unstable sort of the pairs
    // is the stable sort of the keys.
    let mut pairs = alloc_filled(v.len(), (0u64, 0u64))?;
    pairs
        .par_chunks_mut(len)
        .zip(v.par_chunks(len))
        .for_each(|(p, row)| {
            for (i, (p, &x)) in p.iter_mut().zip(row).enumerate() {
                *p = (key(x, true), i as u64);
            }
        });
    for_each_row(&mut pairs, len);
    map_new(&pairs, |&(_, i)| i as i64)
}

/// `v` read as `batches` C-order matrices of `r x c`, each transposed (`c x r`).
pub(super) fn transpose<T: Element>(v: &[T], batches: usize, r: usize, c: usize) -> Result<Vec<T>> {
    let n = batches * r * c;
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut out = alloc_filled(n, T::zero())?;
    // Output row `batch * c + j` holds column j of matrix `batch`.
    out.par_chunks_mut(r).enumerate().for_each(|(row, o)| {
        let (batch, j) = (row / c, row % c);
        let m = &v[batch * r * c..(batch + 1) * r * c];
        for (i, o) in o.iter_mut().enumerate() {
            *o = m[i * c + j];
        }
    });
    Ok(out)
}
