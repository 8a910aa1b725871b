//! `str.replace(from, to)` (first occurrence), `str.replace_n` and `str.replace_all` with
//! literal patterns: two passes of one kernel, one thread per row. Occurrences are found left
//! to right without overlaps, as Rust's `str::replacen` and Polars' literal replace do.

use gpukit::prelude::*;

use super::launch::{offsets_from_lengths, padded, rows_config};
use super::{nonempty, StrNamespace};
use crate::column::{Column, ColumnData};
use crate::error::Result;
use crate::strings::Utf8Data;

/// Replaces the first `limit` occurrences of `from[..m]` in every row by `to[..t]`. With
/// `write` 0 it stores each row's output length in `lens`; with 1 it writes row `i` at
/// `out_offsets[i]`.
#[kernel]
pub(crate) fn replace_literal(
    offsets: &[i64],
    bytes: &[u8],
    from: &[u8],
    m: usize,
    to: &[u8],
    t: usize,
    limit: usize,
    write: u32,
    lens: &mut [i64],
    out_offsets: &[i64],
    out: &mut [u8],
) {
    let n = offsets.len() - 1;
    for i in (grid(1)..n).step_by(gridsize(1)) {
        let a = offsets[i] as usize;
        let b = offsets[i + 1] as usize;
        let mut q: usize = 0;
        if write == 1 {
            q = out_offsets[i] as usize;
        }
        let mut done: usize = 0;
        let mut p = a;
        while p < b {
            let mut hit = false;
            if done < limit && b - p >= m {
                let mut k = 0;
                while k < m && bytes[p + k] == from[k] {
                    k += 1;
                }
                hit = k == m;
            }
            if hit {
                if write == 1 {
                    for k in 0..t {
                        out[q + k] = to[k];
                    }
                }
                q += t;
                p += m;
                done += 1;
            } else {
                if write == 1 {
                    out[q] = bytes[p];
                }
                q += 1;
                p += 1;
            }
        }
        if write == 0 {
            lens[i] = q as i64;
        }
    }
}

impl StrNamespace<'_> {
    /// Replaces the first `n` occurrences of the literal `from` by `to` in every row (Polars'
    /// `str.replace(from, to, literal=True, n=n)`). An empty `from` is an error.
    pub fn replace_n(&self, from: &str, to: &str, n: usize) -> Result<Column> {
        let s = self.utf8("replace")?;
        nonempty("replace", "pattern", from, self.column)?;
        let device = s.device();
        let rows = s.len();
        let config = rows_config(rows)?;
        let from_a = padded(from.as_bytes(), &device)?;
        let to_a = padded(to.as_bytes(), &device)?;
        let mut lens = Array::<i64>::zeros_on(rows, &device)?;
        let dummy_offsets = Array::<i64>::zeros_on(1, &device)?;
        let mut dummy_out = Array::<u8>::zeros_on(1, &device)?;
        let (fl, tl) = (from.len(), to.len());
        replace_literal.launch(
            config,
            s.offsets(),
            s.bytes(),
            &from_a,
            fl,
            &to_a,
            tl,
            n,
            0,
            &mut lens,
            &dummy_offsets,
            &mut dummy_out,
        )?;
        let (offsets, total) = offsets_from_lengths(&lens)?;
        let mut out = Array::<u8>::zeros_on(total, &device)?;
        if total > 0 {
            replace_literal.launch(
                config,
                s.offsets(),
                s.bytes(),
                &from_a,
                fl,
                &to_a,
                tl,
                n,
                1,
                &mut lens,
                &offsets,
                &mut out,
            )?;
        }
        self.same_rows(ColumnData::Utf8(Utf8Data::from_parts_unchecked(
            offsets, out,
        )))
    }

    /// Replaces the first occurrence of the literal `from` by `to` in every row (Polars'
    /// `str.replace(from, to, literal=True)`).
    pub fn replace(&self, from: &str, to: &str) -> Result<Column> {
        self.replace_n(from, to, 1)
    }

    /// Replaces every occurrence of the literal `from` by `to` (Polars'
    /// `str.replace_all(from, to, literal=True)`).
    pub fn replace_all(&self, from: &str, to: &str) -> Result<Column> {
        self.replace_n(from, to, usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_each, rows_of};

    #[test]
    fn replace_matches_std_on_random_unicode_with_nulls() {
        for (from, to) in [
            ("a", "XY"),
            ("_", " "),
            ("ab", ""),
            ("ß", "ss"),
            ("Σ", "日本語"),
            ("aa", "a"),
        ] {
            check_each(|rows, col| {
                let want = |n: usize| -> Vec<Option<String>> {
                    rows.iter()
                        .map(|r| r.as_ref().map(|s| s.replacen(from, to, n)))
                        .collect()
                };
                assert_eq!(rows_of(&col.str().replace(from, to).unwrap()), want(1));
                assert_eq!(rows_of(&col.str().replace_n(from, to, 2).unwrap()), want(2));
                assert_eq!(
                    rows_of(&col.str().replace_all(from, to).unwrap()),
                    want(usize::MAX)
                );
            });
        }
    }

    #[test]
    fn an_empty_pattern_is_an_error_naming_the_column() {
        let col = crate::Column::from_strs_on("title", &["a"], &gpukit::Device::Cpu).unwrap();
        let e = col.str().replace_all("", "x").unwrap_err().to_string();
        assert!(
            e.contains("str.replace on column `title`: the pattern must not be empty"),
            "{e}"
        );
    }
}
