//! Gathering rows: `out[i, :] = src[idx[i], :]` for a row-major `src` of `d` columns (a 1-D
//! array is the case `d == 1`). Used by the split (rows of a permutation), the datasets (class
//! centres per sample) and k-means (rows chosen as centres).

use gpukit::prelude::*;

macro_rules! take_rows_kernel {
    ($name:ident, $t:ident) => {
        /// `out[i * d + j] = src[idx[i] * d + j]` for every element of `out` (a grid-stride loop).
        #[kernel]
        pub(crate) fn $name(src: &[$t], d: usize, idx: &[i64], out: &mut [$t]) {
            for e in (grid(1)..out.len()).step_by(gridsize(1)) {
                let i = e / d;
                let j = e % d;
                let r = idx[i] as usize;
                out[e] = src[r * d + j];
            }
        }
    };
}

take_rows_kernel!(take_rows_f32, f32);
take_rows_kernel!(take_rows_f64, f64);
take_rows_kernel!(take_rows_i32, i32);
take_rows_kernel!(take_rows_i64, i64);
take_rows_kernel!(take_rows_u32, u32);
take_rows_kernel!(take_rows_u64, u64);
