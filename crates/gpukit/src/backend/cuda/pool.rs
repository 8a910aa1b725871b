//! The device's stream-ordered memory pool (what `cuMemAllocAsync` allocates from).
//!
//! By default the driver hands freed pool memory back to the system at every synchronisation,
//! so the next allocation pays for mapping it again. Like CuPy's memory pool, gpukit keeps it
//! for reuse instead (release threshold = unlimited), counts the kept bytes as free when it
//! checks a request, and trims the pool when an allocation fails.

use cudarc::driver::sys::{self, CUmemPool_attribute as PoolAttr, CUmemoryPool, CUresult};
use cudarc::driver::CudaContext;
use std::ffi::c_void;

/// The default memory pool of one device.
pub(crate) struct Pool(CUmemoryPool);

// SAFETY: a CUmemoryPool handle may be used from any thread (the driver API is thread safe).
unsafe impl Send for Pool {}
// SAFETY: as above; gpukit never mutates the handle itself.
unsafe impl Sync for Pool {}

impl Pool {
    /// The device's default pool, set to keep freed memory; `None` without pool support.
    pub(crate) fn default_for(ctx: &CudaContext) -> Option<Pool> {
        if !ctx.has_async_alloc() {
            return None;
        }
        let mut pool: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: writes one handle; the device handle comes from a live context.
        let r = unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) };
        if r != CUresult::CUDA_SUCCESS || pool.is_null() {
            return None;
        }
        let mut keep_all: u64 = u64::MAX;
        // SAFETY: the release threshold attribute is a u64 (cuda.h).
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                PoolAttr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut keep_all as *mut u64 as *mut c_void,
            )
        };
        Some(Pool(pool))
    }

    fn attribute(&self, attr: PoolAttr) -> u64 {
        let mut v: u64 = 0;
        // SAFETY: the reserved/used memory attributes are u64 (cuda.h).
        let r =
            unsafe { sys::cuMemPoolGetAttribute(self.0, attr, &mut v as *mut u64 as *mut c_void) };
        if r == CUresult::CUDA_SUCCESS {
            v
        } else {
            0
        }
    }

    /// Bytes the pool has taken from the device (in use by allocations, or idle).
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.attribute(PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) as usize
    }

    /// Bytes of the pool that allocations use (a freed buffer counts until the stream has
    /// passed its free).
    pub(crate) fn used_bytes(&self) -> usize {
        self.attribute(PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT) as usize
    }

    /// Bytes the pool holds that no allocation uses (available to the next request).
    pub(crate) fn idle_bytes(&self) -> usize {
        self.reserved_bytes().saturating_sub(self.used_bytes())
    }

    /// Gives every idle byte back to the system (call after synchronising the stream).
    pub(crate) fn trim(&self) {
        // SAFETY: trimming only releases memory no allocation uses.
        unsafe { sys::cuMemPoolTrimTo(self.0, 0) };
    }
}
