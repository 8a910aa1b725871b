//! Random arrays on the CPU backend: ChaCha8 streams, one per chunk of [`CHUNK`] elements, so
//! chunks fill in parallel and the result does not depend on the number of threads.

use crate::backend::cpu;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use rand::distr::{Distribution, Uniform};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Normal;
use rayon::prelude::*;

/// Elements per ChaCha stream (and per parallel task).
pub(super) const CHUNK: usize = 1 << 16;

/// `n` values, chunk `c` sampled by `sample` from ChaCha8 stream `c` of the key `key`.
fn fill<T: Element, D: Distribution<S> + Sync, S>(
    n: usize,
    key: u64,
    dist: &D,
    convert: impl Fn(S) -> T + Sync,
) -> Result<Vec<T>> {
    let mut out = cpu::alloc_filled(n, T::zero())?;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut rng = ChaCha8Rng::seed_from_u64(key);
            rng.set_stream(c as u64);
            for x in chunk {
                *x = convert(dist.sample(&mut rng));
            }
        });
    Ok(out)
}

/// A distribution that `rand` refused, as an error naming it.
fn refused(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Other(format!("random {what}: {e}"))
}

/// The largest f32 below `h` (finite).
fn below_f32(h: f32) -> f32 {
    if h > 0.0 {
        f32::from_bits(h.to_bits() - 1)
    } else if h == 0.0 {
        -f32::from_bits(1)
    } else {
        f32::from_bits(h.to_bits() + 1)
    }
}

/// The largest f64 below `h` (finite).
fn below_f64(h: f64) -> f64 {
    if h > 0.0 {
        f64::from_bits(h.to_bits() - 1)
    } else if h == 0.0 {
        -f64::from_bits(1)
    } else {
        f64::from_bits(h.to_bits() + 1)
    }
}

/// Uniform f32/f64 in `[low, high)` (checked by the caller: finite, `low < high`).
///
/// `rand`'s `Uniform` can round up to `high` when the range is a few units in the last place
/// wide; such a value becomes the largest one below `high` (as on the GPU).
pub(super) fn uniform<T: Element>(n: usize, low: f64, high: f64, key: u64) -> Result<Vec<T>> {
    match T::DTYPE {
        DType::F32 => {
            let (l, h) = (low as f32, high as f32);
            let d = Uniform::new(l, h).map_err(|e| refused("uniform", e))?;
            let top = below_f32(h);
            fill(n, key, &d, |v: f32| T::from_f64(v.min(top) as f64))
        }
        _ => {
            let d = Uniform::new(low, high).map_err(|e| refused("uniform", e))?;
            let top = below_f64(high);
            fill(n, key, &d, |v: f64| T::from_f64(v.min(top)))
        }
    }
}

/// Normal f32/f64 (checked by the caller: finite mean, finite `std >= 0`).
pub(super) fn normal<T: Element>(n: usize, mean: f64, std: f64, key: u64) -> Result<Vec<T>> {
    match T::DTYPE {
        DType::F32 => {
            let d = Normal::new(mean as f32, std as f32).map_err(|e| refused("normal", e))?;
            fill(n, key, &d, |v: f32| T::from_f64(v as f64))
        }
        _ => {
            let d = Normal::new(mean, std).map_err(|e| refused("normal", e))?;
            fill(n, key, &d, T::from_f64)
        }
    }
}

/// Integers in `[low, high)` of i32/i64/u32/u64 (checked by the caller: `low < high`, both in
/// range of `T`), sampled without bias by `rand`'s `Uniform`.
pub(super) fn integers<T: Element>(n: usize, low: i128, high: i128, key: u64) -> Result<Vec<T>> {
    let e = |e| refused("integers", e);
    match T::DTYPE {
        DType::I32 => {
            let d = Uniform::new(low as i32, high as i32).map_err(e)?;
            fill(n, key, &d, |v: i32| T::from_i128(v as i128))
        }
        DType::U32 => {
            let d = Uniform::new(low as u32, high as u32).map_err(e)?;
            fill(n, key, &d, |v: u32| T::from_i128(v as i128))
        }
        DType::I64 => {
            let d = Uniform::new(low as i64, high as i64).map_err(e)?;
            fill(n, key, &d, |v: i64| T::from_i128(v as i128))
        }
        DType::U64 => {
            let d = Uniform::new(low as u64, high as u64).map_err(e)?;
            fill(n, key, &d, |v: u64| T::from_i128(v as i128))
        }
        d => Err(Error::Other(format!(
            "random integers: dtype {d} is not supported (use i32, i64, u32 or u64)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_the_next_float_down() {
        assert_eq!(below_f32(1.0000001), 1.0);
        assert_eq!(below_f64(1.0), 1.0 - f64::EPSILON / 2.0);
        assert!(below_f32(0.0) < 0.0 && below_f64(0.0) < 0.0);
        assert!(below_f32(-1.0) < -1.0 && below_f64(-2.0) < -2.0);
    }
}
