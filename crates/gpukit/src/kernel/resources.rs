//! What a compiled kernel costs on a GPU (the `%kernelinfo` magic): registers per thread, shared,
//! local and constant memory, register spills, the largest block it can run with, and the
//! occupancy it reaches at each block size, from the driver's function attributes and its
//! occupancy calculator; plus the block size the calculator suggests.

use super::cuda::{cached_function, FnSpec};
use super::info::{full_source, KernelInfo};
use super::module::CudaKernel;
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::device::{default_device, Device};
use crate::error::{Error, Result};
use cudarc::driver::result::{function, occupancy};
use cudarc::driver::sys::{CUfunction, CUfunction_attribute as Attr};
use std::fmt;

/// The resources of one kernel compiled for one device, and its occupancy.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelResources {
    /// Kernel name.
    pub kernel: String,
    /// The device it was compiled for.
    pub device: Device,
    /// Registers each thread uses.
    pub registers_per_thread: u32,
    /// Statically allocated shared memory per block, bytes.
    pub shared_bytes_per_block: usize,
    /// Local memory per thread, bytes (register spills and local arrays live here).
    pub local_bytes_per_thread: usize,
    /// Constant memory the kernel uses, bytes.
    pub const_bytes: usize,
    /// The largest block this kernel can be launched with on this device.
    pub max_threads_per_block: u32,
    /// Virtual architecture of the PTX it came from, e.g. 90.
    pub ptx_version: u32,
    /// Architecture of the machine code the driver runs, e.g. 90.
    pub binary_version: u32,
    /// Threads per SM the device can keep resident.
    pub max_threads_per_sm: u32,
    /// The block size with the highest occupancy (the driver's occupancy calculator).
    pub suggested_block_size: u32,
    /// The smallest grid that reaches that occupancy on every SM.
    pub suggested_min_blocks: u32,
    /// Occupancy at the usual block sizes (32 to the largest allowed, doubling).
    pub occupancy: Vec<Occupancy>,
}

/// How full the SMs get at one block size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Threads per block.
    pub block_size: u32,
    /// Blocks that fit on one SM at once.
    pub blocks_per_sm: u32,
    /// Resident threads per SM as a fraction of the most the SM can hold (0 to 1).
    pub fraction: f64,
}

impl KernelResources {
    /// The occupancy at `block_size` threads per block, if it is one of the sizes measured.
    pub fn occupancy_at(&self, block_size: u32) -> Option<Occupancy> {
        self.occupancy
            .iter()
            .copied()
            .find(|o| o.block_size == block_size)
    }

    /// Whether registers spill to local memory (slow).
    pub fn spills(&self) -> bool {
        self.local_bytes_per_thread > 0
    }
}

impl fmt::Display for KernelResources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kernel `{}` on {} (PTX for sm_{}, running as sm_{})",
            self.kernel, self.device, self.ptx_version, self.binary_version
        )?;
        writeln!(f, "  registers per thread   {}", self.registers_per_thread)?;
        writeln!(
            f,
            "  shared memory / block  {} B",
            self.shared_bytes_per_block
        )?;
        writeln!(
            f,
            "  local memory / thread  {} B{}",
            self.local_bytes_per_thread,
            if self.spills() {
                "  (registers spill or a local array lives there: slower)"
            } else {
                "  (no spills)"
            }
        )?;
        writeln!(f, "  constant memory        {} B", self.const_bytes)?;
        writeln!(
            f,
            "  largest block          {} threads",
            self.max_threads_per_block
        )?;
        writeln!(
            f,
            "  suggested block size   {} threads (occupancy calculator; at least {} blocks fill the GPU)",
            self.suggested_block_size, self.suggested_min_blocks
        )?;
        write!(f, "  occupancy by block size:")?;
        for o in &self.occupancy {
            write!(
                f,
                "\n    {:>5} threads: {:>2} blocks/SM, {:>5.1}% of {} threads/SM",
                o.block_size,
                o.blocks_per_sm,
                o.fraction * 100.0,
                self.max_threads_per_sm
            )?;
        }
        Ok(())
    }
}

/// The resources of a `#[kernel]` on the default device (it must be a CUDA GPU), compiling it
/// there first if needed. The macro's `NAME.resources()` calls this.
pub fn resources(info: &KernelInfo) -> Result<KernelResources> {
    let backend = cuda_backend("kernel resources")?;
    let spec = FnSpec {
        key_source: info.cuda_source,
        helpers: info.device_fns.as_ptr() as usize,
        kernel: info.name,
        array_names: info.array_names,
    };
    let loaded = cached_function(&backend, &spec, || {
        (info.name.to_string(), full_source(info))
    })?;
    of_function(info.name, &backend, loaded.func)
}

