//! Complex arrays (`Array<Complex<f32>>`, `Array<Complex<f64>>`): conversion from real arrays,
//! the real and imaginary parts, magnitudes, conjugates, and `+ - * /` (array with array of the
//! same shape, or with a complex scalar on either side), on both backends.
//!
//! Complex elements are not [`Numeric`](crate::Numeric) (no order-based min/max, no `%`), so
//! they have these operations instead of the generic ones; on a GPU they run the kernels of
//! `kernels::complex`.

use super::kernels::complex::{self as ck, COperand, Part};
use super::op::BinOp;
use super::ops::check_same;
use super::{Array, Storage};
use crate::backend::cpu;
use crate::element::{Complex, ComplexPart};
use crate::error::Result;

impl<T: ComplexPart> Array<T> {
    /// The elements as complex numbers with imaginary part 0 (`f64` → `Complex<f64>`), on the
    /// same device.
    ///
    /// ```
    /// use gpukit::prelude::*;
    /// let z = Array::from_vec_on(vec![1.0, 2.0], 2, &Device::Cpu)?.to_complex()?;
    /// assert_eq!(z.to_vec()?, vec![Complex::new(1.0, 0.0), Complex::new(2.0, 0.0)]);
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn to_complex(&self) -> Result<Array<Complex<T>>> {
        self.astype::<Complex<T>>()
    }
}

impl<T: ComplexPart> Array<Complex<T>> {
    /// One real value per element (`cpu` on the host, `which` part on a GPU).
    fn part(&self, which: Part, cpu: impl Fn(Complex<T>) -> T + Sync) -> Result<Array<T>> {
        self.storage().ensure_usable()?;
        let shape = self.shape().to_vec();
        let n = self.size();
        match self.storage() {
            Storage::Cpu(a) => {
                Array::from_storage(shape, Storage::Cpu(cpu::map_new(a, |&z| cpu(z))?))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<T>(n)? };
                ck::part(backend, slice, &mut out, n, which)?;
                let backend = backend.clone();
                Array::from_storage(
                    shape,
                    Storage::Cuda {
                        backend,
                        slice: out,
                    },
                )
            }
        }
    }

    /// The real parts (NumPy's `a.real`).
    pub fn re(&self) -> Result<Array<T>> {
        self.part(Part::Re, |z| z.re)
    }

    /// The imaginary parts (NumPy's `a.imag`).
    pub fn im(&self) -> Result<Array<T>> {
        self.part(Part::Im, |z| z.im)
    }

    /// The magnitudes `|z|` (NumPy's `abs`), as a real array.
    pub fn abs(&self) -> Result<Array<T>> {
        self.part(Part::Abs, |z| z.abs())
    }

    /// The complex conjugates (NumPy's `conj`).
    pub fn conj(&self) -> Result<Array<Complex<T>>> {
        self.storage().ensure_usable()?;
        let shape = self.shape().to_vec();
        let n = self.size();
        match self.storage() {
            Storage::Cpu(a) => {
                Array::from_storage(shape, Storage::Cpu(cpu::map_new(a, |&z| z.conj())?))
            }
            Storage::Cuda { backend, slice } => {
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<Complex<T>>(n)? };
                ck::conj(backend, slice, &mut out, n)?;
                let backend = backend.clone();
                Array::from_storage(
                    shape,
                    Storage::Cuda {
                        backend,
                        slice: out,
                    },
                )
            }
        }
    }

    /// `self op rhs` elementwise: `rhs` an array of the same shape and device, or a scalar
    /// (`scalar_left`: `scalar op self`).
    pub(crate) fn complex_binary(
        &self,
        op: BinOp,
        rhs: CRhs<'_, T>,
        scalar_left: bool,
    ) -> Result<Array<Complex<T>>> {
        if let CRhs::Array(b) = &rhs {
            check_same(op.symbol(), self, b)?;
        } else {
            self.storage().ensure_usable()?;
        }
        let f = |x: Complex<T>, y: Complex<T>| match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            _ => x / y,
        };
        if op == BinOp::Rem {
            return Err(crate::error::Error::Other(
                "`%` is not defined for complex arrays (NumPy has no complex remainder)".into(),
            ));
        }
        let shape = self.shape().to_vec();
        let n = self.size();
        match (self.storage(), &rhs) {
            (Storage::Cpu(a), CRhs::Array(b)) => {
                let Storage::Cpu(b) = b.storage() else {
                    unreachable!("device checked above")
                };
                let out = cpu::zip_map_new(a, b, |&x, &y| f(x, y))?;
                Array::from_storage(shape, Storage::Cpu(out))
            }
            (Storage::Cpu(a), CRhs::Scalar(s)) => {
                let s = *s;
                let out = if scalar_left {
                    cpu::map_new(a, |&x| f(s, x))?
                } else {
                    cpu::map_new(a, |&x| f(x, s))?
                };
                Array::from_storage(shape, Storage::Cpu(out))
            }
            (Storage::Cuda { backend, slice }, rhs) => {
                let b = match rhs {
                    CRhs::Array(b) => {
                        let Storage::Cuda { slice: bs, .. } = b.storage() else {
                            unreachable!("device checked above")
                        };
                        COperand::Array(bs)
                    }
                    CRhs::Scalar(s) => COperand::Scalar {
                        value: *s,
                        left: scalar_left,
                    },
                };
                // SAFETY: every element is written by the kernel queued right after.
                let mut out = unsafe { backend.alloc::<Complex<T>>(n)? };
                ck::binary(backend, op, slice, b, &mut out, n)?;
                let backend = backend.clone();
                Array::from_storage(
                    shape,
                    Storage::Cuda {
                        backend,
                        slice: out,
                    },
                )
            }
        }
    }

    /// Multiplies every element by the real `s`, in place (the FFTs' normalisation).
    pub(crate) fn scale_in_place(&mut self, s: f64) -> Result<()> {
        let n = self.size();
        match self.storage_mut() {
            Storage::Cpu(v) => {
                let s = T::from_f64(s);
                cpu::update(v, |z| *z = Complex::new(z.re.elem_mul(s), z.im.elem_mul(s)));
                Ok(())
            }
            Storage::Cuda { backend, slice } => {
                let backend = backend.clone();
                ck::scale(&backend, slice, n, s)
            }
        }
    }
}

