//! The frame rows of issue 17 ("Speed"): gpukit-frame on the device against Polars
//! (benches/polars_twin.py, all CPU cores) over the same generated pageview logs.
//!
//! `gpukit-bench frame --rows N [--csv PATH] [--reps R] [--warmup W] [--digests PATH]
//! [--dry-run]`. With `--csv`, the frame comes from reading that file (the timed `read csv`
//! row: arrow-csv parses on the host with every core, then each column is copied to the
//! device); without it, from `datasets::pageviews::pageviews_frame` (host generation, untimed).
//! `gpukit-bench frame --write-csv PATH --rows N` only writes the file both sides read.
//!
//! Timing: the host clock from just before the call to the return of `gpukit::synchronize()`
//! after it, `warmup` untimed calls first, then `reps` timed ones (the row's `wall_ms`; the
//! collector takes the median). Results stay on the device while timed; after the timed calls
//! the last result is copied to the host and reduced to a digest (`frame_digest`), written
//! with `--digests` as one JSON line per row for benches/frame_collect.py to compare with
//! Polars' digests. Each row also reports gpukit's device memory (`memory_stats`: live bytes
//! and the process's peak so far, so a row's peak includes the rows before it; `pool_stats`:
//! reserved) and the process's host memory (VmRSS, VmHWM).

use std::path::{Path, PathBuf};
use std::time::Instant;

use gpukit::prelude::*;
use gpukit::{memory_stats, pool_stats};
use gpukit_frame::datasets::pageviews::{pageviews_frame, write_pageviews};
use gpukit_frame::group_by::Agg;
use gpukit_frame::prelude::*;

use crate::frame_digest::{digest_ints, digest_strings, quantise};
use crate::json::Json;

/// The seed of the generated logs (benches/frame_run.sh writes the CSV with it).
pub const SEED: u64 = 17;
/// The rolling window of the `rolling mean` row.
pub const WINDOW: usize = 100;
/// The literal the `str contains` row looks for.
pub const PATTERN: &str = "an";
/// The column names and types of the pageview CSV (no header in the file).
pub const SCHEMA: [(&str, FrameDType); 4] = [
    ("project", FrameDType::Utf8),
    ("page_title", FrameDType::Utf8),
    ("requests", FrameDType::Int64),
    ("bytes", FrameDType::Int64),
];

/// What `gpukit-bench frame` runs.
#[derive(Debug, Clone)]
pub struct FrameOpts {
    /// Rows of generated logs.
    pub rows: usize,
    /// Untimed calls before the timed ones.
    pub warmup: usize,
    /// Timed calls per row.
    pub reps: usize,
    /// Timed reads of the CSV (each is a whole parse).
    pub read_reps: usize,
    /// The CSV to read (None: generate the frame, no read row).
    pub csv: Option<PathBuf>,
    /// Where the digests go (one JSON line per row).
    pub digests: Option<PathBuf>,
}

