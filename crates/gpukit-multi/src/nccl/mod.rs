//! NCCL communicators on gpukit arrays (feature `nccl`): one rank per GPU, the collectives
//! queued on gpukit's stream of the rank's device, so they run in order with its kernels.
//!
//! `NCCL_NVLS_ENABLE` is set to `0` before libnccl is loaded (and a different value is refused):
//! NVLink multicast stays off (`crate::env`).

mod ffi;

pub use ffi::{library, NcclLib, NCCL_LIB_VAR};

use crate::collective::{CollectiveElement, ReduceOp};
use gpukit::{Array, Device, Error, Result};
use std::ffi::c_void;

/// NCCL's unique id: made by rank 0, sent to every other rank, used by all to join one
/// communicator.
#[derive(Clone, Copy)]
pub struct NcclId(ffi::UniqueId);

impl NcclId {
    /// A new id (`ncclGetUniqueId`); an error where libnccl cannot be loaded.
    pub fn new() -> Result<NcclId> {
        let lib = library().map_err(Error::Other)?;
        let mut id = ffi::UniqueId { internal: [0; 128] };
        // SAFETY: `id` is a valid ncclUniqueId to write.
        lib.check("ncclGetUniqueId", unsafe { (lib.get_unique_id)(&mut id) })?;
        Ok(NcclId(id))
    }

    /// The id's 128 bytes, to send to the other ranks.
    pub fn as_bytes(&self) -> [u8; 128] {
        self.0.internal.map(|c| c as u8)
    }

    /// An id from the 128 bytes [`NcclId::as_bytes`] gave; an error for another length.
    pub fn from_bytes(b: &[u8]) -> Result<NcclId> {
        let b: [u8; 128] = b.try_into().map_err(|_| {
            Error::Other(format!(
                "an NCCL unique id has 128 bytes, {} were received",
                b.len()
            ))
        })?;
        Ok(NcclId(ffi::UniqueId {
            internal: b.map(|x| x as std::ffi::c_char),
        }))
    }
}

/// One rank of an NCCL communicator, on one GPU.
pub(crate) struct NcclComm {
    comm: ffi::Comm,
    lib: &'static NcclLib,
    device: Device,
    rank: usize,
    world: usize,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time; a
// `NcclComm` lives in one worker (or one process) and is used through `&self` by that owner.
unsafe impl Send for NcclComm {}
// SAFETY: as above: calls through `&self` are made by the owner's thread.
unsafe impl Sync for NcclComm {}

impl Drop for NcclComm {
    fn drop(&mut self) {
        // SAFETY: `comm` came from ncclCommInitRank and is destroyed once.
        unsafe {
            (self.lib.comm_destroy)(self.comm);
        }
    }
}

impl NcclComm {
    /// Joins rank `rank` of `world` on `device` (blocks until every rank has joined).
    pub(crate) fn init(id: &NcclId, rank: usize, world: usize, device: Device) -> Result<NcclComm> {
        let lib = library().map_err(Error::Other)?;
        if !device.is_cuda() {
            return Err(Error::NeedsGpu {
                what: "an NCCL communicator".into(),
            });
        }
        // NCCL picks the GPU from the calling thread's current device.
        device
            .cuda_context()?
            .bind_to_thread()
            .map_err(|e| Error::Cuda(format!("binding {device} for NCCL: {e}")))?;
        let mut comm: ffi::Comm = std::ptr::null_mut();
        let code = unsafe { (lib.comm_init_rank)(&mut comm, world as i32, id.0, rank as i32) };
        lib.check(
            &format!("ncclCommInitRank (rank {rank} of {world} on {device})"),
            code,
        )?;
        Ok(NcclComm {
            comm,
            lib,
            device,
            rank,
            world,
        })
    }

    fn stream(&self) -> Result<*mut c_void> {
        Ok(self.device.cuda_stream()?.cu_stream() as *mut c_void)
    }

