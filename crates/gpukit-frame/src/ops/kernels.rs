//! The device kernels of the row operations (take, filter, compare, sort, join), written in
//! Rust with `#[kernel]`: each runs as CUDA on a GPU and as its native twin on the CPU backend.
//! Every kernel is a grid-stride loop, so any grid covers any length; [`grid_for`] picks one.
//!
//! Why this file is long: it holds every row kernel (a few lines each) in one place, so that
//! one test compiles them all with NVRTC.
//!
//! Conventions: a row index of `-1` in an index array means "no row" (a null row of a left
//! join); sort keys are `u64` whose unsigned order is the order wanted (see `sort.rs`).

use gpukit::prelude::*;

/// Threads per block of every launch here.
pub(crate) const THREADS: usize = 256;

/// `(blocks, threads)` for a grid-stride loop over `n` items (at least one block).
pub(crate) fn grid_for(n: usize) -> (u32, u32) {
    let blocks = n.div_ceil(THREADS).clamp(1, 8192);
    (blocks as u32, THREADS as u32)
}

macro_rules! gather_kernel {
    ($name:ident, $t:ident, $zero:literal) => {
        /// `out[i] = src[idx[i]]`, or zero where `idx[i] < 0`.
        #[kernel]
        pub(crate) fn $name(src: &[$t], idx: &[i64], out: &mut [$t]) {
            for i in (grid(1)..out.len()).step_by(gridsize(1)) {
                let j = idx[i];
                out[i] = if j < 0 { $zero } else { src[j as usize] };
            }
        }
    };
}

gather_kernel!(gather_bool, bool, false);
gather_kernel!(gather_i32, i32, 0);
gather_kernel!(gather_i64, i64, 0);
gather_kernel!(gather_u32, u32, 0);
gather_kernel!(gather_u64, u64, 0);
gather_kernel!(gather_f32, f32, 0.0);
gather_kernel!(gather_f64, f64, 0.0);

/// Validity of gathered rows: `out[i]` is false where `idx[i] < 0` or (when `has_bits`) the
/// bit of row `idx[i]` in the packed `bits` is 0.
#[kernel]
pub(crate) fn gather_valid(bits: &[u8], has_bits: bool, idx: &[i64], out: &mut [bool]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let j = idx[i];
        out[i] = if j < 0 {
            false
        } else if has_bits {
            let r = j as usize;
            (bits[r / 8] >> (r % 8)) & 1 == 1
        } else {
            true
        };
    }
}

/// One bool per row from packed validity bits.
#[kernel]
pub(crate) fn unpack_bits(bits: &[u8], out: &mut [bool]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = (bits[i / 8] >> (i % 8)) & 1 == 1;
    }
}

/// Packs one bool per row into bytes of eight rows, least-significant bit first.
#[kernel]
pub(crate) fn pack_bits(valid: &[bool], out: &mut [u8]) {
    let n = valid.len();
    for b in (grid(1)..out.len()).step_by(gridsize(1)) {
        let mut byte = 0u32;
        for k in 0..8 {
            let r = b * 8 + k;
            if r < n && valid[r] {
                byte = byte | (1u32 << k);
            }
        }
        out[b] = byte as u8;
    }
}

/// Byte lengths of the gathered strings (`0` where `idx[i] < 0`).
#[kernel]
pub(crate) fn str_lengths(offsets: &[i64], idx: &[i64], lens: &mut [i64]) {
    for i in (grid(1)..lens.len()).step_by(gridsize(1)) {
        let j = idx[i];
        lens[i] = if j < 0 {
            0
        } else {
            offsets[j as usize + 1] - offsets[j as usize]
        };
    }
}

/// Copies the bytes of string `idx[i]` to `out[new_offsets[i]..]`.
#[kernel]
pub(crate) fn str_copy(
    offsets: &[i64],
    bytes: &[u8],
    idx: &[i64],
    new_offsets: &[i64],
    out: &mut [u8],
) {
    for i in (grid(1)..idx.len()).step_by(gridsize(1)) {
        let j = idx[i];
        if j >= 0 {
            let start = offsets[j as usize] as usize;
            let len = (offsets[j as usize + 1] - offsets[j as usize]) as usize;
            let dst = new_offsets[i] as usize;
            for k in 0..len {
                out[dst + k] = bytes[start + k];
            }
        }
    }
}

