//! The `#[vectorize]` runtime: elementwise functions over arrays, host arrays and scalars with
//! broadcasting, on the CPU and (where a GPU is usable) on CUDA, compared with each other.
//!
//! The functions are written by hand as `#[vectorize]` generates them (docs/ARCHITECTURE.md).

use gpukit::__private::{vectorize1, vectorize2, vectorize3, VecArg, VectorizeInfo};
use gpukit::prelude::*;

// What `#[vectorize] fn lerp(a: f32, b: f32, t: f32) -> f32 { a + (b - a) * t }` generates.

/// `a + (b - a) * t`, elementwise.
pub fn lerp<A0: VecArg<f32>, A1: VecArg<f32>, A2: VecArg<f32>>(
    a: A0,
    b: A1,
    t: A2,
) -> gpukit::Result<Array<f32>> {
    vectorize3(
        &__GPUKIT_VECTORIZE_lerp,
        a,
        b,
        t,
        |a: f32, b: f32, t: f32| -> f32 { a + (b - a) * t },
    )
}

#[doc(hidden)]
#[allow(non_upper_case_globals)]
pub const __GPUKIT_VECTORIZE_lerp: VectorizeInfo = VectorizeInfo {
    name: "lerp",
    arity: 3,
    rust_source: "fn lerp(a: f32, b: f32, t: f32) -> f32 { a + (b - a) * t }",
    cuda_source: r#"
__device__ float lerp(float a, float b, float t) { return __fadd_rn(a, __fmul_rn(__fsub_rn(b, a), t)); }
extern "C" __global__ void lerp_vectorized(const float* in0, unsigned long long in0_len,
                                           const float* in1, unsigned long long in1_len,
                                           const float* in2, unsigned long long in2_len,
                                           float* out, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = lerp(in0_len == 1 ? in0[0] : in0[i], in1_len == 1 ? in1[0] : in1[i],
                      in2_len == 1 ? in2[0] : in2[i]);
    }
}
"#,
};

// `#[vectorize] fn fizz(i: i64) -> f64 { if i % 3 == 0 { -1.0 } else { i as f64 / 2.0 } }`

/// Elementwise `fizz`.
pub fn fizz<A0: VecArg<i64>>(i: A0) -> gpukit::Result<Array<f64>> {
    vectorize1(&__GPUKIT_VECTORIZE_fizz, i, |i: i64| -> f64 {
        if i % 3 == 0 {
            -1.0
        } else {
            i as f64 / 2.0
        }
    })
}

#[doc(hidden)]
#[allow(non_upper_case_globals)]
pub const __GPUKIT_VECTORIZE_fizz: VectorizeInfo = VectorizeInfo {
    name: "fizz",
    arity: 1,
    rust_source: "",
    cuda_source: r#"
__device__ double fizz(long long i) { return i % 3 == 0 ? -1.0 : (double)i / 2.0; }
extern "C" __global__ void fizz_vectorized(const long long* in0, unsigned long long in0_len,
                                           double* out, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = fizz(in0_len == 1 ? in0[0] : in0[i]);
    }
}
"#,
};

// `#[vectorize] fn above(x: f32, limit: f32) -> bool { x > limit }`

/// Elementwise `x > limit`.
pub fn above<A0: VecArg<f32>, A1: VecArg<f32>>(x: A0, limit: A1) -> gpukit::Result<Array<bool>> {
    vectorize2(
        &__GPUKIT_VECTORIZE_above,
        x,
        limit,
        |x: f32, limit: f32| -> bool { x > limit },
    )
}

#[doc(hidden)]
#[allow(non_upper_case_globals)]
pub const __GPUKIT_VECTORIZE_above: VectorizeInfo = VectorizeInfo {
    name: "above",
    arity: 2,
    rust_source: "",
    cuda_source: r#"
__device__ bool above(float x, float limit) { return x > limit; }
extern "C" __global__ void above_vectorized(const float* in0, unsigned long long in0_len,
                                            const float* in1, unsigned long long in1_len,
                                            bool* out, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = above(in0_len == 1 ? in0[0] : in0[i], in1_len == 1 ? in1[0] : in1[i]);
    }
}
"#,
};

// The GPU, held for the whole test (GPU tests of this file run one at a time), or a skip as
// gpukit::testing says.
use gpukit::testing::serial_gpu_or_skip as gpu;

fn cpu_array(v: Vec<f32>, shape: &[usize]) -> Array<f32> {
    Array::from_vec_on(v, shape, &Device::Cpu).unwrap()
}

#[test]
fn arrays_scalars_and_one_element_arrays_broadcast_on_the_cpu() {
    let a = cpu_array((0..6).map(|i| i as f32).collect(), &[2, 3]);
    let b = cpu_array(vec![10.0; 6], &[2, 3]);
    let half = cpu_array(vec![0.5], &[1]);
    let r = lerp(&a, &b, &half).unwrap();
    assert_eq!(r.shape(), [2, 3]);
    assert_eq!(r.device(), Device::Cpu);
    assert_eq!(r.to_vec().unwrap(), [5.0, 5.5, 6.0, 6.5, 7.0, 7.5]);
    // Scalars, in any position.
    assert_eq!(lerp(0.0, &b, 0.25).unwrap().to_vec().unwrap(), [2.5; 6]);
    // All scalars: a 0-d result.
    let r = lerp(1.0f32, 3.0f32, 0.5f32).unwrap();
    assert_eq!((r.shape(), r.to_vec().unwrap()), (&[][..], vec![2.0]));
}

