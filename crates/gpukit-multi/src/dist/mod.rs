//! `DistArray<T>`: one logical array split along axis 0 into partitions, partition `i` on
//! worker `i % pool.len()` (as a Dask array is split into chunks held by workers).
//!
//! Operations run where the partitions are: elementwise operations as one job per partition
//! (`ops.rs`), reductions as a local reduce on each worker then a combine (`reduce.rs`: on the
//! host, or through an NCCL all-reduce when the pool's GPUs have NCCL). `gather` brings the
//! whole array to one device.
//!
//! A partitioned DataFrame (`DistFrame`) would follow the same shape: partitions of
//! `gpukit_frame::DataFrame` on the workers, a local aggregate per partition, the partial
//! aggregates gathered (or all-gathered) and combined.

mod collective;
mod ops;
mod reduce;

pub use reduce::CombinePath;

use crate::pool::{DevicePool, WorkerCtx};
use crate::transfer::transfer;
use gpukit::{Array, Device, Element, Error, Result};
use std::sync::Arc;

/// An array split along axis 0 across a pool's devices.
///
/// ```
/// use gpukit::{Array, Device};
/// use gpukit_multi::{DevicePool, DistArray};
/// # fn main() -> gpukit::Result<()> {
/// let pool = DevicePool::virtual_cpu(3)?;
/// let a = Array::from_vec_on((0..10).map(|x| x as f64).collect(), vec![10], &Device::Cpu)?;
/// let d = DistArray::scatter(&pool, &a)?;              // rows 4 + 3 + 3
/// assert_eq!(d.partition_rows(), vec![4, 3, 3]);
/// let e = ((&d * 2.0)? + 1.0)?;                        // runs on every worker
/// assert_eq!(e.sum()?, 100.0);
/// assert_eq!(e.gather()?.to_vec()?[9], 19.0);
/// # Ok(())
/// # }
/// ```
pub struct DistArray<T: Element> {
    pool: DevicePool,
    parts: Vec<Arc<Array<T>>>,
    /// Shape of every partition after axis 0.
    rest: Vec<usize>,
}

impl<T: Element> Clone for DistArray<T> {
    /// Shares the partitions (they are never changed in place), like cloning an `Arc`.
    fn clone(&self) -> Self {
        DistArray {
            pool: self.pool.clone(),
            parts: self.parts.clone(),
            rest: self.rest.clone(),
        }
    }
}

impl<T: Element> std::fmt::Debug for DistArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistArray")
            .field("shape", &self.shape())
            .field("partition_rows", &self.partition_rows())
            .field("devices", &self.partition_devices())
            .finish()
    }
}

/// Rows of `rows` split into `n` nearly equal blocks (the first `rows % n` one row longer).
pub(crate) fn split_rows(rows: usize, n: usize) -> Vec<usize> {
    (0..n)
        .map(|i| rows / n + usize::from(i < rows % n))
        .collect()
}

impl<T: Element> DistArray<T> {
    /// `a` split along axis 0 into one partition per worker, each copied to its worker's device
    /// (the copies run on the workers, side by side). `a` needs at least one axis.
    pub fn scatter(pool: &DevicePool, a: &Array<T>) -> Result<DistArray<T>> {
        Self::scatter_into(pool, a, pool.len())
    }

    /// `a` split along axis 0 into `parts` partitions (partition `i` on worker `i % len()`).
    pub fn scatter_into(pool: &DevicePool, a: &Array<T>, parts: usize) -> Result<DistArray<T>> {
        let Some((&rows, rest)) = a.shape().split_first() else {
            return Err(Error::Shape(
                "scatter needs an array with at least one axis (a 0-d array has no rows)".into(),
            ));
        };
        if parts == 0 {
            return Err(Error::Other("scatter into 0 partitions".into()));
        }
        let row_len: usize = rest.iter().product();
        let mut data = a.to_vec()?;
        let mut chunks = Vec::with_capacity(parts);
        // Split from the end so each chunk is moved out without copying the rest.
        for r in split_rows(rows, parts).into_iter().rev() {
            let tail = data.split_off(data.len() - r * row_len);
            chunks.push((tail, r));
        }
        chunks.reverse();
        let rest_v = rest.to_vec();
        let rest2 = rest_v.clone();
        let arrays = pool.map(
            chunks,
            move |ctx: &mut WorkerCtx, (v, r): (Vec<T>, usize)| {
                let mut shape = vec![r];
                shape.extend_from_slice(&rest2);
                Array::from_vec_on(v, shape, &ctx.device())
            },
        )?;
        Ok(DistArray {
            pool: pool.clone(),
            parts: arrays.into_iter().map(Arc::new).collect(),
            rest: rest_v,
        })
    }

    /// A distributed array from partitions already made: partition `i` goes to worker
    /// `i % len()` (copied there by [`transfer`] when it is elsewhere). The partitions must
    /// agree on every axis after the first.
    pub fn from_partitions(pool: &DevicePool, parts: Vec<Array<T>>) -> Result<DistArray<T>> {
        let rest = check_rest(&parts)?;
        let n = pool.len();
        let mut out = Vec::with_capacity(parts.len());
        for (i, p) in parts.into_iter().enumerate() {
            let dev = pool.device(i % n)?;
            out.push(Arc::new(if p.device() == dev {
                p
            } else {
                transfer(&p, dev)?.array
            }));
        }
        Ok(DistArray {
            pool: pool.clone(),
            parts: out,
            rest,
        })
    }

