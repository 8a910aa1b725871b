//! [`Chart`]: what a plot function returns, its builder methods, and its outputs (SVG, PNG,
//! a file, or inline in a notebook).

use super::colormap::Colormap;
use super::data::{check_pairs, values_1d, PlotData};
use super::{draw, raster};
use crate::error::{Error, Result};
use base64::Engine as _;
use std::fmt;
use std::path::Path;

/// The size of a chart unless [`Chart::size`] says otherwise, in pixels.
pub const DEFAULT_SIZE: (u32, u32) = (640, 400);

/// Above this many points, a chart without an explicit format shows as PNG: an SVG with one
/// element per point would be slow for the notebook to carry and draw.
pub const AUTO_PNG_POINTS: usize = 20_000;

/// The smallest and largest width or height a chart may have, in pixels.
const SIZE_LIMITS: (u32, u32) = (64, 8192);

/// Where the legend goes (it appears only when some series has a label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legend {
    /// The inner corner of the plot that covers the fewest data points (the default).
    #[default]
    Best,
    /// Inside the plot, top right.
    UpperRight,
    /// Inside the plot, top left.
    UpperLeft,
    /// Inside the plot, bottom right.
    LowerRight,
    /// Inside the plot, bottom left.
    LowerLeft,
    /// No legend, even with labelled series.
    Hidden,
}

/// How a chart shows in a notebook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// SVG, or PNG for charts of more than [`AUTO_PNG_POINTS`] points (the default).
    #[default]
    Auto,
    /// Always SVG (sharp at any zoom; text in the viewer's font).
    Svg,
    /// Always PNG (the shipped font; compact for many points).
    Png,
}

/// How a series marks its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Points joined by straight lines.
    Line,
    /// A dot per point.
    Dot,
}

/// One series of a line or scatter chart.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub mark: Mark,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub label: Option<String>,
}

/// What a chart shows.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// Lines and scatter series over shared numeric axes.
    Xy(Vec<Series>),
    /// A histogram of the finite `values` in `bins` equal bins (equal in log space on a log x
    /// axis).
    Hist {
        values: Vec<f64>,
        bins: usize,
        label: Option<String>,
    },
    /// One bar per named category.
    Bar {
        names: Vec<String>,
        values: Vec<f64>,
        label: Option<String>,
    },
    /// An image: scalars through a colour map, or colours.
    Image(raster::ImageData),
}

/// A chart, built by one call of [`line`](fn@super::line), [`scatter`](super::scatter),
/// [`hist`](super::hist), [`bar`](super::bar) or [`imshow`](super::imshow) and refined with
/// builder methods.
///
/// The last expression of a notebook cell shows it inline (SVG by default, see [`Format`]).
/// [`Chart::to_svg`], [`Chart::to_png`] and [`Chart::save`] give it to other tools.
#[derive(Clone)]
pub struct Chart {
    pub(crate) kind: Kind,
    pub(crate) title: Option<String>,
    pub(crate) xlabel: Option<String>,
    pub(crate) ylabel: Option<String>,
    pub(crate) log_x: bool,
    pub(crate) log_y: bool,
    pub(crate) legend: Legend,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) format: Format,
    pub(crate) cmap: Colormap,
    pub(crate) clim: Option<(f64, f64)>,
    pub(crate) ylim: Option<(f64, f64)>,
    /// The least width of the labels left of the plot (charts stacked in one picture share
    /// the widest, so that their plots line up).
    pub(crate) min_y_area: u32,
}

impl Chart {
    pub(crate) fn new(kind: Kind) -> Chart {
        Chart {
            kind,
            title: None,
            xlabel: None,
            ylabel: None,
            log_x: false,
            log_y: false,
            legend: Legend::default(),
            width: DEFAULT_SIZE.0,
            height: DEFAULT_SIZE.1,
            format: Format::default(),
            cmap: Colormap::default(),
            clim: None,
            ylim: None,
            min_y_area: 0,
        }
    }

    /// Sets the title, shown above the plot.
    pub fn title(mut self, title: impl Into<String>) -> Chart {
        self.title = non_empty(title.into());
        self
    }

    /// Sets the label of the x axis.
    pub fn xlabel(mut self, label: impl Into<String>) -> Chart {
        self.xlabel = non_empty(label.into());
        self
    }

    /// Sets the label of the y axis.
    pub fn ylabel(mut self, label: impl Into<String>) -> Chart {
        self.ylabel = non_empty(label.into());
        self
    }

    /// Makes the x axis logarithmic: points with x ≤ 0 are left out (a histogram's bins become
    /// equal in log space). Not for bar charts or images (drawing then fails with an error).
    pub fn log_x(mut self) -> Chart {
        self.log_x = true;
        self
    }

