//! Draws the Rust GPU 101 logo with plotters and writes it to `notebooks/images/logo.png`.
//!
//! The lessons load this picture to blur it (3.0) and turn it black and white (3.1/3.2), so it
//! is drawn with sharp edges and many colours: a rust-coloured cog, a GPU chip with a grid of
//! coloured cores inside it, and "101" in segment digits. No font is needed.
//!
//! Run from the repository root:
//!
//! ```text
//! cargo run -p gpukit --example make_logo
//! ```
//!
//! An optional argument gives another output path.

use plotters::prelude::*;
use std::error::Error;
use std::f64::consts::PI;
use std::path::PathBuf;

/// Width of the logo in pixels.
const WIDTH: u32 = 640;
/// Height of the logo in pixels.
const HEIGHT: u32 = 400;

/// The cog's colour.
const RUST: RGBColor = RGBColor(206, 92, 38);
/// The chip's body.
const CHIP: RGBColor = RGBColor(34, 38, 48);
/// The chip's pins and the digits.
const METAL: RGBColor = RGBColor(214, 214, 206);

fn main() -> Result<(), Box<dyn Error>> {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(default_output);
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root)?;
        root.present()?;
    }
    let img = image::RgbImage::from_raw(WIDTH, HEIGHT, rgb).ok_or("buffer has the wrong size")?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    img.save(&out)?;
    println!("wrote {} ({WIDTH}x{HEIGHT})", out.display());
    Ok(())
}

/// `notebooks/images/logo.png` in the repository (two levels above this crate).
fn default_output() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = manifest
        .ancestors()
        .nth(2)
        .unwrap_or(&manifest)
        .to_path_buf();
    root.join("notebooks").join("images").join("logo.png")
}

/// Draws the whole logo on `root`.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    // Background: a vertical gradient from deep blue to violet.
    for y in 0..HEIGHT as i32 {
        let t = y as f64 / HEIGHT as f64;
        let c = RGBColor(
            lerp(18.0, 52.0, t),
            lerp(24.0, 30.0, t),
            lerp(58.0, 86.0, t),
        );
        root.draw(&Rectangle::new([(0, y), (WIDTH as i32, y + 1)], c.filled()))?;
    }

    // The cog: 14 teeth around a ring, centred on the chip.
    let (cx, cy) = (200.0, 200.0);
    root.draw(&Polygon::new(cog(cx, cy, 150.0, 125.0, 14), RUST.filled()))?;
    root.draw(&Circle::new(
        (cx as i32, cy as i32),
        104,
        RGBColor(24, 26, 40).filled(),
    ))?;

    // The chip: pins on four sides, then the body.
    let half = 72;
    let (x0, y0) = (cx as i32 - half, cy as i32 - half);
    let (x1, y1) = (cx as i32 + half, cy as i32 + half);
    for k in 0..8 {
        let p = x0 + 10 + k * 17;
        root.draw(&Rectangle::new([(p, y0 - 12), (p + 8, y0)], METAL.filled()))?;
        root.draw(&Rectangle::new([(p, y1), (p + 8, y1 + 12)], METAL.filled()))?;
        let q = y0 + 10 + k * 17;
        root.draw(&Rectangle::new([(x0 - 12, q), (x0, q + 8)], METAL.filled()))?;
        root.draw(&Rectangle::new([(x1, q), (x1 + 12, q + 8)], METAL.filled()))?;
    }
    root.draw(&Rectangle::new([(x0, y0), (x1, y1)], CHIP.filled()))?;

    // Cores: an 8 x 8 grid, each a different hue, like many small processors side by side.
    let cell = 16;
    let gx = x0 + (2 * half - 8 * cell) / 2;
    let gy = y0 + (2 * half - 8 * cell) / 2;
    for row in 0..8 {
        for col in 0..8 {
            let hue = (row * 8 + col) as f64 / 64.0;
            let light = 0.45 + 0.25 * ((row + col) % 2) as f64;
            let c = hsl(hue, 0.75, light);
            let px = gx + col * cell;
            let py = gy + row * cell;
            root.draw(&Rectangle::new(
                [(px + 2, py + 2), (px + cell - 2, py + cell - 2)],
                c.filled(),
            ))?;
        }
    }

    // "101" in segment digits on the right.
    // A "1" is only as wide as its stroke; the "0" is 64 wide; 30 pixels between digits.
    let digits = [(ONE, 14), (ZERO, 64), (ONE, 14)];
    let mut x = 419;
    for (segs, width) in digits {
        draw_digit(root, x, 130, width, segs)?;
        x += width + 30;
    }
    // An underline in the cog's colour.
    root.draw(&Rectangle::new([(390, 286), (600, 296)], RUST.filled()))?;
    Ok(())
}

/// Segments of a seven-segment digit: top, top-right, bottom-right, bottom, bottom-left, top-left, middle.
type Segments = [bool; 7];
const ZERO: Segments = [true, true, true, true, true, true, false];
const ONE: Segments = [false, true, true, false, false, false, false];

/// Draws one segment digit `w` pixels wide and 140 tall whose top-left corner is at (`x`, `y`).
fn draw_digit<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    x: i32,
    y: i32,
    w: i32,
    segs: Segments,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let (h, t) = (140, 14);
    let rects = [
        [(x, y), (x + w, y + t)],                             // top
        [(x + w - t, y), (x + w, y + h / 2)],                 // top right
        [(x + w - t, y + h / 2), (x + w, y + h)],             // bottom right
        [(x, y + h - t), (x + w, y + h)],                     // bottom
        [(x, y + h / 2), (x + t, y + h)],                     // bottom left
        [(x, y), (x + t, y + h / 2)],                         // top left
        [(x, y + h / 2 - t / 2), (x + w, y + h / 2 + t / 2)], // middle
    ];
    for (on, r) in segs.iter().zip(rects) {
        if *on {
            root.draw(&Rectangle::new(r, METAL.filled()))?;
        }
    }
    Ok(())
}

/// The outline of a cog with `teeth` teeth between radii `inner` and `outer`.
fn cog(cx: f64, cy: f64, outer: f64, inner: f64, teeth: usize) -> Vec<(i32, i32)> {
    let steps = teeth * 4;
    (0..steps)
        .map(|k| {
            let a = 2.0 * PI * k as f64 / steps as f64;
            // Two points out on the tooth, two points in the gap.
            let r = if k % 4 < 2 { outer } else { inner };
            (
                (cx + r * a.cos()).round() as i32,
                (cy + r * a.sin()).round() as i32,
            )
        })
        .collect()
}

/// Linear interpolation between two channel values, rounded to u8.
fn lerp(a: f64, b: f64, t: f64) -> u8 {
    (a + (b - a) * t).round().clamp(0.0, 255.0) as u8
}

/// Colour from hue, saturation and lightness (all in [0, 1]).
fn hsl(h: f64, s: f64, l: f64) -> RGBColor {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = (h.fract() * 6.0).rem_euclid(6.0);
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(to(r), to(g), to(b))
}
