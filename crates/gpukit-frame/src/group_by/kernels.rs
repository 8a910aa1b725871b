//! The device kernels of grouping and aggregation, written in Rust with `#[kernel]` (CUDA on a
//! GPU, the same bodies natively on the CPU backend). One thread per row for the row-wise
//! kernels; one thread per group for the segmented reductions, each walking its group's rows in
//! sorted (stable) order, so float sums are the same bits on every run and on both backends.
//!
//! Kernels cannot be generic, so the typed ones are stamped out per element type by
//! `typed_kernels!` (`bool` columns run as `u8`).

use gpukit::prelude::*;

/// The launch shape for one thread per item: 256 threads a block.
pub(crate) fn cfg(n: usize) -> (usize, usize) {
    (n.div_ceil(256).max(1), 256)
}

/// Arrow validity bits to one byte per row (1 = valid).
#[kernel]
pub fn gb_unpack_bits(bits: &[u8], out: &mut [u8]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = (bits[i / 8] >> (i % 8)) & 1;
    }
}

/// One byte per row (nonzero = valid) to Arrow validity bits; one thread per output byte.
#[kernel]
pub fn gb_pack_bits(valid: &[u8], bits: &mut [u8]) {
    let b = grid(1);
    if b < bits.len() {
        let mut v = 0u8;
        for k in 0..8 {
            let r = b * 8 + k;
            if r < valid.len() {
                if valid[r] != 0 {
                    v |= 1u8 << k;
                }
            }
        }
        bits[b] = v;
    }
}

/// `out[idx[i]] = vals[i]` (a permutation's inverse applied).
#[kernel]
pub fn gb_scatter_u64(vals: &[u64], idx: &[i64], out: &mut [u64]) {
    let i = grid(1);
    if i < vals.len() {
        out[idx[i] as usize] = vals[i];
    }
}

/// Dense codes with nulls first: `valid ? code + 1 : 0`.
#[kernel]
pub fn gb_null_code(codes: &[u64], valid: &[u8], out: &mut [u64]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = if valid[i] != 0 { codes[i] + 1 } else { 0 };
    }
}

/// Two dense codes as one ordered code: `a * db + b`.
#[kernel]
pub fn gb_combine(a: &[u64], b: &[u64], db: u64, out: &mut [u64]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = a[i] * db + b[i];
    }
}

/// Segment starts from codes in sorted order: `starts[c]` = first position of code `c`, and
/// `starts[last + 1]` = the number of positions.
#[kernel]
pub fn gb_seg_starts(sorted_codes: &[u64], starts: &mut [i64]) {
    let i = grid(1);
    let n = sorted_codes.len();
    if i < n {
        let c = sorted_codes[i] as usize;
        if i == 0 {
            starts[c] = 0;
        } else if sorted_codes[i - 1] != sorted_codes[i] {
            starts[c] = i as i64;
        }
        if i + 1 == n {
            starts[c + 1] = n as i64;
        }
    }
}

/// `out[g] = perm[pos[g]]`: the row behind a sorted position (`out` may be shorter than `pos`).
#[kernel]
pub fn gb_rows_at(perm: &[i64], pos: &[i64], out: &mut [i64]) {
    let g = grid(1);
    if g < out.len() {
        out[g] = perm[pos[g] as usize];
    }
}

/// Rows per group: `starts[g + 1] - starts[g]` (Polars' `len`, `u32`).
#[kernel]
pub fn gb_seg_len(starts: &[i64], out: &mut [u32]) {
    let g = grid(1);
    if g < out.len() {
        out[g] = (starts[g + 1] - starts[g]) as u32;
    }
}

/// Valid rows per group (Polars' `count`, `u32`); `valid` in sorted order.
#[kernel]
pub fn gb_seg_count(valid: &[u8], starts: &[i64], out: &mut [u32]) {
    let g = grid(1);
    if g < out.len() {
        let mut n = 0u32;
        for p in (starts[g] as usize)..(starts[g + 1] as usize) {
            if valid[p] != 0 {
                n += 1;
            }
        }
        out[g] = n;
    }
}

