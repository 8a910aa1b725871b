//! Showing a frame: a Polars-like text table ([`std::fmt::Display`], [`DataFrame::to_text`])
//! with a shape line and a row of column types, and an HTML table for notebooks
//! ([`DataFrame::to_html`], [`DataFrame::evcxr_display`]).
//!
//! Why this file is long: the text and HTML renderers share one row/column selection, and
//! their tests (every type, elision, escaping, wide characters) sit beside them.
//!
//! A frame taller than [`DisplayOptions::max_rows`] shows its first and last
//! [`DisplayOptions::edge_rows`] rows around a `…` row; a frame wider than
//! [`DisplayOptions::max_cols`] elides its middle columns the same way. Nulls show as `null`,
//! strings are quoted and cut to [`DisplayOptions::max_str_chars`] characters, and HTML is
//! escaped.
//!
//! Where it runs: the shown rows are sliced on the device ([`DataFrame::slice`]) and only they
//! are copied to the host and formatted there, so showing a frame of a million rows copies ten.
//! Column widths count terminal cells: East Asian wide characters (CJK, Hangul, full-width
//! forms) take two, combining marks none (a short table of ranges, not full Unicode data).

use std::fmt;
use std::sync::RwLock;

use crate::column::{Column, ColumnData};
use crate::dtype::TimeUnit;
use crate::error::Result;
use crate::frame::DataFrame;

/// How frames are shown. Change the defaults for every frame with
/// [`set_display_options`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisplayOptions {
    /// Frames of at most this many rows are shown whole (10).
    pub max_rows: usize,
    /// Rows shown at each end of a taller frame (5).
    pub edge_rows: usize,
    /// Frames of at most this many columns are shown whole (16); wider ones show the first and
    /// last half of this many.
    pub max_cols: usize,
    /// Characters of a string shown before it is cut with `…` (32).
    pub max_str_chars: usize,
}

impl DisplayOptions {
    /// The defaults: 10 rows (5 at each end when taller), 16 columns, 32 characters a string.
    pub const DEFAULT: DisplayOptions = DisplayOptions {
        max_rows: 10,
        edge_rows: 5,
        max_cols: 16,
        max_str_chars: 32,
    };
}

impl Default for DisplayOptions {
    fn default() -> Self {
        DisplayOptions::DEFAULT
    }
}

static OPTIONS: RwLock<DisplayOptions> = RwLock::new(DisplayOptions::DEFAULT);

/// Sets how every frame is shown from now on (in a notebook: the rest of the session).
pub fn set_display_options(options: DisplayOptions) {
    *OPTIONS.write().unwrap_or_else(|e| e.into_inner()) = options;
}

/// How frames are shown now.
pub fn display_options() -> DisplayOptions {
    *OPTIONS.read().unwrap_or_else(|e| e.into_inner())
}

/// The cells to show, on the host: header, dtypes, and rows of text (`None` marks the `…` row
/// or column).
struct Shown {
    names: Vec<Option<String>>,
    dtypes: Vec<Option<String>>,
    rows: Vec<Option<Vec<Option<String>>>>,
    shape: (usize, usize),
    device: String,
}

/// Indices of `n` items to show when at most `max` fit: all, or the first and last `edge`.
fn shown_range(n: usize, max: usize, edge: usize) -> (usize, usize, bool) {
    if n <= max {
        (n, 0, false)
    } else {
        (edge.min(n), edge.min(n), true)
    }
}

