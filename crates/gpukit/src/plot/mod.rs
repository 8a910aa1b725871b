//! Charts for notebooks, one call each: [`line`](fn@line), [`scatter`], [`hist`], [`bar`] and
//! [`imshow`], drawn with [plotters](https://docs.rs/plotters).
//!
//! Each function takes the data, checks it, and returns a [`Chart`]; builder methods set the
//! title, axis labels, log axes, legend and size, and add more series to a line or scatter
//! chart. The last expression of a notebook cell shows the chart inline, as SVG by default
//! ([`Chart::png`] asks for PNG). [`Chart::to_svg`], [`Chart::to_png`] and [`Chart::save`]
//! give it to files and other tools.
//!
//! Data can be gpukit [`Array`](crate::Array)s (a device array is copied to the host once),
//! ndarray arrays and views, slices, arrays and `Vec`s of any number type (see [`PlotData`]).
//! Bad data (lengths that differ, nothing finite to draw, an image of the wrong shape) is an
//! error that says what is wrong, never a panic. NaN and infinite values are left out of the
//! drawing (a line breaks at them).
//!
//! ```
//! use gpukit::plot::{self, Colormap};
//! use gpukit::prelude::*;
//!
//! # fn main() -> gpukit::Result<()> {
//! let x = Array::<f64>::linspace(0.0, 10.0, 200)?;
//! let y = x.sin()?;
//! let chart = plot::line(&x, &y)?
//!     .label("sin x")
//!     .line(&x, &x.cos()?, "cos x")?
//!     .title("Two waves")
//!     .xlabel("x");
//!
//! let sizes = [1e3, 1e4, 1e5, 1e6];
//! let ms = vec![0.01, 0.02, 0.15, 1.4];
//! let timing = plot::scatter(&sizes, &ms)?.log_x().log_y().ylabel("ms");
//!
//! let counts = plot::hist(&y, 20)?;
//! let speed = plot::bar(&["CPU", "GPU"], &[1.0, 42.0])?.ylabel("speed-up");
//! let img = ndarray::Array2::from_shape_fn((32, 48), |(r, c)| (r * c) as f64);
//! let picture = plot::imshow(&img)?.cmap(Colormap::Magma);
//! # for c in [&chart, &timing, &counts, &speed, &picture] { c.to_svg()?; }
//! # Ok(())
//! # }
//! ```

mod axis;
mod canvas;
mod chart;
mod colormap;
mod data;
mod draw;
mod font;
mod layout;
mod legend;
mod raster;
#[cfg(test)]
mod tests;

pub use chart::{Chart, Format, Legend, AUTO_PNG_POINTS, DEFAULT_SIZE};
pub use colormap::Colormap;
pub use data::{PlotData, PlotElement, PlotValues};

use crate::error::{Error, Result};
use chart::{xy_series, Kind, Mark};
use data::{check_finite, values_1d};

/// The most bins a histogram may have.
pub const MAX_BINS: usize = 100_000;

/// A line chart of `y` against `x` (points joined in order).
///
/// `x` and `y` must have the same length and at least one point where both are finite.
/// More series: [`Chart::line`], [`Chart::scatter`].
pub fn line(x: &(impl PlotData + ?Sized), y: &(impl PlotData + ?Sized)) -> Result<Chart> {
    Ok(Chart::new(Kind::Xy(vec![xy_series(
        Mark::Line,
        x,
        y,
        None,
    )?])))
}

/// A scatter chart: a dot at each `(x, y)`.
///
/// `x` and `y` must have the same length and at least one point where both are finite.
/// More series: [`Chart::scatter`], [`Chart::line`].
pub fn scatter(x: &(impl PlotData + ?Sized), y: &(impl PlotData + ?Sized)) -> Result<Chart> {
    Ok(Chart::new(Kind::Xy(vec![xy_series(
        Mark::Dot,
        x,
        y,
        None,
    )?])))
}

/// A histogram of the values of `x` in `bins` equal bins from the smallest to the largest
/// finite value. Empty bins draw no bar; NaN and infinite values are not counted.
pub fn hist(x: &(impl PlotData + ?Sized), bins: usize) -> Result<Chart> {
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::Other(format!(
            "a histogram needs 1 to {MAX_BINS} bins; {bins} were asked for"
        )));
    }
    let values = values_1d(x, "x")?;
    check_finite(&values, "x")?;
    let values = values.into_iter().filter(|v| v.is_finite()).collect();
    Ok(Chart::new(Kind::Hist {
        values,
        bins,
        label: None,
    }))
}

/// A bar chart: one bar per label, of height `values[i]` (negative values go down from 0).
///
/// `labels` and `values` must have the same length; a NaN value draws no bar.
pub fn bar<L: AsRef<str>>(labels: &[L], values: &(impl PlotData + ?Sized)) -> Result<Chart> {
    let values = values_1d(values, "values")?;
    if labels.len() != values.len() {
        return Err(Error::Shape(format!(
            "{} labels for {} values; a bar chart needs one label per value",
            labels.len(),
            values.len()
        )));
    }
    check_finite(&values, "values")?;
    Ok(Chart::new(Kind::Bar {
        names: labels.iter().map(|l| l.as_ref().to_string()).collect(),
        values,
        label: None,
    }))
}

/// An image: a 2-D array `(height, width)` of scalars shown through a colour map (viridis
/// unless [`Chart::cmap`] says otherwise) with a colour bar, or colours of shape
/// `(height, width, 3)` (RGB) or `(height, width, 4)` (RGBA).
///
/// Colour values are bytes `0..=255` for integer arrays (`u8` pictures) and `[0, 1]` for float
/// arrays (what [`load_image`](crate::image::load_image) returns). Row 0 is at the top; pixels
/// stay square. NaN scalars are left transparent.
pub fn imshow(image: &(impl PlotData + ?Sized)) -> Result<Chart> {
    Ok(Chart::new(Kind::Image(raster::image_data(image)?)))
}
