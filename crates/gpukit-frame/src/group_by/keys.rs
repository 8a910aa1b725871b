//! Rows to groups: the key columns' codes ([`super::rank::column_codes`]) are combined into one
//! code per row and ranked again, which numbers the groups densely in key order (nulls first in
//! each key) and sorts the rows by group, stably. All on the frame's device; only the number of
//! groups comes back to the host.

use gpukit::Array;

use super::kernels::{cfg, gb_seg_starts};
use super::rank::{column_codes, combine, dense_rank};
use super::segments::{pieces, Pieces};
use super::typed::go;
use crate::column::Column;
use crate::error::Result;

/// The rows of a frame split into groups by key.
pub(crate) struct Groups {
    /// The number of groups.
    pub n_groups: usize,
    /// Rows in group order (stable: a group's rows keep their frame order).
    pub perm: Array<i64>,
    /// Group `g` is positions `starts[g]..starts[g + 1]` of `perm` (`n_groups + 1` entries).
    pub starts: Array<i64>,
    /// The group of each row.
    pub codes: Array<u64>,
    /// The groups cut into pieces for two-level reductions.
    pub pieces: Pieces,
}

/// Groups the rows of `keys` (columns of one height on one device, at least one).
pub(crate) fn groups_of(keys: &[&Column]) -> Result<Groups> {
    let dev = keys[0].device();
    let n = keys[0].len();
    let (mut acc, mut bound) = column_codes(keys[0])?;
    for k in &keys[1..] {
        let (c, b) = column_codes(k)?;
        let joined = combine(&acc, bound, &c, b)?;
        let r = dense_rank(&joined)?;
        acc = r.codes;
        bound = r.distinct as u64;
    }
    let r = dense_rank(&acc)?;
    let mut starts = Array::<i64>::zeros_on(r.distinct + 1, &dev)?;
    go!(gb_seg_starts, n, &r.sorted_codes, &mut starts);
    let pieces = pieces(&starts, &r.sorted_codes, r.distinct)?;
    Ok(Groups {
        pieces,
        n_groups: r.distinct,
        perm: r.perm,
        starts,
        codes: r.codes,
    })
}
