//! `str.to_uppercase()` and `str.to_lowercase()`: two passes of one kernel (output lengths, then
//! bytes after the scan), one thread per row.
//!
//! ASCII bytes take a fast path. Other code points are decoded and mapped through tables
//! (the generated `case_table` module) that cover **U+0000–U+017F** (ASCII, Latin-1 Supplement,
//! Latin Extended-A) and **U+0300–U+04FF** (combining marks, Greek and Coptic, Cyrillic),
//! with exactly the mappings of Rust's `str::to_uppercase`/`str::to_lowercase` there,
//! including the ones that change the length (`ß` → `SS`, `ŉ` → `ʼN`, `ΐ` → `Ϊ́`, `İ` → `i̇`,
//! `ı` → `I`) and the final sigma (`Σ` lowercases to `ς` at the end of a word, judged over
//! the same ranges). Code points outside those ranges (Latin Extended-B, Armenian, Georgian,
//! Cherokee, Latin Extended Additional, Greek Extended, fullwidth forms, Deseret, ...) are
//! copied unchanged, and count as neither cased nor case-ignorable for the final sigma.

use gpukit::prelude::*;

use super::case_table::*;
use super::launch::{offsets_from_lengths, rows_config};
use super::utf8::*;
use super::StrNamespace;
use crate::column::{Column, ColumnData};
use crate::error::Result;
use crate::strings::Utf8Data;

/// Maps the case of every row: `upper` 1 for uppercase, 0 for lowercase. With `write` 0 it
/// stores each row's output length in `lens`; with `write` 1 it writes the bytes of row `i` at
/// `out_offsets[i]` in `out`.
#[kernel]
pub(crate) fn case_map(
    offsets: &[i64],
    bytes: &[u8],
    upper: u32,
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
        let mut p = a;
        while p < b {
            let b0 = bytes[p] as u32;
            if b0 < 0x80 {
                let mut o = b0;
                if upper == 1 {
                    if b0 >= 0x61 && b0 <= 0x7A {
                        o = b0 - 32;
                    }
                } else if b0 >= 0x41 && b0 <= 0x5A {
                    o = b0 + 32;
                }
                if write == 1 {
                    out[q] = o as u8;
                }
                q += 1;
                p += 1;
            } else {
                let w = seq_len(b0);
                let mut c = lead_bits(b0, w);
                for k in 1..w {
                    c = (c << 6) | ((bytes[p + k] as u32) & 0x3F);
                }
                let mut c0: u32 = 0;
                let mut c1: u32 = 0;
                let mut c2: u32 = 0;
                if upper == 1 {
                    c0 = upper_first(c);
                    c1 = upper_extra(c, 1);
                    c2 = upper_extra(c, 2);
                } else {
                    c0 = lower_first(c);
                    c1 = lower_extra(c, 1);
                    c2 = lower_extra(c, 2);
                    if c == 0x03A3 {
                        // Final sigma: a cased letter before (skipping case-ignorables) and
                        // none after.
                        let mut before = false;
                        let mut r = p;
                        let mut looking = true;
                        while looking && r > a {
                            let mut s = r - 1;
                            while s > a && is_cont(bytes[s] as u32) {
                                s -= 1;
                            }
                            let lb = bytes[s] as u32;
                            let lw = seq_len(lb);
                            let mut d = lead_bits(lb, lw);
                            for k in 1..lw {
                                d = (d << 6) | ((bytes[s + k] as u32) & 0x3F);
                            }
                            if !is_case_ignorable(d) {
                                before = is_cased(d);
                                looking = false;
                            }
                            r = s;
                        }
                        let mut after = false;
                        let mut r2 = p + w;
                        looking = true;
                        while looking && r2 < b {
                            let lb = bytes[r2] as u32;
                            let lw = seq_len(lb);
                            let mut d = lead_bits(lb, lw);
                            for k in 1..lw {
                                d = (d << 6) | ((bytes[r2 + k] as u32) & 0x3F);
                            }
                            if !is_case_ignorable(d) {
                                after = is_cased(d);
                                looking = false;
                            }
                            r2 += lw;
                        }
                        if before && !after {
                            c0 = 0x03C2;
                        }
                    }
                }
                for j in 0..3 {
                    let cp = if j == 0 {
                        c0
                    } else if j == 1 {
                        c1
                    } else {
                        c2
                    };
                    if j == 0 || cp != 0 {
                        let m = enc_len(cp);
                        if write == 1 {
                            for k in 0..m {
                                out[q + k] = enc_byte(cp, m, k);
                            }
                        }
                        q += m;
                    }
                }
                p += w;
            }
        }
        if write == 0 {
            lens[i] = q as i64;
        }
    }
}

