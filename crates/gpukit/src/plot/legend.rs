//! The legend: a box in a corner of the plot listing the labelled series, placed where it
//! hides the fewest data points unless the chart says where.

use super::chart::Legend;
use super::font::{text, text_size};
use super::layout::{drawing_error, LABEL_FONT};
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// How an entry shows its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Swatch {
    /// A short line.
    Line,
    /// A dot.
    Dot,
    /// A small filled box.
    Bar,
}

/// One legend line: swatch, colour, label.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    label: String,
    swatch: Swatch,
    color: RGBColor,
}

impl Entry {
    pub(crate) fn new(label: &str, swatch: Swatch, [r, g, b]: [u8; 3]) -> Entry {
        Entry {
            label: label.to_string(),
            swatch,
            color: RGBColor(r, g, b),
        }
    }
}

const PAD: i32 = 8;
const SWATCH_W: i32 = 22;
const GAP: i32 = 8;
/// Distance between the legend box and the plot's edges.
const INSET: i32 = 10;

/// Adds points along a polyline (its vertices and points every few pixels between them) to
/// `out`, so that a legend avoids lines as well as dots.
pub(crate) fn sample_path(path: &[(i32, i32)], out: &mut Vec<(i32, i32)>) {
    out.extend(path.first());
    for w in path.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = ((b.0 - a.0).abs() + (b.1 - a.1).abs()) as usize;
        let steps = (len / 6).clamp(1, 200);
        for s in 1..=steps {
            let t = s as f64 / steps as f64;
            out.push((
                a.0 + ((b.0 - a.0) as f64 * t) as i32,
                a.1 + ((b.1 - a.1) as f64 * t) as i32,
            ));
        }
    }
}

/// Adds a grid of points covering the rectangle with corners `a` and `b` to `out`.
pub(crate) fn sample_rect(a: (i32, i32), b: (i32, i32), out: &mut Vec<(i32, i32)>) {
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    let mut y = y0;
    while y <= y1 {
        let mut x = x0;
        while x <= x1 {
            out.push((x, y));
            x += 6;
        }
        y += 6;
    }
}

/// Draws the legend for `entries` inside the plot area `(xr, yr)` (pixels), at `place`, or for
/// [`Legend::Best`] in the corner covering the fewest of `occupied`.
pub(crate) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    place: Legend,
    (xr, yr): (Range<i32>, Range<i32>),
    occupied: &[(i32, i32)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if entries.is_empty() || place == Legend::Hidden {
        return Ok(());
    }
    let style = text(LABEL_FONT);
    let (_, line_h) = text_size("Xg", &style);
    let row = line_h as i32 + 6;
    let widest = entries
        .iter()
        .map(|e| text_size(&e.label, &style).0)
        .max()
        .unwrap_or(0) as i32;
    let bw = PAD + SWATCH_W + GAP + widest + PAD + 2;
    let bh = PAD + row * entries.len() as i32 + PAD - 6;
    let corner = |p: Legend| -> (i32, i32) {
        let left = xr.start + INSET;
        let right = xr.end - INSET - bw;
        let upper = yr.start + INSET;
        let lower = yr.end - INSET - bh;
        match p {
            Legend::UpperLeft => (left, upper),
            Legend::LowerRight => (right, lower),
            Legend::LowerLeft => (left, lower),
            _ => (right, upper),
        }
    };
    let (x, y) = match place {
        Legend::Best => {
            let candidates = [
                Legend::UpperRight,
                Legend::UpperLeft,
                Legend::LowerRight,
                Legend::LowerLeft,
            ];
            let covered = |p: Legend| {
                let (x, y) = corner(p);
                occupied
                    .iter()
                    .filter(|&&(px, py)| px >= x && px <= x + bw && py >= y && py <= y + bh)
                    .count()
            };
            // The first corner wins ties, so a clear plot gets its legend at the top right.
            let best = candidates
                .iter()
                .copied()
                .min_by_key(|&p| covered(p))
                .unwrap_or(Legend::UpperRight);
            corner(best)
        }
        p => corner(p),
    };
    let bg = Rectangle::new([(x, y), (x + bw, y + bh)], WHITE.mix(0.88).filled());
    let border = Rectangle::new(
        [(x, y), (x + bw, y + bh)],
        RGBColor(200, 200, 200).stroke_width(1),
    );
    root.draw(&bg).map_err(drawing_error)?;
    root.draw(&border).map_err(drawing_error)?;
    for (i, e) in entries.iter().enumerate() {
        let cy = y + PAD + row * i as i32 + line_h as i32 / 2;
        let sx = x + PAD;
        match e.swatch {
            Swatch::Line => root.draw(&PathElement::new(
                vec![(sx, cy), (sx + SWATCH_W, cy)],
                e.color.stroke_width(2),
            )),
            Swatch::Dot => root.draw(&Circle::new((sx + SWATCH_W / 2, cy), 4, e.color.filled())),
            Swatch::Bar => root.draw(&Rectangle::new(
                [(sx + 3, cy - 6), (sx + SWATCH_W - 3, cy + 6)],
                e.color.filled(),
            )),
        }
        .map_err(drawing_error)?;
        root.draw(&Text::new(
            e.label.clone(),
            (sx + SWATCH_W + GAP, cy),
            style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(drawing_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_cover_paths_and_rects() {
        let mut out = Vec::new();
        sample_path(&[(0, 0), (60, 0)], &mut out);
        assert_eq!(out.first(), Some(&(0, 0)));
        assert_eq!(out.last(), Some(&(60, 0)));
        assert!(out.len() >= 10);
        let mut out = Vec::new();
        sample_rect((0, 12), (12, 0), &mut out);
        assert_eq!(out.len(), 9);
    }
}