/// A boxed error: the frame crate's and gpukit's errors both convert into it.
type R<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Runs every frame row on `device`, handing each row's JSON line to `emit` and each digest
/// line to `digest`.
pub fn run(
    opts: &FrameOpts,
    device: Device,
    side: &str,
    emit: &mut dyn FnMut(Json),
    digest: &mut dyn FnMut(Json),
) -> R<()> {
    set_default_device(device);
    let mut out = Out {
        opts,
        device,
        side,
        emit,
        digest,
    };
    let df = match &opts.csv {
        Some(path) => {
            let options = CsvOptions::new()
                .with_delimiter(b' ')
                .with_header(false)
                .with_schema(&SCHEMA)
                .with_threads(0)
                .with_device(&device);
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..opts.read_reps.max(1) {
                drop(last.take());
                let t = Instant::now();
                let df = read_csv(path, &options)?;
                synchronize()?;
                times.push(ms(t));
                last = Some(df);
            }
            let df = last.ok_or("no read")?;
            out.row(
                "read csv",
                times,
                "parsed on the host (arrow-csv, every core), then one copy per column to the device",
                read_digest(&df)?,
            )?;
            df
        }
        None => pageviews_frame(opts.rows, SEED, &device)?,
    };
    if df.height() != opts.rows {
        return Err(format!(
            "the frame has {} rows, --rows says {}",
            df.height(),
            opts.rows
        )
        .into());
    }

    let filter = || col("requests").gt(10i64) & col("project").eq("en");
    let (t, r) = out.time(|| Ok(df.filter(filter())?))?;
    let d = Json::Obj(vec![
        ("count", Json::Int(r.height() as i64)),
        ("requests", int_digest(r.column("requests")?)?),
        ("bytes", int_digest(r.column("bytes")?)?),
    ]);
    drop(r);
    out.row(
        "filter+count",
        t,
        "requests > 10 & project == \"en\"; the whole filtered frame",
        d,
    )?;

    let aggs = [
        Agg::len(),
        Agg::sum("requests"),
        Agg::mean("requests").alias("mean"),
    ];
    let (t, g) = out.time(|| Ok(df.group_by(&["project"])?.agg(&aggs)?))?;
    let d = group_table(&g)?;
    out.row(
        "group-by sum/mean",
        t,
        "by project: len, sum and mean of requests; groups sorted by project",
        d,
    )?;

    let (t, r) = out.time(|| Ok(df.sort_by(&["requests"], &[true])?))?;
    let d = Json::Obj(vec![
        ("count", Json::Int(r.height() as i64)),
        ("requests", int_digest(r.column("requests")?)?),
        ("bytes", int_digest(r.column("bytes")?)?),
    ]);
    drop(r);
    out.row(
        "sort",
        t,
        "the whole frame by requests, descending, stable",
        d,
    )?;

    let small = project_table(&g)?;
    drop(g);
    let (t, r) = out.time(|| Ok(df.join(&small, &["project"], JoinHow::Inner)?))?;
    let d = Json::Obj(vec![
        ("count", Json::Int(r.height() as i64)),
        ("requests", int_digest(r.column("requests")?)?),
        ("rank", int_digest(r.column("rank")?)?),
    ]);
    drop(r);
    out.row(
        "join",
        t,
        "inner, on project, against every other project of the sorted distinct list; rows in left order",
        d,
    )?;

    let titles = df.column("page_title")?;
    let (t, r) = out.time(|| Ok(titles.str().to_uppercase()?))?;
    let d = string_digest(&r)?;
    drop(r);
    out.row("str upper", t, "page_title to upper case (Unicode)", d)?;

    let (t, r) = out.time(|| Ok(titles.str().contains(PATTERN)?))?;
    let d = int_digest(&r)?;
    drop(r);
    out.row("str contains", t, "page_title contains \"an\" (literal)", d)?;

    let requests = df.column("requests")?;
    let (t, r) = out.time(|| Ok(requests.rolling(RollingOptions::new(WINDOW)).mean()?))?;
    let d = quantised_digest(&r, WINDOW as f64)?;
    drop(r);
    out.row(
        "rolling mean",
        t,
        "requests, window 100, min_periods 100 (f64); digest of round(mean * 100)",
        d,
    )?;
    Ok(())
}

/// Writes the pageview CSV both sides read.
pub fn write_csv_file(path: &Path, rows: usize) -> R<()> {
    Ok(write_pageviews(path, rows, SEED)?)
}

/// Where rows and digests go.
struct Out<'a> {
    opts: &'a FrameOpts,
    device: Device,
    side: &'a str,
    emit: &'a mut dyn FnMut(Json),
    digest: &'a mut dyn FnMut(Json),
}

