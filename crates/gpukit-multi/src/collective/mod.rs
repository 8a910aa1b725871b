//! Collectives: all-reduce, broadcast, all-gather and reduce-scatter between ranks (the
//! workers of a pool, or the processes of a [`ProcessGroup`](crate::ProcessGroup)).
//!
//! A [`Communicator`] belongs to one rank and one device and works on gpukit arrays there. The
//! semantics are NCCL's, whichever transport carries the data:
//!
//! | transport | used for | how |
//! |---|---|---|
//! | NCCL (feature `nccl`) | GPUs, one rank per GPU, in one process or many | `ncclAllReduce` etc. on gpukit's stream of the device |
//! | shared memory | virtual CPU devices; GPUs where NCCL is missing | threads exchange host copies |
//! | sockets | processes without NCCL (CPU, or the CPU tests of the multi-process path) | TCP through rank 0 of the rendezvous |
//!
//! The host transports compute the result from every rank's elements in rank order
//! (`host.rs`), so all ranks get bit-identical results; NCCL's sum order depends on its
//! algorithm, so its float sums may differ from them in the last bits.

mod host;
mod pool_ops;
pub(crate) mod shared;

use crate::pool::DevicePool;
use crate::rendezvous::ProcessGroup;
use gpukit::{Array, Device, Error, Numeric, Result};
use shared::{Blobs, SharedExchange};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The variable giving how long a host collective waits for the other ranks, in seconds
/// (default 300).
pub const COLLECTIVE_TIMEOUT_VAR: &str = "GPUKIT_COLLECTIVE_TIMEOUT";

/// How a collective combines elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// `a + b`
    Sum,
    /// `a * b`
    Prod,
    /// The smaller.
    Min,
    /// The larger.
    Max,
}

impl ReduceOp {
    /// `a op b`.
    pub fn apply<T: Numeric>(self, a: T, b: T) -> T {
        match self {
            ReduceOp::Sum => a.elem_add(b),
            ReduceOp::Prod => a.elem_mul(b),
            ReduceOp::Min => a.elem_min(b),
            ReduceOp::Max => a.elem_max(b),
        }
    }

    /// NCCL's `ncclRedOp_t` value.
    pub(crate) fn nccl(self) -> i32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Prod => 1,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Element types collectives carry: the plain numbers NCCL has a type for.
pub trait CollectiveElement: Numeric + sealed::Sealed {
    /// NCCL's `ncclDataType_t` value.
    const NCCL_TYPE: i32;
}

macro_rules! collective_element {
    ($($t:ty => $v:expr),*) => {$(
        impl sealed::Sealed for $t {}
        impl CollectiveElement for $t {
            const NCCL_TYPE: i32 = $v;
        }
    )*};
}
collective_element!(u8 => 1, i32 => 2, u32 => 3, i64 => 4, u64 => 5, f32 => 7, f64 => 8);

/// Which transport a pool's or process group's collectives use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectiveBackend {
    /// NCCL on the GPUs (its version, and the library's path).
    Nccl {
        /// `2.27.3` and the like.
        version: String,
        /// Where libnccl was loaded from.
        library: String,
    },
    /// Threads exchanging host copies: virtual CPU devices.
    SharedMemory,
    /// GPUs whose collectives go through host memory, and why not NCCL.
    HostStaged {
        /// Why NCCL is not used.
        reason: String,
    },
    /// Processes exchanging host copies over TCP through the rendezvous (no NCCL).
    Sockets,
}

impl fmt::Display for CollectiveBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CollectiveBackend::Nccl { version, library } => {
                write!(f, "NCCL {version} ({library})")
            }
            CollectiveBackend::SharedMemory => {
                f.write_str("shared host memory between worker threads (virtual CPU devices)")
            }
            CollectiveBackend::HostStaged { reason } => {
                write!(f, "host memory between GPU workers (not NCCL: {reason})")
            }
            CollectiveBackend::Sockets => {
                f.write_str("TCP sockets through the rendezvous (host copies)")
            }
        }
    }
}

enum Transport {
    Shared(Arc<SharedExchange>),
    Sockets(ProcessGroup),
    #[cfg(feature = "nccl")]
    Nccl(crate::nccl::NcclComm),
}

/// One rank's end of a group of ranks that run collectives together. Every rank must call
/// the same collectives in the same order with as many elements (NCCL's rule); the host
/// transports check the sizes and fail on every rank when they differ.
pub struct Communicator {
    rank: usize,
    world: usize,
    device: Device,
    backend: CollectiveBackend,
    transport: Transport,
}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("world", &self.world)
            .field("device", &self.device)
            .field("backend", &self.backend)
            .finish()
    }
}

