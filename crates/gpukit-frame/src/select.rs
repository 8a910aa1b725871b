//! Choosing columns and rows: [`DataFrame::select`], [`DataFrame::drop`],
//! [`DataFrame::rename`], [`DataFrame::rename_all`], [`DataFrame::with_column`],
//! [`DataFrame::head`], [`DataFrame::tail`], [`DataFrame::slice`], and
//! [`Column::slice`].
//!
//! Where it runs: on the columns' device. Column choices move no data except that `select` and
//! `drop` borrow the frame and so copy the columns they keep (one device-to-device copy each;
//! gpukit arrays are not reference counted). A row range is copied on the device: values with
//! gpukit's slicing (`a.slice(s![a..b]).copy()`, one copy kernel on a GPU), string offsets
//! rebased by subtracting the range's first offset (a gpukit array op), and validity bits
//! shifted to start at bit 0 by the [`slice_validity`] kernel, which also counts the valid rows.
//! Only two offsets per string column and one count per bitmap come back to the host.

use gpukit::prelude::*;
use gpukit::Array;

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

/// Copies rows `offset..offset + len` of a validity bitmap so that they start at bit 0 of
/// `out` (`ceil(len / 8)` bytes, bits past `len` zero), and adds the number of valid rows to
/// `valid[0]`. One thread per output byte.
#[kernel]
pub fn slice_validity(src: &[u8], out: &mut [u8], valid: &mut [u64], offset: usize, len: usize) {
    let j = grid(1);
    if j < out.len() {
        let mut byte = 0u8;
        for k in 0..8usize {
            let row = j * 8 + k;
            if row < len {
                let s = offset + row;
                let bit = (src[s / 8] >> (s % 8)) & 1u8;
                byte |= bit << k;
            }
        }
        out[j] = byte;
        atomic_add(&mut valid[0], byte.count_ones() as u64);
    }
}

/// Threads per block for [`slice_validity`].
const THREADS: usize = 256;

/// Rows `offset..offset + len` of an array, copied on its device.
fn slice_array<T: gpukit::Element>(a: &Array<T>, offset: usize, len: usize) -> Result<Array<T>> {
    Ok(a.slice(s![offset..offset + len])?.copy()?)
}

impl Bitmap {
    /// Rows `offset..offset + len` as a new bitmap starting at bit 0, computed on the device.
    /// An error if the range runs past the bitmap.
    pub fn slice(&self, offset: usize, len: usize) -> Result<Bitmap> {
        check_range(offset, len, self.len(), "validity bitmap")?;
        let device = self.device();
        let nbytes = Bitmap::bytes_for(len);
        let mut out = Array::<u8>::zeros_on(nbytes, &device)?;
        if nbytes == 0 {
            return Ok(Bitmap::from_parts_unchecked(out, 0, 0));
        }
        let mut valid = Array::<u64>::zeros_on(1, &device)?;
        let blocks = nbytes.div_ceil(THREADS);
        launch!(slice_validity[blocks, THREADS](
            self.bits(),
            &mut out,
            &mut valid,
            offset,
            len
        ))?;
        let valid = valid.to_vec()?[0] as usize;
        Ok(Bitmap::from_parts_unchecked(out, len, len - valid))
    }
}

fn check_range(offset: usize, len: usize, height: usize, what: &str) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > height) {
        return Err(FrameError::Length(format!(
            "rows {offset}..{} are out of range for a {what} of {height} rows",
            offset.saturating_add(len)
        )));
    }
    Ok(())
}

impl Utf8Data {
    /// Rows `offset..offset + len`, copied on the device with the offsets rebased to 0. An
    /// error if the range runs past the rows.
    pub fn slice(&self, offset: usize, len: usize) -> Result<Utf8Data> {
        check_range(offset, len, self.len(), "string column")?;
        let mut offsets = slice_array(self.offsets(), offset, len + 1)?;
        let ends = self
            .offsets()
            .slice(s![offset..offset + len + 1;len.max(1)])?
            .to_vec()?;
        let (start, end) = (ends[0], *ends.last().unwrap_or(&ends[0]));
        if start != 0 {
            offsets.sub_in_place(start)?;
        }
        let bytes = slice_array(self.bytes(), start as usize, (end - start) as usize)?;
        Ok(Utf8Data::from_parts_unchecked(offsets, bytes))
    }
}

