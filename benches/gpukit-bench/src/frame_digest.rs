//! Order-sensitive digests of frame results, computed identically here and in
//! benches/polars_twin.py (`digest_ints`, `digest_strings`), so the two sides' results can be
//! compared in full across languages without writing them out.
//!
//! All arithmetic is on `u64` and wraps (mod 2^64):
//! - **Integers** (also booleans as 0/1, and floats quantised to integers by the caller): row `i`
//!   contributes `(2i + 1) * c_i`, where `c_i` is the value's two's-complement bits, or
//!   [`NULL_CODE`] for a null. Odd multipliers are invertible mod 2^64, so changing any one row
//!   always changes the digest; moving a value to another row changes it unless the values
//!   are equal.
//! - **Strings**: each row's UTF-8 bytes followed by one `\n` (a null row: only the `\n`),
//!   concatenated, padded with zero bytes to a multiple of 8 and read as little-endian `u64`
//!   words `w_k`; the digest is the sum of `(2k + 1) * w_k`. With the row count and the total
//!   bytes beside it, it covers every byte and the row boundaries (the generated titles
//!   contain no `\n`).

/// The code of a null row in an integer digest (a 64-bit golden-ratio constant).
pub const NULL_CODE: u64 = 0x9E37_79B9_7F4A_7C15;

/// The digest of integer rows: `valid[i] == false` marks a null (`valid` empty: no nulls).
pub fn digest_ints(values: &[i64], valid: &[bool]) -> u64 {
    let mut d = 0u64;
    for (i, &v) in values.iter().enumerate() {
        let c = if valid.is_empty() || valid[i] {
            v as u64
        } else {
            NULL_CODE
        };
        d = d.wrapping_add((2 * i as u64 + 1).wrapping_mul(c));
    }
    d
}

/// The digest of string rows given as Arrow offsets and bytes (`offsets.len() == rows + 1`),
/// nulls where `valid[i] == false` (empty: no nulls). Returns `(digest, bytes hashed)`.
pub fn digest_strings(offsets: &[i64], bytes: &[u8], valid: &[bool]) -> (u64, u64) {
    let mut acc = WordAcc::default();
    for i in 0..offsets.len().saturating_sub(1) {
        if valid.is_empty() || valid[i] {
            let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
            acc.push_all(&bytes[a..b]);
        }
        acc.push_all(b"\n");
    }
    let total = acc.total;
    (acc.finish(), total)
}

/// Accumulates bytes into little-endian words and the weighted word sum.
#[derive(Default)]
struct WordAcc {
    word: u64,
    fill: u32,
    k: u64,
    sum: u64,
    total: u64,
}

impl WordAcc {
    fn push_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.word |= (b as u64) << (8 * self.fill);
            self.fill += 1;
            self.total += 1;
            if self.fill == 8 {
                self.flush();
            }
        }
    }

    fn flush(&mut self) {
        self.sum = self
            .sum
            .wrapping_add((2 * self.k + 1).wrapping_mul(self.word));
        self.k += 1;
        self.word = 0;
        self.fill = 0;
    }

    fn finish(mut self) -> u64 {
        if self.fill > 0 {
            self.flush();
        }
        self.sum
    }
}

/// A float quantised for [`digest_ints`]: `round(v * scale)` (half away from zero), exact
/// where `v * scale` is within a few ulps of an integer (the rolling mean of integers times
/// its window is the window's integer sum).
pub fn quantise(v: f64, scale: f64) -> i64 {
    (v * scale).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    // The same literals and expected values are in benches/test_polars_twin.py.
    #[test]
    fn integer_digest_matches_the_shared_example() {
        let d = digest_ints(&[3, -1, 0, 7], &[true, true, false, true]);
        // 1*3 + 3*(2^64-1) + 5*NULL_CODE + 7*7 mod 2^64
        assert_eq!(d, 1663341875487337626);
        assert_eq!(digest_ints(&[], &[]), 0);
        assert_eq!(digest_ints(&[5], &[]), 5);
    }

    #[test]
    fn string_digest_matches_the_shared_example() {
        let rows = ["ab", "Zürich", "", "東京"];
        let mut offsets = vec![0i64];
        let mut bytes = Vec::new();
        for r in rows {
            bytes.extend_from_slice(r.as_bytes());
            offsets.push(bytes.len() as i64);
        }
        let (d, n) = digest_strings(&offsets, &bytes, &[true, true, false, true]);
        assert_eq!(n, 3 + 8 + 1 + 7);
        assert_eq!(d, 1695489216003111724);
    }

    #[test]
    fn digests_see_order_and_content() {
        assert_ne!(digest_ints(&[1, 2], &[]), digest_ints(&[2, 1], &[]));
        let (a, _) = digest_strings(&[0, 1, 2], b"ab", &[]);
        let (b, _) = digest_strings(&[0, 1, 2], b"ba", &[]);
        assert_ne!(a, b);
        // a row boundary moved: "a","bc" vs "ab","c"
        let (c, _) = digest_strings(&[0, 1, 3], b"abc", &[]);
        let (d, _) = digest_strings(&[0, 2, 3], b"abc", &[]);
        assert_ne!(c, d);
        assert_eq!(quantise(12.345_000_000_000_1, 100.0), 1235);
        assert_eq!(quantise(-0.5, 1.0), -1);
    }
}
