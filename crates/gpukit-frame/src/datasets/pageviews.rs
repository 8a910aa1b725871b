//! Wikipedia-pageview-like logs, generated: the hourly dump's format
//! `project page_title requests bytes`, space-separated, no header, e.g.
//! `en Main_Page 2417 95314205`.
//!
//! The shape follows the real logs: a few hundred project codes made from language codes and
//! project suffixes (`en`, `en.m` for mobile, `de.d` for Wiktionary, `commons.m`, ...) with
//! Zipf-like popularity and `en` the most common; page titles drawn from a Zipf-like
//! distribution over ranks (density ∝ 1 / (rank + 100), and `Main_Page` in 2% of rows), each
//! rank's title built from a vocabulary that includes non-ASCII words (`Zürich`, `東京`,
//! `Москва`); request counts with a Pareto tail (about 60% of rows 1, a few very large; the
//! most popular titles get more); bytes about requests times a per-title page size.
//!
//! Everything is deterministic from the seed (a SplitMix64 stream, not `rand`, so the output
//! never changes with a dependency's version). Where it runs: on the host; [`write_pageviews`]
//! streams rows through a buffered writer (any number of rows in constant memory) and
//! [`pageviews_frame`] builds the columns on the host and moves them to a device in one copy
//! each.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use gpukit::{Array, Device};

use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::strings::Utf8Data;

use super::splitmix::{mix, SplitMix64};

/// Language codes, most-read first (their order sets their popularity).
const LANGUAGES: &[&str] = &[
    "en", "de", "ja", "es", "ru", "fr", "it", "zh", "pt", "pl", "fa", "nl", "ar", "tr", "id", "sv",
    "uk", "ko", "vi", "cs", "he", "fi", "hu", "no", "th", "ro", "da", "el", "ca", "bg", "sr", "hi",
    "ms", "sk", "hr", "lt", "et", "sl", "bn", "simple",
];

/// Project suffixes with their share of a language's traffic: desktop Wikipedia, mobile
/// Wikipedia, Wiktionary, Wikibooks, Wikiquote, Wikisource, Wikivoyage, Wikinews and their
/// mobile sites.
const SUFFIXES: &[(&str, f64)] = &[
    ("", 1.0),
    (".m", 0.9),
    (".d", 0.06),
    (".m.d", 0.05),
    (".b", 0.01),
    (".m.b", 0.008),
    (".q", 0.008),
    (".m.q", 0.006),
    (".s", 0.006),
    (".voy", 0.003),
    (".m.voy", 0.002),
    (".n", 0.002),
];

/// Projects outside the language × suffix grid, with their weights.
const SPECIAL: &[(&str, f64)] = &[
    ("commons.m", 0.05),
    ("commons.m.m", 0.02),
    ("www.wd", 0.04),
    ("m.wd", 0.01),
    ("meta.m", 0.005),
    ("species.m", 0.002),
    ("incubator.m", 0.001),
    ("outreach.m", 0.0005),
];

/// Words that page titles are made of.
const WORDS: &[&str] = &[
    "History",
    "of",
    "the",
    "United",
    "States",
    "List",
    "Football",
    "Club",
    "World",
    "War",
    "Album",
    "River",
    "Station",
    "University",
    "Battle",
    "Church",
    "Island",
    "National",
    "Park",
    "Film",
    "Song",
    "Party",
    "Election",
    "Season",
    "Cup",
    "Championship",
    "Railway",
    "Lake",
    "Mountain",
    "Bridge",
    "Castle",
    "King",
    "Queen",
    "Prince",
    "Saint",
    "New",
    "North",
    "South",
    "East",
    "West",
    "Republic",
    "Empire",
    "Museum",
    "Library",
    "School",
    "Airport",
    "District",
    "County",
    "City",
    "Village",
    "Language",
    "Music",
    "Band",
    "Series",
    "Episode",
    "Game",
    "Theory",
    "Science",
    "Physics",
    "Chemistry",
    "Biology",
    "Computer",
    "Rust",
    "Python",
    "Algorithm",
    "Graph",
    "Number",
    "Prime",
    "Star",
    "Planet",
    "Galaxy",
    "Moon",
    "Sun",
    "Earth",
    "Zürich",
    "München",
    "Kraków",
    "São_Paulo",
    "Ångström",
    "Café",
    "Málaga",
    "Besançon",
    "東京",
    "大阪",
    "北京",
    "서울",
    "Москва",
    "Санкт-Петербург",
    "Αθήνα",
    "القاهرة",
    "तिरुवनंतपुरम",
    "Δ",
    "Ω",
    "1",
    "2",
    "1984",
    "2024",
    "II",
    "III",
    "(film)",
    "(band)",
    "(disambiguation)",
];