/// Distinct pairs per group: positions sorted by (group, value) code; each first position of a
/// code adds one to its group (integer atomics: the total does not depend on the order).
#[kernel]
pub fn gb_count_firsts(sorted_codes: &[u64], group_of: &[u64], out: &mut [u32]) {
    let i = grid(1);
    if i < sorted_codes.len() {
        let first = if i == 0 {
            true
        } else {
            sorted_codes[i - 1] != sorted_codes[i]
        };
        if first {
            atomic_add(&mut out[group_of[i] as usize], 1u32);
        }
    }
}

/// `out[g] = 1` where `cnt[g] >= k`, else 0.
#[kernel]
pub fn gb_at_least(cnt: &[i64], k: i64, out: &mut [u8]) {
    let g = grid(1);
    if g < out.len() {
        out[g] = if cnt[g] >= k { 1 } else { 0 };
    }
}

/// A key that sorts counts in descending order: `u32::MAX - cnt`.
#[kernel]
pub fn gb_desc_key(cnt: &[u32], out: &mut [u64]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = (4294967295u32 - cnt[i]) as u64;
    }
}

/// Piece boundaries over sorted positions: `flags[p] = 1` where a piece starts at `p > 0`
/// (a group starts there, or `p` is a multiple of `c`).
#[kernel]
pub fn gb_mark_pieces(sorted_groups: &[u64], c: i64, flags: &mut [u64]) {
    let p = grid(1);
    if p < flags.len() {
        let mut f = 0u64;
        if p > 0 {
            if (p as i64) % c == 0 || sorted_groups[p - 1] != sorted_groups[p] {
                f = 1;
            }
        }
        flags[p] = f;
    }
}

/// `out[g]` = the first piece of group `g` (`piece_of[starts[g]]`), `out[groups] = pieces`.
#[kernel]
pub fn gb_group_pieces(starts: &[i64], piece_of: &[u64], pieces: i64, out: &mut [i64]) {
    let g = grid(1);
    if g < out.len() {
        if g + 1 == out.len() {
            out[g] = pieces;
        } else {
            out[g] = piece_of[starts[g] as usize] as i64;
        }
    }
}

/// The group of each piece: `out[k] = sorted_groups[piece_starts[k]]`.
#[kernel]
pub fn gb_piece_group(piece_starts: &[i64], sorted_groups: &[u64], out: &mut [u64]) {
    let k = grid(1);
    if k < out.len() {
        out[k] = sorted_groups[piece_starts[k] as usize];
    }
}

/// `mean[g] = sum[g] / cnt[g]` (0 where `cnt[g] == 0`).
#[kernel]
pub fn gb_mean(sum: &[f64], cnt: &[i64], mean: &mut [f64]) {
    let g = grid(1);
    if g < mean.len() {
        mean[g] = if cnt[g] > 0 {
            sum[g] / (cnt[g] as f64)
        } else {
            0.0
        };
    }
}

/// `std[g] = sqrt(q[g] / (cnt[g] - 1))` (0 where `cnt[g] < 2`).
#[kernel]
pub fn gb_std(q: &[f64], cnt: &[i64], std: &mut [f64]) {
    let g = grid(1);
    if g < std.len() {
        std[g] = if cnt[g] > 1 {
            (q[g] / ((cnt[g] - 1) as f64)).sqrt()
        } else {
            0.0
        };
    }
}

/// Each row's string length in bytes.
#[kernel]
pub fn gb_str_lens(offsets: &[i64], out: &mut [i64]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = offsets[i + 1] - offsets[i];
    }
}

