//! Array behaviour on the CPU backend: constructors, transfers, arithmetic, math, reductions,
//! conversions and display. (The CUDA backend is compared with these results in `array_gpu.rs`.)

use gpukit::{Array, DType, Device, Error};

fn cpu() -> Device {
    Device::cpu()
}

#[test]
fn constructors_have_shape_dtype_device() {
    let z = Array::<f64>::zeros_on([2, 3], &cpu()).unwrap();
    assert_eq!(z.shape(), &[2, 3]);
    assert_eq!((z.ndim(), z.size(), z.len(), z.nbytes()), (2, 6, 2, 48));
    assert_eq!(z.dtype(), DType::F64);
    assert_eq!(z.device(), Device::Cpu);
    assert_eq!(z.to_vec().unwrap(), vec![0.0; 6]);
    assert_eq!(
        Array::<i32>::ones_on(4, &cpu()).unwrap().to_vec().unwrap(),
        vec![1; 4]
    );
    assert_eq!(
        Array::<bool>::ones_on((1, 2), &cpu())
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![true; 2]
    );
    assert_eq!(
        Array::full_on(3, 7u8, &cpu()).unwrap().to_vec().unwrap(),
        vec![7u8; 3]
    );
    let like = Array::<f32>::zeros_like(&z).unwrap();
    assert_eq!(
        (like.shape(), like.device()),
        (&[2usize, 3][..], Device::Cpu)
    );
    assert_eq!(
        Array::<u64>::ones_like(&z).unwrap().to_vec().unwrap(),
        vec![1u64; 6]
    );
    let empty = Array::<f32>::zeros_on([0, 4], &cpu()).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.to_host().unwrap().shape(), &[0, 4]);
    let scalar = Array::<f64>::full_on((), 2.5, &cpu()).unwrap();
    assert_eq!((scalar.ndim(), scalar.size()), (0, 1));
}

#[test]
fn the_design_tour_runs_on_the_default_device() {
    let data = Array::arange(0i64, 10).unwrap();
    assert_eq!(data.to_vec().unwrap(), (0..10).collect::<Vec<i64>>());
    let out = Array::<f64>::zeros(10).unwrap();
    assert_eq!(out.shape(), &[10]);
    assert_eq!(data.device(), gpukit::default_device());
}

#[test]
fn impossible_sizes_are_errors_not_aborts() {
    let e = Array::<f64>::zeros_on(1usize << 60, &cpu()).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    assert!(e.to_string().contains("cpu"), "{e}");
    let e = Array::<u8>::zeros_on([usize::MAX, 2], &cpu()).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    assert!(Array::arange_on(0i64, i64::MAX, &cpu()).is_err());
    assert!(Array::linspace_on(0.0f32, 1.0, usize::MAX, &cpu()).is_err());
    // The process carries on.
    assert_eq!(
        Array::<f64>::ones_on(2, &cpu()).unwrap().sum().unwrap(),
        2.0
    );
}

