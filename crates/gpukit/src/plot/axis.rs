//! Axes: the visible range, where the ticks go and what their labels read.
//!
//! Positions are in drawing units: the value itself on a linear axis, its base-10 logarithm on a
//! log axis, the category index on a bar chart's axis. Labels are computed once with the ticks,
//! so the label formatter only looks them up.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// The minus sign used in labels (U+2212, as wide as a plus; a hyphen looks too short).
const MINUS: char = '\u{2212}';

/// One axis of a chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// Start of the visible range, in drawing units.
    pub lo: f64,
    /// End of the visible range, in drawing units.
    pub hi: f64,
    /// Major tick positions (labelled, with a grid line), in drawing units.
    pub ticks: Vec<f64>,
    /// The label of each major tick.
    pub labels: Vec<String>,
    /// Minor tick positions (a fainter grid line, no label).
    pub minor: Vec<f64>,
}

impl Axis {
    /// A linear axis over `lo..hi` with at most `max_ticks` labelled ticks at 1, 2, 2.5 or 5
    /// times a power of ten.
    pub fn linear(lo: f64, hi: f64, max_ticks: usize) -> Axis {
        let (lo, hi) = widen(lo, hi);
        let step = nice_step(lo, hi, max_ticks);
        let ticks = ticks_in(lo, hi, step);
        let labels = format_linear(&ticks, step);
        Axis {
            lo,
            hi,
            ticks,
            labels,
            minor: Vec::new(),
        }
    }

    /// A log axis over `lo..hi`, given as base-10 logarithms, with at most `max_ticks` labels.
    ///
    /// Ticks go on powers of ten when the range holds two or more; a narrower range gets
    /// 1-2-5 ticks, or failing that linear ones. Minor ticks mark 2..9 times each power.
    pub fn log(lo: f64, hi: f64, max_ticks: usize) -> Axis {
        let (lo, hi) = if hi - lo < 1e-9 {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        };
        let max_ticks = max_ticks.max(2);
        let (first, last) = ((lo - 1e-9).ceil() as i64, (hi + 1e-9).floor() as i64);
        let decades = last - first + 1;
        let mut axis = Axis {
            lo,
            hi,
            ticks: Vec::new(),
            labels: Vec::new(),
            minor: Vec::new(),
        };
        if decades >= 2 {
            let every = ((decades as usize).div_ceil(max_ticks)).max(1) as i64;
            let exponents: Vec<i64> = (first..=last)
                .filter(|e| e.rem_euclid(every) == 0)
                .collect();
            // Plain numbers when every label is short, else all as powers (no mixing).
            let plain = exponents.iter().all(|e| (-3..=4).contains(e));
            axis.ticks = exponents.iter().map(|&e| e as f64).collect();
            axis.labels = exponents
                .iter()
                .map(|&e| power_of_ten_label(e, plain))
                .collect();
            if every == 1 && decades <= 4 {
                axis.minor = log_minor(lo, hi, &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
            } else if every == 1 {
                axis.minor = Vec::new();
            } else {
                axis.minor = (first..=last)
                    .filter(|e| e.rem_euclid(every) != 0)
                    .map(|e| e as f64)
                    .collect();
            }
            return axis;
        }
        let one_two_five = log_minor(lo, hi, &[1.0, 2.0, 5.0]);
        if one_two_five.len() >= 2 && one_two_five.len() <= max_ticks {
            axis.labels = one_two_five
                .iter()
                .map(|&t| format_significant(10f64.powf(t)))
                .collect();
            axis.ticks = one_two_five;
            axis.minor = log_minor(lo, hi, &[3.0, 4.0, 6.0, 7.0, 8.0, 9.0]);
            return axis;
        }
        // Less than a factor of ~2.5: linear ticks in value space, placed at their logarithms.
        let (vlo, vhi) = (10f64.powf(lo), 10f64.powf(hi));
        let step = nice_step(vlo, vhi, max_ticks);
        let values: Vec<f64> = ticks_in(vlo, vhi, step)
            .into_iter()
            .filter(|&v| v > 0.0)
            .collect();
        axis.labels = format_linear(&values, step);
        axis.ticks = values.iter().map(|v| v.log10()).collect();
        axis
    }

    /// An axis of categories at positions `0, 1, ..., n - 1`, labelling every `every`-th one.
    pub fn categories(names: &[String], every: usize) -> Axis {
        let every = every.max(1);
        let n = names.len();
        let (ticks, labels) = names
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0)
            .map(|(i, name)| (i as f64, name.clone()))
            .unzip();
        Axis {
            lo: -0.6,
            hi: n as f64 - 0.4,
            ticks,
            labels,
            minor: Vec::new(),
        }
    }

