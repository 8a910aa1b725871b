//! Drawing a [`Chart`] with plotters: the two back ends (SVG text, RGB bitmap), the shared
//! page layout (title, margins, axes), and the marks of line, scatter, histogram and bar charts.
//! Images are drawn by `raster`.

use super::axis::{pad, widen, Axis};
use super::canvas::Canvas;
use super::chart::{Chart, Kind, Mark};
use super::colormap::series_color;
use super::font::{self, text};
use super::layout::{
    categories, draw_title, drawing_error, numeric_axis, style_mesh, tick_height, title_height,
    x_axis, x_label_area, y_label_area, MARGIN, TICK_FONT, TICK_LEN,
};
use super::legend::{self, Entry};
use super::raster;
use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Draws `chart` as an SVG document.
pub(crate) fn render_svg(chart: &Chart) -> Result<String> {
    font::ensure_font()?;
    let mut svg = String::new();
    let placed = {
        let root =
            SVGBackend::with_string(&mut svg, (chart.width, chart.height)).into_drawing_area();
        let placed = draw_page(chart, &root, false)?;
        root.present().map_err(drawing_error)?;
        placed
    };
    raster::embed_in_svg(svg, &placed)
}

/// Draws `chart` as RGB bytes, row by row.
pub(crate) fn render_rgb(chart: &Chart) -> Result<Vec<u8>> {
    font::ensure_font()?;
    let mut rgb = vec![255u8; chart.width as usize * chart.height as usize * 3];
    {
        let canvas = Canvas::new(&mut rgb, chart.width, chart.height)
            .map_err(|e| Error::Other(format!("internal: {e}")))?;
        let root = canvas.into_drawing_area();
        draw_page(chart, &root, true)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(rgb)
}

/// Draws the whole page: background, title, then the chart. Images placed on the page are
/// drawn at once when `blit` (bitmaps) or returned to be embedded (SVG).
fn draw_page<DB: DrawingBackend>(
    chart: &Chart,
    root: &DrawingArea<DB, Shift>,
    blit: bool,
) -> Result<Vec<raster::Placed>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(drawing_error)?;
    match &chart.kind {
        Kind::Image(img) => raster::draw_image(chart, img, root, blit),
        _ => {
            let top = draw_title(root, chart.title.as_deref(), MARGIN)?;
            draw_xy(chart, root, top)?;
            Ok(Vec::new())
        }
    }
}

/// Points in drawing units.
type Points = Vec<(f64, f64)>;

/// A bar from `x0` to `x1`, `y0` (None: the bottom of the axis) to `y1`, in drawing units.
#[derive(Debug, Clone, Copy)]
struct Bar {
    x0: f64,
    x1: f64,
    y0: Option<f64>,
    y1: f64,
}

/// The marks of a line, scatter, histogram or bar chart, in drawing units.
struct Marks {
    /// Line series: their unbroken runs of points, and a colour index.
    lines: Vec<(Vec<Points>, usize)>,
    /// Scatter series: their points, and a colour index.
    dots: Vec<(Points, usize)>,
    /// Bars, all in the first series colour.
    rects: Vec<Bar>,
    /// Legend entries.
    legend: Vec<Entry>,
    /// Bar chart category names (the x axis shows them instead of numbers).
    categories: Option<Vec<String>>,
}

/// A value in drawing units: its log10 on a log axis (None if not positive), None if not
/// finite.
fn to_units(v: f64, log: bool) -> Option<f64> {
    match (v.is_finite(), log) {
        (false, _) => None,
        (true, false) => Some(v),
        (true, true) if v > 0.0 => Some(v.log10()),
        _ => None,
    }
}