    /// `parts` partitions made on the workers by `f(ctx, i)` (partition `i` on worker
    /// `i % len()`, made on that worker's device), as Dask's `from_map`. The partitions must
    /// agree on every axis after the first.
    pub fn from_map<F>(pool: &DevicePool, parts: usize, f: F) -> Result<DistArray<T>>
    where
        F: Fn(&mut WorkerCtx, usize) -> Result<Array<T>> + Send + Sync + 'static,
    {
        let arrays = pool.map((0..parts).collect(), f)?;
        Self::from_partitions(pool, arrays)
    }

    /// The pool the partitions live on.
    pub fn pool(&self) -> &DevicePool {
        &self.pool
    }

    /// The logical shape: the partitions' rows added up, then the shared trailing axes.
    pub fn shape(&self) -> Vec<usize> {
        let mut s = vec![self.partition_rows().iter().sum()];
        s.extend_from_slice(&self.rest);
        s
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.parts.iter().map(|p| p.size()).sum()
    }

    /// Number of partitions.
    pub fn num_partitions(&self) -> usize {
        self.parts.len()
    }

    /// Rows (axis-0 length) of each partition.
    pub fn partition_rows(&self) -> Vec<usize> {
        self.parts.iter().map(|p| p.shape()[0]).collect()
    }

    /// The device of each partition.
    pub fn partition_devices(&self) -> Vec<Device> {
        self.parts.iter().map(|p| p.device()).collect()
    }

    /// Partition `i`, or `None` past the last.
    pub fn partition(&self, i: usize) -> Option<&Array<T>> {
        self.parts.get(i).map(|p| p.as_ref())
    }

    /// The worker holding partition `i`.
    pub fn worker_of(&self, i: usize) -> usize {
        i % self.pool.len()
    }

    /// Runs `f` on every partition on its worker and returns the per-partition results in
    /// partition order.
    pub fn map_partitions_collect<R, F>(&self, f: F) -> Result<Vec<R>>
    where
        R: Send + 'static,
        F: Fn(&mut WorkerCtx, &Array<T>) -> Result<R> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let handles = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (f, p) = (f.clone(), p.clone());
                self.pool.submit(self.worker_of(i), move |ctx| f(ctx, &p))
            })
            .collect::<Result<Vec<_>>>()?;
        self.pool.gather(handles)
    }

    /// A new distributed array from `f` applied to every partition on its worker (the results
    /// must agree on every axis after the first).
    pub fn map_partitions<U, F>(&self, f: F) -> Result<DistArray<U>>
    where
        U: Element,
        F: Fn(&mut WorkerCtx, &Array<T>) -> Result<Array<U>> + Send + Sync + 'static,
    {
        let parts = self.map_partitions_collect(f)?;
        let rest = check_rest(&parts)?;
        Ok(DistArray {
            pool: self.pool.clone(),
            parts: parts.into_iter().map(Arc::new).collect(),
            rest,
        })
    }

    /// The whole array in host memory (on [`Device::Cpu`]): each worker downloads its own
    /// partitions, side by side, and they are joined in order.
    pub fn gather(&self) -> Result<Array<T>> {
        let pieces = self.map_partitions_collect(|_, p| p.to_vec())?;
        let data: Vec<T> = pieces.into_iter().flatten().collect();
        Array::from_vec_on(data, self.shape(), &Device::Cpu)
    }

    /// The whole array on `device`: every partition is copied there by [`transfer`] (peer to
    /// peer between GPUs that allow it) and they are joined along axis 0 on it.
    pub fn gather_to(&self, device: &Device) -> Result<Array<T>> {
        if !device.is_cuda() {
            return self.gather();
        }
        let moved = self
            .parts
            .iter()
            .map(|p| transfer(p, *device).map(|t| t.array))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&Array<T>> = moved.iter().collect();
        gpukit::concatenate(&refs, 0)
    }

    /// The partitions, each shared (`Arc`) with any clone of this array.
    pub fn partitions(&self) -> &[Arc<Array<T>>] {
        &self.parts
    }

    /// Whether `other` is split the same way (same partition count, rows and devices), as
    /// elementwise operations between two distributed arrays need.
    pub fn same_partitioning<U: Element>(&self, other: &DistArray<U>) -> bool {
        self.partition_rows() == other.partition_rows()
            && self.partition_devices() == other.partition_devices()
            && self.rest == other.rest
    }
}

fn check_rest<T: Element>(parts: &[Array<T>]) -> Result<Vec<usize>> {
    let first = parts
        .first()
        .ok_or_else(|| Error::Other("a distributed array needs at least one partition".into()))?;
    if first.shape().is_empty() {
        return Err(Error::Shape(
            "partitions need at least one axis (they are stacked along axis 0)".into(),
        ));
    }
    let rest = first.shape()[1..].to_vec();
    for (i, p) in parts.iter().enumerate() {
        if p.shape().is_empty() || p.shape()[1..] != rest[..] {
            return Err(Error::Shape(format!(
                "partition {i} has shape {:?}, but partition 0 has {:?}: partitions must agree \
                 after axis 0",
                p.shape(),
                first.shape()
            )));
        }
    }
    Ok(rest)
}

#[cfg(test)]
mod tests;
