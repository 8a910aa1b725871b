//! The lesson kernels, written in Rust with `#[kernel]` (CUDA twins in benches/cupy_twin.py).

use gpukit::prelude::*;

/// Lesson 2.2: 0 plain, 1 fizz, 2 buzz, 3 fizzbuzz, for the numbers 1..=n.
#[kernel]
pub fn fizzbuzz(out: &mut [i32]) {
    let i = grid(1);
    if i < out.len() {
        let n = i + 1;
        out[i] = if n % 15 == 0 {
            3
        } else if n % 5 == 0 {
            2
        } else if n % 3 == 0 {
            1
        } else {
            0
        };
    }
}

/// Lesson 3.0: 3x3 box blur of a height x width x channels image, edges clamped.
/// The x axis of the grid runs along the width so that neighbouring threads touch neighbouring
/// pixels.
#[kernel]
pub fn blur3(img: &View3<f32>, out: &mut View3<f32>) {
    let (x, y) = grid2();
    let h = img.shape(0);
    let w = img.shape(1);
    if y < h && x < w {
        for c in 0..img.shape(2) {
            let mut acc = 0.0f32;
            for dy in 0..3 {
                for dx in 0..3 {
                    let yy = (y + dy).max(1).min(h) - 1;
                    let xx = (x + dx).max(1).min(w) - 1;
                    acc += img[[yy, xx, c]];
                }
            }
            out[[y, x, c]] = acc / 9.0;
        }
    }
}

/// [`blur3`] with bounds checks off (`#[kernel(unchecked)]`), to measure what the checks cost.
#[kernel(unchecked)]
pub fn blur3_unchecked(img: &View3<f32>, out: &mut View3<f32>) {
    let (x, y) = grid2();
    let h = img.shape(0);
    let w = img.shape(1);
    if y < h && x < w {
        for c in 0..img.shape(2) {
            let mut acc = 0.0f32;
            for dy in 0..3 {
                for dx in 0..3 {
                    let yy = (y + dy).max(1).min(h) - 1;
                    let xx = (x + dx).max(1).min(w) - 1;
                    acc += img[[yy, xx, c]];
                }
            }
            out[[y, x, c]] = acc / 9.0;
        }
    }
}
