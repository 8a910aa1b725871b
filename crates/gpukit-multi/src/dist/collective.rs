//! Collectives between the partitions of a distributed array with one partition per worker
//! (data-parallel style: each worker's block of rows is one rank's buffer).

use super::DistArray;
use crate::collective::{CollectiveElement, ReduceOp};
use gpukit::{Error, Result};

impl<T: CollectiveElement> DistArray<T> {
    /// Checks one partition per worker, all of one shape, and starts the pool's collectives.
    fn check_collective(&self, what: &str) -> Result<()> {
        let n = self.pool.len();
        if self.num_partitions() != n {
            return Err(Error::Other(format!(
                "{what} needs one partition per worker: {} partitions on {n} workers",
                self.num_partitions()
            )));
        }
        let rows = self.partition_rows();
        if rows.iter().any(|r| *r != rows[0]) {
            return Err(Error::Shape(format!(
                "{what} needs partitions of one shape; their rows are {rows:?}"
            )));
        }
        self.pool.init_collectives()?;
        Ok(())
    }

    /// Every partition replaced by the elementwise `op` of all partitions (one per worker, of
    /// one shape), as a new distributed array: an all-reduce with each worker as a rank.
    pub fn all_reduce(&self, op: ReduceOp) -> Result<DistArray<T>> {
        self.check_collective("all_reduce")?;
        self.map_partitions(move |ctx, p| {
            let mut a = p.try_clone()?;
            ctx.comm()?.all_reduce(&mut a, op)?;
            Ok(a)
        })
    }

    /// Every partition replaced by a copy of partition `root`.
    pub fn broadcast(&self, root: usize) -> Result<DistArray<T>> {
        self.check_collective("broadcast")?;
        self.map_partitions(move |ctx, p| {
            let mut a = p.try_clone()?;
            ctx.comm()?.broadcast(&mut a, root)?;
            Ok(a)
        })
    }

    /// Every worker gets all partitions stacked along axis 0 (each partition becomes the whole
    /// array; the result has `len()` times the rows).
    pub fn all_gather(&self) -> Result<DistArray<T>> {
        self.check_collective("all_gather")?;
        self.map_partitions(|ctx, p| ctx.comm()?.all_gather(p))
    }

    /// Partition `i` becomes block `i` (of `len()` equal blocks along axis 0) of the
    /// elementwise `op` of all partitions.
    pub fn reduce_scatter(&self, op: ReduceOp) -> Result<DistArray<T>> {
        self.check_collective("reduce_scatter")?;
        self.map_partitions(move |ctx, p| ctx.comm()?.reduce_scatter(p, op))
    }
}
