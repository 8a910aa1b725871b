//! A fatal CUDA fault (an illegal address from raw CUDA C) poisons the device's context. gpukit
//! says once what happened and what is lost, and then either works again on the reset device
//! (where the driver allows it) or says the process cannot use the device again and goes on on
//! the CPU. The test checks that what the message claims is what happens.
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

/// Launches a raw kernel that writes to address 16 (illegal) and returns the error the next
/// synchronisation reports.
fn fault(dev: &Device) -> Error {
    let module = Module::from_cuda_on(POKE, dev).unwrap();
    let poke = module.kernel("poke").unwrap();
    launch!(poke[1, 1](16u64)).unwrap();
    gpukit::synchronize().expect_err("an illegal address must be reported")
}

#[test]
fn a_fatal_fault_is_reported_once_and_what_it_says_holds() {
    let Some(dev) = gpukit::testing::gpu_or_skip() else {
        return;
    };
    gpukit::set_default_device(dev);
    let before = Array::<f32>::ones_on(1000, &dev).unwrap();
    let doubled = (&before * 2.0).unwrap();
    let host = doubled.to_vec().unwrap();
    let cpu_before = Array::<f64>::arange_on(0.0, 10.0, &Device::Cpu).unwrap();

    let e = fault(&dev);
    let text = e.to_string();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
    assert!(text.contains("cuda:0 hit a fatal fault"), "{text}");
    assert!(text.contains("illegal"), "{text}");
    assert!(
        text.contains("every array that lived on cuda:0 is lost"),
        "{text}"
    );

    // Arrays of the lost context report the fault, whatever is done with them.
    for e in [
        before.to_vec().map(|_| ()).unwrap_err(),
        (&before * 2.0).map(|_| ()).unwrap_err(),
        before.sum().map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
    }
    // Host data and CPU arrays are intact, and synchronising is no longer an error.
    assert_eq!(host, vec![2.0f32; 1000]);
    assert_eq!(cpu_before.sum().unwrap(), 45.0);
    gpukit::synchronize().expect("nothing left to report after the fault");

    if text.contains("gpukit has reset cuda:0") {
        // The driver allowed a reset: the device works again, for every kind of kernel.
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
    } else {
        // The driver does not allow it: the message says so, asking for the device repeats it
        // at once (never a bare CUDA error), and the notebook goes on on the CPU.
        assert!(
            text.contains("does not let this process use cuda:0 again"),
            "{text}"
        );
        assert!(text.contains("Restart the kernel"), "{text}");
        for e in [
            Array::<f32>::ones_on(10, &dev).map(|_| ()).unwrap_err(),
            Module::from_cuda_on(POKE, &dev).map(|_| ()).unwrap_err(),
        ] {
            assert!(
                matches!(&e, Error::DeviceLost { message, .. } if *message == text),
                "{e:?}"
            );
        }
        assert_eq!(gpukit::default_device(), Device::Cpu);
        let x = Array::<f32>::ones(1000).unwrap();
        assert_eq!(x.device(), Device::Cpu);
        let mut out = Array::<f32>::zeros(1000).unwrap();
        launch!(add_one[4, 256](&x, &mut out)).unwrap();
        assert_eq!(out.sum().unwrap(), 2000.0);
    }
}