/// The right-hand side of a complex operation.
pub(crate) enum CRhs<'a, T: ComplexPart> {
    Array(&'a Array<Complex<T>>),
    Scalar(Complex<T>),
}

macro_rules! complex_operator {
    ($Trait:ident, $method:ident, $op:expr) => {
        impl<T: ComplexPart> std::ops::$Trait<&Array<Complex<T>>> for &Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: &Array<Complex<T>>) -> Self::Output {
                self.complex_binary($op, CRhs::Array(rhs), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<Array<Complex<T>>> for &Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: Array<Complex<T>>) -> Self::Output {
                self.complex_binary($op, CRhs::Array(&rhs), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<&Array<Complex<T>>> for Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: &Array<Complex<T>>) -> Self::Output {
                self.complex_binary($op, CRhs::Array(rhs), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<Array<Complex<T>>> for Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: Array<Complex<T>>) -> Self::Output {
                self.complex_binary($op, CRhs::Array(&rhs), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<Complex<T>> for &Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: Complex<T>) -> Self::Output {
                self.complex_binary($op, CRhs::Scalar(rhs), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<Complex<T>> for Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: Complex<T>) -> Self::Output {
                self.complex_binary($op, CRhs::Scalar(rhs), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<&Array<Complex<T>>> for Complex<T> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: &Array<Complex<T>>) -> Self::Output {
                rhs.complex_binary($op, CRhs::Scalar(self), true)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<Result<Array<Complex<T>>>> for &Array<Complex<T>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: Result<Array<Complex<T>>>) -> Self::Output {
                self.complex_binary($op, CRhs::Array(&rhs?), false)
            }
        }
        impl<T: ComplexPart> std::ops::$Trait<&Array<Complex<T>>> for Result<Array<Complex<T>>> {
            type Output = Result<Array<Complex<T>>>;
            fn $method(self, rhs: &Array<Complex<T>>) -> Self::Output {
                self?.complex_binary($op, CRhs::Array(rhs), false)
            }
        }
    };
}

complex_operator!(Add, add, BinOp::Add);
complex_operator!(Sub, sub, BinOp::Sub);
complex_operator!(Mul, mul, BinOp::Mul);
complex_operator!(Div, div, BinOp::Div);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    fn c(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    #[test]
    fn parts_and_arithmetic_on_the_cpu() -> Result<()> {
        let a = Array::from_vec_on(vec![c(1., 2.), c(3., -4.)], 2, &Device::Cpu)?;
        let b = Array::from_vec_on(vec![c(0., 1.), c(2., 0.)], 2, &Device::Cpu)?;
        assert_eq!(a.re()?.to_vec()?, vec![1., 3.]);
        assert_eq!(a.im()?.to_vec()?, vec![2., -4.]);
        assert_eq!(a.abs()?.to_vec()?[1], 5.);
        assert_eq!(a.conj()?.to_vec()?, vec![c(1., -2.), c(3., 4.)]);
        assert_eq!((&a + &b)?.to_vec()?, vec![c(1., 3.), c(5., -4.)]);
        assert_eq!((&a - &b)?.to_vec()?, vec![c(1., 1.), c(1., -4.)]);
        assert_eq!((&a * &b)?.to_vec()?, vec![c(-2., 1.), c(6., -8.)]);
        assert_eq!((&a / c(2., 0.))?.to_vec()?, vec![c(0.5, 1.), c(1.5, -2.)]);
        assert_eq!((c(1., 0.) - &b)?.to_vec()?, vec![c(1., -1.), c(-1., 0.)]);
        let r = Array::from_vec_on(vec![1.5f32, -2.0], 2, &Device::Cpu)?;
        let z = r.to_complex()?;
        assert_eq!(z.dtype(), crate::DType::Complex64);
        assert_eq!(
            z.to_vec()?,
            vec![Complex::new(1.5f32, 0.), Complex::new(-2., 0.)]
        );
        assert_eq!(z.astype::<f64>()?.to_vec()?, vec![1.5, -2.0]);
        assert!(z.astype::<i32>().is_err(), "complex to int is refused");
        let e = (&a + &Array::zeros_on(3, &Device::Cpu)?).unwrap_err();
        assert!(e.to_string().contains("[2] and [3]"), "{e}");
        Ok(())
    }

    #[test]
    fn complex_arrays_display_like_numpy() -> Result<()> {
        let a = Array::from_vec_on(vec![c(1., 2.), c(0.5, -1.)], 2, &Device::Cpu)?;
        let s = a.repr();
        assert!(s.contains("dtype=complex128"), "{s}");
        assert!(s.contains("1. +2.j"), "{s}");
        assert!(s.contains("0.5-1.j"), "{s}");
        let e = Array::<Complex<f32>>::eye_on(2, &Device::Cpu)?;
        assert_eq!(e.to_vec()?[0], Complex::new(1.0, 0.0));
        Ok(())
    }
}
