//! Out-of-bounds reports from checked CUDA kernels.
//!
//! Each device has a ring of [`RECORDS`] error records of [`SLOTS`] `u64`s in device memory
//! (layout in docs/ARCHITECTURE.md: flag, array id, index, length, axis, threadIdx, blockIdx).
//! A checked launch passes a record and the runtime remembers which kernel used it. After the
//! device's stream has been synchronised, [`check_pending`] reads the used records back, turns
//! the first one hit into [`Error::IndexOutOfBounds`](crate::Error::IndexOutOfBounds), and frees
//! them. When the ring is used up, the next launch that needs a new record synchronises first
//! (a forced check).
//!
//! Consecutive launches of one kernel share a record: the stream runs them one after another,
//! so the first failing thread among them still wins the record's flag, which is the same first
//! error a record per launch would report. A loop over one kernel therefore uses one record
//! between two synchronisations and is never forced to wait for the device, and the launch
//! path finds its record with two atomic loads and a comparison, without a lock
//! ([`next_record`]). A new record (another kernel, or the first launch since a check) takes
//! the ring's lock.
//!
//! A launch on one thread racing a synchronisation of the same device on another thread may
//! have its record read before the kernel has run; its error, if any, is then reported by a
//! later check or not at all. Launch and synchronise from one thread per device for exact
//! reports (the notebook kernel does).
//!
//! A graph's captured launches use records of the graph's own ([`GraphRecords`]), read by the
//! first check after each launch of the graph.
//!
//! The generated code returns from the failing thread (it never traps), so the CUDA context
//! survives and later launches work.

use super::cpu::array_name;
use super::cuda::{Loaded, PerDevice};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{Error, OutOfBounds, Result};
use cudarc::driver::{CudaSlice, DevicePtr};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// `u64` slots per record.
pub(crate) const SLOTS: usize = 16;
/// Records per device before a forced check (128 KiB of device memory).
pub(crate) const RECORDS: usize = 1024;

/// One device's ring.
struct Ring {
    buf: CudaSlice<u64>,
    base: u64,
    /// Records handed out since the last check (`0..used`).
    used: AtomicUsize,
    /// The kernel whose launches use each handed-out record (null when free).
    owners: Box<[AtomicPtr<Loaded>]>,
}

impl Ring {
    fn new(backend: &CudaBackend) -> Result<Ring> {
        let buf = backend.alloc_zeros::<u64>(RECORDS * SLOTS)?;
        let base = buf.device_ptr(backend.stream()).0;
        Ok(Ring {
            buf,
            base,
            used: AtomicUsize::new(0),
            owners: (0..RECORDS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
        })
    }

    /// Device address of record `i`.
    #[inline]
    fn address(&self, i: usize) -> u64 {
        self.base + (i * SLOTS * 8) as u64
    }
}

/// A device's ring (created by its first checked launch) and the lock for changing it.
#[derive(Default)]
struct DeviceRing {
    ring: OnceLock<Ring>,
    /// Held to hand out a new record, to create the ring, and to check and free the records.
    lock: Mutex<()>,
    /// The records of the graph being captured on this device (see [`GraphRecords`]).
    capture: Mutex<Option<Arc<GraphRecords>>>,
    /// Graphs launched since the last check, whose records the next check reads.
    launched: Mutex<Vec<Arc<GraphRecords>>>,
}

/// Records per graph: a graph needs one per run of launches of one checked kernel.
pub(crate) const GRAPH_RECORDS: usize = 1024;

/// The error records of one captured graph, in a buffer of its own: a captured launch bakes the
/// address of its record into the graph, so the record must stay the graph's for every replay
/// (the device's ring hands its records to other launches after each check). After a replay,
/// the next check of the device reads them like the ring's ([`graph_launched`]).
pub(crate) struct GraphRecords {
    buf: CudaSlice<u64>,
    base: u64,
    /// The kernels whose launches use each handed-out record (`Loaded` addresses), in order.
    owners: Mutex<Vec<usize>>,
    /// Whether the captured launches use any record (a graph of unchecked work has none to read).
    any: AtomicBool,
    /// Whether the graph is in its device's list of graphs to check (a replay then adds nothing:
    /// one lock-free load).
    pending: AtomicBool,
}

impl GraphRecords {
    /// Zeroed records on `backend`'s device (allocate before the capture starts).
    pub(crate) fn new(backend: &CudaBackend) -> Result<Arc<GraphRecords>> {
        let buf = backend.alloc_zeros::<u64>(GRAPH_RECORDS * SLOTS)?;
        let base = buf.device_ptr(backend.stream()).0;
        // The device's checks must read them, also where no checked kernel ran outside a graph.
        backend.register_sync_check(check_pending);
        Ok(Arc::new(GraphRecords {
            buf,
            base,
            owners: Mutex::new(Vec::new()),
            any: AtomicBool::new(false),
            pending: AtomicBool::new(false),
        }))
    }