impl CudaKernel {
    /// What this raw CUDA kernel costs on its device (see [`KernelResources`]).
    pub fn resources(&self) -> Result<KernelResources> {
        of_function(self.name(), &self.backend, self.func.cu_function())
    }
}

fn cuda_backend(what: &str) -> Result<std::sync::Arc<CudaBackend>> {
    match default_device() {
        Device::Cuda(n) => CudaBackend::get(n),
        Device::Cpu => Err(Error::NeedsGpu {
            what: what.to_string(),
        }),
    }
}

/// Reads the attributes and occupancy of a loaded function.
pub(crate) fn of_function(
    name: &str,
    backend: &CudaBackend,
    func: CUfunction,
) -> Result<KernelResources> {
    backend.ensure_usable()?;
    backend
        .context()
        .bind_to_thread()
        .map_err(|e| driver_err("binding the CUDA context", e))?;
    let attr = |a: Attr| -> Result<u32> {
        // SAFETY: `func` is a loaded function of this backend's (current) context.
        unsafe { function::get_function_attribute(func, a) }
            .map(|v| v.max(0) as u32)
            .map_err(|e| driver_err("reading a kernel attribute", e))
    };
    let max_threads_per_block = attr(Attr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
    let props = backend.properties();
    let max_threads_per_sm = props.max_threads_per_multiprocessor.max(1);
    let mut table = Vec::new();
    let mut block = 32u32;
    while block <= max_threads_per_block {
        // SAFETY: as above; no dynamic shared memory.
        let blocks =
            unsafe { occupancy::max_active_block_per_multiprocessor(func, block as i32, 0) }
                .map_err(|e| driver_err("querying occupancy", e))?
                .max(0) as u32;
        table.push(Occupancy {
            block_size: block,
            blocks_per_sm: blocks,
            fraction: (blocks * block) as f64 / max_threads_per_sm as f64,
        });
        block *= 2;
    }
    // SAFETY: as above; no dynamic shared memory, so no size callback.
    let (min_grid, suggested) = unsafe { occupancy::max_potential_block_size(func, None, 0, 0) }
        .map_err(|e| driver_err("asking the occupancy calculator", e))?;
    Ok(KernelResources {
        kernel: name.to_string(),
        device: backend.device(),
        registers_per_thread: attr(Attr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        shared_bytes_per_block: attr(Attr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? as usize,
        local_bytes_per_thread: attr(Attr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)? as usize,
        const_bytes: attr(Attr::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)? as usize,
        max_threads_per_block,
        ptx_version: attr(Attr::CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
        binary_version: attr(Attr::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
        max_threads_per_sm,
        suggested_block_size: suggested.max(0) as u32,
        suggested_min_blocks: min_grid.max(0) as u32,
        occupancy: table,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> KernelResources {
        KernelResources {
            kernel: "blur".into(),
            device: Device::Cuda(0),
            registers_per_thread: 32,
            shared_bytes_per_block: 0,
            local_bytes_per_thread: 0,
            const_bytes: 0,
            max_threads_per_block: 1024,
            ptx_version: 90,
            binary_version: 90,
            max_threads_per_sm: 2048,
            suggested_block_size: 1024,
            suggested_min_blocks: 264,
            occupancy: vec![
                Occupancy {
                    block_size: 32,
                    blocks_per_sm: 32,
                    fraction: 0.5,
                },
                Occupancy {
                    block_size: 1024,
                    blocks_per_sm: 2,
                    fraction: 1.0,
                },
            ],
        }
    }

    #[test]
    fn the_report_names_every_number() {
        let text = sample().to_string();
        for part in [
            "kernel `blur` on cuda:0 (PTX for sm_90, running as sm_90)",
            "registers per thread   32",
            "(no spills)",
            "suggested block size   1024 threads",
            "   32 threads: 32 blocks/SM,  50.0% of 2048 threads/SM",
            " 1024 threads:  2 blocks/SM, 100.0% of 2048 threads/SM",
        ] {
            assert!(text.contains(part), "missing {part:?} in:\n{text}");
        }
        assert_eq!(sample().occupancy_at(1024).unwrap().blocks_per_sm, 2);
        assert!(sample().occupancy_at(100).is_none());
    }

    #[test]
    fn the_cpu_has_no_kernel_resources() {
        if default_device() == Device::Cpu {
            let e = cuda_backend("kernel resources").unwrap_err();
            assert!(matches!(e, Error::NeedsGpu { .. }), "{e}");
        }
    }
}