/// How long host collectives wait: `GPUKIT_COLLECTIVE_TIMEOUT` seconds, default 300.
pub(crate) fn timeout() -> Result<Duration> {
    match std::env::var(COLLECTIVE_TIMEOUT_VAR) {
        Err(_) => Ok(Duration::from_secs(300)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                Error::Other(format!(
                    "{COLLECTIVE_TIMEOUT_VAR}={v:?}: expected a positive number of seconds"
                ))
            }),
    }
}

impl Communicator {
    /// This rank (0-based).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    pub fn world_size(&self) -> usize {
        self.world
    }

    /// The device whose arrays this communicator works on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The transport in use.
    pub fn backend(&self) -> &CollectiveBackend {
        &self.backend
    }

    /// A communicator for rank `rank` of the processes of `group`, on `device`: NCCL when the
    /// device is a GPU and libnccl loads (feature `nccl`; rank 0 makes NCCL's unique id and
    /// sends it to the others through the group), else host copies over the group's sockets.
    /// Every process of the group must call this at the same point.
    pub fn from_group(group: &ProcessGroup, device: Device) -> Result<Communicator> {
        let (rank, world) = (group.rank(), group.world_size());
        #[cfg(feature = "nccl")]
        {
            // Every rank must take the same branch (each branch exchanges differently): all
            // vote, and NCCL is used only when every rank has a GPU and libnccl.
            let mine = device.is_cuda() && crate::nccl::library().is_ok();
            let votes = group.exchange(vec![mine as u8])?;
            if votes.iter().all(|v| v == &[1u8]) {
                let lib = crate::nccl::library().map_err(Error::Other)?;
                let id_bytes = if rank == 0 {
                    crate::nccl::NcclId::new()?.as_bytes().to_vec()
                } else {
                    Vec::new()
                };
                let all = group.exchange(id_bytes)?;
                let id = crate::nccl::NcclId::from_bytes(&all[0])?;
                let comm = crate::nccl::NcclComm::init(&id, rank, world, device)?;
                return Ok(Communicator {
                    rank,
                    world,
                    device,
                    backend: CollectiveBackend::Nccl {
                        version: lib.version(),
                        library: lib.path().to_string(),
                    },
                    transport: Transport::Nccl(comm),
                });
            }
        }
        Ok(Communicator {
            rank,
            world,
            device,
            backend: CollectiveBackend::Sockets,
            transport: Transport::Sockets(group.clone()),
        })
    }

    fn check<T: CollectiveElement>(&self, what: &str, a: &Array<T>) -> Result<()> {
        if a.device() != self.device {
            return Err(Error::DeviceMismatch(format!(
                "{what}: the array is on {} but rank {}'s communicator works on {}",
                a.device(),
                self.rank,
                self.device
            )));
        }
        Ok(())
    }

    fn exchange(&self, mine: Vec<u8>) -> Result<Blobs> {
        match &self.transport {
            Transport::Shared(ex) => ex.exchange(self.rank, mine),
            Transport::Sockets(g) => Ok(Arc::new(g.exchange(mine)?)),
            #[cfg(feature = "nccl")]
            Transport::Nccl(_) => unreachable!("NCCL communicators do not exchange on the host"),
        }
    }

    /// Replaces `a` on every rank with the elementwise `op` of every rank's `a` (same shape on
    /// every rank).
    pub fn all_reduce<T: CollectiveElement>(&self, a: &mut Array<T>, op: ReduceOp) -> Result<()> {
        self.check("all_reduce", a)?;
        #[cfg(feature = "nccl")]
        if let Transport::Nccl(c) = &self.transport {
            return c.all_reduce(a, op);
        }
        let blobs = self.exchange(host::to_bytes(&a.to_vec()?))?;
        let r = host::all_reduce::<T>(&blobs, op)?;
        *a = Array::from_vec_on(r, a.shape().to_vec(), &self.device)?;
        Ok(())
    }

    /// Replaces `a` on every rank with rank `root`'s `a` (same shape on every rank).
    pub fn broadcast<T: CollectiveElement>(&self, a: &mut Array<T>, root: usize) -> Result<()> {
        self.check("broadcast", a)?;
        if root >= self.world {
            return Err(Error::Other(format!(
                "broadcast from rank {root}: there are {} ranks",
                self.world
            )));
        }
        #[cfg(feature = "nccl")]
        if let Transport::Nccl(c) = &self.transport {
            return c.broadcast(a, root);
        }
        let blobs = self.exchange(host::to_bytes(&a.to_vec()?))?;
        let r = host::broadcast::<T>(&blobs, root)?;
        *a = Array::from_vec_on(r, a.shape().to_vec(), &self.device)?;
        Ok(())
    }

    /// Every rank's `a` stacked along axis 0 in rank order: shape `[world * n, ...]` for `a`
    /// of shape `[n, ...]` (`[world]` for a 0-d `a`).
    pub fn all_gather<T: CollectiveElement>(&self, a: &Array<T>) -> Result<Array<T>> {
        self.check("all_gather", a)?;
        let mut shape = a.shape().to_vec();
        match shape.first_mut() {
            Some(n) => *n *= self.world,
            None => shape.push(self.world),
        }
        #[cfg(feature = "nccl")]
        if let Transport::Nccl(c) = &self.transport {
            return c.all_gather(a, shape);
        }
        let blobs = self.exchange(host::to_bytes(&a.to_vec()?))?;
        let r = host::all_gather::<T>(&blobs)?;
        Array::from_vec_on(r, shape, &self.device)
    }

    /// Block `rank` of the elementwise `op` of every rank's `a`, split along axis 0 into
    /// `world` equal blocks: shape `[n / world, ...]` (axis 0 must divide evenly).
    pub fn reduce_scatter<T: CollectiveElement>(
        &self,
        a: &Array<T>,
        op: ReduceOp,
    ) -> Result<Array<T>> {
        self.check("reduce_scatter", a)?;
        let mut shape = a.shape().to_vec();
        match shape.first_mut() {
            Some(n) if *n % self.world == 0 => *n /= self.world,
            _ => {
                return Err(Error::Shape(format!(
                    "reduce_scatter: axis 0 of shape {:?} does not split into {} equal blocks",
                    a.shape(),
                    self.world
                )))
            }
        }
        #[cfg(feature = "nccl")]
        if let Transport::Nccl(c) = &self.transport {
            return c.reduce_scatter(a, op, shape);
        }
        let blobs = self.exchange(host::to_bytes(&a.to_vec()?))?;
        let r = host::reduce_scatter::<T>(&blobs, op, self.rank)?;
        Array::from_vec_on(r, shape, &self.device)
    }

    /// Returns once every rank has called it (an all-reduce of one number; on NCCL it also
    /// waits for the device's queued work).
    pub fn barrier(&self) -> Result<()> {
        let mut one = Array::<i32>::from_vec_on(vec![1], vec![1], &self.device)?;
        self.all_reduce(&mut one, ReduceOp::Sum)?;
        let n = one.to_vec()?[0] as usize;
        if n != self.world {
            return Err(Error::Other(format!(
                "barrier: {n} ranks answered, {} expected",
                self.world
            )));
        }
        Ok(())
    }
}

