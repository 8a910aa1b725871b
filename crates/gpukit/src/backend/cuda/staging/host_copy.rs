//! The host side of staged copies: memcpy, memset and page pre-faulting spread over a few
//! threads (cut at page and huge-page boundaries), non-temporal stores, huge-page advice.

use super::config::config;
use std::sync::OnceLock;

crate::process::process_global! {
    /// The threads that do the host side of staged copies (shared by all devices).
    fn copy_pool_cell() -> &'static OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
}

/// The helper threads of [`par_copy`] (`None` when one thread is configured or they cannot be
/// started). Built outside the process registry's lock, since it reads [`config`].
fn copy_pool() -> Option<&'static rayon::ThreadPool> {
    copy_pool_cell()
        .get_or_init(|| {
            let helpers = config().threads.saturating_sub(1);
            (helpers > 0)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(helpers)
                        .thread_name(|i| format!("gpukit-copy-{i}"))
                        .build()
                        .ok()
                })
                .flatten()
        })
        .as_ref()
}

/// Smallest piece one thread copies: below this, waking threads costs more than it saves.
const MIN_PART: usize = 256 << 10;

/// A transparent huge page.
const HUGE: usize = 2 << 20;

/// Splits the `len` bytes at address `base` into at most `threads` pieces for the copy threads,
/// as `(offset, len)`. Pieces of at least [`MIN_PART`] bytes (except the last), cut at whole
/// pages of the address space, and at whole 2 MiB pages when the pieces are at least that
/// large: each thread then takes the page faults of its own huge pages, without waiting on
/// another thread's.
pub(crate) fn split(base: usize, len: usize, threads: usize) -> Vec<(usize, usize)> {
    let parts = (len / MIN_PART).clamp(1, threads.max(1));
    let want = len.div_ceil(parts);
    let grain = if want >= HUGE { HUGE } else { 4096 };
    let mut pieces = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..=parts {
        let end = if k == parts {
            len
        } else {
            // the page boundary nearest to the even cut
            ((base + k * want + grain / 2) / grain * grain)
                .saturating_sub(base)
                .min(len)
        };
        if end > start {
            pieces.push((start, end - start));
            start = end;
        }
    }
    pieces
}

/// Runs `f(offset, len)` on the pieces of the `len` bytes at `base` ([`split`]), with the copy
/// threads.
fn par_pieces(base: usize, len: usize, f: impl Fn(usize, usize) + Sync) {
    let pieces = split(base, len, config().threads);
    match copy_pool() {
        Some(pool) if pieces.len() > 1 => pool.in_place_scope(|scope| {
            for &(off, n) in &pieces[1..] {
                let f = &f;
                scope.spawn(move |_| f(off, n));
            }
            f(pieces[0].0, pieces[0].1);
        }),
        _ => pieces.into_iter().for_each(|(off, n)| f(off, n)),
    }
}

/// `memcpy` of `len` bytes with non-temporal stores where the CPU has them (x86-64): the
/// destination lines are written without being read first and bypass the cache.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`] for `len` bytes.
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = dst.align_offset(16).min(len);
        let body = (len - head) / 64 * 64;
        // SAFETY: all accesses stay inside the `len` bytes the caller vouches for; the stores
        // are 16-byte aligned (after `head`); SSE2 is part of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, head);
            let (mut d, mut s) = (dst.add(head), src.add(head));
            let end = d.add(body);
            while d < end {
                let a = _mm_loadu_si128(s as *const __m128i);
                let b = _mm_loadu_si128(s.add(16) as *const __m128i);
                let c = _mm_loadu_si128(s.add(32) as *const __m128i);
                let e = _mm_loadu_si128(s.add(48) as *const __m128i);
                _mm_stream_si128(d as *mut __m128i, a);
                _mm_stream_si128(d.add(16) as *mut __m128i, b);
                _mm_stream_si128(d.add(32) as *mut __m128i, c);
                _mm_stream_si128(d.add(48) as *mut __m128i, e);
                d = d.add(64);
                s = s.add(64);
            }
            std::ptr::copy_nonoverlapping(s, d, len - head - body);
            // Non-temporal stores are weakly ordered: make them visible before the piece is
            // reported done.
            _mm_sfence();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as the caller vouches.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// `memcpy` with the copy threads.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes, the two must not overlap,
/// and nothing else may access `dst` meanwhile.
pub(crate) unsafe fn par_copy(dst: *mut u8, src: *const u8, len: usize) {
    let (d, s) = (dst as usize, src as usize);
    par_pieces(d, len, |off, n| {
        // SAFETY: each piece is a disjoint part of the ranges the caller vouches for.
        unsafe { std::ptr::copy_nonoverlapping((s + off) as *const u8, (d + off) as *mut u8, n) }
    });
}

/// [`par_copy`] with non-temporal stores ([`Config::streaming_stores`]), for destinations that
/// will not be read soon.
///
/// # Safety
/// As [`par_copy`].
pub(crate) unsafe fn par_copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    if !config().streaming_stores {
        // SAFETY: as the caller vouches.
        return unsafe { par_copy(dst, src, len) };
    }
    let (d, s) = (dst as usize, src as usize);
    par_pieces(d, len, |off, n| {
        // SAFETY: each piece is a disjoint part of the ranges the caller vouches for.
        unsafe { copy_streaming((d + off) as *mut u8, (s + off) as *const u8, n) }
    });
}

