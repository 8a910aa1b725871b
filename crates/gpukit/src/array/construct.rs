//! Making arrays: zeros, ones, full, empty, eye, arange, linspace, from a Vec, slice or ndarray
//! array.
//!
//! Every constructor has a form for the default device and an `_on(.., &Device)` form.

use super::{checked_size, kernels, Array, Storage};
use crate::backend::cpu;
use crate::backend::cuda::CudaBackend;
use crate::device::{default_device, Device};
use crate::element::{DType, Element, Float, Numeric, Scalar};
use crate::error::{Error, Result};

/// Anything that names an array shape: `10`, `[2, 3]`, `(2, 3)`, `&[2, 3][..]`, `vec![2, 3]`.
pub trait IntoShape {
    /// The dimensions.
    fn into_shape(self) -> Vec<usize>;
}

impl IntoShape for usize {
    fn into_shape(self) -> Vec<usize> {
        vec![self]
    }
}
impl<const N: usize> IntoShape for [usize; N] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl IntoShape for &[usize] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl IntoShape for Vec<usize> {
    fn into_shape(self) -> Vec<usize> {
        self
    }
}
impl IntoShape for &Vec<usize> {
    fn into_shape(self) -> Vec<usize> {
        self.clone()
    }
}
impl IntoShape for () {
    fn into_shape(self) -> Vec<usize> {
        Vec::new()
    }
}
impl IntoShape for (usize, usize) {
    fn into_shape(self) -> Vec<usize> {
        vec![self.0, self.1]
    }
}
impl IntoShape for (usize, usize, usize) {
    fn into_shape(self) -> Vec<usize> {
        vec![self.0, self.1, self.2]
    }
}
impl IntoShape for (usize, usize, usize, usize) {
    fn into_shape(self) -> Vec<usize> {
        vec![self.0, self.1, self.2, self.3]
    }
}

impl<T: Element> Array<T> {
    /// An array of `shape` with every element `value`, on the default device.
    pub fn full(shape: impl IntoShape, value: T) -> Result<Array<T>> {
        Self::full_on(shape, value, &default_device())
    }

