//! The GPU workloads. Each one mirrors a function of benches/cupy_twin.py with the same name,
//! the same inputs, the same span and wall definitions ([`crate::timing`]) and the same full
//! check: every timed call's output is compared, element by element, with a reference computed
//! on the host here (not by gpukit), after the output (or the memory pool block the result will
//! reuse) was poisoned.

use crate::json::Json;
use crate::kernels::{blur3, blur3_unchecked, fizzbuzz};
use crate::timing::{device_times, floor, measure, per_launch, Measured, Timer};
use crate::verify::{compare_host, CheckElem, Checker, Outcome, Verify};
use gpukit::prelude::*;
use rayon::prelude::*;

/// Problem sizes (the full ones on the device; tiny ones for the CPU backend's dry run). Row
/// names keep the full sizes' labels, as they must match CuPy's.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    /// Elements of the 1-d rows (2^28: 2 GiB of f64).
    pub n: usize,
    /// Lesson 5.0's array.
    pub lesson5: (usize, usize, usize),
    /// Lesson 2.2's FizzBuzz length.
    pub fizzbuzz: usize,
    /// Lesson 3.0's image, height x width x channels.
    pub blur: (usize, usize, usize),
    /// Launches per launch-overhead measurement.
    pub launches: usize,
    /// Side of the square matrices of the matmul rows.
    pub matmul: usize,
    /// Shape (rows, columns) of the axis-reduction rows' matrix.
    pub axes: (usize, usize),
    /// Rows and columns of the sort rows' array (lab 5.1's random array).
    pub sort: (usize, usize),
    /// Side of the cube of the FFT row (`crate::fft`).
    pub fft: usize,
    /// Side of the square matrices of the large matmul rows (the GEMM ceiling's size).
    pub matmul_big: usize,
    /// Side of the square matrix of the SVD row.
    pub svd: usize,
    /// Side of the square float64 matrix of the transpose-copy row.
    pub transpose: usize,
    /// Shape of the random row's float64 array (lab 5.1's random matrix).
    pub random: (usize, usize),
}

/// The sizes of the recorded benchmarks.
pub const FULL: Sizes = Sizes {
    n: 1 << 28,
    lesson5: (1000, 500, 500),
    fizzbuzz: 50_000_000,
    blur: (8192, 8192, 4),
    launches: 20_000,
    matmul: 4096,
    axes: (10_000, 5_000),
    sort: (10_000, 5_000),
    fft: 256,
    matmul_big: 8192,
    svd: 1000,
    transpose: 8192,
    random: (10_000, 5_000),
};

/// Tiny sizes for the dry run on the CPU backend (checks the harness, times nothing useful).
pub const DRY: Sizes = Sizes {
    n: 1 << 14,
    lesson5: (10, 20, 30),
    fizzbuzz: 3000,
    blur: (40, 24, 4),
    launches: 20,
    matmul: 37,
    axes: (37, 23),
    sort: (7, 300),
    fft: 6,
    matmul_big: 41,
    svd: 24,
    transpose: 45,
    random: (37, 29),
};

/// One result line.
pub struct Row {
    /// Workload name (the same on every side).
    pub name: &'static str,
    /// "op" (spans), "per_launch" (host time per call) or "floor" (the span of nothing).
    pub unit: &'static str,
    /// Event spans, ms.
    pub span_ms: Vec<f64>,
    /// Host time per call, ms (per_launch rows).
    pub host_ms: Vec<f64>,
    /// Device time per call, ms: the sum of gpukit's profiler times of every kernel the call
    /// launched, measured like the ceilings' kernel candidates (rows that record it; empty else).
    pub device_ms: Vec<f64>,
    /// Wall times, ms (per call for per_launch rows).
    pub wall_ms: Vec<f64>,
    /// Full checks of every timed output (None: nothing to check).
    pub verify: Option<Verify>,
    /// Summary values every side reports, compared across sides.
    pub check: Vec<f64>,
    /// Bytes the operation must move (each input read once, each output written once).
    pub bytes: f64,
    /// Memory access of those bytes: "rw", "w", "r" (device memory), "h2d", "d2h" (link), "".
    pub access: &'static str,
    /// How `span_ms` was timed.
    pub span: &'static str,
    /// Anything a reader of the row must know.
    pub note: &'static str,
}

impl Row {
    /// A row of spans.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn op(
        name: &'static str,
        m: Measured,
        span: &'static str,
        check: Vec<f64>,
        bytes: f64,
        access: &'static str,
        note: &'static str,
    ) -> Row {
        Row {
            name,
            unit: "op",
            span_ms: m.span_ms,
            host_ms: vec![],
            device_ms: vec![],
            wall_ms: m.wall_ms,
            verify: Some(m.verify),
            check,
            bytes,
            access,
            span,
            note,
        }
    }

    /// The JSON line of this row for `side`.
    pub fn json(&self, side: &str) -> Json {
        Json::Obj(vec![
            ("side", Json::Str(side.into())),
            ("name", Json::Str(self.name.into())),
            ("unit", Json::Str(self.unit.into())),
            ("span_ms", Json::nums(&self.span_ms)),
            ("host_ms", Json::nums(&self.host_ms)),
            ("device_ms", Json::nums(&self.device_ms)),
            ("wall_ms", Json::nums(&self.wall_ms)),
            (
                "verify",
                self.verify.as_ref().map_or(Json::Null, Verify::json),
            ),
            ("check", Json::nums(&self.check)),
            ("bytes", Json::Num(self.bytes)),
            ("access", Json::Str(self.access.into())),
            ("span", Json::Str(self.span.into())),
            ("note", Json::Str(self.note.into())),
        ])
    }

    /// The row's headline time: median span, or host time per call.
    pub fn headline_ms(&self) -> f64 {
        crate::timing::median(if self.unit == "per_launch" {
            &self.host_ms
        } else {
            &self.span_ms
        })
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

/// Element `i` of [`pattern_f32`], computed on the host.
pub fn pattern_f32_at(i: usize) -> f32 {
    (i % 251) as f32 / 251.0f32
}

/// A host vector `f(0), f(1), ...` (filled in parallel).
pub fn host_vec<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    (0..n).into_par_iter().map(f).collect()
}

