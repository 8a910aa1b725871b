//! Row selection: [`Column::take`] / [`DataFrame::take`] gather rows by index and
//! [`Column::filter`] / [`DataFrame::filter`] keep the rows where a boolean mask is true
//! (Polars' `gather` and `filter`, pandas' `take` and `df[mask]`).
//!
//! What runs where: everything on the columns' device. A gather is one kernel per column
//! (`gather_*`), plus one for the validity bits of a column with nulls (gathered as one bool
//! per row, then packed eight rows to a byte); strings take three steps (the gathered lengths,
//! their inclusive scan with a 0 in front as the new offsets, then a kernel copying each row's
//! bytes). A filter turns the mask into the indices of its true rows by gpukit's stream
//! compaction (`Array::masked` over `arange`: a scan of the mask and a scatter) and gathers
//! those. The host sees only scalars: the index range check (a min and a max reduction), the
//! number of bytes of gathered strings, the null count of gathered validity and the number of
//! rows a filter keeps.
//!
//! A null in a mask counts as false, as in Polars.

use gpukit::prelude::*;

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

use super::kernels::{self as k, grid_for};

/// Element types a gather kernel exists for.
pub(crate) trait Gather: Element {
    /// `out[i] = src[idx[i]]` (zero where `idx[i] < 0`) on the arrays' device.
    fn gather(src: &Array<Self>, idx: &Array<i64>) -> Result<Array<Self>>;
}

macro_rules! impl_gather {
    ($t:ty, $kernel:ident) => {
        impl Gather for $t {
            fn gather(src: &Array<$t>, idx: &Array<i64>) -> Result<Array<$t>> {
                let n = idx.size();
                let mut out = Array::<$t>::empty_on(n, &idx.device())?;
                if n > 0 {
                    launch!(k::$kernel[grid_for(n).0, grid_for(n).1](src, idx, &mut out))?;
                }
                Ok(out)
            }
        }
    };
}

impl_gather!(bool, gather_bool);
impl_gather!(i32, gather_i32);
impl_gather!(i64, gather_i64);
impl_gather!(u32, gather_u32);
impl_gather!(u64, gather_u64);
impl_gather!(f32, gather_f32);
impl_gather!(f64, gather_f64);

/// `src[idx]` for a plain array (NumPy's `np.take`), with zero where `idx < 0`; the indices are
/// trusted to be below `src.size()`.
pub(crate) fn gather<T: Gather>(src: &Array<T>, idx: &Array<i64>) -> Result<Array<T>> {
    T::gather(src, idx)
}

/// The last element of a 1-D array (one scalar copied to the host), `None` when empty.
pub(crate) fn last<T: Element>(a: &Array<T>) -> Result<Option<T>> {
    let n = a.size();
    if n == 0 {
        return Ok(None);
    }
    Ok(a.view().slice(s![n - 1..])?.to_vec()?.first().copied())
}

/// `[0, cumsum(x)...]`: `x.len() + 1` offsets from lengths, on the device.
pub(crate) fn offsets_from_lengths(lens: &Array<i64>) -> Result<Array<i64>> {
    let zero = Array::<i64>::zeros_on(1, &lens.device())?;
    if lens.size() == 0 {
        return Ok(zero);
    }
    Ok(Array::concatenate(&[&zero, &lens.cumsum()?], 0)?)
}

/// One bool per row of `col` (true = valid), `None` when it has no nulls.
pub(crate) fn valid_bools(col: &Column) -> Result<Option<Array<bool>>> {
    let Some(bitmap) = col.validity() else {
        return Ok(None);
    };
    let n = bitmap.len();
    let mut out = Array::<bool>::empty_on(n, &bitmap.device())?;
    if n > 0 {
        let (b, t) = grid_for(n);
        launch!(k::unpack_bits[b, t](bitmap.bits(), &mut out))?;
    }
    Ok(Some(out))
}

/// A validity bitmap from one bool per row (true = valid), `None` when none is null. Counts
/// and packs on the device.
pub(crate) fn bitmap_from_bools(valid: &Array<bool>) -> Result<Option<Bitmap>> {
    let n = valid.size();
    let nulls = n - valid.count_nonzero()? as usize;
    if nulls == 0 {
        return Ok(None);
    }
    let bytes = Bitmap::bytes_for(n);
    let mut bits = Array::<u8>::empty_on(bytes, &valid.device())?;
    let (b, t) = grid_for(bytes);
    launch!(k::pack_bits[b, t](valid, &mut bits))?;
    Ok(Some(Bitmap::from_packed_counted(bits, n, nulls)?))
}

