//! [`GroupElem`]: the element types grouping works on (`u8` for booleans, `i32`, `i64`, `u32`,
//! `u64`, `f32`, `f64`), each tied to its kernels in [`super::kernels`], and small launch
//! helpers shared by the other files. Everything here runs on the arrays' device.

use gpukit::{Array, Device, Numeric};

use super::kernels::*;
use crate::error::Result;

/// Launches `$k` over `$n` items (nothing for 0 items).
macro_rules! go {
    ($k:ident, $n:expr, $($arg:expr),* $(,)?) => {{
        let n: usize = $n;
        if n > 0 {
            $k.launch(cfg(n), $($arg),*)?;
        }
    }};
}
pub(crate) use go;

/// An element type with grouping kernels.
pub(crate) trait GroupElem: Numeric {
    /// The type sums accumulate in and are returned as (`i64`, `u64`, `u32` for booleans, `f64`).
    type Acc: GroupElem;
    /// `src[idx[i]]` for every `i`.
    fn gather(src: &Array<Self>, idx: &Array<i64>) -> Result<Array<Self>>;
    /// 1 where sorted value `i` differs from value `i - 1`.
    fn differ(sorted: &Array<Self>) -> Result<Array<u64>>;
    /// Sum of valid values per segment.
    fn seg_sum(
        vals: &Array<Self>,
        valid: &Array<u8>,
        starts: &Array<i64>,
    ) -> Result<Array<Self::Acc>>;
    /// Sum of squared deviations of valid values from `mean[piece_group[k]]` per piece `k`.
    fn seg_sqdev(
        vals: &Array<Self>,
        valid: &Array<u8>,
        piece_starts: &Array<i64>,
        piece_group: &Array<u64>,
        mean: &Array<f64>,
    ) -> Result<Array<f64>>;
    /// (position, found) of each segment's minimum or maximum.
    fn seg_extreme(
        vals: &Array<Self>,
        valid: &Array<u8>,
        starts: &Array<i64>,
        max: bool,
    ) -> Result<(Array<i64>, Array<u8>)>;
}

macro_rules! group_elem {
    ($t:ident, $acc:ident, $gather:ident, $differ:ident, $sum:ident, $extreme:ident, $sqdev:ident) => {
        impl GroupElem for $t {
            type Acc = $acc;
            fn gather(src: &Array<$t>, idx: &Array<i64>) -> Result<Array<$t>> {
                let mut out = Array::<$t>::zeros_on(idx.size(), &src.device())?;
                go!($gather, idx.size(), src, idx, &mut out);
                Ok(out)
            }
            fn differ(sorted: &Array<$t>) -> Result<Array<u64>> {
                let mut out = Array::<u64>::zeros_on(sorted.size(), &sorted.device())?;
                go!($differ, sorted.size(), sorted, &mut out);
                Ok(out)
            }
            fn seg_sum(
                vals: &Array<$t>,
                valid: &Array<u8>,
                starts: &Array<i64>,
            ) -> Result<Array<$acc>> {
                let g = starts.size() - 1;
                let mut out = Array::<$acc>::zeros_on(g, &vals.device())?;
                go!($sum, g, vals, valid, starts, &mut out);
                Ok(out)
            }
            fn seg_sqdev(
                vals: &Array<$t>,
                valid: &Array<u8>,
                piece_starts: &Array<i64>,
                piece_group: &Array<u64>,
                mean: &Array<f64>,
            ) -> Result<Array<f64>> {
                let k = piece_group.size();
                let mut out = Array::<f64>::zeros_on(k, &vals.device())?;
                go!(
                    $sqdev,
                    k,
                    vals,
                    valid,
                    piece_starts,
                    piece_group,
                    mean,
                    &mut out
                );
                Ok(out)
            }
            fn seg_extreme(
                vals: &Array<$t>,
                valid: &Array<u8>,
                starts: &Array<i64>,
                max: bool,
            ) -> Result<(Array<i64>, Array<u8>)> {
                let g = starts.size() - 1;
                let dev = vals.device();
                let mut pos = Array::<i64>::zeros_on(g, &dev)?;
                let mut found = Array::<u8>::zeros_on(g, &dev)?;
                go!($extreme, g, vals, valid, starts, max as u8, &mut pos, &mut found);
                Ok((pos, found))
            }
        }
    };
}

#[rustfmt::skip]
group_elem!(u8, u32, gb_gather_u8, gb_differ_u8, gb_sum_u8, gb_extreme_u8, gb_sqdev_u8);
#[rustfmt::skip]
group_elem!(i32, i64, gb_gather_i32, gb_differ_i32, gb_sum_i32, gb_extreme_i32, gb_sqdev_i32);
#[rustfmt::skip]
group_elem!(i64, i64, gb_gather_i64, gb_differ_i64, gb_sum_i64, gb_extreme_i64, gb_sqdev_i64);
#[rustfmt::skip]
group_elem!(u32, u64, gb_gather_u32, gb_differ_u32, gb_sum_u32, gb_extreme_u32, gb_sqdev_u32);
#[rustfmt::skip]
group_elem!(u64, u64, gb_gather_u64, gb_differ_u64, gb_sum_u64, gb_extreme_u64, gb_sqdev_u64);
#[rustfmt::skip]
group_elem!(f32, f64, gb_gather_f32, gb_differ_f32, gb_sum_f32, gb_extreme_f32, gb_sqdev_f32);
#[rustfmt::skip]
group_elem!(f64, f64, gb_gather_f64, gb_differ_f64, gb_sum_f64, gb_extreme_f64, gb_sqdev_f64);

/// The last element of a non-empty 1-D array, read back to the host (one element moves).
pub(crate) fn last<T: GroupElem>(a: &Array<T>) -> Result<T> {
    let idx = Array::from_slice_on(&[a.size() as i64 - 1], &a.device())?;
    Ok(T::gather(a, &idx)?.to_vec()?[0])
}

/// `out[idx[i]] = vals[i]`.
pub(crate) fn scatter_u64(vals: &Array<u64>, idx: &Array<i64>) -> Result<Array<u64>> {
    let mut out = Array::<u64>::zeros_on(vals.size(), &vals.device())?;
    go!(gb_scatter_u64, vals.size(), vals, idx, &mut out);
    Ok(out)
}

/// `perm[pos[g]]` for `g < n` (`pos` may be longer, e.g. segment starts with their end).
pub(crate) fn rows_at(perm: &Array<i64>, pos: &Array<i64>, n: usize) -> Result<Array<i64>> {
    let mut out = Array::<i64>::zeros_on(n, &pos.device())?;
    go!(gb_rows_at, n, perm, pos, &mut out);
    Ok(out)
}

/// `n` ones (all rows valid) on `device`.
pub(crate) fn all_valid(n: usize, device: &Device) -> Result<Array<u8>> {
    Ok(Array::<u8>::ones_on(n, device)?)
}