impl Out<'_> {
    /// `warmup` untimed calls, then `reps` timed ones; the last result is kept.
    fn time<T>(&mut self, mut f: impl FnMut() -> R<T>) -> R<(Vec<f64>, T)> {
        for _ in 0..self.opts.warmup {
            drop(f()?);
            synchronize()?;
        }
        let mut times = Vec::with_capacity(self.opts.reps);
        let mut last = None;
        for _ in 0..self.opts.reps.max(1) {
            drop(last.take());
            let t = Instant::now();
            let r = f()?;
            synchronize()?;
            times.push(ms(t));
            last = Some(r);
        }
        Ok((times, last.ok_or("no timed call")?))
    }

    /// Emits the row's JSON line and its digest line.
    fn row(&mut self, op: &str, wall_ms: Vec<f64>, note: &str, digest: Json) -> R<()> {
        let name = format!("frame {op}, {} rows", self.opts.rows);
        let mem = memory_stats(&self.device);
        let pool = pool_stats(&self.device);
        let (rss, hwm) = host_memory();
        eprintln!(
            "{}: {name:<44} {:>10.3} ms (median of {})",
            self.side,
            crate::timing::median(&wall_ms),
            wall_ms.len()
        );
        (self.emit)(Json::Obj(vec![
            ("side", Json::Str(self.side.into())),
            ("name", Json::Str(name.clone())),
            ("op", Json::Str(op.into())),
            ("rows", Json::Int(self.opts.rows as i64)),
            ("unit", Json::Str("wall".into())),
            ("span_ms", Json::Arr(vec![])),
            ("host_ms", Json::Arr(vec![])),
            ("wall_ms", Json::nums(&wall_ms)),
            ("verify", Json::Null),
            ("check", Json::Arr(vec![])),
            ("bytes", Json::Num(0.0)),
            ("access", Json::Str(String::new())),
            (
                "span",
                Json::Str("host clock to the return of gpukit::synchronize()".into()),
            ),
            ("note", Json::Str(note.into())),
            ("device", Json::Str(self.device.to_string())),
            ("device_live_bytes", Json::Int(mem.bytes as i64)),
            ("device_peak_bytes", Json::Int(mem.peak_bytes as i64)),
            ("pool_reserved_bytes", Json::Int(pool.reserved_bytes as i64)),
            ("host_rss_bytes", Json::Int(rss as i64)),
            ("host_peak_rss_bytes", Json::Int(hwm as i64)),
        ]));
        (self.digest)(Json::Obj(vec![
            ("side", Json::Str(self.side.into())),
            ("op", Json::Str(op.into())),
            ("rows", Json::Int(self.opts.rows as i64)),
            ("digest", digest),
        ]));
        Ok(())
    }
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The process's resident and peak resident host memory in bytes (0 where /proc has none).
fn host_memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// A u64 digest as a JSON string (JSON numbers lose bits past 2^53).
fn hex(d: u64) -> Json {
    Json::Str(format!("{d:016x}"))
}

/// The validity of `c` on the host (empty: no nulls).
fn valid_of(c: &Column) -> R<Vec<bool>> {
    Ok(match c.validity() {
        Some(b) if b.null_count() > 0 => b.to_bools()?,
        _ => Vec::new(),
    })
}

/// An integer or boolean column's values as `i64` on the host.
fn ints_of(c: &Column) -> R<Vec<i64>> {
    Ok(match c.data() {
        ColumnData::Bool(a) => a.to_vec()?.into_iter().map(i64::from).collect(),
        ColumnData::Int32(a) | ColumnData::Date(a) => {
            a.to_vec()?.into_iter().map(i64::from).collect()
        }
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => a.to_vec()?,
        ColumnData::UInt32(a) => a.to_vec()?.into_iter().map(i64::from).collect(),
        ColumnData::UInt64(a) => a.to_vec()?.into_iter().map(|v| v as i64).collect(),
        other => {
            return Err(format!("column `{}` is {:?}, not integer", c.name(), other.dtype()).into())
        }
    })
}

/// `{rows, nulls, digest}` of an integer or boolean column.
fn int_digest(c: &Column) -> R<Json> {
    let v = ints_of(c)?;
    let valid = valid_of(c)?;
    Ok(Json::Obj(vec![
        ("rows", Json::Int(v.len() as i64)),
        ("nulls", Json::Int(c.null_count() as i64)),
        (
            "sum",
            Json::Str(v.iter().fold(0i64, |a, &x| a.wrapping_add(x)).to_string()),
        ),
        ("digest", hex(digest_ints(&v, &valid))),
    ]))
}

/// `{rows, nulls, digest}` of a float column quantised as `round(v * scale)`.
fn quantised_digest(c: &Column, scale: f64) -> R<Json> {
    let v: Vec<i64> = c
        .values::<f64>()?
        .to_vec()?
        .into_iter()
        .map(|x| quantise(x, scale))
        .collect();
    let valid = valid_of(c)?;
    Ok(Json::Obj(vec![
        ("rows", Json::Int(v.len() as i64)),
        ("nulls", Json::Int(c.null_count() as i64)),
        ("digest", hex(digest_ints(&v, &valid))),
    ]))
}

