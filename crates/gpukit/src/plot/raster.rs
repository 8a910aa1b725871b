//! Images on a chart: [`imshow`](super::imshow)'s picture and colour bar. Pixels never go
//! through plotters' element-per-pixel path: a bitmap gets them resampled and copied in, an SVG
//! gets them as an embedded PNG (`<image>`), placed under the axes.

use super::axis::{widen, Axis};
use super::chart::{Chart, Kind};
use super::colormap::Colormap;
use super::data::{check_finite, PlotData};
use super::font::{text, text_size};
use super::layout::{
    draw_title, drawing_error, style_mesh, tick_height, title_height, x_label_area, y_label_area,
    AXIS, MARGIN,
};
use crate::error::{Error, Result};
use base64::Engine as _;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Width of the colour bar in pixels.
const CBAR_W: u32 = 16;
/// Gap between the image and the colour bar in pixels.
const CBAR_GAP: u32 = 18;

/// An image to show.
#[derive(Debug, Clone)]
pub(crate) enum ImageData {
    /// Scalars, row-major, mapped through a colour map.
    Scalar {
        h: usize,
        w: usize,
        values: Vec<f64>,
    },
    /// RGBA bytes, row-major.
    Color { h: usize, w: usize, rgba: Vec<u8> },
}

/// Checks an image's shape and converts it: `(h, w)` scalars or `(h, w, 3 | 4)` colours.
pub(crate) fn image_data(data: &(impl PlotData + ?Sized)) -> Result<ImageData> {
    let v = data.plot_values()?;
    let (h, w, channels) = match v.shape[..] {
        [h, w] => (h, w, 1),
        [h, w, c] if c == 3 || c == 4 => (h, w, c),
        [_, _, c] => {
            return Err(Error::Shape(format!(
                "imshow: a colour image has 3 (RGB) or 4 (RGBA) channels; this array has shape \
                 {:?}, with {c}",
                v.shape
            )))
        }
        _ => {
            return Err(Error::Shape(format!(
                "imshow needs a 2-D array (height, width) of scalars or a 3-D array (height, \
                 width, 3 or 4) of colours; this array has shape {:?}",
                v.shape
            )))
        }
    };
    if h == 0 || w == 0 {
        return Err(Error::Shape(format!(
            "imshow: the image is empty (shape {:?})",
            v.shape
        )));
    }
    if channels == 1 {
        check_finite(&v.values, "the image")?;
        return Ok(ImageData::Scalar {
            h,
            w,
            values: v.values,
        });
    }
    let scale = if v.is_float { 255.0 } else { 1.0 };
    let byte = |x: f64| {
        if x.is_nan() {
            0
        } else {
            (x * scale).round().clamp(0.0, 255.0) as u8
        }
    };
    let mut rgba = Vec::with_capacity(h * w * 4);
    for px in v.values.chunks_exact(channels) {
        rgba.extend(px[..3].iter().map(|&x| byte(x)));
        rgba.push(if channels == 4 { byte(px[3]) } else { 255 });
    }
    Ok(ImageData::Color { h, w, rgba })
}

/// Pixels placed on the page: the rectangle they fill and the picture (RGBA) stretched over it.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    x: i32,
    y: i32,
    w: u32,
    h: u32,
    src_w: u32,
    src_h: u32,
    rgba: Vec<u8>,
}

/// The ends of the colour map: the chart's `clim` or the finite data's range.
fn color_limits(values: &[f64], clim: Option<(f64, f64)>) -> (f64, f64) {
    let (lo, hi) = clim.unwrap_or_else(|| {
        values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    });
    widen(lo.min(hi), hi.max(lo))
}

/// Scalars to RGBA through `cmap` over `lo..hi`; NaN and infinities are transparent.
fn colorize(values: &[f64], cmap: Colormap, (lo, hi): (f64, f64)) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 4);
    for &v in values {
        if v.is_finite() {
            out.extend(cmap.rgb((v - lo) / (hi - lo)));
            out.push(255);
        } else {
            out.extend([0, 0, 0, 0]);
        }
    }
    out
}

/// An axis of pixel indices `0..n` with integer ticks; `flip` puts index 0 at the top (the
/// positions are then negated).
fn index_axis(n: usize, max_ticks: usize, flip: bool) -> Axis {
    let a = Axis::linear(-0.5, n as f64 - 0.5, max_ticks);
    let ticks: Vec<f64> = a
        .ticks
        .into_iter()
        .filter(|t| t.fract() == 0.0 && *t >= 0.0 && *t < n as f64)
        .collect();
    let labels = ticks.iter().map(|t| format!("{t:.0}")).collect();
    let sign = if flip { -1.0 } else { 1.0 };
    let (lo, hi) = if flip {
        (-(n as f64 - 0.5), 0.5)
    } else {
        (-0.5, n as f64 - 0.5)
    };
    Axis {
        lo,
        hi,
        ticks: ticks.iter().map(|t| t * sign).collect(),
        labels,
        minor: Vec::new(),
    }
}

