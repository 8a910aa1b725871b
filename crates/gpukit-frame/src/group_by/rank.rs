//! Dense ranks: each row's value replaced by the number of distinct smaller values, so equal
//! values share a code and codes order like the values. Everything runs on the column's device:
//! a stable `argsort` (gpukit's), a gather into sorted order, adjacent-difference flags and a
//! `cumsum` give the codes in sorted order; a scatter puts them back in row order.
//!
//! Strings are ranked by their bytes (lexicographic, as Polars sorts `str`) in rounds: each
//! round packs the code so far and the next few bytes of every row into one `u64` and ranks
//! that, until every row's bytes are used or every row is alone. No hashing is involved, so
//! there are no collisions to resolve: equal codes mean equal bytes.
//!
//! Nulls: [`column_codes`] gives null rows code 0 and valid rows their rank + 1 (nulls first,
//! as Polars' `sort`); every NaN shares one code, ordered after every number.

use gpukit::Array;

use super::gather::valid_bytes;
use super::kernels::{cfg, gb_combine, gb_null_code, gb_str_chunk, gb_str_lens};
use super::typed::{go, last, scatter_u64, GroupElem};
use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::strings::Utf8Data;

/// Codes of a 1-D array: row order, sorted order and the permutation between them.
pub(crate) struct Ranked {
    /// The stable sorting permutation: `perm[p]` is the row at sorted position `p`.
    pub perm: Array<i64>,
    /// The code at each sorted position (never decreasing, from 0).
    pub sorted_codes: Array<u64>,
    /// The code of each row.
    pub codes: Array<u64>,
    /// The number of distinct codes.
    pub distinct: usize,
}

/// Dense ranks of `vals` (stable: equal values keep their row order in `perm`).
pub(crate) fn dense_rank<T: GroupElem>(vals: &Array<T>) -> Result<Ranked> {
    let dev = vals.device();
    if vals.size() == 0 {
        return Ok(Ranked {
            perm: Array::<i64>::zeros_on(0, &dev)?,
            sorted_codes: Array::<u64>::zeros_on(0, &dev)?,
            codes: Array::<u64>::zeros_on(0, &dev)?,
            distinct: 0,
        });
    }
    let perm = vals.argsort()?;
    let sorted = T::gather(vals, &perm)?;
    let sorted_codes = T::differ(&sorted)?.cumsum()?;
    let distinct = last(&sorted_codes)? as usize + 1;
    let codes = scatter_u64(&sorted_codes, &perm)?;
    Ok(Ranked {
        perm,
        sorted_codes,
        codes,
        distinct,
    })
}

/// Dense ranks of the strings of `s` by their UTF-8 bytes: (codes per row, distinct count).
pub(crate) fn string_codes(s: &Utf8Data) -> Result<(Array<u64>, usize)> {
    let n = s.len();
    let dev = s.device();
    let mut codes = Array::<u64>::zeros_on(n, &dev)?;
    if n == 0 {
        return Ok((codes, 0));
    }
    let mut lens = Array::<i64>::zeros_on(n, &dev)?;
    go!(gb_str_lens, n, s.offsets(), &mut lens);
    let max_len = lens.max()?;
    let mut distinct = 1usize;
    let mut pos = 0i64;
    while pos < max_len && distinct < n {
        let code_bits = 64 - ((distinct - 1) as u64).leading_zeros() as i64;
        if code_bits > 32 {
            return Err(FrameError::Input(format!(
                "a string column with {distinct} distinct prefixes is more than grouping \
                 supports (2^32)"
            )));
        }
        // bytes this round: what fits beside the code and the 4-bit length tag
        let k = ((64 - code_bits - 4) / 8).min(7);
        let mut keys = Array::<u64>::zeros_on(n, &dev)?;
        go!(
            gb_str_chunk,
            n,
            s.offsets(),
            s.bytes(),
            &codes,
            pos,
            k,
            &mut keys
        );
        let r = dense_rank(&keys)?;
        codes = r.codes;
        distinct = r.distinct;
        pos += k;
    }
    Ok((codes, distinct))
}

