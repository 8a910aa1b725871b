//! [`Agg`]: one aggregation of a group-by, named as Polars names its expressions
//! (`pl.len()`, `pl.col("x").sum()`, ...), and the name and type of the column it makes.

use crate::dtype::FrameDType;
use crate::error::{FrameError, Result};

/// What an aggregation computes per group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggKind {
    /// Rows in the group, nulls included (Polars' `pl.len()`, column `len`, `u32`).
    Len,
    /// Non-null values of a column in the group (Polars' `pl.col(x).count()`, `u32`).
    Count,
    /// Sum of the non-null values (0 when there are none, as Polars).
    Sum,
    /// Mean of the non-null values, `f64` (null when there are none).
    Mean,
    /// Smallest non-null value (NaN skipped unless the group holds only NaN); null if none.
    Min,
    /// Largest non-null value (NaN skipped unless the group holds only NaN); null if none.
    Max,
    /// Sample standard deviation (ddof = 1, as Polars' default), `f64`; null below 2 values.
    Std,
    /// The value of the group's first row (null if that row is null), as Polars' `first`.
    First,
    /// Distinct values in the group, null counted as one value (as Polars), `u32`.
    NUnique,
}

impl AggKind {
    /// The Polars method name (`len`, `count`, `sum`, ...).
    pub fn name(self) -> &'static str {
        match self {
            AggKind::Len => "len",
            AggKind::Count => "count",
            AggKind::Sum => "sum",
            AggKind::Mean => "mean",
            AggKind::Min => "min",
            AggKind::Max => "max",
            AggKind::Std => "std",
            AggKind::First => "first",
            AggKind::NUnique => "n_unique",
        }
    }
}

/// One aggregation of [`crate::group_by::GroupBy::agg`]: a kind, the column it reads (none for
/// [`Agg::len`]) and an optional output name.
///
/// ```
/// use gpukit_frame::group_by::Agg;
/// let aggs = [Agg::len(), Agg::sum("requests"), Agg::mean("requests").alias("avg")];
/// assert_eq!(aggs[1].output_name(), "requests");
/// assert_eq!(aggs[2].output_name(), "avg");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agg {
    kind: AggKind,
    column: Option<String>,
    alias: Option<String>,
}

impl Agg {
    fn of(kind: AggKind, column: impl Into<String>) -> Agg {
        Agg {
            kind,
            column: Some(column.into()),
            alias: None,
        }
    }

    /// Rows per group, nulls included: Polars' `pl.len()`, output column `len`.
    pub fn len() -> Agg {
        Agg {
            kind: AggKind::Len,
            column: None,
            alias: None,
        }
    }

    /// Non-null values of `column` per group: Polars' `pl.col(column).count()` (unlike
    /// [`Agg::len`], nulls are not counted). Output named after the column.
    pub fn count(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::Count, column)
    }

    /// Sum per group: integers in `i64` (`u64` for unsigned, `u32` for booleans as Polars),
    /// floats in `f64` (returned as the column's float type), in row order, so the same bits
    /// on every run and backend.
    pub fn sum(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::Sum, column)
    }

    /// Mean per group, `f64`.
    pub fn mean(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::Mean, column)
    }

    /// Minimum per group (numbers, booleans, strings by bytes, dates, timestamps).
    pub fn min(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::Min, column)
    }

    /// Maximum per group (numbers, booleans, strings by bytes, dates, timestamps).
    pub fn max(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::Max, column)
    }

    /// Sample standard deviation per group (ddof = 1), `f64`.
    pub fn std(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::Std, column)
    }

    /// The first row's value per group (any type).
    pub fn first(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::First, column)
    }

    /// Distinct values per group (any type; null counts as one value), `u32`.
    pub fn n_unique(column: impl Into<String>) -> Agg {
        Agg::of(AggKind::NUnique, column)
    }

    /// The same aggregation with output column `name` (Polars' `.alias(name)`).
    pub fn alias(mut self, name: impl Into<String>) -> Agg {
        self.alias = Some(name.into());
        self
    }

    /// What it computes.
    pub fn kind(&self) -> AggKind {
        self.kind
    }

    /// The column it reads (`None` for [`Agg::len`]).
    pub fn column(&self) -> Option<&str> {
        self.column.as_deref()
    }

    /// The output column's name: the alias, else the source column's name, else `len`.
    pub fn output_name(&self) -> &str {
        self.alias
            .as_deref()
            .or(self.column.as_deref())
            .unwrap_or("len")
    }

    /// The output type for an input column of type `dtype`, or an error naming the column and
    /// type when the aggregation does not apply to it.
    pub fn output_dtype(&self, dtype: FrameDType) -> Result<FrameDType> {
        use FrameDType as D;
        let bad = || self.type_error(dtype);
        Ok(match self.kind {
            AggKind::Len | AggKind::Count | AggKind::NUnique => D::UInt32,
            AggKind::First | AggKind::Min | AggKind::Max => dtype,
            AggKind::Sum => match dtype {
                D::Bool => D::UInt32,
                D::Int32 | D::Int64 => D::Int64,
                D::UInt32 | D::UInt64 => D::UInt64,
                D::Float32 => D::Float32,
                D::Float64 => D::Float64,
                _ => return Err(bad()),
            },
            AggKind::Mean | AggKind::Std => {
                if dtype.is_numeric() || dtype == D::Bool {
                    D::Float64
                } else {
                    return Err(bad());
                }
            }
        })
    }
}

impl Agg {
    /// The error for an input column of type `dtype` that the aggregation does not apply to.
    pub(crate) fn type_error(&self, dtype: FrameDType) -> FrameError {
        FrameError::Type(format!(
            "cannot take the {} of column `{}` of type {dtype}: {} needs a numeric or boolean \
             column",
            self.kind.name(),
            self.column.as_deref().unwrap_or(""),
            self.kind.name()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types_follow_polars() {
        assert_eq!(Agg::len().output_name(), "len");
        assert_eq!(Agg::count("x").output_name(), "x");
        assert_eq!(Agg::std("x").alias("s").output_name(), "s");
        let sum = Agg::sum("x");
        assert_eq!(
            sum.output_dtype(FrameDType::Int32).unwrap(),
            FrameDType::Int64
        );
        assert_eq!(
            sum.output_dtype(FrameDType::Bool).unwrap(),
            FrameDType::UInt32
        );
        let e = Agg::mean("project")
            .output_dtype(FrameDType::Utf8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mean of column `project` of type str"), "{e}");
    }
}
