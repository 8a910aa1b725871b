//! Deterministic segmented reductions in two levels, so one huge group (the "en" project, or
//! `describe`'s whole column) is not left to a single thread. The sorted positions are cut into
//! **pieces**: a piece ends where its group ends or after [`PIECE`] positions. Level 1 reduces
//! each piece in one thread (in position order); level 2 reduces each group's pieces in one
//! thread (in piece order). The cuts depend only on the group sizes, so the order of every
//! float addition is fixed: the same bits on every run and on both backends, with no float
//! atomics. Integer sums and counts are exact in any order.

use gpukit::Array;

use super::kernels::{
    cfg, gb_group_pieces, gb_mark_pieces, gb_mean, gb_piece_group, gb_seg_count, gb_seg_starts,
    gb_std,
};
use super::typed::{all_valid, go, last, rows_at, GroupElem};
use crate::error::Result;

/// The most positions one thread reduces at level 1.
pub(crate) const PIECE: i64 = 256;

/// Groups over sorted positions, cut into pieces.
pub(crate) struct Pieces {
    /// Piece `k` is positions `starts[k]..starts[k + 1]`.
    pub starts: Array<i64>,
    /// Group `g` is pieces `of_group[g]..of_group[g + 1]`.
    pub of_group: Array<i64>,
    /// The group of each piece.
    pub group: Array<u64>,
}

/// The pieces of groups given by their starts (`n_groups + 1` entries) and the group of each
/// sorted position.
pub(crate) fn pieces(
    group_starts: &Array<i64>,
    sorted_groups: &Array<u64>,
    n_groups: usize,
) -> Result<Pieces> {
    let dev = group_starts.device();
    let n = sorted_groups.size();
    if n == 0 {
        return Ok(Pieces {
            starts: Array::<i64>::zeros_on(1, &dev)?,
            of_group: Array::<i64>::zeros_on(n_groups + 1, &dev)?,
            group: Array::<u64>::zeros_on(0, &dev)?,
        });
    }
    let mut flags = Array::<u64>::zeros_on(n, &dev)?;
    go!(gb_mark_pieces, n, sorted_groups, PIECE, &mut flags);
    let piece_of = flags.cumsum()?;
    let count = last(&piece_of)? as usize + 1;
    let mut starts = Array::<i64>::zeros_on(count + 1, &dev)?;
    go!(gb_seg_starts, n, &piece_of, &mut starts);
    let mut of_group = Array::<i64>::zeros_on(n_groups + 1, &dev)?;
    go!(
        gb_group_pieces,
        n_groups + 1,
        group_starts,
        &piece_of,
        count as i64,
        &mut of_group
    );
    let mut group = Array::<u64>::zeros_on(count, &dev)?;
    go!(gb_piece_group, count, &starts, sorted_groups, &mut group);
    Ok(Pieces {
        starts,
        of_group,
        group,
    })
}

/// Sum of the valid values of each group (values and validity in sorted order).
pub(crate) fn sum<T: GroupElem>(
    sorted: &Array<T>,
    valid: &Array<u8>,
    p: &Pieces,
) -> Result<Array<T::Acc>> {
    let partial = T::seg_sum(sorted, valid, &p.starts)?;
    let ones = all_valid(partial.size(), &partial.device())?;
    Ok(<T::Acc as GroupElem>::seg_sum(&partial, &ones, &p.of_group)?.astype::<T::Acc>()?)
}

/// Valid values per group, `i64`.
pub(crate) fn count(valid: &Array<u8>, p: &Pieces) -> Result<Array<i64>> {
    let k = p.group.size();
    let mut partial = Array::<u32>::zeros_on(k, &valid.device())?;
    go!(gb_seg_count, k, valid, &p.starts, &mut partial);
    let ones = all_valid(k, &valid.device())?;
    Ok(u32::seg_sum(&partial, &ones, &p.of_group)?.astype::<i64>()?)
}

/// (valid count, mean, standard deviation with ddof = 1) per group, `f64`, in two passes (the
/// mean first, then squared deviations from it). Integer sums are exact before the division.
pub(crate) fn moments<T: GroupElem>(
    sorted: &Array<T>,
    valid: &Array<u8>,
    p: &Pieces,
) -> Result<(Array<i64>, Array<f64>, Array<f64>)> {
    let g = p.of_group.size() - 1;
    let dev = valid.device();
    let cnt = count(valid, p)?;
    let total = sum(sorted, valid, p)?.astype::<f64>()?;
    let mut mean = Array::<f64>::zeros_on(g, &dev)?;
    go!(gb_mean, g, &total, &cnt, &mut mean);
    let partial = T::seg_sqdev(sorted, valid, &p.starts, &p.group, &mean)?;
    let ones = all_valid(partial.size(), &dev)?;
    let q = f64::seg_sum(&partial, &ones, &p.of_group)?;
    let mut std = Array::<f64>::zeros_on(g, &dev)?;
    go!(gb_std, g, &q, &cnt, &mut std);
    Ok((cnt, mean, std))
}

