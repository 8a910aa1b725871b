//! The GPU workloads. Each one mirrors a function of benches/cupy_twin.py with the same name,
//! the same inputs and the same check values, so that benches/collect.py can check both sides
//! against each other before it trusts their times.

use crate::json::Json;
use crate::kernels::{blur3, blur3_unchecked, fizzbuzz};
use crate::timing::{measure, measure_with, per_launch, Sample};
use gpukit::prelude::*;

/// 2^28 elements: 2 GiB of f64.
pub const N: usize = 1 << 28;
/// Lesson 5.0's array.
pub const LESSON5_SHAPE: (usize, usize, usize) = (1000, 500, 500);
/// Lesson 2.2's FizzBuzz length.
pub const FIZZBUZZ_N: usize = 50_000_000;
/// Lesson 3.0's image, height x width x channels.
pub const BLUR_SHAPE: (usize, usize, usize) = (8192, 8192, 4);
/// Launches per launch-overhead measurement.
pub const LAUNCHES: usize = 20_000;

/// One result line.
pub struct Row {
    pub name: &'static str,
    pub samples: Vec<Sample>,
    /// Values both sides must agree on (sums, sample elements, counts).
    pub check: Vec<f64>,
    /// Bytes the operation must move through device memory (reads + writes), 0 if not meaningful.
    pub bytes: f64,
    /// How the times are to be read: "op" (one operation) or "per_launch".
    pub unit: &'static str,
    pub note: &'static str,
}

impl Row {
    pub fn json(&self, side: &str) -> Json {
        let gpu: Vec<Json> = self
            .samples
            .iter()
            .map(|s| s.gpu_ms.map(Json::Num).unwrap_or(Json::Null))
            .collect();
        let wall: Vec<f64> = self.samples.iter().map(|s| s.wall_ms).collect();
        Json::Obj(vec![
            ("side", Json::Str(side.into())),
            ("name", Json::Str(self.name.into())),
            ("gpu_ms", Json::Arr(gpu)),
            ("wall_ms", Json::nums(&wall)),
            ("check", Json::nums(&self.check)),
            ("bytes", Json::Num(self.bytes)),
            ("unit", Json::Str(self.unit.into())),
            ("note", Json::Str(self.note.into())),
        ])
    }
}

/// [sum, first, middle, last] of an array, in f64.
pub fn summary<T: Element + Into<f64>>(a: &Array<T>) -> Result<Vec<f64>> {
    Ok(summary_of(&a.to_vec()?))
}

/// [sum, first, middle, last] of host values, in f64 (the check values every side reports).
pub fn summary_of<T: Copy + Into<f64>>(v: &[T]) -> Vec<f64> {
    let n = v.len();
    if n == 0 {
        return vec![0.0, f64::NAN, f64::NAN, f64::NAN];
    }
    let sum: f64 = v.iter().map(|&x| x.into()).sum();
    vec![sum, v[0].into(), v[n / 2].into(), v[n - 1].into()]
}

/// The f32 input pattern shared with the CuPy side: (i mod 251) / 251, exact on both sides.
pub fn pattern_f32(n: usize) -> Result<Array<f32>> {
    let mut i = Array::<i32>::arange(0, n as i32)?;
    i.rem_in_place(251)?;
    let f = i.astype::<f32>()?;
    &f / 251.0f32
}

pub struct Opts {
    pub warmup: usize,
    pub reps: usize,
    pub only: Option<String>,
}

impl Opts {
    /// Whether the row `name` is selected by `--only`.
    pub fn wants(&self, name: &str) -> bool {
        self.only.as_deref().is_none_or(|o| name.contains(o))
    }
}

/// The row `name`: `&a * two` (a new array each time), checked once, then timed.
fn times2_row<T: Numeric + Into<f64>>(
    name: &'static str,
    a: Array<T>,
    two: T,
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let check = summary(&(&a * two)?)?;
    let samples = measure(
        warmup,
        reps,
        || Ok(()),
        || {
            let _b = (&a * two)?;
            Ok(())
        },
    )?;
    Ok(Row {
        name,
        samples,
        check,
        bytes: (a.nbytes() * 2) as f64,
        unit: "op",
        note: "",
    })
}