    /// The label of the tick at (or nearest to) `position`.
    pub fn label_at(&self, position: f64) -> String {
        self.ticks
            .iter()
            .zip(&self.labels)
            .min_by(|a, b| {
                let da = (a.0 - position).abs();
                let db = (b.0 - position).abs();
                da.total_cmp(&db)
            })
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }
}

/// An axis is plotters' coordinate along itself: values map linearly from `lo..hi` onto the
/// pixels, the mesh gets the major ticks (bold) and minor ticks (light). Labels come from
/// [`Axis::label_at`] through the mesh's label formatter.
impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value - self.lo) / (self.hi - self.lo);
        let px = f64::from(limit.0) + f64::from(limit.1 - limit.0) * t;
        px.round().clamp(-1e6, 1e6) as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// A range of nonzero width around `lo..hi` (a single value gets ±10 %, or ±1 at zero).
pub(crate) fn widen(lo: f64, hi: f64) -> (f64, f64) {
    if hi - lo > f64::EPSILON * lo.abs().max(hi.abs()) * 4.0 {
        (lo, hi)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    }
}

/// `lo..hi` with `fraction` of its width added on each side.
pub(crate) fn pad(lo: f64, hi: f64, fraction: f64) -> (f64, f64) {
    let (lo, hi) = widen(lo, hi);
    let p = (hi - lo) * fraction;
    (lo - p, hi + p)
}

/// The smallest step of 1, 2, 2.5 or 5 times a power of ten that puts at most `max_ticks`
/// ticks in `lo..=hi`.
fn nice_step(lo: f64, hi: f64, max_ticks: usize) -> f64 {
    let max_ticks = max_ticks.max(2);
    let raw = (hi - lo) / max_ticks as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    for power in [magnitude, magnitude * 10.0, magnitude * 100.0] {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let step = m * power;
            if step >= raw * (1.0 - 1e-9) && ticks_in(lo, hi, step).len() <= max_ticks {
                return step;
            }
        }
    }
    magnitude * 1000.0
}

/// The multiples of `step` inside `lo..=hi`.
fn ticks_in(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let eps = step * 1e-9;
    let first = ((lo - eps) / step).ceil() as i64;
    let last = ((hi + eps) / step).floor() as i64;
    (first..=last)
        .map(|i| {
            let t = i as f64 * step;
            // Snap values like 0.30000000000000004 and -0.0.
            if t.abs() < eps {
                0.0
            } else {
                t
            }
        })
        .collect()
}