    fn what(&self, op: &str) -> String {
        format!(
            "{op} (rank {} of {} on {})",
            self.rank, self.world, self.device
        )
    }

    pub(crate) fn all_reduce<T: CollectiveElement>(
        &self,
        a: &mut Array<T>,
        op: ReduceOp,
    ) -> Result<()> {
        let p = a.as_device_ptr()? as *mut c_void;
        let s = self.stream()?;
        // SAFETY: `p` holds `size()` elements of T on this device; in place is allowed.
        let code =
            unsafe { (self.lib.all_reduce)(p, p, a.size(), T::NCCL_TYPE, op.nccl(), self.comm, s) };
        self.lib.check(&self.what("ncclAllReduce"), code)
    }

    pub(crate) fn broadcast<T: CollectiveElement>(
        &self,
        a: &mut Array<T>,
        root: usize,
    ) -> Result<()> {
        let p = a.as_device_ptr()? as *mut c_void;
        let s = self.stream()?;
        // SAFETY: as in all_reduce.
        let code = unsafe {
            (self.lib.broadcast)(p, p, a.size(), T::NCCL_TYPE, root as i32, self.comm, s)
        };
        self.lib.check(&self.what("ncclBroadcast"), code)
    }

    pub(crate) fn all_gather<T: CollectiveElement>(
        &self,
        a: &Array<T>,
        shape: Vec<usize>,
    ) -> Result<Array<T>> {
        let out = Array::<T>::zeros_on(shape, &self.device)?;
        let s = self.stream()?;
        let src = a.as_device_ptr()? as *const c_void;
        let dst = out.as_device_ptr()? as *mut c_void;
        // SAFETY: `out` holds world * a.size() elements; the buffers do not overlap.
        let code = unsafe { (self.lib.all_gather)(src, dst, a.size(), T::NCCL_TYPE, self.comm, s) };
        self.lib.check(&self.what("ncclAllGather"), code)?;
        Ok(out)
    }

    pub(crate) fn reduce_scatter<T: CollectiveElement>(
        &self,
        a: &Array<T>,
        op: ReduceOp,
        shape: Vec<usize>,
    ) -> Result<Array<T>> {
        let out = Array::<T>::zeros_on(shape, &self.device)?;
        let s = self.stream()?;
        let src = a.as_device_ptr()? as *const c_void;
        let dst = out.as_device_ptr()? as *mut c_void;
        // SAFETY: `out` holds a.size() / world elements; the buffers do not overlap.
        let code = unsafe {
            (self.lib.reduce_scatter)(src, dst, out.size(), T::NCCL_TYPE, op.nccl(), self.comm, s)
        };
        self.lib.check(&self.what("ncclReduceScatter"), code)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where libnccl is installed (a GPU machine, or `pip install nvidia-nccl-cu13` in the
    /// active virtual environment), it loads under its real name with every symbol; elsewhere
    /// the reason names the library and the variable to set.
    #[test]
    fn library_loads_or_says_how_to_find_it() {
        match library() {
            Ok(lib) => {
                let v = lib.version();
                assert!(v.starts_with("2."), "{v}");
                assert!(lib.path().contains("nccl"), "{}", lib.path());
                assert!(lib.error_string(4).to_lowercase().contains("invalid"));
                println!("NCCL {v} from {}", lib.path());
                assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"));
            }
            Err(e) => {
                assert!(e.contains(NCCL_LIB_VAR) && e.contains("libnccl"), "{e}");
                println!("skipped: {e}");
            }
        }
    }

    #[test]
    fn ids_round_trip_and_wrong_lengths_are_errors() {
        let id = NcclId(ffi::UniqueId {
            internal: std::array::from_fn(|i| i as std::ffi::c_char),
        });
        let back = NcclId::from_bytes(&id.as_bytes()).unwrap();
        assert_eq!(back.as_bytes(), id.as_bytes());
        assert!(NcclId::from_bytes(&[0u8; 127]).is_err());
    }
}
