//! Arrow's validity bitmap on a device: bit `i % 8` of byte `i / 8` is 1 when row `i` holds a
//! value and 0 when it is null (least-significant bit first, as Arrow lays it out). The bitmap
//! always starts at row 0 of its column; bits past the last row are 0.

use gpukit::{Array, Device};

use crate::error::{FrameError, Result};

/// A column's validity bitmap: `len` rows packed eight to a byte on a device, with the number of
/// nulls kept beside it.
#[derive(Debug, Clone)]
pub struct Bitmap {
    bits: Array<u8>,
    len: usize,
    null_count: usize,
}

impl Bitmap {
    /// The number of bytes that hold `len` bits.
    pub fn bytes_for(len: usize) -> usize {
        len.div_ceil(8)
    }

    /// A bitmap of `valid.len()` rows on `device`, 1 where `valid[i]` is true.
    pub fn from_bools_on(valid: &[bool], device: &Device) -> Result<Bitmap> {
        let mut bytes = vec![0u8; Self::bytes_for(valid.len())];
        for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
            bytes[i / 8] |= 1 << (i % 8);
        }
        let null_count = valid.iter().filter(|v| !**v).count();
        Ok(Bitmap {
            bits: Array::from_slice_on(&bytes, device)?,
            len: valid.len(),
            null_count,
        })
    }

    /// A bitmap over packed `bits` (already on a device) of `len` rows; the null count is
    /// taken from the bits. An error if `bits` is not `ceil(len / 8)` bytes long.
    pub fn from_packed(bits: Array<u8>, len: usize) -> Result<Bitmap> {
        if bits.size() != Self::bytes_for(len) {
            return Err(FrameError::Length(format!(
                "a validity bitmap of {len} rows needs {} bytes, got {}",
                Self::bytes_for(len),
                bits.size()
            )));
        }
        let host = bits.to_vec()?;
        let valid: usize = host
            .iter()
            .enumerate()
            .map(|(b, byte)| {
                let rows_here = (len - (b * 8).min(len)).min(8);
                (byte & mask_low(rows_here)).count_ones() as usize
            })
            .sum();
        Ok(Bitmap {
            bits,
            len,
            null_count: len - valid,
        })
    }

    /// A bitmap over packed `bits` (already on a device) of `len` rows whose `null_count` was
    /// counted where the bits were made (a kernel), so nothing is read back. The caller
    /// guarantees the count and that bits past `len` are 0; the size is checked.
    pub fn from_packed_counted(bits: Array<u8>, len: usize, null_count: usize) -> Result<Bitmap> {
        if bits.size() != Self::bytes_for(len) || null_count > len {
            return Err(FrameError::Length(format!(
                "a validity bitmap of {len} rows needs {} bytes and at most {len} nulls, got {} bytes and {null_count} nulls",
                Self::bytes_for(len),
                bits.size()
            )));
        }
        Ok(Bitmap {
            bits,
            len,
            null_count,
        })
    }

    /// A bitmap of `len` rows from packed bits on the host (Arrow's order), copied to
    /// `device`. Bits past `len` are cleared; the null count is taken from the bits. An error if
    /// `bytes` is shorter than `ceil(len / 8)`.
    pub fn from_packed_host(bytes: &[u8], len: usize, device: &Device) -> Result<Bitmap> {
        let n = Self::bytes_for(len);
        if bytes.len() < n {
            return Err(FrameError::Length(format!(
                "a validity bitmap of {len} rows needs {n} bytes, got {}",
                bytes.len()
            )));
        }
        let mut own = bytes[..n].to_vec();
        if let Some(last) = own.last_mut() {
            *last &= mask_low(len - (n - 1) * 8);
        }
        let valid: usize = own.iter().map(|b| b.count_ones() as usize).sum();
        Ok(Bitmap {
            bits: Array::from_slice_on(&own, device)?,
            len,
            null_count: len - valid,
        })
    }

    /// A bitmap over packed `bits` (already on a device, `ceil(len / 8)` bytes, bits past `len`
    /// zero) whose null count the caller has computed, e.g. in the kernel that wrote the bits.
    /// Not checked.
    pub fn from_parts_unchecked(bits: Array<u8>, len: usize, null_count: usize) -> Bitmap {
        Bitmap {
            bits,
            len,
            null_count,
        }
    }

    /// A deep copy on the same device (an error instead of `clone`'s panic when the device is
    /// out of memory).
    pub fn try_clone(&self) -> Result<Bitmap> {
        Ok(Bitmap {
            bits: self.bits.try_clone()?,
            len: self.len,
            null_count: self.null_count,
        })
    }

    /// The packed bits on their device.
    pub fn bits(&self) -> &Array<u8> {
        &self.bits
    }

    /// The number of rows the bitmap covers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it covers no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of null rows (0 bits).
    pub fn null_count(&self) -> usize {
        self.null_count
    }

    /// The device the bits live on.
    pub fn device(&self) -> Device {
        self.bits.device()
    }

    /// One `bool` per row, copied to the host (true = valid).
    pub fn to_bools(&self) -> Result<Vec<bool>> {
        let host = self.bits.to_vec()?;
        Ok((0..self.len)
            .map(|i| host[i / 8] >> (i % 8) & 1 == 1)
            .collect())
    }

    /// A copy on `device`.
    pub fn to_device(&self, device: &Device) -> Result<Bitmap> {
        Ok(Bitmap {
            bits: self.bits.to_device(device)?,
            len: self.len,
            null_count: self.null_count,
        })
    }
}

/// The byte whose `n` lowest bits are 1 (`n` ≤ 8).
fn mask_low(n: usize) -> u8 {
    if n >= 8 {
        0xff
    } else {
        (1u8 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_arrow_order_and_nulls_are_counted() {
        let valid = [
            true, false, true, true, false, false, true, true, true, false,
        ];
        let b = Bitmap::from_bools_on(&valid, &Device::Cpu).unwrap();
        assert_eq!(b.bits().to_vec().unwrap(), [0b1100_1101, 0b0000_0001]);
        assert_eq!((b.len(), b.null_count()), (10, 4));
        assert_eq!(b.to_bools().unwrap(), valid);
        let again = Bitmap::from_packed(b.bits().clone(), 10).unwrap();
        assert_eq!(again.null_count(), 4);
    }

    #[test]
    fn packed_bits_of_the_wrong_size_are_an_error() {
        let bits = Array::from_slice_on(&[0xffu8], &Device::Cpu).unwrap();
        let err = Bitmap::from_packed(bits, 9).unwrap_err().to_string();
        assert!(err.contains("9 rows needs 2 bytes, got 1"), "{err}");
        let empty = Bitmap::from_bools_on(&[], &Device::Cpu).unwrap();
        assert!(empty.is_empty() && empty.null_count() == 0);
    }
}
