//! Group-by across partitions: a local aggregate on each worker, the partial tables gathered
//! onto one device, one more group-by there to combine them.
//!
//! | asked for | each partition computes | the combine computes |
//! |---|---|---|
//! | `len` | `len` | sum of the lengths |
//! | `count(c)` | `count(c)` | sum of the counts |
//! | `sum(c)` | `sum(c)` | sum of the sums |
//! | `mean(c)` | `sum(c)`, `count(c)` | Σ sum / Σ count (null where Σ count = 0) |
//! | `min(c)`, `max(c)` | `min(c)`, `max(c)` | min of the minima, max of the maxima |
//! | `first(c)` | `first(c)` | the first partition's first (partials are joined in partition order) |
//!
//! The result has the single-frame result's columns, names, types and group order (sorted by
//! key). Integer results, counts, minima and maxima are equal to the single-frame ones; float
//! sums and means add the same numbers in another order, so they may differ in the last bits.
//! `std` and `n_unique` do not combine from partial tables and are errors that say so.

use super::{concat, DistFrame};
use gpukit::{Array, Device};
use gpukit_frame::group_by::{Agg, AggKind};
use gpukit_frame::{Bitmap, Column, ColumnData, DataFrame, FrameDType, FrameError, Result};

/// A distributed frame grouped by key columns; [`DistGroupBy::agg`] computes the result.
#[derive(Debug, Clone)]
pub struct DistGroupBy<'a> {
    frame: &'a DistFrame,
    keys: Vec<String>,
}

/// Prefix of the partial tables' internal column names.
const PARTIAL: &str = "__gpukit_partial";

/// What one asked-for aggregation needs from each partition.
struct Plan {
    agg: Agg,
    /// Internal names of the partial columns: one, or (sum, count) for a mean.
    partial: Vec<String>,
}

