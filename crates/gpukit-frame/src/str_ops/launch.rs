//! Grid sizes for the string kernels and the scan that turns per-row output lengths into
//! Arrow offsets (gpukit's `cumsum` on the device, then a shift kernel).

use gpukit::prelude::*;
use gpukit::LaunchConfig;

use crate::error::Result;

/// Threads per block of every string kernel.
pub(crate) const THREADS: u32 = 256;

/// Blocks of at most this many are launched; kernels walk rows with a grid-stride loop.
const MAX_BLOCKS: usize = 65_535;

/// The launch configuration for `n` rows (at least one block, so empty columns launch too).
pub(crate) fn rows_config(n: usize) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(THREADS as usize).clamp(1, MAX_BLOCKS) as u32;
    Ok(LaunchConfig::new(blocks, THREADS)?)
}

/// `offsets[i + 1] = inclusive[i]` (`offsets[0]` stays 0).
#[kernel]
pub(crate) fn shift_into_offsets(inclusive: &[i64], offsets: &mut [i64]) {
    for i in (grid(1)..inclusive.len()).step_by(gridsize(1)) {
        offsets[i + 1] = inclusive[i];
    }
}

/// Arrow offsets (`n + 1`, from 0) for rows of `lengths` bytes, and the total byte count (read
/// back to the host to size the output).
pub(crate) fn offsets_from_lengths(lengths: &Array<i64>) -> Result<(Array<i64>, usize)> {
    let n = lengths.size();
    let device = lengths.device();
    let mut offsets = Array::<i64>::zeros_on(n + 1, &device)?;
    if n == 0 {
        return Ok((offsets, 0));
    }
    let inclusive = lengths.cumsum()?;
    shift_into_offsets.launch(rows_config(n)?, &inclusive, &mut offsets)?;
    let total = inclusive.slice(gpukit::s![n - 1..])?.to_vec()?[0];
    Ok((offsets, total.max(0) as usize))
}

/// `bytes` padded to at least one byte, so that a kernel parameter is never empty.
pub(crate) fn padded(bytes: &[u8], device: &Device) -> Result<Array<u8>> {
    if bytes.is_empty() {
        Ok(Array::from_slice_on(&[0u8], device)?)
    } else {
        Ok(Array::from_slice_on(bytes, device)?)
    }
}

/// `lens[i] = ends[i] - starts[i]`.
#[kernel]
pub(crate) fn range_lengths(starts: &[i64], ends: &[i64], lens: &mut [i64]) {
    for i in (grid(1)..lens.len()).step_by(gridsize(1)) {
        lens[i] = ends[i] - starts[i];
    }
}

/// Copies `bytes[starts[i]..ends[i]]` to `out[offsets[i]..]`.
#[kernel]
pub(crate) fn copy_ranges(
    bytes: &[u8],
    starts: &[i64],
    ends: &[i64],
    offsets: &[i64],
    out: &mut [u8],
) {
    for i in (grid(1)..starts.len()).step_by(gridsize(1)) {
        let s = starts[i] as usize;
        let e = ends[i] as usize;
        let o = offsets[i] as usize;
        for k in 0..(e - s) {
            out[o + k] = bytes[s + k];
        }
    }
}

/// The strings `bytes[starts[i]..ends[i]]` (byte ranges at character boundaries, from a
/// kernel) as a new string column's data on the same device.
pub(crate) fn substrings(
    bytes: &Array<u8>,
    starts: &Array<i64>,
    ends: &Array<i64>,
) -> Result<crate::strings::Utf8Data> {
    let n = starts.size();
    let device = starts.device();
    let mut lens = Array::<i64>::zeros_on(n, &device)?;
    if n > 0 {
        range_lengths.launch(rows_config(n)?, starts, ends, &mut lens)?;
    }
    let (offsets, total) = offsets_from_lengths(&lens)?;
    let mut out = Array::<u8>::zeros_on(total, &device)?;
    if total > 0 {
        copy_ranges.launch(rows_config(n)?, bytes, starts, ends, &offsets, &mut out)?;
    }
    Ok(crate::strings::Utf8Data::from_parts_unchecked(offsets, out))
}
