//! Validity bitmaps built on the device by kernels: from per-row flags (optionally ANDed with a
//! column's bitmap) and as the AND of several bitmaps. The null count is counted on the device
//! too (one atomic add per thread), so only that one number comes back to the host.

use gpukit::prelude::*;
use gpukit::LaunchConfig;

use crate::bitmap::Bitmap;
use crate::error::Result;

/// A launch over `n` items (at least one block; the kernels use grid-stride loops).
fn config(n: usize) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(256).clamp(1, 65_535) as u32;
    Ok(LaunchConfig::new(blocks, 256u32)?)
}

/// One thread per output byte: bit `r` of `bits[j]` is 1 when row `j * 8 + r` has a non-zero
/// flag and (`has_input` 1) its bit in `input_bits` is 1; `valid[0]` counts the 1 bits.
#[kernel]
pub(crate) fn pack_flags(
    flags: &[u8],
    input_bits: &[u8],
    has_input: u32,
    bits: &mut [u8],
    valid: &mut [u64],
) {
    let n = flags.len();
    let mut ones: u64 = 0;
    for j in (grid(1)..bits.len()).step_by(gridsize(1)) {
        let mut byte: u32 = 0;
        for r in 0..8 {
            let row = j * 8 + r;
            if row < n && flags[row] != 0 {
                let mut ok = true;
                if has_input == 1 {
                    ok = ((input_bits[j] as u32) >> (r as u32)) & 1 == 1;
                }
                if ok {
                    byte |= 1 << (r as u32);
                }
            }
        }
        bits[j] = byte as u8;
        ones += byte.count_ones() as u64;
    }
    if ones > 0 {
        atomic_add(&mut valid[0], ones);
    }
}

/// `out[j] = a[j] & b[j]`, counting the 1 bits in `valid[0]`.
#[kernel]
pub(crate) fn and_bits(a: &[u8], b: &[u8], out: &mut [u8], valid: &mut [u64]) {
    let mut ones: u64 = 0;
    for j in (grid(1)..out.len()).step_by(gridsize(1)) {
        let v = a[j] & b[j];
        out[j] = v;
        ones += (v as u32).count_ones() as u64;
    }
    if ones > 0 {
        atomic_add(&mut valid[0], ones);
    }
}

/// The bitmap over `bits` with `valid` 1 bits counted on the device.
fn finish(bits: Array<u8>, len: usize, valid: &Array<u64>) -> Result<Bitmap> {
    let ones = valid.to_vec()?[0] as usize;
    Bitmap::from_packed_counted(bits, len, len - ones.min(len))
}

/// The validity of rows whose `flags` are non-zero and that are valid in `input` (`None`: all
/// rows are); `None` for no rows.
pub(crate) fn from_flags(flags: &Array<u8>, input: Option<&Bitmap>) -> Result<Option<Bitmap>> {
    let n = flags.size();
    let device = flags.device();
    if n == 0 {
        return Ok(None);
    }
    let nbytes = Bitmap::bytes_for(n);
    let mut bits = Array::<u8>::zeros_on(nbytes, &device)?;
    let mut valid = Array::<u64>::zeros_on(1, &device)?;
    let none = Array::<u8>::zeros_on(1, &device)?;
    let (input_bits, has) = match input {
        Some(b) => (b.bits(), 1u32),
        None => (&none, 0u32),
    };
    pack_flags.launch(
        config(nbytes)?,
        flags,
        input_bits,
        has,
        &mut bits,
        &mut valid,
    )?;
    Ok(Some(finish(bits, n, &valid)?))
}

/// The AND of two bitmaps of the same rows.
pub(crate) fn and(a: &Bitmap, b: &Bitmap) -> Result<Bitmap> {
    let device = a.device();
    let mut bits = Array::<u8>::zeros_on(a.bits().size(), &device)?;
    let mut valid = Array::<u64>::zeros_on(1, &device)?;
    and_bits.launch(
        config(a.bits().size())?,
        a.bits(),
        b.bits(),
        &mut bits,
        &mut valid,
    )?;
    finish(bits, a.len(), &valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_bitmaps_pack_like_the_host() {
        let cpu = Device::Cpu;
        for n in [1usize, 7, 8, 9, 1000] {
            let flags: Vec<u8> = (0..n).map(|i| (i % 3 != 0) as u8).collect();
            let input: Vec<bool> = (0..n).map(|i| i % 5 != 1).collect();
            let f = Array::from_slice_on(&flags, &cpu).unwrap();
            let inb = Bitmap::from_bools_on(&input, &cpu).unwrap();
            let got = from_flags(&f, Some(&inb)).unwrap().unwrap();
            let want: Vec<bool> = (0..n).map(|i| flags[i] != 0 && input[i]).collect();
            assert_eq!(got.to_bools().unwrap(), want);
            assert_eq!(got.null_count(), want.iter().filter(|v| !**v).count());
            let same = Bitmap::from_packed(got.bits().clone(), n).unwrap();
            assert_eq!(
                same.null_count(),
                got.null_count(),
                "bits past the rows are 0"
            );
            let plain = from_flags(&f, None).unwrap().unwrap();
            let both = and(&plain, &inb).unwrap();
            assert_eq!(both.to_bools().unwrap(), want);
            assert_eq!(both.null_count(), got.null_count());
        }
        let empty = Array::<u8>::zeros_on(0, &cpu).unwrap();
        assert!(from_flags(&empty, None).unwrap().is_none());
    }
}
