//! The data of the ML rows (issue 18), from a formula of the index: the same arrays as
//! benches/ml_data.py builds with NumPy for scikit-learn, bit for bit, without a file. Built on
//! the host with every core (rayon), then copied to the device outside the timed span.
//!
//! The formula (ml_data.py's docstring says the same; both test the same literal examples):
//!
//! ```text
//! mix(x)         = splitmix64's finaliser of x + 0x9E3779B97F4A7C15 (wrapping u64)
//! key(s, i)      = (s << 40) + i                         stream s, counter i < 2^40
//! unit(s, i)     = ((mix(key(s, i)) >> 40) - 2^23) / 2^23     in [-1, 1), a multiple of 2^-23
//! label(s, i, m) = mix(key(s, i)) mod m
//! ```
//!
//! Values are computed in `f64` by exact operations on such units and rounded once to `f32`
//! where a row is `f32`.
//! - KNN (`f32`, 64 features, 10 classes): row r (references r < n_ref, then the queries) has
//!   class c = label(KNN_LABEL, r, 10) and x[r, j] = unit(KNN_CENTER, 64c + j) + 2 unit(KNN_NOISE,
//!   64r + j).
//! - KMeans (`f64`, 64 features): blob b = label(KM_BLOB, r, 100), x[r, j] =
//!   unit(KM_CENTER, 64b + j) + unit(KM_NOISE, 64r + j) (overlapping blobs: a smooth density,
//!   so no cluster empties and labels still change at iteration 20); the initial centers are
//!   the first 100 rows.
//! - Ridge (`f64`, 64 features): x[r, j] = unit(RIDGE_X, 64r + j) + j/64, w[j] = 2 unit(RIDGE_W,
//!   j), y[r] = ((3 + w[0] x[r,0]) + w[1] x[r,1]) + ... + w[63] x[r,63] + unit(RIDGE_NOISE, r)/2,
//!   summed in that order (no fused multiply-add: Rust never contracts `a * b + c`).

use rayon::prelude::*;

/// Features of every ML row.
pub const DIMS: usize = 64;
/// Classes of the KNN data.
pub const KNN_CLASSES: u64 = 10;
/// Blobs of the KMeans data (and its number of clusters).
pub const KMEANS_BLOBS: u64 = 100;

const KNN_LABEL: u64 = 1;
const KNN_CENTER: u64 = 2;
const KNN_NOISE: u64 = 3;
const KM_BLOB: u64 = 4;
const KM_CENTER: u64 = 5;
const KM_NOISE: u64 = 6;
const RIDGE_X: u64 = 7;
const RIDGE_W: u64 = 8;
const RIDGE_NOISE: u64 = 9;

const TWO23: f64 = (1u64 << 23) as f64;
const ROW_CHUNK: usize = 1 << 14;

/// splitmix64's output function of `x + 0x9E3779B97F4A7C15`.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn key(stream: u64, i: u64) -> u64 {
    (stream << 40).wrapping_add(i)
}

/// `unit(stream, i)`: a multiple of 2^-23 in [-1, 1).
pub fn unit(stream: u64, i: u64) -> f64 {
    ((mix(key(stream, i)) >> 40) as f64 - TWO23) / TWO23
}

/// `label(stream, i, m)`.
pub fn label(stream: u64, i: u64, m: u64) -> i64 {
    (mix(key(stream, i)) % m) as i64
}

/// Fills `out` (`n` rows of `width` values) by rows, each chunk of rows on a rayon thread.
fn fill<T: Send>(out: &mut [T], width: usize, row: impl Fn(usize, &mut [T]) + Sync) {
    out.par_chunks_mut(ROW_CHUNK * width)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (k, r) in chunk.chunks_mut(width).enumerate() {
                row(c * ROW_CHUNK + k, r);
            }
        });
}

