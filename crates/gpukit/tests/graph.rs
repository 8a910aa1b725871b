//! Graphs (`gpukit::Graph`): capture a sequence of launches and array operations, replay it,
//! update its scalars; what cannot be captured is an error and leaves the device usable; an
//! out-of-bounds index in a captured kernel is still reported; a graph keeps the buffers it uses.
//!
//! The CPU tests run everywhere. GPU tests skip (with a message) where no CUDA GPU is usable, or
//! fail there with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).
//!
//! Why this file is long: the same graph behaviours on the CPU and on the GPU, side by side.

use gpukit::prelude::*;
use gpukit::testing::serial_gpu_or_skip as gpu;

#[kernel]
fn axpb(a: &mut [f32], s: f32, b: f32) {
    let i = grid(1);
    if i < a.len() {
        a[i] = a[i] * s + b;
    }
}

/// Thread `i` writes `a[i + shift]`: out of bounds for the last `shift` threads.
#[kernel]
fn shifted(a: &mut [f32], shift: u64) {
    let i = grid(1);
    if i < a.len() {
        a[i + shift as usize] = 1.0;
    }
}

const N: usize = 1000;

fn values(a: &Array<f32>) -> Vec<f32> {
    a.to_vec().expect("read back")
}

/// Something tried inside a capture, on the array being captured.
type Attempt = Box<dyn Fn(&Array<f32>) -> Result<()>>;

fn is_capture_error(e: &Error) -> bool {
    matches!(e, Error::GraphCapture { .. })
        && e.to_string().contains("cannot run inside a graph capture")
}

// ---------------------------------------------------------------------------------------------
// The CPU backend: the same semantics, so notebooks and CI behave as on a GPU.

#[test]
fn cpu_capture_records_without_running_and_replays_in_order() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::ones_on(N, &cpu).unwrap();
    let g = Graph::capture_on(&cpu, || {
        launch!(axpb[4, 256](&mut a, 2.0f32, 1.0f32))?; // a = 2a + 1
        a.add_in_place(10.0)?; // a += 10
        Ok(())
    })
    .unwrap();
    assert_eq!((g.len(), g.device()), (2, Device::Cpu));
    assert!(
        values(&a).iter().all(|&x| x == 1.0),
        "a capture runs nothing"
    );
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 13.0));
    g.launch_n(2).unwrap(); // 13 -> 37 -> 85
    assert!(
        values(&a).iter().all(|&x| x == 85.0),
        "{:?}",
        &values(&a)[..3]
    );
}

#[test]
fn cpu_graph_macro_captures_a_block() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::ones_on(N, &cpu).unwrap();
    let g = graph!(on &cpu;
        launch!(axpb[4, 256](&mut a, 3.0f32, 0.0f32))?;
        a.add_in_place(1.0)
    )
    .unwrap();
    assert_eq!(g.len(), 2);
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 4.0));
    let e = graph!(on &cpu; a.to_vec()?;).unwrap_err();
    assert!(is_capture_error(&e), "{e}");
}

#[test]
fn cpu_update_replaces_the_scalars() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::zeros_on(N, &cpu).unwrap();
    let mut g = Graph::capture_on(&cpu, || {
        a.fill(1.0)?;
        launch!(axpb[4, 256](&mut a, 3.0f32, 0.0f32))
    })
    .unwrap();
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 3.0));
    let how = g
        .update(|| {
            a.fill(1.0)?;
            launch!(axpb[4, 256](&mut a, 5.0f32, 0.5f32))
        })
        .unwrap();
    assert_eq!(how, GraphUpdate::InPlace);
    assert!(
        values(&a).iter().all(|&x| x == 3.0),
        "an update runs nothing"
    );
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 5.5));
}