/// Kleene AND of two masks with validity: false wins over null, null over true.
#[kernel]
pub(crate) fn kleene_and(
    a: &[bool],
    va: &[bool],
    b: &[bool],
    vb: &[bool],
    out: &mut [bool],
    valid: &mut [bool],
) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let a_false = va[i] && !a[i];
        let b_false = vb[i] && !b[i];
        if a_false || b_false {
            out[i] = false;
            valid[i] = true;
        } else {
            out[i] = true;
            valid[i] = va[i] && vb[i];
        }
    }
}

/// Kleene OR of two masks with validity: true wins over null, null over false.
#[kernel]
pub(crate) fn kleene_or(
    a: &[bool],
    va: &[bool],
    b: &[bool],
    vb: &[bool],
    out: &mut [bool],
    valid: &mut [bool],
) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let a_true = va[i] && a[i];
        let b_true = vb[i] && b[i];
        if a_true || b_true {
            out[i] = true;
            valid[i] = true;
        } else {
            out[i] = false;
            valid[i] = va[i] && vb[i];
        }
    }
}

/// `out[i] = !a[i]`.
#[kernel]
pub(crate) fn not_bools(a: &[bool], out: &mut [bool]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = !a[i];
    }
}

/// `out[i] = a[i] && b[i]` (a mask and its validity: null counts as false).
#[kernel]
pub(crate) fn and_bools(a: &[bool], b: &[bool], out: &mut [bool]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = a[i] && b[i];
    }
}

/// Maps a comparison result (`-1`, `0`, `1`) to a bool for operator `op`: 0 `==`, 1 `!=`,
/// 2 `<`, 3 `<=`, 4 `>`, 5 `>=`.
#[kernel]
pub(crate) fn cmp_to_bool(cmp: &[i32], op: i32, out: &mut [bool]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let c = cmp[i];
        out[i] = match op {
            0 => c == 0,
            1 => c != 0,
            2 => c < 0,
            3 => c <= 0,
            4 => c > 0,
            _ => c >= 0,
        };
    }
}

/// Polars' float order (every NaN equal to every NaN and above every number; -0.0 equal to
/// 0.0) of `a` and `b`: `-1`, `0` or `1`.
#[device]
pub(crate) fn float_order(a: f64, b: f64) -> i32 {
    if a.is_nan() {
        if b.is_nan() {
            0
        } else {
            1
        }
    } else if b.is_nan() || a < b {
        -1
    } else if a > b {
        1
    } else {
        0
    }
}

/// Each value against `v` in Polars' float order (see [`float_order`]).
#[kernel]
pub(crate) fn float_cmp_scalar(x: &[f64], v: f64, out: &mut [i32]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = float_order(x[i], v);
    }
}

/// Two float columns row by row in Polars' float order.
#[kernel]
pub(crate) fn float_cmp_cols(a: &[f64], b: &[f64], out: &mut [i32]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = float_order(a[i], b[i]);
    }
}

/// Bytewise comparison of each string with `needle`: `-1`, `0` or `1` (UTF-8 byte order is
/// code point order).
#[kernel]
pub(crate) fn str_cmp_scalar(
    offsets: &[i64],
    bytes: &[u8],
    needle: &[u8],
    nlen: usize,
    out: &mut [i32],
) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let start = offsets[i] as usize;
        let len = (offsets[i + 1] - offsets[i]) as usize;
        let m = len.min(nlen);
        let mut c = 0i32;
        let mut k = 0usize;
        while k < m && c == 0 {
            let x = bytes[start + k];
            let y = needle[k];
            if x < y {
                c = -1;
            } else if x > y {
                c = 1;
            }
            k += 1;
        }
        if c == 0 {
            c = if len < nlen {
                -1
            } else if len > nlen {
                1
            } else {
                0
            };
        }
        out[i] = c;
    }
}

