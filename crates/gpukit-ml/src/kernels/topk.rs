//! The `k` smallest distances of every query row, and their reference indices: the selection
//! step of brute-force nearest neighbours.
//!
//! The distance block comes from one GEMM, `g = alpha · Q @ Rᵀ` (`rows × n`); the distance of
//! query `r` to reference `j` is `max(a[r] + b[j] + g[r, j], 0)` (Euclidean: `a = ‖q‖²`,
//! `b = ‖r‖²`, `alpha = -2`; cosine: `a = 1`, `b = 0`, `alpha = -1` on unit rows).
//!
//! Level 1 (`topk_first_*`): each row is cut into `parts` interleaved strands (thread `p`
//! reads columns `p, p + parts, ...`, so a warp reads consecutive columns); each thread keeps a
//! sorted list of its `k` best in a local array and writes it out. Levels 2+
//! (`topk_merge_*`): the `parts · k` candidates of a row are again cut into strands and
//! reduced the same way, until one list per row is left. No shared memory, no atomics: the
//! result does not depend on scheduling.
//!
//! Each kernel comes in three list lengths (8, 32 and 128 slots): a thread's list lives in
//! local memory, so the smallest that holds `k` is launched (less to initialise and spill).
//!
//! Order: by distance, then by reference index (the smaller index wins a tie), on both
//! backends. Empty list slots hold `(+inf, i64::MAX)`, which sort last.

use gpukit::prelude::*;

/// The largest `k` the selection kernels take (the length of their per-thread lists).
pub const MAX_K: usize = 128;

macro_rules! topk_kernels {
    ($first:ident, $merge:ident, $t:ident, $kmax:literal) => {
        /// Level 1 (lists of `KMAX` slots, `k ≤ KMAX`): thread `t` takes row `t / parts` and its strand `t % parts`, and writes
        /// its `k` best `(distance, column)` pairs, sorted, to `out[t * k ..]`.
        #[kernel]
        pub(crate) fn $first(
            g: &[$t],
            a: &[$t],
            b: &[$t],
            k: usize,
            parts: usize,
            out_d: &mut [$t],
            out_i: &mut [i64],
        ) {
            const KMAX: usize = $kmax;
            let t = grid(1);
            let n = b.len();
            if t < a.len() * parts && k > 0 && k <= KMAX {
                let r = t / parts;
                let p = t % parts;
                let mut bd = [0.0; KMAX];
                let mut bi = [0i64; KMAX];
                for s in 0..k {
                    bd[s] = $t::INFINITY;
                    bi[s] = i64::MAX;
                }
                let mut worst = $t::INFINITY;
                let ar = a[r];
                let base = r * n;
                let mut j = p;
                while j < n {
                    let mut dist = ar + b[j] + g[base + j];
                    if dist < 0.0 {
                        dist = 0.0;
                    }
                    // Columns arrive in increasing order, so an equal distance never displaces.
                    if dist < worst {
                        let mut pos = k - 1;
                        while pos > 0 && bd[pos - 1] > dist {
                            bd[pos] = bd[pos - 1];
                            bi[pos] = bi[pos - 1];
                            pos -= 1;
                        }
                        bd[pos] = dist;
                        bi[pos] = j as i64;
                        worst = bd[k - 1];
                    }
                    j += parts;
                }
                let o = t * k;
                for s in 0..k {
                    out_d[o + s] = bd[s];
                    out_i[o + s] = bi[s];
                }
            }
        }

        /// Levels 2+: row `t / parts` of `m` candidates per row (`in_d.len() / m` rows), strand
        /// `t % parts`; the `k` best by `(distance, index)` to `out[t * k ..]`.
        #[kernel]
        pub(crate) fn $merge(
            in_d: &[$t],
            in_i: &[i64],
            m: usize,
            k: usize,
            parts: usize,
            out_d: &mut [$t],
            out_i: &mut [i64],
        ) {
            const KMAX: usize = $kmax;
            let t = grid(1);
            let rows = if m > 0 { in_d.len() / m } else { 0 };
            if t < rows * parts && k > 0 && k <= KMAX {
                let r = t / parts;
                let p = t % parts;
                let mut bd = [0.0; KMAX];
                let mut bi = [0i64; KMAX];
                for s in 0..k {
                    bd[s] = $t::INFINITY;
                    bi[s] = i64::MAX;
                }
                let mut wd = $t::INFINITY;
                let mut wi = i64::MAX;
                let base = r * m;
                let mut c = p;
                while c < m {
                    let dist = in_d[base + c];
                    let idx = in_i[base + c];
                    if dist < wd || (dist == wd && idx < wi) {
                        let mut pos = k - 1;
                        while pos > 0
                            && (bd[pos - 1] > dist || (bd[pos - 1] == dist && bi[pos - 1] > idx))
                        {
                            bd[pos] = bd[pos - 1];
                            bi[pos] = bi[pos - 1];
                            pos -= 1;
                        }
                        bd[pos] = dist;
                        bi[pos] = idx;
                        wd = bd[k - 1];
                        wi = bi[k - 1];
                    }
                    c += parts;
                }
                let o = t * k;
                for s in 0..k {
                    out_d[o + s] = bd[s];
                    out_i[o + s] = bi[s];
                }
            }
        }
    };
}

topk_kernels!(topk_first8_f32, topk_merge8_f32, f32, 8);
topk_kernels!(topk_first8_f64, topk_merge8_f64, f64, 8);
topk_kernels!(topk_first32_f32, topk_merge32_f32, f32, 32);
topk_kernels!(topk_first32_f64, topk_merge32_f64, f64, 32);
topk_kernels!(topk_first128_f32, topk_merge128_f32, f32, 128);
topk_kernels!(topk_first128_f64, topk_merge128_f64, f64, 128);

/// How many strands a row of `m` candidates is cut into for `k`: each strand gets at least
/// `max(16·k, 128)` candidates, and at most 1024 strands per row.
pub(crate) fn strands(m: usize, k: usize) -> usize {
    (m / (16 * k).max(128)).clamp(1, 1024)
}