#[test]
fn cpu_forbidden_operations_are_errors_and_the_capture_ends() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::ones_on(8, &cpu).unwrap();
    let b = Array::<f32>::ones_on(8, &cpu).unwrap();
    let attempts: Vec<(&str, Attempt)> = vec![
        ("to_vec", Box::new(|a| a.to_vec().map(drop))),
        ("sum", Box::new(|a| a.sum().map(drop))),
        (
            "a new array",
            Box::new(|_| Array::<f32>::zeros_on(4, &Device::Cpu).map(drop)),
        ),
        (
            "an operator making a temporary",
            Box::new(|a| (a + 1.0).map(drop)),
        ),
        ("synchronize", Box::new(|_| Device::Cpu.synchronize())),
    ];
    for (what, attempt) in &attempts {
        let e = Graph::capture_on(&cpu, || {
            a.add_in_place(1.0)?;
            attempt(&a)
        })
        .unwrap_err();
        assert!(is_capture_error(&e), "{what}: {e}");
        // Not capturing any more: operations run at once again.
        a.add_in_place(&b).unwrap();
    }
    assert!(values(&a).iter().all(|&x| x == 1.0 + attempts.len() as f32));
    // Host arrays cannot be captured either. A launch on host arrays runs on the default device,
    // so this holds for a CPU capture where the CPU is the default; with a GPU as the default the
    // launch is not part of a CPU capture (gpu_forbidden_operations_... checks the GPU's refusal,
    // holding the GPU so that no other test's capture overlaps).
    if matches!(gpukit::default_device(), Device::Cpu) {
        let mut host = vec![0f32; 8];
        let e =
            Graph::capture_on(&cpu, || launch!(axpb[1, 8](&mut host, 1.0f32, 1.0f32))).unwrap_err();
        assert!(is_capture_error(&e), "{e}");
        assert!(e.to_string().contains("host arrays"), "{e}");
    }
}

#[test]
fn cpu_closure_errors_and_panics_end_the_capture() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::ones_on(8, &cpu).unwrap();
    let e = Graph::capture_on(&cpu, || {
        a.add_in_place(1.0)?;
        Err(Error::Other("mine".into()))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "mine");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = Graph::capture_on(&Device::Cpu, || panic!("inside"));
    }));
    assert!(caught.is_err());
    a.add_in_place(1.0).unwrap();
    assert!(values(&a).iter().all(|&x| x == 2.0), "nothing captured ran");
    // Captures do not nest.
    let e = Graph::capture_on(&cpu, || {
        Graph::capture_on(&Device::Cpu, || Ok(())).map(drop)
    })
    .unwrap_err();
    assert!(is_capture_error(&e), "{e}");
    let empty = Graph::capture_on(&cpu, || Ok(())).unwrap();
    assert!(empty.is_empty());
    empty.launch().unwrap();
}

#[test]
fn cpu_out_of_bounds_in_a_captured_kernel_is_reported_by_the_replay() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::zeros_on(N, &cpu).unwrap();
    let g = Graph::capture_on(&cpu, || launch!(shifted[4, 256](&mut a, 1u64))).unwrap();
    for _ in 0..2 {
        let e = g.launch().unwrap_err();
        match &e {
            Error::IndexOutOfBounds(oob) => {
                assert_eq!((oob.kernel.as_str(), oob.array.as_str()), ("shifted", "a"));
                assert_eq!((oob.index, oob.len), (N as u64, N as u64));
            }
            other => panic!("expected an out-of-bounds error, got {other}"),
        }
    }
}

#[test]
fn cpu_graph_keeps_the_buffers_of_dropped_arrays() {
    let cpu = Device::Cpu;
    let mut a = Array::<f32>::ones_on(N, &cpu).unwrap();
    let b = Array::<f32>::full_on(N, 2.0, &cpu).unwrap();
    let g = Graph::capture_on(&cpu, move || a.add_in_place(&b)).unwrap();
    // `a` and `b` went with the closure: the graph holds their buffers.
    assert_eq!(g.kept_buffers(), 2);
    g.launch_n(3).unwrap();
    let mut c = Array::<f32>::zeros_on(N, &cpu).unwrap();
    let g2 = Graph::capture_on(&cpu, || c.fill(4.0)).unwrap();
    drop(c);
    assert_eq!(g2.kept_buffers(), 1);
    g2.launch().unwrap();
    let unrelated = Array::<f32>::zeros_on(N, &cpu).unwrap();
    drop(unrelated);
    assert_eq!((g.kept_buffers(), g2.kept_buffers()), (2, 1));
}