/// Positions (log10) of `m * 10^d` for each mantissa in `mantissas`, inside `lo..=hi`.
fn log_minor(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for d in (lo.floor() as i64 - 1)..=(hi.ceil() as i64) {
        for m in mantissas {
            let t = (m * 10f64.powi(d as i32)).log10();
            if t >= lo - 1e-9 && t <= hi + 1e-9 {
                out.push(t);
            }
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

/// Labels for linear ticks `step` apart, all with the same number of decimals; very large or
/// very small numbers in scientific notation, each with the digits the step needs (`2.5e6`).
fn format_linear(ticks: &[f64], step: f64) -> Vec<String> {
    let step_exp = step.log10().floor() as i32;
    let mantissa = step / 10f64.powi(step_exp);
    let extra = i32::from((mantissa - 2.5).abs() < 1e-6);
    let max_abs = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    let decimals = (extra - step_exp).max(0);
    if max_abs >= 1e6 || decimals > 4 {
        return ticks
            .iter()
            .map(|&t| scientific(t, step_exp - extra))
            .collect();
    }
    let decimals = decimals as usize;
    ticks
        .iter()
        .map(|t| minus(&format!("{t:.decimals$}")))
        .collect()
}

/// `t` as `m e k`, with the mantissa's digits down to the power `last_digit`, trailing zeros
/// dropped (`2e7`, `1.5e-6`).
fn scientific(t: f64, last_digit: i32) -> String {
    if t == 0.0 {
        return "0".into();
    }
    let mut e = t.abs().log10().floor() as i32;
    let digits = (e - last_digit).max(0) as usize;
    let mut m = format!("{:.digits$}", t / 10f64.powi(e));
    if m.trim_start_matches('-').starts_with("10") {
        // 9.99... rounded up: one power higher.
        e += 1;
        m = format!("{:.digits$}", t / 10f64.powi(e));
    }
    let m = if m.contains('.') {
        m.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        m
    };
    minus(&format!("{m}e{e}"))
}

/// `10^e` as a label: plain (`0.001` to `10000`) when `plain` and `e` allows, else `10` with a
/// superscript exponent.
fn power_of_ten_label(e: i64, plain: bool) -> String {
    match e {
        -3..=-1 if plain => format!("0.{}1", "0".repeat((-e - 1) as usize)),
        0..=4 if plain => format!("1{}", "0".repeat(e as usize)),
        _ => {
            let sup: String = e
                .to_string()
                .chars()
                .map(|c| match c {
                    '-' => '\u{207B}',
                    '0' => '\u{2070}',
                    '1' => '\u{00B9}',
                    '2' => '\u{00B2}',
                    '3' => '\u{00B3}',
                    d => char::from_u32(0x2070 + d.to_digit(10).unwrap_or(0)).unwrap_or(d),
                })
                .collect();
            format!("10{sup}")
        }
    }
}

/// A value with up to three significant digits, trailing zeros dropped.
fn format_significant(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let e = v.abs().log10().floor() as i32;
    if !(-3..6).contains(&e) {
        let s = format!("{:.2e}", v);
        let (m, ex) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return minus(&format!("{m}e{ex}"));
    }
    let decimals = (2 - e).max(0) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    minus(&s)
}

/// Replaces a leading hyphen by a real minus sign.
fn minus(s: &str) -> String {
    match s.strip_prefix('-') {
        Some(rest) => format!("{MINUS}{rest}"),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_inside() {
        let a = Axis::linear(-0.3, 10.2, 6);
        assert_eq!(a.ticks, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(a.labels, ["0", "2", "4", "6", "8", "10"]);
        let a = Axis::linear(0.0, 1.0, 5);
        assert_eq!(a.labels, ["0.00", "0.25", "0.50", "0.75", "1.00"]);
        let a = Axis::linear(-2.0, 2.0, 5);
        assert_eq!(a.labels[0], "\u{2212}2");
        assert_eq!(a.labels[2], "0");
        let a = Axis::linear(0.0, 3e7, 4);
        assert_eq!(a.labels, ["0", "1e7", "2e7", "3e7"]);
        let a = Axis::linear(0.0, 2.5e-6, 6);
        assert_eq!(a.labels[1], "5e-7");
        assert_eq!(a.labels[3], "1.5e-6");
        let a = Axis::linear(0.0, 1e8, 6);
        assert_eq!(a.labels, ["0", "2e7", "4e7", "6e7", "8e7", "1e8"]);
    }

    #[test]
    fn a_single_value_gets_a_range() {
        let a = Axis::linear(5.0, 5.0, 5);
        assert!(a.lo < 5.0 && a.hi > 5.0 && !a.ticks.is_empty());
        let a = Axis::linear(0.0, 0.0, 5);
        assert!(a.lo < 0.0 && a.hi > 0.0);
    }

    #[test]
    fn log_ticks_on_powers_of_ten() {
        let a = Axis::log(-0.2, 3.2, 8);
        assert_eq!(a.ticks, [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(a.labels, ["1", "10", "100", "1000"]);
        assert!(a.minor.contains(&2f64.log10()));
        let a = Axis::log(-9.0, 9.0, 5);
        assert!(a.ticks.len() <= 5, "{:?}", a.ticks);
        assert!(
            a.labels.contains(&"10\u{2074}".to_string()),
            "{:?}",
            a.labels
        );
        assert!(
            a.labels.contains(&"10\u{207B}\u{2074}".to_string()),
            "{:?}",
            a.labels
        );
        assert!(
            a.labels.iter().all(|l| l.starts_with("10")),
            "{:?}",
            a.labels
        );
        // 100 .. 10^8: all as powers, not "100, 10000, 10⁶"; skipped decades get minor lines.
        let a = Axis::log(2.0, 8.0, 4);
        assert_eq!(a.labels[0], "10\u{b2}");
        assert!(a.minor.contains(&3.0), "{:?}", a.minor);
        let a = Axis::log(-3.0, -1.0, 5);
        assert_eq!(a.labels, ["0.001", "0.01", "0.1"]);
    }

    #[test]
    fn narrow_log_ranges_still_get_labels() {
        let a = Axis::log(0.1, 0.9, 6); // 1.26 .. 7.9
        assert_eq!(a.labels, ["2", "5"]);
        let a = Axis::log(2.0f64.log10(), 3.0f64.log10(), 5);
        assert!(a.ticks.len() >= 2, "{:?}", a.labels);
        assert!(
            a.labels.iter().all(|l| l.parse::<f64>().is_ok()),
            "{:?}",
            a.labels
        );
    }

    #[test]
    fn categories_and_label_lookup() {
        let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let a = Axis::categories(&names, 2);
        assert_eq!(a.ticks, [0.0, 2.0, 4.0]);
        assert_eq!(a.label_at(2.0), "c");
        assert_eq!(a.label_at(3.9), "e");
    }
}
