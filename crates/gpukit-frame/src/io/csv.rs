//! CSV in and out: [`read_csv`] / [`read_csv_from`] and [`write_csv`] / [`write_csv_to`].
//!
//! Why this file is long: the sequential and the multi-threaded reader share schema and error
//! handling, and the tests beside them (inference, schemas, malformed rows, round trips,
//! parallel reads) are half of it.
//!
//! Where it runs: **parsing and formatting run on the host**, with the maintained `arrow-csv`
//! crate (Apache arrow-rs), not on the GPU. Splitting a text file into fields is branchy,
//! byte-serial work that depends on quotes and line ends; a GPU parser is a large project of
//! its own (cuDF's is thousands of lines of CUDA) and the file has to cross from disk through
//! host memory anyway. So the file is parsed in batches on the host, each column is gathered
//! into one host buffer, and then it moves to the target device ([`CsvOptions::device`],
//! gpukit's default device unless set) in one copy per buffer. [`read_csv`] can parse a file on
//! several threads ([`CsvOptions::with_threads`]: the file is split at line ends and each chunk
//! parsed by its own reader), as Polars does. Writing copies each column to the host once per
//! chunk of rows and formats it there.
//!
//! Types: given by a schema ([`CsvOptions::with_schema`]) or inferred from the first
//! [`CsvOptions::infer_rows`] rows by arrow-csv (`Format::infer_schema`): `i64`, `f64`, `bool`,
//! `date`, `datetime[s/ms/μs/ns]`, else `str`. An empty field is null in every column type, so a
//! string column cannot tell an empty string from a null once written to CSV. A malformed row
//! (wrong number of fields, a value that does not parse as its column's type, invalid UTF-8) is
//! a [`FrameError::Input`] naming the line and the column.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_csv::reader::Format;
use arrow_csv::{ReaderBuilder, WriterBuilder};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use gpukit::Device;

use crate::dtype::FrameDType;
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::io::arrow::{arrow_data_type, ColumnBuilder};

/// Rows per batch parsed by arrow-csv before they are appended to the host columns.
const BATCH_ROWS: usize = 64 * 1024;
/// Rows per chunk copied to the host and formatted by [`write_csv_to`].
const WRITE_CHUNK_ROWS: usize = 1 << 20;

/// How to read a CSV file. `CsvOptions::default()` reads comma-separated values with a header
/// row, infers types from the first 1000 rows and puts the columns on gpukit's default device.
#[derive(Debug, Clone)]
pub struct CsvOptions {
    /// The field separator (`b','`; `b' '` for pageview logs, `b'\t'` for TSV).
    pub delimiter: u8,
    /// The quote character (`b'"'`).
    pub quote: u8,
    /// Whether the first line holds column names (`true`).
    pub has_header: bool,
    /// Column names to use instead of the header's (or of `column_1`, `column_2`, ... when the
    /// file has no header). Ignored when `schema` is set.
    pub names: Option<Vec<String>>,
    /// Column names and types; when set, nothing is inferred.
    pub schema: Option<Vec<(String, FrameDType)>>,
    /// How many rows type inference reads (`Some(1000)`; `None` reads the whole file first).
    pub infer_rows: Option<usize>,
    /// Where the columns go (`None`: gpukit's default device).
    pub device: Option<Device>,
    /// Threads that parse a file in [`read_csv`] (1; 0 = every core). With more than one, the
    /// file is read into memory and split at line ends, so no quoted field may span lines.
    pub threads: usize,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            delimiter: b',',
            quote: b'"',
            has_header: true,
            names: None,
            schema: None,
            infer_rows: Some(1000),
            device: None,
            threads: 1,
        }
    }
}

impl CsvOptions {
    /// The defaults (see [`CsvOptions`]).
    pub fn new() -> CsvOptions {
        CsvOptions::default()
    }

    /// Sets the field separator.
    pub fn with_delimiter(mut self, delimiter: u8) -> CsvOptions {
        self.delimiter = delimiter;
        self
    }

    /// Sets the quote character.
    pub fn with_quote(mut self, quote: u8) -> CsvOptions {
        self.quote = quote;
        self
    }

    /// Sets whether the first line is a header.
    pub fn with_header(mut self, has_header: bool) -> CsvOptions {
        self.has_header = has_header;
        self
    }

