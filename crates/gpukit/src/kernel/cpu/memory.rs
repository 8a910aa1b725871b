//! How a CPU twin sees its arguments: bounds-checked slices and views over the launch's
//! buffers, and the scalars.
//!
//! Every accessor takes the current [`ThreadCtx`]; an index out of range records the error
//! there and returns `None`, and the generated code then returns from the thread, exactly as the
//! CUDA translation does.

use super::ctx::ThreadCtx;
use crate::element::{DType, Element};
use std::marker::PhantomData;

/// A read-only kernel array (`&[T]`) as the CPU twin sees it.
#[derive(Debug)]
pub struct Slice<T> {
    ptr: *const T,
    len: usize,
    id: u32,
}

/// A writable kernel array (`&mut [T]`, or a shared array) as the CPU twin sees it.
#[derive(Debug)]
pub struct SliceMut<T> {
    ptr: *mut T,
    len: usize,
    id: u32,
}

// Manual impls: the derives would require `T: Copy`, which the raw pointers do not need.
impl<T> Clone for Slice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slice<T> {}
impl<T> Clone for SliceMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SliceMut<T> {}

impl<T: Copy> Slice<T> {
    /// Number of elements (`input.len()` in the kernel).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `input[i]`, or `None` after reporting an out-of-bounds index to `t`.
    #[inline(always)]
    pub fn get(&self, i: usize, t: &ThreadCtx) -> Option<T> {
        if i < self.len {
            // SAFETY: in bounds of a buffer that outlives the launch.
            Some(unsafe { self.ptr.add(i).read() })
        } else {
            t.report_oob(self.id as usize, i, self.len, 0);
            None
        }
    }

    /// `input[i]` without a bounds check (`#[kernel(unchecked)]`).
    ///
    /// # Safety
    /// `i < self.len()`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, i: usize) -> T {
        self.ptr.add(i).read()
    }
}

impl<T: Copy> SliceMut<T> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `output[i]`, or `None` after reporting an out-of-bounds index to `t`.
    #[inline(always)]
    pub fn get(&self, i: usize, t: &ThreadCtx) -> Option<T> {
        self.ptr(i, t).map(|p| unsafe { p.read() })
    }

    /// Pointer to `output[i]` (for stores and atomics), or `None` after reporting an
    /// out-of-bounds index to `t`.
    #[inline(always)]
    pub fn ptr(&self, i: usize, t: &ThreadCtx) -> Option<*mut T> {
        if i < self.len {
            // SAFETY: in bounds.
            Some(unsafe { self.ptr.add(i) })
        } else {
            t.report_oob(self.id as usize, i, self.len, 0);
            None
        }
    }

    /// `output[i] = v`, or `None` after reporting an out-of-bounds index to `t`.
    #[inline(always)]
    pub fn set(&self, i: usize, v: T, t: &ThreadCtx) -> Option<()> {
        // SAFETY: `ptr` checked the index.
        self.ptr(i, t).map(|p| unsafe { p.write(v) })
    }

    /// `output[i]` without a bounds check.
    ///
    /// # Safety
    /// `i < self.len()`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, i: usize) -> T {
        self.ptr.add(i).read()
    }

    /// Pointer to `output[i]` without a bounds check.
    ///
    /// # Safety
    /// `i < self.len()` before the pointer is dereferenced.
    #[inline(always)]
    pub unsafe fn ptr_unchecked(&self, i: usize) -> *mut T {
        self.ptr.add(i)
    }

    pub(crate) fn from_raw(ptr: *mut T, len: usize, id: u32) -> SliceMut<T> {
        SliceMut { ptr, len, id }
    }
}

/// A read-only N-dimensional kernel array (`&View2<T>`, `&View3<T>`), C order.
#[derive(Debug)]
pub struct View<T, const N: usize> {
    ptr: *const T,
    dims: [usize; N],
    id: u32,
}

