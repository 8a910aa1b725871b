//! The live monitor with the fake source: the display lines it prints (shown once, then updated
//! under the same id, the last update being the final chart), the chart, and bad input.

use super::*;
use crate::nvml::{FakeSource, GpuInfo, Sample, SampleSource};
use std::time::SystemTime;

/// The fake record of `gpus` GPUs at `n` times 100 ms apart, made without waiting.
fn fake_samples(gpus: u32, n: u32) -> Samples {
    let src = FakeSource::new(gpus).unwrap();
    let mut samples = Vec::new();
    for g in 0..gpus {
        for k in 0..n {
            let time = Duration::from_millis(100 * u64::from(k));
            samples.push(Sample {
                gpu: g,
                time,
                ..src.read(g, time).unwrap()
            });
        }
    }
    Samples {
        source: src.name(),
        gpus: src.gpus().unwrap(),
        interval: Duration::from_millis(100),
        started: SystemTime::now(),
        elapsed: Duration::from_millis(100 * u64::from(n)),
        samples,
        errors: vec![],
    }
}

/// Whether the SVG document has a `<text>` element reading `t`.
fn has_text(svg: &str, t: &str) -> bool {
    svg.split("<text ").skip(1).any(|e| {
        e.split_once('>')
            .and_then(|(_, rest)| rest.split_once("</text>"))
            .is_some_and(|(body, _)| body.trim() == t)
    })
}

/// `(display_id, update, mime types)` of each display line, checking that each parses.
fn parse_lines(text: &str) -> Vec<(String, bool, Vec<String>)> {
    text.lines()
        .map(|line| {
            let json = line
                .strip_prefix("EVCXR_GPU_DISPLAY {\"display_id\":\"")
                .unwrap_or_else(|| panic!("not a display line: {line:.80}"));
            let (id, rest) = json.split_once('"').unwrap();
            let update = rest.starts_with(",\"update\":true,");
            assert!(
                update || rest.starts_with(",\"update\":false,"),
                "{rest:.80}"
            );
            let mimes = ["image/png", "text/html", "text/plain"]
                .iter()
                .filter(|m| rest.contains(&format!("\"{m}\":\"")))
                .map(|m| m.to_string())
                .collect();
            (id.to_string(), update, mimes)
        })
        .collect()
}

#[test]
fn the_live_chart_is_shown_then_updated_in_place_and_left_final() {
    let out = Arc::new(Mutex::new(String::new()));
    let sampler = Sampler::with_source(FakeSource::default(), Duration::from_millis(20)).unwrap();
    let mut m =
        LiveMonitor::with(Arc::new(sampler), Some(LiveDisplay::capturing(out.clone()))).unwrap();
    assert!(m.is_running());
    std::thread::sleep(UPDATE_EVERY * 2 + Duration::from_millis(300));
    let samples = m.finish().expect("samples");
    assert!(!m.is_running() && m.finish().is_none());
    assert!(
        samples.samples.len() >= 10,
        "{} samples",
        samples.samples.len()
    );

    let text = out.lock().unwrap().clone();
    let lines = parse_lines(&text);
    // Shown once (text while waiting for readings), redrawn at least twice, then the final.
    assert!(lines.len() >= 3, "{} display lines", lines.len());
    let (id, update, mimes) = &lines[0];
    assert!(!update && mimes == &["text/plain"], "{:?}", lines[0]);
    assert!(text
        .lines()
        .next()
        .unwrap()
        .contains("GPU monitor: reading GPU 0 (Fake GPU)"));
    for (other, update, mimes) in &lines[1..] {
        assert_eq!(other, id, "one display id throughout");
        assert!(update, "later lines update");
        assert_eq!(mimes, &["image/png", "text/html", "text/plain"]);
    }
    let last = text.lines().last().unwrap();
    assert!(last.contains(&format!("{} readings every 20 ms", samples.samples.len())));
}

#[test]
fn dropping_a_running_monitor_leaves_the_final_chart() {
    let out = Arc::new(Mutex::new(String::new()));
    let sampler = Sampler::with_source(FakeSource::default(), Duration::from_millis(20)).unwrap();
    let m =
        LiveMonitor::with(Arc::new(sampler), Some(LiveDisplay::capturing(out.clone()))).unwrap();
    drop(m);
    let lines = parse_lines(&out.lock().unwrap());
    assert_eq!(lines.len(), 2, "the first display and the final update");
    assert!(lines[1].1 && lines[1].2.contains(&"image/png".to_string()));
}

