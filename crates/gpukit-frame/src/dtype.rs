//! The logical type of a column, as Arrow and Polars name it.

use std::fmt;

/// The unit of a timestamp column's `i64` values, counted from 1970-01-01T00:00:00 UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds.
    Second,
    /// Milliseconds.
    Millisecond,
    /// Microseconds.
    Microsecond,
    /// Nanoseconds.
    Nanosecond,
}

impl TimeUnit {
    /// The short name Polars prints (`s`, `ms`, `μs`, `ns`).
    pub fn short_name(self) -> &'static str {
        match self {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "μs",
            TimeUnit::Nanosecond => "ns",
        }
    }
}

/// The logical type of a frame column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameDType {
    /// `bool` values.
    Bool,
    /// `i32` values.
    Int32,
    /// `i64` values.
    Int64,
    /// `u32` values.
    UInt32,
    /// `u64` values.
    UInt64,
    /// `f32` values.
    Float32,
    /// `f64` values.
    Float64,
    /// UTF-8 strings (Arrow's `LargeUtf8`: `i64` offsets and bytes).
    Utf8,
    /// Calendar dates: `i32` days since 1970-01-01 (Arrow's `Date32`).
    Date,
    /// Instants: `i64` counts of a [`TimeUnit`] since the epoch (Arrow's `Timestamp`, no zone).
    Timestamp(TimeUnit),
}

impl FrameDType {
    /// Whether the type is a number (integer or float).
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            FrameDType::Int32
                | FrameDType::Int64
                | FrameDType::UInt32
                | FrameDType::UInt64
                | FrameDType::Float32
                | FrameDType::Float64
        )
    }

    /// Whether the type is a float.
    pub fn is_float(self) -> bool {
        matches!(self, FrameDType::Float32 | FrameDType::Float64)
    }
}

impl fmt::Display for FrameDType {
    /// Polars' names: `bool`, `i32`, `i64`, `u32`, `u64`, `f32`, `f64`, `str`, `date`,
    /// `datetime[μs]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameDType::Bool => f.write_str("bool"),
            FrameDType::Int32 => f.write_str("i32"),
            FrameDType::Int64 => f.write_str("i64"),
            FrameDType::UInt32 => f.write_str("u32"),
            FrameDType::UInt64 => f.write_str("u64"),
            FrameDType::Float32 => f.write_str("f32"),
            FrameDType::Float64 => f.write_str("f64"),
            FrameDType::Utf8 => f.write_str("str"),
            FrameDType::Date => f.write_str("date"),
            FrameDType::Timestamp(u) => write!(f, "datetime[{}]", u.short_name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_polars_names() {
        assert_eq!(FrameDType::Float64.to_string(), "f64");
        assert_eq!(FrameDType::Utf8.to_string(), "str");
        assert_eq!(
            FrameDType::Timestamp(TimeUnit::Microsecond).to_string(),
            "datetime[μs]"
        );
        assert!(FrameDType::UInt32.is_numeric() && !FrameDType::Utf8.is_numeric());
        assert!(FrameDType::Float32.is_float() && !FrameDType::Int64.is_float());
    }
}