impl ColumnData {
    /// Rows `offset..offset + len`, copied on the device. An error if the range runs past the
    /// rows.
    pub fn slice(&self, offset: usize, len: usize) -> Result<ColumnData> {
        check_range(offset, len, self.len(), "column")?;
        Ok(match self {
            ColumnData::Bool(a) => ColumnData::Bool(slice_array(a, offset, len)?),
            ColumnData::Int32(a) => ColumnData::Int32(slice_array(a, offset, len)?),
            ColumnData::Int64(a) => ColumnData::Int64(slice_array(a, offset, len)?),
            ColumnData::UInt32(a) => ColumnData::UInt32(slice_array(a, offset, len)?),
            ColumnData::UInt64(a) => ColumnData::UInt64(slice_array(a, offset, len)?),
            ColumnData::Float32(a) => ColumnData::Float32(slice_array(a, offset, len)?),
            ColumnData::Float64(a) => ColumnData::Float64(slice_array(a, offset, len)?),
            ColumnData::Date(a) => ColumnData::Date(slice_array(a, offset, len)?),
            ColumnData::Timestamp(a, u) => ColumnData::Timestamp(slice_array(a, offset, len)?, *u),
            ColumnData::Utf8(s) => ColumnData::Utf8(s.slice(offset, len)?),
        })
    }
}

impl Column {
    /// Rows `offset..offset + len` as a new column of the same name, copied on the device.
    /// An error naming the column if the range runs past its rows.
    pub fn slice(&self, offset: usize, len: usize) -> Result<Column> {
        check_range(
            offset,
            len,
            self.len(),
            &format!("column `{}`", self.name()),
        )?;
        let data = self.data().slice(offset, len)?;
        let validity = self.validity().map(|v| v.slice(offset, len)).transpose()?;
        Column::new(self.name(), data, validity)
    }
}

/// The rows `offset..offset + len` (a negative `offset` counts from the end) that lie inside
/// `0..height`, as a start and a length: Polars' `slice`. The range is clipped, not moved, so a
/// range that starts before the first row loses the rows before it (`slice(-5, 2)` of three
/// rows is empty, `slice(-4, 2)` is row 0).
fn clamp_range(offset: i64, len: usize, height: usize) -> (usize, usize) {
    let h = height as i128;
    let start = if offset < 0 {
        h + offset as i128
    } else {
        offset as i128
    };
    let end = (start + len as i128).clamp(0, h);
    let start = start.clamp(0, h);
    (start as usize, (end - start) as usize)
}

impl DataFrame {
    /// The column named `name` (the same as [`DataFrame::column`], Polars' name).
    pub fn get_column(&self, name: &str) -> Result<&Column> {
        self.column(name)
    }

