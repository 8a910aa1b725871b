//! What the driver knows about a device address handed to gpukit from outside (DLPack imports,
//! raw pointers): which device's memory it is, and how far its allocation reaches.
//!
//! gpukit cannot prove that foreign memory stays alive, but it can refuse an address that is
//! not device memory of this device, or a range that runs past the end of its allocation,
//! before any kernel reads it.

use super::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUdeviceptr, CUmemorytype, CUpointer_attribute, CUresult};
use std::ffi::c_void;

impl CudaBackend {
    /// Checks that `bytes` bytes from `ptr` lie inside one allocation of device memory of this
    /// device (memory of another device, host memory, managed memory and unknown addresses are
    /// refused). `what` names the caller in the error (e.g. `a DLPack tensor`).
    pub(crate) fn check_device_range(
        &self,
        ptr: CUdeviceptr,
        bytes: usize,
        what: &str,
    ) -> Result<()> {
        self.ensure_usable()?;
        self.context()
            .bind_to_thread()
            .map_err(|e| driver_err("binding the CUDA context", e))?;
        let here = format!("cuda:{}", self.ordinal());
        let refuse = |why: String| Error::Other(format!("{what} at {ptr:#x}: {why}"));

        let mut memory_type: u32 = 0;
        // SAFETY: the memory type attribute is written as one unsigned int (cuda.h).
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut memory_type as *mut u32 as *mut c_void,
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                ptr,
            )
        };
        if r != CUresult::CUDA_SUCCESS {
            return Err(refuse(format!(
                "the CUDA driver does not know this address ({r:?}); it is not memory that \
                 CUDA allocated in this process"
            )));
        }
        let mut managed: u32 = 0;
        // SAFETY: the is-managed attribute is written as one unsigned int (cuda.h).
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut managed as *mut u32 as *mut c_void,
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                ptr,
            )
        };
        if r == CUresult::CUDA_SUCCESS && managed != 0 {
            return Err(refuse(
                "it is managed (unified) memory; gpukit wraps only device memory".into(),
            ));
        }
        if memory_type != CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
            let kind = if memory_type == CUmemorytype::CU_MEMORYTYPE_HOST as u32 {
                "host memory"
            } else {
                "not device memory"
            };
            return Err(refuse(format!(
                "it is {kind}; gpukit wraps only device memory"
            )));
        }
        let mut ordinal: i32 = -1;
        // SAFETY: the device ordinal attribute is written as one int (cuda.h).
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut ordinal as *mut i32 as *mut c_void,
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
        };
        if r != CUresult::CUDA_SUCCESS {
            return Err(refuse(format!("its device could not be read ({r:?})")));
        }
        if usize::try_from(ordinal).ok() != Some(self.ordinal()) {
            return Err(Error::DeviceMismatch(format!(
                "{what} at {ptr:#x} is memory of cuda:{ordinal}, not of {here}"
            )));
        }
        let (base, size) = allocation_range(ptr).map_err(|r| {
            refuse(format!(
                "the extent of its allocation could not be read ({r:?})"
            ))
        })?;
        let end = ptr.checked_add(bytes as u64);
        let alloc_end = base.saturating_add(size as u64);
        match end {
            Some(end) if end <= alloc_end => Ok(()),
            _ => Err(refuse(format!(
                "{bytes} bytes from here run past the end of its allocation ({size} bytes from \
                 {base:#x}, so {} bytes are left)",
                alloc_end.saturating_sub(ptr)
            ))),
        }
    }
}

/// The start and size of the allocation holding `ptr`: `cuMemGetAddressRange`, else the pointer's
/// range attributes (the context must be current).
fn allocation_range(ptr: CUdeviceptr) -> std::result::Result<(CUdeviceptr, usize), CUresult> {
    let (mut base, mut size): (CUdeviceptr, usize) = (0, 0);
    // SAFETY: writes one address and one size.
    let r = unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr) };
    if r == CUresult::CUDA_SUCCESS {
        return Ok((base, size));
    }
    let mut start: CUdeviceptr = 0;
    let mut len: usize = 0;
    // SAFETY: the range attributes are written as one address and one size (cuda.h).
    let (a, b) = unsafe {
        (
            sys::cuPointerGetAttribute(
                &mut start as *mut CUdeviceptr as *mut c_void,
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                ptr,
            ),
            sys::cuPointerGetAttribute(
                &mut len as *mut usize as *mut c_void,
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                ptr,
            ),
        )
    };
    if a == CUresult::CUDA_SUCCESS && b == CUresult::CUDA_SUCCESS {
        Ok((start, len))
    } else {
        Err(r)
    }
}