/// The kernels of this file compile with NVRTC (no GPU needed), so the GPU tests below test
/// graphs, not the translation.
#[test]
fn kernels_compile_with_nvrtc() {
    if !gpukit::testing::nvrtc_or_skip() {
        return;
    }
    for (name, ptx) in [
        ("axpb", axpb.ptx()),
        ("shifted", shifted.ptx()),
        ("first_in_capture", first_in_capture.ptx()),
    ] {
        let ptx = ptx.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(ptx.contains(&format!(".entry {name}")), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// A CUDA GPU.

#[test]
fn gpu_replays_several_launches_with_the_right_data() {
    let Some((dev, _turn)) = gpu() else { return };
    let mut a = Array::<f32>::ones_on(N, &dev).unwrap();
    let b = Array::<f32>::full_on(N, 0.5, &dev).unwrap();
    // Launched once before, and one kernel first launched inside the capture (compiled then).
    launch!(axpb[4, 256](&mut a, 1.0f32, 0.0f32)).unwrap();
    let g = Graph::capture_on(&dev, || {
        launch!(axpb[4, 256](&mut a, 2.0f32, 1.0f32))?; // 2a + 1
        a.add_in_place(&b)?; // + 0.5
        launch!(axpb[4, 256](&mut a, 1.0f32, -0.5f32))?; // - 0.5
        a.mul_in_place(2.0)?; // * 2
        Ok(())
    })
    .unwrap();
    assert_eq!(g.device(), dev);
    assert!(g.len() >= 4, "{} nodes", g.len());
    assert!(
        values(&a).iter().all(|&x| x == 1.0),
        "a capture runs nothing"
    );
    g.launch().unwrap(); // (2*1 + 1) * 2 = 6
    assert!(
        values(&a).iter().all(|&x| x == 6.0),
        "{:?}",
        &values(&a)[..3]
    );
    g.launch_n(3).unwrap(); // 6 -> 26 -> 106 -> 426
    assert!(
        values(&a).iter().all(|&x| x == 426.0),
        "{:?}",
        &values(&a)[..3]
    );
    dev.synchronize().unwrap();
}

#[test]
fn gpu_update_changes_the_scalars_in_place() {
    let Some((dev, _turn)) = gpu() else { return };
    let mut a = Array::<f32>::zeros_on(N, &dev).unwrap();
    let mut g = Graph::capture_on(&dev, || {
        a.fill(1.0)?;
        launch!(axpb[4, 256](&mut a, 3.0f32, 0.0f32))
    })
    .unwrap();
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 3.0));
    let how = g
        .update(|| {
            a.fill(1.0)?;
            launch!(axpb[4, 256](&mut a, 5.0f32, 0.5f32))
        })
        .unwrap();
    assert_eq!(how, GraphUpdate::InPlace, "only scalars changed");
    g.launch().unwrap();
    assert!(
        values(&a).iter().all(|&x| x == 5.5),
        "{:?}",
        &values(&a)[..3]
    );
    // Other steps: instantiated again, still right.
    let how = g.update(|| a.add_in_place(1.0)).unwrap();
    assert_eq!(how, GraphUpdate::Reinstantiated);
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 6.5));
}