    /// Makes the y axis logarithmic: points with y ≤ 0 are left out (bars start at the bottom of
    /// the axis). Not for images (drawing then fails with an error).
    pub fn log_y(mut self) -> Chart {
        self.log_y = true;
        self
    }

    /// Names the most recently added series (the only one of a histogram or bar chart) for the
    /// legend.
    pub fn label(mut self, label: impl Into<String>) -> Chart {
        let label = non_empty(label.into());
        match &mut self.kind {
            Kind::Xy(series) => {
                if let Some(last) = series.last_mut() {
                    last.label = label;
                }
            }
            Kind::Hist { label: l, .. } | Kind::Bar { label: l, .. } => *l = label,
            Kind::Image(_) => {}
        }
        self
    }

    /// Places the legend, or hides it with [`Legend::Hidden`]. The legend lists the labelled
    /// series and appears by itself when there is one.
    pub fn legend(mut self, legend: Legend) -> Chart {
        self.legend = legend;
        self
    }

    /// Sets the size in pixels (default 640 × 400; each side 64 to 8192).
    pub fn size(mut self, width: u32, height: u32) -> Chart {
        self.width = width;
        self.height = height;
        self
    }

    /// Shows the chart as PNG in a notebook.
    pub fn png(mut self) -> Chart {
        self.format = Format::Png;
        self
    }

    /// Shows the chart as SVG in a notebook, however many points it has.
    pub fn svg(mut self) -> Chart {
        self.format = Format::Svg;
        self
    }

    /// Sets the colour map of a scalar [`imshow`](super::imshow) (default viridis).
    pub fn cmap(mut self, cmap: Colormap) -> Chart {
        self.cmap = cmap;
        self
    }

    /// Sets the values at the two ends of an [`imshow`](super::imshow) colour map (default: the
    /// data's minimum and maximum); values beyond them take the end colours.
    pub fn clim(mut self, min: f64, max: f64) -> Chart {
        self.clim = Some((min, max));
        self
    }

    /// Sets the visible y range to `min..max` (e.g. `0..100` for percentages), so that charts
    /// of different data share one scale. Nothing is cut off: data beyond the range widens it.
    /// Not for images; on a log y axis both ends must be positive.
    pub fn ylim(mut self, min: f64, max: f64) -> Chart {
        self.ylim = Some((min, max));
        self
    }