/// Bytewise comparison of the strings of two columns row by row: `-1`, `0` or `1`.
#[kernel]
pub(crate) fn str_cmp_cols(ao: &[i64], ab: &[u8], bo: &[i64], bb: &[u8], out: &mut [i32]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let sa = ao[i] as usize;
        let la = (ao[i + 1] - ao[i]) as usize;
        let sb = bo[i] as usize;
        let lb = (bo[i + 1] - bo[i]) as usize;
        let m = la.min(lb);
        let mut c = 0i32;
        let mut k = 0usize;
        while k < m && c == 0 {
            let x = ab[sa + k];
            let y = bb[sb + k];
            if x < y {
                c = -1;
            } else if x > y {
                c = 1;
            }
            k += 1;
        }
        if c == 0 {
            c = if la < lb {
                -1
            } else if la > lb {
                1
            } else {
                0
            };
        }
        out[i] = c;
    }
}

/// Whether each string equals one of the candidate strings (`co`/`cb`, offsets and bytes).
#[kernel]
pub(crate) fn str_isin(offsets: &[i64], bytes: &[u8], co: &[i64], cb: &[u8], out: &mut [bool]) {
    let nc = co.len() - 1;
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let start = offsets[i] as usize;
        let len = (offsets[i + 1] - offsets[i]) as usize;
        let mut found = false;
        let mut c = 0usize;
        while c < nc && !found {
            let cs = co[c] as usize;
            let cl = (co[c + 1] - co[c]) as usize;
            if cl == len {
                let mut same = true;
                let mut k = 0usize;
                while k < len && same {
                    same = bytes[start + k] == cb[cs + k];
                    k += 1;
                }
                found = same;
            }
            c += 1;
        }
        out[i] = found;
    }
}

/// Whether each key is in `sorted` (ascending), by binary search.
#[kernel]
pub(crate) fn isin_u64(keys: &[u64], sorted: &[u64], out: &mut [bool]) {
    let m = sorted.len();
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let x = keys[i];
        let mut lo = 0usize;
        let mut hi = m;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if sorted[mid] < x {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        out[i] = lo < m && sorted[lo] == x;
    }
}

/// Sort keys of signed integers: the sign bit flipped (so unsigned order is signed order),
/// all bits flipped again when `desc`.
#[kernel]
pub(crate) fn key_i64(x: &[i64], desc: bool, out: &mut [u64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let k = (x[i] as u64) ^ (1u64 << 63);
        out[i] = if desc { !k } else { k };
    }
}

/// Sort keys of unsigned integers: the value, all bits flipped when `desc`.
#[kernel]
pub(crate) fn key_u64(x: &[u64], desc: bool, out: &mut [u64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = if desc { !x[i] } else { x[i] };
    }
}

/// `flag[i] = 1` where `x[i]` differs from `x[i - 1]` (row 0 always; NaN equals NaN, -0.0
/// equals 0.0); other flags kept.
#[kernel]
pub(crate) fn mark_changes_f64(x: &[f64], flag: &mut [u64]) {
    for i in (grid(1)..flag.len()).step_by(gridsize(1)) {
        if i == 0 {
            flag[i] = 1;
        } else {
            let a = x[i];
            let b = x[i - 1];
            let same = a == b || (a.is_nan() && b.is_nan());
            if !same {
                flag[i] = 1;
            }
        }
    }
}