#[test]
fn arange_and_linspace_follow_numpy() {
    let on = |a: Array<i32>| a.to_vec().unwrap();
    assert_eq!(
        on(Array::arange_step_on(10, 0, -3, &cpu()).unwrap()),
        vec![10, 7, 4, 1]
    );
    assert_eq!(
        on(Array::arange_step_on(0, 10, 4, &cpu()).unwrap()),
        vec![0, 4, 8]
    );
    assert_eq!(
        on(Array::arange_on(5, 5, &cpu()).unwrap()),
        Vec::<i32>::new()
    );
    assert_eq!(
        on(Array::arange_on(5, 2, &cpu()).unwrap()),
        Vec::<i32>::new()
    );
    let f = Array::arange_step_on(0.0f64, 1.0, 0.25, &cpu()).unwrap();
    assert_eq!(f.to_vec().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
    assert_eq!(
        Array::arange_step_on(0.0f64, 1.0, 0.1, &cpu())
            .unwrap()
            .size(),
        10
    );
    assert!(matches!(
        Array::arange_step_on(0, 5, 0, &cpu()),
        Err(Error::Other(_))
    ));
    assert!(Array::arange_step_on(0.0, f64::INFINITY, 1.0, &cpu()).is_err());
    let l = Array::linspace_on(0.0f64, 1.0, 5, &cpu()).unwrap();
    assert_eq!(l.to_vec().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    let l = Array::linspace_on(0.0f32, 0.3, 4, &cpu())
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(l[3], 0.3f32, "the end point is exact");
    assert_eq!(
        Array::linspace_on(2.0f64, 3.0, 1, &cpu())
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![2.0]
    );
    assert_eq!(
        Array::linspace_on(2.0f64, 3.0, 0, &cpu()).unwrap().size(),
        0
    );
}

#[test]
fn from_host_data_keeps_shape_and_order() {
    let a = Array::from_vec_on((0..6).collect::<Vec<i64>>(), [2, 3], &cpu()).unwrap();
    let h = a.to_host().unwrap();
    assert_eq!(h.shape(), &[2, 3]);
    assert_eq!(h[[1, 2]], 5);
    let e = Array::from_vec_on(vec![1.0f32; 5], [2, 3], &cpu()).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    assert!(e.to_string().contains("[2, 3]"), "{e}");

    let nd =
        ndarray::Array3::<f32>::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as f32);
    let a = Array::from_ndarray_on(&nd, &cpu()).unwrap();
    assert_eq!(a.shape(), &[2, 3, 4]);
    assert_eq!(a.to_host().unwrap(), nd.into_dyn());
    // A transposed (non-contiguous) view is copied in logical order.
    let m = ndarray::arr2(&[[1u32, 2, 3], [4, 5, 6]]);
    let t = Array::from_ndarray_on(&m.t(), &cpu()).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    assert_eq!(t.to_vec().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    let s = Array::from_slice_on(&[true, false], &cpu()).unwrap();
    assert_eq!(s.to_vec().unwrap(), vec![true, false]);
    let v: Array<u8> = vec![1u8, 2, 3].try_into().unwrap();
    assert_eq!(v.shape(), &[3]);
    let n: Array<f64> = (&ndarray::arr1(&[1.0, 2.0])).try_into().unwrap();
    assert_eq!(n.size(), 2);
}

#[test]
fn reshape_clone_and_transfer() {
    let a = Array::arange_on(0i32, 12, &cpu()).unwrap();
    let b = a.reshape([3, 4]).unwrap();
    assert_eq!(b.shape(), &[3, 4]);
    assert_eq!(b.to_vec().unwrap(), a.to_vec().unwrap());
    let e = a.reshape([5, 2]).unwrap_err();
    assert!(
        e.to_string().contains("[12]") && e.to_string().contains("[5, 2]"),
        "{e}"
    );
    let c = b.try_clone().unwrap().into_shape([2, 2, 3]).unwrap();
    assert_eq!(c.shape(), &[2, 2, 3]);
    let d = c.clone();
    assert_eq!(d.to_vec().unwrap(), c.to_vec().unwrap());
    let moved = c.to_device(&Device::Cpu).unwrap();
    assert_eq!(moved.to_vec().unwrap(), d.to_vec().unwrap());
    if gpukit::cuda_device_count() == 0 {
        let e = Device::cuda(0).unwrap_err();
        assert!(matches!(e, Error::NoGpu(_)), "{e}");
        assert!(Array::<f32>::zeros_on(3, &Device::Cuda(0)).is_err());
    }
}

#[test]
fn arithmetic_operators() {
    let a = Array::from_vec_on(vec![1.0f64, 2.0, 3.0, 4.0], [2, 2], &cpu()).unwrap();
    let b = Array::from_vec_on(vec![0.5f64, 0.25, 2.0, -1.0], [2, 2], &cpu()).unwrap();
    let v = |r: gpukit::Result<Array<f64>>| r.unwrap().to_vec().unwrap();
    assert_eq!(v(&a + &b), vec![1.5, 2.25, 5.0, 3.0]);
    assert_eq!(v(&a - &b), vec![0.5, 1.75, 1.0, 5.0]);
    assert_eq!(v(&a * &b), vec![0.5, 0.5, 6.0, -4.0]);
    assert_eq!(v(&a / &b), vec![2.0, 8.0, 1.5, -4.0]);
    assert_eq!(v(&a % &b), vec![0.0, 0.0, 1.0, 0.0]);
    assert_eq!(v(&a * 2.0), vec![2.0, 4.0, 6.0, 8.0]);
    assert_eq!(v(2.0 * &a), vec![2.0, 4.0, 6.0, 8.0]);
    assert_eq!(v(10.0 - &a), vec![9.0, 8.0, 7.0, 6.0]);
    assert_eq!(v(&a - 10.0), vec![-9.0, -8.0, -7.0, -6.0]);
    assert_eq!(v(12.0 / &a), vec![12.0, 6.0, 4.0, 3.0]);
    assert_eq!(v(-&a), vec![-1.0, -2.0, -3.0, -4.0]);
    // Chaining: Result operands next to arrays, `?` before a scalar step.
    assert_eq!(v((&a + &b) * &a), vec![1.5, 4.5, 15.0, 12.0]);
    assert_eq!(v(&a * (&a + &b)), vec![1.5, 4.5, 15.0, 12.0]);
    let chained = || -> gpukit::Result<Array<f64>> { (&a + &b)? * 2.0 };
    assert_eq!(v(chained()), vec![3.0, 4.5, 10.0, 6.0]);
    // By value reuses the left buffer.
    assert_eq!(v(a.clone() + &b), vec![1.5, 2.25, 5.0, 3.0]);
    assert_eq!(v(a.clone() * 3.0), vec![3.0, 6.0, 9.0, 12.0]);
    assert_eq!(v(3.0 * a.clone()), vec![3.0, 6.0, 9.0, 12.0]);
    let ints = Array::from_vec_on(vec![7i32, -7, 9, i32::MIN], 4, &cpu()).unwrap();
    assert_eq!(
        (&ints / 2).unwrap().to_vec().unwrap(),
        vec![3, -3, 4, i32::MIN / 2]
    );
    assert_eq!((&ints % 3).unwrap().to_vec().unwrap(), vec![1, -1, 0, -2]);
    assert_eq!(
        (&ints / 0).unwrap().to_vec().unwrap(),
        vec![0; 4],
        "x / 0 gives 0"
    );
    assert_eq!(
        (&ints / -1).unwrap().to_vec().unwrap(),
        vec![-7, 7, -9, i32::MIN]
    );
    let bytes = Array::from_slice_on(&[250u8, 3], &cpu()).unwrap();
    assert_eq!(
        (&bytes + 10).unwrap().to_vec().unwrap(),
        vec![4, 13],
        "u8 wraps"
    );
    assert_eq!((1u8 - &bytes).unwrap().to_vec().unwrap(), vec![7, 254]);
}

#[test]
fn shape_mismatch_names_both_shapes() {
    let a = Array::<f32>::zeros_on([2, 3], &cpu()).unwrap();
    let b = Array::<f32>::zeros_on([3, 2], &cpu()).unwrap();
    let e = (&a + &b).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("[2, 3]") && msg.contains("[3, 2]") && msg.contains('+'),
        "{msg}"
    );
    let mut c = a.clone();
    let e = c.mul_in_place(&b).unwrap_err();
    assert!(e.to_string().contains("*="), "{e}");
}

#[test]
fn in_place_operators() {
    let mut a = Array::arange_on(0.0f64, 4.0, &cpu()).unwrap();
    let b = Array::full_on(4, 2.0f64, &cpu()).unwrap();
    a *= 5.0;
    assert_eq!(a.to_vec().unwrap(), vec![0.0, 5.0, 10.0, 15.0]);
    a += &b;
    assert_eq!(a.to_vec().unwrap(), vec![2.0, 7.0, 12.0, 17.0]);
    a *= &b;
    a -= 1.0;
    a /= b.clone();
    assert_eq!(a.to_vec().unwrap(), vec![1.5, 6.5, 11.5, 16.5]);
    a %= 4.0;
    assert_eq!(a.to_vec().unwrap(), vec![1.5, 2.5, 3.5, 0.5]);
    a.add_in_place(1.0).unwrap();
    a.sub_in_place(&b).unwrap();
    a.div_in_place(0.5).unwrap();
    a.rem_in_place(3.0).unwrap();
    assert_eq!(
        a.to_vec().unwrap(),
        vec![1.0, 0.0, 2.0, -1.0],
        "% keeps the sign of the left side"
    );
}

#[test]
fn math_functions_match_std() {
    let xs: Vec<f64> = (1..200).map(|i| i as f64 * 0.37 - 20.0).collect();
    let a = Array::from_vec_on(xs.clone(), xs.len(), &cpu()).unwrap();
    let pos = a.abs().unwrap();
    let check = |got: Array<f64>, f: &dyn Fn(f64) -> f64, from: &[f64]| {
        for (g, x) in got.to_vec().unwrap().into_iter().zip(from) {
            let want = f(*x);
            assert!(
                g == want || (g.is_nan() && want.is_nan()),
                "{x}: {g} != {want}"
            );
        }
    };
    let absx: Vec<f64> = xs.iter().map(|x| x.abs()).collect();
    check(pos.sqrt().unwrap(), &|x| x.sqrt(), &absx);
    check(pos.ln().unwrap(), &|x| x.ln(), &absx);
    check(pos.log().unwrap(), &|x| x.ln(), &absx);
    check(a.exp().unwrap(), &|x| x.exp(), &xs);
    check(a.sin().unwrap(), &|x| x.sin(), &xs);
    check(a.cos().unwrap(), &|x| x.cos(), &xs);
    check(a.tanh().unwrap(), &|x| x.tanh(), &xs);
    check(pos.powf(1.5).unwrap(), &|x| x.powf(1.5), &absx);
    check(a.neg().unwrap(), &|x| -x, &xs);
    let i = Array::from_slice_on(&[-3i64, 4, i64::MIN], &cpu()).unwrap();
    assert_eq!(i.abs().unwrap().to_vec().unwrap(), vec![3, 4, i64::MIN]);
}

#[test]
fn comparisons_give_bool_arrays() {
    let a = Array::from_slice_on(&[1.0f32, 2.0, f32::NAN, 4.0], &cpu()).unwrap();
    let b = Array::from_slice_on(&[1.0f32, 3.0, f32::NAN, 0.0], &cpu()).unwrap();
    let v = |r: gpukit::Result<Array<bool>>| r.unwrap().to_vec().unwrap();
    assert_eq!(v(a.eq(&b)), vec![true, false, false, false]);
    assert_eq!(v(a.ne(&b)), vec![false, true, true, true]);
    assert_eq!(v(a.lt(&b)), vec![false, true, false, false]);
    assert_eq!(v(a.le(2.0)), vec![true, true, false, false]);
    assert_eq!(v(a.gt(2.0)), vec![false, false, false, true]);
    assert_eq!(v(a.ge(&b)), vec![true, false, false, true]);
    let mask = a.gt(1.5).unwrap();
    assert_eq!(mask.dtype(), DType::Bool);
    assert_eq!(v(mask.eq(true)), vec![false, true, false, true]);
    let c = Array::<f32>::zeros_on(3, &cpu()).unwrap();
    assert!(matches!(a.lt(&c), Err(Error::Shape(_))));
}

#[test]
fn reductions() {
    let a = Array::arange_on(1i64, 101, &cpu()).unwrap();
    assert_eq!(a.sum().unwrap(), 5050);
    assert_eq!(a.min().unwrap(), 1);
    assert_eq!(a.max().unwrap(), 100);
    let f = Array::linspace_on(0.0f64, 1.0, 101, &cpu()).unwrap();
    assert!((f.mean().unwrap() - 0.5).abs() < 1e-12);
    assert!((f.sum().unwrap() - 50.5).abs() < 1e-9);
    let big = Array::<f32>::ones_on(1 << 20, &cpu()).unwrap();
    assert_eq!(big.sum().unwrap(), (1 << 20) as f32);
    let nan = Array::from_slice_on(&[1.0f64, f64::NAN, 3.0], &cpu()).unwrap();
    assert!(nan.max().unwrap().is_nan() && nan.min().unwrap().is_nan());
    let empty = Array::<f64>::zeros_on(0, &cpu()).unwrap();
    assert_eq!(empty.sum().unwrap(), 0.0);
    assert!(empty.mean().unwrap().is_nan());
    assert!(matches!(empty.max(), Err(Error::Shape(_))));
    let wrap = Array::from_slice_on(&[200u8, 100], &cpu()).unwrap();
    assert_eq!(wrap.sum().unwrap(), 44, "integer sums wrap in their type");
}

#[test]
fn fill_item_and_count_nonzero() {
    let mut a = Array::<i32>::zeros_on([2, 2], &cpu()).unwrap();
    a.fill(3).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![3; 4]);
    assert!(matches!(a.item(), Err(Error::Shape(_))));
    assert_eq!(
        Array::full_on((), 2.5f32, &cpu()).unwrap().item().unwrap(),
        2.5
    );
    assert_eq!(
        Array::from_slice_on(&[7u8], &cpu())
            .unwrap()
            .item()
            .unwrap(),
        7
    );
    let v = Array::from_slice_on(&[0.0f64, 1.5, -0.0, f64::NAN, 2.0], &cpu()).unwrap();
    assert_eq!(v.count_nonzero().unwrap(), 3);
    let mask = v.gt(1.0).unwrap();
    assert_eq!(mask.count_nonzero().unwrap(), 2);
}

