//! Rolling statistics and `apply` against a naive window loop on random columns with nulls.

use super::*;
use crate::bitmap::Bitmap;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The naive window loop: pandas' definition, with the window's valid values summed in
/// order.
fn naive(x: &[f64], valid: &[bool], o: RollingOptions, op: u32) -> Vec<Option<f64>> {
    let n = x.len() as i64;
    (0..n)
        .map(|i| {
            let s = if o.center {
                i - (o.window / 2) as i64
            } else {
                i + 1 - o.window as i64
            };
            let e = (s + o.window as i64).min(n);
            let vals: Vec<f64> = (s.max(0)..e)
                .filter(|&j| valid[j as usize])
                .map(|j| x[j as usize])
                .collect();
            if vals.len() < o.min_periods {
                return None;
            }
            let sum: f64 = vals.iter().sum();
            Some(match op {
                SUM => sum,
                MEAN => sum / vals.len() as f64,
                MIN => vals.iter().copied().fold(f64::NAN, f64::min),
                _ => vals.iter().copied().fold(f64::NAN, f64::max),
            })
        })
        .collect()
}

fn host(c: &Column) -> Vec<Option<f64>> {
    let v = c.values::<f64>().unwrap().to_vec().unwrap();
    let ok = c
        .validity()
        .map_or(vec![true; v.len()], |b| b.to_bools().unwrap());
    v.into_iter().zip(ok).map(|(x, k)| k.then_some(x)).collect()
}

fn close(got: &[Option<f64>], want: &[Option<f64>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        match (g, w) {
            (Some(g), Some(w)) => assert!(
                (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                "{what} row {i}: {g} vs {w}"
            ),
            _ => assert_eq!(g.is_some(), w.is_some(), "{what} row {i}: {g:?} vs {w:?}"),
        }
    }
}

#[test]
fn statistics_match_a_naive_loop_on_random_windows_with_nulls() {
    let mut rng = StdRng::seed_from_u64(17);
    for trial in 0..120 {
        let n = match trial % 6 {
            0 => 0,
            1 => 1,
            _ => rng.random_range(2..200),
        };
        let window = rng.random_range(1..(n.max(1) + 5));
        let o = RollingOptions::new(window)
            .min_periods(rng.random_range(1..=window))
            .center(rng.random_bool(0.5));
        let x: Vec<i64> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
        let valid: Vec<bool> = (0..n).map(|_| rng.random_range(0..4) != 0).collect();
        let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let cpu = Device::Cpu;
        let col = Column::new(
            "requests",
            ColumnData::Int64(Array::from_slice_on(&x, &cpu).unwrap()),
            Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
        )
        .unwrap();
        let r = col.rolling(o);
        let what = |s: &str| format!("{s} n={n} {o:?}");
        close(
            &host(&r.sum().unwrap()),
            &naive(&xf, &valid, o, SUM),
            &what("sum"),
        );
        close(
            &host(&r.mean().unwrap()),
            &naive(&xf, &valid, o, MEAN),
            &what("mean"),
        );
        close(
            &host(&r.min().unwrap()),
            &naive(&xf, &valid, o, MIN),
            &what("min"),
        );
        close(
            &host(&r.max().unwrap()),
            &naive(&xf, &valid, o, MAX),
            &what("max"),
        );
        assert_eq!(r.mean().unwrap().name(), "requests");
    }
}

#[test]
fn float_columns_without_nulls_and_precision() {
    // Large values around small ones: a window's sum stays exact where global prefix sums
    // would cancel.
    let x: Vec<f64> = (0..1000)
        .map(|i| if i < 500 { 1e15 } else { 0.1 })
        .collect();
    let col = Column::from_slice_on("x", &x, &Device::Cpu).unwrap();
    let o = RollingOptions::new(3);
    let got = host(&col.rolling(o).sum().unwrap());
    close(&got, &naive(&x, &[true; 1000], o, SUM), "sum");
    assert!((got[999].unwrap() - 0.3).abs() < 1e-15);
    let f: Vec<f32> = vec![1.5, -2.0, 4.0];
    let c32 = Column::from_slice_on("f", &f, &Device::Cpu).unwrap();
    let m = host(
        &c32.rolling(RollingOptions::new(2).min_periods(1))
            .max()
            .unwrap(),
    );
    assert_eq!(m, [Some(1.5), Some(1.5), Some(4.0)]);
}

#[test]
fn infinities_and_nans_stay_in_their_windows() {
    let x = [1.0, f64::INFINITY, 2.0, 3.0, f64::NAN, 4.0, 5.0, 6.0];
    let col = Column::from_slice_on("x", &x, &Device::Cpu).unwrap();
    for window in [2, 3, 4] {
        let o = RollingOptions::new(window);
        let got = host(&col.rolling(o).sum().unwrap());
        let want = naive(&x, &[true; 8], o, SUM);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let (g, w) = (g.unwrap_or(-1.0), w.unwrap_or(-1.0));
            assert!(
                g == w || (g.is_nan() && w.is_nan()),
                "window {window} row {i}: {g} vs {w}"
            );
        }
    }
    let m = host(&col.rolling(RollingOptions::new(3)).max().unwrap());
    assert_eq!(m[7], Some(6.0));
    assert_eq!(m[5], Some(4.0), "NaN is ignored by max");
}