/// Host reference of lesson 2.2: 0 plain, 1 fizz, 2 buzz, 3 fizzbuzz for 1..=n.
pub fn fizzbuzz_ref(n: usize) -> Vec<i32> {
    host_vec(n, |i| {
        let k = i + 1;
        if k % 15 == 0 {
            3
        } else if k % 5 == 0 {
            2
        } else if k % 3 == 0 {
            1
        } else {
            0
        }
    })
}

/// Host reference of lesson 3.0's blur of `img` (h x w x c, C order), in the kernel's order of
/// f32 additions, edges clamped.
pub fn blur_ref(img: &[f32], (h, w, c): (usize, usize, usize)) -> Vec<f32> {
    let mut out = vec![0f32; h * w * c];
    out.par_chunks_mut(w * c).enumerate().for_each(|(y, row)| {
        for x in 0..w {
            for ch in 0..c {
                let mut acc = 0.0f32;
                for dy in 0..3 {
                    for dx in 0..3 {
                        let yy = (y + dy).clamp(1, h) - 1;
                        let xx = (x + dx).clamp(1, w) - 1;
                        acc += img[(yy * w + xx) * c + ch];
                    }
                }
                row[x * c + ch] = acc / 9.0;
            }
        }
    });
    out
}

/// Element `i` (C order) of the matmul rows' A (`b == false`) or B: `(i mod 251) / 256` and
/// `(i mod 253) / 256`. Multiples of 2^-8 below 1, exact in float32 and float64, so every product
/// is a multiple of 2^-16 and every sum of 4096 of them is exact in float64 in any order.
pub fn matmul_input_at(i: usize, b: bool) -> f64 {
    (i % if b { 253 } else { 251 }) as f64 / 256.0
}

/// The host reference of the matmul rows: `A·B` for `n`×`n` inputs of [`matmul_input_at`], in
/// float64 (exact: see there), by ndarray in row blocks on every core (neither gpukit nor CuPy).
pub fn matmul_ref(n: usize) -> Vec<f64> {
    use gpukit::ndarray::{linalg::general_mat_mul, ArrayView2, ArrayViewMut2};
    let a = host_vec(n * n, |i| matmul_input_at(i, false));
    let b = host_vec(n * n, |i| matmul_input_at(i, true));
    let bv = ArrayView2::from_shape((n, n), &b).expect("n*n elements");
    let mut c = vec![0.0f64; n * n];
    let rows = 64;
    c.par_chunks_mut(rows * n)
        .enumerate()
        .for_each(|(blk, out)| {
            let r = out.len() / n;
            let start = blk * rows * n;
            let av =
                ArrayView2::from_shape((r, n), &a[start..start + r * n]).expect("r*n elements");
            let mut cv = ArrayViewMut2::from_shape((r, n), out).expect("r*n elements");
            general_mat_mul(1.0, &av, &bv, 0.0, &mut cv);
        });
    c
}

/// Exact references of sum, mean and max of `arange(start, start + n)` as f64 (the sum from
/// integer arithmetic, then rounded once).
pub fn reduction_refs(start: u64, n: u64) -> [f64; 3] {
    let (s, n128) = (start as u128, n as u128);
    let sum = n128 * (2 * s + n128 - 1) / 2; // exact: n(2s + n - 1) is even
    let mean = (2 * s + n128 - 1) as f64 / 2.0; // half-integer, exact below 2^52
    [sum as f64, mean, (s + n128 - 1) as f64]
}

/// Allocates `count` arrays of `len` elements filled with `value`, then frees them: the blocks
/// gpukit's memory pool hands to the next allocations of that size hold poison, not the last
/// call's (correct) result.
pub fn poison_pool<T: Element>(len: usize, value: T, count: usize) -> Result<()> {
    let held: Vec<Array<T>> = (0..count)
        .map(|_| Array::<T>::full(len, value))
        .collect::<Result<_>>()?;
    drop(held);
    Ok(())
}

/// Result-sized blocks poisoned before each call that allocates its result: the block the last
/// result freed and one more (the pool's choice among free blocks is not documented).
pub const POOL_POISON: usize = 2;

/// Run options.
pub struct Opts {
    /// Untimed calls before the timed ones.
    pub warmup: usize,
    /// Timed calls per row (each timed by span and by wall clock).
    pub reps: usize,
    /// Only rows whose name contains this.
    pub only: Option<String>,
    /// Problem sizes.
    pub sizes: Sizes,
}

impl Opts {
    /// Whether the row `name` is selected by `--only`.
    pub fn wants(&self, name: &str) -> bool {
        self.only.as_deref().is_none_or(|o| name.contains(o))
    }
}

const FULL_CHECK: &str =
    "every element against a host reference (device checker kernel), output poisoned before each call";
