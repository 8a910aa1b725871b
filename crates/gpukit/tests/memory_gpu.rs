//! Device memory as NVML sees it against what gpukit holds: a fresh 1 GiB array shows in NVML
//! as 1 GiB more used; dropping it leaves the GiB in gpukit's pool cache (still used, for NVML);
//! trimming the pool gives it back, and NVML sees that too. Within NVML's granularity.
//!
//! Its own binary: other tests allocating at the same time would move NVML's numbers. Skips
//! visibly without a GPU (fails instead with `GPUKIT_TEST_REQUIRE_GPU=1`).

use gpukit::nvml::{memory_report, ProcessMemory};
use gpukit::pool_stats;
use gpukit::prelude::*;
use std::time::{Duration, Instant};

const GIB: i64 = 1 << 30;
/// How far NVML's numbers may be from the allocation's size: NVML counts pages and the
/// driver's own bookkeeping.
const TOLERANCE: i64 = 32 << 20;

/// What NVML says is used on `device`: by this process where NVML lists it, else by all.
fn nvml_used(device: Device) -> i64 {
    let report = memory_report();
    let gpus = report.gpus.expect("NVML sees the GPU");
    let g = gpus
        .iter()
        .find(|g| g.device == Some(device))
        .unwrap_or_else(|| panic!("NVML lists no GPU matching {device}: {gpus:?}"));
    match g.this_process {
        ProcessMemory::Used(b) => b as i64,
        _ => g.used as i64,
    }
}

/// NVML's number once it is within TOLERANCE of `expected` (it may lag the driver a little),
/// or the last one after two seconds.
fn nvml_used_near(device: Device, expected: i64) -> i64 {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let now = nvml_used(device);
        if (now - expected).abs() <= TOLERANCE || Instant::now() > until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn mib(b: i64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

#[test]
fn nvml_sees_arrays_and_the_pool_cache_until_it_is_trimmed() {
    let Some((dev, _turn)) = gpukit::testing::serial_gpu_or_skip() else {
        return;
    };
    // The context, the memset kernel and an empty cache first.
    drop(Array::<u8>::zeros_on(1 << 20, &dev).unwrap());
    dev.synchronize().unwrap();
    dev.trim_pool().unwrap();
    let base = nvml_used(dev);

    // A fresh GiB shows in NVML.
    let a = Array::<u8>::zeros_on(GIB as usize, &dev).unwrap();
    dev.synchronize().unwrap();
    let with_array = nvml_used_near(dev, base + GIB);
    assert!(
        (with_array - base - GIB).abs() <= TOLERANCE,
        "NVML: {} before, {} with a 1 GiB array (grew {})",
        mib(base),
        mib(with_array),
        mib(with_array - base)
    );

    // Dropped, it stays in the pool: idle for gpukit, still used for NVML.
    drop(a);
    dev.synchronize().unwrap();
    let pool = pool_stats(&dev);
    assert!(
        pool.idle_bytes() as i64 >= GIB,
        "pool after the drop: {pool}"
    );
    let cached = nvml_used(dev);
    assert!(
        cached - base >= GIB - TOLERANCE,
        "NVML after the drop: {} (base {}): the cache should still count",
        mib(cached),
        mib(base)
    );
    assert!(memory_report()
        .to_string()
        .contains("gpukit's pool cache (idle)         1.0 GiB"));

    // Trimmed, it goes back to the driver, and NVML sees it go.
    let released = dev.trim_pool().unwrap() as i64;
    assert!(released >= GIB, "trim released {}", mib(released));
    let pool = pool_stats(&dev);
    assert!(
        (pool.idle_bytes() as i64) < TOLERANCE,
        "pool after the trim: {pool}"
    );
    let trimmed = nvml_used_near(dev, cached - GIB);
    assert!(
        (cached - trimmed - GIB).abs() <= TOLERANCE,
        "NVML: {} with the cache, {} after the trim (went down {})",
        mib(cached),
        mib(trimmed),
        mib(cached - trimmed)
    );

    // free_cached_memory does the same for every device in use.
    drop(Array::<f32>::zeros_on(64 << 20, &dev).unwrap());
    let freed = gpukit::free_cached_memory().unwrap();
    let on_dev: usize = freed
        .iter()
        .filter(|(d, _)| *d == dev)
        .map(|(_, b)| b)
        .sum();
    assert!(on_dev >= 256 << 20, "free_cached_memory: {freed:?}");
    assert!((pool_stats(&dev).idle_bytes() as i64) < TOLERANCE);
}
