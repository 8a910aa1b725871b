//! The bitmap gpukit draws PNG charts on: a plotters back end over an RGB buffer that smooths
//! lines and dots (coverage from the distance to the shape, so edges are anti-aliased) and
//! places text glyph by glyph with the font's own metrics and bearings.
//!
//! plotters' own bitmap back end draws lines without anti-aliasing and sets text glyphs
//! without their side bearings (letters then sit unevenly); SVG output is drawn by plotters'
//! SVG back end and rendered by the viewer, so this file concerns PNG only.

use super::font;
use ab_glyph::{point, Font, PxScale, ScaleFont};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use std::fmt;

/// Above this many pixels in a path's bounding box, segments blend one by one instead of
/// through one coverage buffer (joints then blend twice, which only shows on translucent lines).
const MAX_COVERAGE_BUFFER: usize = 1 << 22;

/// An RGB bitmap, row-major, 3 bytes per pixel.
pub(crate) struct Canvas<'a> {
    buf: &'a mut [u8],
    w: u32,
    h: u32,
}

/// What can go wrong on a canvas: only a buffer of the wrong size.
#[derive(Debug)]
pub(crate) struct CanvasError(String);

impl fmt::Display for CanvasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CanvasError {}

type DrawResult = Result<(), DrawingErrorKind<CanvasError>>;

impl<'a> Canvas<'a> {
    /// A canvas over `buf`, which must hold `w * h * 3` bytes.
    pub(crate) fn new(buf: &'a mut [u8], w: u32, h: u32) -> Result<Canvas<'a>, CanvasError> {
        if buf.len() != w as usize * h as usize * 3 {
            return Err(CanvasError(format!(
                "a {w}x{h} canvas needs {} bytes, the buffer has {}",
                w as usize * h as usize * 3,
                buf.len()
            )));
        }
        Ok(Canvas { buf, w, h })
    }

    /// Blends `rgb` with opacity `a` (0..=1) over pixel `(x, y)`; outside the canvas, nothing.
    fn blend(&mut self, x: i32, y: i32, rgb: (u8, u8, u8), a: f64) {
        if x < 0 || y < 0 || x >= self.w as i32 || y >= self.h as i32 || a <= 0.0 {
            return;
        }
        let i = (y as usize * self.w as usize + x as usize) * 3;
        let a = a.min(1.0);
        for (c, s) in [rgb.0, rgb.1, rgb.2].into_iter().enumerate() {
            let d = f64::from(self.buf[i + c]);
            self.buf[i + c] = (d + (f64::from(s) - d) * a).round() as u8;
        }
    }

    /// The pixel box `(x0, y0, x1, y1)` (inclusive) around `pts` grown by `grow`, clipped to the
    /// canvas; None when it falls outside.
    fn clip_box(&self, pts: &[BackendCoord], grow: i32) -> Option<(i32, i32, i32, i32)> {
        let x0 = pts.iter().map(|p| p.0).min()? - grow;
        let x1 = pts.iter().map(|p| p.0).max()? + grow;
        let y0 = pts.iter().map(|p| p.1).min()? - grow;
        let y1 = pts.iter().map(|p| p.1).max()? + grow;
        let (x0, y0) = (x0.max(0), y0.max(0));
        let (x1, y1) = (x1.min(self.w as i32 - 1), y1.min(self.h as i32 - 1));
        (x0 <= x1 && y0 <= y1).then_some((x0, y0, x1, y1))
    }

    /// Strokes the polyline `pts` with a smooth edge, `width` pixels wide.
    fn stroke(&mut self, pts: &[BackendCoord], width: u32, color: BackendColor) {
        if pts.is_empty() || color.alpha <= 0.0 {
            return;
        }
        let half = f64::from(width.max(1)) / 2.0;
        let grow = half.ceil() as i32 + 1;
        let Some((bx0, by0, bx1, by1)) = self.clip_box(pts, grow) else {
            return;
        };
        let bw = (bx1 - bx0 + 1) as usize;
        let bh = (by1 - by0 + 1) as usize;
        let segments: Vec<(BackendCoord, BackendCoord)> = if pts.len() == 1 {
            vec![(pts[0], pts[0])]
        } else {
            pts.windows(2).map(|s| (s[0], s[1])).collect()
        };
        let mut coverage = (bw * bh <= MAX_COVERAGE_BUFFER).then(|| vec![0f32; bw * bh]);
        for (a, b) in segments {
            let Some((x0, y0, x1, y1)) = self.clip_box(&[a, b], grow) else {
                continue;
            };
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = (half + 0.5 - segment_distance((x, y), a, b)).clamp(0.0, 1.0);
                    if c <= 0.0 {
                        continue;
                    }
                    match &mut coverage {
                        Some(cov) => {
                            let i = (y - by0) as usize * bw + (x - bx0) as usize;
                            cov[i] = cov[i].max(c as f32);
                        }
                        None => self.blend(x, y, color.rgb, c * color.alpha),
                    }
                }
            }
        }
        if let Some(cov) = coverage {
            for (i, &c) in cov.iter().enumerate() {
                if c > 0.0 {
                    let (x, y) = (bx0 + (i % bw) as i32, by0 + (i / bw) as i32);
                    self.blend(x, y, color.rgb, f64::from(c) * color.alpha);
                }
            }
        }
    }
}