#[test]
fn astype_follows_rust_as() {
    let f = Array::from_slice_on(&[-1.7f64, 0.0, 2.9, 300.0, f64::NAN, 1e20], &cpu()).unwrap();
    assert_eq!(
        f.astype::<i32>().unwrap().to_vec().unwrap(),
        vec![-1, 0, 2, 300, 0, i32::MAX]
    );
    assert_eq!(
        f.astype::<u8>().unwrap().to_vec().unwrap(),
        vec![0, 0, 2, 255, 0, 255]
    );
    assert_eq!(
        f.astype::<bool>().unwrap().to_vec().unwrap(),
        vec![true, false, true, true, true, true]
    );
    let i = Array::from_slice_on(&[-1i64, 256, 3], &cpu()).unwrap();
    assert_eq!(i.astype::<u8>().unwrap().to_vec().unwrap(), vec![255, 0, 3]);
    assert_eq!(
        i.astype::<f32>().unwrap().to_vec().unwrap(),
        vec![-1.0, 256.0, 3.0]
    );
    let b = Array::from_slice_on(&[true, false], &cpu()).unwrap();
    assert_eq!(b.astype::<f64>().unwrap().to_vec().unwrap(), vec![1.0, 0.0]);
    assert_eq!(b.astype::<f64>().unwrap().shape(), b.shape());
}

