//! Neighbour votes (classification) and neighbour means (regression), one thread per query.
//!
//! Weights: uniform (every neighbour 1) or by distance (`1 / d`; where a query has neighbours
//! at distance 0, those weigh 1 and the others 0, as scikit-learn does). Each thread sums its
//! own row in neighbour order, so the result is the same on every run and both backends (up to
//! the distances themselves).

use gpukit::prelude::*;

macro_rules! vote_kernels {
    ($vote:ident, $mean:ident, $weight:ident, $t:ident) => {
        /// A neighbour's weight: 1 (uniform), or `1 / d` by distance; when the query has a
        /// neighbour at distance 0 (`zero`), those weigh 1 and the others 0.
        #[device]
        pub(crate) fn $weight(d: $t, weighted: bool, zero: bool) -> $t {
            if !weighted {
                return 1.0;
            }
            if zero {
                if d == 0.0 {
                    return 1.0;
                }
                return 0.0;
            }
            1.0 / d
        }

        /// Row `r`: `proba[r, c]` = weight share of class code `c` among the `k` neighbours
        /// `idx[r, ..]` (`codes[j]` is reference `j`'s class code); `pred[r]` = the class with
        /// the largest weight, the smallest code on a tie. `proba` must start at zero.
        #[kernel]
        pub(crate) fn $vote(
            idx: &[i64],
            dist: &[$t],
            codes: &[i64],
            k: usize,
            n_classes: usize,
            weighted: bool,
            proba: &mut [$t],
            pred: &mut [i64],
        ) {
            let r = grid(1);
            if r < pred.len() {
                let mut zero = false;
                if weighted {
                    for s in 0..k {
                        if dist[r * k + s] == 0.0 {
                            zero = true;
                        }
                    }
                }
                let mut total = 0.0;
                for s in 0..k {
                    let d = dist[r * k + s];
                    let w = $weight(d, weighted, zero);
                    let c = codes[idx[r * k + s] as usize] as usize;
                    proba[r * n_classes + c] += w;
                    total += w;
                }
                let mut best = 0usize;
                let mut best_w = -1.0;
                for c in 0..n_classes {
                    let w = proba[r * n_classes + c];
                    if w > best_w {
                        best_w = w;
                        best = c;
                    }
                    proba[r * n_classes + c] = w / total;
                }
                pred[r] = best as i64;
            }
        }

        /// Row `r`: `out[r]` = the (weighted) mean of `targets` over the neighbours `idx[r, ..]`.
        #[kernel]
        pub(crate) fn $mean(
            idx: &[i64],
            dist: &[$t],
            targets: &[$t],
            k: usize,
            weighted: bool,
            out: &mut [$t],
        ) {
            let r = grid(1);
            if r < out.len() {
                let mut zero = false;
                if weighted {
                    for s in 0..k {
                        if dist[r * k + s] == 0.0 {
                            zero = true;
                        }
                    }
                }
                let mut total = 0.0;
                let mut acc = 0.0;
                for s in 0..k {
                    let d = dist[r * k + s];
                    let w = $weight(d, weighted, zero);
                    acc += w * targets[idx[r * k + s] as usize];
                    total += w;
                }
                out[r] = acc / total;
            }
        }
    };
}

vote_kernels!(vote_f32, mean_f32, weight_f32, f32);
vote_kernels!(vote_f64, mean_f64, weight_f64, f64);
