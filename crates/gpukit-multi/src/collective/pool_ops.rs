//! Collectives over a pool's workers: one array per worker in, one per worker out.

use super::{CollectiveElement, ReduceOp};
use crate::pool::DevicePool;
use gpukit::{Array, Error, Result};

impl DevicePool {
    /// Checks one array per worker, each on its worker's device, all of one shape (so that no
    /// rank can wait for a collective the others never join).
    fn check_parts<T: CollectiveElement>(&self, what: &str, parts: &[Array<T>]) -> Result<()> {
        if parts.len() != self.len() {
            return Err(Error::Other(format!(
                "{what}: {} arrays given for a pool of {} workers (one per worker)",
                parts.len(),
                self.len()
            )));
        }
        for (i, (p, d)) in parts.iter().zip(self.devices()).enumerate() {
            if p.device() != d {
                return Err(Error::DeviceMismatch(format!(
                    "{what}: array {i} is on {} but worker {i} runs on {d}",
                    p.device()
                )));
            }
            if p.shape() != parts[0].shape() {
                return Err(Error::Shape(format!(
                    "{what}: array {i} has shape {:?}, array 0 {:?}",
                    p.shape(),
                    parts[0].shape()
                )));
            }
        }
        Ok(())
    }

    fn run_collective<T, F>(&self, what: &str, parts: Vec<Array<T>>, f: F) -> Result<Vec<Array<T>>>
    where
        T: CollectiveElement,
        F: Fn(&crate::Communicator, Array<T>) -> Result<Array<T>> + Send + Sync + 'static,
    {
        self.check_parts(what, &parts)?;
        self.init_collectives()?;
        self.map(parts, move |ctx, a| f(ctx.comm()?, a))
    }

    /// All-reduce of one array per worker (array `i` on worker `i`): every output holds the
    /// elementwise `op` of all inputs. Through NCCL when the pool's collectives use it.
    pub fn all_reduce<T: CollectiveElement>(
        &self,
        parts: Vec<Array<T>>,
        op: ReduceOp,
    ) -> Result<Vec<Array<T>>> {
        self.run_collective("all_reduce", parts, move |c, mut a| {
            c.all_reduce(&mut a, op)?;
            Ok(a)
        })
    }

    /// Broadcast: every output is a copy of worker `root`'s array.
    pub fn broadcast<T: CollectiveElement>(
        &self,
        parts: Vec<Array<T>>,
        root: usize,
    ) -> Result<Vec<Array<T>>> {
        self.run_collective("broadcast", parts, move |c, mut a| {
            c.broadcast(&mut a, root)?;
            Ok(a)
        })
    }

    /// All-gather: every output is all inputs stacked along axis 0 in worker order.
    pub fn all_gather<T: CollectiveElement>(&self, parts: Vec<Array<T>>) -> Result<Vec<Array<T>>> {
        self.run_collective("all_gather", parts, |c, a| c.all_gather(&a))
    }

    /// Reduce-scatter: output `i` is block `i` (of `len()` equal blocks along axis 0) of the
    /// elementwise `op` of all inputs.
    pub fn reduce_scatter<T: CollectiveElement>(
        &self,
        parts: Vec<Array<T>>,
        op: ReduceOp,
    ) -> Result<Vec<Array<T>>> {
        self.run_collective("reduce_scatter", parts, move |c, a| {
            c.reduce_scatter(&a, op)
        })
    }
}