/// Runs every GPU workload whose name contains `opts.only`, printing one JSON line per row.
pub fn run_all(opts: &Opts, emit: &mut dyn FnMut(Row)) -> Result<()> {
    let dev = Device::cuda(0)?;
    set_default_device(dev);
    let (w, r) = (opts.warmup, opts.reps);

    let name = "a * 2 (float64, 2^28)";
    if opts.wants(name) {
        emit(times2_row(
            name,
            Array::<f64>::arange(0.0, N as f64)?,
            2.0,
            w,
            r,
        )?);
    }
    let name = "a * 2 (float32, 2^28)";
    if opts.wants(name) {
        emit(times2_row(name, pattern_f32(N)?, 2.0f32, w, r)?);
    }

    let name = "lesson 5.0: x *= 5; x *= x; x += x (float64, 1000x500x500)";
    if opts.wants(name) {
        let (d0, d1, d2) = LESSON5_SHAPE;
        let n = d0 * d1 * d2;
        let lesson = |x: &mut Array<f64>| -> Result<()> {
            x.mul_in_place(5.0)?;
            // `x *= x` aliases in place in Python; Rust's borrows make the square a new array
            *x = (&*x * &*x)?;
            *x = (&*x + &*x)?;
            Ok(())
        };
        let mut x = Array::<f64>::ones([d0, d1, d2])?;
        lesson(&mut x)?;
        let check = summary(&x)?;
        let mut x = Array::<f64>::ones([d0, d1, d2])?;
        let s = measure_with(
            w,
            r,
            &mut x,
            |x| {
                *x = Array::<f64>::ones([d0, d1, d2])?;
                Ok(())
            },
            |x| lesson(x),
        )?;
        emit(Row {
            name,
            samples: s,
            check,
            bytes: (3 * n * 8 * 2) as f64,
            unit: "op",
            note: "x *= x and x += x allocate a new array in Rust (no aliasing in place)",
        });
    }

    let name = "ones (float64, 2 GiB)";
    if opts.wants(name) {
        let check = summary(&Array::<f64>::ones(N)?)?;
        let s = measure(
            w,
            r,
            || Ok(()),
            || {
                let _a = Array::<f64>::ones(N)?;
                Ok(())
            },
        )?;
        emit(Row {
            name,
            samples: s,
            check,
            bytes: (N * 8) as f64,
            unit: "op",
            note: "",
        });
    }

    let name = "arange (float64, 2^28)";
    if opts.wants(name) {
        let check = summary(&Array::<f64>::arange(0.0, N as f64)?)?;
        let s = measure(
            w,
            r,
            || Ok(()),
            || {
                let _a = Array::<f64>::arange(0.0, N as f64)?;
                Ok(())
            },
        )?;
        emit(Row {
            name,
            samples: s,
            check,
            bytes: (N * 8) as f64,
            unit: "op",
            note: "",
        });
    }

    let name = "linspace (float64, 2^28)";
    if opts.wants(name) {
        let check = summary(&Array::<f64>::linspace(0.0, 1.0, N)?)?;
        let s = measure(
            w,
            r,
            || Ok(()),
            || {
                let _a = Array::<f64>::linspace(0.0, 1.0, N)?;
                Ok(())
            },
        )?;
        emit(Row {
            name,
            samples: s,
            check,
            bytes: (N * 8) as f64,
            unit: "op",
            note: "",
        });
    }

    if opts.wants("(float64, 2^28)") {
        let a = Array::<f64>::arange(0.0, N as f64)?;
        for &name in &[
            "sum (float64, 2^28)",
            "mean (float64, 2^28)",
            "max (float64, 2^28)",
        ] {
            if !opts.wants(name) {
                continue;
            }
            let f = |a: &Array<f64>| -> Result<f64> {
                match name.split(' ').next() {
                    Some("sum") => a.sum(),
                    Some("mean") => a.mean(),
                    _ => a.max(),
                }
            };
            let check = vec![f(&a)?];
            let s = measure(w, r, || Ok(()), || f(&a).map(|_| ()))?;
            emit(Row {
                name,
                samples: s,
                check,
                bytes: (N * 8) as f64,
                unit: "op",
                note: "",
            });
        }
    }

    let name = "fizzbuzz kernel (lesson 2.2, 50M int32)";
    if opts.wants(name) {
        let n = FIZZBUZZ_N;
        let threads = 256usize;
        let blocks = n.div_ceil(threads);
        let mut out = Array::<i32>::full(n, -1)?;
        launch!(fizzbuzz[blocks, threads](&mut out))?;
        let v = out.to_vec()?;
        let mut counts = [0f64; 5];
        for &x in &v {
            counts[if (0..4).contains(&x) { x as usize } else { 4 }] += 1.0;
        }
        let check = counts.to_vec(); // [plain, fizz, buzz, fizzbuzz, unwritten]
        let s = measure_with(
            w,
            r,
            &mut out,
            |out| {
                *out = Array::<i32>::full(n, -1)?;
                Ok(())
            },
            |out| launch!(fizzbuzz[blocks, threads](out)),
        )?;
        emit(Row {
            name,
            samples: s,
            check,
            bytes: (n * 4) as f64,
            unit: "op",
            note: "#[kernel]",
        });
    }

    type Blur = fn(&Array<f32>, &mut Array<f32>, (usize, usize)) -> Result<()>;
    let blurs: [(&'static str, &'static str, Blur); 2] = [
        (
            "blur 3x3 kernel (lesson 3.0, 8192x8192x4 float32)",
            "#[kernel]",
            |img, out, blocks| launch!(blur3[blocks, (16usize, 16usize)](img, out)),
        ),
        (
            "blur 3x3 kernel, bounds checks off (8192x8192x4 float32)",
            "#[kernel(unchecked)]",
            |img, out, blocks| launch!(blur3_unchecked[blocks, (16usize, 16usize)](img, out)),
        ),
    ];
    for (name, note, blur) in blurs {
        if !opts.wants(name) {
            continue;
        }
        let (h, wd, c) = BLUR_SHAPE;
        let img = pattern_f32(h * wd * c)?.into_shape([h, wd, c])?;
        let blocks = (wd.div_ceil(16), h.div_ceil(16));
        let mut out = Array::<f32>::full([h, wd, c], f32::NAN)?;
        blur(&img, &mut out, blocks)?;
        let check = summary(&out)?;
        let s = measure_with(
            w,
            r,
            &mut out,
            |out| {
                *out = Array::<f32>::full([h, wd, c], f32::NAN)?;
                Ok(())
            },
            |out| blur(&img, out, blocks),
        )?;
        emit(Row {
            name,
            samples: s,
            check,
            bytes: (h * wd * c * 4 * 2) as f64,
            unit: "op",
            note,
        });
    }

    let name = "launch overhead: empty kernel";
    if opts.wants(name) {
        let module = Module::from_cuda("extern \"C\" __global__ void empty_kernel() {}")?;
        let k = module.kernel("empty_kernel")?;
        launch!(k[1, 1]())?;
        synchronize()?;
        let samples = per_launch(r, LAUNCHES, || launch!(k[1, 1]()), synchronize)?;
        emit(Row { name, samples, check: vec![LAUNCHES as f64], bytes: 0.0, unit: "per_launch",
                   note: "gpu_ms = host time per launch, wall_ms = per launch including the device draining the queue" });
    }

    let name = "launch overhead: tiny a * 2 (1 element float32)";
    if opts.wants(name) {
        let a = Array::<f32>::full(1, 1.5)?;
        let check = summary(&(&a * 2.0f32)?)?;
        let samples = per_launch(
            r,
            LAUNCHES,
            || {
                let _b = (&a * 2.0f32)?;
                Ok(())
            },
            synchronize,
        )?;
        emit(Row { name, samples, check, bytes: 0.0, unit: "per_launch",
                   note: "gpu_ms = host time per operation, wall_ms = per operation including the device draining the queue" });
    }

    const TRANSFERS: [&str; 4] = [
        "to_device 2 GiB (pageable host memory)",
        "to_host 2 GiB (pageable host memory)",
        "to_device 2 GiB (pinned host memory)",
        "to_host 2 GiB (pinned host memory)",
    ];
    if TRANSFERS.iter().any(|n| opts.wants(n)) {
        let host: Vec<f64> = (0..N).map(|i| (i % 1000) as f64 * 0.5).collect();
        let name = TRANSFERS[0];
        if opts.wants(name) {
            let check = summary(&Array::from_slice_on(&host, &dev)?)?;
            let s = measure(
                1,
                r.min(3),
                || Ok(()),
                || {
                    let _a = Array::from_slice_on(&host, &dev)?;
                    Ok(())
                },
            )?;
            emit(Row {
                name,
                samples: s,
                check,
                bytes: (N * 8) as f64,
                unit: "op",
                note: "",
            });
        }
        let name = TRANSFERS[1];
        if opts.wants(name) {
            let a = Array::from_slice_on(&host, &dev)?;
            let check = summary(&a)?;
            let s = measure(
                1,
                r.min(3),
                || Ok(()),
                || {
                    let _v = a.to_vec()?;
                    Ok(())
                },
            )?;
            emit(Row {
                name,
                samples: s,
                check,
                bytes: (N * 8) as f64,
                unit: "op",
                note: "",
            });
        }
        let name = TRANSFERS[2];
        if opts.wants(name) {
            let pinned = PinnedBuffer::from_slice_on(&host, &dev)?;
            let check = summary(&Array::from_pinned_on(&pinned, N, &dev)?)?;
            let s = measure(
                1,
                r.min(3),
                || Ok(()),
                || {
                    let _a = Array::from_pinned_on(&pinned, N, &dev)?;
                    Ok(())
                },
            )?;
            emit(Row {
                name,
                samples: s,
                check,
                bytes: (N * 8) as f64,
                unit: "op",
                note: "PinnedBuffer -> new device array (Array::from_pinned_on)",
            });
        }
        let name = TRANSFERS[3];
        if opts.wants(name) {
            let a = Array::from_slice_on(&host, &dev)?;
            let mut pinned = PinnedBuffer::<f64>::zeros_on(N, &dev)?;
            a.copy_to_pinned(&mut pinned)?;
            let check = vec![pinned.iter().sum(), pinned[0], pinned[N / 2], pinned[N - 1]];
            let s = measure(1, r.min(3), || Ok(()), || a.copy_to_pinned(&mut pinned))?;
            emit(Row {
                name,
                samples: s,
                check,
                bytes: (N * 8) as f64,
                unit: "op",
                note: "device array -> existing PinnedBuffer (copy_to_pinned)",
            });
        }
    }
    Ok(())
}