/// Draws an image chart: the title, the picture with pixel-index axes and square pixels, and
/// for scalars a colour bar, centred on the page as a group. With `blit` the pixels are drawn into the page; otherwise they are
/// returned for [`embed_in_svg`].
pub(crate) fn draw_image<DB: DrawingBackend>(
    chart: &Chart,
    img: &ImageData,
    root: &DrawingArea<DB, Shift>,
    blit: bool,
) -> Result<Vec<Placed>>
where
    DB::ErrorType: 'static,
{
    if chart.log_x || chart.log_y {
        return Err(Error::Other(
            "imshow draws pixels on index axes; log_x and log_y do not apply to it".into(),
        ));
    }
    debug_assert!(matches!(chart.kind, Kind::Image(_)));
    let (w, h) = root.dim_in_pixel();
    let (ih, iw, picture, limits) = match img {
        ImageData::Scalar { h, w, values } => {
            let limits = color_limits(values, chart.clim);
            (*h, *w, colorize(values, chart.cmap, limits), Some(limits))
        }
        ImageData::Color { h, w, rgba } => (*h, *w, rgba.clone(), None),
    };
    let top = MARGIN + title_height(chart.title.as_deref());
    let x_area = x_label_area(chart.xlabel.as_deref(), tick_height());
    let avail_h = h.saturating_sub(top + x_area + MARGIN).max(16);
    let y_axis = index_axis(ih, (avail_h / 45).clamp(2, 10) as usize, true);
    let y_area = y_label_area(&y_axis, chart.ylabel.as_deref());
    let cbar_axis =
        limits.map(|(lo, hi)| Axis::linear(lo, hi, (avail_h / 40).clamp(2, 10) as usize));
    let cbar_area = cbar_axis.as_ref().map_or(0, |a| {
        let tick = text(super::layout::TICK_FONT);
        let widest = a
            .labels
            .iter()
            .map(|l| text_size(l, &tick).0)
            .max()
            .unwrap_or(0);
        CBAR_GAP + CBAR_W + (super::layout::TICK_LEN * 2) as u32 + widest + 4
    });
    let avail_w = w
        .saturating_sub(MARGIN + y_area + cbar_area + MARGIN + 8)
        .max(16);
    let scale = (avail_w as f64 / iw as f64).min(avail_h as f64 / ih as f64);
    let pw = ((iw as f64 * scale).floor() as u32).max(1);
    let ph = ((ih as f64 * scale).floor() as u32).max(1);
    let ox = MARGIN + (avail_w - pw.min(avail_w)) / 2;
    let slack = (avail_h - ph.min(avail_h)) / 2;
    draw_title(root, chart.title.as_deref(), MARGIN + slack)?;
    let oy = top + slack;
    let x_axis = index_axis(iw, (pw / 70).clamp(2, 12) as usize, false);

    let main = root.clone().shrink((ox, oy), (y_area + pw, ph + x_area));
    let mut ctx = ChartBuilder::on(&main)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x_axis.clone(), y_axis.clone())
        .map_err(drawing_error)?;
    let mut placed = vec![place(ctx.plotting_area(), iw, ih, picture)];

    let mut bar_ctx = None;
    if let (Some(axis), Some((lo, hi))) = (&cbar_axis, limits) {
        let bar_area = root.clone().shrink(
            (ox + y_area + pw + CBAR_GAP, oy),
            (cbar_area - CBAR_GAP, ph),
        );
        let bctx = ChartBuilder::on(&bar_area)
            .right_y_label_area_size(cbar_area - CBAR_GAP - CBAR_W)
            .build_cartesian_2d(
                Axis {
                    lo: 0.0,
                    hi: 1.0,
                    ticks: Vec::new(),
                    labels: Vec::new(),
                    minor: Vec::new(),
                },
                axis.clone(),
            )
            .map_err(drawing_error)?;
        let steps = 256usize;
        let values: Vec<f64> = (0..steps)
            .map(|i| hi - (hi - lo) * (i as f64 + 0.5) / steps as f64)
            .collect();
        placed.push(place(
            bctx.plotting_area(),
            1,
            steps,
            colorize(&values, chart.cmap, (lo, hi)),
        ));
        bar_ctx = Some(bctx);
    }
    if blit {
        for p in &placed {
            blit_into(root, p)?;
        }
    }

    let xf = |v: &f64| x_axis.label_at(*v);
    let yf = |v: &f64| y_axis.label_at(*v);
    let mut mesh = ctx.configure_mesh();
    style_mesh(&mut mesh, chart.xlabel.as_deref(), chart.ylabel.as_deref());
    mesh.x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .disable_mesh()
        .draw()
        .map_err(drawing_error)?;

    if let (Some(mut bctx), Some(axis)) = (bar_ctx, &cbar_axis) {
        let bf = |v: &f64| axis.label_at(*v);
        let mut mesh = bctx.configure_mesh();
        style_mesh(&mut mesh, None, None);
        mesh.y_label_formatter(&bf)
            .disable_mesh()
            .disable_x_axis()
            .draw()
            .map_err(drawing_error)?;
        let (xr, yr) = bctx.plotting_area().get_pixel_range();
        root.draw(&Rectangle::new(
            [(xr.start, yr.start), (xr.end, yr.end)],
            AXIS.stroke_width(1),
        ))
        .map_err(drawing_error)?;
    }
    Ok(placed)
}