    /// A frame of the named columns in the given order, copied on the device. An error naming
    /// the first unknown or repeated name; the frame is unchanged.
    pub fn select<S: AsRef<str>>(&self, names: &[S]) -> Result<DataFrame> {
        let idx = names
            .iter()
            .map(|n| self.column_index(n.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        for (i, n) in names.iter().enumerate() {
            if names[..i].iter().any(|m| m.as_ref() == n.as_ref()) {
                return Err(FrameError::DuplicateColumn(n.as_ref().to_string()));
            }
        }
        DataFrame::new(
            idx.into_iter()
                .map(|i| self.columns()[i].try_clone())
                .collect::<Result<_>>()?,
        )
    }

    /// A frame without the named columns, the others copied on the device. An error naming the
    /// first unknown name; the frame is unchanged.
    pub fn drop<S: AsRef<str>>(&self, names: &[S]) -> Result<DataFrame> {
        for n in names {
            self.column_index(n.as_ref())?;
        }
        DataFrame::new(
            self.columns()
                .iter()
                .filter(|c| !names.iter().any(|n| n.as_ref() == c.name()))
                .map(Column::try_clone)
                .collect::<Result<_>>()?,
        )
    }

    /// Takes the named column out of the frame without a copy. An error naming an unknown
    /// column; the frame is then unchanged.
    pub fn drop_in_place(&mut self, name: &str) -> Result<Column> {
        let i = self.column_index(name)?;
        Ok(self.columns_mut().remove(i))
    }

    /// Renames column `old` to `new` in place (no data moves). An error if `old` is unknown or
    /// another column is already called `new`; the frame is then unchanged.
    pub fn rename(&mut self, old: &str, new: &str) -> Result<&mut DataFrame> {
        let i = self.column_index(old)?;
        if old != new && self.column_index(new).is_ok() {
            return Err(FrameError::DuplicateColumn(new.to_string()));
        }
        let cols = self.columns_mut();
        let c = cols.remove(i);
        cols.insert(i, c.renamed(new));
        Ok(self)
    }

    /// Renames every column (no data moves). An error if the number of names differs from the
    /// width or two names repeat; the frame is then unchanged.
    pub fn rename_all<S: AsRef<str>>(&mut self, names: &[S]) -> Result<&mut DataFrame> {
        if names.len() != self.width() {
            return Err(FrameError::Length(format!(
                "{} names given for a frame of {} columns",
                names.len(),
                self.width()
            )));
        }
        for (i, n) in names.iter().enumerate() {
            if names[..i].iter().any(|m| m.as_ref() == n.as_ref()) {
                return Err(FrameError::DuplicateColumn(n.as_ref().to_string()));
            }
        }
        let cols = std::mem::take(self.columns_mut());
        *self.columns_mut() = cols
            .into_iter()
            .zip(names)
            .map(|(c, n)| c.renamed(n.as_ref()))
            .collect();
        Ok(self)
    }

    /// Adds `column`, or replaces the column of the same name in its place. An error if its
    /// height or device differs from the frame's (a frame without columns takes any); the
    /// frame is then unchanged.
    pub fn with_column(&mut self, column: Column) -> Result<&mut DataFrame> {
        if self.width() > 0 {
            let others = self.columns().iter().filter(|c| c.name() != column.name());
            if let Some(first) = others.clone().next().or(self.columns().first()) {
                if column.len() != self.height() {
                    return Err(FrameError::Length(format!(
                        "column `{}` has {} rows but the frame has {}",
                        column.name(),
                        column.len(),
                        self.height()
                    )));
                }
                if column.device() != first.device() {
                    return Err(FrameError::Input(format!(
                        "column `{}` is on {} but the frame is on {}; move it with to_device",
                        column.name(),
                        column.device(),
                        first.device()
                    )));
                }
            }
        }
        match self.column_index(column.name()) {
            Ok(i) => self.columns_mut()[i] = column,
            Err(_) => self.columns_mut().push(column),
        }
        Ok(self)
    }

    /// Rows `offset..offset + len` (a negative `offset` counts from the end; the range is
    /// clamped to the frame, as in Polars), copied on the device.
    pub fn slice(&self, offset: i64, len: usize) -> Result<DataFrame> {
        let (start, len) = clamp_range(offset, len, self.height());
        DataFrame::new(
            self.columns()
                .iter()
                .map(|c| c.slice(start, len))
                .collect::<Result<_>>()?,
        )
    }

    /// The first `n` rows (all when fewer), copied on the device.
    pub fn head(&self, n: usize) -> Result<DataFrame> {
        self.slice(0, n)
    }

    /// The last `n` rows (all when fewer), copied on the device.
    pub fn tail(&self, n: usize) -> Result<DataFrame> {
        let h = self.height();
        self.slice(h.saturating_sub(n) as i64, n)
    }

    /// Whether the frame has no rows.
    pub fn is_empty(&self) -> bool {
        self.height() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit::Device;
    use rand::{Rng, SeedableRng};

    fn random_frame(n: usize, seed: u64) -> (DataFrame, Vec<Option<i64>>, Vec<Option<String>>) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let cpu = Device::Cpu;
        let ints: Vec<Option<i64>> = (0..n)
            .map(|_| rng.random_bool(0.8).then(|| rng.random_range(-100..100)))
            .collect();
        let words = ["en", "", "Zürich", "日本語", "a_b", "Ωmega"];
        let strs: Vec<Option<String>> = (0..n)
            .map(|_| {
                rng.random_bool(0.7)
                    .then(|| words[rng.random_range(0..words.len())].to_string())
            })
            .collect();
        let ic = Column::new(
            "i",
            ColumnData::Int64(
                Array::from_slice_on(
                    &ints.iter().map(|v| v.unwrap_or(0)).collect::<Vec<_>>(),
                    &cpu,
                )
                .unwrap(),
            ),
            Some(
                Bitmap::from_bools_on(&ints.iter().map(Option::is_some).collect::<Vec<_>>(), &cpu)
                    .unwrap(),
            ),
        )
        .unwrap();
        let sv: Vec<String> = strs.iter().map(|s| s.clone().unwrap_or_default()).collect();
        let sc = Column::new(
            "s",
            ColumnData::Utf8(Utf8Data::from_strs_on(&sv, &cpu).unwrap()),
            Some(
                Bitmap::from_bools_on(&strs.iter().map(Option::is_some).collect::<Vec<_>>(), &cpu)
                    .unwrap(),
            ),
        )
        .unwrap();
        (DataFrame::new(vec![ic, sc]).unwrap(), ints, strs)
    }

    fn host_ints(f: &DataFrame) -> Vec<Option<i64>> {
        let c = f.column("i").unwrap();
        let v = c.values::<i64>().unwrap().to_vec().unwrap();
        let valid = c
            .validity()
            .map(|b| b.to_bools().unwrap())
            .unwrap_or(vec![true; v.len()]);
        v.into_iter()
            .zip(valid)
            .map(|(x, ok)| ok.then_some(x))
            .collect()
    }

    fn host_strs(f: &DataFrame) -> Vec<Option<String>> {
        let c = f.column("s").unwrap();
        let ColumnData::Utf8(s) = c.data() else {
            panic!()
        };
        let v = s.to_strings().unwrap();
        assert_eq!(s.offsets().to_vec().unwrap()[0], 0);
        assert_eq!(
            *s.offsets().to_vec().unwrap().last().unwrap() as usize,
            s.bytes().size()
        );
        let valid = c
            .validity()
            .map(|b| b.to_bools().unwrap())
            .unwrap_or(vec![true; v.len()]);
        v.into_iter()
            .zip(valid)
            .map(|(x, ok)| ok.then_some(x))
            .collect()
    }

    #[test]
    fn slice_validity_compiles_with_nvrtc() {
        if !gpukit::testing::nvrtc_or_skip() {
            return;
        }
        let ptx = slice_validity.ptx().unwrap();
        assert!(ptx.contains(".entry"), "{ptx}");
    }

    #[test]
    fn slices_match_a_host_slice_at_every_offset() {
        let (f, ints, strs) = random_frame(37, 7);
        for offset in 0..=37usize {
            for len in [0usize, 1, 5, 8, 9, 17, 40] {
                let g = f.slice(offset as i64, len).unwrap();
                let end = (offset + len).min(37);
                assert_eq!(
                    host_ints(&g),
                    ints[offset..end],
                    "offset {offset} len {len}"
                );
                assert_eq!(
                    host_strs(&g),
                    strs[offset..end],
                    "offset {offset} len {len}"
                );
                let nulls = ints[offset..end].iter().filter(|v| v.is_none()).count();
                assert_eq!(g.column("i").unwrap().null_count(), nulls);
                if let Some(b) = g.column("i").unwrap().validity() {
                    let bytes = b.bits().to_vec().unwrap();
                    let tail_bits = (end - offset) % 8;
                    if tail_bits > 0 {
                        assert_eq!(bytes.last().unwrap() >> tail_bits, 0, "bits past the end");
                    }
                }
            }
        }
        assert_eq!(host_ints(&f.head(3).unwrap()), ints[..3]);
        assert_eq!(host_ints(&f.tail(4).unwrap()), ints[33..]);
        assert_eq!(host_ints(&f.slice(-2, 10).unwrap()), ints[35..]);
        // a range that starts before row 0 is clipped, not moved (Polars)
        assert_eq!(f.slice(-40, 2).unwrap().height(), 0);
        assert_eq!(host_ints(&f.slice(-40, 5).unwrap()), ints[..2]);
        assert_eq!(f.slice(50, 5).unwrap().height(), 0);
        assert_eq!(f.head(100).unwrap().height(), 37);
        assert_eq!(f.tail(100).unwrap().height(), 37);
    }

    #[test]
    fn empty_and_one_row_frames_slice() {
        let (f, ints, _) = random_frame(1, 3);
        assert_eq!(host_ints(&f.head(5).unwrap()), ints);
        assert_eq!(f.tail(0).unwrap().shape(), (0, 2));
        let (e, _, _) = random_frame(0, 3);
        assert_eq!(e.head(5).unwrap().shape(), (0, 2));
        assert_eq!(DataFrame::default().head(3).unwrap().shape(), (0, 0));
        let c = f.column("i").unwrap();
        let err = c.slice(1, 1).unwrap_err().to_string();
        assert!(
            err.contains("rows 1..2 are out of range for a column `i` of 1 rows"),
            "{err}"
        );
    }

    #[test]
    fn select_drop_rename_and_with_column() {
        let (f, ints, strs) = random_frame(10, 1);
        let g = f.select(&["s", "i"]).unwrap();
        assert_eq!(g.names(), ["s", "i"]);
        assert_eq!((host_ints(&g), host_strs(&g)), (ints.clone(), strs.clone()));
        let e = f.select(&["i", "nope"]).unwrap_err().to_string();
        assert!(
            e.contains("no column named `nope` (the frame has: i, s)"),
            "{e}"
        );
        assert!(f
            .select(&["i", "i"])
            .unwrap_err()
            .to_string()
            .contains("duplicate"));
        assert_eq!(f.drop(&["i"]).unwrap().names(), ["s"]);
        assert!(f.drop(&["x"]).is_err());

        let mut h = f.select(&["i", "s"]).unwrap();
        h.rename("i", "n").unwrap();
        assert_eq!(h.names(), ["n", "s"]);
        let e = h.rename("n", "s").unwrap_err().to_string();
        assert!(e.contains("duplicate column name `s`"), "{e}");
        assert_eq!(h.names(), ["n", "s"]);
        h.rename_all(&["a", "b"]).unwrap();
        assert_eq!(h.names(), ["a", "b"]);
        assert!(h
            .rename_all(&["a"])
            .unwrap_err()
            .to_string()
            .contains("1 names given"));

        let cpu = Device::Cpu;
        let x = Column::from_slice_on("x", &[1.0f64; 10], &cpu).unwrap();
        h.with_column(x).unwrap();
        assert_eq!(h.names(), ["a", "b", "x"]);
        let short = Column::from_slice_on("a", &[1i32; 3], &cpu).unwrap();
        let e = h.with_column(short).unwrap_err().to_string();
        assert!(
            e.contains("column `a` has 3 rows but the frame has 10"),
            "{e}"
        );
        let replace = Column::from_slice_on("a", &[2i32; 10], &cpu).unwrap();
        h.with_column(replace).unwrap();
        assert_eq!(h.names(), ["a", "b", "x"]);
        assert_eq!(h.dtypes()[0], crate::FrameDType::Int32);
        let taken = h.drop_in_place("b").unwrap();
        assert_eq!((taken.name(), h.names()), ("b", vec!["a", "x"]));
        let mut empty = DataFrame::default();
        empty
            .with_column(Column::from_slice_on("y", &[1u8 as u32], &cpu).unwrap())
            .unwrap();
        assert_eq!(empty.shape(), (1, 1));
        assert_eq!(f.get_column("i").unwrap().name(), "i");
    }
}
