//! Charts as documents: the SVG and PNG have the asked size and the expected marks, bad input
//! is an error, and the notebook gets the right content type.

use super::*;
use crate::array::Array;
use base64::Engine as _;

/// The first series colour as plotters writes it into SVG.
const C0: &str = "#0072B2";
/// The second series colour.
const C1: &str = "#D55E00";

/// The value of attribute `name` in the root `<svg>` tag.
fn root_attr(svg: &str, name: &str) -> u32 {
    let start = svg.find("<svg").expect("an <svg> tag");
    let tag = &svg[start..start + svg[start..].find('>').expect("tag end")];
    let key = format!(" {name}=\"");
    let at = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
}

/// The elements `<tag ...>` of the document.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    svg.match_indices(&open)
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
        .collect()
}

/// How many `<tag>` elements have `attr="value"`.
fn count(svg: &str, tag: &str, attr: &str, value: &str) -> usize {
    let needle = format!(" {attr}=\"{value}\"");
    elements(svg, tag)
        .iter()
        .filter(|e| e.contains(&needle))
        .count()
}

/// Whether the document has a `<text>` element reading `t`.
fn has_text(svg: &str, t: &str) -> bool {
    svg.split("<text ").skip(1).any(|e| {
        e.split_once('>')
            .and_then(|(_, rest)| rest.split_once("</text>"))
            .is_some_and(|(body, _)| body.trim() == t)
    })
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

fn wave(n: usize) -> (Vec<f64>, Vec<f64>) {
    let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
    let y = x.iter().map(|v| v.sin()).collect();
    (x, y)
}

#[test]
fn svg_and_png_have_the_requested_size() {
    let (x, y) = wave(40);
    let chart = line(&x, &y).unwrap();
    let svg = chart.to_svg().unwrap();
    assert_eq!(
        (root_attr(&svg, "width"), root_attr(&svg, "height")),
        DEFAULT_SIZE
    );
    assert_eq!(png_size(&chart.to_png().unwrap()), DEFAULT_SIZE);
    let small = chart.size(320, 240);
    let svg = small.to_svg().unwrap();
    assert_eq!(
        (root_attr(&svg, "width"), root_attr(&svg, "height")),
        (320, 240)
    );
    assert_eq!(png_size(&small.to_png().unwrap()), (320, 240));
    assert!(svg.trim_end().ends_with("</svg>"));
}

#[test]
fn a_line_series_is_one_polyline() {
    let (x, y) = wave(60);
    let y2: Vec<f64> = y.iter().map(|v| v * 0.5).collect();
    let svg = line(&x, &y)
        .unwrap()
        .line(&x, &y2, "")
        .unwrap()
        .to_svg()
        .unwrap();
    assert_eq!(count(&svg, "polyline", "stroke", C0), 1);
    assert_eq!(count(&svg, "polyline", "stroke", C1), 1);
    // A NaN breaks the line in two.
    let mut gap = y.clone();
    gap[30] = f64::NAN;
    let svg = line(&x, &gap).unwrap().to_svg().unwrap();
    assert_eq!(count(&svg, "polyline", "stroke", C0), 2);
}

#[test]
fn a_scatter_of_50_points_has_50_circles() {
    let (x, y) = wave(50);
    let svg = scatter(&x, &y).unwrap().to_svg().unwrap();
    assert_eq!(elements(&svg, "circle").len(), 50);
    assert_eq!(count(&svg, "circle", "fill", C0), 50);
    // A second series, and a legend dot per labelled series.
    let svg = scatter(&x, &y)
        .unwrap()
        .label("a")
        .scatter(&y, &x, "b")
        .unwrap()
        .to_svg()
        .unwrap();
    assert_eq!(count(&svg, "circle", "fill", C0), 51);
    assert_eq!(count(&svg, "circle", "fill", C1), 51);
    assert!(has_text(&svg, "a") && has_text(&svg, "b"));
}

#[test]
fn a_bar_chart_of_7_values_has_7_bars() {
    let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let values = [3u32, 5, 2, 8, 6, 1, 4];
    let svg = bar(&names, &values).unwrap().to_svg().unwrap();
    assert_eq!(count(&svg, "rect", "fill", C0), 7);
    for n in names {
        assert!(has_text(&svg, n), "label {n} missing");
    }
    // Negative and NaN values: a bar going down, no bar.
    let svg = bar(&["a", "b", "c"], &[1.0, -2.0, f64::NAN])
        .unwrap()
        .to_svg()
        .unwrap();
    assert_eq!(count(&svg, "rect", "fill", C0), 2);
}

#[test]
fn long_category_names_stand_upright() {
    let names: Vec<String> = (0..14).map(|i| format!("kernel_variant_{i}")).collect();
    let values: Vec<f64> = (0..14).map(|i| i as f64).collect();
    let svg = bar(&names, &values).unwrap().to_svg().unwrap();
    for n in &names {
        assert!(has_text(&svg, n), "{n} missing");
    }
    let turned = |svg: &str| {
        elements(svg, "text")
            .iter()
            .filter(|e| e.contains("rotate(270"))
            .count()
    };
    assert_eq!(turned(&svg), 14);
    assert_eq!(count(&svg, "rect", "fill", C0), 14);
    // Short names stay level.
    let svg = bar(&["a", "b"], &[1.0, 2.0]).unwrap().to_svg().unwrap();
    assert_eq!(turned(&svg), 0);
}

#[test]
fn a_histogram_of_10_bins_has_10_bars() {
    let data: Vec<f64> = (0..1000).map(|i| (i % 100) as f64).collect();
    let svg = hist(&data, 10).unwrap().to_svg().unwrap();
    assert_eq!(count(&svg, "rect", "fill", C0), 10);
    // Empty bins draw nothing: two clusters, 10 bins, 2 bars.
    let two = [0.0, 0.1, 0.2, 9.8, 9.9, 10.0, f64::NAN];
    let svg = hist(&two, 10).unwrap().to_svg().unwrap();
    assert_eq!(count(&svg, "rect", "fill", C0), 2);
}

#[test]
fn log_axes_label_powers_of_ten() {
    let x: Vec<f64> = (0..30).map(|i| 10f64.powf(i as f64 / 10.0)).collect();
    let svg = scatter(&x, &x).unwrap().log_x().log_y().to_svg().unwrap();
    assert_eq!(elements(&svg, "circle").len(), 30);
    for label in ["1", "10", "100"] {
        assert!(has_text(&svg, label), "{label} missing");
    }
    // A wide range: every label a power of ten (10⁰, 10², ...).
    let cube: Vec<f64> = x.iter().map(|v| v * v * v).collect();
    let svg = line(&x, &cube).unwrap().log_y().to_svg().unwrap();
    assert!(has_text(&svg, "10\u{2074}"), "10^4 missing");
    assert!(!has_text(&svg, "10000"));
    // Points at or below zero are left out of a log axis; none left is an error.
    let svg = scatter(&[1.0, 2.0, 3.0], &[-1.0, 0.0, 5.0])
        .unwrap()
        .log_y()
        .to_svg()
        .unwrap();
    assert_eq!(elements(&svg, "circle").len(), 1);
    let e = line(&[1.0, 2.0], &[-1.0, 0.0])
        .unwrap()
        .log_y()
        .to_svg()
        .unwrap_err();
    assert!(e.to_string().contains("log y axis"), "{e}");
    let svg = hist(&x, 8).unwrap().log_x().log_y().to_svg().unwrap();
    assert!(count(&svg, "rect", "fill", C0) > 0);
}

#[test]
fn titles_labels_and_legends_are_text() {
    let (x, y) = wave(20);
    let chart = line(&x, &y)
        .unwrap()
        .title("A title")
        .xlabel("time (s)")
        .ylabel("volts")
        .label("sine");
    let svg = chart.to_svg().unwrap();
    for t in ["A title", "time (s)", "volts", "sine"] {
        assert!(has_text(&svg, t), "{t} missing");
    }
    // The legend swatch is a second polyline in the series colour.
    assert_eq!(count(&svg, "polyline", "stroke", C0), 2);
    let hidden = chart.clone().legend(Legend::Hidden).to_svg().unwrap();
    assert!(!has_text(&hidden, "sine"));
    assert_eq!(count(&hidden, "polyline", "stroke", C0), 1);
    // Markup characters in text are escaped.
    let svg = chart.title("a < b & c").to_svg().unwrap();
    assert!(svg.contains("a &lt; b &amp; c"));
    // All-zero bars still get an axis.
    let svg = bar(&["a", "b"], &[0, 0]).unwrap().to_svg().unwrap();
    assert!(has_text(&svg, "a") && has_text(&svg, "b"));
}

#[test]
fn imshow_embeds_the_picture_and_a_colour_bar() {
    let img = ndarray::Array2::from_shape_fn((20, 30), |(r, c)| (r + c) as f64);
    let chart = imshow(&img).unwrap();
    let svg = chart.to_svg().unwrap();
    let images = elements(&svg, "image");
    assert_eq!(images.len(), 2, "picture and colour bar");
    assert!(images[0].contains("data:image/png;base64,"));
    // The picture is stretched with square pixels: 30 wide, 20 high.
    let attr = |e: &str, k: &str| -> f64 {
        let at = e.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
        e[at..at + e[at..].find('"').unwrap()].parse().unwrap()
    };
    let ratio = attr(images[0], "width") / attr(images[0], "height");
    assert!((ratio - 1.5).abs() < 0.02, "aspect {ratio}");
    // The small picture is embedded enlarged by a whole factor, pixels kept sharp.
    let b64 = images[0]
        .split("base64,")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let (pw, ph) = png_size(&png);
    assert!(
        pw > 30 && pw % 30 == 0 && ph % 20 == 0 && pw / 30 == ph / 20,
        "{pw}x{ph}"
    );
    assert!(images[0].contains("image-rendering:pixelated"));
    assert_eq!(
        png_size(&chart.clone().cmap(Colormap::Gray).to_png().unwrap()),
        DEFAULT_SIZE
    );

    let rgb = ndarray::Array3::<u8>::from_elem((16, 16, 3), 7);
    let svg = imshow(&rgb).unwrap().to_svg().unwrap();
    assert_eq!(
        elements(&svg, "image").len(),
        1,
        "no colour bar for colours"
    );
}

#[test]
fn an_rgb_image_lands_in_the_png_in_its_colour() {
    let mut rgb = ndarray::Array3::<u8>::zeros((40, 40, 3));
    rgb.slice_mut(ndarray::s![.., .., 0]).fill(255);
    let png = imshow(&rgb).unwrap().size(300, 300).to_png().unwrap();
    let decoded = image::load_from_memory(&png).unwrap().to_rgb8();
    let red = decoded.pixels().filter(|p| p.0 == [255, 0, 0]).count();
    let share = red as f64 / (300.0 * 300.0);
    assert!(share > 0.4 && share < 0.9, "red share {share}");
    assert_eq!(decoded.get_pixel(150, 140).0, [255, 0, 0]);
}

#[test]
fn gpukit_arrays_plot_like_host_data() {
    let x = Array::<f32>::linspace(0.0, 1.0, 25).unwrap();
    let y = (&x * &x).unwrap();
    let svg = scatter(&x, &y).unwrap().to_svg().unwrap();
    assert_eq!(elements(&svg, "circle").len(), 25);
    let img = Array::<f64>::zeros((4, 5)).unwrap();
    assert_eq!(
        elements(&imshow(&img).unwrap().to_svg().unwrap(), "image").len(),
        2
    );
    let counts = Array::<i32>::arange(0, 100).unwrap();
    assert!(hist(&counts, 5).unwrap().to_svg().is_ok());
}

#[test]
fn bad_input_is_a_clear_error() {
    let msg = |r: Result<Chart>| r.map(|_| ()).unwrap_err().to_string();
    let e = msg(line(&[1.0, 2.0, 3.0], &[1.0, 2.0]));
    assert!(e.contains("x has 3 values but y has 2"), "{e}");
    let empty: [f64; 0] = [];
    assert!(msg(scatter(&empty, &empty)).contains("x is empty"));
    let e = msg(line(&[f64::NAN, 1.0], &[2.0, f64::NAN]));
    assert!(e.contains("no point to plot"), "{e}");
    let e = msg(hist(&[1.0, 2.0], 0));
    assert!(e.contains("1 to 100000 bins; 0 were asked for"), "{e}");
    assert!(msg(hist(&[f64::NAN; 4], 3)).contains("no finite value"));
    let e = msg(bar(&["a", "b"], &[1.0]));
    assert!(e.contains("2 labels for 1 values"), "{e}");
    let e = msg(imshow(&[1.0, 2.0, 3.0]));
    assert!(e.contains("2-D array") && e.contains("[3]"), "{e}");
    let m = ndarray::Array2::<f64>::zeros((3, 3));
    assert!(msg(line(&m, &m)).contains("one-dimensional"));

    let (x, y) = wave(10);
    let e = msg(hist(&y, 5).unwrap().line(&x, &y, "more"));
    assert!(e.contains("only to a line or scatter chart"), "{e}");
    let e = line(&x, &y).unwrap().size(0, 10).to_svg().unwrap_err();
    assert!(e.to_string().contains("0x10"), "{e}");
    let e = bar(&["a"], &[1.0]).unwrap().log_x().to_png().unwrap_err();
    assert!(e.to_string().contains("categories"), "{e}");
    let e = imshow(&m).unwrap().log_y().to_svg().unwrap_err();
    assert!(
        e.to_string().contains("log_x and log_y do not apply"),
        "{e}"
    );
    let e = line(&x, &y).unwrap().save("/tmp/chart.jpeg").unwrap_err();
    assert!(e.to_string().contains(".svg or .png"), "{e}");
}

#[test]
fn notebooks_get_svg_png_or_the_error() {
    let (x, y) = wave(30);
    let text = line(&x, &y).unwrap().display_text();
    assert!(
        text.starts_with("EVCXR_BEGIN_CONTENT image/svg+xml\n<svg"),
        "{}",
        &text[..80]
    );
    assert!(text.ends_with("</svg>\nEVCXR_END_CONTENT\n"));

    let text = line(&x, &y).unwrap().png().display_text();
    assert!(text.starts_with("EVCXR_BEGIN_CONTENT image/png\n"));
    let b64 = text.lines().nth(1).unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert_eq!(png_size(&png), DEFAULT_SIZE);

    // Many points go as PNG unless SVG is asked for.
    let n = AUTO_PNG_POINTS + 1;
    let many: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let big = scatter(&many, &many).unwrap();
    assert!(big
        .display_text()
        .starts_with("EVCXR_BEGIN_CONTENT image/png\n"));
    assert_eq!(
        format!("{big:?}"),
        "Chart(a scatter chart, 1 series, 640x400)"
    );

    let text = line(&x, &y).unwrap().size(1, 1).display_text();
    assert!(text.starts_with("EVCXR_BEGIN_CONTENT text/plain\ncannot draw this chart"));
}

#[test]
fn save_writes_svg_and_png_files() {
    let dir = std::env::temp_dir().join(format!("gpukit-plot-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (x, y) = wave(10);
    let chart = line(&x, &y).unwrap();
    chart.save(dir.join("c.svg")).unwrap();
    chart.save(dir.join("c.PNG")).unwrap();
    let svg = std::fs::read_to_string(dir.join("c.svg")).unwrap();
    assert_eq!(root_attr(&svg, "width"), DEFAULT_SIZE.0);
    assert_eq!(
        png_size(&std::fs::read(dir.join("c.PNG")).unwrap()),
        DEFAULT_SIZE
    );
    let e = chart.save("/no/such/dir/c.svg").unwrap_err();
    assert!(
        e.to_string().contains("cannot write /no/such/dir/c.svg"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ylim_sets_the_scale_and_never_hides_data() {
    let x = [0.0, 1.0, 2.0, 3.0];
    let half = [10.0, 30.0, 50.0, 20.0];
    let free = line(&x, &half).unwrap().to_svg().unwrap();
    assert!(!has_text(&free, "100"));
    let fixed = line(&x, &half).unwrap().ylim(0.0, 100.0).to_svg().unwrap();
    assert!(
        has_text(&fixed, "0") && has_text(&fixed, "100"),
        "ticks 0..100"
    );
    // Beyond the limits the axis widens instead of cutting the line off.
    let over = line(&x, &[10.0, 30.0, 160.0, 20.0])
        .unwrap()
        .ylim(0.0, 100.0)
        .to_svg()
        .unwrap();
    assert!(has_text(&over, "150"), "the axis reaches the data");
    for (chart, why) in [
        (line(&x, &half).unwrap().ylim(1.0, 1.0), "min < max"),
        (line(&x, &half).unwrap().ylim(f64::NAN, 1.0), "finite"),
        (line(&x, &half).unwrap().log_y().ylim(0.0, 10.0), "positive"),
        (
            imshow(&ndarray::Array2::<f64>::zeros((4, 4)))
                .unwrap()
                .ylim(0.0, 1.0),
            "image",
        ),
    ] {
        let e = chart.to_png().unwrap_err().to_string();
        assert!(e.contains("ylim(") && e.contains(why), "{e}");
    }
}