/// The validity of gathered rows: valid where the index is `>= 0` and the source row is valid.
/// `None` when every gathered row is valid.
fn gather_validity(col: &Column, idx: &Array<i64>, may_be_null: bool) -> Result<Option<Bitmap>> {
    if col.validity().is_none() && !may_be_null {
        return Ok(None);
    }
    let n = idx.size();
    let device = idx.device();
    let dummy;
    let (bits, has) = match col.validity() {
        Some(v) if !v.bits().is_empty() => (v.bits(), true),
        _ => {
            dummy = Array::<u8>::zeros_on(1, &device)?;
            (&dummy, false)
        }
    };
    let mut valid = Array::<bool>::empty_on(n, &device)?;
    if n > 0 {
        let (b, t) = grid_for(n);
        launch!(k::gather_valid[b, t](bits, has, idx, &mut valid))?;
    }
    bitmap_from_bools(&valid)
}

/// Gathers strings: lengths, their scan as the new offsets, then the bytes.
pub(crate) fn gather_strings(s: &Utf8Data, idx: &Array<i64>) -> Result<Utf8Data> {
    let n = idx.size();
    let device = idx.device();
    let mut lens = Array::<i64>::empty_on(n, &device)?;
    if n > 0 {
        let (b, t) = grid_for(n);
        launch!(k::str_lengths[b, t](s.offsets(), idx, &mut lens))?;
    }
    let offsets = offsets_from_lengths(&lens)?;
    let total = last(&offsets)?.unwrap_or(0) as usize;
    let mut bytes = Array::<u8>::empty_on(total, &device)?;
    if n > 0 && total > 0 {
        let (b, t) = grid_for(n);
        launch!(k::str_copy[b, t](s.offsets(), s.bytes(), idx, &offsets, &mut bytes))?;
    }
    Ok(Utf8Data::from_parts_unchecked(offsets, bytes))
}

/// Gathers the values of `data` at `idx` (zero / empty string where `idx < 0`).
fn gather_data(data: &ColumnData, idx: &Array<i64>) -> Result<ColumnData> {
    Ok(match data {
        ColumnData::Bool(a) => ColumnData::Bool(gather(a, idx)?),
        ColumnData::Int32(a) => ColumnData::Int32(gather(a, idx)?),
        ColumnData::Int64(a) => ColumnData::Int64(gather(a, idx)?),
        ColumnData::UInt32(a) => ColumnData::UInt32(gather(a, idx)?),
        ColumnData::UInt64(a) => ColumnData::UInt64(gather(a, idx)?),
        ColumnData::Float32(a) => ColumnData::Float32(gather(a, idx)?),
        ColumnData::Float64(a) => ColumnData::Float64(gather(a, idx)?),
        ColumnData::Utf8(s) => ColumnData::Utf8(gather_strings(s, idx)?),
        ColumnData::Date(a) => ColumnData::Date(gather(a, idx)?),
        ColumnData::Timestamp(a, u) => ColumnData::Timestamp(gather(a, idx)?, *u),
    })
}

/// Checks that `idx` is 1-D on `device` and every index is in `0..rows` (a min and a max
/// reduction on the device); the error names the first bad index found and `what`.
pub(crate) fn check_indices(
    idx: &Array<i64>,
    rows: usize,
    device: &Device,
    what: &str,
) -> Result<()> {
    if idx.ndim() != 1 {
        return Err(FrameError::Input(format!(
            "take on {what}: indices must be 1-D, got shape {:?}",
            idx.shape()
        )));
    }
    if idx.device() != *device {
        return Err(FrameError::Input(format!(
            "take on {what}: the indices are on {} but the rows on {device}; move one with to_device",
            idx.device()
        )));
    }
    if idx.size() == 0 {
        return Ok(());
    }
    let (lo, hi) = (idx.min()?, idx.max()?);
    let bad = if lo < 0 { lo } else { hi };
    if lo < 0 || hi >= rows as i64 {
        return Err(FrameError::Input(format!(
            "take on {what}: index {bad} is out of range for {rows} rows"
        )));
    }
    Ok(())
}

impl Column {
    /// The rows at `indices` in their order (repeats allowed), as Polars' `gather` and NumPy's
    /// `take`; nulls stay null. An index outside `0..len` is an error naming it.
    pub fn take(&self, indices: &Array<i64>) -> Result<Column> {
        check_indices(
            indices,
            self.len(),
            &self.device(),
            &format!("column `{}`", self.name()),
        )?;
        self.take_unchecked(indices, false)
    }

    /// [`Column::take`] without the range check; an index `< 0` gives a null row when
    /// `may_be_null` (a left join's unmatched rows).
    pub(crate) fn take_unchecked(&self, indices: &Array<i64>, may_be_null: bool) -> Result<Column> {
        let data = gather_data(self.data(), indices)?;
        let validity = gather_validity(self, indices, may_be_null)?;
        Column::new(self.name(), data, validity)
    }