const HOST_CHECK: &str = "every element against the host data, on the host";

/// Runs every workload whose name contains `opts.only` on `dev` (a GPU, or the CPU backend for
/// a dry run), emitting one row per workload.
pub fn run_all(
    opts: &Opts,
    dev: Device,
    t: &mut Timer,
    checker: &Checker,
    emit: &mut dyn FnMut(Row),
) -> Result<()> {
    set_default_device(dev);
    let (w, r) = (opts.warmup, opts.reps);
    let z = opts.sizes;
    let n = z.n;
    let span = t.how();

    let name = "span floor: nothing between the events";
    if opts.wants(name) {
        let (span_ms, wall_ms) = floor(t, r)?;
        emit(Row {
            name,
            unit: "floor",
            span_ms,
            host_ms: vec![],
            device_ms: vec![],
            wall_ms,
            verify: None,
            check: vec![],
            bytes: 0.0,
            access: "",
            span,
            note: "the bracket's own cost: included in every span of this side",
        });
    }

    for (name, f32_) in [
        ("a * 2 (float64, 2^28)", false),
        ("a * 2 (float32, 2^28)", true),
    ] {
        if !opts.wants(name) {
            continue;
        }
        let row = if f32_ {
            let reference = host_vec(n, |i| pattern_f32_at(i) * 2.0);
            times2_row(
                t,
                checker,
                name,
                pattern_f32(n)?,
                2.0f32,
                reference,
                1e-6,
                w,
                r,
            )?
        } else {
            let reference = host_vec(n, |i| i as f64 * 2.0);
            let a = Array::<f64>::arange(0.0, n as f64)?;
            times2_row(t, checker, name, a, 2.0, reference, 0.0, w, r)?
        };
        emit(row);
    }

    let name = "lesson 5.0: x *= 5; x *= x; x += x (float64, 1000x500x500)";
    if opts.wants(name) {
        let (d0, d1, d2) = z.lesson5;
        let len = d0 * d1 * d2;
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
        let expected = {
            let v = 1.0f64 * 5.0; // the lesson on the host: 5, 25, 50
            v * v + v * v
        };
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut x,
            |x| {
                // free the last result first, then poison every free block of this size (the
                // last result's, and the two the square and the sum freed), so the square and
                // the sum get NaN blocks, never one holding a correct 50
                *x = Array::<f64>::zeros(1)?;
                poison_pool(len, f64::NAN, 3)?;
                *x = Array::<f64>::ones([d0, d1, d2])?;
                Ok(())
            },
            |x| lesson(x),
            |x, ()| checker.compare_const(x, expected),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            (3 * len * 8 * 2) as f64,
            "rw",
            "x *= x and x += x allocate a new array in Rust (no aliasing in place)",
        ));
    }

    let name = "ones (float64, 2 GiB)";
    if opts.wants(name) {
        let check = summary(&Array::<f64>::ones(n)?)?;
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut (),
            |_| poison_pool(n, f64::NAN, POOL_POISON),
            |_| Array::<f64>::ones(n),
            |_, a| checker.compare_const(&a, 1.0),
        )?;
        emit(Row::op(name, m, span, check, (n * 8) as f64, "w", ""));
    }

    let name = "arange (float64, 2^28)";
    if opts.wants(name) {
        let check = summary(&Array::<f64>::arange(0.0, n as f64)?)?;
        let reference = Array::from_slice_on(&host_vec(n, |i| i as f64), &dev)?;
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut (),
            |_| poison_pool(n, f64::NAN, POOL_POISON),
            |_| Array::<f64>::arange(0.0, n as f64),
            |_, a| checker.compare(&a, &reference, 0.0),
        )?;
        emit(Row::op(name, m, span, check, (n * 8) as f64, "w", ""));
    }

    let name = "linspace (float64, 2^28)";
    if opts.wants(name) {
        let check = summary(&Array::<f64>::linspace(0.0, 1.0, n)?)?;
        let last = (n - 1) as f64;
        let reference = Array::from_slice_on(&host_vec(n, |i| i as f64 / last), &dev)?;
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut (),
            |_| poison_pool(n, f64::NAN, POOL_POISON),
            |_| Array::<f64>::linspace(0.0, 1.0, n),
            |_, a| checker.compare(&a, &reference, 1e-12),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            (n * 8) as f64,
            "w",
            "checked to 1e-12 relative (start + i * step and i / (n - 1) differ in the last bits)",
        ));
    }

    let name = "DLPack round trip: export + import (float32, 2^28, no copy)";
    if opts.wants(name) {
        // The array leaves as a DLPack tensor and comes back; the check is that it is the
        // same buffer (address) holding the same values.
        let a = pattern_f32(n)?;
        let address = a.as_device_ptr().ok();
        let check = summary(&a)?;
        let reference = pattern_f32(n)?;
        let mut slot = Some(a);
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut slot,
            |_| Ok(()),
            |slot| {
                let a = slot.take().ok_or_else(|| Error::Other("no array".into()))?;
                *slot = Some(Array::<f32>::from_dlpack(a.into_dlpack()?)?);
                Ok(())
            },
            |slot, ()| {
                let a = slot
                    .as_ref()
                    .ok_or_else(|| Error::Other("no array".into()))?;
                let now = a.as_device_ptr().ok();
                if now != address {
                    let as_f64 = |p: Option<u64>| p.map_or(-1.0, |p| p as f64);
                    return Ok(Outcome::scalar(as_f64(now), as_f64(address), 0.0));
                }
                checker.compare(a, &reference, 0.0)
            },
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            0.0,
            "",
            "host work only: no byte moves; gpukit synchronises its stream before export",
        ));
    }

    const REDUCTIONS: [&str; 3] = [
        "sum (float64, 2^28)",
        "mean (float64, 2^28)",
        "max (float64, 2^28)",
    ];
    if REDUCTIONS.iter().any(|x| opts.wants(x)) {
        // two inputs in turns, so a result left over from the previous call is wrong
        let inputs = [
            Array::<f64>::arange(0.0, n as f64)?,
            Array::<f64>::arange(1.0, (n + 1) as f64)?,
        ];
        let refs = [reduction_refs(0, n as u64), reduction_refs(1, n as u64)];
        // sums of 2^28 values pass 2^53 and round (a tree reduction: ~1e-13 relative); the two
        // inputs' results differ by 2/n = 7.5e-9 relative, so 1e-10 still tells them apart
        for (k, name, tol) in [
            (0, REDUCTIONS[0], 1e-10),
            (1, REDUCTIONS[1], 1e-10),
            (2, REDUCTIONS[2], 0.0),
        ] {
            if !opts.wants(name) {
                continue;
            }
            let f = |a: &Array<f64>| -> Result<f64> {
                match k {
                    0 => a.sum(),
                    1 => a.mean(),
                    _ => a.max(),
                }
            };
            let check = vec![f(&inputs[0])?];
            let mut turn = 0usize;
            let m = measure(
                t,
                w,
                r,
                "the value against the exact one (integer arithmetic on the host); inputs alternate",
                &mut turn,
                |turn| {
                    *turn += 1;
                    Ok(())
                },
                |turn| f(&inputs[*turn % 2]),
                |turn, v| Ok(Outcome::scalar(v, refs[*turn % 2][k], tol)),
            )?;
            emit(Row::op(
                name,
                m,
                span,
                check,
                (n * 8) as f64,
                "r",
                "the value is returned to the host on both sides",
            ));
        }
    }

    let name = "fizzbuzz kernel (lesson 2.2, 50M int32)";
    if opts.wants(name) {
        let len = z.fizzbuzz;
        let threads = 256usize;
        let blocks = len.div_ceil(threads);
        let reference = Array::from_slice_on(&fizzbuzz_ref(len), &dev)?;
        let mut out = Array::<i32>::full(len, -1)?;
        launch!(fizzbuzz[blocks, threads](&mut out))?;
        let v = out.to_vec()?;
        let mut counts = [0f64; 5];
        for &x in &v {
            counts[if (0..4).contains(&x) { x as usize } else { 4 }] += 1.0;
        }
        let check = counts.to_vec(); // [plain, fizz, buzz, fizzbuzz, unwritten]
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut out,
            |out| out.fill(-1),
            |out| launch!(fizzbuzz[blocks, threads](out)),
            |out, ()| checker.compare(out, &reference, 0.0),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            (len * 4) as f64,
            "w",
            "#[kernel]",
        ));
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
    let mut blur_reference: Option<Array<f32>> = None;
    for (name, note, blur) in blurs {
        if !opts.wants(name) {
            continue;
        }
        let (h, wd, c) = z.blur;
        let img = pattern_f32(h * wd * c)?.into_shape([h, wd, c])?;
        if blur_reference.is_none() {
            let host_img = host_vec(h * wd * c, pattern_f32_at);
            blur_reference = Some(Array::from_slice_on(&blur_ref(&host_img, z.blur), &dev)?);
        }
        let reference = blur_reference.as_ref().expect("made above");
        let blocks = (wd.div_ceil(16), h.div_ceil(16));
        let mut out = Array::<f32>::full([h, wd, c], f32::NAN)?;
        blur(&img, &mut out, blocks)?;
        let check = summary(&out)?;
        let m = measure(
            t,
            w,
            r,
            FULL_CHECK,
            &mut out,
            |out| out.fill(f32::NAN),
            |out| blur(&img, out, blocks),
            |out, ()| checker.compare(out, reference, 1e-6),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            (h * wd * c * 4 * 2) as f64,
            "rw",
            note,
        ));
    }
    drop(blur_reference);

    let name = "launch overhead: empty kernel";
    if opts.wants(name) && dev.is_cuda() {
        let module = Module::from_cuda("extern \"C\" __global__ void empty_kernel() {}")?;
        let k = module.kernel("empty_kernel")?;
        launch!(k[1, 1]())?;
        synchronize()?;
        let (host_ms, wall_ms) = per_launch(r, z.launches, || launch!(k[1, 1]()), synchronize)?;
        emit(Row {
            name,
            unit: "per_launch",
            span_ms: vec![],
            host_ms,
            device_ms: vec![],
            wall_ms,
            verify: None,
            check: vec![z.launches as f64],
            bytes: 0.0,
            access: "",
            span: "",
            note: "host_ms = host time per launch, wall_ms = per launch including the device draining the queue",
        });
    }

    let name = "launch in a graph";
    if opts.wants(name) && dev.is_cuda() {
        // The same empty kernel, `launches` launches captured once into a graph, the graph
        // replayed: per kernel launch, the host time of one replay and the time until it drained.
        let module = Module::from_cuda("extern \"C\" __global__ void empty_kernel() {}")?;
        let k = module.kernel("empty_kernel")?;
        launch!(k[1, 1]())?;
        synchronize()?;
        let n = z.launches;
        let graph = Graph::capture_on(&dev, || (0..n).try_for_each(|_| launch!(k[1, 1]())))?;
        graph.launch()?; // the first replay uploads the graph
        synchronize()?;
        let (mut host_ms, mut wall_ms) = per_launch(r, 1, || graph.launch(), synchronize)?;
        host_ms
            .iter_mut()
            .chain(wall_ms.iter_mut())
            .for_each(|t| *t /= n as f64);
        emit(Row {
            name,
            unit: "per_launch",
            span_ms: vec![],
            host_ms,
            device_ms: vec![],
            wall_ms,
            verify: None,
            check: vec![n as f64],
            bytes: 0.0,
            access: "",
            span: "",
            note: "20000 empty-kernel launches captured in one graph (gpukit::Graph), replayed once per sample: host_ms = host time of a replay per launch in it, wall_ms = until it drained",
        });
    }

    let name = "launch overhead: tiny a * 2 (1 element float32)";
    if opts.wants(name) {
        let a = Array::<f32>::full(1, 1.5)?;
        let check = summary(&(&a * 2.0f32)?)?;
        let (host_ms, wall_ms) = per_launch(
            r,
            z.launches,
            || {
                let _b = (&a * 2.0f32)?;
                Ok(())
            },
            synchronize,
        )?;
        let mut verify = Verify::new("one more call after the timing, its pool block poisoned");
        poison_pool(1, f32::NAN, 1)?;
        let b = (&a * 2.0f32)?;
        verify.push(Outcome::scalar(b.item()? as f64, 3.0, 0.0));
        emit(Row {
            name,
            unit: "per_launch",
            span_ms: vec![],
            host_ms,
            device_ms: vec![],
            wall_ms,
            verify: Some(verify),
            check,
            bytes: 0.0,
            access: "",
            span: "",
            note: "host_ms = host time per operation, wall_ms = per operation including the device draining the queue",
        });
    }

    // first launch of a new kernel, cold and warm kernel cache, and NVRTC's floor (CUDA only)
    crate::first_launch::rows(opts, dev, emit)?;
    const MATMULS: [&str; 2] = ["matmul (float32, 4096^2)", "matmul (float64, 4096^2)"];
    if MATMULS.iter().any(|x| opts.wants(x)) {
        let reference = matmul_ref(z.matmul);
        if opts.wants(MATMULS[0]) {
            emit(matmul_row::<f32>(
                t, checker, MATMULS[0], z.matmul, &reference, 1e-4, w, r,
            )?);
        }
        if opts.wants(MATMULS[1]) {
            emit(matmul_row::<f64>(
                t, checker, MATMULS[1], z.matmul, &reference, 1e-12, w, r,
            )?);
        }
    }

    crate::sort_rows::rows(opts, dev, t, checker, emit)?;
    if let Some(row) = crate::fft::fft_row(opts, t, checker, z.fft)? {
        emit(row);
    }

    const MATMULS_BIG: [&str; 2] = ["matmul (float32, 8192^2)", "matmul (float64, 8192^2)"];
    if MATMULS_BIG.iter().any(|x| opts.wants(x)) {
        // Exact in float64 at this size too: sums of 8192 multiples of 2^-16 below 8192.
        let reference = matmul_ref(z.matmul_big);
        if opts.wants(MATMULS_BIG[0]) {
            emit(matmul_row::<f32>(
                t,
                checker,
                MATMULS_BIG[0],
                z.matmul_big,
                &reference,
                1e-4,
                w,
                r,
            )?);
        }
        if opts.wants(MATMULS_BIG[1]) {
            emit(matmul_row::<f64>(
                t,
                checker,
                MATMULS_BIG[1],
                z.matmul_big,
                &reference,
                1e-12,
                w,
                r,
            )?);
        }
    }

    let name = "SVD (float64, 1000x1000)";
    if opts.wants(name) {
        emit(crate::svd_row::svd_row(t, name, z.svd, w, r)?);
    }

    let name = "random (float64, 10000x5000)";
    if opts.wants(name) {
        emit(crate::random_row::random_row(t, name, z.random, w, r)?);
    }

    let name = "transpose copy (float64, 8192^2)";
    if opts.wants(name) {
        emit(transpose_row(t, checker, name, z.transpose, w, r)?);
    }

    type AxisOp = fn(&Array<f64>) -> Result<Array<f64>>;
    let axis_rows: [(&'static str, AxisOp, usize, f64, &'static str); 3] = [
        (
            "sum along axis 0 (float64, 10000x5000)",
            |a| a.sum_axis(0),
            0,
            0.0,
            "the reduced array stays on the device; reference exact (multiples of 2^-8)",
        ),
        (
            "sum along axis 1 (float64, 10000x5000)",
            |a| a.sum_axis(1),
            1,
            0.0,
            "the reduced array stays on the device; reference exact (multiples of 2^-8)",
        ),
        (
            "std along axis 1 (float64, 10000x5000)",
            |a| a.std_axis(1, 0),
            2,
            1e-12,
            "two passes over the input (mean, squared deviations), as NumPy; checked to 1e-12 relative",
        ),
    ];
    for (name, f, which, tol, note) in axis_rows {
        if opts.wants(name) {
            let want = axis_ref(z.axes, which);
            emit(axis_row(
                t,
                checker,
                (name, note),
                z.axes,
                f,
                want,
                tol,
                (w, r),
            )?);
        }
    }

    const TRANSFERS: [&str; 4] = [
        "to_device 2 GiB (pageable host memory)",
        "to_host 2 GiB (pageable host memory)",
        "to_device 2 GiB (pinned host memory)",
        "to_host 2 GiB (pinned host memory)",
    ];
    if TRANSFERS.iter().any(|x| opts.wants(x)) {
        transfers(opts, dev, t, &TRANSFERS, emit)?;
    }
    Ok(())
}