    /// An array of `shape` with every element `value`, on `device`.
    pub fn full_on(shape: impl IntoShape, value: T, device: &Device) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        match device {
            Device::Cpu => Array::from_storage(shape, Storage::Cpu(cpu::alloc_filled(n, value)?)),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let slice = if value == T::zero() {
                    backend.alloc_zeros::<T>(n)?
                } else {
                    // SAFETY: every element is written by the fill kernel queued right after.
                    let mut s = unsafe { backend.alloc::<T>(n)? };
                    kernels::fill(&backend, &mut s, n, value)?;
                    s
                };
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
        }
    }

    /// An array of zeros (`false` for bool) on the default device.
    pub fn zeros(shape: impl IntoShape) -> Result<Array<T>> {
        Self::full(shape, T::zero())
    }

    /// An array of zeros on `device`.
    pub fn zeros_on(shape: impl IntoShape, device: &Device) -> Result<Array<T>> {
        Self::full_on(shape, T::zero(), device)
    }

    /// An array of ones (`true` for bool) on the default device.
    pub fn ones(shape: impl IntoShape) -> Result<Array<T>> {
        Self::full(shape, T::one())
    }

    /// An array of ones on `device`.
    pub fn ones_on(shape: impl IntoShape, device: &Device) -> Result<Array<T>> {
        Self::full_on(shape, T::one(), device)
    }

    /// An array of `shape` whose contents are not set, on the default device (NumPy's `empty`):
    /// for buffers that are written in full before they are read.
    ///
    /// What it guarantees: the shape, the device, and valid values of `T` (reading them is
    /// safe), nothing about which values. On a CUDA device the memory is left as the allocator
    /// hands it out (often what an earlier array held), which saves the fill that `zeros` pays;
    /// `bool` arrays are zeroed there, since not every byte is a valid `bool`. On the CPU the
    /// elements are zero (Rust does not hand out uninitialised memory safely).
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// let mut a = Array::<f32>::empty((2, 3))?;
    /// a.fill(1.5)?;
    /// assert_eq!(a.to_vec()?, vec![1.5; 6]);
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn empty(shape: impl IntoShape) -> Result<Array<T>> {
        Self::empty_on(shape, &default_device())
    }

    /// [`Array::empty`] on `device`.
    pub fn empty_on(shape: impl IntoShape, device: &Device) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        match device {
            Device::Cuda(i) if T::DTYPE != DType::Bool => {
                let backend = CudaBackend::get(*i)?;
                // SAFETY: every bit pattern is a valid value of the non-bool element types
                // (integers and floats), so unset contents are unspecified values, not UB.
                let slice = unsafe { backend.alloc::<T>(n)? };
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
            _ => Self::full_on(shape, T::zero(), device),
        }
    }

    /// The `n x n` identity matrix (ones on the diagonal, zeros elsewhere; `true`/`false` for
    /// bool), on the default device (NumPy's `eye(n)`).
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// let i = Array::<f64>::eye(3)?;
    /// assert_eq!(i.to_vec()?, vec![1., 0., 0., 0., 1., 0., 0., 0., 1.]);
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn eye(n: usize) -> Result<Array<T>> {
        Self::eye_on(n, &default_device())
    }

    /// [`Array::eye`] on `device`.
    pub fn eye_on(n: usize, device: &Device) -> Result<Array<T>> {
        let mut a = Self::zeros_on([n, n], device)?;
        match a.storage_mut() {
            Storage::Cpu(v) => {
                for i in 0..n {
                    v[i * (n + 1)] = T::one();
                }
            }
            Storage::Cuda { backend, slice } => {
                let backend = backend.clone();
                kernels::set_diagonal(&backend, slice, n, T::one())?;
            }
        }
        Ok(a)
    }

    /// Sets every element to `value`, in place (queued asynchronously on a GPU).
    pub fn fill(&mut self, value: T) -> Result<()> {
        let n = self.size();
        match self.storage_mut() {
            Storage::Cpu(v) => {
                if crate::backend::cpu_capture::is_capturing() {
                    let p = v.as_mut_ptr() as usize;
                    super::capture::record_cpu(&[p], move || {
                        // SAFETY: replayed while the buffer lives (a graph keeps the buffers it
                        // uses alive, see kernel::graph).
                        let v = unsafe { std::slice::from_raw_parts_mut(p as *mut T, n) };
                        cpu::update(v, |x| *x = value);
                        Ok(())
                    });
                    return Ok(());
                }
                cpu::update(v, |x| *x = value);
                Ok(())
            }
            Storage::Cuda { backend, slice } => {
                let backend = backend.clone();
                kernels::fill(&backend, slice, n, value)
            }
        }
    }

    /// Zeros with the shape and device of `other`.
    pub fn zeros_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Self::zeros_on(other.shape().to_vec(), &other.device())
    }

    /// Ones with the shape and device of `other`.
    pub fn ones_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Self::ones_on(other.shape().to_vec(), &other.device())
    }

    /// `value` everywhere, with the shape and device of `other`.
    pub fn full_like<U: Element>(other: &Array<U>, value: T) -> Result<Array<T>> {
        Self::full_on(other.shape().to_vec(), value, &other.device())
    }

    /// The elements of `data` (in C order) as an array of `shape`, on the default device.
    pub fn from_vec(data: Vec<T>, shape: impl IntoShape) -> Result<Array<T>> {
        Self::from_vec_on(data, shape, &default_device())
    }

    /// The elements of `data` (in C order) as an array of `shape`, on `device`.
    pub fn from_vec_on(data: Vec<T>, shape: impl IntoShape, device: &Device) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        if n != data.len() {
            return Err(Error::Shape(format!(
                "{} element(s) cannot have shape {shape:?} ({n} element(s))",
                data.len()
            )));
        }
        Self::from_host(data, shape, device)
    }

    /// A 1-d array copied from `data`, on the default device.
    pub fn from_slice(data: &[T]) -> Result<Array<T>> {
        Self::from_slice_on(data, &default_device())
    }

    /// A 1-d array copied from `data`, on `device`.
    pub fn from_slice_on(data: &[T], device: &Device) -> Result<Array<T>> {
        match device {
            Device::Cpu => Array::from_storage(vec![data.len()], Storage::Cpu(data.to_vec())),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let slice = backend.upload(data)?;
                Array::from_storage(vec![data.len()], Storage::Cuda { backend, slice })
            }
        }
    }

    /// A copy of an ndarray array of any dimension (any memory layout), on the default device.
    pub fn from_ndarray<S, D>(a: &ndarray::ArrayBase<S, D>) -> Result<Array<T>>
    where
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        Self::from_ndarray_on(a, &default_device())
    }

    /// A copy of an ndarray array of any dimension, on `device`.
    pub fn from_ndarray_on<S, D>(a: &ndarray::ArrayBase<S, D>, device: &Device) -> Result<Array<T>>
    where
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let shape = a.shape().to_vec();
        let data = match a.as_slice() {
            Some(s) => s.to_vec(),
            None => a.iter().copied().collect(),
        };
        Self::from_host(data, shape, device)
    }

    /// Moves host data (already checked against `shape`) to `device`.
    pub(crate) fn from_host(data: Vec<T>, shape: Vec<usize>, device: &Device) -> Result<Array<T>> {
        match device {
            Device::Cpu => Array::from_storage(shape, Storage::Cpu(data)),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let slice = backend.upload(&data)?;
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
        }
    }
}

