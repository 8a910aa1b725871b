//! [`DataFrame`]: named columns of one height, with unique names, on one device.

use gpukit::Device;

use crate::column::Column;
use crate::dtype::FrameDType;
use crate::error::{FrameError, Result};

/// Named columns of one height on one device, in order.
#[derive(Debug, Clone, Default)]
pub struct DataFrame {
    columns: Vec<Column>,
}

impl DataFrame {
    /// A frame of `columns`. An error if two share a name, their heights differ, or they live
    /// on different devices.
    pub fn new(columns: Vec<Column>) -> Result<DataFrame> {
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].iter().any(|d| d.name() == c.name()) {
                return Err(FrameError::DuplicateColumn(c.name().to_string()));
            }
        }
        if let Some(first) = columns.first() {
            for c in &columns[1..] {
                if c.len() != first.len() {
                    return Err(FrameError::Length(format!(
                        "column `{}` has {} rows but `{}` has {}",
                        c.name(),
                        c.len(),
                        first.name(),
                        first.len()
                    )));
                }
                if c.device() != first.device() {
                    return Err(FrameError::Input(format!(
                        "column `{}` is on {} but `{}` is on {}; move one with to_device",
                        c.name(),
                        c.device(),
                        first.name(),
                        first.device()
                    )));
                }
            }
        }
        Ok(DataFrame { columns })
    }

    /// The number of rows (0 for a frame without columns).
    pub fn height(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    /// The number of columns.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// `(rows, columns)`, as pandas' and Polars' `shape`.
    pub fn shape(&self) -> (usize, usize) {
        (self.height(), self.width())
    }

    /// The columns in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The columns, taken out of the frame.
    pub fn into_columns(self) -> Vec<Column> {
        self.columns
    }

    /// The columns for in-place edits inside the crate; callers keep the frame's rules (unique
    /// names, one height, one device).
    pub(crate) fn columns_mut(&mut self) -> &mut Vec<Column> {
        &mut self.columns
    }

    /// The column names in order.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(Column::name).collect()
    }

    /// The column types in order.
    pub fn dtypes(&self) -> Vec<FrameDType> {
        self.columns.iter().map(Column::dtype).collect()
    }

    /// The device of the columns (`None` for a frame without columns).
    pub fn device(&self) -> Option<Device> {
        self.columns.first().map(Column::device)
    }

    /// The column named `name`, or an error listing the names there are.
    pub fn column(&self, name: &str) -> Result<&Column> {
        self.columns
            .iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| self.unknown(name))
    }

    /// The position of the column named `name`, or an error listing the names there are.
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c.name() == name)
            .ok_or_else(|| self.unknown(name))
    }

    /// The error for a column name the frame does not have.
    pub fn unknown(&self, name: &str) -> FrameError {
        FrameError::UnknownColumn {
            name: name.to_string(),
            available: self.names().join(", "),
        }
    }

    /// A copy of every column on `device`.
    pub fn to_device(&self, device: &Device) -> Result<DataFrame> {
        let columns = self
            .columns
            .iter()
            .map(|c| c.to_device(device))
            .collect::<Result<_>>()?;
        Ok(DataFrame { columns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_frame() -> DataFrame {
        let cpu = Device::Cpu;
        DataFrame::new(vec![
            Column::from_strs_on("project", &["en", "de"], &cpu).unwrap(),
            Column::from_slice_on("requests", &[3i64, 1], &cpu).unwrap(),
        ])
        .unwrap()
    }

    #[test]
    fn a_frame_knows_its_shape_names_and_types() {
        let f = cpu_frame();
        assert_eq!(f.shape(), (2, 2));
        assert_eq!(f.names(), ["project", "requests"]);
        assert_eq!(f.dtypes(), [FrameDType::Utf8, FrameDType::Int64]);
        assert_eq!(f.column_index("requests").unwrap(), 1);
        assert_eq!(f.device(), Some(Device::Cpu));
    }

    #[test]
    fn bad_frames_and_names_are_errors() {
        let cpu = Device::Cpu;
        let e = cpu_frame().column("bytes").unwrap_err().to_string();
        assert!(
            e.contains("no column named `bytes` (the frame has: project, requests)"),
            "{e}"
        );
        let a = Column::from_slice_on("a", &[1i32], &cpu).unwrap();
        let b = Column::from_slice_on("b", &[1i32, 2], &cpu).unwrap();
        let e = DataFrame::new(vec![a.clone(), b]).unwrap_err().to_string();
        assert!(e.contains("column `b` has 2 rows but `a` has 1"), "{e}");
        let e = DataFrame::new(vec![a.clone(), a]).unwrap_err().to_string();
        assert!(e.contains("duplicate column name `a`"), "{e}");
        assert_eq!(DataFrame::new(vec![]).unwrap().shape(), (0, 0));
    }
}