/// The row `name`: `&a * two` (a new array each call) against `reference` (host-computed).
#[allow(clippy::too_many_arguments)]
fn times2_row<T: CheckElem + Numeric + Float>(
    t: &mut Timer,
    checker: &Checker,
    name: &'static str,
    a: Array<T>,
    two: T,
    reference: Vec<T>,
    tol: f64,
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let len = a.size();
    let check = summary(&(&a * two)?)?;
    let reference = Array::from_slice_on(&reference, &a.device())?;
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        FULL_CHECK,
        &mut (),
        |_| poison_pool(len, T::from_f64(f64::NAN), POOL_POISON),
        |_| &a * two,
        |_, b| checker.compare(&b, &reference, tol),
    )?;
    Ok(Row::op(
        name,
        m,
        span,
        check,
        (a.nbytes() * 2) as f64,
        "rw",
        "",
    ))
}

/// The row `name`: `a.matmul(&b)` of two `n`×`n` matrices (cuBLAS on a GPU; a new array each
/// call, its pool block poisoned first), every element against the float64 host reference.
#[allow(clippy::too_many_arguments)]
fn matmul_row<T: CheckElem + gpukit::linalg::MatmulElement>(
    t: &mut Timer,
    checker: &Checker,
    name: &'static str,
    n: usize,
    reference: &[f64],
    tol: f64,
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let input = |b: bool| -> Result<Array<T>> {
        Array::from_vec(
            host_vec(n * n, |i| T::from_f64(matmul_input_at(i, b))),
            [n, n],
        )
    };
    let (a, b) = (input(false)?, input(true)?);
    let reference = Array::from_vec(reference.iter().map(|&x| T::from_f64(x)).collect(), [n, n])?;
    let check = summary(&a.matmul(&b)?)?;
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        FULL_CHECK,
        &mut (),
        |_| poison_pool(n * n, T::from_f64(f64::NAN), POOL_POISON),
        |_| a.matmul(&b),
        |_, c| checker.compare(&c, &reference, tol),
    )?;
    Ok(Row::op(
        name,
        m,
        span,
        check,
        (3 * n * n * std::mem::size_of::<T>()) as f64,
        "rw",
        "cuBLAS GEMM, compute-bound (2n^3 flops: benchlib adds TFLOP/s and % of the GEMM \
         ceiling); reference exact in float64, float32 checked to 1e-4 relative",
    ))
}

