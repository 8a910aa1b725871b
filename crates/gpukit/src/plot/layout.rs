//! The page layout every chart shares: font sizes, margins and colours, the title, the room
//! the axes' labels take, the mesh's style, and x-axis labels that fit (fewer ticks, or
//! upright category names).

use super::axis::Axis;
use super::font::{text, text_size};
use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Font size of tick labels (plotters units: about 1.24 × the CSS px size).
pub(crate) const TICK_FONT: f64 = 15.0;
/// Font size of axis labels and the legend.
pub(crate) const LABEL_FONT: f64 = 16.5;
/// Font size of the title.
pub(crate) const TITLE_FONT: f64 = 20.0;
/// Length of a tick mark in pixels (labels sit twice as far from the axis).
pub(crate) const TICK_LEN: i32 = 5;
/// Outer margin of the page in pixels.
pub(crate) const MARGIN: u32 = 10;

/// Colour of the axis lines and tick marks.
pub(crate) const AXIS: RGBColor = RGBColor(90, 90, 90);
/// Colour of the major grid.
const GRID: RGBColor = RGBColor(225, 225, 225);
/// Colour of the minor grid (log axes).
const MINOR_GRID: RGBColor = RGBColor(242, 242, 242);

/// Turns a plotters drawing error into gpukit's.
pub(crate) fn drawing_error<E: std::error::Error + Send + Sync>(
    e: plotters::drawing::DrawingAreaErrorKind<E>,
) -> Error {
    Error::Other(format!("cannot draw the chart: {e}"))
}

/// The pixels a title takes above the plot (a small gap when there is none).
pub(crate) fn title_height(title: Option<&str>) -> u32 {
    title.map_or(6, |t| text_size(t, &text(TITLE_FONT)).1 + 12)
}

/// Draws the title centred at `y` pixels from the top; returns where the plot may start.
pub(crate) fn draw_title<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: Option<&str>,
    y: u32,
) -> Result<u32>
where
    DB::ErrorType: 'static,
{
    if let Some(title) = title {
        let (w, _) = root.dim_in_pixel();
        root.draw(&Text::new(
            title.to_string(),
            ((w / 2) as i32, y as i32),
            text(TITLE_FONT).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(drawing_error)?;
    }
    Ok(y + title_height(title))
}

/// The height of a line of tick labels in pixels.
pub(crate) fn tick_height() -> u32 {
    text_size("0", &text(TICK_FONT)).1
}

/// The pixels between the plot and the page's bottom edge for an x axis whose tick labels
/// reach `label_extent` pixels down (see [`tick_height`]) and an optional axis label.
pub(crate) fn x_label_area(xlabel: Option<&str>, label_extent: u32) -> u32 {
    let desc = xlabel.map_or(0, |l| text_size(l, &text(LABEL_FONT)).1 + 8);
    (TICK_LEN * 2) as u32 + label_extent + 4 + desc
}

/// The pixels left of the plot for a y axis with these tick labels and an optional axis label.
pub(crate) fn y_label_area(axis: &Axis, ylabel: Option<&str>) -> u32 {
    let tick = text(TICK_FONT);
    let widest = axis
        .labels
        .iter()
        .map(|l| text_size(l, &tick).0)
        .max()
        .unwrap_or(0);
    let desc = ylabel.map_or(0, |l| text_size(l, &text(LABEL_FONT)).1 + 10);
    (TICK_LEN * 2) as u32 + widest + 6 + desc
}

/// Styles a mesh the same way for every chart: tick labels, axis labels, grid and axis colours.
pub(crate) fn style_mesh<'a, 'b, DB: DrawingBackend>(
    mesh: &mut plotters::chart::MeshStyle<'a, 'b, Axis, Axis, DB>,
    xlabel: Option<&str>,
    ylabel: Option<&str>,
) {
    mesh.label_style(text(TICK_FONT))
        .axis_desc_style(text(LABEL_FONT))
        .bold_line_style(GRID.stroke_width(1))
        .light_line_style(MINOR_GRID.stroke_width(1))
        .axis_style(AXIS.stroke_width(1))
        .set_all_tick_mark_size(TICK_LEN);
    if let Some(l) = xlabel {
        mesh.x_desc(l);
    }
    if let Some(l) = ylabel {
        mesh.y_desc(l);
    }
}

/// An axis over `lo..hi` with at most `max_ticks` labels, linear or log.
pub(crate) fn numeric_axis(lo: f64, hi: f64, log: bool, max_ticks: usize) -> Axis {
    if log {
        Axis::log(lo, hi, max_ticks)
    } else {
        Axis::linear(lo, hi, max_ticks)
    }
}

/// An x axis whose tick labels fit side by side in `plot_w` pixels.
pub(crate) fn x_axis(lo: f64, hi: f64, log: bool, plot_w: u32) -> Axis {
    let tick = text(TICK_FONT);
    let mut max_ticks = (plot_w / 80).clamp(2, 12) as usize;
    loop {
        let axis = numeric_axis(lo, hi, log, max_ticks);
        let widest = axis
            .labels
            .iter()
            .map(|l| text_size(l, &tick).0)
            .max()
            .unwrap_or(0);
        let spacing = plot_w as f64 / axis.ticks.len().max(1) as f64;
        if max_ticks <= 2 || widest as f64 + 14.0 <= spacing {
            return axis;
        }
        max_ticks -= 1;
    }
}

/// A bar chart's category names under the axis.
pub(crate) struct Categories {
    /// The axis: a tick per bar, a label per tick.
    pub axis: Axis,
    /// Whether the names stand upright (read from bottom to top) because side by side they
    /// would overlap.
    pub upright: bool,
    /// How far the names reach below the tick marks, in pixels.
    pub extent: u32,
}

/// Names side by side when they fit under their bars; else upright, shortened to at most
/// `max_extent` pixels, and only every k-th when even upright ones would overlap.
pub(crate) fn categories(names: &[String], plot_w: u32, max_extent: u32) -> Categories {
    let tick = text(TICK_FONT);
    let slot = plot_w as f64 / names.len().max(1) as f64;
    let widest = names
        .iter()
        .map(|l| text_size(l, &tick).0)
        .max()
        .unwrap_or(0);
    let line_h = tick_height();
    if widest as f64 + 8.0 <= slot {
        return Categories {
            axis: Axis::categories(names, 1),
            upright: false,
            extent: line_h,
        };
    }
    let every = ((line_h as f64 + 3.0) / slot).ceil().max(1.0) as usize;
    let shortened: Vec<String> = names
        .iter()
        .map(|n| shorten(n, max_extent as f64, &tick))
        .collect();
    let extent = shortened
        .iter()
        .map(|l| text_size(l, &tick).0)
        .max()
        .unwrap_or(0);
    Categories {
        axis: Axis::categories(&shortened, every),
        upright: true,
        extent,
    }
}

/// `name` cut (with an ellipsis) to at most `room` pixels.
fn shorten(name: &str, room: f64, style: &TextStyle<'_>) -> String {
    if text_size(name, style).0 as f64 <= room {
        return name.to_string();
    }
    let chars: Vec<char> = name.chars().collect();
    for keep in (1..chars.len()).rev() {
        let s: String = chars[..keep].iter().collect::<String>() + "…";
        if text_size(&s, style).0 as f64 <= room {
            return s;
        }
    }
    "…".to_string()
}