/// KNN rows `first .. first + n`: features `(n, 64)` row-major `f32` and classes.
pub fn knn_rows(first: usize, n: usize) -> (Vec<f32>, Vec<i64>) {
    let centers: Vec<f64> = (0..KNN_CLASSES * DIMS as u64)
        .map(|i| unit(KNN_CENTER, i))
        .collect();
    let y: Vec<i64> = (0..n)
        .into_par_iter()
        .map(|r| label(KNN_LABEL, (first + r) as u64, KNN_CLASSES))
        .collect();
    let mut x = vec![0f32; n * DIMS];
    fill(&mut x, DIMS, |r, row| {
        let c = y[r] as usize;
        let base = ((first + r) * DIMS) as u64;
        for (j, v) in row.iter_mut().enumerate() {
            *v = (centers[c * DIMS + j] + 2.0 * unit(KNN_NOISE, base + j as u64)) as f32;
        }
    });
    (x, y)
}

/// The KMeans data: `(n, 64)` row-major `f64`.
pub fn kmeans_rows(n: usize) -> Vec<f64> {
    let centers: Vec<f64> = (0..KMEANS_BLOBS * DIMS as u64)
        .map(|i| unit(KM_CENTER, i))
        .collect();
    let mut x = vec![0f64; n * DIMS];
    fill(&mut x, DIMS, |r, row| {
        let b = label(KM_BLOB, r as u64, KMEANS_BLOBS) as usize;
        let base = (r * DIMS) as u64;
        for (j, v) in row.iter_mut().enumerate() {
            *v = centers[b * DIMS + j] + unit(KM_NOISE, base + j as u64);
        }
    });
    x
}

/// The Ridge weights `w[j] = 2 unit(RIDGE_W, j)`.
pub fn ridge_weights() -> Vec<f64> {
    (0..DIMS as u64).map(|j| 2.0 * unit(RIDGE_W, j)).collect()
}

/// The Ridge data: features `(n, 64)` row-major `f64` and targets.
pub fn ridge_rows(n: usize) -> (Vec<f64>, Vec<f64>) {
    let w = ridge_weights();
    let mut x = vec![0f64; n * DIMS];
    fill(&mut x, DIMS, |r, row| {
        let base = (r * DIMS) as u64;
        for (j, v) in row.iter_mut().enumerate() {
            *v = unit(RIDGE_X, base + j as u64) + j as f64 / DIMS as f64;
        }
    });
    let y = x
        .par_chunks(DIMS)
        .enumerate()
        .map(|(r, row)| {
            let mut acc = 3.0;
            for j in 0..DIMS {
                acc += w[j] * row[j];
            }
            acc + unit(RIDGE_NOISE, r as u64) / 2.0
        })
        .collect();
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared examples: benches/sklearn_twin.py's `self_test` asserts the same literals.
    #[test]
    fn the_formula_gives_the_shared_examples() {
        assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix(1), 0x910A_2DEC_8902_5CC1);
        let (x, y) = knn_rows(0, 3);
        assert_eq!(y, [1, 9, 8]);
        // the f32 values widened to f64, printed as Python prints them
        let row2: Vec<f64> = x[2 * DIMS..2 * DIMS + 3]
            .iter()
            .map(|&v| v as f64)
            .collect();
        assert_eq!(
            row2,
            [1.39533531665802, 0.6319046020507812, 1.6808738708496094]
        );
        let xk = kmeans_rows(2);
        assert_eq!(
            &xk[DIMS..DIMS + 3],
            &[
                -0.5028103590011597f64,
                -0.5872864723205566,
                -0.7814810276031494
            ]
        );
        let (_, yr) = ridge_rows(2);
        assert_eq!(yr[1], 1.2295405614073331);
    }

    #[test]
    fn rows_do_not_depend_on_the_chunking() {
        let n = ROW_CHUNK + 7;
        let (x, y) = knn_rows(5, n);
        let (x2, y2) = knn_rows(5 + ROW_CHUNK, 7);
        assert_eq!(&x[ROW_CHUNK * DIMS..], &x2[..]);
        assert_eq!(&y[ROW_CHUNK..], &y2[..]);
        assert!(y.iter().all(|&c| (0..KNN_CLASSES as i64).contains(&c)));
    }
}
