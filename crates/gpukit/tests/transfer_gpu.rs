//! Host <-> GPU transfers: the staged path for large pageable copies (chunked, pipelined through
//! pinned buffers) and explicit [`PinnedBuffer`]s, compared exactly at sizes around the staging
//! threshold and the chunk size, 0 and 1 element, and above 1 GiB.
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). The ignored
//! test `transfer_rates` prints a table of rates (run it with `--ignored --nocapture`).

use gpukit::{Array, Device, Element, Error, PinnedBuffer};
use std::time::Instant;

// GPU tests of this file run one at a time (they share the device's stream and memory):
// `gpu()` gives the GPU with a lock held for the test, or skips (see gpukit::testing).
use gpukit::testing::serial_gpu_or_skip as gpu;

const MIB: usize = 1 << 20;

/// Values that differ from element to element and from run to run (`seed`), so that a chunk
/// landing in the wrong place, a stale buffer or an unwritten element shows.
trait Pattern: Element {
    fn at(i: usize, seed: u64) -> Self;
}

fn mix(i: usize, seed: u64) -> u64 {
    // splitmix64
    let mut z = (i as u64).wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Pattern for f64 {
    fn at(i: usize, seed: u64) -> f64 {
        (mix(i, seed) >> 11) as f64 * 0.25
    }
}
impl Pattern for f32 {
    fn at(i: usize, seed: u64) -> f32 {
        (mix(i, seed) >> 40) as f32 * 0.5
    }
}
impl Pattern for u8 {
    fn at(i: usize, seed: u64) -> u8 {
        mix(i, seed) as u8
    }
}
impl Pattern for i32 {
    fn at(i: usize, seed: u64) -> i32 {
        mix(i, seed) as i32
    }
}
impl Pattern for bool {
    fn at(i: usize, seed: u64) -> bool {
        mix(i, seed) & 1 == 1
    }
}

fn data<T: Pattern>(n: usize, seed: u64) -> Vec<T> {
    (0..n).map(|i| T::at(i, seed)).collect()
}

/// The bytes of a slice of plain elements (every [`Element`] is a plain value without padding).
fn bytes_of<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: `v` is `size_of_val(v)` initialised bytes of padding-free plain values.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Asserts that two slices hold the same bits. Compared with memcmp first (the tests move
/// gigabytes, and an element loop in a debug build is slow), element by element only to name
/// the first difference.
fn assert_same<T: Element + PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    if bytes_of(got) == bytes_of(want) {
        return;
    }
    // the first element whose bits differ (or the shorter length)
    let i = (0..got.len().min(want.len()))
        .find(|&i| bytes_of(&got[i..=i]) != bytes_of(&want[i..=i]))
        .unwrap_or(got.len().min(want.len()));
    panic!(
        "{what}: differs at element {i} of {} (got {:?}, want {:?})",
        want.len(),
        got.get(i),
        want.get(i)
    );
}

/// Element counts around the interesting byte sizes of a type of `size` bytes: tiny, just under
/// / at / over the staging thresholds (16 MiB to the device, 4 MiB to the host), not a multiple
/// of the chunk size (32 MiB, less for transfers under 128 MiB).
fn counts(size: usize) -> Vec<usize> {
    let e = |bytes: usize| bytes / size;
    vec![
        0,
        1,
        3,
        1000,
        e(4 * MIB) - 1,
        e(4 * MIB),
        e(4 * MIB) + 1,
        e(9 * MIB) + 3,
        e(16 * MIB) - 1,
        e(16 * MIB),
        e(32 * MIB) + 7,
        e(3 * 32 * MIB) - 5,
        e(130 * MIB) + 13,
    ]
}

fn round_trip<T: Pattern>(dev: &Device, seed: u64) {
    for (k, n) in counts(std::mem::size_of::<T>()).into_iter().enumerate() {
        let want = data::<T>(n, seed + k as u64);
        let what = format!("{} x {n}", T::DTYPE);
        // pageable host -> device -> host, through every entry point
        let a = Array::from_slice_on(&want, dev).unwrap();
        assert_eq!(a.device(), *dev);
        assert_same(
            &a.to_vec().unwrap(),
            &want,
            &format!("{what}: from_slice/to_vec"),
        );
        let host = a.to_host().unwrap();
        assert_eq!(host.len(), n);
        assert_same(host.as_slice().unwrap(), &want, &format!("{what}: to_host"));
        let cpu = Array::from_vec_on(want.clone(), n, &Device::Cpu).unwrap();
        let b = cpu.to_device(dev).unwrap();
        let back = b.to_device(&Device::Cpu).unwrap();
        assert_same(
            &back.to_vec().unwrap(),
            &want,
            &format!("{what}: to_device"),
        );
        // pinned buffers both ways
        let pinned = PinnedBuffer::from_slice_on(&want, dev).unwrap();
        assert!(pinned.is_pinned());
        let c = Array::from_pinned_on(&pinned, n, dev).unwrap();
        assert_same(&c.to_vec().unwrap(), &want, &format!("{what}: from_pinned"));
        let mut out = PinnedBuffer::<T>::zeros_on(n, dev).unwrap();
        a.copy_to_pinned(&mut out).unwrap();
        assert_same(out.as_slice(), &want, &format!("{what}: copy_to_pinned"));
        assert_same(
            a.to_pinned().unwrap().as_slice(),
            &want,
            &format!("{what}: to_pinned"),
        );
        let mut d = Array::<T>::zeros_on(n, dev).unwrap();
        d.copy_from_pinned(&out).unwrap();
        assert_same(
            &d.to_vec().unwrap(),
            &want,
            &format!("{what}: copy_from_pinned"),
        );
        // pageable destination buffers (a PinnedBuffer made for the CPU is ordinary memory)
        let mut plain = PinnedBuffer::<T>::zeros_on(n, &Device::Cpu).unwrap();
        a.copy_to_pinned(&mut plain).unwrap();
        assert_same(plain.as_slice(), &want, &format!("{what}: into pageable"));
        let e = Array::from_pinned_on(&plain, n, dev).unwrap();
        assert_same(
            &e.to_vec().unwrap(),
            &want,
            &format!("{what}: from pageable"),
        );
    }
}

#[test]
fn gpu_round_trips_at_odd_sizes() {
    let Some((dev, _lock)) = gpu() else { return };
    round_trip::<f64>(&dev, 1);
    round_trip::<f32>(&dev, 2);
    round_trip::<u8>(&dev, 3);
    round_trip::<i32>(&dev, 4);
    round_trip::<bool>(&dev, 5);
}

#[test]
fn gpu_round_trip_above_one_gib() {
    let Some((dev, _lock)) = gpu() else { return };
    let n = (1 << 27) + 3; // 1 GiB + 24 bytes of f64
    let want = data::<f64>(n, 11);
    let a = Array::from_slice_on(&want, &dev).unwrap();
    assert_same(&a.to_vec().unwrap(), &want, "1 GiB f64");
    let b = (&a * 2.0).unwrap(); // a kernel queued right before the download
    let doubled: Vec<f64> = want.iter().map(|x| x * 2.0).collect();
    assert_same(&b.to_vec().unwrap(), &doubled, "1 GiB f64 after a kernel");
    let mut pinned = PinnedBuffer::<f64>::zeros_on(n, &dev).unwrap();
    b.copy_to_pinned(&mut pinned).unwrap();
    assert_same(pinned.as_slice(), &doubled, "1 GiB into pinned");
    let c = Array::from_pinned_on(&pinned, [3, n / 3 + 1], &dev).unwrap_err();
    assert!(matches!(c, Error::Shape(_)), "{c}");
    let c = Array::from_pinned_on(&pinned, n, &dev).unwrap();
    assert_same(&c.to_vec().unwrap(), &doubled, "1 GiB from pinned");
}

#[test]
fn gpu_sources_can_be_reused_at_once() {
    let Some((dev, _lock)) = gpu() else { return };
    let n = 40 * MIB / 8 + 9;
    // a staged upload has copied its source when it returns
    let mut v = data::<f64>(n, 21);
    let want = v.clone();
    let a = Array::from_slice_on(&v, &dev).unwrap();
    v.iter_mut().for_each(|x| *x = -1.0);
    let b = Array::from_slice_on(&v, &dev).unwrap(); // reuses the staging buffers at once
    assert_same(&a.to_vec().unwrap(), &want, "first upload");
    assert!(b.to_vec().unwrap().iter().all(|&x| x == -1.0));
    // a pinned buffer waits for its copy to the device before it is written again
    let mut p = PinnedBuffer::from_slice_on(&want, &dev).unwrap();
    let c = Array::from_pinned_on(&p, n, &dev).unwrap();
    p.as_mut_slice().iter_mut().for_each(|x| *x = 7.0);
    let d = Array::from_pinned_on(&p, n, &dev).unwrap();
    drop(p); // freed only after its last copy
    assert_same(&c.to_vec().unwrap(), &want, "from_pinned then overwrite");
    assert!(d.to_vec().unwrap().iter().all(|&x| x == 7.0));
}

#[test]
fn gpu_interleaved_transfers_stay_in_order() {
    let Some((dev, _lock)) = gpu() else { return };
    let n = 24 * MIB / 4 + 1;
    let mut arrays = Vec::new();
    for seed in 0..4 {
        let want = data::<f32>(n, 100 + seed);
        let a = Array::from_slice_on(&want, &dev).unwrap();
        let back = (&a + 1.0f32).unwrap().to_vec().unwrap();
        let plus: Vec<f32> = want.iter().map(|x| x + 1.0).collect();
        assert_same(&back, &plus, "upload, kernel, download");
        arrays.push((a, want));
    }
    for (a, want) in &arrays {
        assert_same(&a.to_vec().unwrap(), want, "earlier uploads intact");
    }
}

#[test]
fn gpu_pinned_size_mismatches_are_errors() {
    let Some((dev, _lock)) = gpu() else { return };
    let a = Array::<i32>::arange_on(0, 10, &dev).unwrap();
    let mut small = PinnedBuffer::<i32>::zeros_on(9, &dev).unwrap();
    assert!(matches!(a.copy_to_pinned(&mut small), Err(Error::Shape(_))));
    let mut b = Array::<i32>::zeros_on(11, &dev).unwrap();
    assert!(matches!(b.copy_from_pinned(&small), Err(Error::Shape(_))));
    assert!(matches!(
        Array::from_pinned_on(&small, [2, 5], &dev),
        Err(Error::Shape(_))
    ));
    let empty = PinnedBuffer::<i32>::zeros_on(0, &dev).unwrap();
    assert!(empty.is_empty() && empty.is_pinned());
    let z = Array::from_pinned_on(&empty, [0, 4], &dev).unwrap();
    assert_eq!(z.shape(), &[0, 4]);
    assert!(Array::<i32>::zeros_on(0, &dev)
        .unwrap()
        .to_pinned()
        .unwrap()
        .is_empty());
    let huge = PinnedBuffer::<f64>::zeros_on(usize::MAX / 2, &dev).unwrap_err();
    assert!(matches!(huge, Error::OutOfMemory { .. }), "{huge}");
}

/// GB/s of `bytes` moved in `ms`.
fn gbps(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// Median milliseconds of `reps` runs of `f` (each ends synchronised).
fn time_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

extern "C" {
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
}

/// `len` bytes copied by `threads` threads.
fn host_copy(dst: &mut [u8], src: &[u8], threads: usize) {
    let part = dst.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (d, s_) in dst.chunks_mut(part).zip(src.chunks(part)) {
            s.spawn(move || d.copy_from_slice(s_));
        }
    });
}

