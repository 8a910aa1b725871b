//! Sorting: `sort`, `argsort` along the last axis and `sort_axis`, `argsort_axis` along any.
//!
//! Both return new arrays on the array's device. The order is NumPy's: ascending, NaN last
//! (every NaN, whatever its sign or payload), -0.0 equal to +0.0. `argsort` is **stable**
//! (equal elements keep their original order, as NumPy's `kind="stable"`), so its result is
//! the same on every backend; its indices are `i64`, NumPy's `intp`. `sort` writes -0.0 before
//! +0.0 (they are equal, so this is sorted; NumPy may give either order) and NaN as the
//! canonical quiet NaN.
//!
//! Files: `keys` (values to unsigned keys that order like them, on the host), `cpu` (the CPU
//! backend: rayon over rows), this file (axes and backends). The CUDA kernels are in
//! `array/kernels/sort.rs`.

mod cpu;
mod keys;
#[cfg(test)]
mod tests;

use super::kernels::sort::{self as kernels, SortOut};
use super::{Array, Storage};
use crate::element::{Element, Numeric};
use crate::error::{Error, Result};

/// The shape split around the sorted axis: `outer` rows before it, `n` along it, `inner`
/// elements after it (C order: the sorted axis has stride `inner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    outer: usize,
    n: usize,
    inner: usize,
}

/// The axis `axis` of `shape` (negative counts from the end, as NumPy's), or an error naming
/// both.
fn resolve_axis(what: &str, shape: &[usize], axis: isize) -> Result<Split> {
    let ndim = shape.len() as isize;
    let a = if axis < 0 { axis + ndim } else { axis };
    if !(0..ndim).contains(&a) {
        let valid = if ndim == 0 {
            "a 0-d array has no axis to sort along".to_string()
        } else {
            format!("valid axes are {}..={}", -ndim, ndim - 1)
        };
        return Err(Error::Shape(format!(
            "{what}: axis {axis} is out of range for an array of shape {shape:?} ({} dimension(s); {valid})",
            shape.len()
        )));
    }
    let a = a as usize;
    Ok(Split {
        outer: shape[..a].iter().product(),
        n: shape[a],
        inner: shape[a + 1..].iter().product(),
    })
}

impl<T: Numeric> Array<T> {
    /// A sorted copy along the last axis (each row sorted independently), as NumPy's
    /// `np.sort(a)`: ascending, NaN last. An error for a 0-d array.
    ///
    /// ```
    /// # use gpukit::prelude::*;
    /// # fn main() -> gpukit::Result<()> {
    /// let a = Array::from_vec_on(vec![3.0, f64::NAN, -1.0, 2.0, 0.5, 1.0], (2, 3), &Device::Cpu)?;
    /// let s = a.sort()?.to_vec()?;
    /// assert_eq!(s[..2], [-1.0, 3.0]);
    /// assert!(s[2].is_nan());
    /// assert_eq!(s[3..], [0.5, 1.0, 2.0]);
    /// assert_eq!(a.argsort()?.to_vec()?, [2, 0, 1, 1, 2, 0]);
    /// # Ok(()) }
    /// ```
    pub fn sort(&self) -> Result<Array<T>> {
        self.sort_axis(-1)
    }

    /// The indices that sort each row along the last axis, as NumPy's
    /// `np.argsort(a, kind="stable")`: `i64` positions inside the row, equal elements in their
    /// original order, NaN last. An error for a 0-d array.
    pub fn argsort(&self) -> Result<Array<i64>> {
        self.argsort_axis(-1)
    }

    /// A sorted copy along `axis` (negative counts from the end: `-1` is the last axis), as
    /// `np.sort(a, axis=axis)`. An axis outside the array is an error naming it and the shape.
    pub fn sort_axis(&self, axis: isize) -> Result<Array<T>> {
        let split = resolve_axis("sort", self.shape(), axis)?;
        self.sort_along(split, |a, rows, len| a.sort_rows_flat(rows, len))
    }

    /// The indices that sort the array along `axis` (stable, `i64`), as
    /// `np.argsort(a, axis=axis, kind="stable")`: each position of the result holds the index
    /// along `axis` of the element that goes there. An axis outside the array is an error
    /// naming it and the shape.
    pub fn argsort_axis(&self, axis: isize) -> Result<Array<i64>> {
        let split = resolve_axis("argsort", self.shape(), axis)?;
        self.sort_along(split, |a, rows, len| a.argsort_rows_flat(rows, len))
    }

    /// Applies a sort of contiguous rows along `split`'s axis: directly when it is the last
    /// one (`inner == 1`), else on the transposed copy `(outer, inner, n)`, transposed back.
    fn sort_along<U: Element>(
        &self,
        split: Split,
        rows_op: impl FnOnce(&Array<T>, usize, usize) -> Result<Array<U>>,
    ) -> Result<Array<U>> {
        let Split { outer, n, inner } = split;
        let shape = self.shape().to_vec();
        if inner == 1 || n <= 1 || self.is_empty() {
            let rows = self.size().checked_div(n).unwrap_or(0);
            return rows_op(self, rows, n)?.into_shape(shape);
        }
        let moved = self.sort_transposed(outer, n, inner)?;
        let sorted = rows_op(&moved, outer * inner, n)?;
        sorted.sort_transposed(outer, inner, n)?.into_shape(shape)
    }

    /// Each row of `len` sorted (the array holds `rows * len` elements), as a flat array.
    fn sort_rows_flat(&self, rows: usize, len: usize) -> Result<Array<T>> {
        match self.storage() {
            Storage::Cpu(v) => {
                Array::from_storage(vec![rows * len], Storage::Cpu(cpu::sort(v, len)?))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the sort queued right after.
                let mut out = unsafe { backend.alloc::<T>(rows * len)? };
                kernels::sort_rows(backend, slice, rows, len, SortOut::Values(&mut out))?;
                Array::from_storage(
                    vec![rows * len],
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }

    /// The stable sorting indices of each row of `len`, as a flat array.
    fn argsort_rows_flat(&self, rows: usize, len: usize) -> Result<Array<i64>> {
        match self.storage() {
            Storage::Cpu(v) => {
                Array::from_storage(vec![rows * len], Storage::Cpu(cpu::argsort(v, len)?))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the sort queued right after.
                let mut out = unsafe { backend.alloc::<i64>(rows * len)? };
                kernels::sort_rows(backend, slice, rows, len, SortOut::Indices(&mut out))?;
                Array::from_storage(
                    vec![rows * len],
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }
}

impl<T: Element> Array<T> {
    /// The C-order elements of this array read as `batches` matrices of `r x c`, each
    /// transposed: a new flat array of `batches * c * r` elements on the same device.
    fn sort_transposed(&self, batches: usize, r: usize, c: usize) -> Result<Array<T>> {
        let n = batches * r * c;
        match self.storage() {
            Storage::Cpu(v) => {
                Array::from_storage(vec![n], Storage::Cpu(cpu::transpose(v, batches, r, c)?))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the transpose queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                kernels::transpose(backend, slice, &mut out, batches, r, c)?;
                Array::from_storage(
                    vec![n],
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }
}
