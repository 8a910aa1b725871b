//! Every `for` range form the kernel language accepts, against plain Rust: `a..b`, `a..=b`,
//! `(a..b).step_by(s)`, `(a..=b).step_by(s)` and `(a..b).rev()`, for signed and unsigned loop
//! variables, with empty ranges, negative bounds, bounds at the type's limits and steps larger
//! than the range. Each kernel records the first values it visits (and how many it visited, up
//! to a cap); the CPU twin always runs, the GPU where one is usable (see `gpukit::testing`).
//!
//! Why this file is long: one kernel per form and loop type (25), written out because
//! `#[kernel]` items cannot come from a `macro_rules!` with type parameters.

#![allow(clippy::unnecessary_cast, clippy::identity_op)] // one generated table for every loop type

use gpukit::prelude::*;

/// Values recorded per run; a loop that visits more stops there (so a wrong loop cannot hang).
const CAP: usize = 48;
#[kernel]
fn excl_i32(a: i32, b: i32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_i32(a: i32, b: i32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..=b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_step_i32(a: i32, b: i32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_step_i32(a: i32, b: i32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..=b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn rev_i32(a: i32, b: i32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).rev() {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_i64(a: i64, b: i64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_i64(a: i64, b: i64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..=b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_step_i64(a: i64, b: i64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_step_i64(a: i64, b: i64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..=b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn rev_i64(a: i64, b: i64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).rev() {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_u8(a: u8, b: u8, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_u8(a: u8, b: u8, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..=b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_step_u8(a: u8, b: u8, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_step_u8(a: u8, b: u8, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..=b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn rev_u8(a: u8, b: u8, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).rev() {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_u32(a: u32, b: u32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_u32(a: u32, b: u32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..=b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_step_u32(a: u32, b: u32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_step_u32(a: u32, b: u32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..=b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn rev_u32(a: u32, b: u32, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).rev() {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_u64(a: u64, b: u64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_u64(a: u64, b: u64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in a..=b {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn excl_step_u64(a: u64, b: u64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn incl_step_u64(a: u64, b: u64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..=b).step_by(s as usize) {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
#[kernel]
fn rev_u64(a: u64, b: u64, s: u64, out: &mut [i64], count: &mut [u64]) {
    if grid(1) == 0 {
        let mut n = 0usize;
        for i in (a..b).rev() {
            if n == out.len() {
                break;
            }
            out[n] = i as i64;
            n += 1;
        }
        count[0] = n as u64;
    }
}
/// What plain Rust visits: the first `CAP` values as i64.
fn reference<I: Iterator<Item = i64>>(it: I) -> Vec<i64> {
    it.take(CAP).collect()
}

/// Runs a range kernel on `device` and returns the values it visited.
fn visited(
    device: &Device,
    launch: impl FnOnce(&mut Array<i64>, &mut Array<u64>) -> gpukit::Result<()>,
) -> Vec<i64> {
    let mut out = Array::<i64>::zeros_on(CAP, device).unwrap();
    let mut count = Array::<u64>::zeros_on(1, device).unwrap();
    launch(&mut out, &mut count).unwrap();
    let n = count.to_vec().unwrap()[0] as usize;
    out.to_vec().unwrap()[..n].to_vec()
}

fn devices() -> Vec<Device> {
    let mut d = vec![Device::Cpu];
    if let Some(g) = gpukit::testing::gpu_or_skip() {
        d.push(g);
    }
    d
}
#[test]
fn ranges_of_i32_visit_what_rust_visits() {
    let cases: &[(i32, i32, u64)] = &[
        (0, 10, 5),
        (0, 10, 3),
        (0, 10, 1),
        (0, 0, 1),
        (5, 3, 1),
        (3, 3, 2),
        (0, 10, 100),
        (0, 10, 10),
        (i32::MAX - 3, i32::MAX, 2),
        (i32::MAX - 3, i32::MAX, 1),
        (i32::MAX - 10, i32::MAX, 7),
        (i32::MAX - 10, i32::MAX, 5),
        (i32::MAX, i32::MAX, 1),
        (i32::MIN, i32::MIN, 1),
        (i32::MIN, i32::MIN + 3, 1),
        (i32::MIN, i32::MAX, i32::MAX as u64 / 3 + 1),
        (-5, 5, 4),
        (-5, 5, 5),
        (-1, -7, 1),
        (-10, -1, 3),
    ];
    for dev in devices() {
        for &(a, b, s) in cases {
            let st = s as usize;
            let checks: [(&str, Vec<i64>, Vec<i64>); 5] = [
                (
                    "a..b",
                    reference((a..b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_i32[1, 1](a, b, s, o, c))),
                ),
                (
                    "a..=b",
                    reference((a..=b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_i32[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).step_by(s)",
                    reference((a..b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_step_i32[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..=b).step_by(s)",
                    reference((a..=b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_step_i32[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).rev()",
                    reference((a..b).rev().map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(rev_i32[1, 1](a, b, s, o, c))),
                ),
            ];
            for (form, want, got) in checks {
                assert_eq!(got, want, "{form} with a={a}, b={b}, s={s} (i32) on {dev}");
            }
        }
    }
}

#[test]
fn ranges_of_i64_visit_what_rust_visits() {
    let cases: &[(i64, i64, u64)] = &[
        (0, 10, 5),
        (0, 10, 3),
        (0, 10, 1),
        (0, 0, 1),
        (5, 3, 1),
        (3, 3, 2),
        (0, 10, 100),
        (0, 10, 10),
        (i64::MAX - 3, i64::MAX, 2),
        (i64::MAX - 3, i64::MAX, 1),
        (i64::MAX - 10, i64::MAX, 7),
        (i64::MAX - 10, i64::MAX, 5),
        (i64::MAX, i64::MAX, 1),
        (i64::MIN, i64::MIN, 1),
        (i64::MIN, i64::MIN + 3, 1),
        (i64::MIN, i64::MAX, i64::MAX as u64 / 3 + 1),
        (-5, 5, 4),
        (-5, 5, 5),
        (-1, -7, 1),
        (-10, -1, 3),
    ];
    for dev in devices() {
        for &(a, b, s) in cases {
            let st = s as usize;
            let checks: [(&str, Vec<i64>, Vec<i64>); 5] = [
                (
                    "a..b",
                    reference((a..b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_i64[1, 1](a, b, s, o, c))),
                ),
                (
                    "a..=b",
                    reference((a..=b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_i64[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).step_by(s)",
                    reference((a..b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_step_i64[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..=b).step_by(s)",
                    reference((a..=b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_step_i64[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).rev()",
                    reference((a..b).rev().map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(rev_i64[1, 1](a, b, s, o, c))),
                ),
            ];
            for (form, want, got) in checks {
                assert_eq!(got, want, "{form} with a={a}, b={b}, s={s} (i64) on {dev}");
            }
        }
    }
}

#[test]
fn ranges_of_u8_visit_what_rust_visits() {
    let cases: &[(u8, u8, u64)] = &[
        (0, 10, 5),
        (0, 10, 3),
        (0, 10, 1),
        (0, 0, 1),
        (5, 3, 1),
        (3, 3, 2),
        (0, 10, 100),
        (0, 10, 10),
        (u8::MAX - 3, u8::MAX, 2),
        (u8::MAX - 3, u8::MAX, 1),
        (u8::MAX - 10, u8::MAX, 7),
        (u8::MAX - 10, u8::MAX, 5),
        (u8::MAX, u8::MAX, 1),
        (0u8, 0u8, 1),
        (0u8, 0u8 + 3, 1),
        (0u8, u8::MAX, u8::MAX as u64 / 3 + 1),
    ];
    for dev in devices() {
        for &(a, b, s) in cases {
            let st = s as usize;
            let checks: [(&str, Vec<i64>, Vec<i64>); 5] = [
                (
                    "a..b",
                    reference((a..b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_u8[1, 1](a, b, s, o, c))),
                ),
                (
                    "a..=b",
                    reference((a..=b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_u8[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).step_by(s)",
                    reference((a..b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_step_u8[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..=b).step_by(s)",
                    reference((a..=b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_step_u8[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).rev()",
                    reference((a..b).rev().map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(rev_u8[1, 1](a, b, s, o, c))),
                ),
            ];
            for (form, want, got) in checks {
                assert_eq!(got, want, "{form} with a={a}, b={b}, s={s} (u8) on {dev}");
            }
        }
    }
}

#[test]
fn ranges_of_u32_visit_what_rust_visits() {
    let cases: &[(u32, u32, u64)] = &[
        (0, 10, 5),
        (0, 10, 3),
        (0, 10, 1),
        (0, 0, 1),
        (5, 3, 1),
        (3, 3, 2),
        (0, 10, 100),
        (0, 10, 10),
        (u32::MAX - 3, u32::MAX, 2),
        (u32::MAX - 3, u32::MAX, 1),
        (u32::MAX - 10, u32::MAX, 7),
        (u32::MAX - 10, u32::MAX, 5),
        (u32::MAX, u32::MAX, 1),
        (0u32, 0u32, 1),
        (0u32, 0u32 + 3, 1),
        (0u32, u32::MAX, u32::MAX as u64 / 3 + 1),
    ];
    for dev in devices() {
        for &(a, b, s) in cases {
            let st = s as usize;
            let checks: [(&str, Vec<i64>, Vec<i64>); 5] = [
                (
                    "a..b",
                    reference((a..b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_u32[1, 1](a, b, s, o, c))),
                ),
                (
                    "a..=b",
                    reference((a..=b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_u32[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).step_by(s)",
                    reference((a..b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_step_u32[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..=b).step_by(s)",
                    reference((a..=b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_step_u32[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).rev()",
                    reference((a..b).rev().map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(rev_u32[1, 1](a, b, s, o, c))),
                ),
            ];
            for (form, want, got) in checks {
                assert_eq!(got, want, "{form} with a={a}, b={b}, s={s} (u32) on {dev}");
            }
        }
    }
}

#[test]
fn ranges_of_u64_visit_what_rust_visits() {
    let cases: &[(u64, u64, u64)] = &[
        (0, 10, 5),
        (0, 10, 3),
        (0, 10, 1),
        (0, 0, 1),
        (5, 3, 1),
        (3, 3, 2),
        (0, 10, 100),
        (0, 10, 10),
        (u64::MAX - 3, u64::MAX, 2),
        (u64::MAX - 3, u64::MAX, 1),
        (u64::MAX - 10, u64::MAX, 7),
        (u64::MAX - 10, u64::MAX, 5),
        (u64::MAX, u64::MAX, 1),
        (0u64, 0u64, 1),
        (0u64, 0u64 + 3, 1),
        (0u64, u64::MAX, u64::MAX as u64 / 3 + 1),
    ];
    for dev in devices() {
        for &(a, b, s) in cases {
            let st = s as usize;
            let checks: [(&str, Vec<i64>, Vec<i64>); 5] = [
                (
                    "a..b",
                    reference((a..b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_u64[1, 1](a, b, s, o, c))),
                ),
                (
                    "a..=b",
                    reference((a..=b).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_u64[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).step_by(s)",
                    reference((a..b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(excl_step_u64[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..=b).step_by(s)",
                    reference((a..=b).step_by(st).map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(incl_step_u64[1, 1](a, b, s, o, c))),
                ),
                (
                    "(a..b).rev()",
                    reference((a..b).rev().map(|v| v as i64)),
                    visited(&dev, |o, c| launch!(rev_u64[1, 1](a, b, s, o, c))),
                ),
            ];
            for (form, want, got) in checks {
                assert_eq!(got, want, "{form} with a={a}, b={b}, s={s} (u64) on {dev}");
            }
        }
    }
}