/// (sorted position, found) of each group's first minimum or maximum over valid values (NaN
/// skipped unless a group holds nothing else): the best of each piece, then the best piece.
pub(crate) fn extreme<T: GroupElem>(
    sorted: &Array<T>,
    valid: &Array<u8>,
    p: &Pieces,
    max: bool,
) -> Result<(Array<i64>, Array<u8>)> {
    let (pos, found) = T::seg_extreme(sorted, valid, &p.starts, max)?;
    let best = T::gather(sorted, &pos)?;
    let (piece, found) = T::seg_extreme(&best, &found, &p.of_group, max)?;
    let g = p.of_group.size() - 1;
    Ok((rows_at(&pos, &piece, g)?, found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit::Device;

    #[test]
    fn a_large_group_is_cut_into_pieces_and_sums_exactly() {
        let cpu = Device::Cpu;
        // groups of 1, 700 and 3 rows
        let mut groups = vec![0u64];
        groups.extend(std::iter::repeat_n(1u64, 700));
        groups.extend([2u64; 3]);
        let sorted_groups = Array::from_slice_on(&groups, &cpu).unwrap();
        let starts = Array::from_slice_on(&[0i64, 1, 701, 704], &cpu).unwrap();
        let p = pieces(&starts, &sorted_groups, 3).unwrap();
        assert_eq!(
            p.starts.to_vec().unwrap(),
            [0, 1, 256, 512, 701, 704],
            "cuts at group starts and multiples of {PIECE}"
        );
        assert_eq!(p.of_group.to_vec().unwrap(), [0, 1, 4, 5]);
        assert_eq!(p.group.to_vec().unwrap(), [0, 1, 1, 1, 2]);
        let vals: Vec<i64> = (0..704).collect();
        let valid: Vec<u8> = (0..704).map(|i| (i % 7 != 0) as u8).collect();
        let v = Array::from_slice_on(&vals, &cpu).unwrap();
        let ok = Array::from_slice_on(&valid, &cpu).unwrap();
        let s = sum(&v, &ok, &p).unwrap().to_vec().unwrap();
        let want = |a: usize, b: usize| (a..b).filter(|i| i % 7 != 0).sum::<usize>() as i64;
        assert_eq!(s, [want(0, 1), want(1, 701), want(701, 704)]);
        let c = count(&ok, &p).unwrap().to_vec().unwrap();
        assert_eq!(c, [0, (1..701).filter(|i| i % 7 != 0).count() as i64, 3]);
        let (_, mean, std) = moments(&v, &ok, &p).unwrap();
        let (mean, std) = (mean.to_vec().unwrap(), std.to_vec().unwrap());
        let xs: Vec<f64> = (1..701).filter(|i| i % 7 != 0).map(|i| i as f64).collect();
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt();
        assert!((mean[1] - m).abs() < 1e-9 && (std[1] - sd).abs() < 1e-9);
        // the first minimum / maximum across pieces; NaN only where nothing else is valid
        let mut f: Vec<f64> = (0..704).map(|i| ((i * 37) % 101) as f64).collect();
        f[300] = -1.0;
        f[600] = -1.0;
        f[100] = f64::NAN;
        f[0] = f64::NAN;
        let fv = Array::from_slice_on(&f, &cpu).unwrap();
        let all = all_valid(704, &cpu).unwrap();
        let (lo, found) = extreme(&fv, &all, &p, false).unwrap();
        assert_eq!(lo.to_vec().unwrap()[..2], [0, 300]);
        assert_eq!(found.to_vec().unwrap(), [1, 1, 1]);
        let (hi, _) = extreme(&fv, &all, &p, true).unwrap();
        let h = hi.to_vec().unwrap()[1] as usize;
        assert_eq!(
            (f[h], h),
            (100.0, (1..701).find(|&i| f[i] == 100.0).unwrap())
        );
        let none = Array::<u8>::zeros_on(704, &cpu).unwrap();
        let (pos, found) = extreme(&fv, &none, &p, true).unwrap();
        assert_eq!(found.to_vec().unwrap(), [0, 0, 0]);
        assert_eq!(pos.to_vec().unwrap().len(), 3);
    }
}
