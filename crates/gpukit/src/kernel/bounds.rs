//! Out-of-bounds reports from checked CUDA kernels.
//!
//! Each device has a ring of [`RECORDS`] error records of [`SLOTS`] `u64`s in device memory
//! (layout in docs/ARCHITECTURE.md: flag, array id, index, length, axis, threadIdx, blockIdx).
//! Every checked launch takes the next unused record and the runtime remembers which kernel
//! used it. After the device's stream has been synchronised, [`check_pending`] reads the used
//! records back, turns the first one hit into [`Error::IndexOutOfBounds`], and zeroes them.
//! When the ring is used up, the next checked launch synchronises first (a forced check).
//!
//! The generated code returns from the failing thread (it never traps), so the CUDA context
//! survives and later launches work.

use super::cpu::array_name;
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{OutOfBounds, Result};
use cudarc::driver::{CudaSlice, DevicePtr};
use std::sync::Mutex;

/// `u64` slots per record.
pub(crate) const SLOTS: usize = 16;
/// Records per device before a forced check.
pub(crate) const RECORDS: usize = 64;

/// What a used record belongs to.
#[derive(Clone, Copy)]
struct Use {
    kernel: &'static str,
    array_names: &'static [&'static str],
}

/// One device's ring.
struct Ring {
    ordinal: usize,
    buf: CudaSlice<u64>,
    base: u64,
    used: Vec<Use>,
}

// SAFETY: the device buffer is only touched with the ring's mutex held (and on the device).
unsafe impl Send for Ring {}

static RINGS: Mutex<Vec<Ring>> = Mutex::new(Vec::new());

/// The device address of a fresh error record for one launch of `kernel`.
pub(crate) fn next_record(
    backend: &CudaBackend,
    kernel: &'static str,
    array_names: &'static [&'static str],
) -> Result<u64> {
    loop {
        {
            let mut rings = RINGS.lock().unwrap_or_else(|p| p.into_inner());
            let at = match rings.iter().position(|r| r.ordinal == backend.ordinal()) {
                Some(at) => at,
                None => {
                    let buf = backend.alloc_zeros::<u64>(RECORDS * SLOTS)?;
                    let base = buf.device_ptr(backend.stream()).0;
                    rings.push(Ring {
                        ordinal: backend.ordinal(),
                        buf,
                        base,
                        used: Vec::with_capacity(RECORDS),
                    });
                    rings.len() - 1
                }
            };
            let ring = &mut rings[at];
            if ring.used.len() < RECORDS {
                let slot = ring.used.len();
                ring.used.push(Use {
                    kernel,
                    array_names,
                });
                return Ok(ring.base + (slot * SLOTS * 8) as u64);
            }
        }
        // Every record is in use: wait for the device and read them (this frees the ring).
        backend.synchronize()?;
    }
}

/// Reads the error records of checked launches made since the last check (the stream must have
/// been synchronised), returns the first error, and frees the records.
pub(crate) fn check_pending(backend: &CudaBackend) -> Result<()> {
    let mut rings = RINGS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(ring) = rings.iter_mut().find(|r| r.ordinal == backend.ordinal()) else {
        return Ok(());
    };
    if ring.used.is_empty() {
        return Ok(());
    }
    let n = ring.used.len() * SLOTS;
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
        .zip(&ring.used)
        .find(|(rec, _)| rec[0] != 0)
        .map(|(rec, u)| decode(rec, u));
    if hit.is_some() {
        stream
            .memset_zeros(&mut ring.buf.slice_mut(..n))
            .map_err(|e| driver_err("clearing the bounds-check records", e))?;
    }
    ring.used.clear();
    match hit {
        Some(oob) => Err(oob.into()),
        None => Ok(()),
    }
}

fn decode(rec: &[u64], u: &Use) -> OutOfBounds {
    OutOfBounds {
        kernel: u.kernel.to_string(),
        array: array_name(u.array_names, rec[1] as usize),
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
        let u = Use {
            kernel: "k",
            array_names: &["a", "img"],
        };
        let e = decode(&rec, &u);
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
        assert_eq!(decode(&rec, &u).array, "array #9");
    }
}
