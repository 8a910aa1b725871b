//! Reductions over all elements: sum, mean, min, max.

use super::kernels;
use super::op::ReduceOp;
use super::{Array, Storage};
use crate::backend::cpu;
use crate::element::{Element, Float, Numeric};
use crate::error::{Error, Result};

/// A reduction of host elements: vectorised and parallel (see `backend::cpu::reduce_lanes`);
/// min and max propagate NaN as `elem_min`/`elem_max` do (an array with a NaN takes the
/// element-by-element fold, which gives exactly their NaN).
fn cpu_reduce<T: Numeric>(v: &[T], op: ReduceOp) -> T {
    let identity = op.identity::<T>();
    let (value, nan) = match op {
        ReduceOp::Sum => return cpu::reduce_lanes(v, identity, |a: T, b: T| a.elem_add(b)),
        ReduceOp::Max => cpu::extremum::<T, true>(v, identity),
        ReduceOp::Min => cpu::extremum::<T, false>(v, identity),
    };
    if !nan {
        return value;
    }
    cpu::reduce(
        v,
        identity,
        |acc, &x| op.apply(acc, x),
        |a, b| op.apply(a, b),
    )
}

impl<T: Numeric> Array<T> {
    fn reduce_all(&self, op: ReduceOp) -> Result<T> {
        let n = self.size();
        match self.storage() {
            Storage::Cpu(v) => {
                crate::backend::cpu_capture::forbid_in_capture(&format!(
                    "a reduction ({}) returning a value to the host",
                    op.name()
                ))?;
                Ok(cpu_reduce(v, op))
            }
            Storage::Cuda { backend, slice } => {
                kernels::reduce(backend, op, slice, n, op.identity::<T>())
            }
        }
    }

    /// The sum of all elements (integers wrap on overflow; 0 for an empty array).
    pub fn sum(&self) -> Result<T> {
        self.reduce_all(ReduceOp::Sum)
    }

    /// The smallest element (NaN if any element is NaN); an error for an empty array.
    pub fn min(&self) -> Result<T> {
        self.nonempty("min")?;
        self.reduce_all(ReduceOp::Min)
    }

    /// The largest element (NaN if any element is NaN); an error for an empty array.
    pub fn max(&self) -> Result<T> {
        self.nonempty("max")?;
        self.reduce_all(ReduceOp::Max)
    }

    fn nonempty(&self, what: &str) -> Result<()> {
        if self.is_empty() {
            return Err(Error::Shape(format!(
                "{what} of an empty array (shape {:?}) is undefined",
                self.shape()
            )));
        }
        Ok(())
    }
}

impl<T: Element> Array<T> {
    /// Number of elements that are not zero (not `false` for bool), as NumPy's `count_nonzero`.
    pub fn count_nonzero(&self) -> Result<u64> {
        self.ne(T::zero())?.astype::<u64>()?.sum()
    }
}

impl<T: Float> Array<T> {
    /// The mean of all elements (NaN for an empty array). For integer arrays use
    /// `a.astype::<f64>()?.mean()`.
    pub fn mean(&self) -> Result<T> {
        let n = self.size();
        let s = self.sum()?;
        Ok(T::from_f64(s.to_f64() / n as f64))
    }
}
