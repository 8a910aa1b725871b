//! Writes one chart of each kind to a folder (default `/tmp/plot-look`), as PNG and SVG, to look
//! at them: `cargo run -p gpukit --example plot_gallery [DIR]`. Also the live monitor's final
//! chart (`monitor.png`), drawn from 8 s of the fake readings tests use.

use gpukit::nvml::{FakeSource, Sample, SampleSource, Samples};
use gpukit::plot::{self, Colormap};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

fn main() -> gpukit::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/plot-look"));
    std::fs::create_dir_all(&dir).map_err(|e| gpukit::Error::Other(e.to_string()))?;

    let x: Vec<f64> = (0..200).map(|i| i as f64 * 0.05).collect();
    let sin: Vec<f64> = x.iter().map(|v| v.sin()).collect();
    let damped: Vec<f64> = x
        .iter()
        .map(|v| (-v / 4.0).exp() * (2.0 * v).cos())
        .collect();
    let lines = plot::line(&x, &sin)?
        .label("sin x")
        .line(&x, &damped, "e^(−x/4) cos 2x")?
        .title("Two waves")
        .xlabel("x (radians)")
        .ylabel("amplitude");

    let n: Vec<f64> = (0..25).map(|i| 10f64.powf(2.0 + i as f64 * 0.25)).collect();
    let cpu: Vec<f64> = n.iter().map(|v| 2e-6 * v + 0.01).collect();
    let gpu: Vec<f64> = n.iter().map(|v| 1e-8 * v + 0.05).collect();
    let timing = plot::scatter(&n, &cpu)?
        .label("CPU")
        .scatter(&n, &gpu, "GPU")?
        .log_x()
        .log_y()
        .title("Time per call")
        .xlabel("elements")
        .ylabel("ms");

    // A normal sample from a small linear congruential generator (Box-Muller).
    let mut state = 12345u64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let sample: Vec<f64> = (0..5000)
        .map(|_| {
            let (u, v) = (uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        })
        .collect();
    let histogram = plot::hist(&sample, 40)?
        .title("5000 normal samples")
        .xlabel("value")
        .ylabel("count");

    let names = ["NumPy", "gpukit CPU", "gpukit GPU", "CuPy", "raw cudarc"];
    let speed = [1.0, 3.2, 41.5, 38.0, 44.1];
    let bars = plot::bar(&names, &speed)?
        .title("Speed-up over NumPy")
        .ylabel("×");

    let field = gpukit::ndarray::Array2::from_shape_fn((120, 180), |(r, c)| {
        let (y, x) = (r as f64 / 20.0, c as f64 / 20.0);
        (x.sin() * y.cos()) + 0.3 * ((x * x + y * y).sqrt()).sin()
    });
    let heat = plot::imshow(&field)?.title("sin x · cos y + ripple");
    let heat_magma = plot::imshow(&field)?.cmap(Colormap::Magma).size(480, 400);

    let rgb = gpukit::ndarray::Array3::from_shape_fn((64, 96, 3), |(r, c, ch)| match ch {
        0 => (c * 255 / 95) as u8,
        1 => (r * 255 / 63) as u8,
        _ => {
            if (r / 8 + c / 8) % 2 == 0 {
                200
            } else {
                40
            }
        }
    });
    let picture = plot::imshow(&rgb)?.title("RGB bytes");

    for (name, chart) in [
        ("line", &lines),
        ("scatter_log", &timing),
        ("hist", &histogram),
        ("bar", &bars),
        ("imshow", &heat),
        ("imshow_magma", &heat_magma),
        ("imshow_rgb", &picture),
    ] {
        chart.save(dir.join(format!("{name}.png")))?;
        chart.save(dir.join(format!("{name}.svg")))?;
        println!("wrote {name}.png and {name}.svg");
    }

    // What `%%monitor` leaves after a cell: 8 s of the fake source (two of its cycles), read
    // every 100 ms, without waiting for them.
    let fake = FakeSource::default();
    let interval = Duration::from_millis(100);
    let samples = (0..=80)
        .map(|k| {
            let time = interval * k;
            Ok(Sample {
                gpu: 0,
                time,
                ..fake.read(0, time)?
            })
        })
        .collect::<gpukit::Result<Vec<_>>>()?;
    let record = Samples {
        source: fake.name(),
        gpus: fake.gpus()?,
        interval,
        started: SystemTime::now(),
        elapsed: interval * 80,
        samples,
        errors: vec![],
    };
    let monitor = record.chart()?;
    monitor.save(dir.join("monitor.png"))?;
    println!("wrote monitor.png\n{}", monitor.summary());
    Ok(())
}
