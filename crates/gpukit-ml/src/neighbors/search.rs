//! Brute-force k-nearest-neighbour search on a device: the reference rows kept transposed for
//! one GEMM per batch of queries, then the top-k selection kernels (`kernels::topk`).
//!
//! Per batch of `rows` queries: `g = alpha · Q @ Rᵀ` (`rows × n`, one cuBLAS GEMM, or the CPU
//! GEMM), then level 1 of the selection reads `g` once, adds the row and column terms and keeps
//! `k` candidates per strand; the merge levels reduce those to `k` per query. Queries are
//! batched so that `g` fits the memory cap (`crate::memory::block_cap`).

use gpukit::prelude::*;
use gpukit::{linalg, s};

use super::Metric;
use crate::error::{MlError, Result};
use crate::float::MlFloat;
use crate::kernels::topk::{strands, MAX_K};

/// Reference rows prepared for search.
pub(crate) struct Index<T: MlFloat> {
    metric: Metric,
    /// `(d, n)`: the reference rows (unit rows for cosine), transposed.
    refs_t: Array<T>,
    /// `(n,)`: `‖r‖²` (Euclidean) or zeros (cosine).
    col_term: Array<T>,
    n: usize,
    d: usize,
}

/// `‖row‖²` of every row of a 2-D array.
pub(crate) fn row_sq_norms<T: MlFloat>(x: &Array<T>) -> Result<Array<T>> {
    Ok(x.square()?.sum_axis(1)?)
}

/// The rows of `x` scaled to unit length (zero rows stay zero).
fn unit_rows<T: MlFloat>(x: &Array<T>) -> Result<Array<T>> {
    let n = x.shape()[0];
    let norm = row_sq_norms(x)?.sqrt()?;
    let zero = norm.eq(<T as Element>::zero())?.astype::<T>()?;
    let safe = (&norm + &zero)?.into_shape([n, 1])?;
    Ok((x / &safe)?)
}

impl<T: MlFloat> Index<T> {
    /// Prepares the `(n, d)` reference rows `x` (finite, `n ≥ 1`) on their device.
    pub(crate) fn build(x: &Array<T>, metric: Metric) -> Result<Index<T>> {
        let (n, d) = (x.shape()[0], x.shape()[1]);
        let (refs_t, col_term) = match metric {
            Metric::Euclidean => (x.t().copy()?, row_sq_norms(x)?),
            Metric::Cosine => (unit_rows(x)?.t().copy()?, Array::zeros_on(n, &x.device())?),
        };
        Ok(Index {
            metric,
            refs_t,
            col_term,
            n,
            d,
        })
    }

    /// Number of features.
    pub(crate) fn dim(&self) -> usize {
        self.d
    }

    /// The device the references live on.
    pub(crate) fn device(&self) -> Device {
        self.refs_t.device()
    }

    /// The `k` nearest references of every row of `q` (`(m, d)`, finite, on the index's
    /// device): `(distances (m, k), indices (m, k))`, each row sorted by distance, ties by
    /// smaller index. Distances are Euclidean (not squared) or cosine (`1 − cos`).
    pub(crate) fn search(
        &self,
        what: &'static str,
        q: &Array<T>,
        k: usize,
        cap: usize,
    ) -> Result<(Array<T>, Array<i64>)> {
        if k == 0 || k > self.n || k > MAX_K {
            return Err(MlError::Parameter {
                what,
                name: "n_neighbors",
                detail: format!(
                    "{k} neighbours asked, but it must be at least 1, at most the {} training \
                     rows and at most {MAX_K} (the selection kernel's list length)",
                    self.n
                ),
            });
        }
        let dev = self.device();
        let m = q.shape()[0];
        let (queries, row_term, alpha) = match self.metric {
            Metric::Euclidean => (None, row_sq_norms(q)?, T::from_f64(-2.0)),
            Metric::Cosine => (
                Some(unit_rows(q)?),
                Array::ones_on(m, &dev)?,
                T::from_f64(-1.0),
            ),
        };
        let queries = queries.as_ref().unwrap_or(q);
        // Per query row: its distances, and its level-1 candidates (a distance and an index
        // per slot); both blocks stay under the cap.
        let size = std::mem::size_of::<T>();
        let row_bytes = (self.n * size).max(strands(self.n, k) * k * (size + 8));
        let per_batch = (cap / row_bytes.max(1)).clamp(1, m.max(1));
        let mut dists = Vec::new();
        let mut idxs = Vec::new();
        for start in (0..m).step_by(per_batch) {
            let rows = per_batch.min(m - start);
            let (qb, ab) = if rows == m {
                (None, None)
            } else {
                (
                    Some(queries.slice(s![start..start + rows, ..])?.copy()?),
                    Some(row_term.slice(s![start..start + rows])?.copy()?),
                )
            };
            let qb = qb.as_ref().unwrap_or(queries);
            let ab = ab.as_ref().unwrap_or(&row_term);
            let mut g = Array::<T>::empty_on([rows, self.n], &dev)?;
            linalg::matmul_add_into(qb, &self.refs_t, &mut g, alpha, <T as Element>::zero())?;
            let mut parts = strands(self.n, k);
            let mut cd = Array::<T>::empty_on(rows * parts * k, &dev)?;
            let mut ci = Array::<i64>::empty_on(rows * parts * k, &dev)?;
            T::topk_first(&g, ab, &self.col_term, k, parts, &mut cd, &mut ci)?;
            drop(g);
            while parts > 1 {
                let m_len = parts * k;
                let next = strands(m_len, k);
                let mut nd = Array::<T>::empty_on(rows * next * k, &dev)?;
                let mut ni = Array::<i64>::empty_on(rows * next * k, &dev)?;
                T::topk_merge(&cd, &ci, m_len, k, next, &mut nd, &mut ni)?;
                (cd, ci, parts) = (nd, ni, next);
            }
            dists.push(cd.into_shape([rows, k])?);
            idxs.push(ci.into_shape([rows, k])?);
        }
        let (dist, idx) = if dists.len() == 1 {
            (
                dists.pop().expect("one batch"),
                idxs.pop().expect("one batch"),
            )
        } else if dists.is_empty() {
            (
                Array::zeros_on([0, k], &dev)?,
                Array::zeros_on([0, k], &dev)?,
            )
        } else {
            (
                Array::concatenate(&dists.iter().collect::<Vec<_>>(), 0)?,
                Array::concatenate(&idxs.iter().collect::<Vec<_>>(), 0)?,
            )
        };
        let dist = match self.metric {
            Metric::Euclidean => dist.sqrt()?,
            Metric::Cosine => dist,
        };
        Ok((dist, idx))
    }
}