/// A writable N-dimensional kernel array (`&mut View2<T>`, `&mut View3<T>`), C order.
#[derive(Debug)]
pub struct ViewMut<T, const N: usize> {
    ptr: *mut T,
    dims: [usize; N],
    id: u32,
}

impl<T, const N: usize> Clone for View<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for View<T, N> {}
impl<T, const N: usize> Clone for ViewMut<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for ViewMut<T, N> {}

/// Flat C-order offset of `idx`, or the first failing axis.
#[inline(always)]
fn offset<const N: usize>(dims: &[usize; N], idx: [usize; N]) -> Result<usize, usize> {
    let mut flat = 0usize;
    for axis in 0..N {
        if idx[axis] >= dims[axis] {
            return Err(axis);
        }
        flat = flat * dims[axis] + idx[axis];
    }
    Ok(flat)
}

#[inline(always)]
fn offset_unchecked<const N: usize>(dims: &[usize; N], idx: [usize; N]) -> usize {
    let mut flat = 0usize;
    for axis in 0..N {
        flat = flat * dims[axis] + idx[axis];
    }
    flat
}

impl<T: Copy, const N: usize> View<T, N> {
    /// Extent of axis `d` (`img.shape(d)` in the kernel); 0 for an axis the view does not have.
    #[inline(always)]
    pub fn shape(&self, d: usize) -> usize {
        self.dims.get(d).copied().unwrap_or(0)
    }

    /// `img[[i, j, ..]]`, or `None` after reporting the first out-of-range axis to `t`.
    #[inline(always)]
    pub fn get(&self, idx: [usize; N], t: &ThreadCtx) -> Option<T> {
        match offset(&self.dims, idx) {
            // SAFETY: every axis is in range.
            Ok(flat) => Some(unsafe { self.ptr.add(flat).read() }),
            Err(axis) => {
                t.report_oob(self.id as usize, idx[axis], self.dims[axis], axis);
                None
            }
        }
    }

    /// `img[[i, j, ..]]` without a bounds check.
    ///
    /// # Safety
    /// Every index is below its axis' extent.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, idx: [usize; N]) -> T {
        self.ptr.add(offset_unchecked(&self.dims, idx)).read()
    }
}

impl<T: Copy, const N: usize> ViewMut<T, N> {
    /// Extent of axis `d`; 0 for an axis the view does not have.
    #[inline(always)]
    pub fn shape(&self, d: usize) -> usize {
        self.dims.get(d).copied().unwrap_or(0)
    }

    /// `img[[i, j, ..]]`, or `None` after reporting the first out-of-range axis to `t`.
    #[inline(always)]
    pub fn get(&self, idx: [usize; N], t: &ThreadCtx) -> Option<T> {
        self.ptr(idx, t).map(|p| unsafe { p.read() })
    }

    /// Pointer to `img[[i, j, ..]]`, or `None` after reporting the first out-of-range axis.
    #[inline(always)]
    pub fn ptr(&self, idx: [usize; N], t: &ThreadCtx) -> Option<*mut T> {
        match offset(&self.dims, idx) {
            // SAFETY: every axis is in range.
            Ok(flat) => Some(unsafe { self.ptr.add(flat) }),
            Err(axis) => {
                t.report_oob(self.id as usize, idx[axis], self.dims[axis], axis);
                None
            }
        }
    }

    /// `img[[i, j, ..]] = v`, or `None` after reporting the first out-of-range axis.
    #[inline(always)]
    pub fn set(&self, idx: [usize; N], v: T, t: &ThreadCtx) -> Option<()> {
        // SAFETY: `ptr` checked every axis.
        self.ptr(idx, t).map(|p| unsafe { p.write(v) })
    }

