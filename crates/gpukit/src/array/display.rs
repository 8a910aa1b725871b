//! Text and HTML display, like CuPy's repr: `array([0., 1., 2.], dtype=float64, device=cuda:0)`.
//!
//! Numbers are formatted as NumPy formats them (shortest round-trip digits, at most 8 decimals,
//! a common width, scientific notation when magnitudes call for it), arrays of more than 1000
//! elements show three items at each end of every axis around `...`, and n-d arrays nest their
//! brackets as NumPy does. Displaying an array waits for its pending work but leaves any error
//! for the next `synchronize()`.

use super::{Array, Storage};
use crate::element::{DType, Element, Scalar};
use std::fmt;

/// Above this many elements the middle of each axis is elided.
const THRESHOLD: usize = 1000;
/// Items shown at each end of an elided axis.
const EDGE: usize = 3;
/// Line width NumPy wraps at.
const LINE_WIDTH: usize = 75;
/// Largest number of fractional digits shown.
const PRECISION: usize = 8;

impl<T: Element> Array<T> {
    /// The repr text, e.g. `array([0., 1., 2.], dtype=float64, device=cuda:0)`.
    pub fn repr(&self) -> String {
        let suffix = format!("dtype={}, device={}", T::DTYPE, self.device());
        match self.displayed_elements() {
            Ok((shown, values)) => render_shown(&shown, &values, self.shape(), &suffix),
            Err(e) => format!(
                "array(<unreadable: {e}>, shape={:?}, {suffix})",
                self.shape()
            ),
        }
    }

    /// The flat indices shown by the repr and their values. Only those are copied from a GPU,
    /// in contiguous runs, so displaying a huge array stays cheap.
    fn displayed_elements(&self) -> crate::error::Result<(Vec<usize>, Vec<T>)> {
        let mut shown = Vec::new();
        collect(self.shape(), 0, 0, self.size() > THRESHOLD, &mut shown);
        let values = match self.storage() {
            Storage::Cpu(v) => shown.iter().map(|&i| v[i]).collect(),
            Storage::Cuda { backend, slice } => {
                let mut values = Vec::with_capacity(shown.len());
                let mut k = 0;
                while k < shown.len() {
                    let start = shown[k];
                    let mut len = 1;
                    while k + len < shown.len() && shown[k + len] == start + len {
                        len += 1;
                    }
                    values.extend(backend.download_range(slice, start, len)?);
                    k += len;
                }
                values
            }
        };
        Ok((shown, values))
    }

    /// Shows the array in a notebook through evcxr's display protocol: `text/plain` (the repr)
    /// and `text/html` (shape, dtype, device and the repr).
    pub fn evcxr_display(&self) {
        let text = self.repr();
        let html = format!(
            "<div class=\"gpukit-array\"><div style=\"font-size:smaller;color:#666\">Array shape={:?} dtype={} device={} ({} bytes)</div><pre>{}</pre></div>",
            self.shape(),
            T::DTYPE,
            self.device(),
            self.nbytes(),
            html_escape(&text)
        );
        println!("EVCXR_BEGIN_CONTENT text/plain\n{text}\nEVCXR_END_CONTENT");
        println!("EVCXR_BEGIN_CONTENT text/html\n{html}\nEVCXR_END_CONTENT");
    }
}

impl<T: Element> fmt::Display for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl<T: Element> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The whole repr of `data` (C order) with `shape`, ending in `, {suffix})`.
#[cfg(test)]
fn render<T: Element>(data: &[T], shape: &[usize], suffix: &str) -> String {
    let mut shown = Vec::new();
    collect(
        shape,
        0,
        0,
        shape.iter().product::<usize>() > THRESHOLD,
        &mut shown,
    );
    let values: Vec<T> = shown.iter().map(|&i| data[i]).collect();
    render_shown(&shown, &values, shape, suffix)
}

