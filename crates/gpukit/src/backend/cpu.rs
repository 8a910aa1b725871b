//! The CPU backend: parallel helpers (rayon) and the CPU device's sticky pending error.
//!
//! CPU work runs to completion before returning, so the only deferred errors are those of
//! operators that cannot return a `Result` (`a *= &b` with mismatched shapes): they are kept here
//! and returned by the next `synchronize()` / `to_host()` of the CPU device.

use crate::error::{Error, Result};
use rayon::prelude::*;
use std::sync::Mutex;

crate::process::process_global! {
    /// The CPU device's pending error.
    fn pending() -> &'static Mutex<Option<Error>> = Mutex::new(None);
}

/// Records an error for the next synchronisation of the CPU device (the first one wins).
pub(crate) fn set_pending_error(e: Error) {
    let mut p = pending().lock().unwrap_or_else(|p| p.into_inner());
    if p.is_none() {
        *p = Some(e);
    }
}

/// Returns (and clears) an error left by an operation on the CPU device.
pub(crate) fn take_pending_error() -> Result<()> {
    match pending().lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Bytes of memory the system can still hand out (`MemAvailable`), if known.
pub(crate) fn available_memory() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: usize = meminfo
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// A host buffer of `n` copies of `value`, or [`Error::OutOfMemory`] when the request cannot
/// be met (instead of aborting the process as a failed `vec!` would).
pub(crate) fn alloc_filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>> {
    let requested = n.saturating_mul(std::mem::size_of::<T>());
    let free = available_memory();
    let oom = |free: usize| Error::OutOfMemory {
        device: "cpu".into(),
        requested,
        free,
    };
    if requested > isize::MAX as usize || free.is_some_and(|f| requested > f) {
        return Err(oom(free.unwrap_or(0)));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| oom(free.unwrap_or(0)))?;
    v.resize(n, value);
    Ok(v)
}

/// Elements per parallel task: large enough that scheduling costs nothing next to the work.
pub(crate) const CHUNK: usize = 1 << 14;

/// `out[i] = f(i)` in parallel.
pub(crate) fn fill_indexed<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let base = c * CHUNK;
            for (j, o) in chunk.iter_mut().enumerate() {
                *o = f(base + j);
            }
        });
}

/// `out[i] = f(a[i])` in parallel.
pub(crate) fn map<A: Sync, T: Send>(a: &[A], out: &mut [T], f: impl Fn(&A) -> T + Sync) {
    out.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK))
        .for_each(|(o, a)| {
            for (o, a) in o.iter_mut().zip(a) {
                *o = f(a);
            }
        });
}

/// `out[i] = f(a[i], b[i])` in parallel.
pub(crate) fn zip_map<A: Sync, B: Sync, T: Send>(
    a: &[A],
    b: &[B],
    out: &mut [T],
    f: impl Fn(&A, &B) -> T + Sync,
) {
    out.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(o, (a, b))| {
            for ((o, a), b) in o.iter_mut().zip(a).zip(b) {
                *o = f(a, b);
            }
        });
}

/// `a[i] = f(a[i])` in place, in parallel.
pub(crate) fn update<T: Send>(a: &mut [T], f: impl Fn(&mut T) + Sync) {
    a.par_chunks_mut(CHUNK)
        .for_each(|c| c.iter_mut().for_each(&f));
}

/// `a[i] = f(a[i], b[i])` in place, in parallel.
pub(crate) fn zip_update<T: Send, B: Sync>(a: &mut [T], b: &[B], f: impl Fn(&mut T, &B) + Sync) {
    a.par_chunks_mut(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .for_each(|(a, b)| a.iter_mut().zip(b).for_each(|(a, b)| f(a, b)));
}

/// Reduces `a` with `fold` inside chunks (sequentially, in order) and `combine` across chunks
/// (a balanced tree), starting each chunk from `identity`.
pub(crate) fn reduce<T: Sync, R: Send + Sync + Copy>(
    a: &[T],
    identity: R,
    fold: impl Fn(R, &T) -> R + Sync,
    combine: impl Fn(R, R) -> R + Sync,
) -> R {
    a.par_chunks(CHUNK)
        .map(|c| c.iter().fold(identity, &fold))
        .reduce(|| identity, &combine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_error_is_sticky_until_taken() {
        set_pending_error(Error::Other("first".into()));
        set_pending_error(Error::Other("second".into()));
        let e = take_pending_error().unwrap_err();
        assert_eq!(e.to_string(), "first");
        assert!(take_pending_error().is_ok());
    }

    #[test]
    fn impossible_allocations_are_errors() {
        let e = alloc_filled(usize::MAX / 2, 0u64).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
        assert_eq!(alloc_filled(3, 7u8).unwrap(), vec![7, 7, 7]);
    }

    #[test]
    fn helpers_cover_every_element() {
        let n = 3 * CHUNK + 17;
        let mut idx = vec![0usize; n];
        fill_indexed(&mut idx, |i| i);
        assert!(idx.iter().enumerate().all(|(i, &v)| i == v));
        let mut sq = vec![0usize; n];
        map(&idx, &mut sq, |&v| v * 2);
        let total = reduce(&sq, 0usize, |acc, &v| acc + v, |a, b| a + b);
        assert_eq!(total, n * (n - 1));
        let mut s = vec![0usize; n];
        zip_map(&idx, &sq, &mut s, |a, b| a + b);
        zip_update(&mut s, &idx, |s, i| *s -= *i);
        update(&mut s, |v| *v /= 2);
        assert_eq!(s, idx);
    }
}
