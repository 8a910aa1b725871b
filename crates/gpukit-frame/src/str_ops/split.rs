//! `str.split_part(sep, i)` and `str.split_exact(sep, n)`: a kernel finds, per row, the byte
//! range of part `i` (parts as Rust's `str::split` makes them: separators found left to right
//! without overlaps; an empty row is one empty part) and whether it exists; the shared
//! range-copy kernels build the strings. A missing part is null. A list is not a column type
//! here, so `split_exact` returns one column per part, as Polars' `str.split_exact(..)`
//! followed by `unnest`.

use gpukit::prelude::*;

use super::launch::{padded, rows_config, substrings};
use super::{nonempty, StrNamespace};
use crate::column::{Column, ColumnData};
use crate::error::Result;

/// For every row: the byte range `starts[i]..ends[i]` of part `part` when split at `sep[..m]`,
/// and `found[i]` = 1 when the row has that many parts (else an empty range and 0).
#[kernel]
pub(crate) fn find_part(
    offsets: &[i64],
    bytes: &[u8],
    sep: &[u8],
    m: usize,
    part: usize,
    starts: &mut [i64],
    ends: &mut [i64],
    found: &mut [u8],
) {
    for i in (grid(1)..starts.len()).step_by(gridsize(1)) {
        let a = offsets[i] as usize;
        let b = offsets[i + 1] as usize;
        let mut start = a;
        let mut k: usize = 0;
        let mut end = b;
        let mut p = a;
        let mut ok = true;
        // Walk separators; part k runs from `start` to the next separator (or the row's end).
        let mut searching = true;
        while searching {
            let mut next = b;
            let mut q = p;
            let mut hit = false;
            while !hit && q + m <= b {
                let mut j = 0;
                while j < m && bytes[q + j] == sep[j] {
                    j += 1;
                }
                if j == m {
                    hit = true;
                    next = q;
                } else {
                    q += 1;
                }
            }
            if k == part {
                end = next;
                searching = false;
            } else if hit {
                k += 1;
                start = next + m;
                p = start;
            } else {
                ok = false;
                searching = false;
            }
        }
        if ok {
            starts[i] = start as i64;
            ends[i] = end as i64;
            found[i] = 1;
        } else {
            starts[i] = a as i64;
            ends[i] = a as i64;
            found[i] = 0;
        }
    }
}

impl StrNamespace<'_> {
    /// Part `index` (from 0) of every row split at the literal `sep`, null where the row has
    /// fewer parts (as field `index` of Polars' `str.split_exact(sep, n)`). The column keeps
    /// its name. An empty `sep` is an error.
    pub fn split_part(&self, sep: &str, index: usize) -> Result<Column> {
        let s = self.utf8("split_part")?;
        nonempty("split_part", "separator", sep, self.column)?;
        let device = s.device();
        let n = s.len();
        let sep_a = padded(sep.as_bytes(), &device)?;
        let mut starts = Array::<i64>::zeros_on(n, &device)?;
        let mut ends = Array::<i64>::zeros_on(n, &device)?;
        let mut found = Array::<u8>::zeros_on(n, &device)?;
        if n > 0 {
            find_part.launch(
                rows_config(n)?,
                s.offsets(),
                s.bytes(),
                &sep_a,
                sep.len(),
                index,
                &mut starts,
                &mut ends,
                &mut found,
            )?;
        }
        let data = substrings(s.bytes(), &starts, &ends)?;
        let validity = crate::validity::from_flags(&found, self.column.validity())?;
        Column::new(self.column.name(), ColumnData::Utf8(data), validity)
    }

    /// The first `n + 1` parts of every row split at `sep`, as `n + 1` string columns named
    /// `field_0` .. `field_n` (Polars' `str.split_exact(sep, n).struct.unnest()`); parts a row
    /// lacks are null, parts after the `n + 1`-th are dropped.
    pub fn split_exact(&self, sep: &str, n: usize) -> Result<Vec<Column>> {
        self.utf8("split_exact")?;
        nonempty("split_exact", "separator", sep, self.column)?;
        (0..=n)
            .map(|i| Ok(self.split_part(sep, i)?.renamed(format!("field_{i}"))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_each, rows_of};

    #[test]
    fn parts_match_std_split_on_random_unicode_with_nulls() {
        for sep in ["_", "a", "aa", "Σ", "😀", " :"] {
            check_each(|rows, col| {
                let fields = col.str().split_exact(sep, 3).unwrap();
                assert_eq!(fields.len(), 4);
                for (i, f) in fields.iter().enumerate() {
                    assert_eq!(f.name(), format!("field_{i}"));
                    let want: Vec<Option<String>> = rows
                        .iter()
                        .map(|r| {
                            r.as_ref()
                                .and_then(|s| s.split(sep).nth(i).map(str::to_string))
                        })
                        .collect();
                    assert_eq!(rows_of(f), want, "sep {sep:?} part {i}");
                }
            });
        }
    }

    #[test]
    fn split_errors_name_the_column() {
        let cpu = gpukit::Device::Cpu;
        let col = crate::Column::from_strs_on("page", &["a_b"], &cpu).unwrap();
        let e = col.str().split_exact("", 1).unwrap_err().to_string();
        assert!(
            e.contains("str.split_exact on column `page`: the separator"),
            "{e}"
        );
        let num = crate::Column::from_slice_on("bytes", &[1.5f64], &cpu).unwrap();
        let e = num.str().split_part("_", 0).unwrap_err().to_string();
        assert!(
            e.contains("str.split_part: column `bytes` is f64, not str"),
            "{e}"
        );
    }
}