impl<'a> DistGroupBy<'a> {
    pub(crate) fn new(frame: &'a DistFrame, keys: Vec<String>) -> DistGroupBy<'a> {
        DistGroupBy { frame, keys }
    }

    /// The key column names.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// One row per group across every partition (sorted by key), on worker 0's device: the
    /// key columns, then one column per aggregation, exactly as `DataFrame::group_by(keys).agg`
    /// on all the rows in one frame (see the module documentation for how float sums may
    /// differ). Every aggregation is checked before any work starts.
    pub fn agg(&self, aggs: &[Agg]) -> Result<DataFrame> {
        self.agg_on(aggs, &self.frame.pool().device(0)?)
    }

    /// [`DistGroupBy::agg`] with the partial tables combined, and the result left, on `device`.
    pub fn agg_on(&self, aggs: &[Agg], device: &Device) -> Result<DataFrame> {
        let first = self
            .frame
            .partition(0)
            .expect("a DistFrame has a partition");
        // the single-frame checks and the result's schema, from an empty slice
        let expected = first.head(0)?.group_by(&self.keys)?.agg(aggs)?;
        let plans = plan(aggs)?;
        let partial_aggs: Vec<Agg> = plans
            .iter()
            .flat_map(|p| partial_aggs(&p.agg, &p.partial))
            .collect();
        // 1. local aggregates, one job per partition on its worker
        let keys = self.keys.clone();
        let local = partial_aggs.clone();
        let partials = self
            .frame
            .map_partitions_collect(move |_, p| p.group_by(&keys)?.agg(&local))?;
        // 2. the small partial tables onto one device, in partition order
        let refs: Vec<&DataFrame> = partials.iter().collect();
        let joined = concat(&refs, device)?;
        drop(partials);
        // 3. combine
        let combine: Vec<Agg> = plans
            .iter()
            .flat_map(|p| combine_aggs(&p.agg, &p.partial))
            .collect();
        let combined = joined.group_by(&self.keys)?.agg(&combine)?;
        let mut out: Vec<Column> = Vec::with_capacity(expected.width());
        for k in &self.keys {
            out.push(combined.column(k)?.try_clone()?);
        }
        for p in &plans {
            out.push(finish(
                &combined,
                p,
                expected.column(p.agg.output_name())?.dtype(),
            )?);
        }
        DataFrame::new(out)
    }
}

fn plan(aggs: &[Agg]) -> Result<Vec<Plan>> {
    aggs.iter()
        .enumerate()
        .map(|(i, a)| {
            let one = |role: &str| format!("{PARTIAL}_{i}_{role}");
            let partial = match a.kind() {
                AggKind::Mean => vec![one("sum"), one("count")],
                AggKind::Len
                | AggKind::Count
                | AggKind::Sum
                | AggKind::Min
                | AggKind::Max
                | AggKind::First => vec![one("v")],
                AggKind::Std | AggKind::NUnique => {
                    return Err(FrameError::Input(format!(
                        "{} (output `{}`) does not combine from per-partition tables; \
                         collect() the frame first, or use len/count/sum/mean/min/max/first",
                        a.kind().name(),
                        a.output_name()
                    )))
                }
            };
            Ok(Plan {
                agg: a.clone(),
                partial,
            })
        })
        .collect()
}

/// The aggregations each partition computes for `a`.
fn partial_aggs(a: &Agg, names: &[String]) -> Vec<Agg> {
    let c = a.column().unwrap_or("").to_string();
    match a.kind() {
        AggKind::Len => vec![Agg::len().alias(&names[0])],
        AggKind::Count => vec![Agg::count(c).alias(&names[0])],
        AggKind::Sum => vec![Agg::sum(c).alias(&names[0])],
        AggKind::Min => vec![Agg::min(c).alias(&names[0])],
        AggKind::Max => vec![Agg::max(c).alias(&names[0])],
        AggKind::First => vec![Agg::first(c).alias(&names[0])],
        AggKind::Mean => vec![
            Agg::sum(c.clone()).alias(&names[0]),
            Agg::count(c).alias(&names[1]),
        ],
        AggKind::Std | AggKind::NUnique => unreachable!("refused by plan()"),
    }
}

/// The aggregations that combine the partial columns of `a`.
fn combine_aggs(a: &Agg, names: &[String]) -> Vec<Agg> {
    match a.kind() {
        AggKind::Min => vec![Agg::min(&names[0]).alias(&names[0])],
        AggKind::Max => vec![Agg::max(&names[0]).alias(&names[0])],
        AggKind::First => vec![Agg::first(&names[0]).alias(&names[0])],
        _ => names.iter().map(|n| Agg::sum(n).alias(n)).collect(),
    }
}

/// The output column of plan `p` from the combined table, with the single-frame type `dtype`.
fn finish(combined: &DataFrame, p: &Plan, dtype: FrameDType) -> Result<Column> {
    let name = p.agg.output_name();
    let v = combined.column(&p.partial[0])?;
    if p.agg.kind() == AggKind::Mean {
        let count = combined.column(&p.partial[1])?;
        let c = as_f64(count)?;
        let s = as_f64(v)?;
        let mean = (&s / &c)?;
        // null where there was nothing to average (Σ count = 0)
        let validity = if count.is_empty() || c.min()? > 0.0 {
            None
        } else {
            let valid: Vec<bool> = c.to_vec()?.iter().map(|&n| n > 0.0).collect();
            Some(Bitmap::from_bools_on(&valid, &mean.device())?)
        };
        return Column::new(name, ColumnData::Float64(mean), validity);
    }
    let data = match (v.data(), dtype) {
        (d, t) if d.dtype() == t => d.try_clone()?,
        // sums of u32 partials (lengths, counts, sums of booleans) come back as u64
        (ColumnData::UInt64(a), FrameDType::UInt32) => ColumnData::UInt32(a.astype::<u32>()?),
        (d, t) => {
            return Err(FrameError::Type(format!(
                "combining `{name}`: the partial tables give {} where one frame gives {t}",
                d.dtype()
            )))
        }
    };
    Column::new(name, data, v.validity().map(|b| b.try_clone()).transpose()?)
}

/// A numeric column's values as `f64` (nulls count as their stored value; callers mask them).
fn as_f64(c: &Column) -> Result<Array<f64>> {
    Ok(match c.data() {
        ColumnData::Int32(a) => a.astype::<f64>()?,
        ColumnData::Int64(a) => a.astype::<f64>()?,
        ColumnData::UInt32(a) => a.astype::<f64>()?,
        ColumnData::UInt64(a) => a.astype::<f64>()?,
        ColumnData::Float32(a) => a.astype::<f64>()?,
        ColumnData::Float64(a) => a.try_clone()?,
        other => {
            return Err(FrameError::Type(format!(
                "column `{}` of type {} is not numeric",
                c.name(),
                other.dtype()
            )))
        }
    })
}