impl DataFrame {
    fn shown(&self, o: &DisplayOptions) -> Result<Shown> {
        let (h, w) = self.shape();
        let (top, bottom, rows_cut) = shown_range(h, o.max_rows, o.edge_rows);
        let (left, right, cols_cut) = shown_range(w, o.max_cols, o.max_cols / 2);
        let mut cols: Vec<Option<&Column>> = self.columns()[..left].iter().map(Some).collect();
        if cols_cut {
            cols.push(None);
            cols.extend(self.columns()[w - right..].iter().map(Some));
        }
        // Cells per shown column, top rows then bottom rows.
        let mut cells: Vec<Option<Vec<String>>> = Vec::with_capacity(cols.len());
        for c in &cols {
            cells.push(match c {
                None => None,
                Some(c) => {
                    let mut v = column_cells(&c.slice(0, top)?, o)?;
                    if bottom > 0 {
                        v.extend(column_cells(&c.slice(h - bottom, bottom)?, o)?);
                    }
                    Some(v)
                }
            });
        }
        let row = |r: usize| -> Vec<Option<String>> {
            cells
                .iter()
                .map(|c| c.as_ref().map(|v| v[r].clone()))
                .collect()
        };
        let mut rows: Vec<Option<Vec<Option<String>>>> = (0..top).map(|r| Some(row(r))).collect();
        if rows_cut {
            rows.push(None);
            rows.extend((top..top + bottom).map(|r| Some(row(r))));
        }
        Ok(Shown {
            names: cols
                .iter()
                .map(|c| c.map(|c| c.name().to_string()))
                .collect(),
            dtypes: cols
                .iter()
                .map(|c| c.map(|c| c.dtype().to_string()))
                .collect(),
            rows,
            shape: (h, w),
            device: self
                .device()
                .map_or_else(|| "no device".to_string(), |d| d.to_string()),
        })
    }

    /// The text table with the current [`display_options`].
    pub fn to_text(&self) -> Result<String> {
        self.to_text_with(&display_options())
    }

    /// The text table with `options`: a shape line, then a box with names, types and rows.
    pub fn to_text_with(&self, options: &DisplayOptions) -> Result<String> {
        Ok(render_text(&self.shown(options)?))
    }

    /// The HTML table with the current [`display_options`].
    pub fn to_html(&self) -> Result<String> {
        self.to_html_with(&display_options())
    }

    /// The HTML table with `options`: a shape line, a header row of names, a row of types and
    /// the rows, every cell escaped.
    pub fn to_html_with(&self, options: &DisplayOptions) -> Result<String> {
        Ok(render_html(&self.shown(options)?))
    }

    /// Shows the frame in a notebook through evcxr's display protocol: `text/plain` (the text
    /// table) and `text/html` (the HTML table). An error reading the device is shown instead.
    pub fn evcxr_display(&self) {
        let (text, html) = match (self.to_text(), self.to_html()) {
            (Ok(t), Ok(h)) => (t, h),
            (Err(e), _) | (_, Err(e)) => {
                let msg = format!("DataFrame shape={:?} (unreadable: {e})", self.shape());
                let html = format!("<pre>{}</pre>", escape_html(&msg));
                (msg, html)
            }
        };
        println!("EVCXR_BEGIN_CONTENT text/plain\n{text}\nEVCXR_END_CONTENT");
        println!("EVCXR_BEGIN_CONTENT text/html\n{html}\nEVCXR_END_CONTENT");
    }
}

impl fmt::Display for DataFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_text() {
            Ok(t) => f.write_str(&t),
            Err(e) => write!(f, "DataFrame shape={:?} (unreadable: {e})", self.shape()),
        }
    }
}

/// Every row of a (small) column as display text, copied to the host.
fn column_cells(c: &Column, o: &DisplayOptions) -> Result<Vec<String>> {
    let valid = match c.validity() {
        Some(b) => b.to_bools()?,
        None => vec![true; c.len()],
    };
    fn fmt_all<T>(v: Vec<T>, f: impl Fn(T) -> String) -> Vec<String> {
        v.into_iter().map(f).collect()
    }
    let text = match c.data() {
        ColumnData::Bool(a) => fmt_all(a.to_vec()?, |x| x.to_string()),
        ColumnData::Int32(a) => fmt_all(a.to_vec()?, |x| x.to_string()),
        ColumnData::Int64(a) => fmt_all(a.to_vec()?, |x| x.to_string()),
        ColumnData::UInt32(a) => fmt_all(a.to_vec()?, |x| x.to_string()),
        ColumnData::UInt64(a) => fmt_all(a.to_vec()?, |x| x.to_string()),
        ColumnData::Float32(a) => fmt_all(a.to_vec()?, format_float),
        ColumnData::Float64(a) => fmt_all(a.to_vec()?, format_float),
        ColumnData::Date(a) => fmt_all(a.to_vec()?, |d| format_date(d as i64)),
        ColumnData::Timestamp(a, u) => fmt_all(a.to_vec()?, |t| format_timestamp(t, *u)),
        ColumnData::Utf8(s) => fmt_all(s.to_strings()?, |s| quote(&s, o.max_str_chars)),
    };
    Ok(text
        .into_iter()
        .zip(valid)
        .map(|(t, ok)| if ok { t } else { "null".to_string() })
        .collect())
}