/// Whether each value is in `sorted` (ascending numbers, no NaN), by binary search; a NaN value
/// is in when `nan_in`.
#[kernel]
pub(crate) fn isin_f64(x: &[f64], sorted: &[f64], nan_in: bool, out: &mut [bool]) {
    let m = sorted.len();
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let v = x[i];
        if v.is_nan() {
            out[i] = nan_in;
        } else {
            let mut lo = 0usize;
            let mut hi = m;
            while lo < hi {
                let mid = (lo + hi) / 2;
                if sorted[mid] < v {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            out[i] = lo < m && sorted[lo] == v;
        }
    }
}

/// `1` for a null row, `0` for a valid one (the last pass of a sort puts nulls last).
#[kernel]
pub(crate) fn null_flags(valid: &[bool], out: &mut [u64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        out[i] = if valid[i] { 0 } else { 1 };
    }
}

/// Replaces `keys[i]` by `value` where row `i` is null.
#[kernel]
pub(crate) fn fill_invalid_u64(keys: &mut [u64], valid: &[bool], value: u64) {
    for i in (grid(1)..keys.len()).step_by(gridsize(1)) {
        if !valid[i] {
            keys[i] = value;
        }
    }
}

/// The `k`-th 7-byte chunk of string `perm[i]` as a sort key: the seven bytes big-endian
/// (zeros past the end) in the high 56 bits, and in the low byte how many bytes the string has
/// from the chunk's start on, capped at 8 (8: the string goes on past this chunk).
#[kernel]
pub(crate) fn str_chunk_key(
    offsets: &[i64],
    bytes: &[u8],
    perm: &[i64],
    k: usize,
    out: &mut [u64],
) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let r = perm[i] as usize;
        let start = offsets[r] as usize;
        let len = (offsets[r + 1] - offsets[r]) as usize;
        let from = k * 7;
        let rest = if len > from { len - from } else { 0 };
        let mut key = 0u64;
        for j in 0..7 {
            let b = if j < rest {
                bytes[start + from + j] as u64
            } else {
                0u64
            };
            key = (key << 8) | b;
        }
        out[i] = (key << 8) | (rest.min(8) as u64);
    }
}

/// A 64-bit FNV-1a hash of each string's bytes, its length mixed in.
#[kernel]
pub(crate) fn str_hash(offsets: &[i64], bytes: &[u8], out: &mut [u64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let start = offsets[i] as usize;
        let end = offsets[i + 1] as usize;
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for k in start..end {
            h = (h ^ (bytes[k] as u64)).wrapping_mul(0x0000_0100_0000_01b3u64);
        }
        out[i] = h ^ ((end - start) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15u64);
    }
}

/// After sorting rows by hash (`order`, `hash` in that order): `flag[i] = 1` where row
/// `order[i]` starts a new group of equal strings (another hash, or other bytes than the row
/// before).
#[kernel]
pub(crate) fn str_group_flags(
    offsets: &[i64],
    bytes: &[u8],
    order: &[i64],
    hash: &[u64],
    flag: &mut [u64],
) {
    for i in (grid(1)..flag.len()).step_by(gridsize(1)) {
        if i == 0 || hash[i] != hash[i - 1] {
            flag[i] = 1;
        } else {
            let a = order[i] as usize;
            let b = order[i - 1] as usize;
            let sa = offsets[a] as usize;
            let la = (offsets[a + 1] - offsets[a]) as usize;
            let sb = offsets[b] as usize;
            let lb = (offsets[b + 1] - offsets[b]) as usize;
            let mut same = la == lb;
            let mut k = 0usize;
            while same && k < la {
                same = bytes[sa + k] == bytes[sb + k];
                k += 1;
            }
            flag[i] = if same { 0 } else { 1 };
        }
    }
}

/// After sorting by `(rank, key)`: `flag[i] = 1` where row `i` starts a new run of equal
/// `(rank, key)`, and `open[i] = 1` where it ties with row `i - 1` on a chunk after which both
/// strings go on (the tie is not resolved yet).
#[kernel]
pub(crate) fn str_rank_flags(rank: &[u64], key: &[u64], flag: &mut [u64], open: &mut [u64]) {
    for i in (grid(1)..flag.len()).step_by(gridsize(1)) {
        if i == 0 {
            flag[i] = 1;
            open[i] = 0;
        } else {
            let same = rank[i] == rank[i - 1] && key[i] == key[i - 1];
            flag[i] = if same { 0 } else { 1 };
            open[i] = if same && (key[i] & 255) == 8 { 1 } else { 0 };
        }
    }
}

/// `flag[i] = 1` where `keys[i]` differs from `keys[i - 1]` (row 0 always); other flags kept.
#[kernel]
pub(crate) fn mark_changes(keys: &[u64], flag: &mut [u64]) {
    for i in (grid(1)..flag.len()).step_by(gridsize(1)) {
        if i == 0 || keys[i] != keys[i - 1] {
            flag[i] = 1;
        }
    }
}