/// The project codes the generator draws from (a few hundred), most common first is not
/// guaranteed; `en` has the largest weight.
pub fn project_codes() -> Vec<String> {
    projects().into_iter().map(|(p, _)| p).collect()
}

/// Every project with its unnormalised weight.
fn projects() -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for (rank, lang) in LANGUAGES.iter().enumerate() {
        let lang_weight = 1.0 / ((rank + 1) as f64).powf(1.1);
        for (suffix, w) in SUFFIXES {
            out.push((format!("{lang}{suffix}"), lang_weight * w));
        }
    }
    out.extend(SPECIAL.iter().map(|(p, w)| (p.to_string(), *w)));
    out
}

/// The share of rows that are `Main_Page` (rank 0), the most viewed page of every wiki.
const MAIN_PAGE_SHARE: f64 = 0.02;
/// Where the rank density `1 / (rank + ZIPF_SHIFT)` flattens: ranks below it are about equally
/// likely, so no single title but `Main_Page` takes a large share of rows.
const ZIPF_SHIFT: f64 = 100.0;

/// Ranks whose titles are built once and kept (the popular ones, which most rows draw).
const TITLE_CACHE: usize = 1 << 16;

/// The row stream: one draw per row from the seed's stream.
struct Generator {
    rng: SplitMix64,
    salt: u64,
    projects: Vec<String>,
    cumulative: Vec<f64>,
    titles: u64,
    ln_span: f64,
    cache: Vec<Vec<u8>>,
}

/// One generated row; the title is in the generator's buffer.
struct Row {
    project: usize,
    requests: i64,
    bytes: i64,
}

impl Generator {
    fn new(rows: usize, seed: u64) -> Generator {
        let (projects, weights): (Vec<String>, Vec<f64>) = projects().into_iter().unzip();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        let titles = (rows / 2).clamp(1000, 10_000_000);
        let salt = mix(seed ^ 0x5EED_0F71_71E5);
        let cache = (0..TITLE_CACHE.min(titles))
            .map(|r| {
                let mut t = Vec::new();
                title_for(r as u64, salt, &mut t);
                t
            })
            .collect();
        Generator {
            rng: SplitMix64(seed),
            salt,
            projects,
            cumulative,
            titles: titles as u64,
            ln_span: ((titles as f64 + ZIPF_SHIFT) / ZIPF_SHIFT).ln(),
            cache,
        }
    }

    /// The next row, its title written into `title` (cleared first).
    fn next(&mut self, title: &mut Vec<u8>) -> Row {
        let u = self.rng.unit_nonzero();
        let project = self
            .cumulative
            .partition_point(|c| *c < u)
            .min(self.projects.len() - 1);
        // Inverse CDF of the density 1 / (x + ZIPF_SHIFT) on [0, titles).
        let rank = if self.rng.unit_nonzero() <= MAIN_PAGE_SHARE {
            0
        } else {
            let x = ZIPF_SHIFT * (self.ln_span * self.rng.unit_nonzero()).exp() - ZIPF_SHIFT;
            (1 + x as u64).min(self.titles - 1)
        };
        title.clear();
        match self.cache.get(rank as usize) {
            Some(t) => title.extend_from_slice(t),
            None => title_for(rank, self.salt, title),
        }
        // Pareto tail (alpha 1.4): P(1) ≈ 0.62; the 50 most popular titles get a boost.
        let pareto = self.rng.unit_nonzero().powf(-1.0 / 1.4).floor();
        let boost = (50.0 / (rank + 1) as f64).max(1.0);
        let requests = (pareto * boost).clamp(1.0, 1e12) as i64;
        let page_size = 2_000 + (mix(rank ^ self.salt) % 150_000) as i64;
        let noise = 0.8 + 0.4 * self.rng.unit_nonzero();
        let bytes = (requests as f64 * page_size as f64 * noise) as i64;
        Row {
            project,
            requests,
            bytes,
        }
    }
}

