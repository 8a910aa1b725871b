//! Every construct of the kernel language, run through `#[kernel]`: on the CPU backend the
//! results equal the same computation in plain Rust; with a GPU, the GPU results equal the CPU
//! results on random inputs of several sizes.
//!
//! Why this file is long: one test per construct of the kernel language, each with its plain-Rust reference; they share the GPU-vs-CPU harness at the top.

// The expected values repeat the kernels' own expressions (`.min(a).max(b)` as written there),
// and some checks read constants the macros generate.
#![allow(clippy::manual_clamp, clippy::assertions_on_constants)]

use gpukit::prelude::*;
use gpukit::Error;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

/// Slices, scalars, grid(1), `if`, f32 arithmetic with literals typed by context.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &[f32], out: &mut [f32]) {
    let i = grid(1);
    if i < x.len() {
        out[i] = a * x[i] + y[i] + 0.5;
    }
}

/// Integer widths, wrapping, Rust division/remainder (division by zero gives 0), shifts, bit ops.
#[kernel]
fn int_ops(
    a: &[i32],
    b: &[i32],
    out32: &mut [i32],
    out8: &mut [u8],
    out64: &mut [i64],
    outu: &mut [u32],
) {
    let i = grid(1);
    if i >= a.len() {
        return;
    }
    let (x, y) = (a[i], b[i]);
    out32[i] = x.wrapping_mul(31) + x / y - x % y + (x << (y & 7)) - (x >> 3) ^ (y | 1) & !x;
    let small = x as u8;
    out8[i] = small * 3 + 250;
    let wide = x as i64;
    out64[i] = wide * wide - (y as i64).pow(2) + wide.abs().min(1000).max(-1000);
    let u = x as u32;
    outu[i] = u.wrapping_sub(7).count_ones() + u.leading_zeros() + u.trailing_zeros() + (u / 3) % 7;
}

/// `as` casts with Rust semantics: float -> integer saturates, NaN becomes 0.
#[kernel]
fn casts(
    f: &[f32],
    to_u8: &mut [u8],
    to_i32: &mut [i32],
    to_u64: &mut [u64],
    to_f64: &mut [f64],
    flags: &mut [bool],
) {
    let i = grid(1);
    if i < f.len() {
        let v = f[i];
        to_u8[i] = v as u8;
        to_i32[i] = (v * 1.0e9) as i32;
        to_u64[i] = v as u64;
        to_f64[i] = (v as f64) * 0.25 + (to_i32[i] as f64);
        flags[i] = v.is_nan() || v > 100.0;
    }
}

/// f32 math stays f32; f64 math uses f64.
#[kernel]
fn math(x: &[f32], y: &mut [f32], z: &[f64], w: &mut [f64]) {
    let i = grid(1);
    if i < x.len() {
        let v = x[i];
        y[i] = v.abs().sqrt()
            + v.sin() * v.cos()
            + (v * 0.1).exp()
            + v.powi(3) * 0.01
            + v.abs().powf(0.5).max(0.25).min(3.0)
            + v.floor()
            + v.ceil() * 0.5
            + v.round()
            + v.clamp(-1.0, 1.0)
            + v.atan2(2.0)
            + v.hypot(1.0)
            + v.mul_add(0.5, 1.0)
            + v.abs().ln_1p()
            + v.tanh()
            + std::f32::consts::PI;
        let d = z[i];
        w[i] = d.abs().ln()
            + d.abs().log2()
            + d.abs().log10()
            + d.trunc()
            + d.fract()
            + d.signum()
            + d.recip().min(1.0e6)
            + d.to_degrees() * 0.001
            + (d % 1.5);
    }
}

/// while, loop, break, continue, for with ranges (step_by, ..=, rev), early return and `if`
/// as an expression.
#[kernel]
fn control(n: &[u32], out: &mut [i64]) {
    let i = grid(1);
    if i >= n.len() {
        return;
    }
    let limit = n[i] % 50;
    let mut acc: i64 = 0;
    let mut j = 0;
    while j < limit {
        j += 1;
        if j % 3 == 0 {
            continue;
        }
        if j > 40 {
            break;
        }
        acc += j as i64;
    }
    let mut k = 0u32;
    loop {
        k += 7;
        if k > limit {
            break;
        }
    }
    acc += k as i64;
    for s in (0..limit).step_by(4) {
        acc -= s as i64;
    }
    for s in 1..=limit % 5 {
        acc *= s as i64;
    }
    for s in (0..limit % 4).rev() {
        acc = acc * 10 + s as i64;
    }
    let bonus = if acc > 100 {
        let t = acc / 2;
        t + 1
    } else if acc < 0 {
        -1
    } else {
        0
    };
    out[i] = acc + bonus;
}

/// `match` on integers: literals, alternatives, ranges, guards, a binding catch-all.
#[kernel]
fn classify(v: &[i64], codes: &mut [u8], bumped: &mut [i64]) {
    let i = grid(1);
    if i < v.len() {
        let x = v[i];
        codes[i] = match x % 15 {
            0 => 3,
            5 | 10 => 2,
            3 | 6 | 9 | 12 => 1,
            _ => 0,
        };
        match x {
            i64::MIN..=-1 => bumped[i] = -x,
            0 => {}
            1..=9 => bumped[i] = x * 100,
            big if big > 1000 => {
                bumped[i] = big / 1000;
            }
            other => bumped[i] = other + 1,
        }
    }
}

