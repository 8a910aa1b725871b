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
    super::cpu_capture::forbid_in_capture("waiting for the CPU device (a synchronisation)")?;
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

/// A host buffer of `n` copies of `value` (written in parallel), or [`Error::OutOfMemory`] when
/// the request cannot be met (instead of aborting the process as a failed `vec!` would).
pub(crate) fn alloc_filled<T: Clone + Send + Sync>(n: usize, value: T) -> Result<Vec<T>> {
    let mut v = alloc_uninit::<T>(n)?;
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(CHUNK)
        .for_each(|c| {
            c.iter_mut().for_each(|o| {
                o.write(value.clone());
            })
        });
    // SAFETY: the chunks above cover the first `n` slots, each written once.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Requests of at least this many bytes are checked against `MemAvailable` first (reading it
/// costs a file read, nothing next to filling such a buffer).
const LARGE_ALLOCATION: usize = 64 << 20;

/// A vector with room for `n` elements and none written yet, or [`Error::OutOfMemory`] when
/// the request cannot be met. Large buffers are backed by transparent huge pages where the
/// system offers them ([`advise_huge_pages`]).
pub(crate) fn alloc_uninit<T>(n: usize) -> Result<Vec<T>> {
    let requested = n.saturating_mul(std::mem::size_of::<T>());
    let free = if requested >= LARGE_ALLOCATION {
        available_memory()
    } else {
        None
    };
    let oom = |free: Option<usize>| Error::OutOfMemory {
        device: "cpu".into(),
        requested,
        free: free.or_else(available_memory).unwrap_or(0),
    };
    if requested > isize::MAX as usize || free.is_some_and(|f| requested > f) {
        return Err(oom(free));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| oom(free))?;
    advise_huge_pages(&mut v);
    Ok(v)
}

/// Buffers of at least this many bytes get [`advise_huge_pages`].
const HUGE_PAGES_FROM: usize = 4 << 20;

/// Asks Linux to back a large, not yet touched buffer with transparent huge pages (where THP is
/// in `madvise` mode, the common default): its first writes then fault 2 MiB at a time instead
/// of 4 KiB. When the kernel has huge pages to give, a new 128 MiB array is written in about half
/// the time (18 ms instead of 36 ms on the 2-core machine of docs/bench). The advice is only a
/// hint: errors are ignored.
fn advise_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: i32 = 14;
        const PAGE: usize = 4096;
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < HUGE_PAGES_FROM {
            return;
        }
        let p = v.as_mut_ptr() as usize;
        let (start, end) = ((p + PAGE - 1) & !(PAGE - 1), (p + bytes) & !(PAGE - 1));
        if end > start {
            // SAFETY: the range lies inside the vector's own allocation (rounded inwards to whole
            // pages); MADV_HUGEPAGE changes no contents and no mapping, only how later page
            // faults are served. (With 16 or 64 KiB pages the call fails harmlessly.)
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
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

/// A new vector of `f(a[i])`, computed in parallel straight into uninitialised memory (no
/// zero-filling pass first).
pub(crate) fn map_new<A: Sync, T: Send>(a: &[A], f: impl Fn(&A) -> T + Sync) -> Result<Vec<T>> {
    let n = a.len();
    let mut v = alloc_uninit::<T>(n)?;
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK))
        .for_each(|(o, a)| {
            for (o, a) in o.iter_mut().zip(a) {
                o.write(f(a));
            }
        });
    // SAFETY: the chunks above cover the first `n` slots, each written once.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// A new vector of `f(a[i], b[i])` (`a` and `b` of one length), as [`map_new`].
pub(crate) fn zip_map_new<A: Sync, B: Sync, T: Send>(
    a: &[A],
    b: &[B],
    f: impl Fn(&A, &B) -> T + Sync,
) -> Result<Vec<T>> {
    assert_eq!(
        a.len(),
        b.len(),
        "zip_map_new: operands of different lengths"
    );
    let n = a.len();
    let mut v = alloc_uninit::<T>(n)?;
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(o, (a, b))| {
            for ((o, a), b) in o.iter_mut().zip(a).zip(b) {
                o.write(f(a, b));
            }
        });
    // SAFETY: the chunks above cover the first `n` slots, each written once.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Independent accumulators a reduction keeps per task (lane `k` takes elements `k`, `k + LANES`,
/// ...), so that the loop has no serial dependency and vectorises.
const LANES: usize = 8;

/// Elements per reduction task.
const REDUCE_CHUNK: usize = 1 << 16;

/// Folds a chunk into [`LANES`] accumulators, then combines them pairwise and the remainder in
/// order.
#[inline(always)]
fn fold_lanes<T: Copy>(c: &[T], identity: T, f: &impl Fn(T, T) -> T) -> T {
    let mut acc = [identity; LANES];
    let mut it = c.chunks_exact(LANES);
    for x in &mut it {
        for k in 0..LANES {
            acc[k] = f(acc[k], x[k]);
        }
    }
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            acc[k] = f(acc[k], acc[k + width]);
        }
    }
    it.remainder().iter().fold(acc[0], |r, &x| f(r, x))
}