/// Number of elements of `start, start+step, ...` below `stop` (above it for negative steps).
fn arange_len<T: Numeric>(start: T, stop: T, step: T) -> Result<usize> {
    let too_long = || Error::Shape("arange: too many elements".into());
    match (start.to_scalar(), stop.to_scalar(), step.to_scalar()) {
        (Scalar::Int(a), Scalar::Int(b), Scalar::Int(s)) => {
            if s == 0 {
                return Err(Error::Other("arange: step must not be zero".into()));
            }
            let n = if s > 0 {
                (b - a + s - 1).div_euclid(s)
            } else {
                (a - b - s - 1).div_euclid(-s)
            };
            usize::try_from(n.max(0)).map_err(|_| too_long())
        }
        _ => {
            let (a, b, s) = (start.to_f64(), stop.to_f64(), step.to_f64());
            if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
                return Err(Error::Other(format!(
                    "arange: start, stop and step must be finite and step nonzero (got {a}, {b}, {s})"
                )));
            }
            let n = ((b - a) / s).ceil();
            if n <= 0.0 {
                Ok(0)
            } else if n >= usize::MAX as f64 {
                Err(too_long())
            } else {
                Ok(n as usize)
            }
        }
    }
}

impl<T: Numeric> Array<T> {
    /// `start, start + 1, ...` up to but excluding `stop`, on the default device
    /// (NumPy's `arange(start, stop)`): `Array::arange(0i64, 10)`.
    pub fn arange(start: T, stop: T) -> Result<Array<T>> {
        Self::arange_step_on(start, stop, T::one(), &default_device())
    }

    /// `start, start + step, ...` up to but excluding `stop` (NumPy's `arange(start, stop, step)`),
    /// on the default device. Negative steps count down.
    pub fn arange_step(start: T, stop: T, step: T) -> Result<Array<T>> {
        Self::arange_step_on(start, stop, step, &default_device())
    }

    /// [`Array::arange`] on `device`.
    pub fn arange_on(start: T, stop: T, device: &Device) -> Result<Array<T>> {
        Self::arange_step_on(start, stop, T::one(), device)
    }

    /// [`Array::arange_step`] on `device`.
    pub fn arange_step_on(start: T, stop: T, step: T, device: &Device) -> Result<Array<T>> {
        let n = arange_len(start, stop, step)?;
        let is_float = T::DTYPE.is_float();
        let value = |i: usize| {
            if is_float {
                T::from_f64(start.to_f64() + i as f64 * step.to_f64())
            } else {
                start.elem_add(T::from_i128(i as i128).elem_mul(step))
            }
        };
        match device {
            Device::Cpu => {
                let mut v = cpu::alloc_filled(n, T::zero())?;
                cpu::fill_indexed(&mut v, value);
                Array::from_storage(vec![n], Storage::Cpu(v))
            }
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                // SAFETY: every element is written by the ramp kernel queued right after.
                let mut slice = unsafe { backend.alloc::<T>(n)? };
                if is_float {
                    kernels::ramp_float(
                        &backend,
                        &mut slice,
                        n,
                        start.to_f64(),
                        step.to_f64(),
                        f64::NAN,
                    )?;
                } else {
                    kernels::ramp_int(&backend, &mut slice, n, start, step)?;
                }
                Array::from_storage(vec![n], Storage::Cuda { backend, slice })
            }
        }
    }
}