fn marks(chart: &Chart) -> Result<Marks> {
    let mut m = Marks {
        lines: Vec::new(),
        dots: Vec::new(),
        rects: Vec::new(),
        legend: Vec::new(),
        categories: None,
    };
    match &chart.kind {
        Kind::Xy(series) => {
            for (i, s) in series.iter().enumerate() {
                let pts = s.x.iter().zip(&s.y).map(|(&x, &y)| {
                    to_units(x, chart.log_x).and_then(|x| to_units(y, chart.log_y).map(|y| (x, y)))
                });
                match s.mark {
                    Mark::Line => {
                        let mut runs: Vec<Points> = vec![Vec::new()];
                        for p in pts {
                            match p {
                                Some(p) => runs.last_mut().expect("one run").push(p),
                                None if !runs.last().expect("one run").is_empty() => {
                                    runs.push(Vec::new())
                                }
                                None => {}
                            }
                        }
                        runs.retain(|r| !r.is_empty());
                        m.lines.push((runs, i));
                    }
                    Mark::Dot => m.dots.push((pts.flatten().collect(), i)),
                }
                if let Some(label) = &s.label {
                    m.legend
                        .push(Entry::new(label, s.mark.into(), series_color(i)));
                }
            }
        }
        Kind::Hist {
            values,
            bins,
            label,
        } => {
            let units: Vec<f64> = values
                .iter()
                .filter_map(|&v| to_units(v, chart.log_x))
                .collect();
            let (lo, hi) = min_max(&units).ok_or_else(|| nothing_positive("x", values.len()))?;
            let (lo, hi) = widen(lo, hi);
            let width = (hi - lo) / *bins as f64;
            let mut counts = vec![0usize; *bins];
            for v in &units {
                let b = (((v - lo) / width) as usize).min(bins - 1);
                counts[b] += 1;
            }
            for (b, &c) in counts.iter().enumerate() {
                let y = to_units(c as f64, chart.log_y);
                if let (true, Some(y)) = (c > 0, y) {
                    let y0 = if chart.log_y { None } else { Some(0.0) };
                    let x0 = lo + b as f64 * width;
                    m.rects.push(Bar {
                        x0,
                        x1: x0 + width,
                        y0,
                        y1: y,
                    });
                }
            }
            if let Some(label) = label {
                m.legend
                    .push(Entry::new(label, legend::Swatch::Bar, series_color(0)));
            }
        }
        Kind::Bar {
            names,
            values,
            label,
        } => {
            if chart.log_x {
                return Err(Error::Other(
                    "a bar chart's x axis holds categories; log_x does not apply to it".into(),
                ));
            }
            for (i, &v) in values.iter().enumerate() {
                if let Some(y) = to_units(v, chart.log_y) {
                    let y0 = if chart.log_y { None } else { Some(0.0) };
                    m.rects.push(Bar {
                        x0: i as f64 - 0.4,
                        x1: i as f64 + 0.4,
                        y0,
                        y1: y,
                    });
                }
            }
            if m.rects.is_empty() {
                return Err(nothing_positive("values", values.len()));
            }
            m.categories = Some(names.clone());
            if let Some(label) = label {
                m.legend
                    .push(Entry::new(label, legend::Swatch::Bar, series_color(0)));
            }
        }
        Kind::Image(_) => {
            return Err(Error::Other(
                "internal: an image has no line, dot or bar marks".into(),
            ))
        }
    }
    let points = m.lines.iter().map(|(r, _)| r.len()).sum::<usize>()
        + m.dots.iter().map(|(d, _)| d.len()).sum::<usize>()
        + m.rects.len();
    if points == 0 {
        let (axis, which) = if chart.log_x { ("x", "x") } else { ("y", "y") };
        return Err(Error::Other(format!(
            "nothing left to draw on the log {axis} axis: no point has a positive {which} \
             (values ≤ 0 cannot be shown on a log axis)"
        )));
    }
    Ok(m)
}

fn nothing_positive(what: &str, n: usize) -> Error {
    Error::Other(format!(
        "nothing left to draw on the log axis: none of the {n} {what} values is positive \
         (values ≤ 0 cannot be shown on a log axis)"
    ))
}

fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    v.iter().fold(None, |acc, &x| match acc {
        None => Some((x, x)),
        Some((lo, hi)) => Some((lo.min(x), hi.max(x))),
    })
}