/// Per-thread local arrays: a digit histogram and a weights table typed by its use.
#[kernel]
fn local_arrays(x: &[u32], best: &mut [u32], smooth: &mut [f32]) {
    let i = grid(1);
    if i < x.len() {
        let mut digits = [0u32; 10];
        let mut v = x[i];
        while v > 0 {
            digits[(v % 10) as usize] += 1;
            v /= 10;
        }
        let mut top = 0;
        for d in 0..10 {
            if digits[d] > digits[top] {
                top = d;
            }
        }
        best[i] = top as u32 * 100 + digits[top];
        let w = [0.25, 0.5, 0.25];
        let mut s = 0.0;
        for k in 0..w.len() {
            s += w[k] * x[(i + k) % x.len()] as f32;
        }
        smooth[i] = s;
    }
}

/// A local array indexed past its end.
#[kernel]
fn local_oob(out: &mut [f32], reach: usize) {
    let i = grid(1);
    if i < out.len() {
        let w = [1.0f32; 4];
        out[i] = w[i + reach];
    }
}

/// A grid-stride loop: any grid covers any length.
#[kernel]
fn grid_stride(x: &mut [f64]) {
    let start = grid(1);
    let stride = gridsize(1);
    for i in (start..x.len()).step_by(stride) {
        x[i] = x[i] * 2.0 + 1.0;
    }
}

/// 2-D and 3-D views with grid2().
#[kernel]
fn to_gray(img: &View3<u8>, gray: &mut View2<f32>) {
    let (r, c) = grid2();
    if r < img.shape(0) && c < img.shape(1) {
        let red = img[[r, c, 0]] as f32;
        let green = img[[r, c, 1]] as f32;
        let blue = img[[r, c, 2]] as f32;
        gray[[r, c]] = 0.299 * red + 0.587 * green + 0.114 * blue;
    }
}

/// 3-D grid over a 3-D view.
#[kernel]
fn index_sum(v: &mut View3<u32>) {
    let (x, y, z) = grid3();
    if x < v.shape(0) && y < v.shape(1) && z < v.shape(2) {
        v[[x, y, z]] = (x * 100 + y * 10 + z) as u32;
    }
}