/// `gpukit-bench diag`: where the host time of a tiny operation goes (no JSON, no CuPy twin).
/// Each line is the median host time per call over batches of [`DIAG_BATCH`] calls with the
/// device synchronised between batches (outside the timed region, so the launch queue never
/// fills), then the back-to-back rate over [`LAUNCHES`] calls and one synchronisation.
pub fn diag(batches: usize) -> Result<()> {
    set_default_device(Device::cuda(0)?);
    let module = Module::from_cuda("extern \"C\" __global__ void empty_kernel() {}")?;
    let k = module.kernel("empty_kernel")?;
    let mut a = Array::<f32>::full(1, 1.5)?;
    let b = Array::<f32>::full(1, 2.5)?;
    let per_call = |label: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        for _ in 0..DIAG_BATCH {
            f()?;
        }
        synchronize()?;
        let mut v = Vec::with_capacity(batches);
        for _ in 0..batches.max(1) {
            let t0 = std::time::Instant::now();
            for _ in 0..DIAG_BATCH {
                f()?;
            }
            v.push(t0.elapsed().as_secs_f64() * 1e6 / DIAG_BATCH as f64);
            synchronize()?;
        }
        let t0 = std::time::Instant::now();
        for _ in 0..LAUNCHES {
            f()?;
        }
        let host = t0.elapsed().as_secs_f64() * 1e6 / LAUNCHES as f64;
        synchronize()?;
        let all = t0.elapsed().as_secs_f64() * 1e6 / LAUNCHES as f64;
        println!(
            "{label:<52} {:>7.2} us/call batched, {host:>7.2} back-to-back host, {all:>7.2} with drain",
            crate::timing::median(&v)
        );
        Ok(())
    };
    per_call(
        "empty kernel (Module::from_cuda + launch!)",
        &mut || launch!(k[1, 1]()),
    )?;
    per_call("tiny a * 2 (new 1-element f32 array)", &mut || {
        (&a * 2.0f32).map(drop)
    })?;
    per_call("tiny a + b (new array, two array operands)", &mut || {
        (&a + &b).map(drop)
    })?;
    per_call("tiny a *= 1 in place (no allocation)", &mut || {
        a.mul_in_place(1.0f32)
    })?;
    per_call("tiny a.sum() (launch, copy back, wait)", &mut || {
        a.sum().map(drop)
    })?;
    profile::start();
    per_call(
        "empty kernel while profiling (2 events each)",
        &mut || launch!(k[1, 1]()),
    )?;
    per_call("tiny a * 2 while profiling", &mut || {
        (&a * 2.0f32).map(drop)
    })?;
    profile::stop()?;
    Ok(())
}

/// Calls per timed batch of [`diag`].
const DIAG_BATCH: usize = 256;
