//! k-means steps: nearest centre per point (from a GEMM block laid out centre-major), the
//! one-hot membership matrix whose product with the points gives per-cluster sums, cluster
//! sizes (integer atomics: exact, order-free), and the k-means++ distance update.

use gpukit::prelude::*;

macro_rules! lloyd_kernels {
    ($assign:ident, $onehot:ident, $closer:ident, $t:ident) => {
        /// Point `i` of `n = xn.len()`: `g[c * n + i] = −2 x·c` for each of the `k = cn.len()`
        /// centres (`cn[c] = ‖c‖²`); `labels[i]` = the centre with the smallest `cn[c] + g`
        /// (the lower index on a tie) and `dmin[i] = max(xn[i] + cn[c] + g, 0)`, its squared
        /// distance.
        #[kernel]
        pub(crate) fn $assign(g: &[$t], cn: &[$t], xn: &[$t], labels: &mut [i64], dmin: &mut [$t]) {
            let i = grid(1);
            let n = xn.len();
            let k = cn.len();
            if i < n && k > 0 {
                let mut best = cn[0] + g[i];
                let mut bc = 0usize;
                for c in 1..k {
                    let v = cn[c] + g[c * n + i];
                    if v < best {
                        best = v;
                        bc = c;
                    }
                }
                labels[i] = bc as i64;
                let d = xn[i] + best;
                dmin[i] = if d < 0.0 { 0.0 } else { d };
            }
        }

        /// `m[c * n + i] = 1` where `labels[i] == c`, else `0` (`n = labels.len()`), over all
        /// of `m` (`k · n` elements).
        #[kernel]
        pub(crate) fn $onehot(labels: &[i64], m: &mut [$t]) {
            let n = labels.len();
            for e in (grid(1)..m.len()).step_by(gridsize(1)) {
                let c = e / n;
                let i = e % n;
                m[e] = if labels[i] == c as i64 { 1.0 } else { 0.0 };
            }
        }

        /// k-means++: `dmin[i] = min(dmin[i], ‖x[i, :] − c‖²)` for the row-major `x` of
        /// `d = c.len()` columns.
        #[kernel]
        pub(crate) fn $closer(x: &[$t], c: &[$t], dmin: &mut [$t]) {
            let i = grid(1);
            let d = c.len();
            if i < dmin.len() {
                let mut s = 0.0;
                for j in 0..d {
                    let v = x[i * d + j] - c[j];
                    s += v * v;
                }
                if s < dmin[i] {
                    dmin[i] = s;
                }
            }
        }
    };
}

lloyd_kernels!(assign_f32, onehot_f32, closer_f32, f32);
lloyd_kernels!(assign_f64, onehot_f64, closer_f64, f64);

/// `counts[labels[i]] += 1` for every point (integer atomics: the same counts in any order).
#[kernel]
pub(crate) fn count_labels(labels: &[i64], counts: &mut [i64]) {
    for i in (grid(1)..labels.len()).step_by(gridsize(1)) {
        let c = labels[i] as usize;
        atomic_add(&mut counts[c], 1i64);
    }
}