#[test]
fn bad_options_and_types_are_errors_naming_the_column() {
    let cpu = Device::Cpu;
    let col = Column::from_slice_on("requests", &[1i64, 2], &cpu).unwrap();
    let e = col
        .rolling(RollingOptions::new(0))
        .mean()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rolling mean on column `requests`: the window must be at least 1"),
        "{e}"
    );
    let e = col
        .rolling(RollingOptions::new(2).min_periods(3))
        .sum()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("min_periods must be from 1 to the window (2), got 3"),
        "{e}"
    );
    let e = col
        .rolling(RollingOptions::new(2).min_periods(0))
        .sum()
        .unwrap_err()
        .to_string();
    assert!(e.contains("got 0"), "{e}");
    let s = Column::from_strs_on("title", &["a"], &cpu).unwrap();
    let e = s
        .rolling(RollingOptions::new(1))
        .max()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rolling max: column `title` is str, not a number"),
        "{e}"
    );
}

/// A rolling user function: the number of valid values in each window, as a kernel.
#[kernel]
fn window_count(values: &[f64], valid: &[u8], starts: &[i64], ends: &[i64], out: &mut [f64]) {
    for i in (grid(1)..out.len()).step_by(gridsize(1)) {
        let mut c = 0.0f64;
        for j in (starts[i] as usize)..(ends[i] as usize) {
            if valid[j] == 1 && values[j] == values[j] {
                c += 1.0;
            }
        }
        out[i] = c;
    }
}

#[test]
fn apply_runs_a_user_kernel_over_windows() {
    let mut rng = StdRng::seed_from_u64(5);
    for n in [0usize, 1, 2, 50] {
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-5.0..5.0)).collect();
        let valid: Vec<bool> = (0..n).map(|_| rng.random_bool(0.7)).collect();
        let cpu = Device::Cpu;
        let col = Column::new(
            "v",
            ColumnData::Float32(Array::from_slice_on(&x, &cpu).unwrap()),
            Some(Bitmap::from_bools_on(&valid, &cpu).unwrap()),
        )
        .unwrap();
        let o = RollingOptions::new(4).min_periods(2).center(true);
        let got = host(
            &col.rolling(o)
                .apply(|cfg, w| {
                    window_count.launch(cfg, w.values, w.valid, w.starts, w.ends, w.out)
                })
                .unwrap(),
        );
        let ones = vec![1.0; n];
        close(&got, &naive(&ones, &valid, o, SUM), "count");
    }
}

#[test]
fn min_and_max_skip_nan_but_a_window_of_only_nan_is_nan() {
    let x = [f64::NAN, 2.0, f64::NAN, f64::NAN, f64::INFINITY];
    let c = Column::from_slice_on("x", &x, &Device::Cpu).unwrap();
    let r = |w: usize| c.rolling(RollingOptions::new(w).min_periods(1));
    let min1 = r(1)
        .min()
        .unwrap()
        .values::<f64>()
        .unwrap()
        .to_vec()
        .unwrap();
    let max1 = r(1)
        .max()
        .unwrap()
        .values::<f64>()
        .unwrap()
        .to_vec()
        .unwrap();
    for v in [&min1, &max1] {
        assert!(v[0].is_nan() && v[2].is_nan() && v[3].is_nan(), "{v:?}");
        assert_eq!((v[1], v[4]), (2.0, f64::INFINITY));
    }
    let min2 = r(2)
        .min()
        .unwrap()
        .values::<f64>()
        .unwrap()
        .to_vec()
        .unwrap();
    let max2 = r(2)
        .max()
        .unwrap()
        .values::<f64>()
        .unwrap()
        .to_vec()
        .unwrap();
    assert!(min2[0].is_nan() && min2[3].is_nan(), "{min2:?}");
    assert_eq!((min2[1], min2[2], min2[4]), (2.0, 2.0, f64::INFINITY));
    assert_eq!((max2[1], max2[2], max2[4]), (2.0, 2.0, f64::INFINITY));
}