/// The title of rank `rank`: `Main_Page` for rank 0, else one to four vocabulary words joined
/// with `_`, chosen by hashing the rank.
fn title_for(rank: u64, salt: u64, out: &mut Vec<u8>) {
    if rank == 0 {
        out.extend_from_slice(b"Main_Page");
        return;
    }
    let mut h = mix(rank.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ salt);
    let words = 1 + (h % 4) as usize;
    for k in 0..words {
        h = mix(h.wrapping_add(k as u64));
        if k > 0 {
            out.push(b'_');
        }
        out.extend_from_slice(WORDS[(h % WORDS.len() as u64) as usize].as_bytes());
    }
    // A number keeps titles of different ranks apart where the words collide.
    if rank >= 1000 {
        out.push(b'_');
        out.extend_from_slice(itoa::Buffer::new().format(rank).as_bytes());
    }
}

/// Writes `rows` generated rows to the file at `path` (created or truncated).
pub fn write_pageviews(path: impl AsRef<Path>, rows: usize, seed: u64) -> Result<()> {
    let path = path.as_ref();
    let file = File::create(path)
        .map_err(|e| FrameError::Input(format!("cannot create {}: {e}", path.display())))?;
    write_pageviews_to(file, rows, seed)
        .map_err(|e| FrameError::Input(format!("writing {}: {e}", path.display())))
}

/// Streams `rows` generated rows to `writer` (buffered here; constant memory for any number of
/// rows).
pub fn write_pageviews_to<W: Write>(writer: W, rows: usize, seed: u64) -> std::io::Result<()> {
    let mut g = Generator::new(rows, seed);
    let mut w = BufWriter::with_capacity(1 << 20, writer);
    let mut title = Vec::with_capacity(128);
    let mut num = itoa::Buffer::new();
    for _ in 0..rows {
        let r = g.next(&mut title);
        w.write_all(g.projects[r.project].as_bytes())?;
        w.write_all(b" ")?;
        w.write_all(&title)?;
        w.write_all(b" ")?;
        w.write_all(num.format(r.requests).as_bytes())?;
        w.write_all(b" ")?;
        w.write_all(num.format(r.bytes).as_bytes())?;
        w.write_all(b"\n")?;
    }
    w.flush()
}