/// A float as Polars shows it: `2.0` for whole numbers, the shortest digits that round-trip
/// otherwise, scientific for very large or small magnitudes.
fn format_float<T: Copy + Into<f64> + fmt::Display + fmt::LowerExp>(v: T) -> String {
    let x: f64 = v.into();
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e15).contains(&a) {
        format!("{v:e}")
    } else if x.fract() == 0.0 {
        format!("{v:.1}")
    } else {
        v.to_string()
    }
}

/// A string in double quotes, cut to `max` characters with `…`.
fn quote(s: &str, max: usize) -> String {
    let mut chars = s.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("\"{head}…")
    } else {
        format!("\"{head}\"")
    }
}

/// The civil date of `days` since 1970-01-01 (proleptic Gregorian), as `(year, month, day)`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD HH:MM:SS`, with the fraction in the unit's digits when it is not zero.
fn format_timestamp(t: i64, unit: TimeUnit) -> String {
    let (per_sec, digits) = match unit {
        TimeUnit::Second => (1i64, 0usize),
        TimeUnit::Millisecond => (1_000, 3),
        TimeUnit::Microsecond => (1_000_000, 6),
        TimeUnit::Nanosecond => (1_000_000_000, 9),
    };
    let secs = t.div_euclid(per_sec);
    let frac = t.rem_euclid(per_sec);
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let mut s = format!(
        "{} {:02}:{:02}:{:02}",
        format_date(days),
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if frac != 0 {
        s.push_str(&format!(".{frac:0digits$}"));
    }
    s
}

/// Terminal cells `c` takes: 0 for combining marks and zero-width characters, 2 for East Asian
/// wide characters, else 1.
fn char_width(c: char) -> usize {
    let u = c as u32;
    const ZERO: &[(u32, u32)] = &[
        (0x0300, 0x036F),
        (0x0483, 0x0489),
        (0x0591, 0x05BD),
        (0x0610, 0x061A),
        (0x064B, 0x065F),
        (0x0900, 0x0902),
        (0x093A, 0x093C),
        (0x0941, 0x0948),
        (0x094D, 0x094D),
        (0x0951, 0x0957),
        (0x0962, 0x0963),
        (0x200B, 0x200F),
        (0x20D0, 0x20FF),
        (0xFE00, 0xFE0F),
        (0xFE20, 0xFE2F),
    ];
    const WIDE: &[(u32, u32)] = &[
        (0x1100, 0x115F),
        (0x2E80, 0x303E),
        (0x3041, 0x33FF),
        (0x3400, 0x4DBF),
        (0x4E00, 0x9FFF),
        (0xA000, 0xA4CF),
        (0xAC00, 0xD7A3),
        (0xF900, 0xFAFF),
        (0xFE30, 0xFE4F),
        (0xFF00, 0xFF60),
        (0xFFE0, 0xFFE6),
        (0x1F300, 0x1F64F),
        (0x1F900, 0x1F9FF),
        (0x20000, 0x3FFFD),
    ];
    let within = |t: &[(u32, u32)]| t.iter().any(|(a, b)| (*a..=*b).contains(&u));
    if within(ZERO) {
        0
    } else if within(WIDE) {
        2
    } else {
        1
    }
}

/// Terminal cells `s` takes.
fn text_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn render_text(s: &Shown) -> String {
    let dots = "…".to_string();
    let cell = |c: &Option<String>| c.clone().unwrap_or_else(|| dots.clone());
    let ncols = s.names.len();
    let mut widths: Vec<usize> = (0..ncols)
        .map(|j| {
            let mut w = text_width(&cell(&s.names[j])).max(3);
            w = w.max(text_width(&cell(&s.dtypes[j])));
            for r in s.rows.iter().flatten() {
                w = w.max(text_width(&cell(&r[j])));
            }
            w
        })
        .collect();
    if widths.is_empty() {
        widths.push(0);
    }
    let line = |l: &str, m: &str, r: &str, fill: &str| -> String {
        let parts: Vec<String> = widths.iter().map(|w| fill.repeat(w + 2)).collect();
        if ncols == 0 {
            return format!("{l}{r}\n");
        }
        format!("{l}{}{r}\n", parts.join(m))
    };
    let row = |cells: Vec<String>| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c}{} ", " ".repeat(w - text_width(c))))
            .collect();
        format!("│{}│\n", parts.join("┆"))
    };
    let mut out = format!("shape: ({}, {}) on {}\n", s.shape.0, s.shape.1, s.device);
    out += &line("┌", "┬", "┐", "─");
    if ncols > 0 {
        out += &row(s.names.iter().map(cell).collect());
        out += &row(vec!["---".to_string(); ncols]);
        out += &row(s.dtypes.iter().map(cell).collect());
    }
    out += &line("╞", "╪", "╡", "═");
    for r in &s.rows {
        out += &row(match r {
            Some(r) => r.iter().map(cell).collect(),
            None => vec![dots.clone(); ncols],
        });
    }
    out += &line("└", "┴", "┘", "─");
    out.pop();
    out
}