/// Shared memory, sync_threads and thread/block indices: one partial sum per block.
#[kernel]
fn block_sum(x: &[f32], partial: &mut [f32]) {
    const TPB: usize = 64;
    let tile = shared_array::<f32, TPB>();
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * block_dim().x as usize + t;
    tile[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let mut s = TPB / 2;
    while s > 0 {
        if t < s {
            tile[t] += tile[t + s];
        }
        sync_threads();
        s /= 2;
    }
    if t == 0 {
        partial[block_idx().x as usize] = tile[0];
    }
}

/// Atomics of every kind.
#[kernel]
fn atomics(
    v: &[u32],
    hist: &mut [u32],
    fmax: &mut [f32],
    imin: &mut [i64],
    total: &mut [u64],
    sub: &mut [i32],
    last: &mut [u32],
    cas: &mut [u32],
) {
    let i = grid(1);
    if i < v.len() {
        let b = (v[i] % hist.len() as u32) as usize;
        atomic_add(&mut hist[b], 1);
        atomic_max(&mut fmax[0], v[i] as f32 * 0.5);
        atomic_min(&mut imin[0], -(v[i] as i64));
        atomic_add(&mut total[0], v[i] as u64);
        atomic_sub(&mut sub[0], 2);
        atomic_exch(&mut last[0], 7);
        atomic_cas(&mut cas[0], 0, 1);
    }
}

/// A #[device] helper calling another.
#[device]
fn smoothstep(x: f32) -> f32 {
    let t = clamp01(x);
    t * t * (3.0 - 2.0 * t)
}

#[device]
fn clamp01(x: f32) -> f32 {
    if x < 0.0 {
        return 0.0;
    }
    x.min(1.0)
}

#[kernel]
fn use_helpers(x: &[f32], y: &mut [f32]) {
    let i = grid(1);
    if i < x.len() {
        y[i] = smoothstep(x[i]) + clamp01(x[i] * 2.0);
    }
}

/// A linear congruential generator in u32 (wrapping arithmetic) for Monte Carlo pi; the point
/// test is in integers so that both backends count exactly the same hits.
#[kernel]
fn monte_carlo(seeds: &[u32], hits: &mut [u32], samples: u32) {
    let i = grid(1);
    if i < seeds.len() {
        let mut s = seeds[i];
        let mut count = 0;
        for _ in 0..samples {
            s = s * 1664525 + 1013904223;
            let x = (s >> 16) as u64;
            s = s * 1664525 + 1013904223;
            let y = (s >> 16) as u64;
            if x * x + y * y <= 65536 * 65536 {
                count += 1;
            }
        }
        hits[i] = count;
    }
}

/// `usize` scalar parameters and an out-of-bounds index on purpose.
#[kernel]
fn offset_read(x: &[f32], out: &mut [f32], offset: usize) {
    let i = grid(1);
    if i < out.len() {
        out[i] = x[i + offset];
    }
}

/// The same without bounds checks.
#[kernel(unchecked)]
fn offset_read_unchecked(x: &[f32], out: &mut [f32], offset: usize) {
    let i = grid(1);
    if i < out.len() {
        out[i] = x[i + offset];
    }
}

/// `#[vectorize]`: an elementwise function over arrays and scalars.
#[vectorize]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

// ---------------------------------------------------------------------------------------------
// Runners: the same launches on any device.
// ---------------------------------------------------------------------------------------------

fn blocks(n: usize, tpb: usize) -> usize {
    n.div_ceil(tpb).max(1)
}

fn on<T: Element>(v: Vec<T>, dev: &Device) -> Array<T> {
    let n = v.len();
    Array::from_vec_on(v, n, dev).unwrap()
}

fn zeros<T: Element>(n: usize, dev: &Device) -> Array<T> {
    Array::zeros_on(n, dev).unwrap()
}

fn run_saxpy(dev: &Device, x: &[f32], y: &[f32]) -> Vec<f32> {
    let (xa, ya) = (on(x.to_vec(), dev), on(y.to_vec(), dev));
    let mut out = zeros::<f32>(x.len(), dev);
    launch!(saxpy[blocks(x.len(), 128), 128](2.5, &xa, &ya, &mut out)).unwrap();
    out.to_vec().unwrap()
}

type IntOut = (Vec<i32>, Vec<u8>, Vec<i64>, Vec<u32>);

fn run_int_ops(dev: &Device, a: &[i32], b: &[i32]) -> IntOut {
    let n = a.len();
    let (aa, ba) = (on(a.to_vec(), dev), on(b.to_vec(), dev));
    let (mut o1, mut o2, mut o3, mut o4) =
        (zeros(n, dev), zeros(n, dev), zeros(n, dev), zeros(n, dev));
    launch!(int_ops[blocks(n, 64), 64](&aa, &ba, &mut o1, &mut o2, &mut o3, &mut o4)).unwrap();
    (
        o1.to_vec().unwrap(),
        o2.to_vec().unwrap(),
        o3.to_vec().unwrap(),
        o4.to_vec().unwrap(),
    )
}

type CastOut = (Vec<u8>, Vec<i32>, Vec<u64>, Vec<f64>, Vec<bool>);

fn run_casts(dev: &Device, f: &[f32]) -> CastOut {
    let n = f.len();
    let fa = on(f.to_vec(), dev);
    let (mut a, mut b, mut c, mut d, mut e) = (
        zeros(n, dev),
        zeros(n, dev),
        zeros(n, dev),
        zeros(n, dev),
        zeros(n, dev),
    );
    launch!(casts[blocks(n, 64), 64](&fa, &mut a, &mut b, &mut c, &mut d, &mut e)).unwrap();
    (
        a.to_vec().unwrap(),
        b.to_vec().unwrap(),
        c.to_vec().unwrap(),
        d.to_vec().unwrap(),
        e.to_vec().unwrap(),
    )
}

fn run_math(dev: &Device, x: &[f32], z: &[f64]) -> (Vec<f32>, Vec<f64>) {
    let n = x.len();
    let (xa, za) = (on(x.to_vec(), dev), on(z.to_vec(), dev));
    let (mut y, mut w) = (zeros(n, dev), zeros(n, dev));
    launch!(math[blocks(n, 64), 64](&xa, &mut y, &za, &mut w)).unwrap();
    (y.to_vec().unwrap(), w.to_vec().unwrap())
}

fn run_control(dev: &Device, n: &[u32]) -> Vec<i64> {
    let na = on(n.to_vec(), dev);
    let mut out = zeros(n.len(), dev);
    launch!(control[blocks(n.len(), 32), 32](&na, &mut out)).unwrap();
    out.to_vec().unwrap()
}

fn run_classify(dev: &Device, v: &[i64]) -> (Vec<u8>, Vec<i64>) {
    let va = on(v.to_vec(), dev);
    let (mut c, mut b) = (zeros(v.len(), dev), zeros(v.len(), dev));
    launch!(classify[blocks(v.len(), 64), 64](&va, &mut c, &mut b)).unwrap();
    (c.to_vec().unwrap(), b.to_vec().unwrap())
}

fn run_local_arrays(dev: &Device, x: &[u32]) -> (Vec<u32>, Vec<f32>) {
    let xa = on(x.to_vec(), dev);
    let (mut b, mut s) = (zeros(x.len(), dev), zeros(x.len(), dev));
    launch!(local_arrays[blocks(x.len(), 64), 64](&xa, &mut b, &mut s)).unwrap();
    (b.to_vec().unwrap(), s.to_vec().unwrap())
}

fn run_grid_stride(dev: &Device, x: &[f64]) -> Vec<f64> {
    let mut xa = on(x.to_vec(), dev);
    launch!(grid_stride[3, 32](&mut xa)).unwrap();
    xa.to_vec().unwrap()
}

fn run_gray(dev: &Device, h: usize, w: usize, img: &[u8]) -> Vec<f32> {
    let ia = Array::from_vec_on(img.to_vec(), vec![h, w, 3], dev).unwrap();
    let mut g = Array::<f32>::zeros_on(vec![h, w], dev).unwrap();
    launch!(to_gray[(h.div_ceil(8), w.div_ceil(8)), (8, 8)](&ia, &mut g)).unwrap();
    g.to_vec().unwrap()
}

fn run_index_sum(dev: &Device, d: [usize; 3]) -> Vec<u32> {
    let mut v = Array::<u32>::zeros_on(d.to_vec(), dev).unwrap();
    launch!(index_sum[(d[0].div_ceil(4), d[1].div_ceil(4), d[2].div_ceil(2)), (4, 4, 2)](&mut v))
        .unwrap();
    v.to_vec().unwrap()
}

fn run_block_sum(dev: &Device, x: &[f32]) -> Vec<f32> {
    let nb = blocks(x.len(), 64);
    let xa = on(x.to_vec(), dev);
    let mut p = zeros(nb, dev);
    launch!(block_sum[nb, 64](&xa, &mut p)).unwrap();
    p.to_vec().unwrap()
}

type AtomicOut = (Vec<u32>, f32, i64, u64, i32, u32, u32);

fn run_atomics(dev: &Device, v: &[u32]) -> AtomicOut {
    let va = on(v.to_vec(), dev);
    let mut hist = zeros::<u32>(10, dev);
    let mut fmax = on(vec![-1.0f32], dev);
    let mut imin = on(vec![0i64], dev);
    let mut total = zeros::<u64>(1, dev);
    let mut sub = on(vec![1000i32], dev);
    let mut last = zeros::<u32>(1, dev);
    let mut cas = zeros::<u32>(1, dev);
    launch!(atomics[blocks(v.len(), 64), 64](&va, &mut hist, &mut fmax, &mut imin, &mut total, &mut sub, &mut last, &mut cas)).unwrap();
    (
        hist.to_vec().unwrap(),
        fmax.to_vec().unwrap()[0],
        imin.to_vec().unwrap()[0],
        total.to_vec().unwrap()[0],
        sub.to_vec().unwrap()[0],
        last.to_vec().unwrap()[0],
        cas.to_vec().unwrap()[0],
    )
}

fn run_helpers(dev: &Device, x: &[f32]) -> Vec<f32> {
    let xa = on(x.to_vec(), dev);
    let mut y = zeros(x.len(), dev);
    launch!(use_helpers[blocks(x.len(), 64), 64](&xa, &mut y)).unwrap();
    y.to_vec().unwrap()
}

fn run_monte_carlo(dev: &Device, seeds: &[u32], samples: u32) -> Vec<u32> {
    let sa = on(seeds.to_vec(), dev);
    let mut hits = zeros(seeds.len(), dev);
    launch!(monte_carlo[blocks(seeds.len(), 64), 64](&sa, &mut hits, samples)).unwrap();
    hits.to_vec().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Plain-Rust references and inputs
// ---------------------------------------------------------------------------------------------

fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

fn floats(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut r = rng(seed);
    (0..n).map(|_| r.random_range(lo..hi)).collect()
}

fn rust_div(x: i32, y: i32) -> i32 {
    if y == 0 {
        0
    } else {
        x.wrapping_div(y)
    }
}

fn rust_rem(x: i32, y: i32) -> i32 {
    if y == 0 {
        0
    } else {
        x.wrapping_rem(y)
    }
}

fn expected_int_ops(a: &[i32], b: &[i32]) -> IntOut {
    let mut o = (vec![], vec![], vec![], vec![]);
    for (&x, &y) in a.iter().zip(b) {
        let sh = x.wrapping_shl((y & 7) as u32);
        let r = x
            .wrapping_mul(31)
            .wrapping_add(rust_div(x, y))
            .wrapping_sub(rust_rem(x, y))
            .wrapping_add(sh)
            .wrapping_sub(x >> 3)
            ^ ((y | 1) & !x);
        o.0.push(r);
        o.1.push((x as u8).wrapping_mul(3).wrapping_add(250));
        let w = x as i64;
        o.2.push(
            w.wrapping_mul(w)
                .wrapping_sub((y as i64).wrapping_pow(2))
                .wrapping_add(w.wrapping_abs().min(1000).max(-1000)),
        );
        let u = x as u32;
        o.3.push(
            u.wrapping_sub(7).count_ones() + u.leading_zeros() + u.trailing_zeros() + (u / 3) % 7,
        );
    }
    o
}

fn expected_control(n: u32) -> i64 {
    let limit = n % 50;
    let mut acc: i64 = 0;
    let mut j = 0;
    while j < limit {
        j += 1;
        if j % 3 == 0 {
            continue;
        }
        if j > 40 {
            break;
        }
        acc += j as i64;
    }
    let mut k = 0u32;
    loop {
        k += 7;
        if k > limit {
            break;
        }
    }
    acc += k as i64;
    for s in (0..limit).step_by(4) {
        acc -= s as i64;
    }
    for s in 1..=limit % 5 {
        acc *= s as i64;
    }
    for s in (0..limit % 4).rev() {
        acc = acc * 10 + s as i64;
    }
    let bonus = if acc > 100 {
        acc / 2 + 1
    } else if acc < 0 {
        -1
    } else {
        0
    };
    acc + bonus
}

fn smoothstep_ref(x: f32) -> f32 {
    let t = x.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn close32(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn close64(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

// ---------------------------------------------------------------------------------------------
// CPU backend == plain Rust
// ---------------------------------------------------------------------------------------------

fn cpu() -> Device {
    Device::cpu()
}

#[test]
fn cpu_saxpy() {
    let (x, y) = (floats(1000, 1, -10.0, 10.0), floats(1000, 2, -10.0, 10.0));
    let out = run_saxpy(&cpu(), &x, &y);
    for i in 0..x.len() {
        assert_eq!(out[i], 2.5f32 * x[i] + y[i] + 0.5, "at {i}");
    }
}

#[test]
fn cpu_int_ops_wrap_and_divide_like_rust() {
    let mut r = rng(3);
    let mut a: Vec<i32> = (0..500).map(|_| r.random()).collect();
    let mut b: Vec<i32> = (0..500).map(|_| r.random_range(-20..20)).collect();
    a.extend([i32::MIN, i32::MAX, -1, 0, 7]);
    b.extend([-1, 0, 0, 5, -3]);
    assert_eq!(run_int_ops(&cpu(), &a, &b), expected_int_ops(&a, &b));
}

#[test]
fn cpu_casts_saturate() {
    let f = vec![
        -5.0,
        0.0,
        1.5,
        255.9,
        300.0,
        1.0e20,
        -1.0e20,
        f32::NAN,
        f32::INFINITY,
        3.99,
    ];
    let (u8s, i32s, u64s, f64s, flags) = run_casts(&cpu(), &f);
    for (i, &v) in f.iter().enumerate() {
        assert_eq!(u8s[i], v as u8);
        assert_eq!(i32s[i], (v * 1.0e9) as i32);
        assert_eq!(u64s[i], v as u64);
        let want = (v as f64) * 0.25 + ((v * 1.0e9) as i32) as f64;
        assert!(want.to_bits() == f64s[i].to_bits() || (want.is_nan() && f64s[i].is_nan()));
        assert_eq!(flags[i], v.is_nan() || v > 100.0);
    }
    assert_eq!(
        (u8s[4], u8s[7], i32s[5], i32s[6]),
        (255, 0, i32::MAX, i32::MIN)
    );
}

#[test]
fn cpu_math_matches_std() {
    let x = floats(300, 4, -4.0, 4.0);
    let z: Vec<f64> = floats(300, 5, -50.0, 50.0)
        .into_iter()
        .map(f64::from)
        .collect();
    let (y, w) = run_math(&cpu(), &x, &z);
    for i in 0..x.len() {
        let v = x[i];
        let want = v.abs().sqrt()
            + v.sin() * v.cos()
            + (v * 0.1).exp()
            + v.powi(3) * 0.01
            + v.abs().powf(0.5).max(0.25).min(3.0)
            + v.floor()
            + v.ceil() * 0.5
            + v.round()
            + v.clamp(-1.0, 1.0)
            + v.atan2(2.0)
            + v.hypot(1.0)
            + v.mul_add(0.5, 1.0)
            + v.abs().ln_1p()
            + v.tanh()
            + std::f32::consts::PI;
        assert!(close32(y[i], want, 1e-6), "{} vs {want}", y[i]);
        let d = z[i];
        let want = d.abs().ln()
            + d.abs().log2()
            + d.abs().log10()
            + d.trunc()
            + d.fract()
            + d.signum()
            + d.recip().min(1.0e6)
            + d.to_degrees() * 0.001
            + (d % 1.5);
        assert!(close64(w[i], want, 1e-12), "{} vs {want}", w[i]);
    }
}

#[test]
fn cpu_control_flow() {
    let n: Vec<u32> = (0..200).collect();
    let out = run_control(&cpu(), &n);
    for (i, &v) in n.iter().enumerate() {
        assert_eq!(out[i], expected_control(v), "n = {v}");
    }
}

#[test]
fn cpu_match() {
    let v: Vec<i64> = (-20..2000).collect();
    let (codes, bumped) = run_classify(&cpu(), &v);
    for (k, &x) in v.iter().enumerate() {
        let want = match x % 15 {
            0 => 3,
            5 | 10 => 2,
            3 | 6 | 9 | 12 => 1,
            _ => 0,
        };
        assert_eq!(codes[k], want, "x = {x}");
        let b = match x {
            i64::MIN..=-1 => -x,
            0 => 0,
            1..=9 => x * 100,
            big if big > 1000 => big / 1000,
            other => other + 1,
        };
        assert_eq!(bumped[k], b, "x = {x}");
    }
}

#[test]
fn cpu_local_arrays() {
    let x: Vec<u32> = (0..3000u32)
        .map(|i| i.wrapping_mul(2654435761) >> 7)
        .collect();
    let (best, smooth) = run_local_arrays(&cpu(), &x);
    for (i, &v0) in x.iter().enumerate() {
        let mut digits = [0u32; 10];
        let mut v = v0;
        while v > 0 {
            digits[(v % 10) as usize] += 1;
            v /= 10;
        }
        let mut top = 0;
        for d in 0..10 {
            if digits[d] > digits[top] {
                top = d;
            }
        }
        assert_eq!(best[i], top as u32 * 100 + digits[top], "x = {v0}");
        let w = [0.25f32, 0.5, 0.25];
        let mut s = 0.0f32;
        for (k, wk) in w.iter().enumerate() {
            s += wk * x[(i + k) % x.len()] as f32;
        }
        assert_eq!(smooth[i], s);
    }
    let mut out = zeros::<f32>(8, &cpu());
    launch!(local_oob[1, 8](&mut out, 0)).unwrap_err();
    let mut out = zeros::<f32>(4, &cpu());
    launch!(local_oob[1, 8](&mut out, 0)).unwrap();
    match launch!(local_oob[1, 8](&mut out, 2)).unwrap_err() {
        Error::IndexOutOfBounds(oob) => {
            assert_eq!(
                (oob.kernel.as_str(), oob.array.as_str(), oob.len),
                ("local_oob", "w", 4)
            );
            assert!(oob.index >= 4 && oob.index < 6, "{oob}");
        }
        other => panic!("expected an out-of-bounds error, got {other}"),
    }
}

#[test]
fn cpu_grid_stride_covers_everything() {
    let x: Vec<f64> = (0..1000).map(f64::from).collect();
    let out = run_grid_stride(&cpu(), &x);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, x[i] * 2.0 + 1.0);
    }
}

#[test]
fn cpu_views() {
    let (h, w) = (13, 21);
    let mut r = rng(6);
    let img: Vec<u8> = (0..h * w * 3).map(|_| r.random()).collect();
    let g = run_gray(&cpu(), h, w, &img);
    for p in 0..h * w {
        let want = 0.299f32 * img[3 * p] as f32
            + 0.587 * img[3 * p + 1] as f32
            + 0.114 * img[3 * p + 2] as f32;
        assert_eq!(g[p], want);
    }
    let d = [5, 6, 3];
    let v = run_index_sum(&cpu(), d);
    let mut k = 0;
    for x in 0..d[0] {
        for y in 0..d[1] {
            for z in 0..d[2] {
                assert_eq!(v[k], (x * 100 + y * 10 + z) as u32);
                k += 1;
            }
        }
    }
}

#[test]
fn cpu_shared_memory_and_barriers() {
    let x: Vec<f32> = (0..1000).map(|i| (i % 17) as f32).collect();
    let p = run_block_sum(&cpu(), &x);
    for (b, s) in p.iter().enumerate() {
        let want: f32 = x.iter().skip(b * 64).take(64).sum();
        assert_eq!(*s, want, "block {b}");
    }
}

#[test]
fn cpu_atomics() {
    let v: Vec<u32> = (0..1000).map(|i| (i * 7) % 23).collect();
    let (hist, fmax, imin, total, sub, last, cas) = run_atomics(&cpu(), &v);
    let mut want = vec![0u32; 10];
    for &x in &v {
        want[(x % 10) as usize] += 1;
    }
    assert_eq!(hist, want);
    assert_eq!(fmax, 11.0);
    assert_eq!(imin, -22);
    assert_eq!(total, v.iter().map(|&x| x as u64).sum::<u64>());
    assert_eq!(sub, 1000 - 2000);
    assert_eq!((last, cas), (7, 1));
}

#[test]
fn cpu_device_helpers() {
    let x = floats(500, 7, -1.0, 2.0);
    let y = run_helpers(&cpu(), &x);
    for i in 0..x.len() {
        assert_eq!(y[i], smoothstep_ref(x[i]) + (x[i] * 2.0).clamp(0.0, 1.0));
    }
    assert_eq!(
        smoothstep(0.5),
        0.5,
        "#[device] functions stay callable from Rust"
    );
}

#[test]
fn cpu_monte_carlo_wrapping_u32() {
    let seeds: Vec<u32> = (0..256u32)
        .map(|i| i.wrapping_mul(2654435761).wrapping_add(i))
        .collect();
    let hits = run_monte_carlo(&cpu(), &seeds, 200);
    for (i, &seed) in seeds.iter().enumerate() {
        let mut s = seed;
        let mut count = 0;
        for _ in 0..200 {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            let x = (s >> 16) as u64;
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            let y = (s >> 16) as u64;
            if x * x + y * y <= 65536 * 65536 {
                count += 1;
            }
        }
        assert_eq!(hits[i], count);
    }
    let pi = 4.0 * hits.iter().sum::<u32>() as f64 / (256.0 * 200.0);
    assert!((pi - std::f64::consts::PI).abs() < 0.05, "pi = {pi}");
}

#[test]
fn cpu_out_of_bounds_is_an_error_naming_kernel_array_and_index() {
    let x = on(vec![1.0f32; 10], &cpu());
    let mut out = zeros::<f32>(10, &cpu());
    launch!(offset_read[1, 16](&x, &mut out, 0)).unwrap();
    let err = launch!(offset_read[1, 16](&x, &mut out, 3)).unwrap_err();
    match err {
        Error::IndexOutOfBounds(oob) => {
            assert_eq!(oob.kernel, "offset_read");
            assert_eq!(oob.array, "x");
            assert_eq!(oob.len, 10);
            assert!(oob.index >= 10 && oob.index < 13, "{oob}");
        }
        other => panic!("expected an out-of-bounds error, got {other}"),
    }
    // In bounds, the unchecked variant computes the same.
    let mut out2 = zeros::<f32>(7, &cpu());
    launch!(offset_read_unchecked[1, 16](&x, &mut out2, 3)).unwrap();
    assert_eq!(out2.to_vec().unwrap(), vec![1.0; 7]);
    assert!(!offset_read_unchecked::INFO.checked && offset_read::INFO.checked);
}

#[test]
fn cpu_vectorize_with_broadcast() {
    let a = on(vec![0.0f32, 10.0, 20.0], &cpu());
    let b = on(vec![1.0f32, 20.0, 40.0], &cpu());
    let r = lerp(&a, &b, 0.5f32).unwrap();
    assert_eq!(r.to_vec().unwrap(), vec![0.5, 15.0, 30.0]);
}

#[test]
fn kernel_metadata() {
    let info = &atomics::INFO;
    assert_eq!(info.name, "atomics");
    assert_eq!(info.params.len(), 8);
    assert!(!info.uses_barrier);
    assert!(block_sum::INFO.uses_barrier);
    assert_eq!(block_sum::INFO.shared_bytes, 256);
    assert_eq!(block_sum::INFO.array_names, &["x", "partial", "tile"]);
    assert_eq!(use_helpers::INFO.device_fns.len(), 2);
    assert!(saxpy::INFO
        .rust_source
        .contains("out[i] = a * x[i] + y[i] + 0.5;"));
    assert!(use_helpers
        .source()
        .contains("__device__ float gk_dev_smoothstep(float x)"));
}

// ---------------------------------------------------------------------------------------------
// GPU == CPU on random inputs of several sizes
// ---------------------------------------------------------------------------------------------

// The GPU, held for the whole test: a device reports a kernel's bounds error at its next
// synchronisation, so GPU tests of one binary must not overlap. Skips as gpukit::testing says.
use gpukit::testing::serial_gpu_or_skip as gpu;

const SIZES: [usize; 4] = [1, 100, 4097, 100_003];

#[test]
fn gpu_matches_cpu_elementwise() {
    let Some((g, _serial)) = gpu() else { return };
    for (k, &n) in SIZES.iter().enumerate() {
        let seed = 100 + k as u64;
        let (x, y) = (
            floats(n, seed, -100.0, 100.0),
            floats(n, seed + 1, -100.0, 100.0),
        );
        let (cg, cc) = (run_saxpy(&g, &x, &y), run_saxpy(&cpu(), &x, &y));
        for i in 0..n {
            assert!(
                close32(cg[i], cc[i], 1e-6),
                "saxpy n={n} i={i}: {} vs {}",
                cg[i],
                cc[i]
            );
        }
        let mut r = rng(seed);
        let a: Vec<i32> = (0..n).map(|_| r.random()).collect();
        let b: Vec<i32> = (0..n).map(|_| r.random_range(-40..40)).collect();
        assert_eq!(
            run_int_ops(&g, &a, &b),
            run_int_ops(&cpu(), &a, &b),
            "int_ops n={n}"
        );
        let mut f = floats(n, seed + 2, -1.0e3, 1.0e3);
        if n > 4 {
            f[0] = f32::NAN;
            f[1] = 1.0e20;
            f[2] = -1.0e20;
            f[3] = 256.5;
        }
        assert_eq!(run_casts(&g, &f).0, run_casts(&cpu(), &f).0, "casts n={n}");
        let (gc, cc) = (run_casts(&g, &f), run_casts(&cpu(), &f));
        assert_eq!((gc.1, gc.2, gc.4), (cc.1, cc.2, cc.4), "casts n={n}");
        let n32: Vec<u32> = (0..n).map(|_| r.random_range(0..1000)).collect();
        let (lb, ls) = (run_local_arrays(&g, &n32), run_local_arrays(&cpu(), &n32));
        assert_eq!(lb.0, ls.0, "local_arrays n={n}");
        for i in 0..n {
            assert!(close32(lb.1[i], ls.1[i], 1e-6), "local_arrays n={n} i={i}");
        }
        let signed: Vec<i64> = (0..n).map(|_| r.random_range(-5000..5000)).collect();
        assert_eq!(
            run_classify(&g, &signed),
            run_classify(&cpu(), &signed),
            "classify n={n}"
        );
        assert_eq!(
            run_control(&g, &n32),
            run_control(&cpu(), &n32),
            "control n={n}"
        );
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        assert_eq!(
            run_grid_stride(&g, &xs),
            run_grid_stride(&cpu(), &xs),
            "grid_stride n={n}"
        );
        assert_eq!(
            run_monte_carlo(&g, &n32, 50),
            run_monte_carlo(&cpu(), &n32, 50),
            "monte_carlo n={n}"
        );
        let h = floats(n, seed + 3, -1.0, 2.0);
        let (hg, hc) = (run_helpers(&g, &h), run_helpers(&cpu(), &h));
        for i in 0..n {
            assert!(close32(hg[i], hc[i], 1e-6), "helpers n={n} i={i}");
        }
    }
}

#[test]
fn gpu_matches_cpu_math() {
    let Some((g, _serial)) = gpu() else { return };
    for (k, &n) in SIZES.iter().enumerate() {
        let x = floats(n, 200 + k as u64, -4.0, 4.0);
        let z: Vec<f64> = floats(n, 300 + k as u64, -50.0, 50.0)
            .into_iter()
            .map(f64::from)
            .collect();
        let (yg, wg) = run_math(&g, &x, &z);
        let (yc, wc) = run_math(&cpu(), &x, &z);
        for i in 0..n {
            assert!(
                close32(yg[i], yc[i], 1e-5),
                "f32 math n={n} x={}: {} vs {}",
                x[i],
                yg[i],
                yc[i]
            );
            assert!(
                close64(wg[i], wc[i], 1e-12),
                "f64 math n={n} z={}: {} vs {}",
                z[i],
                wg[i],
                wc[i]
            );
        }
    }
}

#[test]
fn gpu_matches_cpu_views_shared_atomics() {
    let Some((g, _serial)) = gpu() else { return };
    for (k, &(h, w)) in [(1, 1), (17, 33), (480, 640)].iter().enumerate() {
        let mut r = rng(400 + k as u64);
        let img: Vec<u8> = (0..h * w * 3).map(|_| r.random()).collect();
        let (gg, gc) = (run_gray(&g, h, w, &img), run_gray(&cpu(), h, w, &img));
        for i in 0..gg.len() {
            assert!(close32(gg[i], gc[i], 1e-6), "gray {h}x{w} at {i}");
        }
    }
    for d in [[1, 1, 1], [7, 9, 5], [64, 32, 3]] {
        assert_eq!(
            run_index_sum(&g, d),
            run_index_sum(&cpu(), d),
            "index_sum {d:?}"
        );
    }
    for &n in &SIZES {
        let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
        assert_eq!(
            run_block_sum(&g, &x),
            run_block_sum(&cpu(), &x),
            "block_sum n={n}"
        );
        let v: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) % 1000)
            .collect();
        let (ga, ca) = (run_atomics(&g, &v), run_atomics(&cpu(), &v));
        assert_eq!(
            (ga.0, ga.1, ga.2, ga.3, ga.4, ga.6),
            (ca.0, ca.1, ca.2, ca.3, ca.4, ca.6),
            "atomics n={n}"
        );
        assert_eq!(ga.5, 7);
    }
}

#[test]
fn gpu_out_of_bounds_is_reported_and_context_survives() {
    let Some((g, _serial)) = gpu() else { return };
    let x = on(vec![1.0f32; 10], &g);
    let mut out = zeros::<f32>(10, &g);
    let launched = launch!(offset_read[1, 16](&x, &mut out, 3));
    let err = launched.and_then(|_| g.synchronize()).unwrap_err();
    match err {
        Error::IndexOutOfBounds(oob) => {
            assert_eq!(
                (oob.kernel.as_str(), oob.array.as_str(), oob.len),
                ("offset_read", "x", 10)
            );
            assert!(oob.index >= 10 && oob.index < 13, "{oob}");
        }
        other => panic!("expected an out-of-bounds error, got {other}"),
    }
    launch!(offset_read[1, 16](&x, &mut out, 0)).unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![1.0; 10]);
}

