//! Raw CUDA C (`Module::from_cuda`): compile, list and launch kernels with `launch!`, host
//! arrays, compile errors with NVRTC's line numbers, unknown names, and the CPU device's error.
//!
//! GPU tests skip (with a message) where no CUDA GPU is usable, or fail there with
//! `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use gpukit::prelude::*;

// The GPU, held for the whole test (GPU tests of this file run one at a time), or a skip as
// gpukit::testing says.
use gpukit::testing::serial_gpu_or_skip as gpu;

const SOURCE: &str = r#"
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void fill2d(int* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[y * width + x] = 1000 * y + x;
}

extern "C" __global__ void block_total(const double* in, double* out, int n) {
    extern __shared__ double part[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    part[t] = i < n ? in[i] : 0.0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, part[0]);
}
"#;

#[test]
fn compiles_lists_and_launches_with_the_same_syntax() {
    let Some((gpu, _serial)) = gpu() else { return };
    let module = Module::from_cuda_on(SOURCE, &gpu).unwrap();
    assert_eq!(module.kernel_names(), ["saxpy", "fill2d", "block_total"]);
    assert!(module.ptx().contains(".entry saxpy"));
    assert_eq!(module.device(), gpu);

    let saxpy = module.kernel("saxpy").unwrap();
    let n = 10_000usize;
    let x = Array::from_vec_on((0..n).map(|i| i as f32).collect(), n, &gpu).unwrap();
    let mut y = Array::<f32>::ones_on(n, &gpu).unwrap();
    launch!(saxpy[n.div_ceil(256), 256](&x, &mut y, 3.0f32, n)).unwrap();
    let y = y.to_vec().unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 3.0 * i as f32 + 1.0));

    // 2-D grid, `int` scalars.
    let fill2d = module.kernel("fill2d").unwrap();
    let (w, h) = (37i32, 21i32);
    let mut out = Array::<i32>::zeros_on((h as usize, w as usize), &gpu).unwrap();
    launch!(fill2d[(3, 2), (16, 16)](&mut out, w, h)).unwrap();
    let out = out.to_vec().unwrap();
    assert_eq!(out[(5 * w + 7) as usize], 5007);
    assert_eq!(out[out.len() - 1], 1000 * (h - 1) + w - 1);

    // Dynamic shared memory through a LaunchConfig.
    let block_total = module.kernel("block_total").unwrap();
    let input = Array::<f64>::ones_on(1000, &gpu).unwrap();
    let mut total = Array::<f64>::zeros_on(1, &gpu).unwrap();
    let config = LaunchConfig::new(4, 256).unwrap().with_shared_mem(256 * 8);
    block_total
        .launch_with(
            config,
            vec![
                gpukit::__private::RawArg::into_raw_arg(&input),
                gpukit::__private::RawArg::into_raw_arg(&mut total),
                gpukit::__private::RawArg::into_raw_arg(1000i32),
            ],
        )
        .unwrap();
    assert_eq!(total.to_vec().unwrap(), [1000.0]);
}

#[test]
fn host_arrays_work_with_raw_kernels() {
    let Some((gpu, _serial)) = gpu() else { return };
    let saxpy = Module::from_cuda_on(SOURCE, &gpu)
        .unwrap()
        .kernel("saxpy")
        .unwrap();
    let x = vec![1.0f32, 2.0, 3.0];
    let mut y = ndarray::Array1::<f32>::zeros(3);
    launch!(saxpy[1, 32](&x, &mut y, 2.0f32, 3usize)).unwrap();
    assert_eq!(y.to_vec(), [2.0, 4.0, 6.0]);
}

#[test]
fn compile_errors_carry_nvrtc_line_numbers() {
    let Some((gpu, _serial)) = gpu() else { return };
    let src = "extern \"C\" __global__ void broken(float* x) {\n    int i = threadIdx.x;\n    x[i] = undefined_name;\n}\n";
    match Module::from_cuda_on(src, &gpu).unwrap_err() {
        Error::Compile { log, .. } => {
            assert!(log.contains("(3)"), "line 3 not named in:\n{log}");
            assert!(log.contains("undefined_name"), "{log}");
        }
        other => panic!("expected a compile error, got: {other}"),
    }
}

#[test]
fn unknown_kernels_and_foreign_arrays_are_errors() {
    let Some((gpu, _serial)) = gpu() else { return };
    let module = Module::from_cuda_on(SOURCE, &gpu).unwrap();
    match module.kernel("sxapy").unwrap_err() {
        Error::UnknownKernel { name, available } => {
            assert_eq!(name, "sxapy");
            assert!(available.contains("saxpy"), "{available}");
        }
        other => panic!("expected an unknown-kernel error, got: {other}"),
    }
    let saxpy = module.kernel("saxpy").unwrap();
    let x = Array::<f32>::ones_on(4, &Device::Cpu).unwrap();
    let mut y = Array::<f32>::ones_on(4, &gpu).unwrap();
    let e = launch!(saxpy[1, 4](&x, &mut y, 1.0f32, 4usize)).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch(_)), "{e}");
    let mut host = y.to_vec().unwrap();
    let e = launch!(saxpy[1, 4096](&y, &mut host, 1.0f32, 4usize)).unwrap_err();
    assert!(matches!(e, Error::LaunchConfig { .. }), "{e}");
}

#[test]
fn the_cpu_device_needs_a_gpu() {
    let e = Module::from_cuda_on(SOURCE, &Device::Cpu).unwrap_err();
    assert!(matches!(e, Error::NeedsGpu { .. }), "{e}");
    assert!(e.to_string().contains("needs a CUDA GPU"), "{e}");
}
