//! Reductions along an axis (`sum_axis`, `mean_axis`, `var_axis`, `argmax_axis`, ...,
//! with [`keepdims`](super::axis::keepdims)), the whole-array reductions that NumPy has and
//! `reduce` does not (`prod`, `var`, `std`, `argmin`, `argmax`, `any`, `all`), and cumulative
//! sums and products. On a GPU they run the kernels of `kernels/axes`; on the CPU the same folds in parallel.
//!
//! NaN behaves as in NumPy: `min`/`max` propagate it, `argmin`/`argmax` give the first NaN,
//! ties give the first occurrence.

use super::axis::{split, IntoAxis, Split};
use super::kernels;
use super::{Array, Storage};
use crate::backend::cpu;
use crate::element::{DType, Element, Float, Numeric};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// A reduction along an axis (names shared with the CUDA kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AxisOp {
    Sum,
    Prod,
    Min,
    Max,
    ArgMin,
    ArgMax,
    /// Sum of squared deviations from a centre given per result (for `var`).
    SqDev,
    /// Number of non-zero elements (as `u64`).
    Count,
    Any,
    All,
}

impl AxisOp {
    /// All of them, in kernel-source order.
    pub(crate) const ALL: [AxisOp; 10] = [
        AxisOp::Sum,
        AxisOp::Prod,
        AxisOp::Min,
        AxisOp::Max,
        AxisOp::ArgMin,
        AxisOp::ArgMax,
        AxisOp::SqDev,
        AxisOp::Count,
        AxisOp::Any,
        AxisOp::All,
    ];

    /// Kernel name stem.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AxisOp::Sum => "sum",
            AxisOp::Prod => "prod",
            AxisOp::Min => "min",
            AxisOp::Max => "max",
            AxisOp::ArgMin => "argmin",
            AxisOp::ArgMax => "argmax",
            AxisOp::SqDev => "sqdev",
            AxisOp::Count => "count",
            AxisOp::Any => "any",
            AxisOp::All => "all",
        }
    }

    /// Whether the operation exists for elements of type `d`.
    pub(crate) fn applies_to(self, d: DType) -> bool {
        match self {
            AxisOp::Count | AxisOp::Any | AxisOp::All => true,
            AxisOp::SqDev => d.is_float(),
            _ => d != DType::Bool,
        }
    }

    /// The accumulator (and result) type for elements of type `d`.
    pub(crate) fn acc_dtype(self, d: DType) -> DType {
        match self {
            AxisOp::Count => DType::U64,
            AxisOp::Any | AxisOp::All => DType::Bool,
            _ => d,
        }
    }

    /// Whether the result is an index (with the value carried along).
    pub(crate) fn is_arg(self) -> bool {
        matches!(self, AxisOp::ArgMin | AxisOp::ArgMax)
    }
}

/// Elements of a row a CPU task folds at once.
const ROW_TASK: usize = 1 << 16;
/// Columns a CPU task folds at once (along a leading axis).
const COL_TASK: usize = 256;

/// The `(outer, len, inner)` fold on the host: result `r = o * inner + k` is
/// `comb(...comb(comb(init, map(x0, 0, r)), map(x1, 1, r))..., map(x_{len-1}, len - 1, r))`,
/// rows in parallel tasks (long rows in tasks of [`ROW_TASK`], combined in order), columns in
/// tasks of [`COL_TASK`] that run down the axis.
fn cpu_along<T: Copy + Sync, A: Copy + Send + Sync>(
    v: &[T],
    (outer, len, inner): (usize, usize, usize),
    init: A,
    map: impl Fn(T, usize, usize) -> A + Sync,
    comb: impl Fn(A, A) -> A + Sync,
) -> Result<Vec<A>> {
    let mut out = cpu::alloc_filled(outer * inner, init)?;
    if out.is_empty() {
        return Ok(out);
    }
    let fold = |xs: &[T], j0: usize, r: usize| {
        xs.iter()
            .enumerate()
            .fold(init, |a, (j, &x)| comb(a, map(x, j0 + j, r)))
    };
    if inner == 1 {
        out.par_iter_mut().enumerate().for_each(|(o, res)| {
            let row = &v[o * len..(o + 1) * len];
            *res = if len <= ROW_TASK {
                fold(row, 0, o)
            } else {
                let parts: Vec<A> = row
                    .par_chunks(ROW_TASK)
                    .enumerate()
                    .map(|(c, xs)| fold(xs, c * ROW_TASK, o))
                    .collect();
                parts.into_iter().fold(init, &comb)
            };
        });
    } else {
        out.par_chunks_mut(inner).enumerate().for_each(|(o, res)| {
            res.par_chunks_mut(COL_TASK)
                .enumerate()
                .for_each(|(b, cols)| {
                    let k0 = b * COL_TASK;
                    for j in 0..len {
                        let xs = &v[(o * len + j) * inner + k0..][..cols.len()];
                        for (i, (c, &x)) in cols.iter_mut().zip(xs).enumerate() {
                            *c = comb(*c, map(x, j, o * inner + k0 + i));
                        }
                    }
                });
        });
    }
    Ok(out)
}

