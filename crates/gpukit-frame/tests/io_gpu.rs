//! Frame I/O, slicing and display on a CUDA device against the CPU backend: CSV in and out,
//! Arrow `RecordBatch` round trips of every type with nulls, the pageview generator, row slices
//! at every bit offset (the `slice_validity` kernel) and column choices.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The CPU side is tested beside the code.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int32Array, Int64Array,
    LargeStringArray, RecordBatch, StringArray, TimestampNanosecondArray, UInt32Array, UInt64Array,
};
use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::Device;
use gpukit_frame::datasets::pageviews::{pageviews_frame, write_pageviews_to};
use gpukit_frame::prelude::*;

fn every_type_batch(n: usize) -> RecordBatch {
    let valid = |i: usize, k: usize| !i.is_multiple_of(k);
    let words = ["en", "", "Zürich", "日本語", "Main_Page", "Ωmega"];
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "b",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 3).then_some(i % 2 == 0))
                    .collect::<BooleanArray>(),
            ),
        ),
        (
            "i32",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 4).then_some(i as i32 - 50))
                    .collect::<Int32Array>(),
            ),
        ),
        (
            "i64",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 5).then_some((i as i64) << 40))
                    .collect::<Int64Array>(),
            ),
        ),
        (
            "u32",
            Arc::new((0..n).map(|i| Some(i as u32 * 7)).collect::<UInt32Array>()),
        ),
        (
            "u64",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 6).then_some(u64::MAX - i as u64))
                    .collect::<UInt64Array>(),
            ),
        ),
        (
            "f32",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 7).then_some(i as f32 / 3.0))
                    .collect::<Float32Array>(),
            ),
        ),
        (
            "f64",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 2).then_some(-(i as f64).sqrt()))
                    .collect::<Float64Array>(),
            ),
        ),
        (
            "s",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 9).then_some(words[i % words.len()]))
                    .collect::<StringArray>(),
            ),
        ),
        (
            "ls",
            Arc::new(
                (0..n)
                    .map(|i| Some(words[(i * 5) % words.len()]))
                    .collect::<LargeStringArray>(),
            ),
        ),
        (
            "d",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 8).then_some(i as i32 * 30 - 900))
                    .collect::<Date32Array>(),
            ),
        ),
        (
            "ts",
            Arc::new(
                (0..n)
                    .map(|i| valid(i, 10).then_some(i as i64 * 1_000_000_007))
                    .collect::<TimestampNanosecondArray>(),
            ),
        ),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

#[test]
fn record_batches_round_trip_through_the_gpu_like_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    for n in [0usize, 1, 9, 1000] {
        let batch = every_type_batch(n);
        let on_gpu = DataFrame::from_record_batch(&batch, &dev).unwrap();
        let on_cpu = DataFrame::from_record_batch(&batch, &Device::Cpu).unwrap();
        assert_eq!(on_gpu.device(), Some(dev));
        assert_eq!(on_gpu.dtypes(), on_cpu.dtypes());
        assert_eq!(
            on_gpu.to_record_batch().unwrap(),
            on_cpu.to_record_batch().unwrap(),
            "{n} rows"
        );
        let moved = on_cpu.to_device(&dev).unwrap();
        assert_eq!(
            moved.to_record_batch().unwrap(),
            on_cpu.to_record_batch().unwrap()
        );
    }
}