/// One round of ordering strings by their bytes: the row's code so far in the high bits, then
/// `k` bytes from byte `pos` (big-endian, 0 past the end), then 4 bits saying how many of the
/// row's bytes remain, capped at `k + 1` (so a string that ends sorts before its extensions).
#[kernel]
pub fn gb_str_chunk(
    offsets: &[i64],
    bytes: &[u8],
    codes: &[u64],
    pos: i64,
    k: i64,
    out: &mut [u64],
) {
    let i = grid(1);
    if i < out.len() {
        let start = offsets[i];
        let len = offsets[i + 1] - start;
        let mut key = codes[i];
        for j in 0..k {
            let at = pos + j;
            let mut byte = 0u64;
            if at < len {
                byte = bytes[(start + at) as usize] as u64;
            }
            key = (key << 8) | byte;
        }
        let mut left = len - pos;
        if left < 0 {
            left = 0;
        }
        if left > k + 1 {
            left = k + 1;
        }
        out[i] = (key << 4) | (left as u64);
    }
}

/// Byte lengths of the rows `idx` of a string column.
#[kernel]
pub fn gb_take_str_lens(offsets: &[i64], idx: &[i64], out: &mut [i64]) {
    let i = grid(1);
    if i < out.len() {
        let r = idx[i] as usize;
        out[i] = offsets[r + 1] - offsets[r];
    }
}

/// Offsets from inclusive sums of lengths: `out[0] = 0`, `out[i + 1] = sums[i]`.
#[kernel]
pub fn gb_offsets_from_sums(sums: &[i64], out: &mut [i64]) {
    let i = grid(1);
    if i < sums.len() {
        out[i + 1] = sums[i];
        if i == 0 {
            out[0] = 0;
        }
    }
}

/// Copies the bytes of rows `idx` of a string column to their new offsets; one thread a row.
#[kernel]
pub fn gb_take_str_bytes(
    offsets: &[i64],
    bytes: &[u8],
    idx: &[i64],
    new_offsets: &[i64],
    out: &mut [u8],
) {
    let i = grid(1);
    if i < idx.len() {
        let r = idx[i] as usize;
        let from = offsets[r];
        let n = offsets[r + 1] - from;
        let to = new_offsets[i];
        for j in 0..n {
            out[(to + j) as usize] = bytes[(from + j) as usize];
        }
    }
}

