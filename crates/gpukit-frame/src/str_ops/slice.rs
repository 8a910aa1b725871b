//! `str.slice(offset, length)` in characters, as Polars': a kernel finds, per row, the byte
//! range of the characters `offset .. offset + length` (a negative `offset` counts from the
//! row's end; the range is clipped to the row, as Python's `s[start:start + length]` with
//! `start` taken before clipping), and the shared range-copy kernels build the strings.

use gpukit::prelude::*;

use super::launch::{rows_config, substrings};
use super::StrNamespace;
use crate::column::{Column, ColumnData};
use crate::error::Result;

/// For every row: the byte range of characters `[offset, offset + length)` (`to_end` 1: to the
/// end of the row), clipped to the row.
#[kernel]
pub(crate) fn char_range(
    offsets: &[i64],
    bytes: &[u8],
    offset: i64,
    length: i64,
    to_end: u32,
    starts: &mut [i64],
    ends: &mut [i64],
) {
    for i in (grid(1)..starts.len()).step_by(gridsize(1)) {
        let a = offsets[i] as usize;
        let b = offsets[i + 1] as usize;
        let mut chars: i64 = 0;
        for p in a..b {
            if (bytes[p] & 0xC0) != 0x80 {
                chars += 1;
            }
        }
        let mut first = offset;
        if offset < 0 {
            first = chars + offset;
        }
        let mut last = chars;
        if to_end == 0 {
            last = first + length;
        }
        first = first.max(0).min(chars);
        last = last.max(first).min(chars);
        // Byte positions of characters `first` and `last`.
        let mut c: i64 = 0;
        let mut s = b;
        let mut e = b;
        for p in a..b {
            if (bytes[p] & 0xC0) != 0x80 {
                if c == first {
                    s = p;
                }
                if c == last {
                    e = p;
                }
                c += 1;
            }
        }
        starts[i] = s as i64;
        ends[i] = e as i64;
    }
}

impl StrNamespace<'_> {
    /// The characters `offset .. offset + length` of every row (`length` `None`: to the end),
    /// as Polars' `str.slice(offset, length)`: a negative `offset` counts from the end, and the
    /// range is clipped to the row (`"abc"`, offset -5, length 3 gives `"a"`).
    pub fn slice(&self, offset: i64, length: Option<usize>) -> Result<Column> {
        let s = self.utf8("slice")?;
        let n = s.len();
        let device = s.device();
        let mut starts = Array::<i64>::zeros_on(n, &device)?;
        let mut ends = Array::<i64>::zeros_on(n, &device)?;
        if n > 0 {
            let len = length.map_or(0, |l| l.min(i64::MAX as usize / 2) as i64);
            char_range.launch(
                rows_config(n)?,
                s.offsets(),
                s.bytes(),
                offset.max(i64::MIN / 2),
                len,
                u32::from(length.is_none()),
                &mut starts,
                &mut ends,
            )?;
        }
        self.same_rows(ColumnData::Utf8(substrings(s.bytes(), &starts, &ends)?))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_each, rows_of};

    /// Python's `s[start:start + length]` on characters, `start` from the end when negative.
    fn host_slice(s: &str, offset: i64, length: Option<usize>) -> String {
        let chars: Vec<char> = s.chars().collect();
        let c = chars.len() as i64;
        let first = if offset < 0 { c + offset } else { offset };
        let last = length.map_or(c, |l| first.saturating_add(l.min(i64::MAX as usize) as i64));
        let (first, last) = (first.clamp(0, c), last.clamp(0, c));
        if last <= first {
            return String::new();
        }
        chars[first as usize..last as usize].iter().collect()
    }

    #[test]
    fn slices_match_a_host_slice_on_random_unicode_with_nulls() {
        for (offset, length) in [
            (0, Some(3)),
            (2, None),
            (-3, Some(2)),
            (-20, Some(22)),
            (5, Some(0)),
            (100, None),
            (-1, None),
            (0, Some(usize::MAX)),
        ] {
            check_each(|rows, col| {
                let want: Vec<Option<String>> = rows
                    .iter()
                    .map(|r| r.as_ref().map(|s| host_slice(s, offset, length)))
                    .collect();
                assert_eq!(
                    rows_of(&col.str().slice(offset, length).unwrap()),
                    want,
                    "{offset} {length:?}"
                );
            });
        }
        assert_eq!(host_slice("abc", -5, Some(3)), "a");
    }
}
