//! Every construct of the kernel language, on every type it supports, compiles with NVRTC:
//! the generated CUDA C++ (`full_source`, with `#[device]` helpers) becomes PTX.
//!
//! Needs libnvrtc only, no GPU. Without it the tests print `skipped: ...` and pass, unless
//! `GPUKIT_REQUIRE_NVRTC=1` (as in CI), where they fail.

// Some checks read constants the macros generate.
#![allow(clippy::assertions_on_constants)]

use gpukit::__private::{full_source, BlockCtx, CpuArgs, KernelInfo, VectorizeInfo};
use gpukit::prelude::*;

/// Compiles `info` to PTX; `false` when libnvrtc is missing (and not required: see
/// `gpukit::testing::nvrtc_or_skip`).
fn compiles(info: &KernelInfo) -> bool {
    if !gpukit::testing::nvrtc_or_skip() {
        return false;
    }
    match gpukit::__private::ptx(info) {
        Ok(ptx) => {
            assert!(
                ptx.contains(&format!(".entry {}(", info.name)),
                "PTX of `{}` lacks its entry point",
                info.name
            );
            true
        }
        Err(e) => panic!(
            "`{}` does not compile:\n{e}\n{}",
            info.name,
            full_source(info)
        ),
    }
}

fn no_cpu(_: &BlockCtx, _: &CpuArgs) {}

/// A `KernelInfo` around a `#[vectorize]` translation unit, to compile it the same way.
fn vectorized(v: &'static VectorizeInfo, name: &'static str) -> KernelInfo {
    KernelInfo {
        name,
        rust_source: v.rust_source,
        cuda_source: v.cuda_source,
        device_fns: &[],
        params: &[],
        array_names: &[],
        checked: false,
        proven: None,
        uses_barrier: false,
        shared_bytes: 0,
        cpu: no_cpu,
    }
}

#[kernel]
fn float_methods_f32(x: &[f32], y: &mut [f32], b: &mut [bool]) {
    let i = grid(1);
    let v = x[i];
    y[i] = v.sqrt()
        + v.cbrt()
        + v.sin()
        + v.cos()
        + v.tan()
        + v.asin()
        + v.acos()
        + v.atan()
        + v.sinh()
        + v.cosh()
        + v.tanh()
        + v.asinh()
        + v.acosh()
        + v.atanh()
        + v.exp()
        + v.exp2()
        + v.exp_m1()
        + v.ln()
        + v.ln_1p()
        + v.log2()
        + v.log10()
        + v.log(3.0)
        + v.floor()
        + v.ceil()
        + v.round()
        + v.trunc()
        + v.fract()
        + v.recip()
        + v.to_degrees()
        + v.to_radians()
        + v.powi(-2)
        + v.powf(1.5)
        + v.atan2(0.5)
        + v.hypot(2.0)
        + v.copysign(-1.0)
        + v.mul_add(2.0, 3.0)
        + v.abs()
        + v.signum()
        + v.min(1.0)
        + v.max(-1.0)
        + v.clamp(0.0, 1.0)
        + f32::sqrt(v)
        + f32::max(v, 2.0);
    b[i] = v.is_nan()
        || v.is_finite() && !v.is_infinite()
        || v.is_sign_negative()
        || v.is_sign_positive();
}

#[kernel]
fn float_methods_f64(x: &[f64], y: &mut [f64]) {
    let i = grid(1);
    let v = x[i];
    y[i] = v.sqrt()
        + v.cbrt()
        + v.sin()
        + v.exp()
        + v.ln()
        + v.log(2.0)
        + v.powi(3)
        + v.powf(0.5)
        + v.atan2(1.0)
        + v.hypot(1.0)
        + v.mul_add(1.0, 2.0)
        + v.fract()
        + v.signum()
        + v.recip()
        + v.clamp(-1.0, 1.0)
        + v.min(0.0)
        + v.max(1.0)
        + v % 2.5
        + std::f64::consts::TAU
        + f64::MIN_POSITIVE
        + f64::EPSILON;
}

#[kernel]
fn int_methods(a: &mut [i32], b: &mut [u32], c: &mut [i64], d: &mut [u64], e: &mut [u8]) {
    let i = grid(1);
    a[i] = a[i].abs()
        + a[i].pow(2)
        + a[i].min(3).max(-3).clamp(-1, 1)
        + a[i].signum()
        + a[i].wrapping_add(1).wrapping_sub(2).wrapping_mul(3)
        + (a[i].count_ones() as i32);
    b[i] = b[i].pow(3)
        + b[i].leading_zeros()
        + b[i].trailing_zeros()
        + b[i].min(9)
        + (b[i] >> 3)
        + (b[i] << 2);
    c[i] = c[i].abs() / 3 % 5 + c[i].pow(2) + (c[i] << 40) + (c[i] >> 1) + i64::MIN + i64::MAX;
    d[i] = d[i] / 7 + d[i] % 9 + d[i].count_ones() as u64 + u64::MAX;
    e[i] = e[i] * 3 + e[i] / 2 - e[i] % 4 + e[i].count_ones() as u8 + (e[i] << 1) + !e[i] + u8::MAX;
}