impl StrNamespace<'_> {
    fn map_case(&self, op: &str, upper: u32) -> Result<Column> {
        let s = self.utf8(op)?;
        let device = s.device();
        let n = s.len();
        let config = rows_config(n)?;
        let mut lens = Array::<i64>::zeros_on(n.max(1), &device)?;
        let dummy_offsets = Array::<i64>::zeros_on(1, &device)?;
        let mut dummy_out = Array::<u8>::zeros_on(1, &device)?;
        case_map.launch(
            config,
            s.offsets(),
            s.bytes(),
            upper,
            0,
            &mut lens,
            &dummy_offsets,
            &mut dummy_out,
        )?;
        let lens = if n == 0 {
            Array::<i64>::zeros_on(0, &device)?
        } else {
            lens
        };
        let (offsets, total) = offsets_from_lengths(&lens)?;
        let mut out = Array::<u8>::zeros_on(total.max(1), &device)?;
        case_map.launch(
            config,
            s.offsets(),
            s.bytes(),
            upper,
            1,
            &mut lens.clone(),
            &offsets,
            &mut out,
        )?;
        let out = if total == 0 {
            Array::<u8>::zeros_on(0, &device)?
        } else {
            out
        };
        self.same_rows(ColumnData::Utf8(Utf8Data::from_parts_unchecked(
            offsets, out,
        )))
    }

    /// Every row in uppercase, as Polars' `str.to_uppercase()` (Rust's `str::to_uppercase`
    /// over the ranges the [module documentation](self) lists; other code points unchanged).
    pub fn to_uppercase(&self) -> Result<Column> {
        self.map_case("to_uppercase", 1)
    }

    /// Every row in lowercase, as Polars' `str.to_lowercase()` (Rust's `str::to_lowercase`,
    /// final sigma included, over the ranges the [module documentation](self) lists).
    pub fn to_lowercase(&self) -> Result<Column> {
        self.map_case("to_lowercase", 0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::case_table::*;
    use super::super::testing::{check_each, rows_of};
    use crate::Column;
    use gpukit::Device;

    fn covered(c: u32) -> bool {
        c <= 0x17F || (0x300..=0x4FF).contains(&c)
    }

    #[test]
    fn tables_agree_with_std_on_every_covered_code_point() {
        for c in (0u32..0x500)
            .filter(|&c| covered(c))
            .filter_map(char::from_u32)
        {
            let cp = c as u32;
            for (upper, want) in [
                (true, c.to_uppercase().collect::<Vec<char>>()),
                (false, c.to_lowercase().collect::<Vec<char>>()),
            ] {
                let (first, extra) = if upper {
                    (upper_first(cp), [upper_extra(cp, 1), upper_extra(cp, 2)])
                } else {
                    (lower_first(cp), [lower_extra(cp, 1), lower_extra(cp, 2)])
                };
                let got: Vec<char> = std::iter::once(first)
                    .chain(extra.into_iter().filter(|&x| x != 0))
                    .map(|x| char::from_u32(x).unwrap())
                    .collect();
                assert_eq!(got, want, "{c:?} (U+{cp:04X}) upper={upper}");
            }
            assert_eq!(is_cased(cp), c.is_lowercase() || c.is_uppercase(), "{c:?}");
        }
        assert_eq!(
            upper_first(0x0180),
            0x0180,
            "Latin Extended-B is not mapped"
        );
    }

    #[test]
    fn case_mapping_matches_std_on_random_unicode_with_nulls() {
        check_each(|rows, col| {
            let up = rows_of(&col.str().to_uppercase().unwrap());
            let low = rows_of(&col.str().to_lowercase().unwrap());
            let want_up: Vec<Option<String>> = rows
                .iter()
                .map(|r| r.as_ref().map(|s| s.to_uppercase()))
                .collect();
            let want_low: Vec<Option<String>> = rows
                .iter()
                .map(|r| r.as_ref().map(|s| s.to_lowercase()))
                .collect();
            assert_eq!(up, want_up);
            assert_eq!(low, want_low);
        });
    }

    #[test]
    fn every_covered_code_point_in_context_matches_std() {
        // Each covered character alone, between letters, and after a capital sigma (which
        // exercises the final-sigma rule with every neighbour).
        let mut rows = Vec::new();
        for c in (0u32..0x500)
            .filter(|&c| covered(c))
            .filter_map(char::from_u32)
        {
            rows.push(format!("{c}"));
            rows.push(format!("a{c}Σ"));
            rows.push(format!("AΣ{c}"));
            rows.push(format!("AΣ{c}b"));
            rows.push(format!("{c}Σ {c}"));
        }
        let col = Column::from_strs_on("s", &rows, &Device::Cpu).unwrap();
        let up = rows_of(&col.str().to_uppercase().unwrap());
        let low = rows_of(&col.str().to_lowercase().unwrap());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(up[i].as_deref(), Some(r.to_uppercase().as_str()), "{r:?}");
            assert_eq!(low[i].as_deref(), Some(r.to_lowercase().as_str()), "{r:?}");
        }
    }

    #[test]
    fn uncovered_code_points_are_copied() {
        let col = Column::from_strs_on("s", &["ƀ ǅ ᾳ Ａ a"], &Device::Cpu).unwrap();
        assert_eq!(
            rows_of(&col.str().to_uppercase().unwrap()),
            [Some("ƀ ǅ ᾳ Ａ A".to_string())]
        );
    }
}