/// The picture `rgba` (`src_w` × `src_h`) stretched over `area`'s pixels.
fn place<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    src_w: usize,
    src_h: usize,
    rgba: Vec<u8>,
) -> Placed {
    let (xr, yr) = area.get_pixel_range();
    Placed {
        x: xr.start,
        y: yr.start,
        w: xr.len().max(1) as u32,
        h: yr.len().max(1) as u32,
        src_w: src_w as u32,
        src_h: src_h as u32,
        rgba,
    }
}

/// Copies a placed picture into a bitmap page, composited over white.
fn blit_into<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, p: &Placed) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let scaled = resample(&p.rgba, p.src_w, p.src_h, p.w, p.h);
    let rgb: Vec<u8> = scaled
        .chunks_exact(4)
        .flat_map(|px| {
            let a = f32::from(px[3]) / 255.0;
            let over = |c: u8| (f32::from(c) * a + 255.0 * (1.0 - a)).round() as u8;
            [over(px[0]), over(px[1]), over(px[2])]
        })
        .collect();
    let elem = BitMapElement::with_owned_buffer((p.x, p.y), (p.w, p.h), rgb)
        .ok_or_else(|| Error::Other("internal: image buffer has the wrong size".into()))?;
    root.draw(&elem).map_err(drawing_error)
}

/// Resizes an RGBA picture: nearest neighbour when enlarging, the alpha-weighted mean of the
/// covered pixels when shrinking.
fn resample(src: &[u8], sw: u32, sh: u32, dw: u32, dh: u32) -> Vec<u8> {
    let (sw, sh, dw, dh) = (sw as usize, sh as usize, dw as usize, dh as usize);
    let span = |d: usize, dn: usize, sn: usize| {
        let a = d * sn / dn;
        let b = ((d + 1) * sn).div_ceil(dn).max(a + 1).min(sn);
        a..b
    };
    let mut out = Vec::with_capacity(dw * dh * 4);
    for dy in 0..dh {
        let ys = span(dy, dh, sh);
        for dx in 0..dw {
            let xs = span(dx, dw, sw);
            let (mut acc, mut alpha, mut n) = ([0f64; 3], 0f64, 0usize);
            for y in ys.clone() {
                for x in xs.clone() {
                    let i = (y * sw + x) * 4;
                    let a = f64::from(src[i + 3]);
                    for c in 0..3 {
                        acc[c] += f64::from(src[i + c]) * a;
                    }
                    alpha += a;
                    n += 1;
                }
            }
            if alpha > 0.0 {
                out.extend(acc.map(|c| (c / alpha).round() as u8));
            } else {
                out.extend([0, 0, 0]);
            }
            out.push((alpha / n.max(1) as f64).round() as u8);
        }
    }
    out
}

/// Encodes RGBA pixels as PNG.
fn png_rgba(rgba: Vec<u8>, w: u32, h: u32) -> Result<Vec<u8>> {
    let img = image::RgbaImage::from_raw(w, h, rgba)
        .ok_or_else(|| Error::Other("internal: image buffer has the wrong size".into()))?;
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| Error::Other(format!("cannot encode an image as PNG: {e}")))?;
    Ok(png)
}