#[test]
fn the_chart_stacks_utilisation_over_memory() {
    let s = fake_samples(1, 40);
    let c = s.chart().unwrap();
    assert_eq!(c.panels().len(), 2);
    assert_eq!(c.size(), (chart::WIDTH, 570));
    let png = c.to_png().unwrap();
    let img = image::load_from_memory(&png).unwrap();
    assert_eq!((img.width(), img.height()), c.size());
    let top = c.panels()[0].to_svg().unwrap();
    for text in [
        "GPU 0: Fake GPU, every 100 ms",
        "utilisation %",
        "GPU",
        "memory",
        "100",
    ] {
        assert!(has_text(&top, text), "{text:?} not in the top panel");
    }
    let bottom = c.panels()[1].to_svg().unwrap();
    for text in ["time (s)", "memory used, GiB", "used of 80.0 GiB"] {
        assert!(has_text(&bottom, text), "{text:?} not in the memory panel");
    }
    assert!(c.summary().contains("GPU utilisation     mean"));
    let bundle = c.bundle();
    let mimes: Vec<&str> = bundle.iter().map(|(m, _)| *m).collect();
    assert_eq!(mimes, ["image/png", "text/html", "text/plain"]);
    assert!(bundle[1].1.starts_with("<img width=\"720\" height=\"570\""));
    assert!(bundle[1].1.contains("<pre>GPU 0: Fake GPU"));
}

#[test]
fn several_gpus_are_named_in_the_legend() {
    let c = fake_samples(2, 20).chart().unwrap();
    let top = c.panels()[0].to_svg().unwrap();
    for label in [
        "GPU 0",
        "GPU 1",
        "GPU 0 memory",
        "GPU 1 memory",
        "2 GPUs, every 100 ms",
    ] {
        assert!(has_text(&top, label), "{label:?} missing");
    }
    let bottom = c.panels()[1].to_svg().unwrap();
    assert!(has_text(&bottom, "GPU 1 used of 80.0 GiB"));
}

#[test]
fn readings_without_values_cannot_be_charted() {
    let mut s = fake_samples(1, 3);
    for x in &mut s.samples {
        *x = Sample {
            gpu: x.gpu,
            time: x.time,
            power_w: x.power_w,
            ..Sample::default()
        };
    }
    let e = s.chart().unwrap_err().to_string();
    assert!(
        e.contains("nothing to chart") && e.contains("3 readings"),
        "{e}"
    );
    // Memory alone is one panel, with the title and the time axis.
    let mut m = fake_samples(1, 3);
    for x in &mut m.samples {
        x.gpu_util = None;
        x.memory_util = None;
    }
    let c = m.chart().unwrap();
    assert_eq!(c.panels().len(), 1);
    let svg = c.panels()[0].to_svg().unwrap();
    assert!(has_text(&svg, "time (s)") && has_text(&svg, "GPU 0: Fake GPU, every 100 ms"));
}

#[test]
fn saving_needs_a_png_name() {
    let c = fake_samples(1, 5).chart().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = c.save(dir.path().join("m.svg")).unwrap_err().to_string();
    assert!(e.contains("must end in .png"), "{e}");
    let path = dir.path().join("m.png");
    c.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), c.to_png().unwrap());
}

#[test]
fn watching_checks_its_duration_and_without_a_gpu_returns_none() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, MAX_WATCH_SECONDS + 1.0] {
        let e = watch(bad).unwrap_err().to_string();
        assert!(e.contains("above 0 and at most 3600"), "{e}");
    }
    let e = watch_every(1.0, Duration::from_millis(5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("20 ms to 60 s"), "{e}");
    // Here: NVML, or the fake where the test environment selects it, or neither (None).
    match watch_every(0.05, Duration::from_millis(20)).unwrap() {
        Some(s) => assert!(!s.is_empty()),
        None => assert!(crate::nvml::NvmlSource.gpus().is_err()),
    }
}

#[test]
fn evcxr_content_wraps_each_mime_type() {
    let text = chart::evcxr_content(&[
        ("image/png", "iVBO".to_string()),
        ("text/plain", "a\nb".to_string()),
    ]);
    assert_eq!(
        text,
        "EVCXR_BEGIN_CONTENT image/png\niVBO\nEVCXR_END_CONTENT\n\
         EVCXR_BEGIN_CONTENT text/plain\na\nb\nEVCXR_END_CONTENT\n"
    );
}

#[test]
fn gpu_info_is_what_the_title_names() {
    let mut s = fake_samples(1, 2);
    s.gpus = vec![GpuInfo {
        index: 3,
        name: "NVIDIA H100 80GB HBM3".into(),
        memory_total: 80 << 30,
    }];
    for x in &mut s.samples {
        x.gpu = 3;
    }
    let svg = s.chart().unwrap().panels()[0].to_svg().unwrap();
    assert!(has_text(&svg, "GPU 3: NVIDIA H100 80GB HBM3, every 100 ms"));
}