/// The repr from the displayed elements only (`shown` flat indices, in display order).
fn render_shown<T: Element>(
    shown: &[usize],
    values: &[T],
    shape: &[usize],
    suffix: &str,
) -> String {
    let size: usize = shape.iter().product();
    if size == 0 {
        return if shape.len() == 1 {
            format!("array([], {suffix})")
        } else {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("array([], shape=({}), {suffix})", dims.join(", "))
        };
    }
    debug_assert_eq!(shown.len(), values.len());
    let words = format_values(values);
    if shape.is_empty() {
        return format!("array({}, {suffix})", words[0]);
    }
    let mut words = words.into_iter();
    let body = nest(shape, 0, "      ", size > THRESHOLD, &mut words);
    // NumPy moves the dtype to its own line when it would overflow the last one.
    let last_line = body.rsplit('\n').next().unwrap_or("");
    let last_len = if body.contains('\n') {
        last_line.len()
    } else {
        "array(".len() + body.len()
    } + 1;
    if last_len + 1 + suffix.len() + 1 > LINE_WIDTH {
        format!("array({body},\n      {suffix})")
    } else {
        format!("array({body}, {suffix})")
    }
}

/// The positions (along one axis) shown: all, or `EDGE` at each end around `None` (`...`).
fn positions(dim: usize, summarize: bool) -> Vec<Option<usize>> {
    if summarize && dim > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((dim - EDGE..dim).map(Some))
            .collect()
    } else {
        (0..dim).map(Some).collect()
    }
}

/// Flat indices of the displayed elements, in display order.
fn collect(shape: &[usize], axis: usize, base: usize, summarize: bool, out: &mut Vec<usize>) {
    if axis == shape.len() {
        out.push(base);
        return;
    }
    let stride: usize = shape[axis + 1..].iter().product();
    for p in positions(shape[axis], summarize).into_iter().flatten() {
        collect(shape, axis + 1, base + p * stride, summarize, out);
    }
}

/// Brackets, separators and line wrapping (NumPy's `_formatArray`).
fn nest(
    shape: &[usize],
    axis: usize,
    indent: &str,
    summarize: bool,
    words: &mut impl Iterator<Item = String>,
) -> String {
    let inner = format!("{indent} ");
    let pos = positions(shape[axis], summarize);
    let mut out = String::from("[");
    if axis + 1 == shape.len() {
        // As NumPy: one column is kept for the `,` after the array, one per enclosing `]`, and
        // one for the `,` or `]` after each word.
        let width = LINE_WIDTH - 1 - shape.len();
        let mut line_len = inner.len();
        for (k, p) in pos.into_iter().enumerate() {
            let word = match p {
                Some(_) => words.next().unwrap_or_default(),
                None => "...".to_string(),
            };
            if k > 0 {
                if line_len + 2 + word.len() > width {
                    out.push_str(",\n");
                    out.push_str(&inner);
                    line_len = inner.len();
                } else {
                    out.push_str(", ");
                    line_len += 2;
                }
            }
            out.push_str(&word);
            line_len += word.len();
        }
    } else {
        let blank_lines = shape.len() - axis - 1;
        for (k, p) in pos.into_iter().enumerate() {
            if k > 0 {
                out.push(',');
                out.push_str(&"\n".repeat(blank_lines));
                out.push_str(&inner);
            }
            match p {
                Some(_) => out.push_str(&nest(shape, axis + 1, &inner, summarize, words)),
                None => out.push_str("..."),
            }
        }
    }
    out.push(']');
    out
}

/// Formats values as NumPy does, padded to a common width.
pub(crate) fn format_values<T: Element>(values: &[T]) -> Vec<String> {
    let words: Vec<String> = match T::DTYPE {
        DType::F32 | DType::F64 => {
            let f: Vec<f64> = values
                .iter()
                .map(|v| match v.to_scalar() {
                    Scalar::Float(x) => x,
                    _ => 0.0,
                })
                .collect();
            return format_floats(&f, T::DTYPE == DType::F32);
        }
        DType::Complex64 | DType::Complex128 => {
            return format_complex_values(values, T::DTYPE == DType::Complex64)
        }
        DType::Bool => values
            .iter()
            .map(|v| match v.to_scalar() {
                Scalar::Bool(true) => "True".to_string(),
                _ => "False".to_string(),
            })
            .collect(),
        _ => values
            .iter()
            .map(|v| match v.to_scalar() {
                Scalar::Int(i) => i.to_string(),
                _ => String::new(),
            })
            .collect(),
    };
    pad_left(words)
}

