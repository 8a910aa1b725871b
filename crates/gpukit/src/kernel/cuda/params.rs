//! The parameters of one launch: a `u64` slot per value, kept on the stack, and the list of
//! pointers to them that `cuLaunchKernel` reads.

use super::super::args::{ArgRepr, DeviceBuf, KernelArg};
use super::super::info::{ParamInfo, ParamKind};
use crate::backend::cuda::CudaBackend;
use crate::error::{Error, Result};
use cudarc::driver::CudaSlice;
use std::ffi::c_void;
use std::mem::MaybeUninit;

/// Kernel parameter values (one `u64` slot each: a pointer, a length, an extent or a scalar's
/// bits) and the pointers to them that `cuLaunchKernel` reads. The first [`INLINE`] live on the
/// stack, uninitialised until pushed (no per-launch clearing); more spill to the heap.
pub(super) struct Params {
    vals: [MaybeUninit<u64>; INLINE],
    ptrs: [MaybeUninit<*mut c_void>; INLINE],
    n: usize,
    spill_vals: Vec<u64>,
    spill_ptrs: Vec<*mut c_void>,
}

/// Parameter slots held on the stack; more spill to the heap.
pub(super) const INLINE: usize = 48;

impl Params {
    #[inline]
    pub(super) fn new() -> Params {
        Params {
            vals: [const { MaybeUninit::uninit() }; INLINE],
            ptrs: [const { MaybeUninit::uninit() }; INLINE],
            n: 0,
            spill_vals: Vec::new(),
            spill_ptrs: Vec::new(),
        }
    }

    #[inline]
    pub(super) fn push(&mut self, v: u64) {
        if self.n < INLINE {
            self.vals[self.n] = MaybeUninit::new(v);
        } else {
            self.spill_vals.push(v);
        }
        self.n += 1;
    }

    /// The values pushed so far, in order.
    pub(super) fn values(&self) -> Vec<u64> {
        let inline = self.n.min(INLINE);
        // SAFETY: the first `inline` values were written by `push`.
        let mut v: Vec<u64> = self.vals[..inline]
            .iter()
            .map(|x| unsafe { x.assume_init() })
            .collect();
        v.extend_from_slice(&self.spill_vals);
        v
    }

    /// The pointer array; valid while `self` is neither moved nor changed.
    #[inline]
    pub(super) fn pointers(&mut self) -> &mut [*mut c_void] {
        let inline = self.n.min(INLINE);
        for i in 0..inline {
            self.ptrs[i] = MaybeUninit::new(self.vals[i].as_mut_ptr() as *mut c_void);
        }
        if self.n <= INLINE {
            // SAFETY: the first `inline` pointers were written just above.
            return unsafe {
                std::slice::from_raw_parts_mut(self.ptrs.as_mut_ptr() as *mut *mut c_void, inline)
            };
        }
        self.spill_ptrs.clear();
        // SAFETY: all INLINE pointers were written above (n > INLINE).
        self.spill_ptrs.extend_from_slice(unsafe {
            std::slice::from_raw_parts(self.ptrs.as_ptr() as *const *mut c_void, INLINE)
        });
        for v in self.spill_vals.iter_mut() {
            self.spill_ptrs.push(v as *mut u64 as *mut c_void);
        }
        &mut self.spill_ptrs
    }
}

/// How arrays are passed.
#[derive(Clone, Copy)]
pub(crate) enum Abi {
    /// `#[kernel]`: slices as (pointer, length), views as (pointer, extent of each axis).
    Kernel,
    /// Raw CUDA C: a pointer only.
    Raw,
}

/// Builds the parameters of `args`; host arrays use the device copies in `staged` (by index).
pub(super) fn build_params(
    params: &mut Params,
    abi: Abi,
    kinds: Option<&[ParamInfo]>,
    args: &[KernelArg<'_>],
    staged: &[(usize, CudaSlice<u8>)],
    backend: &CudaBackend,
) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let (ptr, shape): (u64, &[usize]) = match &a.repr {
            ArgRepr::Scalar { bits, .. } => {
                params.push(*bits);
                continue;
            }
            ArgRepr::Device(d) => match &d.buf {
                DeviceBuf::Cuda { backend: b, ptr } if b.generation() == backend.generation() => {
                    (*ptr, d.shape)
                }
                buf => {
                    if let DeviceBuf::Cuda { backend: b, .. } = buf {
                        // Same device, another backend: one of the two was lost in a fault.
                        b.ensure_usable()?;
                        backend.ensure_usable()?;
                    }
                    return Err(Error::DeviceMismatch(format!(
                        "argument {} is {} but the kernel runs on {}",
                        i + 1,
                        a.describe(),
                        backend.device()
                    )));
                }
            },
            ArgRepr::Host(h) => {
                let dev = staged
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map(|(_, s)| s)
                    .expect("every host argument was staged");
                let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(dev, backend.stream());
                (ptr, &h.shape)
            }
        };
        params.push(ptr);
        if let Abi::Kernel = abi {
            let kind = kinds.map(|k| k[i].kind).unwrap_or(ParamKind::Slice);
            match kind {
                ParamKind::View | ParamKind::ViewMut => {
                    shape.iter().for_each(|&d| params.push(d as u64))
                }
                _ => params.push(shape.iter().product::<usize>() as u64),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_pointers_point_at_their_values_inline_and_spilled() {
        for count in [0usize, 1, INLINE, INLINE + 17] {
            let mut p = Params::new();
            (0..count as u64).for_each(|v| p.push(v * 3 + 1));
            let ptrs = p.pointers().to_vec();
            assert_eq!(ptrs.len(), count);
            for (i, ptr) in ptrs.iter().enumerate() {
                // SAFETY: `p` is alive and unchanged since `pointers()`.
                assert_eq!(unsafe { *(*ptr as *const u64) }, i as u64 * 3 + 1);
            }
        }
    }
}
