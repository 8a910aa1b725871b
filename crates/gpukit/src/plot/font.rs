//! The one font of gpukit's charts: a subset of DejaVu Sans shipped inside the crate
//! (`fonts/`, with its licence), registered with plotters' ab_glyph text renderer. Bitmaps need
//! no system font or fontconfig; SVG names the same family, falling back to the viewer's
//! sans-serif, while the layout is measured with the shipped font.

use crate::error::{Error, Result};
use plotters::style::{FontStyle, IntoFont, RGBColor, TextStyle};
use std::sync::OnceLock;

/// The family name charts use; also the CSS `font-family` written into SVG.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

/// DejaVu Sans, cut to Latin, Greek, punctuation, super/subscripts and common maths signs.
static FONT: &[u8] = include_bytes!("fonts/DejaVuSans-subset.ttf");

/// The colour of all text.
pub(crate) const TEXT: RGBColor = RGBColor(38, 38, 38);

/// Registers the shipped font with plotters (once per process).
pub(crate) fn ensure_font() -> Result<()> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the font shipped with gpukit could not be read".to_string())
        })
        .clone()
        .map_err(Error::Other)
}

/// The shipped font, parsed once, for drawing glyphs on the PNG canvas.
pub(crate) fn face() -> Result<ab_glyph::FontRef<'static>> {
    static FACE: OnceLock<Option<ab_glyph::FontRef<'static>>> = OnceLock::new();
    FACE.get_or_init(|| ab_glyph::FontRef::try_from_slice(FONT).ok())
        .clone()
        .ok_or_else(|| Error::Other("the font shipped with gpukit could not be read".into()))
}

/// The text style of a given size (plotters' size unit: about 1.24 times the CSS em in px).
pub(crate) fn text(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&TEXT)
}

/// The width and height in pixels that `s` takes in style `style`.
pub(crate) fn text_size(s: &str, style: &TextStyle<'_>) -> (u32, u32) {
    style
        .font
        .box_size(s)
        .unwrap_or((8 * s.chars().count() as u32, 16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_font_measures_text() {
        ensure_font().unwrap();
        let style = text(15.0);
        let (w1, h) = text_size("1", &style);
        let (w4, _) = text_size("1234", &style);
        assert!((8..=20).contains(&h), "height {h}");
        assert!(w4 > 3 * w1, "{w1} {w4}");
        // Greek and the minus sign are in the subset: they have real advances.
        assert!(text_size("\u{3bc}s", &style).0 > w1);
        assert!(text_size("\u{2212}", &style).0 > 0);
    }
}
