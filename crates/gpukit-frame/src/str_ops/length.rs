//! `str.len_bytes()` and `str.len_chars()`: one thread per row reads the row's offsets (and,
//! for characters, counts the bytes that start a UTF-8 sequence). Results are `u32`, as Polars'.

use gpukit::prelude::*;

use super::launch::rows_config;
use super::StrNamespace;
use crate::column::{Column, ColumnData};
use crate::error::Result;

/// `out[i]` = the byte length of row `i`.
#[kernel]
pub(crate) fn row_len_bytes(offsets: &[i64], out: &mut [u32]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = (offsets[i + 1] - offsets[i]) as u32;
    }
}

/// `out[i]` = the number of code points of row `i` (bytes that are not continuation bytes).
#[kernel]
pub(crate) fn row_len_chars(offsets: &[i64], bytes: &[u8], out: &mut [u32]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let mut n: u32 = 0;
        for p in (offsets[i] as usize)..(offsets[i + 1] as usize) {
            if (bytes[p] & 0xC0) != 0x80 {
                n += 1;
            }
        }
        out[i] = n;
    }
}

impl StrNamespace<'_> {
    /// The length of each row in bytes (`u32`; null rows stay null), as Polars'
    /// `str.len_bytes()`.
    pub fn len_bytes(&self) -> Result<Column> {
        let s = self.utf8("len_bytes")?;
        let mut out = Array::<u32>::zeros_on(s.len(), &s.device())?;
        row_len_bytes.launch(rows_config(s.len())?, s.offsets(), &mut out)?;
        self.same_rows(ColumnData::UInt32(out))
    }

    /// The length of each row in Unicode code points (`u32`), as Polars' `str.len_chars()`.
    pub fn len_chars(&self) -> Result<Column> {
        let s = self.utf8("len_chars")?;
        let mut out = Array::<u32>::zeros_on(s.len(), &s.device())?;
        row_len_chars.launch(rows_config(s.len())?, s.offsets(), s.bytes(), &mut out)?;
        self.same_rows(ColumnData::UInt32(out))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_each, random_column, rows_of};
    use gpukit::Device;

    #[test]
    fn lengths_match_std_on_random_unicode_with_nulls() {
        check_each(|rows, col| {
            let b = col.str().len_bytes().unwrap();
            let c = col.str().len_chars().unwrap();
            let want_b: Vec<Option<u32>> = rows
                .iter()
                .map(|r| r.as_ref().map(|s| s.len() as u32))
                .collect();
            let want_c: Vec<Option<u32>> = rows
                .iter()
                .map(|r| r.as_ref().map(|s| s.chars().count() as u32))
                .collect();
            assert_eq!(super::super::testing::values_of::<u32>(&b), want_b);
            assert_eq!(super::super::testing::values_of::<u32>(&c), want_c);
            assert_eq!(b.name(), col.name());
        });
        let col = random_column(3, 0, &Device::Cpu);
        assert_eq!(rows_of(&col).len(), 0);
    }

    #[test]
    fn a_numeric_column_is_a_type_error_naming_it() {
        let col = gpukit_frame_col();
        let e = col.str().len_chars().unwrap_err().to_string();
        assert!(
            e.contains("str.len_chars: column `requests` is i64, not str"),
            "{e}"
        );
    }

    fn gpukit_frame_col() -> crate::Column {
        crate::Column::from_slice_on("requests", &[1i64, 2], &Device::Cpu).unwrap()
    }
}