    /// Names the columns (types are still inferred).
    pub fn with_names<S: AsRef<str>>(mut self, names: &[S]) -> CsvOptions {
        self.names = Some(names.iter().map(|s| s.as_ref().to_string()).collect());
        self
    }

    /// Names and types the columns; nothing is inferred.
    pub fn with_schema<S: AsRef<str>>(mut self, schema: &[(S, FrameDType)]) -> CsvOptions {
        self.schema = Some(
            schema
                .iter()
                .map(|(n, t)| (n.as_ref().to_string(), *t))
                .collect(),
        );
        self
    }

    /// Sets how many rows type inference reads (`None`: all).
    pub fn with_infer_rows(mut self, rows: Option<usize>) -> CsvOptions {
        self.infer_rows = rows;
        self
    }

    /// Parses a file on `threads` threads (0 = every core); see [`CsvOptions::threads`].
    pub fn with_threads(mut self, threads: usize) -> CsvOptions {
        self.threads = threads;
        self
    }

    /// Puts the columns on `device`.
    pub fn with_device(mut self, device: &Device) -> CsvOptions {
        self.device = Some(*device);
        self
    }

    fn format(&self) -> Format {
        Format::default()
            .with_header(self.has_header)
            .with_delimiter(self.delimiter)
            .with_quote(self.quote)
    }
}

/// Reads the CSV file at `path` into a frame on `options.device` (see the module doc for what
/// runs where). Errors name the file, and for malformed rows the line and column.
pub fn read_csv(path: impl AsRef<Path>, options: &CsvOptions) -> Result<DataFrame> {
    let path = path.as_ref();
    let file = File::open(path)
        .map_err(|e| FrameError::Input(format!("cannot open {}: {e}", path.display())))?;
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let read = if threads > 1 {
        drop(file);
        read_csv_parallel(path, options, threads)
    } else {
        read_csv_from(BufReader::with_capacity(1 << 20, file), options)
    };
    read.map_err(|e| match e {
        FrameError::Input(m) => FrameError::Input(format!("{}: {m}", path.display())),
        other => other,
    })
}

/// Reads CSV text from `reader` into a frame on `options.device`. The reader must be seekable
/// because type inference reads the first rows and then starts again (wrap bytes in
/// `std::io::Cursor`). Always parses on one thread ([`CsvOptions::threads`] applies to
/// [`read_csv`]).
pub fn read_csv_from<R: Read + Seek>(mut reader: R, options: &CsvOptions) -> Result<DataFrame> {
    let device = options.device.unwrap_or_else(gpukit::default_device);
    let schema = resolve_schema(&mut reader, options)?;
    let builders = parse(reader, &schema, options.format())?;
    finish(builders, &device)
}

/// The schema to parse with: the given one, or the inferred one (the reader is put back where
/// it was) with `options.names` applied and all-empty columns read as strings.
fn resolve_schema<R: Read + Seek>(reader: &mut R, options: &CsvOptions) -> Result<Schema> {
    if let Some(s) = &options.schema {
        return Ok(Schema::new(
            s.iter()
                .map(|(name, t)| Field::new(name, reader_type(*t), true))
                .collect::<Vec<_>>(),
        ));
    }
    let start = reader.stream_position().map_err(io_err)?;
    let (inferred, _) = options
        .format()
        .infer_schema(&mut *reader, options.infer_rows)
        .map_err(|e| csv_error(e, &[]))?;
    reader.seek(SeekFrom::Start(start)).map_err(io_err)?;
    let names: Vec<String> = match &options.names {
        Some(n) if n.len() != inferred.fields().len() => {
            return Err(FrameError::Input(format!(
                "{} column names given for a CSV of {} columns",
                n.len(),
                inferred.fields().len()
            )))
        }
        Some(n) => n.clone(),
        None => inferred.fields().iter().map(|f| f.name().clone()).collect(),
    };
    Ok(Schema::new(
        inferred
            .fields()
            .iter()
            .zip(names)
            .map(|(f, name)| {
                // A column with no values at all is read as strings (all null).
                let t = match f.data_type() {
                    DataType::Null => DataType::Utf8,
                    t => t.clone(),
                };
                Field::new(name, t, true)
            })
            .collect::<Vec<_>>(),
    ))
}

