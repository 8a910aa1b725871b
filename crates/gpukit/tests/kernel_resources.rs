//! What a kernel costs (`%kernelinfo`) and what it runs as (`%sass`): the driver's attributes
//! and occupancy calculator on a GPU, and the CUDA toolkit's disassembler where it exists.
//! GPU tests skip visibly without a GPU (fail with `GPUKIT_TEST_REQUIRE_GPU=1`).

use gpukit::prelude::*;

#[kernel]
fn scale(x: &[f32], out: &mut [f32], k: f32) {
    let i = grid(1);
    if i < x.len() {
        out[i] = x[i] * k;
    }
}

const RAW: &str = r#"
extern "C" __global__ void add_one(float* x, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"#;

fn toolkit_has(tool: &str) -> bool {
    let mut dirs: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.push("/usr/local/cuda/bin".into());
    dirs.iter().any(|d| d.join(tool).is_file())
}

#[test]
fn resources_and_occupancy_come_from_the_driver() {
    let Some((dev, _serial)) = gpukit::testing::serial_gpu_or_skip() else {
        return;
    };
    gpukit::set_default_device(dev);
    let r = scale.resources().unwrap();
    assert_eq!((r.kernel.as_str(), r.device), ("scale", dev));
    assert!(
        r.registers_per_thread > 0 && r.registers_per_thread <= 255,
        "{r}"
    );
    assert!(
        r.max_threads_per_block >= 32 && r.max_threads_per_block <= 1024,
        "{r}"
    );
    assert!(r.ptx_version >= 50 && r.binary_version >= 50, "{r}");
    assert!(r.suggested_block_size >= 32 && r.suggested_block_size <= r.max_threads_per_block);
    assert!(!r.occupancy.is_empty());
    for o in &r.occupancy {
        assert!(o.fraction > 0.0 && o.fraction <= 1.0, "{r}");
    }
    assert!(!r.spills(), "a one-line kernel should not spill: {r}");
    println!("{r}");
    let module = Module::from_cuda_on(RAW, &dev).unwrap();
    let raw = module.kernel("add_one").unwrap().resources().unwrap();
    assert_eq!(raw.kernel, "add_one");
    assert!(raw.registers_per_thread > 0);
}

#[test]
fn sass_is_the_disassembled_machine_code_or_says_what_is_missing() {
    let on_gpu = gpukit::testing::gpu_or_skip();
    if let Some(dev) = on_gpu {
        gpukit::set_default_device(dev);
    }
    if !gpukit::testing::nvrtc_or_skip() {
        return;
    }
    match scale.sass() {
        Ok(text) => {
            assert!(text.contains("scale"), "{text}");
            assert!(text.contains("EXIT"), "no instructions in:\n{text}");
            println!("{}", text.lines().take(30).collect::<Vec<_>>().join("\n"));
        }
        Err(e) => {
            assert!(!toolkit_has("cuobjdump") && !toolkit_has("nvdisasm"), "{e}");
            assert!(e.to_string().contains("cuobjdump"), "{e}");
        }
    }
    if let Some(dev) = on_gpu {
        let module = Module::from_cuda_on(RAW, &dev).unwrap();
        let text = module.kernel("add_one").unwrap().sass().unwrap();
        assert!(text.contains("add_one"), "{text}");
    }
}