/// Whether `(b, ib)` comes strictly before `(a, ia)` in the order of argmin (`MAX`: argmax):
/// NaN first, then the smaller (larger) value, then the smaller index; an index below 0 is
/// "no element yet" and comes last.
#[allow(clippy::eq_op)]
fn before<T: PartialOrd + Copy, const MAX: bool>((b, ib): (T, i64), (a, ia): (T, i64)) -> bool {
    if ib < 0 {
        return false;
    }
    if ia < 0 {
        return true;
    }
    let (bn, an) = (b != b, a != a);
    if bn || an {
        return bn && (!an || ib < ia);
    }
    if if MAX { b > a } else { b < a } {
        return true;
    }
    b == a && ib < ia
}

/// The arg-reduction on the host: indices along the axis.
fn cpu_arg<T: Numeric, const MAX: bool>(v: &[T], s: (usize, usize, usize)) -> Result<Vec<i64>> {
    let init = (if MAX { T::MIN_VALUE } else { T::MAX_VALUE }, -1i64);
    let pairs = cpu_along(
        v,
        s,
        init,
        |x, j, _| (x, j as i64),
        |a, b| if before::<T, MAX>(b, a) { b } else { a },
    )?;
    Ok(pairs.into_iter().map(|(_, i)| i).collect())
}

