//! `str.contains(literal)`, `str.starts_with` and `str.ends_with`: one thread per row compares
//! the row's bytes with the pattern (copied once to the device). Byte comparison is exact for
//! UTF-8: a valid pattern can only match at character boundaries. Results are `bool` columns.

use gpukit::prelude::*;

use super::launch::{padded, rows_config};
use super::StrNamespace;
use crate::column::{Column, ColumnData};
use crate::error::Result;

/// Where a pattern must occur.
const ANYWHERE: u32 = 0;
const AT_START: u32 = 1;
const AT_END: u32 = 2;

/// `out[i]` = whether row `i` holds `pat[..m]` anywhere (`mode` 0), at its start (1) or at its
/// end (2).
#[kernel]
pub(crate) fn find_literal(
    offsets: &[i64],
    bytes: &[u8],
    pat: &[u8],
    m: usize,
    mode: u32,
    out: &mut [bool],
) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let a = offsets[i] as usize;
        let b = offsets[i + 1] as usize;
        let mut found = false;
        if b - a >= m {
            let mut first = a;
            let mut last = b - m;
            if mode == 1 {
                last = a;
            } else if mode == 2 {
                first = b - m;
            }
            let mut s = first;
            while s <= last && !found {
                let mut k = 0;
                while k < m && bytes[s + k] == pat[k] {
                    k += 1;
                }
                found = k == m;
                s += 1;
            }
        }
        out[i] = found;
    }
}

impl StrNamespace<'_> {
    fn find(&self, op: &str, pattern: &str, mode: u32) -> Result<Column> {
        let s = self.utf8(op)?;
        let device = s.device();
        let pat = padded(pattern.as_bytes(), &device)?;
        let mut out = Array::<bool>::zeros_on(s.len(), &device)?;
        find_literal.launch(
            rows_config(s.len())?,
            s.offsets(),
            s.bytes(),
            &pat,
            pattern.len(),
            mode,
            &mut out,
        )?;
        self.same_rows(ColumnData::Bool(out))
    }

    /// Whether each row contains `pattern` as a literal substring (Polars'
    /// `str.contains(pattern, literal=True)`); an empty pattern is in every row.
    pub fn contains(&self, pattern: &str) -> Result<Column> {
        self.find("contains", pattern, ANYWHERE)
    }

    /// Whether each row starts with `prefix` (Polars' `str.starts_with`).
    pub fn starts_with(&self, prefix: &str) -> Result<Column> {
        self.find("starts_with", prefix, AT_START)
    }

    /// Whether each row ends with `suffix` (Polars' `str.ends_with`).
    pub fn ends_with(&self, suffix: &str) -> Result<Column> {
        self.find("ends_with", suffix, AT_END)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_each, values_of};

    #[test]
    fn find_matches_std_on_random_unicode_with_nulls() {
        for pat in [
            "",
            "a",
            "ab",
            "_",
            "ß",
            "Σς",
            "日本",
            "😀",
            "aaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            check_each(|rows, col| {
                let want = |f: &dyn Fn(&str) -> bool| -> Vec<Option<bool>> {
                    rows.iter().map(|r| r.as_deref().map(f)).collect()
                };
                let got = |c: crate::Column| values_of::<bool>(&c);
                assert_eq!(
                    got(col.str().contains(pat).unwrap()),
                    want(&|s| s.contains(pat))
                );
                assert_eq!(
                    got(col.str().starts_with(pat).unwrap()),
                    want(&|s| s.starts_with(pat))
                );
                assert_eq!(
                    got(col.str().ends_with(pat).unwrap()),
                    want(&|s| s.ends_with(pat))
                );
            });
        }
    }

    #[test]
    fn find_on_a_bool_column_names_it() {
        let c = crate::Column::from_slice_on("flag", &[true], &gpukit::Device::Cpu).unwrap();
        let e = c.str().contains("x").unwrap_err().to_string();
        assert!(
            e.contains("str.contains: column `flag` is bool, not str"),
            "{e}"
        );
    }
}