#[test]
fn csv_reads_and_writes_the_same_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut text = Vec::new();
    write_pageviews_to(&mut text, 20_000, 7).unwrap();
    let opts = CsvOptions::new()
        .with_delimiter(b' ')
        .with_header(false)
        .with_names(&["project", "page_title", "requests", "bytes"]);
    let g = read_csv_from(Cursor::new(text.clone()), &opts.clone().with_device(&dev)).unwrap();
    let c = read_csv_from(Cursor::new(text), &opts.with_device(&Device::Cpu)).unwrap();
    assert_eq!(g.device(), Some(dev));
    assert_eq!(g.shape(), (20_000, 4));
    assert_eq!(g.to_record_batch().unwrap(), c.to_record_batch().unwrap());
    let direct = pageviews_frame(20_000, 7, &dev).unwrap();
    assert_eq!(
        direct.to_record_batch().unwrap(),
        c.to_record_batch().unwrap()
    );

    let batch = every_type_batch(300);
    let (mut out_g, mut out_c) = (Vec::new(), Vec::new());
    write_csv_to(
        &DataFrame::from_record_batch(&batch, &dev).unwrap(),
        &mut out_g,
        b',',
    )
    .unwrap();
    write_csv_to(
        &DataFrame::from_record_batch(&batch, &Device::Cpu).unwrap(),
        &mut out_c,
        b',',
    )
    .unwrap();
    assert_eq!(out_g, out_c);
}

#[test]
fn slices_at_every_bit_offset_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let batch = every_type_batch(100);
    let g = DataFrame::from_record_batch(&batch, &dev).unwrap();
    let c = DataFrame::from_record_batch(&batch, &Device::Cpu).unwrap();
    for offset in 0..=100i64 {
        for len in [0usize, 1, 7, 8, 9, 33, 100] {
            let (sg, sc) = (g.slice(offset, len).unwrap(), c.slice(offset, len).unwrap());
            assert_eq!(sg.device(), Some(dev));
            assert_eq!(
                sg.to_record_batch().unwrap(),
                sc.to_record_batch().unwrap(),
                "offset {offset} len {len}"
            );
            for (a, b) in sg.columns().iter().zip(sc.columns()) {
                assert_eq!(
                    a.null_count(),
                    b.null_count(),
                    "{} at {offset}+{len}",
                    a.name()
                );
                if let (Some(x), Some(y)) = (a.validity(), b.validity()) {
                    assert_eq!(x.bits().to_vec().unwrap(), y.bits().to_vec().unwrap());
                }
            }
        }
    }
    assert_eq!(
        g.tail(3).unwrap().to_record_batch().unwrap(),
        c.tail(3).unwrap().to_record_batch().unwrap()
    );
    // A large column: the kernel's many blocks and the atomic count of valid rows.
    let big = every_type_batch(200_003);
    let gb = DataFrame::from_record_batch(&big, &dev).unwrap();
    let cb = DataFrame::from_record_batch(&big, &Device::Cpu).unwrap();
    let (sg, sc) = (
        gb.slice(12_345, 150_001).unwrap(),
        cb.slice(12_345, 150_001).unwrap(),
    );
    assert_eq!(sg.to_record_batch().unwrap(), sc.to_record_batch().unwrap());
}

#[test]
fn column_choices_and_display_match_the_cpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let batch = every_type_batch(50);
    let mut g = DataFrame::from_record_batch(&batch, &dev).unwrap();
    let mut c = DataFrame::from_record_batch(&batch, &Device::Cpu).unwrap();
    for f in [&mut g, &mut c] {
        f.rename("s", "text").unwrap();
        let twice = f.select(&["i64", "text"]).unwrap();
        assert_eq!(twice.names(), ["i64", "text"]);
        let extra = f
            .column("u32")
            .unwrap()
            .try_clone()
            .unwrap()
            .renamed("copy");
        f.with_column(extra).unwrap();
    }
    assert_eq!(
        g.drop(&["b"]).unwrap().to_record_batch().unwrap(),
        c.drop(&["b"]).unwrap().to_record_batch().unwrap()
    );
    let text_g = g.to_text().unwrap();
    let text_c = c.to_text().unwrap();
    assert_eq!(
        text_g.replacen(&dev.to_string(), "cpu", 1),
        text_c,
        "the tables differ only in the device named"
    );
    assert!(g.to_html().unwrap().contains("<th>text</th>"));
    let e = g
        .with_column(Column::from_slice_on("x", &[1i32; 50], &Device::Cpu).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("move it with to_device"), "{e}");
}