/// Complex values as NumPy prints them in an array (`1.+2.j`, `0.5-1.j`): real parts padded on
/// the left, imaginary parts (with their sign) on the right.
fn format_complex_values<T: Element>(values: &[T], single: bool) -> Vec<String> {
    let (re, im): (Vec<f64>, Vec<f64>) = values
        .iter()
        .map(|v| match v.to_scalar() {
            Scalar::Complex(re, im) => (re, im),
            _ => (0.0, 0.0),
        })
        .unzip();
    let abs_im: Vec<f64> = im.iter().map(|v| v.abs()).collect();
    let re = format_floats(&re, single);
    let im_words = format_floats(&abs_im, single);
    let width = im_words.iter().map(|w| w.trim().len()).max().unwrap_or(0);
    re.iter()
        .zip(im_words.iter().zip(&im))
        .map(|(r, (i, v))| {
            let sign = if v.is_sign_negative() && !v.is_nan() {
                '-'
            } else {
                '+'
            };
            let i = format!("{}j", i.trim());
            format!("{r}{sign}{i:<w$}", w = width + 1)
        })
        .collect()
}

fn pad_left(words: Vec<String>) -> Vec<String> {
    let width = words.iter().map(|w| w.len()).max().unwrap_or(0);
    words.into_iter().map(|w| format!("{w:>width$}")).collect()
}

/// Shortest round-trip digits of `x` in scientific form: (negative, digits, exponent), so that
/// `x = 0.d1d2d3... * 10^(exp + 1)`, i.e. `d1.d2d3... * 10^exp`.
fn shortest(x: f64, is_f32: bool) -> (bool, String, i32) {
    let s = if is_f32 {
        format!("{:e}", x as f32)
    } else {
        format!("{x:e}")
    };
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    (negative, digits, exp.parse().unwrap_or(0))
}

/// Positional form with at most `PRECISION` decimals, trailing zeros trimmed, `.` kept.
fn positional(x: f64, is_f32: bool) -> String {
    let (_, digits, exp) = shortest(x, is_f32);
    let frac = (digits.len() as i32 - 1 - exp).max(0) as usize;
    let s = if frac <= PRECISION {
        if is_f32 {
            format!("{:.*}", frac, x as f32)
        } else {
            format!("{x:.frac$}")
        }
    } else {
        let s = format!("{x:.PRECISION$}");
        s.trim_end_matches('0').to_string()
    };
    if s.contains('.') {
        s
    } else {
        format!("{s}.")
    }
}

/// Fractional digits `x` needs in scientific form: its shortest round-trip digits, at most
/// `PRECISION` (then rounded, trailing zeros dropped).
fn scientific_digits(x: f64, is_f32: bool) -> usize {
    let (_, digits, _) = shortest(x, is_f32);
    if digits.len() <= PRECISION + 1 {
        return digits.len() - 1;
    }
    let s = format!("{:.*e}", PRECISION, x);
    let mantissa = s.split_once('e').map_or(s.as_str(), |(m, _)| m);
    mantissa
        .split_once('.')
        .map_or(0, |(_, f)| f.trim_end_matches('0').len())
}