/// `s` with `& < > " '` escaped for HTML.
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn render_html(s: &Shown) -> String {
    let cell = |c: &Option<String>| c.as_deref().map_or("…".to_string(), escape_html);
    let mut out = String::from("<div class=\"gpukit-frame\">");
    out += &format!(
        "<small>shape: ({}, {}) on {}</small>",
        s.shape.0,
        s.shape.1,
        escape_html(&s.device)
    );
    out += "<table border=\"1\" class=\"dataframe\"><thead><tr>";
    for n in &s.names {
        out += &format!("<th>{}</th>", cell(n));
    }
    out += "</tr><tr>";
    for t in &s.dtypes {
        out += &format!("<td><i>{}</i></td>", cell(t));
    }
    out += "</tr></thead><tbody>";
    for r in &s.rows {
        out += "<tr>";
        match r {
            Some(r) => {
                for c in r {
                    out += &format!("<td>{}</td>", cell(c));
                }
            }
            None => out += &"<td>…</td>".repeat(s.names.len()),
        }
        out += "</tr>";
    }
    out += "</tbody></table></div>";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bitmap, FrameDType};
    use gpukit::{Array, Device};

    fn frame(n: usize) -> DataFrame {
        let cpu = Device::Cpu;
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        DataFrame::new(vec![
            Column::from_strs_on("project", &names, &cpu).unwrap(),
            Column::new(
                "requests",
                ColumnData::Int64(Array::arange_on(0i64, n as i64, &cpu).unwrap()),
                Some(
                    Bitmap::from_bools_on(&(0..n).map(|i| i % 3 != 1).collect::<Vec<_>>(), &cpu)
                        .unwrap(),
                ),
            )
            .unwrap(),
        ])
        .unwrap()
    }

    #[test]
    fn small_frames_show_every_row_in_a_polars_box() {
        let t = frame(3).to_text().unwrap();
        let want = "shape: (3, 2) on cpu
┌─────────┬──────────┐
│ project ┆ requests │
│ ---     ┆ ---      │
│ str     ┆ i64      │
╞═════════╪══════════╡
│ \"p0\"    ┆ 0        │
│ \"p1\"    ┆ null     │
│ \"p2\"    ┆ 2        │
└─────────┴──────────┘";
        assert_eq!(t, want);
        assert_eq!(format!("{}", frame(3)), want);
    }

    #[test]
    fn tall_frames_elide_the_middle_rows() {
        let t = frame(1000).to_text().unwrap();
        assert!(t.starts_with("shape: (1000, 2) on cpu"), "{t}");
        assert!(
            t.contains("\"p4\"") && t.contains("\"p995\"") && !t.contains("\"p5\""),
            "{t}"
        );
        assert!(t.contains("│ …       ┆ …        │"), "{t}");
        assert_eq!(t.lines().count(), 6 + 11 + 1);
        let o = DisplayOptions {
            max_rows: 4,
            edge_rows: 2,
            ..DisplayOptions::DEFAULT
        };
        let t = frame(5).to_text_with(&o).unwrap();
        assert!(
            t.contains("\"p1\"") && t.contains("\"p3\"") && !t.contains("\"p2\""),
            "{t}"
        );
        let t = frame(10).to_text().unwrap();
        assert!(!t.contains('…'), "{t}");
    }

    #[test]
    fn html_is_escaped_and_strings_are_cut() {
        let cpu = Device::Cpu;
        let long = "x".repeat(40);
        let f = DataFrame::new(vec![Column::from_strs_on(
            "<b>",
            &["a<&>\"'", long.as_str(), "日本語"],
            &cpu,
        )
        .unwrap()])
        .unwrap();
        let h = f.to_html().unwrap();
        assert!(h.contains("<th>&lt;b&gt;</th>"), "{h}");
        assert!(
            h.contains("<td>&quot;a&lt;&amp;&gt;&quot;&#39;&quot;</td>"),
            "{h}"
        );
        assert!(
            h.contains(&format!("&quot;{}…</td>", "x".repeat(32))),
            "{h}"
        );
        assert!(h.contains("日本語"), "{h}");
        let t = frame(20).to_html().unwrap();
        assert_eq!(t.matches("<tr>").count(), 2 + 11);
    }

    #[test]
    fn empty_frames_and_every_type_display() {
        assert_eq!(
            DataFrame::default().to_text().unwrap(),
            "shape: (0, 0) on no device\n┌┐\n╞╡\n└┘"
        );
        let t = frame(0).to_text().unwrap();
        assert!(
            t.starts_with("shape: (0, 2) on cpu") && t.contains("│ str     ┆ i64      │"),
            "{t}"
        );
        let cpu = Device::Cpu;
        let f = DataFrame::new(vec![
            Column::from_slice_on("f", &[1.0f64, 0.1, f64::NAN], &cpu).unwrap(),
            Column::from_slice_on("g", &[1e20f32, -2.5, 0.0], &cpu).unwrap(),
            Column::from_slice_on("b", &[true, false, true], &cpu).unwrap(),
            Column::new(
                "d",
                ColumnData::Date(Array::from_slice_on(&[0i32, 19_753, -1], &cpu).unwrap()),
                None,
            )
            .unwrap(),
            Column::new(
                "t",
                ColumnData::Timestamp(
                    Array::from_slice_on(&[0i64, 1_700_000_000_123_456, -1], &cpu).unwrap(),
                    TimeUnit::Microsecond,
                ),
                None,
            )
            .unwrap(),
        ])
        .unwrap();
        assert_eq!(f.dtypes()[4], FrameDType::Timestamp(TimeUnit::Microsecond));
        let t = f.to_text().unwrap();
        for s in [
            "1.0",
            "0.1",
            "NaN",
            "1e20",
            "-2.5",
            "0.0",
            "true",
            "1970-01-01",
            "2024-01-31",
            "1969-12-31",
            "2023-11-14 22:13:20.123456",
            "1969-12-31 23:59:59.999999",
            "datetime[μs]",
        ] {
            assert!(t.contains(s), "{s} missing in\n{t}");
        }
    }

    #[test]
    fn wide_characters_keep_the_table_aligned() {
        let cpu = Device::Cpu;
        let f = DataFrame::new(vec![
            Column::from_strs_on("s", &["東京", "ab", "서울_x", "é"], &cpu).unwrap(),
            Column::from_slice_on("n", &[1i32, 2, 3, 4], &cpu).unwrap(),
        ])
        .unwrap();
        let t = f.to_text().unwrap();
        let widths: Vec<usize> = t.lines().skip(1).map(text_width).collect();
        assert!(widths.iter().all(|w| *w == widths[0]), "{t}");
        assert_eq!(text_width("東京"), 4);
        assert_eq!(text_width("e\u{301}"), 1);
    }

    #[test]
    fn wide_frames_elide_middle_columns() {
        let cpu = Device::Cpu;
        let cols = (0..20)
            .map(|i| Column::from_slice_on(format!("c{i}"), &[i], &cpu).unwrap())
            .collect();
        let f = DataFrame::new(cols).unwrap();
        let t = f.to_text().unwrap();
        assert!(
            t.contains("c7 ") && t.contains("c12") && !t.contains("c8 ") && t.contains('…'),
            "{t}"
        );
    }
}