/// Rates of every path, for tuning (`GPUKIT_STAGING_*` variables change the staging).
#[test]
#[ignore]
fn transfer_rates() {
    let Some((dev, _lock)) = gpu() else { return };
    let reps: usize = std::env::var("RATE_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let vars: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("GPUKIT_"))
        .filter(|(k, _)| k != "GPUKIT_PROCESS_STATE")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    println!("config: {}", vars.join(" "));
    let sizes: Vec<usize> = std::env::var("RATE_SIZES_MIB")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 4, 16, 64, 256, 2048]);
    for mib in sizes {
        let bytes = mib * MIB;
        let n = bytes / 8;
        let host = data::<f64>(n, 5);
        let a = Array::from_slice_on(&host, &dev).unwrap();
        let h2d = time_ms(reps, || {
            let _a = Array::from_slice_on(&host, &dev).unwrap();
            gpukit::synchronize().unwrap();
        });
        let d2h = time_ms(reps, || {
            let _v = a.to_vec().unwrap();
        });
        let mut plain = PinnedBuffer::<f64>::zeros_on(n, &Device::Cpu).unwrap();
        let d2h_touched = time_ms(reps, || a.copy_to_pinned(&mut plain).unwrap());
        assert_same(plain.as_slice(), &host, "rates: pageable");
        print!(
            "{mib:>5} MiB  h2d {:6.1} GB/s ({h2d:7.2} ms)  d2h new Vec {:6.1} GB/s ({d2h:7.2} ms)  d2h touched {:6.1}",
            gbps(bytes, h2d),
            gbps(bytes, d2h),
            gbps(bytes, d2h_touched),
        );
        if std::env::var("RATE_PINNED").as_deref() != Ok("0") {
            let t0 = Instant::now();
            let mut pinned = PinnedBuffer::<f64>::zeros_on(n, &dev).unwrap();
            let alloc_ms = t0.elapsed().as_secs_f64() * 1e3;
            pinned.as_mut_slice().copy_from_slice(&host);
            let h2d_pinned = time_ms(reps, || {
                let _a = Array::from_pinned_on(&pinned, n, &dev).unwrap();
                gpukit::synchronize().unwrap();
            });
            let d2h_pinned = time_ms(reps, || a.copy_to_pinned(&mut pinned).unwrap());
            assert_same(pinned.as_slice(), &host, "rates: pinned");
            print!(
                "  pinned h2d {:6.1}  pinned d2h {:6.1}  (pinned alloc {alloc_ms:.0} ms)",
                gbps(bytes, h2d_pinned),
                gbps(bytes, d2h_pinned),
            );
        }
        println!();
        if mib >= 256 && std::env::var_os("RATE_HOST").is_some() {
            let src = vec![1u8; bytes];
            let mut dst = vec![0u8; bytes];
            for threads in [1, 4, 8, 16] {
                let ms = time_ms(reps, || host_copy(&mut dst, &src, threads));
                println!(
                    "        host memcpy, {threads:>2} threads: {:6.1} GB/s",
                    gbps(bytes, ms)
                );
            }
            let ms = time_ms(reps, || {
                let mut fresh: Vec<u8> = Vec::with_capacity(bytes);
                let spare = fresh.spare_capacity_mut();
                let part = bytes.div_ceil(16);
                std::thread::scope(|s| {
                    for c in spare.chunks_mut(part) {
                        s.spawn(move || {
                            c.iter_mut().step_by(4096).for_each(|b| {
                                b.write(1);
                            })
                        });
                    }
                });
            });
            println!(
                "        first touch of a new allocation, 16 threads: {:6.1} GB/s",
                gbps(bytes, ms)
            );
            let ms = time_ms(reps, || {
                let mut fresh: Vec<u8> = Vec::with_capacity(bytes);
                let huge = 2 << 20;
                let p = fresh.as_mut_ptr() as usize;
                let start = p.next_multiple_of(huge);
                // SAFETY: advice on whole pages inside the allocation.
                unsafe { madvise(start as *mut u8, (p + bytes - start) / huge * huge, 14) };
                let spare = fresh.spare_capacity_mut();
                let head = start - p;
                let (first, rest) = spare.split_at_mut(head);
                first.iter_mut().step_by(4096).for_each(|b| {
                    b.write(1);
                });
                let part = rest.len().div_ceil(16).next_multiple_of(huge);
                std::thread::scope(|s| {
                    for c in rest.chunks_mut(part) {
                        s.spawn(move || {
                            c.iter_mut().step_by(4096).for_each(|b| {
                                b.write(1);
                            })
                        });
                    }
                });
            });
            println!(
                "        first touch, huge pages (madvise), 16 threads: {:6.1} GB/s",
                gbps(bytes, ms)
            );
        }
    }
}
