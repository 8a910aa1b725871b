//! CPU rows: gpukit's CPU backend against ndarray (serial, and with rayon where ndarray offers it).

use crate::json::Json;
use crate::timing::median;
use gpukit::prelude::*;
use ndarray::{Array1, Zip};
use rayon::prelude::*;
use std::time::Instant;

/// Times the closures in turns: one warm-up call each (page faults, thread pools), then `reps`
/// rounds that call each once, so that every side meets the same machine state (memory the VM
/// must back again after a free, other load) as often as the others. Milliseconds per call, one
/// list per closure.
fn time_interleaved<const K: usize>(
    reps: usize,
    mut fs: [&mut dyn FnMut() -> Result<()>; K],
) -> Result<[Vec<f64>; K]> {
    for f in fs.iter_mut() {
        f()?;
    }
    let mut times: [Vec<f64>; K] = std::array::from_fn(|_| Vec::with_capacity(reps));
    for _ in 0..reps {
        for (f, t) in fs.iter_mut().zip(times.iter_mut()) {
            let t0 = Instant::now();
            f()?;
            t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(times)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Runs the CPU rows on `n` float64 elements, emitting one JSON object per row.
pub fn run_all(
    n: usize,
    reps: usize,
    only: Option<&str>,
    emit: &mut dyn FnMut(Json),
) -> Result<()> {
    set_default_device(Device::cpu());
    let wants = |name: &str| only.is_none_or(|o| name.contains(o));
    let a = Array::<f64>::arange(0.0, n as f64)?;
    let nd: Array1<f64> = Array1::from_iter((0..n).map(|i| i as f64));
    let nd_slice = nd.as_slice().expect("contiguous");
    let threads = rayon::current_num_threads();
    let exp = format!("{}", n.trailing_zeros());

    let mut row =
        |name: String, gk: Vec<f64>, ndv: Vec<f64>, ray: Vec<f64>, check: (f64, f64, f64)| {
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
                median(&gk),
                median(&ndv),
                median(&ray),
                if ok { "" } else { "  RESULTS DISAGREE" }
            );
        };

    let name = format!("a * 2 (float64, 2^{exp})");
    if wants(&name) {
        let g = (&a * 2.0)?.sum()?;
        let s = (&nd * 2.0).sum();
        let p: f64 = {
            let mut out = Array1::<f64>::zeros(n);
            Zip::from(&mut out)
                .and(&nd)
                .par_for_each(|o, &x| *o = x * 2.0);
            out.as_slice().unwrap().par_iter().sum()
        };
        let [gk, ndv, ray] = time_interleaved(
            reps,
            [
                &mut || (&a * 2.0).map(|_| ()),
                &mut || {
                    std::hint::black_box(&nd * 2.0);
                    Ok(())
                },
                &mut || {
                    let mut out = Array1::<f64>::uninit(n);
                    Zip::from(&mut out).and(&nd).par_for_each(|o, &x| {
                        o.write(x * 2.0);
                    });
                    // SAFETY: every element was written by the Zip above.
                    std::hint::black_box(unsafe { out.assume_init() });
                    Ok(())
                },
            ],
        )?;
        row(name, gk, ndv, ray, (g, s, p));
    }

    let name = format!("sum (float64, 2^{exp})");
    if wants(&name) {
        let check = (a.sum()?, nd.sum(), nd_slice.par_iter().sum::<f64>());
        let [gk, ndv, ray] = time_interleaved(
            reps,
            [
                &mut || {
                    a.sum().map(|x| {
                        std::hint::black_box(x);
                    })
                },
                &mut || {
                    std::hint::black_box(nd.sum());
                    Ok(())
                },
                &mut || {
                    std::hint::black_box(nd_slice.par_iter().sum::<f64>());
                    Ok(())
                },
            ],
        )?;
        row(name, gk, ndv, ray, check);
    }

    let name = format!("mean (float64, 2^{exp})");
    if wants(&name) {
        let check = (
            a.mean()?,
            nd.mean().unwrap(),
            nd_slice.par_iter().sum::<f64>() / n as f64,
        );
        let [gk, ndv, ray] = time_interleaved(
            reps,
            [
                &mut || {
                    a.mean().map(|x| {
                        std::hint::black_box(x);
                    })
                },
                &mut || {
                    std::hint::black_box(nd.mean());
                    Ok(())
                },
                &mut || {
                    std::hint::black_box(nd_slice.par_iter().sum::<f64>() / n as f64);
                    Ok(())
                },
            ],
        )?;
        row(name, gk, ndv, ray, check);
    }

    let name = format!("max (float64, 2^{exp})");
    if wants(&name) {
        let ndmax = |x: &Array1<f64>| x.fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        let parmax = || {
            nd_slice
                .par_iter()
                .copied()
                .reduce(|| f64::NEG_INFINITY, f64::max)
        };
        let check = (a.max()?, ndmax(&nd), parmax());
        let [gk, ndv, ray] = time_interleaved(
            reps,
            [
                &mut || {
                    a.max().map(|x| {
                        std::hint::black_box(x);
                    })
                },
                &mut || {
                    std::hint::black_box(ndmax(&nd));
                    Ok(())
                },
                &mut || {
                    std::hint::black_box(parmax());
                    Ok(())
                },
            ],
        )?;
        row(name, gk, ndv, ray, check);
    }
    Ok(())
}