/// The distance from pixel centre `p` to the segment `a`–`b`.
fn segment_distance(p: BackendCoord, a: BackendCoord, b: BackendCoord) -> f64 {
    let (px, py) = (f64::from(p.0), f64::from(p.1));
    let (ax, ay) = (f64::from(a.0), f64::from(a.1));
    let (dx, dy) = (f64::from(b.0) - ax, f64::from(b.1) - ay);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((px - ax) * dx + (py - ay) * dy) / len2).clamp(0.0, 1.0)
    };
    ((px - ax - t * dx).powi(2) + (py - ay - t * dy).powi(2)).sqrt()
}

impl DrawingBackend for Canvas<'_> {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        (self.w, self.h)
    }

    fn ensure_prepared(&mut self) -> DrawResult {
        Ok(())
    }

    fn present(&mut self) -> DrawResult {
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> DrawResult {
        self.blend(point.0, point.1, color.rgb, color.alpha);
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> DrawResult {
        self.stroke(&[from, to], style.stroke_width(), style.color());
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> DrawResult {
        let color = style.color();
        let (x0, x1) = (
            upper_left.0.min(bottom_right.0),
            upper_left.0.max(bottom_right.0),
        );
        let (y0, y1) = (
            upper_left.1.min(bottom_right.1),
            upper_left.1.max(bottom_right.1),
        );
        if fill {
            for y in y0.max(0)..=y1.min(self.h as i32 - 1) {
                for x in x0.max(0)..=x1.min(self.w as i32 - 1) {
                    self.blend(x, y, color.rgb, color.alpha);
                }
            }
        } else {
            let corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)];
            self.stroke(&corners, style.stroke_width(), color);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> DrawResult {
        let pts: Vec<BackendCoord> = path.into_iter().collect();
        if pts.len() >= 2 {
            self.stroke(&pts, style.stroke_width(), style.color());
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> DrawResult {
        let color = style.color();
        let r = f64::from(radius);
        let half = f64::from(style.stroke_width().max(1)) / 2.0;
        let reach = radius as i32 + half.ceil() as i32 + 1;
        for y in center.1 - reach..=center.1 + reach {
            for x in center.0 - reach..=center.0 + reach {
                let d = f64::from(x - center.0).hypot(f64::from(y - center.1));
                let c = if fill {
                    r + 0.5 - d
                } else {
                    half + 0.5 - (d - r).abs()
                };
                self.blend(x, y, color.rgb, c.clamp(0.0, 1.0) * color.alpha);
            }
        }
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> DrawResult {
        let color = style.color();
        if color.alpha <= 0.0 || text.is_empty() {
            return Ok(());
        }
        let face = font::face()
            .map_err(|e| DrawingErrorKind::FontError(Box::new(CanvasError(e.to_string()))))?;
        let scale = PxScale::from(style.size() as f32);
        let scaled = face.as_scaled(scale);
        // Lay the glyphs out along the baseline as plotters measures them: advances and kerning.
        let mut caret = 0f32;
        let mut prev = None;
        let mut glyphs = Vec::with_capacity(text.len());
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                caret += scaled.kern(p, id);
            }
            glyphs.push((id, caret));
            caret += scaled.h_advance(id);
            prev = Some(id);
        }
        let cap = face
            .outline(scaled.glyph_id('H'))
            .map_or(0.63 * scale.y, |o| {
                o.bounds.height().abs() * scaled.v_scale_factor()
            });
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -caret / 2.0,
            HPos::Right => -caret,
        };
        let baseline = match style.anchor().v_pos {
            VPos::Top => cap,
            VPos::Center => cap / 2.0,
            VPos::Bottom => scaled.descent(),
        };
        let trans = style.transform();
        for (id, x) in glyphs {
            let glyph = id.with_scale_and_position(scale, point(x + dx, baseline));
            let Some(outline) = face.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|gx, gy, c| pixels.push((gx, gy, c)));
            for (gx, gy, c) in pixels {
                let (lx, ly) = (
                    bounds.min.x as i32 + gx as i32,
                    bounds.min.y as i32 + gy as i32,
                );
                let (rx, ry) = trans.transform(lx, ly);
                self.blend(
                    pos.0 + rx,
                    pos.1 + ry,
                    color.rgb,
                    f64::from(c) * color.alpha,
                );
            }
        }
        Ok(())
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, (iw, ih): (u32, u32), src: &[u8]) -> DrawResult {
        if src.len() < iw as usize * ih as usize * 3 {
            return Err(DrawingErrorKind::DrawingError(CanvasError(format!(
                "a {iw}x{ih} RGB picture needs {} bytes, it has {}",
                iw as usize * ih as usize * 3,
                src.len()
            ))));
        }
        for y in 0..ih as i32 {
            let ty = pos.1 + y;
            if ty < 0 || ty >= self.h as i32 {
                continue;
            }
            for x in 0..iw as i32 {
                let tx = pos.0 + x;
                if tx < 0 || tx >= self.w as i32 {
                    continue;
                }
                let s = (y as usize * iw as usize + x as usize) * 3;
                let d = (ty as usize * self.w as usize + tx as usize) * 3;
                self.buf[d..d + 3].copy_from_slice(&src[s..s + 3]);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;

    fn canvas_rgb(
        w: u32,
        h: u32,
        f: impl FnOnce(&DrawingArea<Canvas<'_>, plotters::coord::Shift>),
    ) -> Vec<u8> {
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = Canvas::new(&mut buf, w, h).unwrap().into_drawing_area();
            f(&root);
        }
        buf
    }

    fn px(buf: &[u8], w: u32, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * w + x) * 3) as usize;
        [buf[i], buf[i + 1], buf[i + 2]]
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_refused() {
        let mut buf = vec![0u8; 10];
        assert!(Canvas::new(&mut buf, 2, 2).is_err());
    }

    #[test]
    fn lines_are_solid_in_the_middle_and_soft_at_the_edge() {
        let buf = canvas_rgb(40, 40, |root| {
            root.draw(&PathElement::new(
                vec![(0, 0), (39, 39)],
                Color::stroke_width(&BLACK, 3),
            ))
            .unwrap();
        });
        assert_eq!(px(&buf, 40, 20, 20), [0, 0, 0]);
        assert_eq!(px(&buf, 40, 30, 5), [255, 255, 255]);
        // Beside the diagonal: partly covered, neither black nor white.
        let edge = px(&buf, 40, 22, 20)[0];
        assert!(edge > 0 && edge < 255, "edge pixel {edge}");
    }

    #[test]
    fn dots_rects_and_bitmaps_land_where_asked() {
        let buf = canvas_rgb(30, 30, |root| {
            root.draw(&Circle::new((10, 10), 4, RED.filled())).unwrap();
            root.draw(&Rectangle::new([(20, 20), (25, 25)], BLUE.filled()))
                .unwrap();
            root.draw(
                &plotters::element::BitMapElement::with_owned_buffer(
                    (0, 28),
                    (2, 1),
                    vec![0, 255, 0, 0, 255, 0],
                )
                .unwrap(),
            )
            .unwrap();
        });
        assert_eq!(px(&buf, 30, 10, 10), [255, 0, 0]);
        assert_eq!(px(&buf, 30, 10, 16), [255, 255, 255]);
        assert_eq!(px(&buf, 30, 25, 25), [0, 0, 255]);
        assert_eq!(px(&buf, 30, 26, 26), [255, 255, 255]);
        assert_eq!(px(&buf, 30, 1, 28), [0, 255, 0]);
    }

    #[test]
    fn text_is_drawn_inside_its_measured_box() {
        font::ensure_font().unwrap();
        let style = font::text(20.0);
        let (tw, _) = font::text_size("Hello", &style);
        let buf = canvas_rgb(120, 40, |root| {
            root.draw(&Text::new(
                "Hello",
                (10, 20),
                style.pos(plotters::style::text_anchor::Pos::new(
                    HPos::Left,
                    VPos::Center,
                )),
            ))
            .unwrap();
        });
        let dark: Vec<(u32, u32)> = (0..40)
            .flat_map(|y| (0..120).map(move |x| (x, y)))
            .filter(|&(x, y)| px(&buf, 120, x, y)[0] < 128)
            .collect();
        assert!(dark.len() > 40, "{} dark pixels", dark.len());
        let (min_x, max_x) = (
            dark.iter().map(|p| p.0).min().unwrap(),
            dark.iter().map(|p| p.0).max().unwrap(),
        );
        let (min_y, max_y) = (
            dark.iter().map(|p| p.1).min().unwrap(),
            dark.iter().map(|p| p.1).max().unwrap(),
        );
        assert!(
            min_x >= 10 && max_x <= 10 + tw,
            "x {min_x}..{max_x}, width {tw}"
        );
        // Capitals centred on the anchor line.
        assert!(
            min_y < 20 && max_y > 20 && (min_y + max_y) as i32 / 2 - 20 <= 1,
            "y {min_y}..{max_y}"
        );
    }
}