/// The row `name`: `a.t().copy()` of an `n`×`n` float64 `a = arange(n * n).reshape(n, n)` (a
/// strided view made contiguous: NumPy's `ascontiguousarray(a.T)`), every element of every timed
/// result against the transpose computed on the host.
fn transpose_row(
    t: &mut Timer,
    checker: &Checker,
    name: &'static str,
    n: usize,
    warmup: usize,
    reps: usize,
) -> Result<Row> {
    let a = Array::<f64>::arange(0.0, (n * n) as f64)?.into_shape([n, n])?;
    let reference = Array::from_vec(host_vec(n * n, |k| ((k % n) * n + k / n) as f64), [n, n])?;
    let check = summary(&a.t().copy()?)?;
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        FULL_CHECK,
        &mut (),
        |_| poison_pool(n * n, f64::NAN, POOL_POISON),
        |_| a.t().copy(),
        |_, c| checker.compare(&c, &reference, 0.0),
    )?;
    Ok(Row::op(
        name,
        m,
        span,
        check,
        (2 * n * n * 8) as f64,
        "rw",
        "a.t().copy() against CuPy's ascontiguousarray(a.T): a strided view made contiguous \
         (gpukit: 32x32 tiles through shared memory)",
    ))
}

/// The host reference of the axis rows for the `rows`×`cols` matrix of [`matmul_input_at`]
/// (A), in float64: `which` 0 and 1 are the sums along axis 0 and 1 (multiples of 2^-8 below 1:
/// exact in any order), 2 the standard deviations along axis 1 (two passes, as NumPy).
pub fn axis_ref((rows, cols): (usize, usize), which: usize) -> Vec<f64> {
    let at = |i: usize, j: usize| matmul_input_at(i * cols + j, false);
    match which {
        0 => (0..cols)
            .map(|j| (0..rows).map(|i| at(i, j)).sum())
            .collect(),
        1 => (0..rows)
            .map(|i| (0..cols).map(|j| at(i, j)).sum())
            .collect(),
        _ => (0..rows)
            .map(|i| {
                let mean = (0..cols).map(|j| at(i, j)).sum::<f64>() / cols as f64;
                let ss: f64 = (0..cols).map(|j| (at(i, j) - mean).powi(2)).sum();
                (ss / cols as f64).sqrt()
            })
            .collect(),
    }
}