#[test]
fn host_inputs_and_other_result_types() {
    set_default_device(Device::Cpu);
    let ints = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (4 * i + j) as i64);
    let r = fizz(&ints).unwrap();
    assert_eq!(r.shape(), [3, 4]);
    assert_eq!(r.to_vec().unwrap()[..5], [-1.0, 0.5, 1.0, -1.0, 2.0]);
    // A non-contiguous ndarray is read in logical order.
    let r = fizz(&ints.t()).unwrap();
    assert_eq!(r.shape(), [4, 3]);
    assert_eq!(r.to_vec().unwrap()[..3], [-1.0, 2.0, 4.0]);
    // Vec and slice inputs, bool results.
    let xs = vec![0.5f32, 1.5, 2.5];
    assert_eq!(
        above(&xs, 1.0f32).unwrap().to_vec().unwrap(),
        [false, true, true]
    );
    assert_eq!(
        above(&xs[1..], &xs[..1]).unwrap().to_vec().unwrap(),
        [true, true]
    );
}

#[test]
fn mismatched_shapes_are_an_error() {
    let a = cpu_array(vec![1.0; 6], &[2, 3]);
    let b = cpu_array(vec![1.0; 6], &[3, 2]);
    let e = lerp(&a, &b, 0.5f32).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("lerp") && text.contains("[3, 2]") && text.contains("[2, 3]"),
        "{text}"
    );
    let c = cpu_array(vec![1.0; 4], &[4]);
    assert!(matches!(lerp(&a, 1.0f32, &c).unwrap_err(), Error::Shape(_)));
}

#[test]
fn gpu_matches_cpu_on_many_shapes() {
    let Some((gpu, _serial)) = gpu() else { return };
    for shape in [
        vec![1usize],
        vec![7],
        vec![1000],
        vec![33, 65],
        vec![4, 5, 6],
        vec![1 << 20],
    ] {
        let n: usize = shape.iter().product();
        let a: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
        let ag = Array::from_vec_on(a.clone(), &shape[..], &gpu).unwrap();
        let bg = Array::from_vec_on(b.clone(), &shape[..], &gpu).unwrap();
        let g = lerp(&ag, &bg, 0.75f32).unwrap();
        assert_eq!((g.device(), g.shape()), (gpu, &shape[..]));
        let c = lerp(&cpu_array(a, &shape), &cpu_array(b, &shape), 0.75f32).unwrap();
        assert_eq!(g.to_vec().unwrap(), c.to_vec().unwrap(), "shape {shape:?}");

        let ints: Vec<i64> = (0..n as i64).collect();
        let fg = fizz(&Array::from_vec_on(ints.clone(), &shape[..], &gpu).unwrap()).unwrap();
        let fc = fizz(&Array::from_vec_on(ints, &shape[..], &Device::Cpu).unwrap()).unwrap();
        assert_eq!(
            fg.to_vec().unwrap(),
            fc.to_vec().unwrap(),
            "shape {shape:?}"
        );
    }
    let xs = Array::from_vec_on(vec![0.5f32, 1.5, 2.5], 3, &gpu).unwrap();
    assert_eq!(
        above(&xs, 1.0f32).unwrap().to_vec().unwrap(),
        [false, true, true]
    );
}

#[test]
fn gpu_host_inputs_devices_and_empty_arrays() {
    let Some((gpu, _serial)) = gpu() else { return };
    set_default_device(gpu);
    // Host and scalar inputs only: computed on the default device.
    let xs = vec![0.0f32, 4.0];
    let r = lerp(&xs, 8.0f32, 0.5f32).unwrap();
    assert_eq!((r.device(), r.to_vec().unwrap()), (gpu, vec![4.0, 6.0]));
    // A gpukit array and a CPU array do not mix.
    let g = Array::<f32>::ones_on(3, &gpu).unwrap();
    let c = cpu_array(vec![1.0; 3], &[3]);
    assert!(matches!(
        lerp(&g, &c, 0.5f32).unwrap_err(),
        Error::DeviceMismatch(_)
    ));
    // Empty arrays launch nothing.
    let e = Array::<f32>::zeros_on(0, &gpu).unwrap();
    let r = lerp(&e, &e, 0.5f32).unwrap();
    assert_eq!((r.shape(), r.to_vec().unwrap().len()), (&[0usize][..], 0));
}

/// The same through `#[vectorize]` itself.
mod generated {
    use gpukit::prelude::*;

    #[vectorize]
    pub fn smoothstep(x: f32, lo: f32, hi: f32) -> f32 {
        let t = ((x - lo) / (hi - lo)).max(0.0).min(1.0);
        t * t * (3.0 - 2.0 * t)
    }

    #[vectorize]
    pub fn collatz_steps(n: u64) -> u32 {
        let mut n = n;
        let mut steps = 0u32;
        while n > 1 {
            n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
            steps += 1;
        }
        steps
    }
}

#[test]
fn generated_functions_on_both_backends() {
    use generated::*;
    let xs: Vec<f32> = (0..1000).map(|i| i as f32 / 100.0).collect();
    let ns: Vec<u64> = (1..=1000).collect();
    let cpu = smoothstep(&cpu_array(xs.clone(), &[1000]), 2.0, 8.0)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!((cpu[0], cpu[500], cpu[999]), (0.0, 0.5, 1.0));
    let steps_cpu = collatz_steps(&Array::from_vec_on(ns.clone(), 1000, &Device::Cpu).unwrap())
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!((steps_cpu[0], steps_cpu[26]), (0, 111));
    let Some((gpu, _serial)) = gpu() else { return };
    let g = smoothstep(&Array::from_vec_on(xs, 1000, &gpu).unwrap(), 2.0, 8.0).unwrap();
    assert_eq!(g.device(), gpu);
    for (a, b) in g.to_vec().unwrap().iter().zip(&cpu) {
        assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
    }
    let steps_gpu = collatz_steps(&Array::from_vec_on(ns, 1000, &gpu).unwrap())
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(steps_gpu, steps_cpu);
}
