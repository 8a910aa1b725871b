//! Reductions of a distributed array: a local reduce on each worker, then a combine.
//!
//! Where every worker is a GPU and the pool's collectives are NCCL, each worker reduces its
//! partitions into a one-element array on its GPU and an NCCL all-reduce combines them; the
//! value is read from worker 0. Elsewhere each partition's value comes back to the host and
//! the values are combined there in partition order.

use super::DistArray;
use crate::collective::{CollectiveBackend, CollectiveElement, ReduceOp};
use gpukit::{Array, Error, Float, Result};
use std::sync::Arc;

/// How a distributed array's reductions combine the workers' partial results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CombinePath {
    /// An NCCL all-reduce of one-element device arrays.
    Nccl,
    /// Partial values combined on the host.
    Host,
}

impl<T: CollectiveElement> DistArray<T> {
    /// How reductions combine: NCCL where every worker is a GPU and the pool's collectives
    /// are NCCL (starting them if needed), else the host.
    pub fn combine_path(&self) -> Result<CombinePath> {
        if !self.pool.devices().iter().all(|d| d.is_cuda()) {
            return Ok(CombinePath::Host);
        }
        Ok(match self.pool.init_collectives()? {
            CollectiveBackend::Nccl { .. } => CombinePath::Nccl,
            _ => CombinePath::Host,
        })
    }

    /// The sum of all elements (integers wrap).
    pub fn sum(&self) -> Result<T> {
        self.reduce(ReduceOp::Sum)
    }

    /// The product of all elements (integers wrap).
    pub fn prod(&self) -> Result<T> {
        self.reduce(ReduceOp::Prod)
    }

    /// The smallest element (NaN if any is NaN); an error for an empty array.
    pub fn min(&self) -> Result<T> {
        self.nonempty("min")?;
        self.reduce(ReduceOp::Min)
    }

    /// The largest element (NaN if any is NaN); an error for an empty array.
    pub fn max(&self) -> Result<T> {
        self.nonempty("max")?;
        self.reduce(ReduceOp::Max)
    }

    fn nonempty(&self, what: &str) -> Result<()> {
        if self.size() == 0 {
            return Err(Error::Shape(format!(
                "{what} of an empty distributed array (shape {:?}) is undefined",
                self.shape()
            )));
        }
        Ok(())
    }

    fn reduce(&self, op: ReduceOp) -> Result<T> {
        match self.combine_path()? {
            CombinePath::Nccl => self.reduce_nccl(op),
            CombinePath::Host => {
                let partials = self.map_partitions_collect(move |_, p| local(p, op))?;
                Ok(partials
                    .into_iter()
                    .flatten()
                    .fold(identity::<T>(op), |a, b| op.apply(a, b)))
            }
        }
    }

    fn reduce_nccl(&self, op: ReduceOp) -> Result<T> {
        let parts: Arc<Vec<Arc<Array<T>>>> = Arc::new(self.parts.clone());
        let n = self.pool.len();
        let values = self.pool.on_each(move |ctx| {
            let dev = ctx.device();
            let mut acc = Array::<T>::full_on(vec![1], identity::<T>(op), &dev)?;
            for (i, p) in parts.iter().enumerate() {
                if i % n != ctx.index() || p.is_empty() {
                    continue;
                }
                let flat = p.view().reshape(vec![p.size()])?;
                let partial = match op {
                    ReduceOp::Sum => flat.sum_axis(0)?,
                    ReduceOp::Prod => flat.prod_axis(0)?,
                    ReduceOp::Min => flat.min_axis(0)?,
                    ReduceOp::Max => flat.max_axis(0)?,
                }
                .into_shape(vec![1])?;
                acc = match op {
                    ReduceOp::Sum => (&acc + &partial)?,
                    ReduceOp::Prod => (&acc * &partial)?,
                    ReduceOp::Min => acc.minimum(&partial)?,
                    ReduceOp::Max => acc.maximum(&partial)?,
                };
            }
            ctx.comm()?.all_reduce(&mut acc, op)?;
            // Every worker holds the result; reading one on each also surfaces any error.
            acc.item()
        })?;
        Ok(values[0])
    }
}

impl<T: CollectiveElement + Float> DistArray<T> {
    /// The mean of all elements (NaN for an empty array).
    pub fn mean(&self) -> Result<T> {
        let n = self.size();
        Ok(T::from_f64(self.sum()?.to_f64() / n as f64))
    }
}

fn identity<T: CollectiveElement>(op: ReduceOp) -> T {
    match op {
        ReduceOp::Sum => T::zero(),
        ReduceOp::Prod => T::one(),
        ReduceOp::Min => T::MAX_VALUE,
        ReduceOp::Max => T::MIN_VALUE,
    }
}

/// One partition's value, or `None` for an empty partition.
fn local<T: CollectiveElement>(p: &Array<T>, op: ReduceOp) -> Result<Option<T>> {
    if p.is_empty() {
        return Ok(None);
    }
    Ok(Some(match op {
        ReduceOp::Sum => p.sum()?,
        ReduceOp::Prod => p.prod()?,
        ReduceOp::Min => p.min()?,
        ReduceOp::Max => p.max()?,
    }))
}