/// The row `name`: `f(a)` (a reduction along an axis of the `rows`×`cols` float64 matrix of
/// [`matmul_input_at`]; a new array each call, its pool block poisoned first), every element
/// against the host reference `want` to `tol` relative.
#[allow(clippy::too_many_arguments)]
fn axis_row(
    t: &mut Timer,
    checker: &Checker,
    (name, note): (&'static str, &'static str),
    (rows, cols): (usize, usize),
    f: fn(&Array<f64>) -> Result<Array<f64>>,
    want: Vec<f64>,
    tol: f64,
    (warmup, reps): (usize, usize),
) -> Result<Row> {
    let a = Array::from_vec(
        host_vec(rows * cols, |i| matmul_input_at(i, false)),
        [rows, cols],
    )?;
    let len = want.len();
    let reference = Array::from_vec(want, [len])?;
    let check = summary(&f(&a)?)?;
    let span = t.how();
    let m = measure(
        t,
        warmup,
        reps,
        FULL_CHECK,
        &mut (),
        |_| poison_pool(len, f64::NAN, POOL_POISON),
        |_| f(&a),
        |_, s| checker.compare(&s, &reference, tol),
    )?;
    let device_ms = device_times(reps, || f(&a))?;
    let mut row = Row::op(
        name,
        m,
        span,
        check,
        ((rows * cols + len) * 8) as f64,
        "r",
        note,
    );
    row.device_ms = device_ms;
    Ok(row)
}