/// `out[idx[i]] = vals[i]` (a permutation's scatter).
#[kernel]
pub(crate) fn scatter_u64(vals: &[u64], idx: &[i64], out: &mut [u64]) {
    for i in (grid(1)..vals.len()).step_by(gridsize(1)) {
        out[idx[i] as usize] = vals[i];
    }
}

/// For each left key (a null key, `left_valid[i]` false, matches nothing), where its run of equal keys starts in the ascending right keys (`lo`),
/// how long the run is (`count`) and how many output rows it makes (`emit`: the count, or 1 for
/// an unmatched row of a left join when `keep_unmatched`).
#[kernel]
pub(crate) fn join_bounds(
    left: &[u64],
    left_valid: &[bool],
    right_sorted: &[u64],
    keep_unmatched: bool,
    lo_out: &mut [i64],
    count: &mut [i64],
    emit: &mut [i64],
) {
    let m = right_sorted.len();
    for i in (grid(1)..left.len()).step_by(gridsize(1)) {
        let x = left[i];
        let mut lo = 0usize;
        let mut hi = m;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if right_sorted[mid] < x {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let first = lo;
        hi = m;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if right_sorted[mid] <= x {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let c = if left_valid[i] {
            (lo - first) as i64
        } else {
            0
        };
        lo_out[i] = first as i64;
        count[i] = c;
        emit[i] = if c == 0 && keep_unmatched { 1 } else { c };
    }
}

/// Writes the `(left, right)` row pairs of each left row from `start[i]` on: its matches in
/// right order (`right_perm[lo[i]..lo[i] + count[i]]`), or `(i, -1)` for an unmatched row
/// that `emit` keeps.
#[kernel]
pub(crate) fn join_expand(
    lo: &[i64],
    count: &[i64],
    emit: &[i64],
    start: &[i64],
    right_perm: &[i64],
    left_idx: &mut [i64],
    right_idx: &mut [i64],
) {
    for i in (grid(1)..lo.len()).step_by(gridsize(1)) {
        let s = start[i] as usize;
        let c = count[i] as usize;
        if c == 0 && emit[i] == 1 {
            left_idx[s] = i as i64;
            right_idx[s] = -1;
        } else {
            let base = lo[i] as usize;
            for j in 0..c {
                left_idx[s + j] = i as i64;
                right_idx[s + j] = right_perm[base + j];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel's CUDA C++ compiles to PTX with NVRTC (no GPU needed; skipped visibly
    /// without libnvrtc, a failure with `GPUKIT_REQUIRE_NVRTC=1`).
    #[test]
    fn every_kernel_compiles_with_nvrtc() {
        let infos = [
            &gather_bool::INFO,
            &gather_i32::INFO,
            &gather_i64::INFO,
            &gather_u32::INFO,
            &gather_u64::INFO,
            &gather_f32::INFO,
            &gather_f64::INFO,
            &gather_valid::INFO,
            &unpack_bits::INFO,
            &pack_bits::INFO,
            &str_lengths::INFO,
            &str_copy::INFO,
            &kleene_and::INFO,
            &kleene_or::INFO,
            &not_bools::INFO,
            &and_bools::INFO,
            &cmp_to_bool::INFO,
            &float_cmp_scalar::INFO,
            &float_cmp_cols::INFO,
            &str_cmp_scalar::INFO,
            &str_cmp_cols::INFO,
            &str_isin::INFO,
            &isin_u64::INFO,
            &key_i64::INFO,
            &key_u64::INFO,
            &mark_changes_f64::INFO,
            &isin_f64::INFO,
            &null_flags::INFO,
            &fill_invalid_u64::INFO,
            &str_chunk_key::INFO,
            &str_rank_flags::INFO,
            &str_hash::INFO,
            &str_group_flags::INFO,
            &mark_changes::INFO,
            &scatter_u64::INFO,
            &join_bounds::INFO,
            &join_expand::INFO,
        ];
        gpukit::testing::assert_kernels_compile(&infos);
    }
}
