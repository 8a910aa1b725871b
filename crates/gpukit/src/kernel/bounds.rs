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
//! The generated code returns from the failing thread (it never traps), so the CUDA context
//! survives and later launches work.

use super::cpu::array_name;
use super::cuda::{Loaded, PerDevice};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{OutOfBounds, Result};
use cudarc::driver::{CudaSlice, DevicePtr};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

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
    let Some(ring) = dev.ring.get() else {
        return Ok(());
    };
    let _held = dev.lock.lock().unwrap_or_else(|p| p.into_inner());
    let used = ring.used.load(Ordering::Acquire);
    if used == 0 {
        return Ok(());
    }
    let n = used * SLOTS;
    let mut host = vec![0u64; n];
    let stream = backend.stream();
    stream
        .memcpy_dtoh(&ring.buf.slice(..n), &mut host[..])
        .map_err(|e| driver_err("reading the bounds-check records", e))?;
    stream
        .synchronize()
        .map_err(|e| driver_err("reading the bounds-check records", e))?;
    let hit = host
        .chunks_exact(SLOTS)
        .zip(&ring.owners[..used])
        .find(|(rec, _)| rec[0] != 0)
        .map(|(rec, owner)| {
            let owner = owner.load(Ordering::Relaxed);
            // SAFETY: owners are null or leaked, never-freed function-table entries.
            match unsafe { owner.as_ref() } {
                Some(k) => decode(rec, k.kernel, k.array_names),
                None => decode(rec, "a kernel", &[]),
            }
        });
    if hit.is_some() {
        // SAFETY: the first `n` slots of the ring's own buffer, zeroed in stream order (the
        // buffer is never freed); only this function, under the lock, writes them from the host.
        unsafe { cudarc::driver::result::memset_d8_async(ring.base, 0, n * 8, stream.cu_stream()) }
            .map_err(|e| driver_err("clearing the bounds-check records", e))?;
    }
    for owner in &ring.owners[..used] {
        owner.store(std::ptr::null_mut(), Ordering::Relaxed);
    }
    ring.used.store(0, Ordering::Release);
    match hit {
        Some(oob) => Err(oob.into()),
        None => Ok(()),
    }
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
