//! # gpukit-multi
//!
//! Many GPUs, then many machines, for gpukit notebooks (the course's chapter 8, which uses
//! Dask there):
//!
//! - [`DevicePool`]: one worker thread per GPU, each bound to its device for life; `submit` a
//!   closure to a worker and wait on its [`Handle`], `map` over partitions, `gather` results.
//!   Without a GPU, `GPUKIT_CPU_DEVICES=N` (or [`DevicePool::virtual_cpu`]) gives N *virtual*
//!   CPU devices: worker threads on gpukit's CPU backend, sharing the host's memory and cores.
//! - [`DistArray`]: an array split along axis 0 across the pool's devices, with elementwise
//!   arithmetic, reductions (local, then combined through NCCL or on the host) and `gather`.
//! - [`transfer`]: copies between devices, peer to peer where the GPUs allow it, else staged
//!   through pinned host memory, saying which ([`TransferPath`]).
//! - Collectives ([`Communicator`], [`DevicePool::all_reduce`] and friends): all-reduce,
//!   broadcast, all-gather, reduce-scatter through NCCL on GPUs (feature `nccl`, libnccl loaded
//!   at run time), with the same results through host memory on virtual CPU devices.
//! - `DistFrame` (feature `frame`): a gpukit-frame `DataFrame` split into partitions across
//!   the workers, made with `from_partitions` or `from_map` (e.g. the Dask-like
//!   `gpukit_frame::datasets::timeseries`), with `filter`, `group_by(..).agg(..)` (local
//!   aggregates, gathered, combined on one device) and `collect`.
//! - Beyond one machine: [`Rendezvous::from_env`] reads torchrun's variables (`RANK`,
//!   `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, `LOCAL_RANK`), [`ProcessGroup`] connects the
//!   processes, [`Communicator::from_group`] makes one NCCL communicator per process (NCCL's
//!   unique id travels through the rendezvous), and the `gpukit-launch` binary ([`launch`])
//!   starts N processes with those variables, as `torchrun --standalone` does.
//!
//! NVLink multicast stays off: `NCCL_NVLS_ENABLE` is set to `0` in the process when unset and
//! any other value is refused ([`env`]).
//!
//! ```
//! use gpukit::{Array, Device};
//! use gpukit_multi::{DevicePool, DistArray, ReduceOp};
//! # fn main() -> gpukit::Result<()> {
//! let pool = DevicePool::virtual_cpu(2)?;
//! // a job on worker 1, on its device
//! let h = pool.submit(1, |ctx| Array::<f32>::ones(4)?.sum().map(|s| (ctx.device(), s)))?;
//! assert_eq!(h.wait()?.1, 4.0);
//! // one array per worker, all-reduced
//! let parts = vec![Array::from_vec_on(vec![1i64, 2], vec![2], &Device::Cpu)?,
//!                  Array::from_vec_on(vec![10i64, 20], vec![2], &Device::Cpu)?];
//! let out = pool.all_reduce(parts, ReduceOp::Sum)?;
//! assert_eq!(out[1].to_vec()?, vec![11, 22]);
//! # Ok(())
//! # }
//! ```

pub mod collective;
mod dist;
pub mod env;
#[cfg(feature = "frame")]
pub mod frame;
pub mod launch;
#[cfg(feature = "nccl")]
pub mod nccl;
mod pool;
pub mod rendezvous;
mod transfer;

pub use collective::{CollectiveBackend, CollectiveElement, Communicator, ReduceOp};
pub use dist::CombinePath;
pub use dist::DistArray;
#[cfg(feature = "frame")]
pub use frame::{DistFrame, DistGroupBy};
/// gpukit-frame, the crate of the partitions (feature `frame`).
#[cfg(feature = "frame")]
pub use gpukit_frame;
pub use pool::{DevicePool, Handle, WorkerCtx, CPU_DEVICES_VAR};
pub use rendezvous::{ProcessGroup, Rendezvous};
pub use transfer::{can_access_peer, staged_copy, transfer, Transfer, TransferPath};

/// What a notebook needs, in one `use gpukit_multi::prelude::*;` (the kernel's
/// `%crate gpukit-multi` imports it).
pub mod prelude {
    pub use crate::collective::{CollectiveBackend, Communicator, ReduceOp};
    pub use crate::dist::{CombinePath, DistArray};
    #[cfg(feature = "frame")]
    pub use crate::frame::{DistFrame, DistGroupBy};
    pub use crate::pool::{DevicePool, Handle, WorkerCtx};
    pub use crate::rendezvous::{ProcessGroup, Rendezvous};
    pub use crate::transfer::{can_access_peer, transfer, TransferPath};
    /// Dask's `dask.datasets.timeseries`, for `DistFrame::from_map`.
    #[cfg(feature = "frame")]
    pub use gpukit_frame::datasets::timeseries::{timeseries, Timeseries};
}
