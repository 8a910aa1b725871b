//! Strided copies on both backends: a view into a new C-contiguous array (what `copy()` does),
//! and a view into a block of another array (what `concatenate` and `stack` do).

use super::layout::{c_strides, coalesce, Layout};
use super::{cpu, ArrayView};
use crate::array::kernels::strided::{self, StridedOperand};
use crate::array::{Array, Storage};
use crate::error::{Error, Result};

/// The view's elements in a new C-contiguous array on its device.
pub(super) fn to_array<T: crate::element::Element>(v: &ArrayView<'_, T>) -> Result<Array<T>> {
    let base = v.base();
    base.storage().ensure_usable()?;
    let l = v.layout();
    let shape = l.shape.clone();
    let n = l.size();
    if l.is_c_contiguous() && l.offset == 0 && n == base.size() {
        return base.try_clone()?.into_shape(shape);
    }
    match base.storage() {
        Storage::Cpu(src) => {
            crate::backend::cpu_capture::forbid_in_capture("copying a view")?;
            let out = if n == 0 {
                Vec::new()
            } else {
                let (s, [st]) = coalesce(&l.shape, [&l.strides]);
                cpu::gather(src, l.offset, &s, &st)?
            };
            Array::from_storage(shape, Storage::Cpu(out))
        }
        Storage::Cuda { backend, slice } => {
            // SAFETY: every element is written by the copy kernel queued right after.
            let mut out = unsafe { backend.alloc::<T>(n)? };
            if n > 0 {
                let dst_strides = c_strides(&l.shape);
                let (s, [ss, ds]) = coalesce(&l.shape, [&l.strides, &dst_strides]);
                let src = StridedOperand::new(backend, slice, l.offset, &ss);
                let dst = StridedOperand::new_mut(backend, &mut out, 0, &ds);
                strided::copy::<T>(backend, &s, src, dst)?;
            }
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

/// The view's elements in C order on the host.
pub(super) fn to_host_vec<T: crate::element::Element>(v: &ArrayView<'_, T>) -> Result<Vec<T>> {
    let l = v.layout();
    if let Storage::Cpu(src) = v.base().storage() {
        crate::backend::cpu_capture::forbid_in_capture("reading a view on the host")?;
        v.base().device().synchronize()?;
        if l.size() == 0 {
            return Ok(Vec::new());
        }
        let (s, [st]) = coalesce(&l.shape, [&l.strides]);
        return cpu::gather(src, l.offset, &s, &st);
    }
    v.copy()?.to_vec()
}

/// Copies the view's elements into `dst` (an array on the same device) at the positions of
/// `dst_layout` (a layout of `dst`'s buffer with the view's shape, its positions distinct).
pub(super) fn copy_into<T: crate::element::Element>(
    v: &ArrayView<'_, T>,
    dst: &mut Array<T>,
    dst_layout: &Layout,
) -> Result<()> {
    let l = v.layout();
    if l.shape != dst_layout.shape {
        return Err(Error::Other(format!(
            "internal: copying a view of shape {:?} into a block of shape {:?}",
            l.shape, dst_layout.shape
        )));
    }
    if l.size() == 0 {
        return Ok(());
    }
    let (s, [ss, ds]) = coalesce(&l.shape, [&l.strides, &dst_layout.strides]);
    match (v.base().storage(), dst.storage_mut()) {
        (Storage::Cpu(src), Storage::Cpu(out)) => {
            crate::backend::cpu_capture::forbid_in_capture("copying a view")?;
            cpu::scatter(src, l.offset, &ss, out, dst_layout.offset, &ds, &s);
            Ok(())
        }
        (Storage::Cuda { backend, slice }, Storage::Cuda { slice: out, .. }) => {
            let src = StridedOperand::new(backend, slice, l.offset, &ss);
            let dst = StridedOperand::new_mut(backend, out, dst_layout.offset, &ds);
            strided::copy::<T>(backend, &s, src, dst)
        }
        _ => Err(Error::DeviceMismatch(format!(
            "copying a view on {} into an array on {}",
            v.device(),
            dst.device()
        ))),
    }
}