/// The same rows as [`write_pageviews`] with the same seed, as a frame on `device` with columns
/// `project` (str), `page_title` (str), `requests` (i64) and `bytes` (i64).
pub fn pageviews_frame(rows: usize, seed: u64, device: &Device) -> Result<DataFrame> {
    let mut g = Generator::new(rows, seed);
    let mut title = Vec::with_capacity(128);
    let (mut p_off, mut p_bytes) = (Vec::with_capacity(rows + 1), Vec::new());
    let (mut t_off, mut t_bytes) = (Vec::with_capacity(rows + 1), Vec::new());
    let mut requests = Vec::with_capacity(rows);
    let mut bytes = Vec::with_capacity(rows);
    p_off.push(0i64);
    t_off.push(0i64);
    for _ in 0..rows {
        let r = g.next(&mut title);
        p_bytes.extend_from_slice(g.projects[r.project].as_bytes());
        p_off.push(p_bytes.len() as i64);
        t_bytes.extend_from_slice(&title);
        t_off.push(t_bytes.len() as i64);
        requests.push(r.requests);
        bytes.push(r.bytes);
    }
    let strings = |off: Vec<i64>, b: Vec<u8>| -> Result<ColumnData> {
        let n = b.len();
        Ok(ColumnData::Utf8(Utf8Data::from_parts_unchecked(
            Array::from_vec_on(off, [rows + 1], device)?,
            Array::from_vec_on(b, [n], device)?,
        )))
    };
    DataFrame::new(vec![
        Column::new("project", strings(p_off, p_bytes)?, None)?,
        Column::new("page_title", strings(t_off, t_bytes)?, None)?,
        Column::from_array("requests", Array::from_vec_on(requests, [rows], device)?)?,
        Column::from_array("bytes", Array::from_vec_on(bytes, [rows], device)?)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::FrameDType;
    use crate::io::csv::{read_csv_from, CsvOptions};
    use std::collections::HashMap;

    fn schema() -> CsvOptions {
        CsvOptions::new()
            .with_delimiter(b' ')
            .with_header(false)
            .with_schema(&[
                ("project", FrameDType::Utf8),
                ("page_title", FrameDType::Utf8),
                ("requests", FrameDType::Int64),
                ("bytes", FrameDType::Int64),
            ])
            .with_device(&Device::Cpu)
    }

    fn strs(f: &DataFrame, name: &str) -> Vec<String> {
        let ColumnData::Utf8(s) = f.column(name).unwrap().data() else {
            panic!()
        };
        s.to_strings().unwrap()
    }

    #[test]
    fn a_generated_log_reads_back_with_the_shape_of_real_ones() {
        let rows = 50_000;
        let mut text = Vec::new();
        write_pageviews_to(&mut text, rows, 42).unwrap();
        let f = read_csv_from(std::io::Cursor::new(text.clone()), &schema()).unwrap();
        assert_eq!(f.shape(), (rows, 4));
        assert_eq!(f.column("requests").unwrap().null_count(), 0);

        let projects = strs(&f, "project");
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for p in &projects {
            *counts.entry(p).or_default() += 1;
        }
        let top = counts.iter().max_by_key(|(_, c)| **c).unwrap();
        assert_eq!(*top.0, "en", "{counts:?}");
        assert!(counts.len() > 150, "{} projects", counts.len());
        assert!(counts.contains_key("en.m") && counts.contains_key("de"));
        assert!(project_codes().len() > 300);

        let mut req = f
            .column("requests")
            .unwrap()
            .values::<i64>()
            .unwrap()
            .to_vec()
            .unwrap();
        let by = f
            .column("bytes")
            .unwrap()
            .values::<i64>()
            .unwrap()
            .to_vec()
            .unwrap();
        assert!(req.iter().zip(&by).all(|(r, b)| *r >= 1 && *b >= *r));
        req.sort_unstable();
        assert_eq!(req[rows / 2], 1, "median");
        assert!(
            *req.last().unwrap() > 1000,
            "heavy tail, max {}",
            req.last().unwrap()
        );
        let ones = req.iter().filter(|r| **r == 1).count() as f64 / rows as f64;
        assert!((0.45..0.7).contains(&ones), "share of 1s {ones}");

        let titles = strs(&f, "page_title");
        let main = titles.iter().filter(|t| *t == "Main_Page").count();
        let distinct: std::collections::HashSet<&String> = titles.iter().collect();
        assert!(main > rows / 100, "Main_Page {main}");
        assert!(
            distinct.len() > rows / 10,
            "{} distinct titles",
            distinct.len()
        );
        assert!(titles.iter().any(|t| !t.is_ascii()));
        assert!(titles.iter().all(|t| !t.contains(' ') && !t.is_empty()));

        // The frame built directly holds the same rows.
        let g = pageviews_frame(rows, 42, &Device::Cpu).unwrap();
        assert_eq!(strs(&g, "page_title"), titles);
        assert_eq!(strs(&g, "project"), projects);
        assert_eq!(
            g.column("bytes")
                .unwrap()
                .values::<i64>()
                .unwrap()
                .to_vec()
                .unwrap(),
            by
        );
    }

    #[test]
    fn seeds_decide_the_rows() {
        let gen = |seed| {
            let mut v = Vec::new();
            write_pageviews_to(&mut v, 500, seed).unwrap();
            v
        };
        assert_eq!(gen(1), gen(1));
        assert_ne!(gen(1), gen(2));
        assert_eq!(pageviews_frame(0, 1, &Device::Cpu).unwrap().shape(), (0, 4));
        let mut one = Vec::new();
        write_pageviews_to(&mut one, 1, 9).unwrap();
        assert_eq!(String::from_utf8(one).unwrap().split(' ').count(), 4);
    }

    #[test]
    fn files_are_written() {
        let path =
            std::env::temp_dir().join(format!("gpukit-pageviews-{}.txt", std::process::id()));
        write_pageviews(&path, 100, 3).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 100);
        std::fs::remove_file(&path).unwrap();
        let e = write_pageviews("/nonexistent/dir/x", 1, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot create /nonexistent/dir/x"), "{e}");
    }
}
