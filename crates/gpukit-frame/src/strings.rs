//! A string column's values in Arrow's `LargeUtf8` layout: `offsets` (`i64`, one more than the
//! rows, starting at 0 and never decreasing) and `bytes` (the UTF-8 of every row, back to back).
//! Row `i` is `bytes[offsets[i]..offsets[i + 1]]`.

use gpukit::{Array, Device};

use crate::error::{FrameError, Result};

/// The offsets and bytes of a string column, on one device.
#[derive(Debug, Clone)]
pub struct Utf8Data {
    offsets: Array<i64>,
    bytes: Array<u8>,
}

impl Utf8Data {
    /// Strings copied from the host to `device`.
    pub fn from_strs_on<S: AsRef<str>>(values: &[S], device: &Device) -> Result<Utf8Data> {
        let mut offsets = Vec::with_capacity(values.len() + 1);
        let mut bytes = Vec::new();
        offsets.push(0i64);
        for v in values {
            bytes.extend_from_slice(v.as_ref().as_bytes());
            offsets.push(bytes.len() as i64);
        }
        Ok(Utf8Data {
            offsets: Array::from_slice_on(&offsets, device)?,
            bytes: Array::from_slice_on(&bytes, device)?,
        })
    }

    /// Offsets and bytes already on one device. Checks (on the host) that the offsets start at
    /// 0, never decrease, end at `bytes.size()`, and that every row is valid UTF-8.
    pub fn from_parts(offsets: Array<i64>, bytes: Array<u8>) -> Result<Utf8Data> {
        if offsets.device() != bytes.device() {
            return Err(FrameError::Input(format!(
                "string offsets are on {} but bytes on {}",
                offsets.device(),
                bytes.device()
            )));
        }
        if offsets.ndim() != 1 || offsets.size() == 0 {
            return Err(FrameError::Input(format!(
                "string offsets must be 1-D with at least one entry, got shape {:?}",
                offsets.shape()
            )));
        }
        let o = offsets.to_vec()?;
        let b = bytes.to_vec()?;
        if o[0] != 0 || *o.last().unwrap_or(&0) != b.len() as i64 {
            return Err(FrameError::Input(format!(
                "string offsets must run from 0 to the byte count {}, got {}..{}",
                b.len(),
                o[0],
                o.last().unwrap_or(&0)
            )));
        }
        for (row, w) in o.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(FrameError::Input(format!(
                    "string offsets decrease at row {row} ({} then {})",
                    w[0], w[1]
                )));
            }
            if std::str::from_utf8(&b[w[0] as usize..w[1] as usize]).is_err() {
                return Err(FrameError::Input(format!("row {row} is not valid UTF-8")));
            }
        }
        Ok(Utf8Data { offsets, bytes })
    }

    /// Offsets and bytes trusted to satisfy [`Utf8Data::from_parts`]'s checks (a kernel's
    /// output that keeps them by construction). Not checked.
    pub fn from_parts_unchecked(offsets: Array<i64>, bytes: Array<u8>) -> Utf8Data {
        Utf8Data { offsets, bytes }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.offsets.size().saturating_sub(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offsets (`len() + 1` of them).
    pub fn offsets(&self) -> &Array<i64> {
        &self.offsets
    }

    /// The UTF-8 bytes of all rows.
    pub fn bytes(&self) -> &Array<u8> {
        &self.bytes
    }

    /// The device they live on.
    pub fn device(&self) -> Device {
        self.offsets.device()
    }

    /// Every row copied to the host.
    pub fn to_strings(&self) -> Result<Vec<String>> {
        let o = self.offsets.to_vec()?;
        let b = self.bytes.to_vec()?;
        o.windows(2)
            .enumerate()
            .map(|(row, w)| {
                String::from_utf8(b[w[0] as usize..w[1] as usize].to_vec())
                    .map_err(|_| FrameError::Input(format!("row {row} is not valid UTF-8")))
            })
            .collect()
    }

    /// A copy on `device`.
    pub fn to_device(&self, device: &Device) -> Result<Utf8Data> {
        Ok(Utf8Data {
            offsets: self.offsets.to_device(device)?,
            bytes: self.bytes.to_device(device)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_with_unicode_and_empty_strings() {
        let rows = ["en", "", "Zürich", "日本語"];
        let s = Utf8Data::from_strs_on(&rows, &Device::Cpu).unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s.offsets().to_vec().unwrap(), [0, 2, 2, 9, 18]);
        assert_eq!(s.to_strings().unwrap(), rows);
    }

    #[test]
    fn bad_parts_are_errors_naming_the_row() {
        let cpu = Device::Cpu;
        let bytes = Array::from_slice_on(b"ab\xffc", &cpu).unwrap();
        let offs = |o: &[i64]| Array::from_slice_on(o, &cpu).unwrap();
        let e = Utf8Data::from_parts(offs(&[0, 2, 4]), bytes.clone()).unwrap_err();
        assert!(e.to_string().contains("row 1 is not valid UTF-8"), "{e}");
        let e = Utf8Data::from_parts(offs(&[0, 2, 1, 4]), bytes.clone()).unwrap_err();
        assert!(e.to_string().contains("decrease at row 1"), "{e}");
        let e = Utf8Data::from_parts(offs(&[0, 3]), bytes).unwrap_err();
        assert!(e.to_string().contains("byte count 4"), "{e}");
    }
}