/// Puts the placed pictures into an SVG document as `<image>` elements right after its
/// background, so axes and labels draw over them. A picture much larger than its place is
/// shrunk to twice the place's size first; a smaller one is enlarged by a whole factor and
/// drawn without smoothing.
pub(crate) fn embed_in_svg(svg: String, placed: &[Placed]) -> Result<String> {
    if placed.is_empty() {
        return Ok(svg);
    }
    let mut images = String::new();
    for p in placed {
        // Per axis: shrink to twice the place, or enlarge by a whole factor (each picture
        // pixel a block, so that viewers that smooth images still show sharp pixels).
        let fit = |src: u32, place: u32| {
            if src > 2 * place {
                2 * place
            } else if src < place {
                src * (place / src)
            } else {
                src
            }
        };
        let (tw, th) = (fit(p.src_w, p.w), fit(p.src_h, p.h));
        let png = if (tw, th) == (p.src_w, p.src_h) {
            png_rgba(p.rgba.clone(), p.src_w, p.src_h)?
        } else {
            png_rgba(resample(&p.rgba, p.src_w, p.src_h, tw, th), tw, th)?
        };
        let sharp = p.src_w <= p.w && p.src_h <= p.h;
        let data = base64::engine::general_purpose::STANDARD.encode(png);
        let style = if sharp {
            " style=\"image-rendering:pixelated\""
        } else {
            ""
        };
        images.push_str(&format!(
            "<image x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" preserveAspectRatio=\"none\"{style} \
             href=\"data:image/png;base64,{data}\" xlink:href=\"data:image/png;base64,{data}\"/>\n",
            p.x, p.y, p.w, p.h
        ));
    }
    let svg = svg.replacen(
        "<svg ",
        "<svg xmlns:xlink=\"http://www.w3.org/1999/xlink\" ",
        1,
    );
    // The background is the first rect of the document (the page fill).
    let at = svg
        .find("<rect")
        .and_then(|r| svg[r..].find("/>").map(|e| r + e + 2))
        .or_else(|| svg.rfind("</svg>"))
        .ok_or_else(|| Error::Other("internal: the SVG document has no end tag".into()))?;
    let mut out = String::with_capacity(svg.len() + images.len() + 1);
    out.push_str(&svg[..at]);
    out.push('\n');
    out.push_str(&images);
    out.push_str(svg[at..].trim_start_matches('\n'));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_channels() {
        let a = ndarray::Array2::<f32>::zeros((3, 4));
        assert!(matches!(
            image_data(&a).unwrap(),
            ImageData::Scalar { h: 3, w: 4, .. }
        ));
        let rgb = ndarray::Array3::<u8>::from_elem((2, 2, 3), 200);
        let ImageData::Color { rgba, .. } = image_data(&rgb).unwrap() else {
            panic!("not colour")
        };
        assert_eq!(&rgba[..4], &[200, 200, 200, 255]);
        let rgba_f = ndarray::Array3::<f32>::from_elem((1, 1, 4), 0.5);
        let ImageData::Color { rgba, .. } = image_data(&rgba_f).unwrap() else {
            panic!("not colour")
        };
        assert_eq!(rgba, [128, 128, 128, 128]);

        let e = image_data(&ndarray::Array3::<u8>::zeros((2, 2, 2))).unwrap_err();
        assert!(e.to_string().contains("3 (RGB) or 4 (RGBA)"), "{e}");
        let e = image_data(&[1.0, 2.0]).unwrap_err();
        assert!(e.to_string().contains("2-D array"), "{e}");
        let e = image_data(&ndarray::Array2::<f64>::zeros((0, 3))).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        let nan = ndarray::Array2::<f64>::from_elem((2, 2), f64::NAN);
        assert!(image_data(&nan).is_err());
    }

    #[test]
    fn resampling_enlarges_and_averages() {
        // 2x1: red, blue.
        let src = [255, 0, 0, 255, 0, 0, 255, 255];
        let big = resample(&src, 2, 1, 4, 2);
        assert_eq!(&big[0..4], &[255, 0, 0, 255]);
        assert_eq!(&big[12..16], &[0, 0, 255, 255]);
        let small = resample(&src, 2, 1, 1, 1);
        assert_eq!(small, [128, 0, 128, 255]);
        // A transparent pixel does not darken the mean.
        let src = [255, 255, 255, 255, 0, 0, 0, 0];
        assert_eq!(resample(&src, 2, 1, 1, 1), [255, 255, 255, 128]);
    }

    #[test]
    fn index_axes_have_integer_ticks() {
        let a = index_axis(3, 10, false);
        assert_eq!(a.ticks, [0.0, 1.0, 2.0]);
        let a = index_axis(100, 5, true);
        assert!(a.ticks.iter().all(|t| *t <= 0.0));
        assert_eq!(a.labels[0], "0");
        assert_eq!(a.lo, -99.5);
    }
}