#[test]
fn gpu_forbidden_operations_are_errors_and_the_stream_works_after() {
    let Some((dev, _turn)) = gpu() else { return };
    let mut a = Array::<f32>::ones_on(8, &dev).unwrap();
    let attempts: Vec<(&str, Attempt)> = vec![
        ("to_vec", Box::new(|a| a.to_vec().map(drop))),
        ("sum", Box::new(|a| a.sum().map(drop))),
        (
            "a new array",
            Box::new(|a| Array::<f32>::zeros_on(4, &a.device()).map(drop)),
        ),
        (
            "an operator making a temporary",
            Box::new(|a| (a + 1.0).map(drop)),
        ),
        ("synchronize", Box::new(|a| a.device().synchronize())),
        (
            "an array from host data",
            Box::new(|a| Array::<f32>::from_slice_on(&[1.0], &a.device()).map(drop)),
        ),
        (
            "a host array as a kernel argument",
            Box::new(|_| {
                let mut host = vec![0f32; 8];
                launch!(axpb[1, 8](&mut host, 1.0f32, 1.0f32))
            }),
        ),
    ];
    for (what, attempt) in &attempts {
        let e = Graph::capture_on(&dev, || {
            launch!(axpb[1, 8](&mut a, 1.0f32, 1.0f32))?;
            attempt(&a)
        })
        .unwrap_err();
        assert!(is_capture_error(&e), "{what}: {e}");
        // The stream is out of capture: a launch runs and reading waits for it.
        launch!(axpb[1, 8](&mut a, 1.0f32, 1.0f32)).unwrap();
    }
    assert!(values(&a).iter().all(|&x| x == 1.0 + attempts.len() as f32));
    // An error the closure ignores does not spoil the capture.
    let g = Graph::capture_on(&dev, || {
        let _ = a.to_vec();
        a.add_in_place(1.0)
    })
    .unwrap();
    g.launch().unwrap();
    assert!(values(&a).iter().all(|&x| x == 2.0 + attempts.len() as f32));
    dev.synchronize().unwrap();
}

#[test]
fn gpu_out_of_bounds_in_a_captured_kernel_is_reported_after_replay() {
    let Some((dev, _turn)) = gpu() else { return };
    let mut a = Array::<f32>::zeros_on(N, &dev).unwrap();
    let g = Graph::capture_on(&dev, || {
        launch!(axpb[4, 256](&mut a, 1.0f32, 1.0f32))?;
        launch!(shifted[4, 256](&mut a, 1u64))
    })
    .unwrap();
    dev.synchronize()
        .expect("a capture runs nothing, so nothing fails");
    for _ in 0..2 {
        g.launch().unwrap();
        let e = dev.synchronize().unwrap_err();
        match &e {
            Error::IndexOutOfBounds(oob) => {
                assert_eq!((oob.kernel.as_str(), oob.array.as_str()), ("shifted", "a"));
                assert_eq!((oob.index, oob.len), (N as u64, N as u64));
                assert_eq!((oob.thread, oob.block), ([231, 0, 0], [3, 0, 0]));
            }
            other => panic!("expected an out-of-bounds error, got {other}"),
        }
    }
    // The context survives; a replay of a correct graph reports nothing.
    let ok = Graph::capture_on(&dev, || launch!(axpb[4, 256](&mut a, 1.0f32, 1.0f32))).unwrap();
    ok.launch_n(2).unwrap();
    dev.synchronize().unwrap();
}

/// A kernel launched for the first time inside a capture is compiled and loaded then (in the
/// driver's relaxed capture mode). Said here which way it went, so a driver that refuses is seen.
#[kernel]
fn first_in_capture(a: &mut [f32]) {
    let i = grid(1);
    if i < a.len() {
        a[i] += 7.0;
    }
}

#[test]
fn gpu_a_kernel_first_launched_inside_a_capture_works() {
    let Some((dev, _turn)) = gpu() else { return };
    let mut a = Array::<f32>::zeros_on(N, &dev).unwrap();
    let g = Graph::capture_on(&dev, || launch!(first_in_capture[4, 256](&mut a)))
        .expect("compiling and loading a kernel inside a capture");
    g.launch_n(2).unwrap();
    assert!(
        values(&a).iter().all(|&x| x == 14.0),
        "{:?}",
        &values(&a)[..3]
    );
}

#[test]
fn gpu_graph_keeps_the_buffers_of_dropped_arrays() {
    let Some((dev, _turn)) = gpu() else { return };
    let mut a = Array::<f32>::ones_on(N, &dev).unwrap();
    let b = Array::<f32>::full_on(N, 2.0, &dev).unwrap();
    let g = Graph::capture_on(&dev, move || a.add_in_place(&b)).unwrap();
    assert_eq!(g.kept_buffers(), 2);
    g.launch_n(3).unwrap();
    dev.synchronize().unwrap();
    // New arrays cannot get the kept buffers while the graph lives.
    let c = Array::<f32>::zeros_on(N, &dev).unwrap();
    g.launch().unwrap();
    assert!(values(&c).iter().all(|&x| x == 0.0));
    drop(g);
    dev.synchronize().unwrap();
}