impl<T: Element> Array<T> {
    /// The reduction `op` along `s`'s axis: results of type `A` shaped `s.reduced`, and their
    /// indices for arg-reductions; `cpu` computes the results on the host. `center` (SqDev)
    /// holds one value per result, on this array's device.
    fn along<A: Element>(
        &self,
        op: AxisOp,
        s: &Split,
        center: Option<&Array<A>>,
        cpu: impl FnOnce(&[T], (usize, usize, usize)) -> Result<Vec<A>>,
    ) -> Result<Array<A>> {
        self.storage().ensure_usable()?;
        let dims = (s.outer, s.len, s.inner);
        match self.storage() {
            Storage::Cpu(v) => Array::from_storage(s.reduced.clone(), Storage::Cpu(cpu(v, dims)?)),
            Storage::Cuda { backend, slice } => {
                let center = match center.map(|c| c.storage()) {
                    Some(Storage::Cuda { slice, .. }) => Some(slice),
                    Some(Storage::Cpu(_)) => {
                        return Err(Error::Other(
                            "internal: a GPU reduction's centre is on the CPU".into(),
                        ))
                    }
                    None => None,
                };
                let slice = kernels::reduce_axis::<T, A>(backend, op, slice, dims, center)?.0;
                Array::from_storage(
                    s.reduced.clone(),
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice,
                    },
                )
            }
        }
    }

    /// The arg-reduction `op` along `s`'s axis: indices shaped `s.reduced`.
    fn arg_along(
        &self,
        op: AxisOp,
        s: &Split,
        cpu: impl FnOnce(&[T], (usize, usize, usize)) -> Result<Vec<i64>>,
    ) -> Result<Array<i64>> {
        self.storage().ensure_usable()?;
        let dims = (s.outer, s.len, s.inner);
        match self.storage() {
            Storage::Cpu(v) => Array::from_storage(s.reduced.clone(), Storage::Cpu(cpu(v, dims)?)),
            Storage::Cuda { backend, slice } => {
                let (_, idx) = kernels::reduce_axis::<T, T>(backend, op, slice, dims, None)?;
                let idx = idx.ok_or_else(|| Error::Other("internal: no indices".into()))?;
                Array::from_storage(
                    s.reduced.clone(),
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: idx,
                    },
                )
            }
        }
    }

    /// The axis of `arg` on this array, checked (`what`: the operation, for errors).
    fn axis_split(&self, arg: impl IntoAxis, what: &str) -> Result<Split> {
        split(self.shape(), arg.into_axis(), what)
    }

    /// This array seen as one axis (a whole-array reduction).
    fn flat_split(&self) -> Split {
        let n = self.size();
        Split {
            axis: 0,
            outer: 1,
            len: n,
            inner: 1,
            reduced: vec![],
        }
    }

    /// An error for reducing an empty axis with an operation that has no identity.
    fn nonempty_axis(&self, s: &Split, what: &str) -> Result<()> {
        if s.len == 0 && s.outer * s.inner > 0 {
            return Err(Error::Shape(format!(
                "{what} along axis {} of an array of shape {:?}: the axis is empty",
                s.axis,
                self.shape()
            )));
        }
        if s.len == 0 && s.reduced.is_empty() {
            return Err(Error::Shape(format!(
                "{what} of an empty array (shape {:?}) is undefined",
                self.shape()
            )));
        }
        Ok(())
    }

    /// Whether any element along `axis` is non-zero (`true` for bool), as NumPy's
    /// `a.any(axis=...)`: a bool array without that axis (or with it as 1, see
    /// [`keepdims`](crate::keepdims)).
    pub fn any_axis(&self, axis: impl IntoAxis) -> Result<Array<bool>> {
        let s = self.axis_split(axis, "any")?;
        self.along(AxisOp::Any, &s, None, |v, d| {
            cpu_along(v, d, false, |x, _, _| x != T::zero(), |a, b| a || b)
        })
    }

    /// Whether every element along `axis` is non-zero, as NumPy's `a.all(axis=...)`.
    pub fn all_axis(&self, axis: impl IntoAxis) -> Result<Array<bool>> {
        let s = self.axis_split(axis, "all")?;
        self.along(AxisOp::All, &s, None, |v, d| {
            cpu_along(v, d, true, |x, _, _| x != T::zero(), |a, b| a && b)
        })
    }

    /// Number of non-zero elements along `axis`, as NumPy's `count_nonzero(a, axis=...)`.
    pub fn count_nonzero_axis(&self, axis: impl IntoAxis) -> Result<Array<u64>> {
        let s = self.axis_split(axis, "count_nonzero")?;
        self.along(AxisOp::Count, &s, None, |v, d| {
            cpu_along(v, d, 0u64, |x, _, _| (x != T::zero()) as u64, |a, b| a + b)
        })
    }

    /// Whether any element is non-zero (`false` for an empty array).
    pub fn any(&self) -> Result<bool> {
        let s = self.flat_split();
        self.along(AxisOp::Any, &s, None, |v, d| {
            cpu_along(v, d, false, |x, _, _| x != T::zero(), |a, b| a || b)
        })?
        .item()
    }

    /// Whether every element is non-zero (`true` for an empty array).
    pub fn all(&self) -> Result<bool> {
        let s = self.flat_split();
        self.along(AxisOp::All, &s, None, |v, d| {
            cpu_along(v, d, true, |x, _, _| x != T::zero(), |a, b| a && b)
        })?
        .item()
    }
}

