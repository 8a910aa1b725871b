//! Out of device memory, both ways: a large request refused by gpukit's up-front check, and a
//! small one (which skips that check) refused by the driver once earlier arrays have filled the
//! device. Either is an `Error::OutOfMemory` naming the requested and free bytes; gpukit gives
//! its cached pool memory back and retries once before it gives up (and says so on stderr);
//! the device stays usable and the memory comes back when the arrays go.
//!
//! Its own binary: it fills the whole device. Skips visibly without a GPU (fails instead with
//! `GPUKIT_TEST_REQUIRE_GPU=1`).

use gpukit::prelude::*;
use gpukit::DeviceProperties;

const GIB: usize = 1 << 30;
const SMALL: usize = 32 << 20;

fn oom_fields(e: &Error) -> (String, usize, usize) {
    match e {
        Error::OutOfMemory {
            device,
            requested,
            free,
        } => (device.clone(), *requested, *free),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
}

#[test]
fn filling_the_device_ends_in_clear_errors_and_the_memory_comes_back() {
    let Some(dev) = gpukit::testing::gpu_or_skip() else {
        return;
    };
    let total = match dev.properties().unwrap() {
        DeviceProperties::Cuda(p) => p.total_memory,
        DeviceProperties::Cpu(_) => unreachable!(),
    };
    let limit = total / GIB + 2;

    // Large requests: gpukit's own check refuses the first one that does not fit.
    let mut large = Vec::new();
    let refused = loop {
        match Array::<u8>::zeros_on(GIB, &dev) {
            Ok(a) => large.push(a),
            Err(e) => break e,
        }
        assert!(large.len() <= limit, "allocated more than the device holds");
    };
    let (device, requested, free) = oom_fields(&refused);
    assert_eq!((device.as_str(), requested), ("cuda:0", GIB));
    assert!(free < GIB, "refused with {free} bytes free");
    assert!(refused.to_string().contains("requested 1073741824 bytes"));

    // Small requests go straight to the driver; the one that fails is retried after the pool
    // is trimmed, then reported with the same numbers.
    let mut small = Vec::new();
    let failed = loop {
        match Array::<u8>::zeros_on(SMALL, &dev) {
            Ok(a) => small.push(a),
            Err(e) => break e,
        }
        assert!(
            small.len() <= GIB / SMALL + 8,
            "more small arrays than the rest can hold"
        );
    };
    let (device, requested, free) = oom_fields(&failed);
    assert_eq!((device.as_str(), requested), ("cuda:0", SMALL));
    assert!(free < SMALL, "the driver refused with {free} bytes free");

    // Nothing was lost: with a little room made, the arrays still hold their zeros and work
    // still runs (a reduction needs a few bytes of its own).
    drop(small);
    assert_eq!(large[0].sum().map(|s| s as u64).unwrap(), 0);
    assert!(large
        .last()
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&b| b == 0));
    gpukit::synchronize().unwrap();

    // The memory comes back when the arrays go.
    let held = large.len();
    drop(large);
    let again: Vec<_> = (0..held)
        .map(|_| Array::<u8>::zeros_on(GIB, &dev).unwrap())
        .collect();
    assert_eq!(again.len(), held);
    drop(again);
    gpukit::synchronize().unwrap();
}
