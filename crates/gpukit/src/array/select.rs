//! Selecting by condition and mask, as NumPy does with `np.where(c, a, b)`, `a[mask]`,
//! `a[mask] = v` and `a[mask] = values`: [`Array::where_`], [`Array::masked`] (a 1-d array of
//! the selected elements, compacted on the GPU by a scan of the mask), [`Array::masked_fill`]
//! and [`Array::masked_assign`]. Operands have one shape and live on one device.

use super::kernels::{self, Operand};
use super::ops::{check_same, IntoRhs, Rhs};
use super::{Array, Storage};
use crate::backend::{cpu, cpu_capture};
use crate::element::Element;
use crate::error::{Error, Result};

/// A host operand of `where_`: its elements, or its scalar.
fn host_operand<'a, T: Element>(r: &Rhs<'a, T>) -> Result<(Option<&'a [T]>, T)> {
    match r {
        Rhs::Array(x) => match x.storage() {
            Storage::Cpu(v) => Ok((Some(v.as_slice()), T::zero())),
            Storage::Cuda { .. } => Err(Error::Other("internal: device checked".into())),
        },
        Rhs::Scalar(s) => Ok((None, *s)),
    }
}

/// A device operand of `where_`.
fn device_operand<'a, T: Element>(r: &Rhs<'a, T>) -> Result<Operand<'a, T>> {
    match r {
        Rhs::Array(x) => match x.storage() {
            Storage::Cuda { slice, .. } => Ok(Operand::Array(slice)),
            Storage::Cpu(_) => Err(Error::Other("internal: device checked".into())),
        },
        Rhs::Scalar(s) => Ok(Operand::Scalar(*s)),
    }
}