/// The four 2 GiB transfers: results compared in full with the host data (device results
/// copied back to the host for that, outside the timing).
fn transfers(
    opts: &Opts,
    dev: Device,
    t: &mut Timer,
    names: &[&'static str; 4],
    emit: &mut dyn FnMut(Row),
) -> Result<()> {
    let n = opts.sizes.n;
    let (w, r) = (1, opts.reps.min(3));
    let span = t.how();
    let host: Vec<f64> = host_vec(n, |i| (i % 1000) as f64 * 0.5);
    let bytes = (n * 8) as f64;
    let name = names[0];
    if opts.wants(name) {
        let check = summary(&Array::from_slice_on(&host, &dev)?)?;
        let m = measure(
            t,
            w,
            r,
            HOST_CHECK,
            &mut (),
            |_| poison_pool(n, f64::NAN, POOL_POISON),
            |_| Array::from_slice_on(&host, &dev),
            |_, a| Ok(compare_host(&a.to_vec()?, &host, 0.0)),
        )?;
        emit(Row::op(name, m, span, check, bytes, "h2d", ""));
    }
    let name = names[1];
    if opts.wants(name) {
        let a = Array::from_slice_on(&host, &dev)?;
        let check = summary(&a)?;
        let m = measure(
            t,
            w,
            r,
            HOST_CHECK,
            &mut (),
            |_| Ok(()),
            |_| a.to_vec(),
            |_, v| Ok(compare_host(&v, &host, 0.0)),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            bytes,
            "d2h",
            "into a new Vec",
        ));
    }
    let name = names[2];
    if opts.wants(name) {
        let pinned = PinnedBuffer::from_slice_on(&host, &dev)?;
        let check = summary(&Array::from_pinned_on(&pinned, n, &dev)?)?;
        let m = measure(
            t,
            w,
            r,
            HOST_CHECK,
            &mut (),
            |_| poison_pool(n, f64::NAN, POOL_POISON),
            |_| Array::from_pinned_on(&pinned, n, &dev),
            |_, a| Ok(compare_host(&a.to_vec()?, &host, 0.0)),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            bytes,
            "h2d",
            "PinnedBuffer -> new device array (Array::from_pinned_on)",
        ));
    }
    let name = names[3];
    if opts.wants(name) {
        let a = Array::from_slice_on(&host, &dev)?;
        let mut pinned = PinnedBuffer::<f64>::zeros_on(n, &dev)?;
        a.copy_to_pinned(&mut pinned)?;
        let check = vec![pinned.iter().sum(), pinned[0], pinned[n / 2], pinned[n - 1]];
        let m = measure(
            t,
            w,
            r,
            HOST_CHECK,
            &mut pinned,
            |p| {
                p.as_mut_slice().par_iter_mut().for_each(|x| *x = f64::NAN);
                Ok(())
            },
            |p| a.copy_to_pinned(p),
            |p, ()| Ok(compare_host(p.as_slice(), &host, 0.0)),
        )?;
        emit(Row::op(
            name,
            m,
            span,
            check,
            bytes,
            "d2h",
            "device array -> existing PinnedBuffer (copy_to_pinned), poisoned with NaN before each call",
        ));
    }
    Ok(())
}

