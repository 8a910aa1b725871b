//! Errors of assigning operators (`a *= &b` cannot return a `Result`) are kept on the array's
//! device and returned by its next `synchronize()` / `to_host()`. One test in its own binary, so
//! no other test consumes the pending error first.

use gpukit::{Array, Device, Error};

fn check_device(dev: &Device) {
    let mut a = Array::<f64>::ones_on([2, 3], dev).unwrap();
    let b = Array::<f64>::ones_on([3, 2], dev).unwrap();
    a *= &b;
    let e = dev.synchronize().unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    assert!(
        e.to_string().contains("[2, 3]") && e.to_string().contains("[3, 2]"),
        "{e}"
    );
    dev.synchronize().expect("the error is reported once");
    assert_eq!(
        a.to_vec().unwrap(),
        vec![1.0; 6],
        "the failed operator left the array unchanged"
    );

    a += &b;
    let e = a.to_host().unwrap_err();
    assert!(e.to_string().contains("+="), "{e}");
    a.to_host().expect("then cleared");

    a -= &b;
    let e = gpukit::synchronize().unwrap_err();
    assert!(e.to_string().contains("-="), "{e}");
    gpukit::synchronize().unwrap();
    // Display does not consume the error: it is still there for the cell's end.
    a /= &b;
    let _ = a.to_string();
    assert!(a.synchronize().is_err());
}

#[test]
fn assigning_operator_errors_surface_at_the_next_synchronize() {
    check_device(&Device::Cpu);
    // The CUDA half skips (or fails, with GPUKIT_TEST_REQUIRE_GPU=1) without a GPU.
    let Some(gpu) = gpukit::testing::gpu_or_skip() else {
        return;
    };
    check_device(&gpu);
    // A CUDA error does not leak to the CPU device and vice versa.
    let mut g = Array::<f32>::ones_on(3, &gpu).unwrap();
    g *= &Array::<f32>::ones_on(4, &gpu).unwrap();
    Device::Cpu.synchronize().unwrap();
    assert!(gpu.synchronize().is_err());
}