impl<T: Numeric> Array<T> {
    /// Sum along `axis` (integers wrap), as NumPy's `a.sum(axis=...)`; `keepdims(axis)` keeps
    /// it as a dimension of length 1. An empty axis sums to 0.
    ///
    /// ```
    /// # use gpukit::{Array, Device, keepdims};
    /// let a = Array::<f64>::arange_on(0.0, 6.0, &Device::Cpu)?.reshape([2, 3])?;
    /// assert_eq!(a.sum_axis(0)?.to_vec()?, vec![3.0, 5.0, 7.0]);
    /// assert_eq!(a.sum_axis(-1)?.to_vec()?, vec![3.0, 12.0]);
    /// assert_eq!(a.sum_axis(keepdims(1))?.shape(), &[2, 1]);
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn sum_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "sum")?;
        self.sum_split(&s)
    }

    fn sum_split(&self, s: &Split) -> Result<Array<T>> {
        self.along(AxisOp::Sum, s, None, |v, d| {
            cpu_along(v, d, T::zero(), |x, _, _| x, |a: T, b| a.elem_add(b))
        })
    }

    /// Product along `axis` (integers wrap); an empty axis gives 1.
    pub fn prod_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "prod")?;
        self.prod_split(&s)
    }

    fn prod_split(&self, s: &Split) -> Result<Array<T>> {
        self.along(AxisOp::Prod, s, None, |v, d| {
            cpu_along(v, d, T::one(), |x, _, _| x, |a: T, b| a.elem_mul(b))
        })
    }

    /// Smallest element along `axis` (NaN if one is NaN); an error for an empty axis.
    pub fn min_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "min")?;
        self.nonempty_axis(&s, "min")?;
        self.along(AxisOp::Min, &s, None, |v, d| {
            cpu_along(v, d, T::MAX_VALUE, |x, _, _| x, |a: T, b| a.elem_min(b))
        })
    }

    /// Largest element along `axis` (NaN if one is NaN); an error for an empty axis.
    pub fn max_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "max")?;
        self.nonempty_axis(&s, "max")?;
        self.along(AxisOp::Max, &s, None, |v, d| {
            cpu_along(v, d, T::MIN_VALUE, |x, _, _| x, |a: T, b| a.elem_max(b))
        })
    }

    /// Index of the smallest element along `axis` (the first one; the first NaN if any), as
    /// NumPy's `a.argmin(axis=...)`; an error for an empty axis.
    pub fn argmin_axis(&self, axis: impl IntoAxis) -> Result<Array<i64>> {
        let s = self.axis_split(axis, "argmin")?;
        self.nonempty_axis(&s, "argmin")?;
        self.arg_along(AxisOp::ArgMin, &s, cpu_arg::<T, false>)
    }

    /// Index of the largest element along `axis` (the first one; the first NaN if any).
    pub fn argmax_axis(&self, axis: impl IntoAxis) -> Result<Array<i64>> {
        let s = self.axis_split(axis, "argmax")?;
        self.nonempty_axis(&s, "argmax")?;
        self.arg_along(AxisOp::ArgMax, &s, cpu_arg::<T, true>)
    }

    /// The product of all elements (integers wrap; 1 for an empty array).
    pub fn prod(&self) -> Result<T> {
        self.prod_split(&self.flat_split())?.item()
    }

    /// Flat index (C order) of the smallest element (the first; the first NaN if any), as
    /// NumPy's `a.argmin()`; an error for an empty array.
    pub fn argmin(&self) -> Result<usize> {
        let s = self.flat_split();
        self.nonempty_axis(&s, "argmin")?;
        Ok(self
            .arg_along(AxisOp::ArgMin, &s, cpu_arg::<T, false>)?
            .item()? as usize)
    }

    /// Flat index (C order) of the largest element (the first; the first NaN if any).
    pub fn argmax(&self) -> Result<usize> {
        let s = self.flat_split();
        self.nonempty_axis(&s, "argmax")?;
        Ok(self
            .arg_along(AxisOp::ArgMax, &s, cpu_arg::<T, true>)?
            .item()? as usize)
    }

    /// Cumulative sum along `axis` (same shape; integers wrap), as NumPy's
    /// `a.cumsum(axis=...)`.
    pub fn cumsum_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "cumsum")?;
        self.scan_split(&s, self.shape().to_vec(), false)
    }

    /// Cumulative sum of the elements in C order, as a 1-d array (NumPy's `a.cumsum()`).
    pub fn cumsum(&self) -> Result<Array<T>> {
        self.scan_split(&self.flat_split(), vec![self.size()], false)
    }

    /// Cumulative product along `axis` (same shape; integers wrap), as NumPy's
    /// `a.cumprod(axis=...)`.
    pub fn cumprod_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "cumprod")?;
        self.scan_split(&s, self.shape().to_vec(), true)
    }

    /// Cumulative product of the elements in C order, as a 1-d array (NumPy's `a.cumprod()`).
    pub fn cumprod(&self) -> Result<Array<T>> {
        self.scan_split(&self.flat_split(), vec![self.size()], true)
    }

    /// The inclusive scan along `s`'s axis: sums, or products when `prod`.
    fn scan_split(&self, s: &Split, shape: Vec<usize>, prod: bool) -> Result<Array<T>> {
        self.storage().ensure_usable()?;
        let dims = (s.outer, s.len, s.inner);
        match self.storage() {
            Storage::Cpu(v) => {
                let out = if prod {
                    cpu_scan(v, dims, T::one(), T::elem_mul)?
                } else {
                    cpu_scan(v, dims, T::zero(), T::elem_add)?
                };
                Array::from_storage(shape, Storage::Cpu(out))
            }
            Storage::Cuda { backend, slice } => {
                let out = kernels::scan_axis(backend, slice, dims, prod)?;
                Array::from_storage(
                    shape,
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
        }
    }
}

/// Inclusive scans (`op` from `id`: sums, products) along the middle of `(outer, len, inner)`,
/// on the host.
fn cpu_scan<T: Numeric>(
    v: &[T],
    (_, len, inner): (usize, usize, usize),
    id: T,
    op: fn(T, T) -> T,
) -> Result<Vec<T>> {
    let mut out = cpu::alloc_filled(v.len(), id)?;
    if out.is_empty() {
        return Ok(out);
    }
    out.par_chunks_mut(len * inner)
        .zip(v.par_chunks(len * inner))
        .for_each(|(o, x)| {
            if inner == 1 {
                let mut acc = id;
                for (o, &x) in o.iter_mut().zip(x) {
                    acc = op(acc, x);
                    *o = acc;
                }
            } else {
                o[..inner].copy_from_slice(&x[..inner]);
                for j in 1..len {
                    let (done, rest) = o.split_at_mut(j * inner);
                    let prev = &done[(j - 1) * inner..];
                    for ((o, &p), &x) in rest[..inner].iter_mut().zip(prev).zip(&x[j * inner..]) {
                        *o = op(p, x);
                    }
                }
            }
        });
    Ok(out)
}

impl<T: Float> Array<T> {
    /// Mean along `axis` (NaN for an empty axis), as NumPy's `a.mean(axis=...)`.
    pub fn mean_axis(&self, axis: impl IntoAxis) -> Result<Array<T>> {
        let s = self.axis_split(axis, "mean")?;
        let mut sum = self.sum_split(&s)?;
        sum.div_in_place(T::from_f64(s.len as f64))?;
        Ok(sum)
    }

    /// Variance along `axis` with `ddof` delta degrees of freedom (divides by `len - ddof`:
    /// 0 for NumPy's default, 1 for the unbiased estimate), computed in two passes (mean, then
    /// squared deviations) as NumPy does.
    pub fn var_axis(&self, axis: impl IntoAxis, ddof: usize) -> Result<Array<T>> {
        let s = self.axis_split(axis, "var")?;
        self.var_split(&s, ddof, false)
    }

    /// Standard deviation along `axis` with `ddof` delta degrees of freedom (the square root
    /// of [`Array::var_axis`]).
    pub fn std_axis(&self, axis: impl IntoAxis, ddof: usize) -> Result<Array<T>> {
        let s = self.axis_split(axis, "std")?;
        self.var_split(&s, ddof, true)
    }

    /// Variance of all elements with `ddof` delta degrees of freedom (NaN for an empty array).
    pub fn var(&self, ddof: usize) -> Result<T> {
        self.var_split(&self.flat_split(), ddof, false)?.item()
    }

    /// Standard deviation of all elements with `ddof` delta degrees of freedom.
    pub fn std(&self, ddof: usize) -> Result<T> {
        Ok(self.var(ddof)?.elem_sqrt())
    }

    /// The variance along the split's axis (its square root with `root`). Long rows of a GPU
    /// array, enough of them to fill the GPU, take one fused launch
    /// (`kernels::axes::var_rows`); everything else takes the passes below.
    fn var_split(&self, s: &Split, ddof: usize, root: bool) -> Result<Array<T>> {
        let dof = (s.len as f64 - ddof as f64).max(0.0);
        if let Storage::Cuda { backend, slice } = self.storage() {
            let enough_rows = s.outer >= 2 * backend.properties().multiprocessors.max(1) as usize;
            if s.inner == 1 && s.len >= kernels::BLOCK_ROWS_MIN && enough_rows {
                self.storage().ensure_usable()?;
                let out = kernels::var_rows(backend, slice, (s.outer, s.len), dof, root)?;
                return Array::from_storage(
                    s.reduced.clone(),
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                );
            }
        }
        let flat = Split {
            reduced: vec![s.outer * s.inner],
            ..s.clone()
        };
        let mut mean = self.sum_split(&flat)?;
        mean.div_in_place(T::from_f64(s.len as f64))?;
        let centre = mean.clone_host_if_cpu()?;
        let mut dev = self.along(AxisOp::SqDev, s, Some(&mean), |v, d| {
            let c = centre.as_deref().unwrap_or(&[]);
            cpu_along(
                v,
                d,
                T::zero(),
                |x, _, r| {
                    let e = x.elem_sub(c[r]);
                    e.elem_mul(e)
                },
                |a: T, b| a.elem_add(b),
            )
        })?;
        dev.div_in_place(T::from_f64(dof))?;
        if root {
            dev = dev.sqrt()?;
        }
        Ok(dev)
    }

    /// A copy of the elements when the array is on the CPU (`None` on a GPU).
    fn clone_host_if_cpu(&self) -> Result<Option<Vec<T>>> {
        match self.storage() {
            Storage::Cpu(v) => Ok(Some(v.clone())),
            Storage::Cuda { .. } => Ok(None),
        }
    }
}

#[cfg(test)]
#[path = "reduce_axis_tests.rs"]
mod tests;