/// Kernels stamped per element type: gather, adjacent-difference flags, segmented sum, squared
/// deviations from a group mean, and the position of a segment's minimum/maximum. The `float` arm treats
/// every NaN as one value (one group, ordered last) and skips NaN in min/max unless a group
/// holds nothing else, as Polars.
macro_rules! typed_kernels {
    (common $t:ident, $acc:ident, $gather:ident, $sum:ident, $sqdev:ident) => {
        /// Sum of squared deviations of each piece's valid values from its group's mean.
        #[kernel]
        pub fn $sqdev(
            vals: &[$t],
            valid: &[u8],
            piece_starts: &[i64],
            piece_group: &[u64],
            mean: &[f64],
            out: &mut [f64],
        ) {
            let k = grid(1);
            if k < out.len() {
                let m = mean[piece_group[k] as usize];
                let mut q = 0.0f64;
                for p in (piece_starts[k] as usize)..(piece_starts[k + 1] as usize) {
                    if valid[p] != 0 {
                        let d = vals[p] as f64 - m;
                        q += d * d;
                    }
                }
                out[k] = q;
            }
        }

        /// `out[i] = src[idx[i]]`.
        #[kernel]
        pub fn $gather(src: &[$t], idx: &[i64], out: &mut [$t]) {
            let i = grid(1);
            if i < out.len() {
                out[i] = src[idx[i] as usize];
            }
        }

        /// Sum of each segment's valid values, in position order.
        #[kernel]
        pub fn $sum(vals: &[$t], valid: &[u8], starts: &[i64], out: &mut [$acc]) {
            let g = grid(1);
            if g < out.len() {
                let mut s = 0 as $acc;
                for p in (starts[g] as usize)..(starts[g + 1] as usize) {
                    if valid[p] != 0 {
                        s += vals[p] as $acc;
                    }
                }
                out[g] = s;
            }
        }
    };
    (int $t:ident, $acc:ident, $gather:ident, $differ:ident, $sum:ident, $extreme:ident, $sqdev:ident) => {
        typed_kernels!(common $t, $acc, $gather, $sum, $sqdev);

        /// `flags[i] = 1` where sorted value `i` differs from value `i - 1` (0 at 0).
        #[kernel]
        pub fn $differ(sorted: &[$t], flags: &mut [u64]) {
            let i = grid(1);
            if i < flags.len() {
                let mut f = 0u64;
                if i > 0 {
                    if sorted[i - 1] != sorted[i] {
                        f = 1;
                    }
                }
                flags[i] = f;
            }
        }

        /// Position of each segment's first minimum (`want_max == 0`) or maximum over valid
        /// values; `found[g] = 0` (position: the segment start) when none is valid.
        #[kernel]
        pub fn $extreme(
            vals: &[$t],
            valid: &[u8],
            starts: &[i64],
            want_max: u8,
            pos: &mut [i64],
            found: &mut [u8],
        ) {
            let g = grid(1);
            if g < pos.len() {
                let a = starts[g] as usize;
                let b = starts[g + 1] as usize;
                let mut best = -1i64;
                for p in a..b {
                    if valid[p] != 0 {
                        if best < 0 {
                            best = p as i64;
                        } else {
                            let v = vals[p];
                            let cur = vals[best as usize];
                            if (want_max != 0 && v > cur) || (want_max == 0 && v < cur) {
                                best = p as i64;
                            }
                        }
                    }
                }
                found[g] = if best < 0 { 0 } else { 1 };
                pos[g] = if best < 0 { a as i64 } else { best };
            }
        }
    };
    (float $t:ident, $acc:ident, $gather:ident, $differ:ident, $sum:ident, $extreme:ident, $sqdev:ident) => {
        typed_kernels!(common $t, $acc, $gather, $sum, $sqdev);

        /// `flags[i] = 1` where sorted value `i` differs from value `i - 1` (0 at 0); NaN
        /// equals NaN, -0.0 equals 0.0.
        #[kernel]
        pub fn $differ(sorted: &[$t], flags: &mut [u64]) {
            let i = grid(1);
            if i < flags.len() {
                let mut f = 0u64;
                if i > 0 {
                    let a = sorted[i - 1];
                    let b = sorted[i];
                    if a != b && !(a.is_nan() && b.is_nan()) {
                        f = 1;
                    }
                }
                flags[i] = f;
            }
        }

        /// Position of each segment's first minimum (`want_max == 0`) or maximum over valid,
        /// non-NaN values (the first NaN when a segment holds only NaN); `found[g] = 0`
        /// (position: the segment start) when none is valid.
        #[kernel]
        pub fn $extreme(
            vals: &[$t],
            valid: &[u8],
            starts: &[i64],
            want_max: u8,
            pos: &mut [i64],
            found: &mut [u8],
        ) {
            let g = grid(1);
            if g < pos.len() {
                let a = starts[g] as usize;
                let b = starts[g + 1] as usize;
                let mut best = -1i64;
                let mut nan = -1i64;
                for p in a..b {
                    if valid[p] != 0 {
                        let v = vals[p];
                        if v.is_nan() {
                            if nan < 0 {
                                nan = p as i64;
                            }
                        } else if best < 0 {
                            best = p as i64;
                        } else {
                            let cur = vals[best as usize];
                            if (want_max != 0 && v > cur) || (want_max == 0 && v < cur) {
                                best = p as i64;
                            }
                        }
                    }
                }
                if best < 0 {
                    best = nan;
                }
                found[g] = if best < 0 { 0 } else { 1 };
                pos[g] = if best < 0 { a as i64 } else { best };
            }
        }
    };
}