/// Order-preserving codes of a column (null = 0, values from 1 up) and a bound above them.
pub(crate) fn column_codes(col: &Column) -> Result<(Array<u64>, u64)> {
    let (codes, distinct) = match col.data() {
        ColumnData::Bool(a) => rank_of(&a.astype::<u8>()?)?,
        ColumnData::Int32(a) | ColumnData::Date(a) => rank_of(a)?,
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => rank_of(a)?,
        ColumnData::UInt32(a) => rank_of(a)?,
        ColumnData::UInt64(a) => rank_of(a)?,
        ColumnData::Float32(a) => rank_of(a)?,
        ColumnData::Float64(a) => rank_of(a)?,
        ColumnData::Utf8(s) => string_codes(s)?,
    };
    let valid = valid_bytes(col)?;
    let mut out = Array::<u64>::zeros_on(codes.size(), &codes.device())?;
    go!(gb_null_code, codes.size(), &codes, &valid, &mut out);
    Ok((out, distinct as u64 + 1))
}

fn rank_of<T: GroupElem>(a: &Array<T>) -> Result<(Array<u64>, usize)> {
    let r = dense_rank(a)?;
    Ok((r.codes, r.distinct))
}

/// Codes of the pairs `(a, b)` with `a < da`, `b < db`, in lexicographic order: `a * db + b`.
/// An error when the product does not fit 64 bits (more than 2^32 rows).
pub(crate) fn combine(a: &Array<u64>, da: u64, b: &Array<u64>, db: u64) -> Result<Array<u64>> {
    if da.checked_mul(db.max(1)).is_none() {
        return Err(FrameError::Input(format!(
            "grouping keys with {da} x {db} combinations do not fit 64-bit codes"
        )));
    }
    let mut out = Array::<u64>::zeros_on(a.size(), &a.device())?;
    go!(gb_combine, a.size(), a, b, db, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit::Device;

    #[test]
    fn ranks_are_dense_and_ordered() {
        let a = Array::from_slice_on(
            &[3.0f64, f64::NAN, -0.0, 0.0, 3.0, -1.0, f64::NAN],
            &Device::Cpu,
        )
        .unwrap();
        let r = dense_rank(&a).unwrap();
        assert_eq!(r.codes.to_vec().unwrap(), [2, 3, 1, 1, 2, 0, 3]);
        assert_eq!(r.distinct, 4);
        assert_eq!(r.perm.to_vec().unwrap(), [5, 2, 3, 0, 4, 1, 6]);
    }

    #[test]
    fn strings_rank_by_bytes_with_prefixes_first() {
        let rows = [
            "b",
            "",
            "ab",
            "ab\0",
            "abc",
            "a",
            "日本",
            "abcdefghijklmnopq",
            "abcdefghijklmnopr",
            "ab",
            "Zürich",
        ];
        let s = Utf8Data::from_strs_on(&rows, &Device::Cpu).unwrap();
        let (codes, distinct) = string_codes(&s).unwrap();
        let codes = codes.to_vec().unwrap();
        let mut sorted: Vec<&str> = rows.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(distinct, sorted.len());
        for (i, r) in rows.iter().enumerate() {
            let want = sorted.iter().position(|s| s == r).unwrap() as u64;
            assert_eq!(codes[i], want, "{r:?}");
        }
    }

    #[test]
    fn random_strings_rank_as_a_host_sort() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(3);
        let alphabet = ["a", "b", "\0", "é", "日", "z"];
        // many distinct values, so later rounds carry wide codes and fewer bytes each
        let rows: Vec<String> = (0..4000)
            .map(|_| {
                let len = rng.random_range(0..40);
                (0..len)
                    .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                    .collect()
            })
            .collect();
        let s = Utf8Data::from_strs_on(&rows, &Device::Cpu).unwrap();
        let (codes, distinct) = string_codes(&s).unwrap();
        let codes = codes.to_vec().unwrap();
        let mut sorted: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        sorted.sort();
        sorted.dedup();
        assert_eq!(distinct, sorted.len());
        for (i, r) in rows.iter().enumerate() {
            let want = sorted.binary_search(&r.as_bytes()).unwrap() as u64;
            assert_eq!(codes[i], want, "{r:?}");
        }
    }
}