/// `gpukit-bench diag`: where the host time of a tiny operation goes (no JSON, no CuPy twin).
/// Each line is the median host time per call over batches of [`DIAG_BATCH`] calls with the
/// device synchronised between batches (outside the timed region, so the launch queue never
/// fills), then the back-to-back rate over [`FULL`]`.launches` calls and one synchronisation.
pub fn diag(batches: usize) -> Result<()> {
    set_default_device(Device::cuda(0)?);
    let launches = FULL.launches;
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
        for _ in 0..launches {
            f()?;
        }
        let host = t0.elapsed().as_secs_f64() * 1e6 / launches as f64;
        synchronize()?;
        let all = t0.elapsed().as_secs_f64() * 1e6 / launches as f64;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_references() {
        assert_eq!(
            fizzbuzz_ref(15),
            vec![0, 0, 1, 0, 2, 1, 0, 0, 1, 2, 0, 1, 0, 0, 3]
        );
        assert_eq!(reduction_refs(0, 4), [6.0, 1.5, 3.0]);
        assert_eq!(reduction_refs(1, 4), [10.0, 2.5, 4.0]);
        let n = 1u64 << 28;
        let [s, m, x] = reduction_refs(0, n);
        assert_eq!(s, (n as f64) * ((n - 1) as f64) / 2.0);
        assert_eq!((m, x), (134217727.5, 268435455.0));
        assert_eq!(pattern_f32_at(252), 1.0 / 251.0);
    }

    #[test]
    fn blur_reference_clamps_edges_and_averages() {
        // 2x3 image, one channel: every output is the mean of its clamped 3x3 neighbourhood
        let img = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let out = blur_ref(&img, (2, 3, 1));
        // corner (0,0): rows {0,0,1}, columns {0,0,1}
        let corner = (1.0 + 1.0 + 2.0) * 2.0 + (4.0 + 4.0 + 5.0);
        assert_eq!(out[0], corner / 9.0);
        let mid = (1.0 + 2.0 + 3.0) * 2.0 + (4.0 + 5.0 + 6.0); // (0,1)
        assert_eq!(out[1], mid / 9.0);
        assert_eq!(out.len(), 6);
    }

    #[test]
    fn matmul_reference_is_the_exact_product() {
        let n = 70; // more than one row block
        let c = matmul_ref(n);
        for (i, j) in [(0, 0), (3, 69), (69, 1), (64, 64)] {
            let mut s = 0i64; // in units of 2^-16: exact integers
            for p in 0..n {
                s += (((i * n + p) % 251) * ((p * n + j) % 253)) as i64;
            }
            assert_eq!(c[i * n + j], s as f64 / 65536.0, "({i}, {j})");
        }
        assert_eq!(matmul_input_at(252, false), 1.0 / 256.0);
        assert_eq!(matmul_input_at(252, true), 252.0 / 256.0);
    }

    #[test]
    fn axis_references() {
        let (r, c) = (70, 9);
        let s0 = axis_ref((r, c), 0);
        let s1 = axis_ref((r, c), 1);
        let sd = axis_ref((r, c), 2);
        assert_eq!(sd.len(), r);
        let row: Vec<f64> = (0..c).map(|j| ((5 * c + j) % 251) as f64 / 256.0).collect();
        let m = row.iter().sum::<f64>() / c as f64;
        let v = row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / c as f64;
        assert!((sd[5] - v.sqrt()).abs() < 1e-15);
        assert_eq!((s0.len(), s1.len()), (c, r));
        assert_eq!(s0.iter().sum::<f64>(), s1.iter().sum::<f64>());
        let col3: f64 = (0..r).map(|i| ((i * c + 3) % 251) as f64 / 256.0).sum();
        assert_eq!(s0[3], col3);
    }

    /// The whole GPU harness on the CPU backend at tiny sizes: every row's every check passes,
    /// the rows have the fields benchlib.py reads, and nothing panics.
    #[test]
    fn dry_run_on_the_cpu_backend() {
        let opts = Opts {
            warmup: 1,
            reps: 2,
            only: None,
            sizes: DRY,
        };
        let checker = Checker::for_device(&Device::cpu()).unwrap();
        let mut rows = Vec::new();
        run_all(
            &opts,
            Device::cpu(),
            &mut Timer::host(),
            &checker,
            &mut |row| rows.push(row),
        )
        .unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
        // all but the two rows of the raw-CUDA empty kernel (plain launches, and in a graph)
        assert_eq!(rows.len(), 32, "{names:?}");
        for row in &rows {
            let j = row.json("gpukit").render();
            assert!(j.contains("\"verify\":"), "{j}");
            match row.unit {
                "op" => {
                    let v = row.verify.as_ref().unwrap();
                    assert!(v.ok(), "{}: {:?}", row.name, v);
                    assert_eq!(v.checked, 2 * row.span_ms.len(), "{}", row.name);
                    assert_eq!(row.span_ms.len(), row.wall_ms.len());
                    // a hand-over row (DLPack) moves no byte, and says so
                    let handover = row.bytes == 0.0
                        && row.access.is_empty()
                        && row.note.contains("no byte moves");
                    let moves = row.bytes > 0.0 && !row.access.is_empty();
                    assert!(moves || handover, "{}", row.name);
                }
                "per_launch" => assert!(row.verify.as_ref().unwrap().ok()),
                "floor" => assert_eq!(row.span_ms.len(), 2),
                u => panic!("unit {u}"),
            }
        }
    }

    /// A kernel that writes nothing cannot pass: the poisoned output fails its check.
    #[test]
    fn an_output_left_unwritten_fails() {
        set_default_device(Device::cpu());
        let checker = Checker::for_device(&Device::cpu()).unwrap();
        let len = 3000;
        let reference = Array::from_slice(&fizzbuzz_ref(len)).unwrap();
        let mut out = Array::<i32>::full(len, -1).unwrap();
        let m = measure(
            &mut Timer::host(),
            0,
            2,
            FULL_CHECK,
            &mut out,
            |o| o.fill(-1),
            |_| Ok(()), // "launches" nothing
            |o, ()| checker.compare(o, &reference, 0.0),
        )
        .unwrap();
        assert_eq!((m.verify.checked, m.verify.failed), (4, 4));
        assert_eq!(m.verify.worst.unwrap().mismatches, len as u64);
        // and the real kernel passes the same check
        launch!(fizzbuzz[len.div_ceil(256), 256usize](&mut out)).unwrap();
        assert!(checker.compare(&out, &reference, 0.0).unwrap().ok());
    }
}