/// Scientific form with `precision` fractional digits of the exact value (NumPy prints the
/// value's further digits rather than zeros): (mantissa like `-1.25`, exponent).
fn scientific(x: f64, precision: usize) -> (String, i32) {
    let s = format!("{x:.precision$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.to_string(), e.parse().unwrap_or(0))
}

fn format_floats(values: &[f64], is_f32: bool) -> Vec<String> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let nonzero: Vec<f64> = finite
        .iter()
        .map(|v| v.abs())
        .filter(|&v| v != 0.0)
        .collect();
    let exp_mode = if nonzero.is_empty() {
        false
    } else {
        let max = nonzero.iter().copied().fold(f64::MIN, f64::max);
        let min = nonzero.iter().copied().fold(f64::MAX, f64::min);
        max >= 1e8 || min < 1e-4 || max / min > 1e3
    };
    let special = |v: f64| -> String {
        if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    };
    let words: Vec<String> = if exp_mode {
        let precision = values
            .iter()
            .filter(|v| v.is_finite())
            .map(|&v| scientific_digits(v, is_f32))
            .max()
            .unwrap_or(0);
        let parts: Vec<Option<(String, i32)>> = values
            .iter()
            .map(|&v| v.is_finite().then(|| scientific(v, precision)))
            .collect();
        let exp_digits = parts
            .iter()
            .flatten()
            .map(|(_, e)| e.unsigned_abs().to_string().len().max(2))
            .max()
            .unwrap_or(2);
        values
            .iter()
            .zip(parts)
            .map(|(&v, p)| match p {
                Some((m, e)) => {
                    let m = if precision == 0 { format!("{m}.") } else { m };
                    let sign = if e < 0 { '-' } else { '+' };
                    format!("{m}e{sign}{:0>exp_digits$}", e.unsigned_abs())
                }
                None => special(v),
            })
            .collect()
    } else {
        let strs: Vec<Option<String>> = values
            .iter()
            .map(|&v| v.is_finite().then(|| positional(v, is_f32)))
            .collect();
        let pad_right = strs
            .iter()
            .flatten()
            .map(|s| s.split_once('.').map_or(0, |(_, f)| f.len()))
            .max()
            .unwrap_or(0);
        values
            .iter()
            .zip(strs)
            .map(|(&v, s)| match s {
                Some(s) => {
                    let frac_len = s.split_once('.').map_or(0, |(_, f)| f.len());
                    format!("{s}{}", " ".repeat(pad_right - frac_len))
                }
                None => special(v),
            })
            .collect()
    };
    pad_left(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r<T: Element>(data: &[T], shape: &[usize]) -> String {
        render(data, shape, "dtype=x, device=cpu")
    }

    #[test]
    fn floats_like_numpy() {
        assert_eq!(
            r(&[0.0f64, 1.0, 2.0], &[3]),
            "array([0., 1., 2.], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[0.5f64, 1.25], &[2]),
            "array([0.5 , 1.25], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[1.0f64, -2.5], &[2]),
            "array([ 1. , -2.5], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[1.0f64 / 3.0], &[1]),
            "array([0.33333333], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[0.1f32, 0.2], &[2]),
            "array([0.1, 0.2], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[1e-5f64, 1.0], &[2]),
            "array([1.e-05, 1.e+00], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[1.5e-5f64, 1.0], &[2]),
            "array([1.5e-05, 1.0e+00], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[f64::NAN, 1.0, f64::NEG_INFINITY], &[3]),
            "array([ nan,   1., -inf], dtype=x, device=cpu)"
        );
        assert_eq!(r(&[2.5f64], &[]), "array(2.5, dtype=x, device=cpu)");
    }

    #[test]
    fn ints_and_bools() {
        assert_eq!(
            r(&[1i64, -20, 300], &[3]),
            "array([  1, -20, 300], dtype=x, device=cpu)"
        );
        assert_eq!(
            r(&[true, false], &[2]),
            "array([ True, False], dtype=x, device=cpu)"
        );
    }

    #[test]
    fn nested_and_empty() {
        let d: Vec<i32> = (0..6).collect();
        assert_eq!(
            r(&d, &[2, 3]),
            "array([[0, 1, 2],\n       [3, 4, 5]], dtype=x, device=cpu)"
        );
        let d: Vec<i32> = (0..8).collect();
        assert_eq!(
            r(&d, &[2, 2, 2]),
            "array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], dtype=x, device=cpu)"
        );
        assert_eq!(r::<f64>(&[], &[0]), "array([], dtype=x, device=cpu)");
        assert_eq!(
            r::<f64>(&[], &[0, 3]),
            "array([], shape=(0, 3), dtype=x, device=cpu)"
        );
    }

    #[test]
    fn elides_and_wraps() {
        let d: Vec<i64> = (0..2000).collect();
        assert_eq!(
            r(&d, &[2000]),
            "array([   0,    1,    2, ..., 1997, 1998, 1999], dtype=x, device=cpu)"
        );
        let d: Vec<f64> = (0..30).map(f64::from).collect();
        assert_eq!(
            render(&d, &[30], "dtype=float64"),
            "array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n       26., 27., 28., 29.], dtype=float64)"
        );
        let d: Vec<i64> = (0..20).collect();
        let s = render(&d, &[20], "dtype=int64, device=cuda:0");
        assert_eq!(
            s,
            "array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n       17, 18, 19], dtype=int64, device=cuda:0)"
        );
        let d: Vec<i64> = (0..17).collect();
        let s = render(&d, &[17], "dtype=int64, device=cuda:0");
        assert_eq!(
            s,
            "array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16],\n      dtype=int64, device=cuda:0)"
        );
        let d: Vec<i64> = (0..10000).collect();
        let s = r(&d, &[100, 100]);
        assert!(s.contains("\n       ...,\n"), "{s}");
        assert!(
            s.contains("[9900, 9901, 9902, ..., 9997, 9998, 9999]]"),
            "{s}"
        );
    }
}