    /// Sets the owners (and whether there are any).
    fn set_owners(&self, owners: Vec<usize>) -> Vec<usize> {
        let mut o = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        self.any.store(!owners.is_empty(), Ordering::Release);
        std::mem::replace(&mut *o, owners)
    }
}

/// Makes the checked launches captured on `backend` from now on take their records from
/// `records` (from the first: a new capture of the same graph reuses them), until
/// [`end_graph_records`].
///
/// Returns the records' previous owners, for [`restore_graph_records`] when the capture fails.
pub(crate) fn begin_graph_records(backend: &CudaBackend, records: Arc<GraphRecords>) -> Vec<usize> {
    let previous = records.set_owners(Vec::new());
    *rings()
        .get(backend)
        .capture
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(records);
    previous
}

/// Gives the records back the owners of the graph they belong to after a failed capture (an
/// update that failed leaves the graph as it was).
pub(crate) fn restore_graph_records(records: &GraphRecords, previous: Vec<usize>) {
    records.set_owners(previous);
}

/// Ends [`begin_graph_records`].
pub(crate) fn end_graph_records(backend: &CudaBackend) {
    *rings()
        .get(backend)
        .capture
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = None;
}

/// Notes that a graph using `records` was launched: the next check of the device reads them.
#[inline]
pub(crate) fn graph_launched(backend: &CudaBackend, records: &Arc<GraphRecords>) {
    if !records.any.load(Ordering::Acquire) || records.pending.load(Ordering::Acquire) {
        return;
    }
    queue_graph(backend, records);
}

#[cold]
fn queue_graph(backend: &CudaBackend, records: &Arc<GraphRecords>) {
    let dev = rings().get(backend);
    let mut launched = dev.launched.lock().unwrap_or_else(|p| p.into_inner());
    if !records.pending.swap(true, Ordering::AcqRel) {
        launched.push(records.clone());
    }
}

/// The record of a launch captured into a graph: the previous one when it was the same kernel.
#[cold]
fn capture_record(backend: &CudaBackend, dev: &DeviceRing, me: *mut Loaded) -> Result<u64> {
    let capture = dev.capture.lock().unwrap_or_else(|p| p.into_inner());
    let Some(records) = capture.as_ref() else {
        return Err(Error::GraphCapture {
            what: "a checked kernel launch".into(),
            reason: format!(
                "cuda:{} is being captured by something other than `Graph::capture`",
                backend.ordinal()
            ),
        });
    };
    let mut owners = records.owners.lock().unwrap_or_else(|p| p.into_inner());
    let n = owners.len();
    if n > 0 && owners[n - 1] == me as usize {
        return Ok(records.base + ((n - 1) * SLOTS * 8) as u64);
    }
    if n == GRAPH_RECORDS {
        return Err(Error::GraphCapture {
            what: format!(
                "a checked launch of a kernel after {GRAPH_RECORDS} runs of other kernels"
            ),
            reason: "a graph holds that many bounds-check records; split the work into several \
                     graphs"
                .into(),
        });
    }
    owners.push(me as usize);
    records.any.store(true, Ordering::Release);
    Ok(records.base + (n * SLOTS * 8) as u64)
}

crate::process::process_global! {
    /// The error-record rings of this process, one per device.
    fn rings() -> &'static PerDevice<DeviceRing> = PerDevice::new();
}

/// The device address of the error record for one launch of `kernel` on `backend`'s device:
/// the record of the previous launch when that was the same kernel (no lock), else a new one.
#[inline]
pub(crate) fn next_record(backend: &CudaBackend, kernel: &'static Loaded) -> Result<u64> {
    let dev = rings().get(backend);
    let me = kernel as *const Loaded as *mut Loaded;
    if backend.is_capturing() {
        return capture_record(backend, dev, me);
    }
    if let Some(ring) = dev.ring.get() {
        let n = ring.used.load(Ordering::Acquire);
        if n > 0 && ring.owners[n - 1].load(Ordering::Relaxed) == me {
            return Ok(ring.address(n - 1));
        }
    }
    new_record(backend, dev, me)
}

/// Hands out a new record (or finds that another thread just did for this kernel), creating
/// the ring on first use and checking the records when it is full.
#[cold]
fn new_record(backend: &CudaBackend, dev: &DeviceRing, me: *mut Loaded) -> Result<u64> {
    if dev.ring.get().is_none() {
        // Outside the lock (allocating may wait for the device); a ring that loses a race
        // to be set is freed again.
        let _ = dev.ring.set(Ring::new(backend)?);
        backend.register_sync_check(check_pending);
    }
    let ring = dev.ring.get().expect("set above");
    loop {
        {
            let _held = dev.lock.lock().unwrap_or_else(|p| p.into_inner());
            let n = ring.used.load(Ordering::Relaxed);
            if n > 0 && ring.owners[n - 1].load(Ordering::Relaxed) == me {
                return Ok(ring.address(n - 1));
            }
            if n < RECORDS {
                ring.owners[n].store(me, Ordering::Relaxed);
                ring.used.store(n + 1, Ordering::Release);
                return Ok(ring.address(n));
            }
        }
        // Every record is in use: wait for the device and read them (this frees the ring).
        backend.synchronize()?;
    }
}

/// Reads the error records of checked launches made since the last check (the stream must have
/// been synchronised), returns the first error, and frees the records.
fn check_pending(backend: &CudaBackend) -> Result<()> {
    let dev = rings().get(backend);
    let ring_hit = check_ring(backend, dev);
    let graphs: Vec<Arc<GraphRecords>> = {
        let mut launched = dev.launched.lock().unwrap_or_else(|p| p.into_inner());
        launched
            .iter()
            .for_each(|r| r.pending.store(false, Ordering::Release));
        std::mem::take(&mut *launched)
    };
    let mut first = ring_hit.err();
    for records in graphs {
        if let Err(e) = check_graph(backend, &records) {
            first.get_or_insert(e);
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Reads, reports and clears the records of a launched graph (the stream is synchronised).
fn check_graph(backend: &CudaBackend, records: &GraphRecords) -> Result<()> {
    let owners = records.owners.lock().unwrap_or_else(|p| p.into_inner());
    let hit = first_hit(
        backend,
        &records.buf,
        records.base,
        owners.len(),
        |i| owners[i] as *const Loaded,
        "a graph's bounds-check records",
    )?;
    match hit {
        Some(oob) => Err(oob.into()),
        None => Ok(()),
    }
}

/// Reads the device ring's records (see [`check_pending`]).
fn check_ring(backend: &CudaBackend, dev: &DeviceRing) -> Result<()> {
    let Some(ring) = dev.ring.get() else {
        return Ok(());
    };
    let _held = dev.lock.lock().unwrap_or_else(|p| p.into_inner());
    let used = ring.used.load(Ordering::Acquire);
    // Only this function, under the lock, writes the ring's records from the host.
    let hit = first_hit(
        backend,
        &ring.buf,
        ring.base,
        used,
        |i| ring.owners[i].load(Ordering::Relaxed) as *const Loaded,
        "the bounds-check records",
    )?;
    for owner in &ring.owners[..used] {
        owner.store(std::ptr::null_mut(), Ordering::Relaxed);
    }
    ring.used.store(0, Ordering::Release);
    match hit {
        Some(oob) => Err(oob.into()),
        None => Ok(()),
    }
}

/// The first failed check among the `used` records at the start of `buf` (whose device address
/// is `base`), named after its kernel by `owner(i)`: copies them to the host (synchronising the
/// stream) and, on a hit, zeroes them in stream order for the next launches. `what` names the
/// records in driver errors.
fn first_hit(
    backend: &CudaBackend,
    buf: &CudaSlice<u64>,
    base: u64,
    used: usize,
    owner: impl Fn(usize) -> *const Loaded,
    what: &str,
) -> Result<Option<OutOfBounds>> {
    if used == 0 {
        return Ok(None);
    }
    let n = used * SLOTS;
    let mut host = vec![0u64; n];
    let stream = backend.stream();
    stream
        .memcpy_dtoh(&buf.slice(..n), &mut host[..])
        .map_err(|e| driver_err(&format!("reading {what}"), e))?;
    stream
        .synchronize()
        .map_err(|e| driver_err(&format!("reading {what}"), e))?;
    let hit = host
        .chunks_exact(SLOTS)
        .enumerate()
        .find(|(_, rec)| rec[0] != 0)
        .map(|(i, rec)| {
            // SAFETY: owners are null or leaked, never-freed function-table entries.
            match unsafe { owner(i).as_ref() } {
                Some(k) => decode(rec, k.kernel, k.array_names),
                None => decode(rec, "a kernel", &[]),
            }
        });
    if hit.is_some() {
        // SAFETY: the first `n` slots of the records' own buffer (never freed while in use),
        // zeroed in stream order; no launch can run concurrently with this on the one stream.
        unsafe { cudarc::driver::result::memset_d8_async(base, 0, n * 8, stream.cu_stream()) }
            .map_err(|e| driver_err(&format!("clearing {what}"), e))?;
    }
    Ok(hit)
}

fn decode(rec: &[u64], kernel: &str, array_names: &[&str]) -> OutOfBounds {
    OutOfBounds {
        kernel: kernel.to_string(),
        array: array_name(array_names, rec[1] as usize),
        index: rec[2],
        len: rec[3],
        axis: rec[4] as u32,
        thread: [rec[5] as u32, rec[6] as u32, rec[7] as u32],
        block: [rec[8] as u32, rec[9] as u32, rec[10] as u32],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_decode_into_errors() {
        let mut rec = [0u64; SLOTS];
        rec[..11].copy_from_slice(&[1, 1, 70, 64, 1, 5, 6, 0, 7, 8, 9]);
        let names: &[&str] = &["a", "img"];
        let e = decode(&rec, "k", names);
        assert_eq!(
            e,
            OutOfBounds {
                kernel: "k".into(),
                array: "img".into(),
                index: 70,
                len: 64,
                axis: 1,
                thread: [5, 6, 0],
                block: [7, 8, 9],
            }
        );
        rec[1] = 9;
        assert_eq!(decode(&rec, "k", names).array, "array #9");
    }
}
