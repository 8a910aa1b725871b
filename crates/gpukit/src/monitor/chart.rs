//! [`MonitorChart`]: a sampler's record as two charts stacked in one picture (utilisation in
//! percent above, memory used below, on one time axis), with a text summary of every quantity.

use crate::device::memory::human_bytes;
use crate::error::{Error, Result};
use crate::nvml::{Sample, Samples};
use crate::plot::{self, Chart};
use base64::Engine as _;
use std::fmt::Write as _;
use std::path::Path;

/// Width of the picture, pixels.
pub const WIDTH: u32 = 720;
/// Height of the utilisation panel (it carries the title).
const UTIL_HEIGHT: u32 = 300;
/// Height of the memory panel (it carries the time axis label).
const MEMORY_HEIGHT: u32 = 270;

const GIB: f64 = (1u64 << 30) as f64;

/// A sampler's record drawn as stacked panels, plus a summary of all it measured.
///
/// Made by [`Samples::chart`]; shown inline in a notebook as PNG with the summary below it.
#[derive(Debug, Clone)]
pub struct MonitorChart {
    panels: Vec<Chart>,
    summary: String,
}

impl Samples {
    /// The record as a [`MonitorChart`]: GPU and memory utilisation (percent) over time above,
    /// device memory used (GiB) below; one line per quantity and GPU.
    ///
    /// An error where there is nothing to draw (no reading had a utilisation or memory value).
    pub fn chart(&self) -> Result<MonitorChart> {
        let several = self.gpus.len() > 1;
        let name = |index: u32, what: &str| match (several, what) {
            (false, _) => what.to_string(),
            (true, "GPU") => format!("GPU {index}"),
            (true, _) => format!("GPU {index} {what}"),
        };
        let mut util: Option<Chart> = None;
        let mut memory: Option<Chart> = None;
        let mut top_memory = 0.0f64;
        for g in &self.gpus {
            let mine: Vec<&Sample> = self.of_gpu(g.index).collect();
            let t: Vec<f64> = mine.iter().map(|s| s.time.as_secs_f64()).collect();
            let series = |f: &dyn Fn(&Sample) -> Option<f64>| -> Option<Vec<f64>> {
                let v: Vec<f64> = mine.iter().map(|s| f(s).unwrap_or(f64::NAN)).collect();
                v.iter().any(|x| x.is_finite()).then_some(v)
            };
            let gpu = series(&|s| s.gpu_util.map(f64::from));
            let mem = series(&|s| s.memory_util.map(f64::from));
            for (values, what) in [(gpu, "GPU"), (mem, "memory")] {
                if let Some(v) = values {
                    util = Some(add(util, &t, &v, name(g.index, what))?);
                }
            }
            if let Some(v) = series(&|s| s.memory_used.map(|b| b as f64 / GIB)) {
                top_memory = v
                    .iter()
                    .copied()
                    .filter(|x| x.is_finite())
                    .fold(top_memory, f64::max);
                let what = if g.memory_total > 0 {
                    format!("used of {}", human_bytes(g.memory_total as usize))
                } else {
                    "used".to_string()
                };
                memory = Some(add(memory, &t, &v, name(g.index, &what))?);
            }
        }
        let mut panels = Vec::new();
        let title = self.title();
        if let Some(c) = util {
            panels.push(
                c.ylim(0.0, 100.0)
                    .ylabel("utilisation %")
                    .title(title.clone())
                    .size(WIDTH, UTIL_HEIGHT),
            );
        }
        if let Some(c) = memory {
            let c = c
                .ylim(0.0, (top_memory * 1.15).max(1.0))
                .ylabel("memory used, GiB")
                .size(WIDTH, MEMORY_HEIGHT);
            panels.push(if panels.is_empty() { c.title(title) } else { c });
        }
        match panels.last_mut() {
            Some(last) => *last = last.clone().xlabel("time (s)"),
            None => {
                return Err(Error::Other(format!(
                    "nothing to chart: none of the {} readings has a utilisation or memory value",
                    self.samples.len()
                )))
            }
        }
        // One left edge for every plot, so that their time axes line up.
        let mut left = 0;
        for p in &panels {
            left = left.max(p.y_label_width()?);
        }
        Ok(MonitorChart {
            panels: panels
                .into_iter()
                .map(|p| p.min_y_label_width(left))
                .collect(),
            summary: self.to_string(),
        })
    }

    fn title(&self) -> String {
        let every = format!("every {} ms", self.interval.as_millis());
        match self.gpus.as_slice() {
            [one] => format!("GPU {}: {}, {every}", one.index, one.name),
            many => format!("{} GPUs, {every}", many.len()),
        }
    }
}

/// `chart` with one more line series, or a new line chart.
fn add(chart: Option<Chart>, t: &[f64], v: &[f64], label: String) -> Result<Chart> {
    match chart {
        None => Ok(plot::line(t, v)?.label(label)),
        Some(c) => c.line(t, v, label),
    }
}

impl MonitorChart {
    /// The panels, top first (utilisation, then memory, where each had data).
    pub fn panels(&self) -> &[Chart] {
        &self.panels
    }

    /// The summary of every quantity measured (the text shown below the picture).
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// Width and height of the picture, pixels.
    pub fn size(&self) -> (u32, u32) {
        (WIDTH, self.panels.iter().map(|p| p.height).sum())
    }

    /// The panels stacked in one PNG.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let (w, h) = self.size();
        let mut rgb = Vec::with_capacity(w as usize * h as usize * 3);
        for p in &self.panels {
            rgb.extend(p.to_rgb()?);
        }
        let img = image::RgbImage::from_raw(w, h, rgb)
            .ok_or_else(|| Error::Other("internal: monitor bitmap has the wrong size".into()))?;
        let mut png = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| Error::Other(format!("cannot encode the monitor chart as PNG: {e}")))?;
        Ok(png)
    }

    /// Writes the picture to a `.png` file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let is_png = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if !is_png {
            return Err(Error::Other(format!(
                "cannot save a monitor chart as {}: the file name must end in .png",
                path.display()
            )));
        }
        std::fs::write(path, self.to_png()?)
            .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))
    }

    /// The MIME bundle a notebook shows: the PNG (base64), HTML with the picture above the
    /// summary, and the summary as plain text. A chart that cannot be drawn is a text bundle
    /// saying why.
    pub fn bundle(&self) -> Vec<(&'static str, String)> {
        match self.to_png() {
            Ok(png) => {
                let b64 = base64::engine::general_purpose::STANDARD.encode(png);
                let (w, h) = self.size();
                let mut html = String::new();
                let _ = write!(
                    html,
                    "<img width=\"{w}\" height=\"{h}\" src=\"data:image/png;base64,{b64}\"/>\
                     <pre>{}</pre>",
                    html_escape(&self.summary)
                );
                vec![
                    ("image/png", b64),
                    ("text/html", html),
                    ("text/plain", self.summary.clone()),
                ]
            }
            Err(e) => vec![(
                "text/plain",
                format!("cannot draw the monitor chart: {e}\n{}", self.summary),
            )],
        }
    }

    /// Shows the chart inline in a notebook (evcxr's display protocol).
    pub fn evcxr_display(&self) {
        print!("{}", evcxr_content(&self.bundle()));
    }
}

/// A bundle between evcxr's content markers.
pub(crate) fn evcxr_content(bundle: &[(&str, String)]) -> String {
    bundle
        .iter()
        .map(|(mime, body)| format!("EVCXR_BEGIN_CONTENT {mime}\n{body}\nEVCXR_END_CONTENT\n"))
        .collect()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
