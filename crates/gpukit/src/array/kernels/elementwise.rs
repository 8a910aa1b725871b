//! Elementwise built-in kernels: arithmetic, comparisons, unary math, copies, fills, ramps
//! and casts, each moving 16-byte packs where the element type allows.

use super::table::*;
use crate::array::op::{BinOp, CmpOp, UnOp};
use crate::backend::cuda::CudaBackend;
use crate::element::Element;
use crate::error::Result;
use cudarc::driver::CudaSlice;

/// A kernel operand: a device buffer or a scalar broadcast to every element.
pub(crate) enum Operand<'a, T: Element> {
    /// A device array.
    Array(&'a CudaSlice<T>),
    /// One value for every element.
    Scalar(T),
    /// A raw device pointer to at least `n` elements (an output buffer read in place).
    Raw(u64),
}

impl<T: Element> Operand<'_, T> {
    fn is_array(&self) -> bool {
        !matches!(self, Operand::Scalar(_))
    }

    fn param(&self, backend: &CudaBackend) -> u64 {
        match self {
            Operand::Array(s) => ptr(backend, s),
            Operand::Scalar(v) => bits(*v),
            Operand::Raw(p) => *p,
        }
    }
}

/// `out[i] = a[i] op b[i]` (either side may be a scalar).
pub(crate) fn binary<T: Element>(
    backend: &CudaBackend,
    op: BinOp,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    elementwise2(backend, |f| Builtin::Binary(op, f, T::DTYPE), a, b, out, n)
}

/// `out[i] = a[i].powf(p)`.
pub(crate) fn powf<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    p: T,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    elementwise2(
        backend,
        |_| Builtin::Powf(T::DTYPE),
        Operand::Array(a),
        Operand::Scalar(p),
        out,
        n,
    )
}

/// `out[i] = a[i] op b[i]` as `bool` (`b` may be a scalar).
pub(crate) fn compare<T: Element>(
    backend: &CudaBackend,
    op: CmpOp,
    a: &CudaSlice<T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<bool>,
    n: usize,
) -> Result<()> {
    elementwise2(
        backend,
        |f| Builtin::Compare(op, f, T::DTYPE),
        Operand::Array(a),
        b,
        out,
        n,
    )
}

pub(super) fn elementwise2<T: Element, R: Element>(
    backend: &CudaBackend,
    kernel: impl FnOnce(Form) -> Builtin,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut CudaSlice<R>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let form = match (a.is_array(), b.is_array()) {
        (true, true) => Form::Aa,
        (true, false) => Form::As,
        (false, true) => Form::Sa,
        (false, false) => {
            return Err(crate::error::Error::Other(
                "internal: an elementwise kernel needs at least one array operand".into(),
            ))
        }
    };
    let f = function(backend, kernel(form))?;
    let vector = std::mem::size_of::<R>() == std::mem::size_of::<T>();
    let blocks = ew_blocks::<T>(backend, n, vector);
    let params = [
        a.param(backend),
        b.param(backend),
        ptr_mut(backend, out),
        n as u64,
    ];
    launch(backend, f, blocks, &params)
}

/// `out[i] = op(a[i])`.
pub(crate) fn unary<T: Element>(
    backend: &CudaBackend,
    op: UnOp,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    simple1(backend, Builtin::Unary(op, T::DTYPE), a, out, n)
}

/// `out[i] = a[i]` (a device-to-device copy through the vector path).
pub(crate) fn copy<T: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    if T::DTYPE.is_complex() {
        return super::complex::convert(backend, a, out, n);
    }
    simple1(backend, Builtin::Copy(T::DTYPE), a, out, n)
}

pub(super) fn simple1<T: Element>(
    backend: &CudaBackend,
    k: Builtin,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, k)?;
    let blocks = ew_blocks::<T>(backend, n, true);
    let params = [ptr(backend, a), ptr_mut(backend, out), n as u64];
    launch(backend, f, blocks, &params)
}

/// `out[i] = v`.
pub(crate) fn fill<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    v: T,
) -> Result<()> {
    if T::DTYPE.is_complex() {
        return super::complex::fill(backend, out, n, v);
    }
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Fill(T::DTYPE))?;
    let blocks = ew_blocks::<T>(backend, n, true);
    let params = [ptr_mut(backend, out), n as u64, bits(v)];
    launch(backend, f, blocks, &params)
}

/// Floats: `out[i] = start + i * step` computed in f64, the last element `last` unless NaN.
pub(crate) fn ramp_float<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    start: f64,
    step: f64,
    last: f64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Ramp(T::DTYPE))?;
    let blocks = blocks_for(backend, n);
    let params = [
        ptr_mut(backend, out),
        n as u64,
        bits(start),
        bits(step),
        bits(last),
    ];
    launch(backend, f, blocks, &params)
}

/// Integers: `out[i] = start + i * step` with wrapping arithmetic.
pub(crate) fn ramp_int<T: Element>(
    backend: &CudaBackend,
    out: &mut CudaSlice<T>,
    n: usize,
    start: T,
    step: T,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Ramp(T::DTYPE))?;
    let blocks = blocks_for(backend, n);
    let params = [ptr_mut(backend, out), n as u64, bits(start), bits(step)];
    launch(backend, f, blocks, &params)
}

/// `out[i] = a[i] as U`.
pub(crate) fn cast<T: Element, U: Element>(
    backend: &CudaBackend,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<U>,
    n: usize,
) -> Result<()> {
    if T::DTYPE.is_complex() || U::DTYPE.is_complex() {
        return super::complex::convert(backend, a, out, n);
    }
    if n == 0 {
        return Ok(());
    }
    let f = function(backend, Builtin::Cast(T::DTYPE, U::DTYPE))?;
    let blocks = blocks_for(backend, n);
    let params = [ptr(backend, a), ptr_mut(backend, out), n as u64];
    launch(backend, f, blocks, &params)
}