    /// Adds a line series to a line or scatter chart.
    ///
    /// ```
    /// # fn main() -> gpukit::Result<()> {
    /// let x: Vec<f64> = (0..50).map(|i| i as f64 / 5.0).collect();
    /// let sin: Vec<f64> = x.iter().map(|v| v.sin()).collect();
    /// let cos: Vec<f64> = x.iter().map(|v| v.cos()).collect();
    /// let chart = gpukit::plot::line(&x, &sin)?.label("sin").line(&x, &cos, "cos")?;
    /// # assert!(chart.to_svg()?.contains("cos"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn line(
        self,
        x: &(impl PlotData + ?Sized),
        y: &(impl PlotData + ?Sized),
        label: impl Into<String>,
    ) -> Result<Chart> {
        self.add_series(Mark::Line, x, y, label.into())
    }

    /// Adds a scatter series to a line or scatter chart.
    pub fn scatter(
        self,
        x: &(impl PlotData + ?Sized),
        y: &(impl PlotData + ?Sized),
        label: impl Into<String>,
    ) -> Result<Chart> {
        self.add_series(Mark::Dot, x, y, label.into())
    }

    fn add_series(
        mut self,
        mark: Mark,
        x: &(impl PlotData + ?Sized),
        y: &(impl PlotData + ?Sized),
        label: String,
    ) -> Result<Chart> {
        let Kind::Xy(series) = &mut self.kind else {
            return Err(Error::Other(format!(
                "a series can be added only to a line or scatter chart; this is {}",
                self.kind_name()
            )));
        };
        series.push(xy_series(mark, x, y, non_empty(label))?);
        Ok(self)
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String> {
        self.check_size()?;
        draw::render_svg(self)
    }

    /// The width of the labels left of the plot of a line, scatter, histogram or bar chart
    /// (see [`Chart::min_y_label_width`]).
    pub(crate) fn y_label_width(&self) -> Result<u32> {
        draw::y_label_width(self)
    }

    /// Makes the labels left of the plot take at least `px` pixels, so that the plots of charts
    /// stacked in one picture line up.
    pub(crate) fn min_y_label_width(mut self, px: u32) -> Chart {
        self.min_y_area = px;
        self
    }

    /// The chart as RGB bytes, row by row (`width * height * 3`).
    pub(crate) fn to_rgb(&self) -> Result<Vec<u8>> {
        self.check_size()?;
        draw::render_rgb(self)
    }

    /// The chart as a PNG file's bytes.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let rgb = self.to_rgb()?;
        let img = image::RgbImage::from_raw(self.width, self.height, rgb)
            .ok_or_else(|| Error::Other("internal: chart bitmap has the wrong size".into()))?;
        let mut png = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| Error::Other(format!("cannot encode the chart as PNG: {e}")))?;
        Ok(png)
    }

    /// Writes the chart to a file, as SVG or PNG after the extension (`.svg`, `.png`).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let bytes = match ext.as_deref() {
            Some("svg") => self.to_svg()?.into_bytes(),
            Some("png") => self.to_png()?,
            _ => {
                return Err(Error::Other(format!(
                    "cannot save a chart as {}: the file name must end in .svg or .png",
                    path.display()
                )))
            }
        };
        std::fs::write(path, bytes)
            .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))
    }

    /// The text [`Chart::evcxr_display`] prints: the chart as `image/svg+xml` or base64
    /// `image/png` between evcxr's content markers, or the reason it cannot be drawn as
    /// `text/plain`.
    pub fn display_text(&self) -> String {
        let shown = if self.shows_as_png() {
            self.to_png().map(|png| {
                (
                    "image/png",
                    base64::engine::general_purpose::STANDARD.encode(png),
                )
            })
        } else {
            self.to_svg()
                .map(|svg| ("image/svg+xml", svg.trim_end().to_string()))
        };
        let (mime, body) = match shown {
            Ok(x) => x,
            Err(e) => ("text/plain", format!("cannot draw this chart: {e}")),
        };
        format!("EVCXR_BEGIN_CONTENT {mime}\n{body}\nEVCXR_END_CONTENT\n")
    }

    /// Shows the chart inline in a notebook (evcxr's display protocol).
    pub fn evcxr_display(&self) {
        print!("{}", self.display_text());
    }

    /// Whether the notebook gets PNG rather than SVG.
    fn shows_as_png(&self) -> bool {
        match self.format {
            Format::Png => true,
            Format::Svg => false,
            Format::Auto => self.points() > AUTO_PNG_POINTS,
        }
    }

    /// How many marks the chart draws, roughly: points, bars or bins.
    fn points(&self) -> usize {
        match &self.kind {
            Kind::Xy(series) => series.iter().map(|s| s.x.len()).sum(),
            Kind::Hist { bins, .. } => *bins,
            Kind::Bar { values, .. } => values.len(),
            Kind::Image(_) => 0,
        }
    }

    pub(crate) fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Xy(series) if series.iter().all(|s| s.mark == Mark::Dot) => "a scatter chart",
            Kind::Xy(_) => "a line chart",
            Kind::Hist { .. } => "a histogram",
            Kind::Bar { .. } => "a bar chart",
            Kind::Image(_) => "an image",
        }
    }

    fn check_size(&self) -> Result<()> {
        if let Some((min, max)) = self.ylim {
            let why = if matches!(self.kind, Kind::Image(_)) {
                Some("an image has no y scale to set")
            } else if !(min.is_finite() && max.is_finite() && min < max) {
                Some("the limits must be finite with min < max")
            } else if self.log_y && min <= 0.0 {
                Some("a log y axis needs positive limits")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(Error::Other(format!(
                    "ylim({min}, {max}) cannot be used: {why}"
                )));
            }
        }
        let (lo, hi) = SIZE_LIMITS;
        if (lo..=hi).contains(&self.width) && (lo..=hi).contains(&self.height) {
            Ok(())
        } else {
            Err(Error::Other(format!(
                "a chart of {}x{} pixels cannot be drawn: width and height must be {lo} to {hi}",
                self.width, self.height
            )))
        }
    }
}

/// A checked series from x and y data.
pub(crate) fn xy_series(
    mark: Mark,
    x: &(impl PlotData + ?Sized),
    y: &(impl PlotData + ?Sized),
    label: Option<String>,
) -> Result<Series> {
    let x = values_1d(x, "x")?;
    let y = values_1d(y, "y")?;
    check_pairs(&x, &y)?;
    Ok(Series { mark, x, y, label })
}

fn non_empty(s: String) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

impl fmt::Debug for Chart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Chart({}", self.kind_name())?;
        if let Kind::Xy(series) = &self.kind {
            write!(f, ", {} series", series.len())?;
        }
        if let Some(t) = &self.title {
            write!(f, ", {t:?}")?;
        }
        write!(f, ", {}x{})", self.width, self.height)
    }
}

impl fmt::Display for Chart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
