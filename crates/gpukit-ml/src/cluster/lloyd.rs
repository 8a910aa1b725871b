//! The k-means work: initial centres (k-means++ and random rows) and Lloyd iterations over
//! chunks of rows, each chunk kept with its transpose and squared row norms for the GEMMs.

use std::borrow::Cow;

use gpukit::prelude::*;
use gpukit::{linalg, s};

use crate::error::Result;
use crate::float::MlFloat;
use crate::kernels::{lloyd as k, stride_grid};
use crate::rng::HostRng;

/// One chunk of rows: the rows, their transpose and their squared norms.
struct Chunk<'a, T: MlFloat> {
    x: Cow<'a, Array<T>>,
    xt: Array<T>,
    xn: Array<T>,
}

/// The rows of a data set in chunks whose `k × rows` blocks fit a byte cap.
pub(super) struct Chunks<'a, T: MlFloat> {
    parts: Vec<Chunk<'a, T>>,
    rows_per: usize,
    k: usize,
    d: usize,
}

/// `1 × d` copy of row `i` of `x`.
fn row<T: MlFloat>(x: &Array<T>, i: usize) -> Result<Array<T>> {
    Ok(x.slice(s![i..i + 1, ..])?.copy()?)
}

impl<'a, T: MlFloat> Chunks<'a, T> {
    /// Cuts `x` (`(n, d)`, `n ≥ 1`) into chunks for `k` centres under `cap` bytes per block.
    pub(super) fn new(x: Cow<'a, Array<T>>, k: usize, cap: usize) -> Result<Chunks<'a, T>> {
        let (n, d) = (x.shape()[0], x.shape()[1]);
        let rows_per = (cap / (k.max(1) * std::mem::size_of::<T>())).clamp(1, n);
        let make = |x: Cow<'a, Array<T>>| -> Result<Chunk<'a, T>> {
            let xt = x.t().copy()?;
            let xn = x.square()?.sum_axis(1)?;
            Ok(Chunk { x, xt, xn })
        };
        let mut parts = Vec::new();
        if rows_per >= n {
            parts.push(make(x)?);
        } else {
            for start in (0..n).step_by(rows_per) {
                let end = (start + rows_per).min(n);
                parts.push(make(Cow::Owned(x.slice(s![start..end, ..])?.copy()?))?);
            }
        }
        Ok(Chunks {
            parts,
            rows_per,
            k,
            d,
        })
    }

    /// Nearest centre and squared distance to it for every row of one chunk.
    fn assign(
        &self,
        c: &Chunk<'_, T>,
        centers: &Array<T>,
        cn: &Array<T>,
    ) -> Result<(Array<i64>, Array<T>)> {
        let rows = c.x.shape()[0];
        let dev = centers.device();
        let mut g = Array::<T>::empty_on([self.k, rows], &dev)?;
        linalg::matmul_add_into(
            centers,
            &c.xt,
            &mut g,
            T::from_f64(-2.0),
            <T as Element>::zero(),
        )?;
        let mut labels = Array::<i64>::empty_on(rows, &dev)?;
        let mut dmin = Array::<T>::empty_on(rows, &dev)?;
        T::assign(&g, cn, &c.xn, &mut labels, &mut dmin)?;
        Ok((labels, dmin))
    }

    /// Labels and squared distances of all rows for `centers`.
    pub(super) fn assign_all(&self, centers: &Array<T>) -> Result<(Array<i64>, Array<T>)> {
        let cn = centers.square()?.sum_axis(1)?;
        let mut ls = Vec::with_capacity(self.parts.len());
        let mut ds = Vec::with_capacity(self.parts.len());
        for c in &self.parts {
            let (l, d) = self.assign(c, centers, &cn)?;
            ls.push(l);
            ds.push(d);
        }
        if ls.len() == 1 {
            return Ok((ls.pop().expect("one"), ds.pop().expect("one")));
        }
        Ok((
            Array::concatenate(&ls.iter().collect::<Vec<_>>(), 0)?,
            Array::concatenate(&ds.iter().collect::<Vec<_>>(), 0)?,
        ))
    }

    /// Row `i` of the data, on the host.
    fn host_row(&self, i: usize) -> Result<Vec<T>> {
        let c = &self.parts[i / self.rows_per];
        Ok(row(&c.x, i % self.rows_per)?.to_vec()?)
    }

    /// Lloyd iterations from `centers`: the final centres and the iterations run.
    pub(super) fn lloyd(
        &self,
        mut centers: Array<T>,
        max_iter: usize,
        tol_abs: f64,
    ) -> Result<(Array<T>, usize)> {
        let (kc, d) = (self.k, self.d);
        let dev = centers.device();
        let mut old: Vec<f64> = centers.to_vec()?.into_iter().map(Element::to_f64).collect();
        let mut n_iter = 0;
        for _ in 0..max_iter {
            let cn = centers.square()?.sum_axis(1)?;
            let mut sums = Array::<T>::zeros_on([kc, d], &dev)?;
            let mut counts = Array::<i64>::zeros_on(kc, &dev)?;
            let mut assigned = Vec::with_capacity(self.parts.len());
            for c in &self.parts {
                let (labels, dmin) = self.assign(c, &centers, &cn)?;
                let mut m = Array::<T>::empty_on([kc, c.x.shape()[0]], &dev)?;
                T::onehot(&labels, &mut m)?;
                linalg::matmul_add_into(
                    &m,
                    &c.x,
                    &mut sums,
                    <T as Element>::one(),
                    <T as Element>::one(),
                )?;
                let (b, t) = stride_grid(labels.size());
                launch!(k::count_labels[b, t](&labels, &mut counts))?;
                assigned.push((labels, dmin));
            }
            let mut sums: Vec<f64> = sums.to_vec()?.into_iter().map(Element::to_f64).collect();
            let mut counts = counts.to_vec()?;
            let empty: Vec<usize> = (0..kc).filter(|&c| counts[c] == 0).collect();
            if !empty.is_empty() {
                self.relocate(&empty, &assigned, &mut sums, &mut counts)?;
            }
            let mut new = old.clone();
            for c in 0..kc {
                if counts[c] > 0 {
                    for j in 0..d {
                        let v = sums[c * d + j] / counts[c] as f64;
                        new[c * d + j] = T::from_f64(v).to_f64();
                    }
                }
            }
            let shift: f64 = new.iter().zip(&old).map(|(a, b)| (a - b) * (a - b)).sum();
            centers =
                Array::from_vec_on(new.iter().map(|&v| T::from_f64(v)).collect(), [kc, d], &dev)?;
            old = new;
            n_iter += 1;
            if shift <= tol_abs {
                break;
            }
        }
        Ok((centers, n_iter))
    }

    /// Gives each empty cluster the row farthest from its centre (distinct rows, farthest
    /// first, ties by lower row index), taking it out of its old cluster.
    fn relocate(
        &self,
        empty: &[usize],
        assigned: &[(Array<i64>, Array<T>)],
        sums: &mut [f64],
        counts: &mut [i64],
    ) -> Result<()> {
        let d = self.d;
        let mut dist = Vec::new();
        let mut labels = Vec::new();
        for (l, dm) in assigned {
            labels.extend(l.to_vec()?);
            dist.extend(dm.to_vec()?.into_iter().map(Element::to_f64));
        }
        let mut order: Vec<usize> = (0..dist.len()).collect();
        order.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
        for (&e, &i) in empty.iter().zip(&order) {
            let x: Vec<f64> = self.host_row(i)?.into_iter().map(Element::to_f64).collect();
            let old = labels[i] as usize;
            for j in 0..d {
                sums[old * d + j] -= x[j];
                sums[e * d + j] = x[j];
            }
            counts[old] -= 1;
            counts[e] = 1;
            labels[i] = e as i64;
        }
        Ok(())
    }
}

/// k-means++ initial centres of `x` (`(n, d)`, `n ≥ k`), seeded.
pub(super) fn kmeans_plus_plus<T: MlFloat>(x: &Array<T>, k: usize, seed: u64) -> Result<Array<T>> {
    let n = x.shape()[0];
    let dev = x.device();
    let mut rng = HostRng::new(seed);
    let mut chosen = vec![rng.below(n as u64) as i64];
    let mut dmin = Array::<T>::full_on(n, T::from_f64(f64::INFINITY), &dev)?;
    T::closer(x, &row(x, chosen[0] as usize)?, &mut dmin)?;
    for _ in 1..k {
        let cs = dmin.cumsum()?;
        let total = cs.slice(s![n - 1..])?.to_vec()?[0].to_f64();
        let next = if total > 0.0 && total.is_finite() {
            let u = T::from_f64(rng.uniform() * total);
            (cs.le(u)?.count_nonzero()? as usize).min(n - 1)
        } else {
            rng.below(n as u64) as usize
        };
        chosen.push(next as i64);
        T::closer(x, &row(x, next)?, &mut dmin)?;
    }
    let idx = Array::from_vec_on(chosen, k, &dev)?;
    Ok(T::take_rows(x, &idx)?)
}

/// `k` distinct rows of `x` chosen uniformly at random, seeded.
pub(super) fn random_rows<T: MlFloat>(x: &Array<T>, k: usize, seed: u64) -> Result<Array<T>> {
    let n = x.shape()[0];
    let mut rng = HostRng::new(seed);
    let idx: Vec<i64> = rng
        .sample_distinct(n, k)
        .into_iter()
        .map(|i| i as i64)
        .collect();
    let idx = Array::from_vec_on(idx, k, &x.device())?;
    Ok(T::take_rows(x, &idx)?)
}
