//! Elementwise arithmetic on distributed arrays: one job per partition, on its worker.

use super::DistArray;
use gpukit::{Array, Error, Numeric, Result};
use std::sync::Arc;

impl<T: Numeric> DistArray<T> {
    /// `self op scalar` on every partition.
    fn scalar_op(&self, s: T, f: fn(&Array<T>, T) -> Result<Array<T>>) -> Result<DistArray<T>> {
        self.map_partitions(move |_, p| f(p, s))
    }

    /// `self op other` partition by partition; the two must be split the same way.
    fn array_op(
        &self,
        other: &DistArray<T>,
        what: &str,
        f: fn(&Array<T>, &Array<T>) -> Result<Array<T>>,
    ) -> Result<DistArray<T>> {
        if !self.same_partitioning(other) {
            return Err(Error::Shape(format!(
                "{what} needs two distributed arrays split the same way: rows {:?} on {:?} vs \
                 rows {:?} on {:?}",
                self.partition_rows(),
                self.partition_devices(),
                other.partition_rows(),
                other.partition_devices()
            )));
        }
        let handles = self
            .parts
            .iter()
            .zip(&other.parts)
            .enumerate()
            .map(|(i, (a, b))| {
                let (a, b) = (a.clone(), b.clone());
                self.pool.submit(self.worker_of(i), move |_| f(&a, &b))
            })
            .collect::<Result<Vec<_>>>()?;
        let parts = self.pool.gather(handles)?;
        Ok(DistArray {
            pool: self.pool.clone(),
            parts: parts.into_iter().map(Arc::new).collect(),
            rest: self.rest.clone(),
        })
    }
}

macro_rules! dist_binary {
    ($Trait:ident, $method:ident, $op:tt) => {
        impl<T: Numeric> std::ops::$Trait<T> for &DistArray<T> {
            type Output = Result<DistArray<T>>;
            /// Elementwise with a scalar, on every partition.
            fn $method(self, rhs: T) -> Result<DistArray<T>> {
                self.scalar_op(rhs, |p, s| p $op s)
            }
        }
        impl<T: Numeric> std::ops::$Trait<T> for DistArray<T> {
            type Output = Result<DistArray<T>>;
            /// Elementwise with a scalar, on every partition.
            fn $method(self, rhs: T) -> Result<DistArray<T>> {
                (&self).$method(rhs)
            }
        }
        impl<T: Numeric> std::ops::$Trait<&DistArray<T>> for &DistArray<T> {
            type Output = Result<DistArray<T>>;
            /// Elementwise with a distributed array split the same way.
            fn $method(self, rhs: &DistArray<T>) -> Result<DistArray<T>> {
                self.array_op(rhs, stringify!($method), |a, b| a $op b)
            }
        }
        impl<T: Numeric> std::ops::$Trait<&DistArray<T>> for DistArray<T> {
            type Output = Result<DistArray<T>>;
            /// Elementwise with a distributed array split the same way.
            fn $method(self, rhs: &DistArray<T>) -> Result<DistArray<T>> {
                (&self).$method(rhs)
            }
        }
    };
}

dist_binary!(Add, add, +);
dist_binary!(Sub, sub, -);
dist_binary!(Mul, mul, *);
dist_binary!(Div, div, /);