/// Gives every worker of `pool` a communicator (see [`DevicePool::init_collectives`]).
pub(crate) fn init_pool(pool: &DevicePool, timeout: Duration) -> Result<CollectiveBackend> {
    let devices = pool.devices();
    let world = devices.len();
    let all_gpu = devices.iter().all(Device::is_cuda);
    let backend = if all_gpu {
        #[cfg(feature = "nccl")]
        {
            match crate::nccl::library() {
                Ok(lib) => {
                    let id = crate::nccl::NcclId::new()?;
                    let backend = CollectiveBackend::Nccl {
                        version: lib.version(),
                        library: lib.path().to_string(),
                    };
                    let b = backend.clone();
                    // Every worker joins at once (ncclCommInitRank waits for all ranks).
                    pool.on_each(move |ctx| {
                        let comm =
                            crate::nccl::NcclComm::init(&id, ctx.index(), world, ctx.device())?;
                        ctx.comm = Some(Communicator {
                            rank: ctx.index(),
                            world,
                            device: ctx.device(),
                            backend: b.clone(),
                            transport: Transport::Nccl(comm),
                        });
                        Ok(())
                    })?;
                    return Ok(backend);
                }
                Err(reason) => CollectiveBackend::HostStaged { reason },
            }
        }
        #[cfg(not(feature = "nccl"))]
        CollectiveBackend::HostStaged {
            reason: "gpukit-multi was built without its `nccl` feature".into(),
        }
    } else if devices.iter().all(|d| !d.is_cuda()) {
        CollectiveBackend::SharedMemory
    } else {
        CollectiveBackend::HostStaged {
            reason: "the pool mixes CPU and GPU workers".into(),
        }
    };
    let ex = SharedExchange::new(world, timeout);
    let b = backend.clone();
    pool.on_each(move |ctx| {
        ctx.comm = Some(Communicator {
            rank: ctx.index(),
            world,
            device: ctx.device(),
            backend: b.clone(),
            transport: Transport::Shared(ex.clone()),
        });
        Ok(())
    })?;
    Ok(backend)
}

#[cfg(test)]
mod tests;