#[test]
fn gpu_vectorize_matches_cpu() {
    let Some((g, _serial)) = gpu() else { return };
    for &n in &SIZES {
        let (a, b) = (floats(n, 500, -5.0, 5.0), floats(n, 501, -5.0, 5.0));
        let rg = lerp(&on(a.clone(), &g), &on(b.clone(), &g), 0.25f32)
            .unwrap()
            .to_vec()
            .unwrap();
        let rc = lerp(&on(a, &cpu()), &on(b, &cpu()), 0.25f32)
            .unwrap()
            .to_vec()
            .unwrap();
        for i in 0..n {
            assert!(close32(rg[i], rc[i], 1e-6), "lerp n={n} i={i}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The CUDA C++ of every kernel above compiles (needs libnvrtc, no GPU)
// ---------------------------------------------------------------------------------------------

#[test]
fn every_kernel_compiles_with_nvrtc() {
    let infos = [
        &saxpy::INFO,
        &int_ops::INFO,
        &casts::INFO,
        &math::INFO,
        &control::INFO,
        &classify::INFO,
        &local_arrays::INFO,
        &local_oob::INFO,
        &grid_stride::INFO,
        &to_gray::INFO,
        &index_sum::INFO,
        &block_sum::INFO,
        &atomics::INFO,
        &use_helpers::INFO,
        &monte_carlo::INFO,
        &offset_read::INFO,
        &offset_read_unchecked::INFO,
    ];
    if !gpukit::testing::nvrtc_or_skip() {
        return;
    }
    for info in infos {
        match gpukit::__private::ptx(info) {
            Ok(ptx) => assert!(ptx.contains(&format!(".entry {}(", info.name))),
            Err(e) => panic!("`{}` does not compile: {e}", info.name),
        }
    }
}