#[kernel]
fn narrow_locals(out: &mut [i64]) {
    let i = grid(1);
    let a: i8 = -100;
    let b: i16 = 30000;
    let c: u16 = 65000;
    let d: isize = -5;
    let e = a * 2 + 1;
    let f = b + b;
    let g = c * c;
    let h = (a as i16) << 3;
    let k = -d * 3 / 2 % 7;
    out[i] = e as i64 + f as i64 + g as i64 + h as i64 + k as i64 + (!a) as i64 + (a >> 1) as i64;
}

#[kernel]
fn every_cast(
    x: &[f64],
    b: &[bool],
    u: &mut [u8],
    i32s: &mut [i32],
    i64s: &mut [i64],
    u32s: &mut [u32],
    u64s: &mut [u64],
    f: &mut [f32],
) {
    let i = grid(1);
    let v = x[i];
    u[i] = v as u8 + (v as f32) as u8 + b[i] as u8;
    i32s[i] = v as i32 + (v as f32) as i32 + (v as i64) as i32 + b[i] as i32;
    i64s[i] =
        v as i64 + (v as f32) as i64 + (v as u32) as i64 + (v as i8) as i64 + (v as i16) as i64;
    u32s[i] = v as u32 + (v as u64) as u32 + (v as u16) as u32 + (v as usize) as u32;
    u64s[i] = v as u64 + (v as isize) as u64 + i as u64;
    f[i] = v as f32 + (v as i32) as f32 + (u[i] as f64) as f32;
}

#[kernel]
fn atomics_all(
    i32s: &mut [i32],
    u32s: &mut [u32],
    i64s: &mut [i64],
    u64s: &mut [u64],
    f32s: &mut [f32],
    f64s: &mut [f64],
) {
    let i = grid(1) % 4;
    let a = atomic_add(&mut i32s[i], 1)
        + atomic_sub(&mut i32s[i], 1)
        + atomic_max(&mut i32s[i], 2)
        + atomic_min(&mut i32s[i], 0)
        + atomic_exch(&mut i32s[i], 3)
        + atomic_cas(&mut i32s[i], 3, 4);
    let b = atomic_add(&mut u32s[i], 1)
        + atomic_sub(&mut u32s[i], 1)
        + atomic_max(&mut u32s[i], 2)
        + atomic_min(&mut u32s[i], 0)
        + atomic_exch(&mut u32s[i], 3)
        + atomic_cas(&mut u32s[i], 3, 4);
    let c = atomic_add(&mut i64s[i], 1)
        + atomic_sub(&mut i64s[i], 1)
        + atomic_max(&mut i64s[i], 2)
        + atomic_min(&mut i64s[i], 0)
        + atomic_exch(&mut i64s[i], 3)
        + atomic_cas(&mut i64s[i], 3, 4);
    let d = atomic_add(&mut u64s[i], 1)
        + atomic_sub(&mut u64s[i], 1)
        + atomic_max(&mut u64s[i], 2)
        + atomic_min(&mut u64s[i], 0)
        + atomic_exch(&mut u64s[i], 3)
        + atomic_cas(&mut u64s[i], 3, 4);
    let e = atomic_add(&mut f32s[i], 1.0)
        + atomic_sub(&mut f32s[i], 1.0)
        + atomic_max(&mut f32s[i], 2.0)
        + atomic_min(&mut f32s[i], 0.0)
        + atomic_exch(&mut f32s[i], 3.0)
        + atomic_cas(&mut f32s[i], 3.0, 4.0);
    let f = atomic_add(&mut f64s[i], 1.0)
        + atomic_sub(&mut f64s[i], 1.0)
        + atomic_max(&mut f64s[i], 2.0)
        + atomic_min(&mut f64s[i], 0.0)
        + atomic_exch(&mut f64s[i], 3.0)
        + atomic_cas(&mut f64s[i], 3.0, 4.0);
    f64s[4] = a as f64 + b as f64 + c as f64 + d as f64 + e as f64 + f;
}