    /// `img[[i, j, ..]]` without a bounds check.
    ///
    /// # Safety
    /// Every index is below its axis' extent.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, idx: [usize; N]) -> T {
        self.ptr.add(offset_unchecked(&self.dims, idx)).read()
    }

    /// Pointer to `img[[i, j, ..]]` without a bounds check.
    ///
    /// # Safety
    /// Every index is below its axis' extent before the pointer is dereferenced.
    #[inline(always)]
    pub unsafe fn ptr_unchecked(&self, idx: [usize; N]) -> *mut T {
        self.ptr.add(offset_unchecked(&self.dims, idx))
    }
}

/// One argument of a CPU launch, resolved to host memory.
#[derive(Debug, Clone)]
pub(crate) struct CpuArg {
    /// Element type (of the array, or of the scalar).
    pub(crate) dtype: DType,
    /// First element of the buffer (arrays), unused for scalars.
    pub(crate) ptr: *mut u8,
    /// Shape of the array (empty for scalars).
    pub(crate) shape: Vec<usize>,
    /// Scalar bits (little-end first), unused for arrays.
    pub(crate) bits: u64,
    /// Array id in bounds errors.
    pub(crate) id: u32,
}

/// The arguments of one CPU launch, in parameter order, as the CPU twin reads them.
#[derive(Debug)]
pub struct CpuArgs {
    kernel: &'static str,
    args: Vec<CpuArg>,
    _not_send: PhantomData<*mut u8>,
}

// SAFETY: the buffers outlive the launch and the twin only touches them through the accessors
// below, with the same (racy-by-contract) semantics as the GPU's global memory.
unsafe impl Sync for CpuArgs {}
unsafe impl Send for CpuArgs {}

impl CpuArgs {
    pub(crate) fn new(kernel: &'static str, args: Vec<CpuArg>) -> CpuArgs {
        CpuArgs {
            kernel,
            args,
            _not_send: PhantomData,
        }
    }

    fn arg<T: Element>(&self, i: usize) -> &CpuArg {
        let a = &self.args[i];
        assert_eq!(
            a.dtype,
            T::DTYPE,
            "kernel `{}`: parameter {i} read as {} but launched with {} (generated code out of sync)",
            self.kernel,
            T::DTYPE,
            a.dtype
        );
        a
    }

    /// Parameter `i` as a read-only slice.
    pub fn slice<T: Element>(&self, i: usize) -> Slice<T> {
        let a = self.arg::<T>(i);
        Slice {
            ptr: a.ptr as *const T,
            len: a.shape.iter().product(),
            id: a.id,
        }
    }

    /// Parameter `i` as a writable slice.
    pub fn slice_mut<T: Element>(&self, i: usize) -> SliceMut<T> {
        let a = self.arg::<T>(i);
        SliceMut {
            ptr: a.ptr as *mut T,
            len: a.shape.iter().product(),
            id: a.id,
        }
    }

    fn dims<const N: usize>(&self, i: usize, a: &CpuArg) -> [usize; N] {
        a.shape.as_slice().try_into().unwrap_or_else(|_| {
            panic!(
                "kernel `{}`: parameter {i} read as a {N}-d view but launched with shape {:?}",
                self.kernel, a.shape
            )
        })
    }

    /// Parameter `i` as a read-only `N`-d view.
    pub fn view<T: Element, const N: usize>(&self, i: usize) -> View<T, N> {
        let a = self.arg::<T>(i);
        View {
            ptr: a.ptr as *const T,
            dims: self.dims(i, a),
            id: a.id,
        }
    }

    /// Parameter `i` as a writable `N`-d view.
    pub fn view_mut<T: Element, const N: usize>(&self, i: usize) -> ViewMut<T, N> {
        let a = self.arg::<T>(i);
        ViewMut {
            ptr: a.ptr as *mut T,
            dims: self.dims(i, a),
            id: a.id,
        }
    }

    /// Parameter `i`, a scalar.
    pub fn scalar<T: Element>(&self, i: usize) -> T {
        let a = self.arg::<T>(i);
        // SAFETY: `bits` holds a `T` written by `KernelArg::scalar` in its first bytes.
        unsafe { (&a.bits as *const u64 as *const T).read() }
    }
}
