//! CPU rows: gpukit's CPU backend against ndarray (serial, and with rayon where ndarray offers it).

use crate::json::Json;
use crate::timing::median;
use gpukit::prelude::*;
use ndarray::{Array1, Zip};
use rayon::prelude::*;
use std::time::Instant;

fn time_reps(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    f()?; // warm-up: page faults, thread pools
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t0 = Instant::now();
        f()?;
        v.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(v)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Runs the CPU rows on `n` float64 elements, emitting one JSON object per row.
pub fn run_all(n: usize, reps: usize, only: Option<&str>, emit: &mut dyn FnMut(Json)) -> Result<()> {
    set_default_device(Device::cpu());
    let wants = |name: &str| only.is_none_or(|o| name.contains(o));
    let a = Array::<f64>::arange(0.0, n as f64)?;
    let nd: Array1<f64> = Array1::from_iter((0..n).map(|i| i as f64));
    let nd_slice = nd.as_slice().expect("contiguous");
    let threads = rayon::current_num_threads();
    let exp = format!("{}", n.trailing_zeros());

    let mut row = |name: String, gk: Vec<f64>, ndv: Vec<f64>, ray: Vec<f64>, check: (f64, f64, f64)| {
        let ok = close(check.0, check.1) && close(check.0, check.2);
        emit(Json::Obj(vec![
            ("side", Json::Str("cpu".into())),
            ("name", Json::Str(name)),
            ("gpukit_cpu_ms", Json::nums(&gk)),
            ("ndarray_ms", Json::nums(&ndv)),
            ("ndarray_rayon_ms", Json::nums(&ray)),
            ("check", Json::nums(&[check.0, check.1, check.2])),
            ("agree", Json::Str(if ok { "yes" } else { "NO" }.into())),
            ("threads", Json::Int(threads as i64)),
            ("bytes", Json::Num((n * 8) as f64)),
        ]));
        eprintln!(
            "cpu row: gpukit {:.3} ms, ndarray {:.3} ms, ndarray+rayon {:.3} ms{}",
            median(&gk), median(&ndv), median(&ray), if ok { "" } else { "  RESULTS DISAGREE" }
        );
    };

    let name = format!("a * 2 (float64, 2^{exp})");
    if wants(&name) {
        let g = (&a * 2.0)?.sum()?;
        let s = (&nd * 2.0).sum();
        let mut out = Array1::<f64>::zeros(n);
        Zip::from(&mut out).and(&nd).par_for_each(|o, &x| *o = x * 2.0);
        let p: f64 = out.as_slice().unwrap().par_iter().sum();
        let gk = time_reps(reps, || (&a * 2.0).map(|_| ()))?;
        let ndv = time_reps(reps, || {
            std::hint::black_box(&nd * 2.0);
            Ok(())
        })?;
        let ray = time_reps(reps, || {
            let mut out = Array1::<f64>::uninit(n);
            Zip::from(&mut out).and(&nd).par_for_each(|o, &x| {
                o.write(x * 2.0);
            });
            // SAFETY: every element was written by the Zip above.
            std::hint::black_box(unsafe { out.assume_init() });
            Ok(())
        })?;
        row(name, gk, ndv, ray, (g, s, p));
    }

    let name = format!("sum (float64, 2^{exp})");
    if wants(&name) {
        let check = (a.sum()?, nd.sum(), nd_slice.par_iter().sum::<f64>());
        let gk = time_reps(reps, || a.sum().map(|x| { std::hint::black_box(x); }))?;
        let ndv = time_reps(reps, || { std::hint::black_box(nd.sum()); Ok(()) })?;
        let ray = time_reps(reps, || { std::hint::black_box(nd_slice.par_iter().sum::<f64>()); Ok(()) })?;
        row(name, gk, ndv, ray, check);
    }

    let name = format!("mean (float64, 2^{exp})");
    if wants(&name) {
        let check = (a.mean()?, nd.mean().unwrap(), nd_slice.par_iter().sum::<f64>() / n as f64);
        let gk = time_reps(reps, || a.mean().map(|x| { std::hint::black_box(x); }))?;
        let ndv = time_reps(reps, || { std::hint::black_box(nd.mean()); Ok(()) })?;
        let ray = time_reps(reps, || { std::hint::black_box(nd_slice.par_iter().sum::<f64>() / n as f64); Ok(()) })?;
        row(name, gk, ndv, ray, check);
    }

    let name = format!("max (float64, 2^{exp})");
    if wants(&name) {
        let ndmax = |x: &Array1<f64>| x.fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        let parmax = || nd_slice.par_iter().copied().reduce(|| f64::NEG_INFINITY, f64::max);
        let check = (a.max()?, ndmax(&nd), parmax());
        let gk = time_reps(reps, || a.max().map(|x| { std::hint::black_box(x); }))?;
        let ndv = time_reps(reps, || { std::hint::black_box(ndmax(&nd)); Ok(()) })?;
        let ray = time_reps(reps, || { std::hint::black_box(parmax()); Ok(()) })?;
        row(name, gk, ndv, ray, check);
    }
    Ok(())
}