#[rustfmt::skip]
typed_kernels!(int u8, u32, gb_gather_u8, gb_differ_u8, gb_sum_u8, gb_extreme_u8, gb_sqdev_u8);
#[rustfmt::skip]
typed_kernels!(int i32, i64, gb_gather_i32, gb_differ_i32, gb_sum_i32, gb_extreme_i32, gb_sqdev_i32);
#[rustfmt::skip]
typed_kernels!(int i64, i64, gb_gather_i64, gb_differ_i64, gb_sum_i64, gb_extreme_i64, gb_sqdev_i64);
#[rustfmt::skip]
typed_kernels!(int u32, u64, gb_gather_u32, gb_differ_u32, gb_sum_u32, gb_extreme_u32, gb_sqdev_u32);
#[rustfmt::skip]
typed_kernels!(int u64, u64, gb_gather_u64, gb_differ_u64, gb_sum_u64, gb_extreme_u64, gb_sqdev_u64);
#[rustfmt::skip]
typed_kernels!(float f32, f64, gb_gather_f32, gb_differ_f32, gb_sum_f32, gb_extreme_f32, gb_sqdev_f32);
#[rustfmt::skip]
typed_kernels!(float f64, f64, gb_gather_f64, gb_differ_f64, gb_sum_f64, gb_extreme_f64, gb_sqdev_f64);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel's CUDA translation compiles with NVRTC (libnvrtc only, no GPU; skipped
    /// visibly without it, a failure with `GPUKIT_REQUIRE_NVRTC=1`).
    #[test]
    fn every_kernel_compiles_with_nvrtc() {
        gpukit::testing::assert_kernels_compile(&[
            &gb_unpack_bits::INFO,
            &gb_pack_bits::INFO,
            &gb_scatter_u64::INFO,
            &gb_null_code::INFO,
            &gb_combine::INFO,
            &gb_seg_starts::INFO,
            &gb_rows_at::INFO,
            &gb_seg_len::INFO,
            &gb_seg_count::INFO,
            &gb_count_firsts::INFO,
            &gb_at_least::INFO,
            &gb_desc_key::INFO,
            &gb_mark_pieces::INFO,
            &gb_group_pieces::INFO,
            &gb_piece_group::INFO,
            &gb_mean::INFO,
            &gb_std::INFO,
            &gb_str_lens::INFO,
            &gb_str_chunk::INFO,
            &gb_take_str_lens::INFO,
            &gb_offsets_from_sums::INFO,
            &gb_take_str_bytes::INFO,
            &gb_gather_u8::INFO,
            &gb_differ_u8::INFO,
            &gb_sum_u8::INFO,
            &gb_extreme_u8::INFO,
            &gb_sqdev_u8::INFO,
            &gb_gather_i32::INFO,
            &gb_differ_i32::INFO,
            &gb_sum_i32::INFO,
            &gb_extreme_i32::INFO,
            &gb_sqdev_i32::INFO,
            &gb_gather_i64::INFO,
            &gb_differ_i64::INFO,
            &gb_sum_i64::INFO,
            &gb_extreme_i64::INFO,
            &gb_sqdev_i64::INFO,
            &gb_gather_u32::INFO,
            &gb_differ_u32::INFO,
            &gb_sum_u32::INFO,
            &gb_extreme_u32::INFO,
            &gb_sqdev_u32::INFO,
            &gb_gather_u64::INFO,
            &gb_differ_u64::INFO,
            &gb_sum_u64::INFO,
            &gb_extreme_u64::INFO,
            &gb_sqdev_u64::INFO,
            &gb_gather_f32::INFO,
            &gb_differ_f32::INFO,
            &gb_sum_f32::INFO,
            &gb_extreme_f32::INFO,
            &gb_sqdev_f32::INFO,
            &gb_gather_f64::INFO,
            &gb_differ_f64::INFO,
            &gb_sum_f64::INFO,
            &gb_extreme_f64::INFO,
            &gb_sqdev_f64::INFO,
        ]);
    }
}