#[kernel]
fn views_and_shared(
    a: &View2<f32>,
    b: &mut View2<f32>,
    c: &View3<i32>,
    d: &mut View3<u8>,
    flags: &[bool],
    n: usize,
    s: isize,
    on: bool,
) {
    let (x, y, z) = grid3();
    let tile = shared_array::<f32, 256>();
    let counts = shared_array::<u32, 32>();
    let marks = shared_array::<bool, 8>();
    let t = (thread_idx().x + thread_idx().y * block_dim().x) as usize % 256;
    tile[t] = a[[x, y]];
    counts[t % 32] = block_idx().z + grid_dim().y;
    marks[t % 8] = flags[t % flags.len()] && on;
    sync_threads();
    if x < b.shape(0) && y < b.shape(1) && a.len() > n && s < 0 {
        b[[x, y]] = tile[255 - t] + counts[0] as f32;
    }
    if marks[0] {
        d[[x, y, z]] = (c[[x, y, z]] + c.len() as i32) as u8;
    }
    let (gx, gy) = gridsize2();
    let (sx, sy, sz) = gridsize3();
    let (px, py) = grid2();
    b[[px % gx, py % gy]] += (sx + sy + sz) as f32;
}

#[kernel(unchecked)]
fn views_unchecked(a: &View2<f32>, b: &mut View3<f64>, c: &mut [i64]) {
    let (x, y) = grid2();
    let tile = shared_array::<i64, 16>();
    tile[x % 16] = c[y];
    b[[x, y, 0]] = a[[x, y]] as f64 + b.shape(2) as f64 + tile[0] as f64;
    c[x] += 1;
}

#[device]
fn hypot3(x: f64, y: f64, z: f64) -> f64 {
    (x * x + y * y + z * z).sqrt()
}

