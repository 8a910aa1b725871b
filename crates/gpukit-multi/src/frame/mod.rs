//! `DistFrame`: one logical DataFrame split into partitions (row blocks), partition `i` on
//! worker `i % pool.len()`, as a Dask DataFrame is split into pandas/cuDF partitions held by
//! workers (feature `frame`).
//!
//! Row-wise operations (`filter`, `map_partitions`) run as one job per partition on its
//! worker. A group-by runs in three steps ([`DistGroupBy::agg`], `group_by.rs`): each worker
//! aggregates its partitions locally, the small partial tables are gathered onto one device
//! (worker 0's), and one more group-by there combines them (sums of sums, minimum of minima,
//! mean = Σ sum / Σ count). [`DistFrame::collect`] joins the partitions into one frame
//! (`concat.rs`).

mod concat;
mod group_by;
#[cfg(test)]
mod tests;

pub use concat::concat;
pub use group_by::DistGroupBy;

use crate::pool::{DevicePool, WorkerCtx};
use gpukit::Device;
use gpukit_frame::{DataFrame, Expr, FrameDType, FrameError, Result};
use std::fmt;
use std::sync::Arc;

/// A DataFrame split into partitions across a pool's devices.
///
/// ```
/// use gpukit_frame::datasets::timeseries::timeseries;
/// use gpukit_frame::group_by::Agg;
/// use gpukit_frame::{col, lit};
/// use gpukit_multi::{DevicePool, DistFrame};
/// # fn main() -> gpukit_frame::Result<()> {
/// let pool = DevicePool::virtual_cpu(2)?;
/// let ts = timeseries(4, 42).with_rows_per_partition(1000);   // 4 partitions of 1000 rows
/// let df = DistFrame::from_map(&pool, ts.n_partitions(), move |i, ctx| {
///     ts.partition(i, &ctx.device())                          // made on the worker's device
/// })?;
/// assert_eq!((df.n_partitions(), df.height()), (4, 4000));
/// let positive = df.filter(&col("x").gt(lit(0.0)))?;
/// let means = positive.group_by(&["name"])?.agg(&[Agg::mean("x"), Agg::len()])?;
/// assert_eq!(means.names(), ["name", "x", "len"]);
/// assert_eq!(means.height(), 26);                           // one row per name
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DistFrame {
    pool: DevicePool,
    parts: Vec<Arc<DataFrame>>,
}

/// A frame error as a gpukit error (pool jobs return gpukit's `Result`).
pub(crate) fn to_gpu(e: FrameError) -> gpukit::Error {
    match e {
        FrameError::Gpu(g) => g,
        other => gpukit::Error::Other(other.to_string()),
    }
}

/// The column names and types of a frame.
fn schema(df: &DataFrame) -> Vec<(String, FrameDType)> {
    df.columns()
        .iter()
        .map(|c| (c.name().to_string(), c.dtype()))
        .collect()
}

/// An error unless every frame has the schema of the first (names, order and types).
pub(crate) fn check_schemas<'a>(frames: impl IntoIterator<Item = &'a DataFrame>) -> Result<()> {
    let mut first: Option<Vec<(String, FrameDType)>> = None;
    for (i, f) in frames.into_iter().enumerate() {
        let s = schema(f);
        match &first {
            None => first = Some(s),
            Some(f0) if *f0 != s => {
                let show = |s: &[(String, FrameDType)]| {
                    s.iter()
                        .map(|(n, t)| format!("{n}: {t}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(FrameError::Input(format!(
                    "partition {i} has columns ({}) but partition 0 has ({}): partitions must \
                     have the same columns in the same order with the same types",
                    show(&s),
                    show(f0)
                )));
            }
            Some(_) => {}
        }
    }
    if first.is_none() {
        return Err(FrameError::Input(
            "a distributed frame needs at least one partition".to_string(),
        ));
    }
    Ok(())
}

impl DistFrame {
    /// A distributed frame from partitions already made: partition `i` goes to worker
    /// `i % pool.len()` (copied to its device when it is elsewhere). The partitions must have
    /// the same columns (names, order, types); at least one is needed.
    pub fn from_partitions(pool: &DevicePool, parts: Vec<DataFrame>) -> Result<DistFrame> {
        check_schemas(&parts)?;
        let n = pool.len();
        let mut out = Vec::with_capacity(parts.len());
        for (i, p) in parts.into_iter().enumerate() {
            let dev = pool.device(i % n)?;
            let moved = match p.device() {
                Some(d) if d != dev => p.to_device(&dev)?,
                _ => p,
            };
            out.push(Arc::new(moved));
        }
        Ok(DistFrame {
            pool: pool.clone(),
            parts: out,
        })
    }

    /// `n_partitions` partitions made on the workers by `f(i, ctx)` (partition `i` on worker
    /// `i % pool.len()`, side by side), as Dask's `dd.from_map`; `f` should make its frame on
    /// `ctx.device()` (one made elsewhere is copied there).
    pub fn from_map<F>(pool: &DevicePool, n_partitions: usize, f: F) -> Result<DistFrame>
    where
        F: Fn(usize, &mut WorkerCtx) -> Result<DataFrame> + Send + Sync + 'static,
    {
        let frames = pool.map((0..n_partitions).collect(), move |ctx, i| {
            let df = f(i, ctx).map_err(to_gpu)?;
            match df.device() {
                Some(d) if d != ctx.device() => df.to_device(&ctx.device()).map_err(to_gpu),
                _ => Ok(df),
            }
        })?;
        Self::from_partitions(pool, frames)
    }