/// Writes one byte of every 4 KiB page of `dst..dst + len` with the copy threads, so that the
/// page faults of a new allocation are taken in parallel up front ([`Config::prefault`]).
///
/// # Safety
/// `dst` must be valid for writing `len` bytes, and nothing else may access it meanwhile.
pub(crate) unsafe fn par_prefault(dst: *mut u8, len: usize) {
    let d = dst as usize;
    par_pieces(d, len, |off, n| {
        for page in (0..n).step_by(4096) {
            // SAFETY: inside the piece; volatile so that the write is not elided.
            unsafe { std::ptr::write_volatile((d + off + page) as *mut u8, 0) };
        }
    });
}

/// `memset(dst, 0, len)` with the copy threads.
///
/// # Safety
/// `dst` must be valid for writing `len` bytes, and nothing else may access it meanwhile.
pub(crate) unsafe fn par_zero(dst: *mut u8, len: usize) {
    let d = dst as usize;
    par_pieces(d, len, |off, n| {
        // SAFETY: each piece is a disjoint part of the range the caller vouches for.
        unsafe { std::ptr::write_bytes((d + off) as *mut u8, 0, n) }
    });
}

/// Asks the kernel to back the whole 2 MiB pages inside `ptr..ptr + len` with transparent huge
/// pages (a fresh array then takes 512 times fewer page faults on first touch). Advisory:
/// failures are ignored.
pub(crate) fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        if !config().huge_pages || len < 2 * HUGE {
            return;
        }
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: advice only, on whole pages of an allocation the caller owns.
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::staging::config::MIB;

    #[test]
    fn split_cuts_at_pages_and_huge_pages_covering_the_range() {
        for &base in &[0usize, 16, 4096 * 3 + 16, HUGE - 8] {
            for &(len, threads) in &[
                (0, 8),
                (1, 8),
                (4096, 8),
                (MIN_PART - 1, 16),
                (MIN_PART * 3 + 17, 16),
                (16 * MIB, 16),
                (16 * MIB + 5, 7),
                (32 * MIB, 16),
                (64 * MIB + 3, 16),
                (64 * MIB, 1),
            ] {
                let parts = split(base, len, threads);
                assert!(parts.len() <= threads.max(1), "{base}/{len}/{threads}");
                let grain = if len.div_ceil(parts.len().max(1)) >= HUGE {
                    HUGE
                } else {
                    4096
                };
                let mut next = 0;
                for (i, &(off, n)) in parts.iter().enumerate() {
                    assert_eq!(off, next);
                    assert!(n > 0);
                    if i > 0 {
                        assert_eq!(
                            (base + off) % grain,
                            0,
                            "{base}/{len}/{threads}: cut at {off}"
                        );
                    }
                    next += n;
                }
                assert_eq!(next, len);
            }
        }
        assert_eq!(split(0, 16 * MIB, 16).len(), 16);
        assert_eq!(
            split(0, 32 * MIB, 16),
            (0..16).map(|i| (i * HUGE, HUGE)).collect::<Vec<_>>()
        );
        // an unaligned base: cuts on the huge pages of the address space
        let p = split(16, 32 * MIB, 16);
        assert_eq!(p[0], (0, HUGE - 16));
        assert_eq!(p[1], (HUGE - 16, HUGE));
        assert_eq!(p.len(), 16);
        assert_eq!(p.iter().map(|x| x.1).sum::<usize>(), 32 * MIB);
    }

    #[test]
    fn par_copy_copies_odd_sizes() {
        for len in [0usize, 1, 4095, MIN_PART + 3, 3 * MIB + 11] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut dst = vec![0u8; len];
            // SAFETY: two distinct buffers of `len` bytes.
            unsafe { par_copy(dst.as_mut_ptr(), src.as_ptr(), len) };
            assert!(dst == src, "len {len}");
            // SAFETY: as above.
            unsafe { par_zero(dst.as_mut_ptr(), len) };
            assert!(dst.iter().all(|&b| b == 0), "len {len}");
            // SAFETY: as above.
            unsafe { par_copy_streaming(dst.as_mut_ptr(), src.as_ptr(), len) };
            assert!(dst == src, "streaming, len {len}");
            // SAFETY: as above.
            unsafe { par_prefault(dst.as_mut_ptr(), len) };
        }
        // every alignment of source and destination, every short length
        let src: Vec<u8> = (0..300).map(|i| i as u8).collect();
        for so in 0..16 {
            for d_o in 0..16 {
                for len in [0, 1, 15, 16, 17, 63, 64, 65, 127, 200] {
                    let mut dst = vec![0xAAu8; 300];
                    // SAFETY: both ranges lie inside their vectors.
                    unsafe { copy_streaming(dst.as_mut_ptr().add(d_o), src.as_ptr().add(so), len) };
                    assert_eq!(&dst[d_o..d_o + len], &src[so..so + len]);
                    assert!(dst[..d_o]
                        .iter()
                        .chain(&dst[d_o + len..])
                        .all(|&b| b == 0xAA));
                }
            }
        }
    }
}
