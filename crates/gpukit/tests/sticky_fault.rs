//! A fatal CUDA fault (an illegal address from raw CUDA C) poisons the device's context. gpukit
//! says once what happened and what is lost, resets the device, and keeps working: old arrays
//! report the fault when used, new arrays and kernels (built-in, `#[kernel]`, raw CUDA C) work.
//!
//! One test in its own binary: it resets the device, which no other test may see. Skips
//! visibly without a GPU (fails instead with `GPUKIT_TEST_REQUIRE_GPU=1`).

use gpukit::prelude::*;

const POKE: &str = r#"
extern "C" __global__ void poke(unsigned long long address) {
    *(volatile float*)address = 1.0f;
}
"#;

#[kernel]
fn add_one(x: &[f32], out: &mut [f32]) {
    let i = grid(1);
    if i < x.len() {
        out[i] = x[i] + 1.0;
    }
}

fn gpu() -> Option<Device> {
    if gpukit::cuda_device_count() > 0 {
        return Some(Device::cuda(0).expect("cuda:0"));
    }
    let why = gpukit::cuda_unavailable_reason().unwrap_or_default();
    if std::env::var("GPUKIT_TEST_REQUIRE_GPU").as_deref() == Ok("1") {
        panic!("GPUKIT_TEST_REQUIRE_GPU=1 but no usable CUDA GPU: {why}");
    }
    println!("skipped: no CUDA GPU ({why})");
    None
}

/// Launches a raw kernel that writes to address 16 (illegal) and returns the error the next
/// synchronisation reports.
fn fault(dev: &Device) -> Error {
    let module = Module::from_cuda_on(POKE, dev).unwrap();
    let poke = module.kernel("poke").unwrap();
    launch!(poke[1, 1](16u64)).unwrap();
    gpukit::synchronize().expect_err("an illegal address must be reported")
}

#[test]
fn a_fatal_fault_is_reported_once_and_the_device_recovers() {
    let Some(dev) = gpu() else { return };
    let before = Array::<f32>::ones_on(1000, &dev).unwrap();
    let doubled = (&before * 2.0).unwrap();
    let host = doubled.to_vec().unwrap();

    let e = fault(&dev);
    let text = e.to_string();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
    assert!(text.contains("cuda:0 hit a fatal fault"), "{text}");
    assert!(text.contains("illegal"), "{text}");
    assert!(
        text.contains("every array that lived on cuda:0 is lost"),
        "{text}"
    );
    assert!(text.contains("gpukit has reset cuda:0"), "{text}");

    // Arrays of the lost context report the fault, whatever is done with them.
    for e in [
        before.to_vec().map(|_| ()).unwrap_err(),
        (&before * 2.0).map(|_| ()).unwrap_err(),
        before.sum().map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
    }
    // Host data is intact, and the device works again: built-in kernels, #[kernel], raw CUDA C.
    assert_eq!(host, vec![2.0f32; 1000]);
    gpukit::synchronize().expect("the reset device synchronises cleanly");
    let fresh = Array::<f32>::ones_on(1000, &dev).unwrap();
    assert_eq!((&fresh * 3.0).unwrap().sum().unwrap(), 3000.0);
    let mut out = Array::<f32>::zeros_on(1000, &dev).unwrap();
    launch!(add_one[4, 256](&fresh, &mut out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![2.0f32; 1000]);
    // An old array mixed into new work is refused, not read through a dead address.
    let mixed = (&fresh + &before).map(|_| ()).unwrap_err();
    assert!(matches!(mixed, Error::DeviceLost { .. }), "{mixed:?}");
    let mut old_out = before;
    let e = launch!(add_one[4, 256](&fresh, &mut old_out)).unwrap_err();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
    drop(old_out);

    // A second fault recovers the same way.
    let e = fault(&dev);
    assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
    assert!(fresh.to_vec().is_err());
    let again = Array::<f64>::arange_on(0.0, 100.0, &dev).unwrap();
    assert_eq!(again.sum().unwrap(), 4950.0);
    gpukit::synchronize().unwrap();
}