#[device]
fn collatz_steps(mut n: u64) -> u32 {
    let mut steps = 0;
    while n != 1 && n != 0 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

#[device]
fn flag(x: i32) -> bool {
    x > 0 && x % 2 == 0
}

#[device]
fn norm_steps(x: f64, n: u64) -> f64 {
    hypot3(x, x, x) + collatz_steps(n) as f64
}

#[kernel]
fn device_calls(x: &[f64], n: &[u64], out: &mut [f64], ok: &mut [bool]) {
    let i = grid(1);
    let h = norm_steps(x[i], n[i]);
    let steps = collatz_steps(n[i]);
    let t = h * 2.0 + 1.0;
    out[i] = t + steps as f64;
    ok[i] = flag(steps as i32) || flag(3);
}

/// A recursive helper.
#[device]
fn factorial(n: u64) -> u64 {
    if n <= 1 {
        1
    } else {
        n * factorial(n - 1)
    }
}

#[kernel]
fn factorials(out: &mut [u64]) {
    let i = grid(1);
    if i < out.len() {
        out[i] = factorial(i as u64);
    }
}

/// Scalars only, and no parameters at all.
#[kernel]
fn scalars_only(n: u32, x: f64, flag: bool, big: usize, neg: isize) {
    let m = if flag {
        n as f64 * x
    } else {
        big as f64 - neg as f64
    };
    let _unused = m * 2.0;
}

#[kernel]
fn no_params() {
    sync_threads();
}

#[vectorize]
fn vec1(x: u8) -> f32 {
    x as f32 / 255.0
}

#[vectorize]
fn vec4(a: f64, b: i64, c: bool, d: u32) -> i32 {
    if c {
        (a as i64 + b) as i32
    } else {
        d as i32
    }
}

/// Kernels as the lessons (notebooks/) write them.
mod lessons {
    use gpukit::prelude::*;

    #[kernel]
    pub fn who_am_i(block: &mut [u32], thread: &mut [u32], global: &mut [u64]) {
        let i = grid(1);
        if i < global.len() {
            block[i] = block_idx().x;
            thread[i] = thread_idx().x;
            global[i] = i as u64;
        }
    }

    #[kernel]
    pub fn count_hits(x: &[f64], y: &[f64], hits: &mut [u64]) {
        let i = grid(1);
        if i < x.len() && x[i] * x[i] + y[i] * y[i] <= 1.0 {
            atomic_add(&mut hits[0], 1u64);
        }
    }

    #[kernel]
    pub fn heavy_f64(input: &[f64], output: &mut [f64]) {
        let i = grid(1);
        if i < input.len() {
            let mut v = input[i];
            for _ in 0..100 {
                v = (v * 1.000001 + 0.5).sqrt();
            }
            output[i] = v;
        }
    }

    #[kernel]
    pub fn fizzbuzz(numbers: &[i64], codes: &mut [u8]) {
        let i = grid(1);
        if i < numbers.len() {
            let v = numbers[i];
            codes[i] = if v % 15 == 0 {
                3
            } else if v % 5 == 0 {
                2
            } else if v % 3 == 0 {
                1
            } else {
                0
            };
        }
    }

    #[kernel]
    pub fn highest_fizz(numbers: &[i64], codes: &[u8], best: &mut [i64]) {
        let i = grid(1);
        if i < codes.len() && codes[i] == 1 {
            atomic_max(&mut best[0], numbers[i]);
        }
    }

    #[kernel]
    pub fn blur(src: &View3<f32>, dst: &mut View3<f32>) {
        let (x, y, c) = grid3();
        let height = src.shape(0);
        let width = src.shape(1);
        if x < height && y < width && c < src.shape(2) {
            let mut sum = 0.0f32;
            for dx in 0..3 {
                for dy in 0..3 {
                    let row = (x + dx).max(1).min(height) - 1;
                    let col = (y + dy).max(1).min(width) - 1;
                    sum += src[[row, col, c]];
                }
            }
            dst[[x, y, c]] = sum / 9.0;
        }
    }

    #[kernel]
    pub fn weighted_grey(src: &View3<f32>, dst: &mut View3<f32>, wr: f32, wg: f32, wb: f32) {
        let (x, y) = grid2();
        if x < src.shape(0) && y < src.shape(1) {
            let v = wr * src[[x, y, 0]] + wg * src[[x, y, 1]] + wb * src[[x, y, 2]];
            dst[[x, y, 0]] = v;
            dst[[x, y, 1]] = v;
            dst[[x, y, 2]] = v;
            dst[[x, y, 3]] = src[[x, y, 3]];
        }
    }

    #[vectorize]
    pub fn hypotenuse(a: f32, b: f32) -> f32 {
        (a * a + b * b).sqrt()
    }
}

#[test]
fn lesson_kernels_compile_with_nvrtc() {
    for info in [
        &lessons::who_am_i::INFO,
        &lessons::count_hits::INFO,
        &lessons::heavy_f64::INFO,
        &lessons::fizzbuzz::INFO,
        &lessons::highest_fizz::INFO,
        &lessons::blur::INFO,
        &lessons::weighted_grey::INFO,
    ] {
        if !compiles(info) {
            return;
        }
    }
    compiles(&vectorized(
        &lessons::__GPUKIT_VECTORIZE_hypotenuse,
        "hypotenuse_vectorized",
    ));
}

#[test]
fn every_construct_compiles_with_nvrtc() {
    for info in [
        &float_methods_f32::INFO,
        &float_methods_f64::INFO,
        &int_methods::INFO,
        &narrow_locals::INFO,
        &every_cast::INFO,
        &atomics_all::INFO,
        &views_and_shared::INFO,
        &views_unchecked::INFO,
        &device_calls::INFO,
        &scalars_only::INFO,
        &no_params::INFO,
        &factorials::INFO,
    ] {
        if !compiles(info) {
            return;
        }
    }
    assert!(!views_unchecked::INFO.checked);
    assert!(views_and_shared::INFO.uses_barrier);
}

#[test]
fn kernels_without_arrays_launch_on_the_cpu() {
    let cpu = Device::cpu();
    gpukit::set_default_device(cpu);
    scalars_only.launch((2, 3), 4, 1.5, true, 7, -2).unwrap();
    launch!(no_params[1, 8]()).unwrap();
    let mut f = Array::<u64>::zeros_on(6, &cpu).unwrap();
    launch!(factorials[1, 8](&mut f)).unwrap();
    assert_eq!(f.to_vec().unwrap(), vec![1, 1, 2, 6, 24, 120]);
}

#[test]
fn vectorize_units_compile_with_nvrtc() {
    for info in [
        vectorized(&__GPUKIT_VECTORIZE_vec1, "vec1_vectorized"),
        vectorized(&__GPUKIT_VECTORIZE_vec4, "vec4_vectorized"),
    ] {
        if !compiles(&info) {
            return;
        }
    }
}

#[test]
fn device_helpers_are_written_once_callees_first() {
    let src = device_calls.source();
    assert_eq!(
        src.matches("__device__ double gk_dev_hypot3(double x, double y, double z) {")
            .count(),
        1
    );
    assert_eq!(
        src.matches("__device__ unsigned int gk_dev_collatz_steps(unsigned long long n) {")
            .count(),
        1
    );
    let callee = src
        .find("gk_dev_hypot3(double x, double y, double z) {")
        .unwrap();
    let caller = src
        .find("gk_dev_norm_steps(double x, unsigned long long n) {")
        .unwrap();
    assert!(callee < caller);
    assert!(
        src.find("extern \"C\" __global__ void device_calls(")
            .unwrap()
            > caller
    );
    assert_eq!(
        collatz_steps(6),
        8,
        "#[device] functions stay callable from Rust"
    );
    assert!((hypot3(2.0, 3.0, 6.0) - 7.0).abs() < 1e-12);
}