/// Reduces `a` with the associative and commutative `f` (wrapping integer sums, float sums up to
/// rounding) from `identity`: in parallel tasks of [`REDUCE_CHUNK`] elements, each over
/// [`LANES`] accumulators. The grouping depends on the length only, so results repeat exactly.
pub(crate) fn reduce_lanes<T: Copy + Send + Sync>(
    a: &[T],
    identity: T,
    f: impl Fn(T, T) -> T + Sync,
) -> T {
    if a.len() <= REDUCE_CHUNK {
        return fold_lanes(a, identity, &f);
    }
    a.par_chunks(REDUCE_CHUNK)
        .map(|c| fold_lanes(c, identity, &f))
        .reduce(|| identity, &f)
}

/// The largest (`MAX`) or smallest element of `a` by `>` / `<`, starting from `identity`, and
/// whether some element is unordered with itself (a NaN), in which case the value is meaningless.
/// Vectorised over [`LANES`] accumulators, in parallel.
pub(crate) fn extremum<T: PartialOrd + Copy + Send + Sync, const MAX: bool>(
    a: &[T],
    identity: T,
) -> (T, bool) {
    #[inline(always)]
    fn better<T: PartialOrd, const MAX: bool>(x: T, m: T) -> bool {
        if MAX {
            x > m
        } else {
            x < m
        }
    }
    let chunk = |c: &[T]| -> (T, bool) {
        let mut m = [identity; LANES];
        let mut nan = [false; LANES];
        let mut it = c.chunks_exact(LANES);
        for x in &mut it {
            for k in 0..LANES {
                let v = x[k];
                #[allow(clippy::eq_op)]
                let unordered = v != v;
                nan[k] |= unordered;
                m[k] = if better::<T, MAX>(v, m[k]) { v } else { m[k] };
            }
        }
        let mut best = identity;
        let mut any_nan = false;
        for k in 0..LANES {
            any_nan |= nan[k];
            if better::<T, MAX>(m[k], best) {
                best = m[k];
            }
        }
        for &v in it.remainder() {
            #[allow(clippy::eq_op)]
            let unordered = v != v;
            any_nan |= unordered;
            if better::<T, MAX>(v, best) {
                best = v;
            }
        }
        (best, any_nan)
    };
    let join = |(a, na): (T, bool), (b, nb): (T, bool)| {
        (if better::<T, MAX>(b, a) { b } else { a }, na || nb)
    };
    if a.len() <= REDUCE_CHUNK {
        return chunk(a);
    }
    a.par_chunks(REDUCE_CHUNK)
        .map(chunk)
        .reduce(|| (identity, false), join)
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
        let mut s = zip_map_new(&idx, &sq, |a, b| a + b).unwrap();
        zip_update(&mut s, &idx, |s, i| *s -= *i);
        update(&mut s, |v| *v /= 2);
        assert_eq!(s, idx);
        assert_eq!(map_new(&idx, |&v| v * 2).unwrap(), sq);
        assert_eq!(zip_map_new(&idx, &sq, |&a, &b| b - a).unwrap(), idx);
        assert!(map_new(&[0u8; 0], |&v| v).unwrap().is_empty());
    }

    #[test]
    fn lane_reductions_cover_every_element() {
        for n in [
            0usize,
            1,
            7,
            8,
            9,
            REDUCE_CHUNK - 1,
            REDUCE_CHUNK + 3,
            5 * REDUCE_CHUNK + 13,
        ] {
            let v: Vec<u64> = (0..n as u64).map(|i| i * 7 % 1000).collect();
            let want: u64 = v.iter().sum();
            assert_eq!(reduce_lanes(&v, 0, |a, b| a + b), want, "sum of {n}");
            let max = v.iter().copied().max().unwrap_or(0);
            let min = v.iter().copied().min().unwrap_or(u64::MAX);
            assert_eq!(extremum::<u64, true>(&v, 0), (max, false), "max of {n}");
            assert_eq!(
                extremum::<u64, false>(&v, u64::MAX),
                (min, false),
                "min of {n}"
            );
            let f: Vec<f64> = v.iter().map(|&x| x as f64 - 500.0).collect();
            let (m, nan) = extremum::<f64, true>(&f, f64::NEG_INFINITY);
            assert!(!nan);
            assert_eq!(m, f.iter().copied().fold(f64::NEG_INFINITY, f64::max));
            if n > 0 {
                let mut g = f.clone();
                g[n / 2] = f64::NAN;
                assert!(
                    extremum::<f64, false>(&g, f64::INFINITY).1,
                    "NaN seen in {n}"
                );
            }
        }
        // Sums of floats repeat exactly (the grouping depends on the length only).
        let f: Vec<f64> = (0..3 * REDUCE_CHUNK + 5)
            .map(|i| 1.0 / (i as f64 + 1.0))
            .collect();
        let s = reduce_lanes(&f, 0.0, |a, b| a + b);
        for _ in 0..5 {
            assert_eq!(reduce_lanes(&f, 0.0, |a, b| a + b).to_bits(), s.to_bits());
        }
    }
}