    /// The pool the partitions live on.
    pub fn pool(&self) -> &DevicePool {
        &self.pool
    }

    /// Number of partitions.
    pub fn n_partitions(&self) -> usize {
        self.parts.len()
    }

    /// Rows of all partitions together.
    pub fn height(&self) -> usize {
        self.parts.iter().map(|p| p.height()).sum()
    }

    /// Rows of each partition.
    pub fn partition_heights(&self) -> Vec<usize> {
        self.parts.iter().map(|p| p.height()).collect()
    }

    /// The column names.
    pub fn names(&self) -> Vec<&str> {
        self.parts[0].names()
    }

    /// The column types.
    pub fn dtypes(&self) -> Vec<FrameDType> {
        self.parts[0].dtypes()
    }

    /// Partition `i`, or `None` past the last.
    pub fn partition(&self, i: usize) -> Option<&DataFrame> {
        self.parts.get(i).map(|p| p.as_ref())
    }

    /// The partitions, each shared (`Arc`) with any clone of this frame.
    pub fn partitions(&self) -> &[Arc<DataFrame>] {
        &self.parts
    }

    /// The worker holding partition `i`.
    pub fn worker_of(&self, i: usize) -> usize {
        i % self.pool.len()
    }

    /// The device of each partition (its worker's device).
    pub fn partition_devices(&self) -> Vec<Device> {
        let devices = self.pool.devices();
        (0..self.parts.len())
            .map(|i| devices[self.worker_of(i)])
            .collect()
    }

    /// Runs `f` on every partition on its worker and returns the results in partition order.
    pub fn map_partitions_collect<R, F>(&self, f: F) -> Result<Vec<R>>
    where
        R: Send + 'static,
        F: Fn(&mut WorkerCtx, &DataFrame) -> Result<R> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let handles = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (f, p) = (f.clone(), p.clone());
                self.pool
                    .submit(self.worker_of(i), move |ctx| f(ctx, &p).map_err(to_gpu))
            })
            .collect::<gpukit::Result<Vec<_>>>()?;
        Ok(self.pool.gather(handles)?)
    }

    /// A new distributed frame from `f` applied to every partition on its worker (the
    /// results must share one schema).
    pub fn map_partitions<F>(&self, f: F) -> Result<DistFrame>
    where
        F: Fn(&mut WorkerCtx, &DataFrame) -> Result<DataFrame> + Send + Sync + 'static,
    {
        let parts = self.map_partitions_collect(f)?;
        check_schemas(&parts)?;
        Ok(DistFrame {
            pool: self.pool.clone(),
            parts: parts.into_iter().map(Arc::new).collect(),
        })
    }

    /// The rows where `expr` is true, partition by partition on the workers (Polars'
    /// `filter`; see `gpukit_frame::expr`). Partitions keep their places, some perhaps empty.
    pub fn filter(&self, expr: &Expr) -> Result<DistFrame> {
        // check the expression once, on an empty slice, before any job starts
        self.parts[0].head(0)?.filter_expr(expr)?;
        let expr = expr.clone();
        self.map_partitions(move |_, p| p.filter_expr(&expr))
    }

    /// Groups the rows of every partition by the columns `keys`; [`DistGroupBy::agg`]
    /// computes one row per group across all partitions. An error for an unknown or repeated
    /// name or an empty list.
    pub fn group_by<S: AsRef<str>>(&self, keys: &[S]) -> Result<DistGroupBy<'_>> {
        // the same checks as one frame's group_by
        let empty = self.parts[0].head(0)?;
        empty.group_by(keys)?;
        Ok(DistGroupBy::new(
            self,
            keys.iter().map(|k| k.as_ref().to_string()).collect(),
        ))
    }

    /// The whole frame on worker 0's device: every partition copied there and joined in order
    /// ([`concat`]).
    pub fn collect(&self) -> Result<DataFrame> {
        self.collect_to(&self.pool.device(0)?)
    }

    /// The whole frame on `device`: every partition copied there and joined in order.
    pub fn collect_to(&self, device: &Device) -> Result<DataFrame> {
        let refs: Vec<&DataFrame> = self.parts.iter().map(|p| p.as_ref()).collect();
        concat(&refs, device)
    }

    /// The whole frame in host memory ([`Device::Cpu`]), as Dask's `compute`.
    pub fn gather(&self) -> Result<DataFrame> {
        self.collect_to(&Device::Cpu)
    }
}

impl fmt::Display for DistFrame {
    /// `DistFrame: 2592000 rows, 5 columns (timestamp: datetime[s], ...), 30 partitions on
    /// 4 devices [cpu, cpu, cpu, cpu]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cols: Vec<String> = self.parts[0]
            .columns()
            .iter()
            .map(|c| format!("{}: {}", c.name(), c.dtype()))
            .collect();
        let devices: Vec<String> = self.pool.devices().iter().map(|d| d.to_string()).collect();
        write!(
            f,
            "DistFrame: {} rows, {} columns ({}), {} partitions on {} device{} [{}]",
            self.height(),
            cols.len(),
            cols.join(", "),
            self.parts.len(),
            devices.len(),
            if devices.len() == 1 { "" } else { "s" },
            devices.join(", ")
        )?;
        if self.pool.is_virtual_cpu() {
            write!(f, " (virtual CPU devices)")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DistFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistFrame")
            .field("names", &self.names())
            .field("partition_heights", &self.partition_heights())
            .field("devices", &self.partition_devices())
            .finish()
    }
}
