//! Colour maps for [`imshow`](super::imshow) and the chart colours of series.

/// How [`imshow`](super::imshow) turns a scalar into a colour (low values first).
///
/// The perceptually uniform maps (viridis, magma, inferno, plasma) read well in grey and for
/// colour-blind readers; `Coolwarm` is diverging, for data centred on zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Colormap {
    /// Dark blue through green to yellow (the default).
    #[default]
    Viridis,
    /// Black through purple and red to pale yellow.
    Magma,
    /// Black through purple and orange to pale yellow.
    Inferno,
    /// Blue through magenta to yellow.
    Plasma,
    /// Black to white.
    Gray,
    /// Blue through light grey to red (diverging).
    Coolwarm,
}

/// Anchor colours evenly spaced over `[0, 1]`, interpolated linearly in between.
const VIRIDIS: &[[u8; 3]] = &[
    [0x44, 0x01, 0x54],
    [0x48, 0x25, 0x76],
    [0x41, 0x44, 0x87],
    [0x35, 0x60, 0x8d],
    [0x2a, 0x78, 0x8e],
    [0x21, 0x90, 0x8c],
    [0x22, 0xa8, 0x84],
    [0x43, 0xbf, 0x71],
    [0x7a, 0xd1, 0x51],
    [0xbb, 0xdf, 0x27],
    [0xfd, 0xe7, 0x25],
];
const MAGMA: &[[u8; 3]] = &[
    [0x00, 0x00, 0x04],
    [0x14, 0x0e, 0x36],
    [0x3b, 0x0f, 0x70],
    [0x64, 0x1a, 0x80],
    [0x8c, 0x29, 0x81],
    [0xb7, 0x37, 0x79],
    [0xde, 0x49, 0x68],
    [0xf7, 0x70, 0x5c],
    [0xfe, 0x9f, 0x6d],
    [0xfe, 0xcf, 0x92],
    [0xfc, 0xfd, 0xbf],
];
const INFERNO: &[[u8; 3]] = &[
    [0x00, 0x00, 0x04],
    [0x16, 0x0b, 0x39],
    [0x42, 0x0a, 0x68],
    [0x6a, 0x17, 0x6e],
    [0x93, 0x26, 0x67],
    [0xbc, 0x37, 0x54],
    [0xdd, 0x51, 0x3a],
    [0xf3, 0x78, 0x19],
    [0xfc, 0xa5, 0x0a],
    [0xf6, 0xd7, 0x46],
    [0xfc, 0xff, 0xa4],
];
const PLASMA: &[[u8; 3]] = &[
    [0x0d, 0x08, 0x87],
    [0x41, 0x04, 0x9d],
    [0x6a, 0x00, 0xa8],
    [0x8f, 0x0d, 0xa4],
    [0xb1, 0x2a, 0x90],
    [0xcc, 0x47, 0x78],
    [0xe1, 0x64, 0x62],
    [0xf2, 0x84, 0x4b],
    [0xfc, 0xa6, 0x36],
    [0xfc, 0xce, 0x25],
    [0xf0, 0xf9, 0x21],
];
const GRAY: &[[u8; 3]] = &[[0, 0, 0], [255, 255, 255]];
const COOLWARM: &[[u8; 3]] = &[
    [59, 76, 192],
    [141, 176, 254],
    [221, 221, 221],
    [244, 154, 123],
    [180, 4, 38],
];

impl Colormap {
    /// The map's name as notebooks write it (`"viridis"`).
    pub fn name(self) -> &'static str {
        match self {
            Colormap::Viridis => "viridis",
            Colormap::Magma => "magma",
            Colormap::Inferno => "inferno",
            Colormap::Plasma => "plasma",
            Colormap::Gray => "gray",
            Colormap::Coolwarm => "coolwarm",
        }
    }

    fn anchors(self) -> &'static [[u8; 3]] {
        match self {
            Colormap::Viridis => VIRIDIS,
            Colormap::Magma => MAGMA,
            Colormap::Inferno => INFERNO,
            Colormap::Plasma => PLASMA,
            Colormap::Gray => GRAY,
            Colormap::Coolwarm => COOLWARM,
        }
    }

    /// The colour at `t` in `[0, 1]` (clamped) as RGB bytes.
    pub fn rgb(self, t: f64) -> [u8; 3] {
        let anchors = self.anchors();
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let pos = t * (anchors.len() - 1) as f64;
        let i = (pos.floor() as usize).min(anchors.len() - 2);
        let f = pos - i as f64;
        let (a, b) = (anchors[i], anchors[i + 1]);
        std::array::from_fn(|c| {
            (f64::from(a[c]) + (f64::from(b[c]) - f64::from(a[c])) * f).round() as u8
        })
    }
}

/// The colours of successive series: the Okabe–Ito palette, distinct for colour-blind readers,
/// the pale yellow last.
pub(crate) const SERIES_COLORS: &[[u8; 3]] = &[
    [0, 114, 178],   // blue
    [213, 94, 0],    // vermillion
    [0, 158, 115],   // bluish green
    [230, 159, 0],   // orange
    [204, 121, 167], // reddish purple
    [86, 180, 233],  // sky blue
    [0, 0, 0],       // black
    [240, 228, 66],  // yellow
];

/// The colour of the `i`-th series (the palette repeats).
pub(crate) fn series_color(i: usize) -> [u8; 3] {
    SERIES_COLORS[i % SERIES_COLORS.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_run_from_first_to_last_anchor() {
        assert_eq!(Colormap::Viridis.rgb(0.0), [0x44, 0x01, 0x54]);
        assert_eq!(Colormap::Viridis.rgb(1.0), [0xfd, 0xe7, 0x25]);
        assert_eq!(Colormap::Viridis.rgb(7.0), [0xfd, 0xe7, 0x25]);
        assert_eq!(Colormap::Gray.rgb(0.5), [128, 128, 128]);
        assert_eq!(Colormap::Gray.rgb(f64::NAN), [0, 0, 0]);
        assert_eq!(Colormap::Coolwarm.rgb(0.5), [221, 221, 221]);
        assert_eq!(Colormap::default(), Colormap::Viridis);
    }

    #[test]
    fn viridis_gets_lighter() {
        let lum = |c: [u8; 3]| 0.3 * c[0] as f64 + 0.59 * c[1] as f64 + 0.11 * c[2] as f64;
        let mut last = -1.0;
        for i in 0..=50 {
            let l = lum(Colormap::Viridis.rgb(i as f64 / 50.0));
            assert!(l > last, "viridis not monotone at {i}");
            last = l;
        }
    }

    #[test]
    fn series_colours_are_distinct() {
        for i in 0..SERIES_COLORS.len() {
            for j in 0..i {
                assert_ne!(series_color(i), series_color(j));
            }
        }
        assert_eq!(series_color(SERIES_COLORS.len()), series_color(0));
    }
}