impl<T: Float> Array<T> {
    /// `num` evenly spaced values from `start` to `stop` inclusive, on the default device.
    pub fn linspace(start: T, stop: T, num: usize) -> Result<Array<T>> {
        Self::linspace_on(start, stop, num, &default_device())
    }

    /// [`Array::linspace`] on `device`.
    pub fn linspace_on(start: T, stop: T, num: usize, device: &Device) -> Result<Array<T>> {
        let (a, b) = (start.to_f64(), stop.to_f64());
        let step = if num > 1 {
            (b - a) / (num - 1) as f64
        } else {
            0.0
        };
        let last = if num > 1 { b } else { f64::NAN };
        match device {
            Device::Cpu => {
                let mut v = cpu::alloc_filled(num, T::zero())?;
                cpu::fill_indexed(&mut v, |i| {
                    if i + 1 == num && num > 1 {
                        stop
                    } else {
                        T::from_f64(a + i as f64 * step)
                    }
                });
                Array::from_storage(vec![num], Storage::Cpu(v))
            }
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                // SAFETY: every element is written by the ramp kernel queued right after.
                let mut slice = unsafe { backend.alloc::<T>(num)? };
                kernels::ramp_float(&backend, &mut slice, num, a, step, last)?;
                Array::from_storage(vec![num], Storage::Cuda { backend, slice })
            }
        }
    }
}

impl<T: Element> TryFrom<Vec<T>> for Array<T> {
    type Error = Error;
    /// A 1-d array on the default device.
    fn try_from(v: Vec<T>) -> Result<Array<T>> {
        let n = v.len();
        Array::from_vec(v, n)
    }
}

impl<T: Element> TryFrom<&[T]> for Array<T> {
    type Error = Error;
    /// A 1-d array on the default device.
    fn try_from(v: &[T]) -> Result<Array<T>> {
        Array::from_slice(v)
    }
}

impl<T: Element, S, D> TryFrom<&ndarray::ArrayBase<S, D>> for Array<T>
where
    S: ndarray::Data<Elem = T>,
    D: ndarray::Dimension,
{
    type Error = Error;
    /// A copy on the default device.
    fn try_from(a: &ndarray::ArrayBase<S, D>) -> Result<Array<T>> {
        Array::from_ndarray(a)
    }
}

impl<T: Element, S, D> TryFrom<ndarray::ArrayBase<S, D>> for Array<T>
where
    S: ndarray::Data<Elem = T>,
    D: ndarray::Dimension,
{
    type Error = Error;
    /// A copy on the default device.
    fn try_from(a: ndarray::ArrayBase<S, D>) -> Result<Array<T>> {
        Array::from_ndarray(&a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eye_on_the_cpu() {
        let i = Array::<i32>::eye_on(3, &Device::Cpu).unwrap();
        assert_eq!(i.shape(), &[3, 3]);
        assert_eq!(i.to_vec().unwrap(), vec![1, 0, 0, 0, 1, 0, 0, 0, 1]);
        let b = Array::<bool>::eye_on(2, &Device::Cpu).unwrap();
        assert_eq!(b.to_vec().unwrap(), vec![true, false, false, true]);
        let e = Array::<f64>::eye_on(0, &Device::Cpu).unwrap();
        assert_eq!((e.shape(), e.size()), (&[0usize, 0][..], 0));
        let e = Array::<f32>::eye_on(usize::MAX / 2, &Device::Cpu).unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e}");
    }

    #[test]
    fn empty_on_the_cpu_is_zeroed() {
        let a = Array::<f64>::empty_on((2, 3), &Device::Cpu).unwrap();
        assert_eq!((a.shape(), a.device()), (&[2usize, 3][..], Device::Cpu));
        assert_eq!(a.to_vec().unwrap(), vec![0.0; 6]);
        assert!(Array::<u8>::empty_on(0, &Device::Cpu).unwrap().is_empty());
        let e = Array::<u8>::empty_on([usize::MAX, 2], &Device::Cpu).unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e}");
    }
}
