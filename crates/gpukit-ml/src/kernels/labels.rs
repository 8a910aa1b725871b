//! Label bookkeeping on the device: codes of labels in a sorted table of distinct labels
//! (binary search), first-of-a-run flags of a sorted array (for distinct values), and confusion
//! counts (integer atomics: exact in any order).

use gpukit::prelude::*;

/// `flags[i] = 1` where `sorted[i]` starts a run of equal values (`i == 0` or it differs from
/// `sorted[i - 1]`), else `0`.
#[kernel]
pub(crate) fn run_starts(sorted: &[i64], flags: &mut [bool]) {
    for i in (grid(1)..sorted.len()).step_by(gridsize(1)) {
        flags[i] = i == 0 || sorted[i] != sorted[i - 1];
    }
}

/// `codes[i]` = the position of `labels[i]` in the sorted, distinct `table` (binary search),
/// or `-1` where it is not there.
#[kernel]
pub(crate) fn label_codes(labels: &[i64], table: &[i64], codes: &mut [i64]) {
    for i in (grid(1)..labels.len()).step_by(gridsize(1)) {
        let v = labels[i];
        let mut lo = 0usize;
        let mut hi = table.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            if table[mid] < v {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        codes[i] = if lo < table.len() && table[lo] == v {
            lo as i64
        } else {
            -1
        };
    }
}

/// `cm[t * n_labels + p] += 1` for each pair of codes `(truth[i], pred[i])`.
#[kernel]
pub(crate) fn confusion_counts(truth: &[i64], pred: &[i64], n_labels: usize, cm: &mut [i64]) {
    for i in (grid(1)..truth.len()).step_by(gridsize(1)) {
        let t = truth[i] as usize;
        let p = pred[i] as usize;
        atomic_add(&mut cm[t * n_labels + p], 1i64);
    }
}