impl<T: Element> Array<T> {
    /// `a[i]` where `cond[i]`, else `b[i]` (each of `a` and `b` an array shaped like `cond` on
    /// its device, or a scalar), as NumPy's `np.where(cond, a, b)`.
    ///
    /// ```
    /// # use gpukit::{Array, Device};
    /// let x = Array::from_vec_on(vec![-2.0, 3.0, -1.0], [3], &Device::Cpu)?;
    /// let relu = Array::where_(&x.gt(0.0)?, &x, 0.0)?;
    /// assert_eq!(relu.to_vec()?, vec![0.0, 3.0, 0.0]);
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn where_<'a>(
        cond: &Array<bool>,
        a: impl IntoRhs<'a, T>,
        b: impl IntoRhs<'a, T>,
    ) -> Result<Array<T>> {
        let (a, b) = (a.into_rhs(), b.into_rhs());
        cond.storage().ensure_usable()?;
        for r in [&a, &b] {
            if let Rhs::Array(x) = r {
                check_same("where", cond, *x)?;
            }
        }
        let n = cond.size();
        let shape = cond.shape().to_vec();
        match cond.storage() {
            Storage::Cpu(c) => {
                let ((av, as_), (bv, bs)) = (host_operand(&a)?, host_operand(&b)?);
                let mut out = cpu::alloc_filled(n, T::zero())?;
                cpu::fill_indexed(&mut out, |i| {
                    if c[i] {
                        av.map_or(as_, |v| v[i])
                    } else {
                        bv.map_or(bs, |v| v[i])
                    }
                });
                Array::from_storage(shape, Storage::Cpu(out))
            }
            Storage::Cuda { backend, slice } => {
                let (oa, ob) = (device_operand(&a)?, device_operand(&b)?);
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                kernels::where_(backend, slice, oa, ob, &mut out, n)?;
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

    /// The elements where `mask` is true, in C order, as a new 1-d array (NumPy's `a[mask]`).
    /// On a GPU this waits for the mask's count (the result's length), as CuPy does.
    pub fn masked(&self, mask: &Array<bool>) -> Result<Array<T>> {
        check_same("masked", self, mask)?;
        let n = self.size();
        match (self.storage(), mask.storage()) {
            (Storage::Cpu(a), Storage::Cpu(m)) => {
                let out: Vec<T> = a
                    .iter()
                    .zip(m)
                    .filter(|(_, &m)| m)
                    .map(|(&x, _)| x)
                    .collect();
                Array::from_storage(vec![out.len()], Storage::Cpu(out))
            }
            (Storage::Cuda { backend, slice }, Storage::Cuda { slice: ms, .. }) => {
                let pos = mask.astype::<u64>()?.cumsum()?;
                let Storage::Cuda { slice: ps, .. } = pos.storage() else {
                    return Err(Error::Other("internal: device".into()));
                };
                let count = if n == 0 {
                    0
                } else {
                    backend.download_range(ps, n - 1, 1)?[0] as usize
                };
                // SAFETY: the kernel writes each of the `count` selected elements once.
                let mut out = unsafe { backend.alloc::<T>(count)? };
                kernels::compact(backend, slice, ms, ps, &mut out, n)?;
                Array::from_storage(
                    vec![count],
                    Storage::Cuda {
                        backend: backend.clone(),
                        slice: out,
                    },
                )
            }
            _ => Err(Error::Other("internal: devices checked above".into())),
        }
    }

    /// Sets the elements where `mask` is true to `value` (NumPy's `a[mask] = value`).
    pub fn masked_fill(&mut self, mask: &Array<bool>, value: T) -> Result<()> {
        check_same("masked_fill", self, mask)?;
        let n = self.size();
        match (self.storage_mut(), mask.storage()) {
            (Storage::Cpu(a), Storage::Cpu(m)) => {
                cpu_capture::forbid_in_capture("masked_fill on the CPU")?;
                cpu::zip_update(a, m, |x, &m| {
                    if m {
                        *x = value
                    }
                });
                Ok(())
            }
            (Storage::Cuda { backend, slice }, Storage::Cuda { slice: ms, .. }) => {
                let backend = backend.clone();
                kernels::masked_fill(&backend, slice, ms, value, n)
            }
            _ => Err(Error::Other("internal: devices checked above".into())),
        }
    }

    /// Sets the elements where `mask` is true, in C order, to the elements of the 1-d `values`,
    /// which holds as many as `mask` has true (NumPy's `a[mask] = values`).
    pub fn masked_assign(&mut self, mask: &Array<bool>, values: &Array<T>) -> Result<()> {
        check_same("masked_assign", self, mask)?;
        values.storage().ensure_usable()?;
        if values.device() != self.device() {
            return Err(Error::DeviceMismatch(format!(
                "masked_assign: the array is on {} but the values are on {}; move one with .to_device(&..)",
                self.device(),
                values.device()
            )));
        }
        let count = mask.count_nonzero()? as usize;
        if values.ndim() != 1 || values.size() != count {
            return Err(Error::Shape(format!(
                "masked_assign: the mask selects {count} element(s) but the values have shape {:?} (expected [{count}])",
                values.shape()
            )));
        }
        let n = self.size();
        let pos = match mask.storage() {
            Storage::Cuda { .. } => Some(mask.astype::<u64>()?.cumsum()?),
            Storage::Cpu(_) => None,
        };
        match (self.storage_mut(), mask.storage(), values.storage()) {
            (Storage::Cpu(a), Storage::Cpu(m), Storage::Cpu(v)) => {
                cpu_capture::forbid_in_capture("masked_assign on the CPU")?;
                let mut next = v.iter();
                for (x, &m) in a.iter_mut().zip(m) {
                    if m {
                        if let Some(&v) = next.next() {
                            *x = v;
                        }
                    }
                }
                Ok(())
            }
            (
                Storage::Cuda { backend, slice },
                Storage::Cuda { slice: ms, .. },
                Storage::Cuda { slice: vs, .. },
            ) => {
                let pos = pos.ok_or_else(|| Error::Other("internal: no positions".into()))?;
                let Storage::Cuda { slice: ps, .. } = pos.storage() else {
                    return Err(Error::Other("internal: device".into()));
                };
                let backend = backend.clone();
                kernels::scatter(&backend, slice, ms, ps, vs, n)
            }
            _ => Err(Error::Other("internal: devices checked above".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    fn v<T: Element>(x: Vec<T>) -> Array<T> {
        let n = x.len();
        Array::from_vec_on(x, [n], &Device::Cpu).unwrap()
    }

    #[test]
    fn where_with_arrays_and_scalars() {
        let c = v(vec![true, false, true, false]);
        let a = v(vec![1i32, 2, 3, 4]);
        let b = v(vec![10i32, 20, 30, 40]);
        assert_eq!(
            Array::where_(&c, &a, &b).unwrap().to_vec().unwrap(),
            vec![1, 20, 3, 40]
        );
        assert_eq!(
            Array::where_(&c, &a, 0).unwrap().to_vec().unwrap(),
            vec![1, 0, 3, 0]
        );
        assert_eq!(
            Array::where_(&c, 7, &b).unwrap().to_vec().unwrap(),
            vec![7, 20, 7, 40]
        );
        assert_eq!(
            Array::where_(&c, 1u8, 2u8).unwrap().to_vec().unwrap(),
            vec![1, 2, 1, 2]
        );
        let short = v(vec![1i32, 2]);
        let e = Array::where_(&c, &short, 0).unwrap_err();
        assert!(
            matches!(e, Error::Shape(_)) && e.to_string().contains("[2]"),
            "{e}"
        );
    }

    #[test]
    fn masks_select_fill_and_assign() {
        let mut a = Array::<f64>::arange_on(0.0, 6.0, &Device::Cpu)
            .unwrap()
            .reshape([2, 3])
            .unwrap();
        let m = a.gt(2.5).unwrap();
        let s = a.masked(&m).unwrap();
        assert_eq!(
            (s.shape(), s.to_vec().unwrap()),
            (&[3usize][..], vec![3.0, 4.0, 5.0])
        );
        a.masked_assign(&m, &v(vec![-1.0, -2.0, -3.0])).unwrap();
        assert_eq!(a.to_vec().unwrap(), vec![0.0, 1.0, 2.0, -1.0, -2.0, -3.0]);
        let e = a.masked_assign(&m, &v(vec![1.0])).unwrap_err();
        assert!(e.to_string().contains("selects 3"), "{e}");
        a.masked_fill(&m, 9.0).unwrap();
        assert_eq!(a.to_vec().unwrap(), vec![0.0, 1.0, 2.0, 9.0, 9.0, 9.0]);
        let none = v(Vec::<bool>::new());
        assert_eq!(v(Vec::<f32>::new()).masked(&none).unwrap().shape(), &[0]);
        assert!(a.masked(&v(vec![true])).is_err());
    }
}