/// The visible ranges (drawing units) of the marks.
fn ranges(m: &Marks, chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let xs = m
        .lines
        .iter()
        .flat_map(|(runs, _)| runs.iter().flatten())
        .chain(m.dots.iter().flat_map(|(d, _)| d.iter()));
    let mut all_x: Vec<f64> = xs.clone().map(|p| p.0).collect();
    let mut all_y: Vec<f64> = xs.map(|p| p.1).collect();
    for &Bar { x0, x1, y0, y1 } in &m.rects {
        all_x.extend([x0, x1]);
        all_y.push(y1);
        if let Some(y0) = y0 {
            all_y.push(y0);
        }
    }
    let (xlo, xhi) = min_max(&all_x).unwrap_or((0.0, 1.0));
    let (ylo, yhi) = min_max(&all_y).unwrap_or((0.0, 1.0));
    let x = if m.categories.is_some() {
        (xlo - 0.2, xhi + 0.2)
    } else if m.rects.is_empty() {
        pad(xlo, xhi, 0.04)
    } else {
        pad(xlo, xhi, 0.02)
    };
    let y = if m.rects.is_empty() {
        pad(ylo, yhi, 0.05)
    } else if chart.log_y {
        let (lo, hi) = pad(ylo, yhi, 0.05);
        // The shortest bar keeps some height above the bottom of the axis.
        (lo - 0.15 * (hi - lo).max(1.0), hi)
    } else {
        // Bars stand on 0: no margin on the side where 0 is the limit.
        let (lo, hi) = pad(ylo, yhi, 0.05);
        (
            if ylo == 0.0 { 0.0 } else { lo },
            if yhi == 0.0 { 0.0 } else { hi },
        )
    };
    let y = match chart.ylim {
        Some((min, max)) => {
            let lo = to_units(min, chart.log_y).unwrap_or(ylo);
            let hi = to_units(max, chart.log_y).unwrap_or(yhi);
            // Data beyond the limits widens the range (with the usual margin on that side).
            (
                if ylo < lo { y.0 } else { lo },
                if yhi > hi { y.1 } else { hi },
            )
        }
        None => y,
    };
    // All-zero bars leave an empty range: give it a width.
    (x, widen(y.0, y.1))
}

/// The y axis of a plot `h` pixels high whose plot area starts `top` pixels down and leaves
/// `x_area` pixels below it, and the width of the labels left of it.
fn y_layout(chart: &Chart, (ylo, yhi): (f64, f64), h: u32, top: u32, x_area: u32) -> (Axis, u32) {
    let plot_h = h.saturating_sub(top + x_area + MARGIN).max(20);
    let y_axis = numeric_axis(ylo, yhi, chart.log_y, (plot_h / 45).clamp(2, 10) as usize);
    let y_area = y_label_area(&y_axis, chart.ylabel.as_deref()).max(chart.min_y_area);
    (y_axis, y_area)
}

/// The width of the labels left of the plot of a line, scatter, histogram or bar chart (with
/// numbers on the x axis), as drawing it lays them out.
pub(crate) fn y_label_width(chart: &Chart) -> Result<u32> {
    font::ensure_font()?;
    let m = marks(chart)?;
    let (_, y) = ranges(&m, chart);
    let top = MARGIN + title_height(chart.title.as_deref());
    let x_area = x_label_area(chart.xlabel.as_deref(), tick_height());
    Ok(y_layout(chart, y, chart.height, top, x_area).1)
}