/// `{rows, nulls, bytes, digest}` of a string column.
fn string_digest(c: &Column) -> R<Json> {
    let ColumnData::Utf8(s) = c.data() else {
        return Err(format!("column `{}` is not a string column", c.name()).into());
    };
    let offsets = s.offsets().to_vec()?;
    let bytes = s.bytes().to_vec()?;
    let valid = valid_of(c)?;
    let (d, n) = digest_strings(&offsets, &bytes, &valid);
    Ok(Json::Obj(vec![
        ("rows", Json::Int(c.len() as i64)),
        ("nulls", Json::Int(c.null_count() as i64)),
        ("bytes", Json::Int(n as i64)),
        ("digest", hex(d)),
    ]))
}

/// The read row's digest: rows and the two integer columns.
fn read_digest(df: &DataFrame) -> R<Json> {
    Ok(Json::Obj(vec![
        ("count", Json::Int(df.height() as i64)),
        ("requests", int_digest(df.column("requests")?)?),
        ("bytes", int_digest(df.column("bytes")?)?),
    ]))
}

/// The whole group-by table: `[[project, len, sum, mean], ...]` in gpukit's (sorted) order.
fn group_table(g: &DataFrame) -> R<Json> {
    let projects = g.column("project")?.str().to_strings()?;
    let len = ints_of(g.column("len")?)?;
    let sum = ints_of(g.column("requests")?)?;
    let mean = g.column("mean")?.values::<f64>()?.to_vec()?;
    let rows = (0..g.height())
        .map(|i| {
            Json::Arr(vec![
                projects[i].clone().map_or(Json::Null, Json::Str),
                Json::Int(len[i]),
                Json::Int(sum[i]),
                Json::Num(mean[i]),
            ])
        })
        .collect();
    Ok(Json::Obj(vec![
        ("count", Json::Int(g.height() as i64)),
        ("table", Json::Arr(rows)),
    ]))
}

/// The join's right side: every other project of the sorted distinct list (the group-by
/// keys, already sorted), with `rank` = its index in that list.
fn project_table(g: &DataFrame) -> R<DataFrame> {
    let projects = g.column("project")?.str().to_strings()?;
    let device = g.device().unwrap_or_else(default_device);
    let mut keep = Vec::new();
    let mut rank = Vec::new();
    for (i, p) in projects.into_iter().enumerate() {
        if let (0, Some(p)) = (i % 2, p) {
            keep.push(p);
            rank.push(i as i64);
        }
    }
    Ok(DataFrame::new(vec![
        Column::from_strs_on("project", &keep, &device)?,
        Column::from_slice_on("rank", &rank, &device)?,
    ])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dry_run_of_the_frame_rows_on_the_cpu_backend() {
        let dir = std::env::temp_dir().join(format!("frame-rows-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("pv.csv");
        write_csv_file(&csv, 3000).unwrap();
        let opts = FrameOpts {
            rows: 3000,
            warmup: 1,
            reps: 2,
            read_reps: 1,
            csv: Some(csv),
            digests: None,
        };
        let mut rows = Vec::new();
        let mut digests = Vec::new();
        run(
            &opts,
            Device::Cpu,
            "gpukit-dry-run",
            &mut |j| rows.push(j.render()),
            &mut |j| digests.push(j.render()),
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).ok();
        let ops: Vec<String> = rows
            .iter()
            .map(|r| {
                r.split("\"op\":\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            ops,
            [
                "read csv",
                "filter+count",
                "group-by sum/mean",
                "sort",
                "join",
                "str upper",
                "str contains",
                "rolling mean"
            ]
        );
        assert_eq!(digests.len(), rows.len());
        assert!(rows
            .iter()
            .all(|r| r.contains("\"wall_ms\":[") && !r.contains("\"wall_ms\":[]")));
        // the rolling row: the first WINDOW - 1 rows are null
        assert!(digests[7].contains(&format!("\"nulls\":{}", WINDOW - 1)));
    }
}
