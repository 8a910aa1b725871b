//! What a CUDA device is: the static properties queried once when its backend is created.

use super::driver_err;
use crate::error::Result;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// What a CUDA GPU is and what it can do (the numbers CUDA's deviceQuery prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaProperties {
    /// CUDA device number.
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability (major, minor), e.g. (9, 0).
    pub compute_capability: (u32, u32),
    /// Number of streaming multiprocessors (SMs).
    pub multiprocessors: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Largest number of threads in one block.
    pub max_threads_per_block: u32,
    /// Largest number of resident threads per SM.
    pub max_threads_per_multiprocessor: u32,
    /// Largest block size in x, y, z.
    pub max_block_dims: [u32; 3],
    /// Largest grid size in x, y, z.
    pub max_grid_dims: [u32; 3],
    /// Global memory in bytes.
    pub total_memory: usize,
    /// Shared memory per block in bytes (without opt-in).
    pub shared_memory_per_block: usize,
    /// Peak SM clock in kHz.
    pub clock_khz: u32,
    /// Peak memory clock in kHz.
    pub memory_clock_khz: u32,
    /// Memory bus width in bits.
    pub memory_bus_width_bits: u32,
    /// L2 cache size in bytes.
    pub l2_cache_bytes: usize,
    /// PCI domain, bus and device numbers: where the GPU sits, the same for CUDA and NVML
    /// (whose device order may differ from CUDA's).
    pub pci_location: [u32; 3],
}

pub(super) fn query_properties(ctx: &Arc<CudaContext>) -> Result<CudaProperties> {
    let q = |what: &str, e: DriverError| driver_err(&format!("querying {what}"), e);
    let a = |attr: Attr| -> Result<u32> {
        ctx.attribute(attr)
            .map(|v| v.max(0) as u32)
            .map_err(|e| q("a device attribute", e))
    };
    Ok(CudaProperties {
        ordinal: ctx.ordinal(),
        name: ctx.name().map_err(|e| q("the device name", e))?,
        compute_capability: {
            let (ma, mi) = ctx
                .compute_capability()
                .map_err(|e| q("the compute capability", e))?;
            (ma.max(0) as u32, mi.max(0) as u32)
        },
        multiprocessors: a(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        warp_size: a(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        max_threads_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_per_multiprocessor: a(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        )?,
        max_block_dims: [
            a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dims: [
            a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        total_memory: ctx.total_mem().map_err(|e| q("the memory size", e))?,
        shared_memory_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as usize,
        clock_khz: a(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
        memory_clock_khz: a(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        memory_bus_width_bits: a(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        l2_cache_bytes: a(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
        pci_location: [
            a(Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
            a(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
            a(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
        ],
    })
}