/// Parses all of `reader` with `schema` into host columns.
fn parse<R: Read>(reader: R, schema: &Schema, format: Format) -> Result<Vec<ColumnBuilder>> {
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut builders = schema
        .fields()
        .iter()
        .map(|f| ColumnBuilder::new(f.name(), f.data_type()))
        .collect::<Result<Vec<_>>>()?;
    let csv = ReaderBuilder::new(Arc::new(schema.clone()))
        .with_format(format)
        .with_batch_size(BATCH_ROWS)
        .build(reader)
        .map_err(|e| csv_error(e, &names))?;
    for batch in csv {
        let batch = batch.map_err(|e| csv_error(e, &names))?;
        for (b, col) in builders.iter_mut().zip(batch.columns()) {
            b.append(col.as_ref())?;
        }
    }
    Ok(builders)
}

fn finish(builders: Vec<ColumnBuilder>, device: &Device) -> Result<DataFrame> {
    let columns = builders
        .into_iter()
        .map(|b| b.finish(device))
        .collect::<Result<Vec<_>>>()?;
    DataFrame::new(columns)
}

/// [`read_csv`] on `threads` threads: the file is read into memory, split at line ends into
/// one chunk per thread, each chunk parsed by its own arrow-csv reader, and the host columns
/// joined in order.
fn read_csv_parallel(path: &Path, options: &CsvOptions, threads: usize) -> Result<DataFrame> {
    use rayon::prelude::*;
    let device = options.device.unwrap_or_else(gpukit::default_device);
    let data = std::fs::read(path).map_err(io_err)?;
    let schema = resolve_schema(&mut std::io::Cursor::new(&data[..]), options)?;
    let body = if options.has_header {
        data.iter()
            .position(|b| *b == b'\n')
            .map_or(data.len(), |i| i + 1)
    } else {
        0
    };
    // Chunk bounds: every chunk but the first starts just after a line end.
    let mut bounds = vec![body];
    for k in 1..threads {
        let guess = body + (data.len() - body) * k / threads;
        let at = data[guess.max(*bounds.last().unwrap_or(&body))..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(data.len(), |i| {
                guess.max(*bounds.last().unwrap_or(&body)) + i + 1
            });
        bounds.push(at);
    }
    bounds.push(data.len());
    bounds.dedup();
    let format = options.format().with_header(false);
    let header_lines = usize::from(options.has_header);
    let parts = bounds
        .par_windows(2)
        .map(|w| {
            let lines_before = || header_lines + count_lines(&data[body..w[0]]);
            parse(&data[w[0]..w[1]], &schema, format.clone()).map_err(|e| match e {
                FrameError::Input(m) => FrameError::Input(shift_lines(&m, lines_before())),
                other => other,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    drop(data);
    let mut parts = parts.into_iter();
    let mut builders = match parts.next() {
        Some(b) => b,
        None => parse(&b""[..], &schema, format)?,
    };
    for part in parts {
        for (b, p) in builders.iter_mut().zip(part) {
            b.extend(p)?;
        }
    }
    finish(builders, &device)
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// An arrow-csv message about `line N` of a chunk, renumbered to the line of the file.
fn shift_lines(msg: &str, lines_before: usize) -> String {
    let Some(at) = msg.find("line ").map(|i| i + "line ".len()) else {
        return msg.to_string();
    };
    let digits: String = msg[at..].chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<usize>() {
        Ok(n) => format!(
            "{}{}{}",
            &msg[..at],
            n + lines_before,
            &msg[at + digits.len()..]
        ),
        Err(_) => msg.to_string(),
    }
}

/// Writes `frame` as CSV with a header row to the file at `path` (created or truncated).
pub fn write_csv(frame: &DataFrame, path: impl AsRef<Path>, delimiter: u8) -> Result<()> {
    let path = path.as_ref();
    let file = File::create(path)
        .map_err(|e| FrameError::Input(format!("cannot create {}: {e}", path.display())))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    write_csv_to(frame, &mut w, delimiter)?;
    w.flush().map_err(io_err)
}

/// Writes `frame` as CSV with a header row to `writer`, copying at most about a million rows at
/// a time to the host. Nulls are empty fields; dates are `YYYY-MM-DD`, timestamps RFC 3339
/// without a zone. An empty string is an empty field too (arrow-csv's writer does not quote
/// it), so readers (this crate's and Polars') read it back as null.
pub fn write_csv_to<W: Write>(frame: &DataFrame, writer: W, delimiter: u8) -> Result<()> {
    let mut w = WriterBuilder::new()
        .with_header(true)
        .with_delimiter(delimiter)
        .build(writer);
    let height = frame.height();
    let mut start = 0;
    loop {
        let len = WRITE_CHUNK_ROWS.min(height - start);
        let chunk = if start == 0 && len == height {
            frame.to_record_batch()?
        } else {
            frame.slice(start as i64, len)?.to_record_batch()?
        };
        w.write(&chunk)
            .map_err(|e| FrameError::Input(format!("writing CSV: {e}")))?;
        start += len;
        if start >= height {
            return Ok(());
        }
    }
}

/// The Arrow type arrow-csv parses a column of `t` as (strings per batch as `Utf8`; the
/// builder widens them).
fn reader_type(t: FrameDType) -> DataType {
    match t {
        FrameDType::Utf8 => DataType::Utf8,
        t => arrow_data_type(t),
    }
}

fn io_err(e: std::io::Error) -> FrameError {
    FrameError::Input(format!("reading CSV: {e}"))
}

/// arrow-csv's error as a [`FrameError::Input`], with the column's name added where the
/// message gives its index ("for column 2" → "for column 2 (`bytes`)"). arrow-csv numbers the
/// lines of value errors (`ParseError`) from 0 but those of record errors (`CsvError`: field
/// counts, UTF-8) from 1; value errors get 1 added so that both are the file's line numbers.
fn csv_error(e: ArrowError, names: &[String]) -> FrameError {
    let msg = match e {
        ArrowError::ParseError(m) => shift_lines(&m, 1),
        ArrowError::CsvError(m) => m,
        ArrowError::ExternalError(inner) => inner.to_string(),
        other => other.to_string(),
    };
    let named = name_column_index(&msg, names).unwrap_or(msg);
    FrameError::Input(format!("malformed CSV: {named}"))
}

fn name_column_index(msg: &str, names: &[String]) -> Option<String> {
    let at = msg.find("column ")? + "column ".len();
    let digits: String = msg[at..].chars().take_while(char::is_ascii_digit).collect();
    let name = names.get(digits.parse::<usize>().ok()?)?;
    let end = at + digits.len();
    Some(format!("{} (`{name}`){}", &msg[..end], &msg[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::Column;
    use crate::dtype::TimeUnit;
    use std::io::Cursor;

    fn cpu() -> CsvOptions {
        CsvOptions::new().with_device(&Device::Cpu)
    }

    fn read(text: &str, o: &CsvOptions) -> Result<DataFrame> {
        read_csv_from(Cursor::new(text.as_bytes().to_vec()), o)
    }

    fn strings(f: &DataFrame, name: &str) -> Vec<Option<String>> {
        let c = f.column(name).unwrap();
        let crate::ColumnData::Utf8(s) = c.data() else {
            panic!("{name} is not str")
        };
        let valid = c.validity().map(|b| b.to_bools().unwrap());
        s.to_strings()
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(i, v)| valid.as_ref().is_none_or(|b| b[i]).then_some(v))
            .collect()
    }

    #[test]
    fn types_are_inferred_and_empty_fields_are_nulls() {
        let f = read(
            "name,n,x,ok,day\nZürich,1,1.5,true,2024-01-31\n,2,,false,\n日本語,,3,,2000-02-29\n",
            &cpu(),
        )
        .unwrap();
        use FrameDType::*;
        assert_eq!(f.shape(), (3, 5));
        assert_eq!(f.dtypes(), [Utf8, Int64, Float64, Bool, Date]);
        assert_eq!(
            strings(&f, "name"),
            [Some("Zürich".into()), None, Some("日本語".into())]
        );
        let n = f.column("n").unwrap();
        assert_eq!(n.null_count(), 1);
        assert_eq!(n.values::<i64>().unwrap().to_vec().unwrap()[..2], [1, 2]);
        assert_eq!(
            f.column("day")
                .unwrap()
                .values::<i32>()
                .unwrap()
                .to_vec()
                .unwrap()[0],
            19753
        );
    }

    #[test]
    fn delimiter_names_and_schema() {
        let text = "en Main_Page 10 2000\nde.m Zürich 1 50\n";
        let o = cpu().with_delimiter(b' ').with_header(false);
        let f = read(text, &o).unwrap();
        assert_eq!(f.names(), ["column_1", "column_2", "column_3", "column_4"]);
        let f = read(
            text,
            &o.clone()
                .with_names(&["project", "page_title", "requests", "bytes"]),
        )
        .unwrap();
        assert_eq!(f.names(), ["project", "page_title", "requests", "bytes"]);
        let f = read(
            text,
            &o.clone().with_schema(&[
                ("project", FrameDType::Utf8),
                ("page_title", FrameDType::Utf8),
                ("requests", FrameDType::Int32),
                ("bytes", FrameDType::Float32),
            ]),
        )
        .unwrap();
        assert_eq!(
            f.dtypes(),
            [
                FrameDType::Utf8,
                FrameDType::Utf8,
                FrameDType::Int32,
                FrameDType::Float32
            ]
        );
        assert_eq!(strings(&f, "page_title")[1].as_deref(), Some("Zürich"));
        let e = read(text, &o.with_names(&["a"])).unwrap_err().to_string();
        assert!(
            e.contains("1 column names given for a CSV of 4 columns"),
            "{e}"
        );
    }

    #[test]
    fn malformed_rows_name_the_line_and_column() {
        let o = cpu().with_schema(&[("a", FrameDType::Int64), ("b", FrameDType::Int64)]);
        let e = read("a,b\n1,2\n3,x\n", &o).unwrap_err().to_string();
        assert!(
            e.contains("malformed CSV") && e.contains("line 3") && e.contains("(`b`)"),
            "{e}"
        );
        let no_header = o.clone().with_header(false);
        let e = read("1,2\n3,x\n", &no_header).unwrap_err().to_string();
        assert!(e.contains("for column 1 (`b`) at line 2"), "{e}");
        let e = read("a,b\n1,2\n3,4,5\n", &cpu()).unwrap_err().to_string();
        assert!(e.contains("malformed CSV") && e.contains("line 3"), "{e}");
        let e = read("a,b\n1,2\n3,4,5\n", &o).unwrap_err().to_string();
        assert!(
            e.contains("incorrect number of fields for line 3, expected 2"),
            "{e}"
        );
        let e = read_csv("/nonexistent/x.csv", &cpu())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open /nonexistent/x.csv"), "{e}");
    }

    #[test]
    fn empty_and_header_only_files() {
        let f = read("a,b\n", &cpu()).unwrap();
        assert_eq!(f.shape(), (0, 2));
        assert_eq!(f.dtypes(), [FrameDType::Utf8, FrameDType::Utf8]);
        let f = read("a\n7\n", &cpu()).unwrap();
        assert_eq!(f.shape(), (1, 1));
    }

    #[test]
    fn csv_round_trips_through_a_frame() {
        let cpu_dev = Device::Cpu;
        let frame = DataFrame::new(vec![
            Column::from_strs_on("s", &["a b", "Zürich, \"CH\"", "日本語"], &cpu_dev).unwrap(),
            Column::from_slice_on("i", &[1i64, -2, 3], &cpu_dev).unwrap(),
            Column::from_slice_on("f", &[0.1f64, 2.5e300, -0.0], &cpu_dev).unwrap(),
            Column::from_slice_on("b", &[true, false, true], &cpu_dev).unwrap(),
            Column::new(
                "t",
                crate::ColumnData::Timestamp(
                    gpukit::Array::from_slice_on(&[0i64, 1_700_000_000_123, -1], &cpu_dev).unwrap(),
                    TimeUnit::Millisecond,
                ),
                Some(crate::Bitmap::from_bools_on(&[true, true, false], &cpu_dev).unwrap()),
            )
            .unwrap(),
        ])
        .unwrap();
        let mut out = Vec::new();
        write_csv_to(&frame, &mut out, b';').unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with("s;i;f;b;t\n"), "{text}");
        let schema: Vec<(String, FrameDType)> = frame
            .names()
            .iter()
            .map(|s| s.to_string())
            .zip(frame.dtypes())
            .collect();
        let back = read(&text, &cpu().with_delimiter(b';').with_schema(&schema)).unwrap();
        assert_eq!(strings(&back, "s"), strings(&frame, "s"));
        for name in ["i", "f", "b", "t"] {
            let (a, b) = (frame.column(name).unwrap(), back.column(name).unwrap());
            assert_eq!(
                a.to_arrow().unwrap().to_data(),
                b.to_arrow().unwrap().to_data(),
                "{name}"
            );
        }
        let mut again = Vec::new();
        write_csv_to(&back, &mut again, b';').unwrap();
        assert_eq!(again, out);
        // Inferred types read the same file back too.
        let inferred = read(&text, &cpu().with_delimiter(b';')).unwrap();
        assert_eq!(inferred.dtypes()[..4], frame.dtypes()[..4]);
    }

    #[test]
    fn parallel_reads_equal_the_sequential_read() {
        let dir = std::env::temp_dir().join(format!("gpukit-frame-par-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pv.txt");
        crate::datasets::pageviews::write_pageviews(&path, 5000, 11).unwrap();
        let o = cpu().with_delimiter(b' ').with_header(false).with_names(&[
            "project",
            "page_title",
            "requests",
            "bytes",
        ]);
        let one = read_csv(&path, &o).unwrap();
        for threads in [2, 3, 7, 0] {
            let many = read_csv(&path, &o.clone().with_threads(threads)).unwrap();
            assert_eq!(
                many.to_record_batch().unwrap(),
                one.to_record_batch().unwrap(),
                "{threads} threads"
            );
        }
        // With a header, nulls, and an error on a line deep in the file.
        let mut text = String::from("a,b\n");
        for i in 0..1000 {
            text += &if i % 3 == 0 {
                format!("{i},\n")
            } else {
                format!("{i},x{i}\n")
            };
        }
        let csv = dir.join("h.csv");
        std::fs::write(&csv, &text).unwrap();
        let seq = read_csv(&csv, &cpu()).unwrap();
        let par = read_csv(&csv, &cpu().with_threads(4)).unwrap();
        assert_eq!(
            par.to_record_batch().unwrap(),
            seq.to_record_batch().unwrap()
        );
        assert_eq!(par.column("b").unwrap().null_count(), 334);
        text.insert_str(text.len() - 4, ",extra");
        std::fs::write(&csv, &text).unwrap();
        let schema = [("a", FrameDType::Int64), ("b", FrameDType::Utf8)];
        let e1 = read_csv(&csv, &cpu().with_schema(&schema))
            .unwrap_err()
            .to_string();
        let e4 = read_csv(&csv, &cpu().with_schema(&schema).with_threads(4))
            .unwrap_err()
            .to_string();
        assert!(e1.contains("line 1001"), "{e1}");
        assert!(e4.contains("line 1001"), "{e4}");
        // A value error deep in the file: the same line number on one thread and on four.
        let bad = text
            .replace(",extra", "")
            .replacen("601,x601", "601,x601\nnot_a_number,y", 1);
        std::fs::write(&csv, &bad).unwrap();
        let e1 = read_csv(&csv, &cpu().with_schema(&schema))
            .unwrap_err()
            .to_string();
        let e4 = read_csv(&csv, &cpu().with_schema(&schema).with_threads(4))
            .unwrap_err()
            .to_string();
        assert!(e1.contains("column 0 (`a`) at line 604"), "{e1}");
        assert!(e4.contains("column 0 (`a`) at line 604"), "{e4}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_are_read_and_written() {
        let dir = std::env::temp_dir().join(format!("gpukit-frame-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.csv");
        let f = DataFrame::new(vec![
            Column::from_slice_on("x", &[1i64, 2], &Device::Cpu).unwrap()
        ])
        .unwrap();
        write_csv(&f, &path, b',').unwrap();
        let back = read_csv(&path, &cpu()).unwrap();
        assert_eq!(
            back.column("x")
                .unwrap()
                .values::<i64>()
                .unwrap()
                .to_vec()
                .unwrap(),
            [1, 2]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