/// Draws a line, scatter, histogram or bar chart below `top`.
fn draw_xy<DB: DrawingBackend>(chart: &Chart, root: &DrawingArea<DB, Shift>, top: u32) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if matches!(chart.kind, Kind::Image(_)) {
        return Err(Error::Other(
            "internal: an image is not an x-y chart".into(),
        ));
    }
    let m = marks(chart)?;
    let ((xlo, xhi), (ylo, yhi)) = ranges(&m, chart);
    let (w, h) = root.dim_in_pixel();
    let right = MARGIN + 12;
    // The plot's size depends on the axes' label areas, and the x labels (upright category
    // names) on the plot's width: lay out once, then again for upright names.
    let layout = |label_extent: u32| {
        let x_area = x_label_area(chart.xlabel.as_deref(), label_extent);
        let (y_axis, y_area) = y_layout(chart, (ylo, yhi), h, top, x_area);
        let plot_w = w.saturating_sub(MARGIN + y_area + right).max(20);
        (x_area, y_axis, y_area, plot_w)
    };
    let (mut x_area, mut y_axis, mut y_area, plot_w) = layout(tick_height());
    let mut upright = None;
    let x_axis = match &m.categories {
        Some(names) => {
            let c = categories(names, plot_w, h * 2 / 5);
            if c.upright {
                (x_area, y_axis, y_area, _) = layout(c.extent);
                upright = Some(c.axis.clone());
            }
            c.axis
        }
        None => x_axis(xlo, xhi, chart.log_x, plot_w),
    };
    let x_axis = Axis {
        lo: xlo,
        hi: xhi,
        ..x_axis
    };
    let y_axis = Axis {
        lo: ylo,
        hi: yhi,
        ..y_axis
    };

    let mut ctx = ChartBuilder::on(root)
        .margin_top(top)
        .margin_left(MARGIN)
        .margin_right(right)
        .margin_bottom(MARGIN)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x_axis.clone(), y_axis.clone())
        .map_err(drawing_error)?;
    let xf = |v: &f64| {
        if upright.is_some() {
            String::new()
        } else {
            x_axis.label_at(*v)
        }
    };
    let yf = |v: &f64| y_axis.label_at(*v);
    {
        let mut mesh = ctx.configure_mesh();
        style_mesh(&mut mesh, chart.xlabel.as_deref(), chart.ylabel.as_deref());
        mesh.x_label_formatter(&xf).y_label_formatter(&yf);
        if !m.rects.is_empty() {
            mesh.disable_x_mesh();
        }
        mesh.draw().map_err(drawing_error)?;
    }

    if let Some(axis) = &upright {
        let style = text(TICK_FONT)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center));
        for (&pos, label) in axis.ticks.iter().zip(&axis.labels) {
            let (px, py) = ctx.backend_coord(&(pos, ylo));
            root.draw(&Text::new(
                label.clone(),
                (px, py + TICK_LEN * 2),
                style.clone(),
            ))
            .map_err(drawing_error)?;
        }
    }

    let color = |i: usize| {
        let [r, g, b] = series_color(i);
        RGBColor(r, g, b)
    };
    let (px, _) = ctx.plotting_area().get_pixel_range();
    let bar_px = m
        .rects
        .first()
        .map_or(0.0, |b| (b.x1 - b.x0) / (xhi - xlo) * px.len() as f64);
    for &Bar { x0, x1, y0, y1 } in &m.rects {
        let y0 = y0.unwrap_or(ylo);
        ctx.draw_series(std::iter::once(Rectangle::new(
            [(x0, y0), (x1, y1)],
            color(0).filled(),
        )))
        .map_err(drawing_error)?;
        if m.categories.is_none() && bar_px >= 4.0 {
            // A white edge keeps neighbouring bins apart.
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(x0, y0), (x1, y1)],
                WHITE.stroke_width(1),
            )))
            .map_err(drawing_error)?;
        }
    }
    for (runs, i) in &m.lines {
        ctx.draw_series(
            runs.iter()
                .map(|run| PathElement::new(run.clone(), color(*i).stroke_width(2))),
        )
        .map_err(drawing_error)?;
    }
    let total_dots: usize = m.dots.iter().map(|(d, _)| d.len()).sum();
    let (radius, alpha) = if total_dots > 2000 {
        (2, 0.5)
    } else {
        (3, 0.9)
    };
    for (dots, i) in &m.dots {
        let style = color(*i).mix(alpha).filled();
        ctx.draw_series(dots.iter().map(|&p| Circle::new(p, radius, style)))
            .map_err(drawing_error)?;
    }

    if !m.legend.is_empty() {
        let to_px = |p: &(f64, f64)| ctx.backend_coord(p);
        let mut occupied: Vec<(i32, i32)> = Vec::new();
        for (runs, _) in &m.lines {
            for run in runs {
                legend::sample_path(&run.iter().map(to_px).collect::<Vec<_>>(), &mut occupied);
            }
        }
        for (dots, _) in &m.dots {
            occupied.extend(dots.iter().map(to_px));
        }
        for &Bar { x0, x1, y0, y1 } in &m.rects {
            let a = to_px(&(x0, y0.unwrap_or(ylo)));
            let b = to_px(&(x1, y1));
            legend::sample_rect(a, b, &mut occupied);
        }
        let (xr, yr) = ctx.plotting_area().get_pixel_range();
        legend::draw(root, &m.legend, chart.legend, (xr, yr), &occupied)?;
    }
    Ok(())
}

impl From<Mark> for legend::Swatch {
    fn from(m: Mark) -> Self {
        match m {
            Mark::Line => legend::Swatch::Line,
            Mark::Dot => legend::Swatch::Dot,
        }
    }
}
