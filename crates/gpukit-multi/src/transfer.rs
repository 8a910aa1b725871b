//! Copies between devices, saying which path carried them.
//!
//! GPU to GPU: peer to peer (`cuMemcpyPeerAsync` over NVLink or PCIe, after enabling peer access
//! once per pair) when the driver says the destination can access the source
//! (`cuDeviceCanAccessPeer`), else staged through a pinned host buffer (download into pinned
//! memory, upload from it). GPU and host: gpukit's own upload/download. Virtual CPU devices
//! all live in the same host memory, so a "transfer" between them is a plain copy.

use gpukit::cudarc::driver::sys;
use gpukit::{Array, Device, Element, Error, Result};
use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;

/// Which path a copy took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferPath {
    /// Source and destination are the same device: a copy on it.
    SameDevice,
    /// GPU to GPU directly (peer access enabled).
    PeerToPeer,
    /// GPU to GPU through a pinned host buffer (the GPUs cannot access each other).
    StagedPinnedHost,
    /// Host to GPU.
    HostToDevice,
    /// GPU to host.
    DeviceToHost,
    /// Between (virtual) CPU devices: a copy in host memory.
    HostCopy,
}

impl fmt::Display for TransferPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransferPath::SameDevice => "same device (device copy)",
            TransferPath::PeerToPeer => "peer to peer (GPU to GPU directly)",
            TransferPath::StagedPinnedHost => "staged through pinned host memory",
            TransferPath::HostToDevice => "host to device",
            TransferPath::DeviceToHost => "device to host",
            TransferPath::HostCopy => "host memory copy (virtual CPU devices)",
        })
    }
}

/// A copied array and the path the copy took.
#[derive(Debug)]
pub struct Transfer<T: Element> {
    /// The copy, on the destination device.
    pub array: Array<T>,
    /// How it got there.
    pub path: TransferPath,
}

fn cuda(what: &str, code: sys::CUresult) -> Result<()> {
    if code == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda(format!("{what}: {code:?}")))
    }
}

/// Whether CUDA device `to` can read and write the memory of device `from` directly
/// (`cuDeviceCanAccessPeer`); false for the same device or where CUDA is unusable.
pub fn can_access_peer(from: usize, to: usize) -> Result<bool> {
    if from == to {
        return Ok(false);
    }
    // Checks both devices exist (and that the driver loads) before calling it.
    Device::cuda(from)?;
    Device::cuda(to)?;
    let dev = |n: usize| gpukit::cudarc::driver::result::device::get(n as i32);
    let (a, b) = (
        dev(to).map_err(|e| Error::Cuda(format!("cuda:{to}: {e}")))?,
        dev(from).map_err(|e| Error::Cuda(format!("cuda:{from}: {e}")))?,
    );
    let mut ok = 0;
    // SAFETY: valid device handles and an out-parameter.
    cuda("cuDeviceCanAccessPeer", unsafe {
        sys::cuDeviceCanAccessPeer(&mut ok, a, b)
    })?;
    Ok(ok != 0)
}

/// Enables access from `to`'s context to `from`'s memory, once per ordered pair.
fn enable_peer(from: Device, to: Device) -> Result<()> {
    static ENABLED: Mutex<Option<HashSet<(Device, Device)>>> = Mutex::new(None);
    let mut g = ENABLED.lock().unwrap_or_else(|p| p.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if set.contains(&(from, to)) {
        return Ok(());
    }
    let to_ctx = to.cuda_context()?;
    let from_ctx = from.cuda_context()?;
    to_ctx
        .bind_to_thread()
        .map_err(|e| Error::Cuda(format!("binding {to}: {e}")))?;
    // SAFETY: both contexts are live primary contexts; the current one is `to`'s.
    let code = unsafe { sys::cuCtxEnablePeerAccess(from_ctx.cu_ctx(), 0) };
    if code != sys::CUresult::CUDA_SUCCESS
        && code != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
    {
        return Err(Error::Cuda(format!(
            "enabling peer access from {to} to {from}: {code:?}"
        )));
    }
    set.insert((from, to));
    Ok(())
}

/// Copies `a` to `to` by the best path there is, and says which it was.
///
/// ```
/// use gpukit::{Array, Device};
/// use gpukit_multi::{transfer, TransferPath};
/// # fn main() -> gpukit::Result<()> {
/// let a = Array::from_vec_on(vec![1.0f32, 2.0], vec![2], &Device::Cpu)?;
/// let t = transfer(&a, Device::Cpu)?;
/// assert_eq!(t.path, TransferPath::HostCopy);
/// assert_eq!(t.array.to_vec()?, vec![1.0, 2.0]);
/// # Ok(())
/// # }
/// ```
pub fn transfer<T: Element>(a: &Array<T>, to: Device) -> Result<Transfer<T>> {
    let from = a.device();
    let (array, path) = match (from, to) {
        (Device::Cpu, Device::Cpu) => (a.try_clone()?, TransferPath::HostCopy),
        (x, y) if x == y => (a.try_clone()?, TransferPath::SameDevice),
        (Device::Cpu, Device::Cuda(_)) => (a.to_device(&to)?, TransferPath::HostToDevice),
        (Device::Cuda(_), Device::Cpu) => (a.to_device(&to)?, TransferPath::DeviceToHost),
        (Device::Cuda(f), Device::Cuda(t)) => {
            if can_access_peer(f, t)? {
                (peer_copy(a, from, to)?, TransferPath::PeerToPeer)
            } else {
                (staged_copy(a, to)?, TransferPath::StagedPinnedHost)
            }
        }
    };
    Ok(Transfer { array, path })
}

/// Copies through a pinned host buffer (also usable when peer access exists, to compare).
pub fn staged_copy<T: Element>(a: &Array<T>, to: Device) -> Result<Array<T>> {
    let buf = a.to_pinned()?;
    let out = Array::from_pinned_on(&buf, a.shape().to_vec(), &to)?;
    // The upload is asynchronous: the buffer must live until it has finished.
    to.synchronize()?;
    Ok(out)
}

fn peer_copy<T: Element>(a: &Array<T>, from: Device, to: Device) -> Result<Array<T>> {
    enable_peer(from, to)?;
    let n = a.size();
    let dst_stream = to.cuda_stream()?;
    let mut dst = dst_stream
        .alloc_zeros::<T>(n.max(1))
        .map_err(|e| Error::Cuda(format!("allocating {n} elements on {to}: {e}")))?;
    if n > 0 {
        let (src, _src_stream) = a.cuda_view()?;
        let mut dst_view = dst.slice_mut(0..n);
        // cudarc sees two contexts and issues cuMemcpyPeerAsync on the destination's stream,
        // after that stream waits for the source's queued work.
        dst_stream
            .memcpy_dtod(&src, &mut dst_view)
            .map_err(|e| Error::Cuda(format!("peer copy {from} -> {to}: {e}")))?;
    }
    let out = Array::from_cudarc(dst, a.shape().to_vec())?;
    Ok(out)
}