    /// The rows where `mask` is true, in order (a null in a mask column counts as false). The
    /// mask is a `bool` array or `bool` column of the same length on the same device.
    pub fn filter(&self, mask: &impl BoolMask) -> Result<Column> {
        let m = mask.to_mask(
            self.len(),
            &self.device(),
            &format!("column `{}`", self.name()),
        )?;
        let idx = mask_indices(&m)?;
        self.take_unchecked(&idx, false)
    }
}

/// The indices of the true rows of `mask`, on its device (gpukit's stream compaction).
pub(crate) fn mask_indices(mask: &Array<bool>) -> Result<Array<i64>> {
    let n = mask.size() as i64;
    Ok(Array::arange_on(0i64, n, &mask.device())?.masked(mask)?)
}

/// A boolean mask over rows: a `bool` array, or a `bool` column (its nulls count as false).
pub trait BoolMask {
    /// The mask as one bool per row, checked to have `rows` rows on `device`; `what` names
    /// what is filtered in errors.
    fn to_mask(&self, rows: usize, device: &Device, what: &str) -> Result<Array<bool>>;
}

impl BoolMask for Array<bool> {
    fn to_mask(&self, rows: usize, device: &Device, what: &str) -> Result<Array<bool>> {
        if self.ndim() != 1 || self.size() != rows {
            return Err(FrameError::Length(format!(
                "filter on {what}: the mask has shape {:?} but there are {rows} rows",
                self.shape()
            )));
        }
        if self.device() != *device {
            return Err(FrameError::Input(format!(
                "filter on {what}: the mask is on {} but the rows on {device}",
                self.device()
            )));
        }
        Ok(self.clone())
    }
}

impl BoolMask for Column {
    fn to_mask(&self, rows: usize, device: &Device, what: &str) -> Result<Array<bool>> {
        let ColumnData::Bool(values) = self.data() else {
            return Err(FrameError::Type(format!(
                "filter on {what}: the mask column `{}` is {}, not bool",
                self.name(),
                self.dtype()
            )));
        };
        let values = values.to_mask(rows, device, what)?;
        match valid_bools(self)? {
            None => Ok(values),
            Some(valid) => and_masks(&values, &valid),
        }
    }
}

/// `a && b` elementwise on the device.
pub(crate) fn and_masks(a: &Array<bool>, b: &Array<bool>) -> Result<Array<bool>> {
    let n = a.size();
    let mut out = Array::<bool>::empty_on(n, &a.device())?;
    if n > 0 {
        let (bl, t) = grid_for(n);
        launch!(k::and_bools[bl, t](a, b, &mut out))?;
    }
    Ok(out)
}

/// What [`DataFrame::filter`] accepts: a [`BoolMask`] (array or column) or an
/// [`Expr`](crate::expr::Expr) evaluated on the frame.
pub trait FrameMask {
    /// One bool per row of `frame` (nulls false).
    fn frame_mask(&self, frame: &DataFrame) -> Result<Array<bool>>;
}

macro_rules! frame_mask_of_bool_mask {
    ($($t:ty),*) => {$(
        impl FrameMask for $t {
            fn frame_mask(&self, frame: &DataFrame) -> Result<Array<bool>> {
                let device = frame.device().unwrap_or(Device::Cpu);
                self.to_mask(frame.height(), &device, "the frame")
            }
        }
    )*};
}

frame_mask_of_bool_mask!(Array<bool>, Column);

impl DataFrame {
    /// The rows at `indices` of every column (Polars' `gather`, pandas' `take`). An index
    /// outside `0..height` is an error naming it.
    pub fn take(&self, indices: &Array<i64>) -> Result<DataFrame> {
        let Some(device) = self.device() else {
            return Ok(self.clone());
        };
        check_indices(indices, self.height(), &device, "the frame")?;
        self.take_unchecked(indices, false)
    }

    /// [`DataFrame::take`] without the range check (`-1` gives null rows when `may_be_null`).
    pub(crate) fn take_unchecked(
        &self,
        indices: &Array<i64>,
        may_be_null: bool,
    ) -> Result<DataFrame> {
        let cols = self
            .columns()
            .iter()
            .map(|c| c.take_unchecked(indices, may_be_null))
            .collect::<Result<Vec<_>>>()?;
        DataFrame::new(cols)
    }

    /// The rows where `mask` is true, in order: `mask` is a `bool` array or column (nulls
    /// count as false, as in Polars) or an expression such as `col("requests").gt(100)`.
    pub fn filter(&self, mask: impl FrameMask) -> Result<DataFrame> {
        if self.width() == 0 {
            return Ok(self.clone());
        }
        let m = mask.frame_mask(self)?;
        let idx = mask_indices(&m)?;
        self.take_unchecked(&idx, false)
    }
}

impl<M: FrameMask + ?Sized> FrameMask for &M {
    fn frame_mask(&self, frame: &DataFrame) -> Result<Array<bool>> {
        (**self).frame_mask(frame)
    }
}

#[cfg(test)]
mod tests;