#[test]
fn display_like_cupy() {
    let a = Array::arange_on(0.0f64, 3.0, &cpu()).unwrap();
    assert_eq!(
        a.to_string(),
        "array([0., 1., 2.], dtype=float64, device=cpu)"
    );
    assert_eq!(format!("{a:?}"), a.to_string());
    let m = Array::from_vec_on(vec![1i32, 2, 3, 4], [2, 2], &cpu()).unwrap();
    assert_eq!(
        m.to_string(),
        "array([[1, 2],\n       [3, 4]], dtype=int32, device=cpu)"
    );
    let big = Array::arange_on(0u32, 5000, &cpu()).unwrap();
    assert_eq!(
        big.to_string(),
        "array([   0,    1,    2, ..., 4997, 4998, 4999], dtype=uint32, device=cpu)"
    );
    let b = Array::from_slice_on(&[true, false], &cpu()).unwrap();
    assert_eq!(b.repr(), "array([ True, False], dtype=bool, device=cpu)");
}

#[test]
fn memory_stats_count_live_arrays() {
    let before = gpukit::memory_stats(&Device::Cpu);
    let a = Array::<f64>::zeros_on(1 << 16, &cpu()).unwrap();
    let during = gpukit::memory_stats(&Device::Cpu);
    assert!(during.peak_bytes >= a.nbytes());
    assert!(during.bytes >= a.nbytes());
    assert_eq!(during.device, Device::Cpu);
    drop(a);
    let _ = before;
    assert!(gpukit::memory_stats(&Device::Cpu)
        .to_string()
        .starts_with("cpu: "));
}

#[test]
fn properties_of_the_cpu() {
    match Device::Cpu.properties().unwrap() {
        gpukit::DeviceProperties::Cpu(p) => {
            assert!(p.cores >= 1);
            assert!(p.total_memory > 0);
        }
        other => panic!("expected CPU properties, got {other:?}"),
    }
}
