//! The companions of the models on the first CUDA device against the CPU backend:
//! `train_test_split` (the same rows: the permutation is drawn on the host), `StandardScaler`,
//! the metrics, and the datasets (the diabetes table is the same on both; the synthetic sets are
//! drawn by each backend's generator, so only their shapes and label ranges are compared).
//!
//! Every test skips visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fails there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing).

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device};
use gpukit_ml::datasets::{diabetes_on, make_classification_on};
use gpukit_ml::metrics::{accuracy_score, confusion_matrix, r2_score};
use gpukit_ml::model_selection::{train_test_split, SplitOptions, TestSize};
use gpukit_ml::neighbors::KNeighborsClassifier;
use gpukit_ml::preprocessing::StandardScaler;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn the_lesson_pipeline_equals_the_cpu_backend() {
    let Some((dev, _lock)) = gpu() else { return };
    let run = |device: &Device| {
        let (x, y) = diabetes_on(0, device).unwrap();
        let opts = SplitOptions {
            test_size: TestSize::Fraction(0.2),
            random_state: 1,
            stratify: true,
            shuffle: true,
        };
        let (xtr, xte, ytr, yte) = train_test_split(&x, &y, opts).unwrap();
        let mut sc = StandardScaler::new();
        let xtr = sc.fit_transform(&xtr).unwrap();
        let xte = sc.transform(&xte).unwrap();
        let mut knn = KNeighborsClassifier::new(3);
        knn.fit(&xtr, &ytr).unwrap();
        let pred = knn.predict(&xte).unwrap();
        let acc = accuracy_score(&yte, &pred).unwrap();
        let (cm, labels) = confusion_matrix(&yte, &pred).unwrap();
        (
            x.to_vec().unwrap(),
            yte.to_vec().unwrap(),
            xte.to_vec().unwrap(),
            pred.to_vec().unwrap(),
            acc,
            cm.to_vec().unwrap(),
            labels,
        )
    };
    let (cx, cy, cxt, cp, ca, ccm, cl) = run(&Device::Cpu);
    let (gx, gy, gxt, gp, ga, gcm, gl) = run(&dev);
    assert_eq!(cx, gx, "the diabetes table");
    assert_eq!(cy, gy, "the split");
    for (a, b) in cxt.iter().zip(&gxt) {
        assert!((a - b).abs() < 1e-12, "scaled {a} vs {b}");
    }
    assert_eq!((cp, ca, ccm, cl), (gp, ga, gcm, gl));
    println!("lesson pipeline: accuracy {ga:.3} on the GPU and the CPU backend");
}

#[test]
fn metrics_and_synthetic_sets_on_the_gpu() {
    let Some((dev, _lock)) = gpu() else { return };
    let mut r = StdRng::seed_from_u64(3);
    let n = 200_000;
    let t: Vec<i64> = (0..n).map(|_| r.random_range(-4..5)).collect();
    let p: Vec<i64> = (0..n).map(|_| r.random_range(-3..7)).collect();
    let on = |v: &Vec<i64>, d: &Device| Array::from_vec_on(v.clone(), n, d).unwrap();
    let cpu = Device::Cpu;
    assert_eq!(
        accuracy_score(&on(&t, &dev), &on(&p, &dev)).unwrap(),
        accuracy_score(&on(&t, &cpu), &on(&p, &cpu)).unwrap()
    );
    let (gcm, gl) = confusion_matrix(&on(&t, &dev), &on(&p, &dev)).unwrap();
    let (ccm, cl) = confusion_matrix(&on(&t, &cpu), &on(&p, &cpu)).unwrap();
    assert_eq!((gcm.to_vec().unwrap(), gl), (ccm.to_vec().unwrap(), cl));
    let a: Vec<f64> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f64> = a.iter().map(|v| v + r.random_range(-0.1..0.1)).collect();
    let f = |v: &Vec<f64>, d: &Device| Array::from_vec_on(v.clone(), n, d).unwrap();
    let (g, c) = (
        r2_score(&f(&a, &dev), &f(&b, &dev)).unwrap(),
        r2_score(&f(&a, &cpu), &f(&b, &cpu)).unwrap(),
    );
    assert!((g - c).abs() < 1e-9, "{g} vs {c}");

    let (x, y) = make_classification_on::<f32>(1_000_000, 64, 10, 42, &dev).unwrap();
    assert_eq!(
        (x.shape(), y.shape()),
        (&[1_000_000, 64][..], &[1_000_000][..])
    );
    // the CPU side runs in the test's debug build: split 200 000 rows of 16 features
    let x = x
        .slice(gpukit::s![..200_000, ..16])
        .unwrap()
        .copy()
        .unwrap();
    let y = y.slice(gpukit::s![..200_000]).unwrap().copy().unwrap();
    assert_eq!((y.min().unwrap(), y.max().unwrap()), (0, 9));
    assert!(x.isfinite().unwrap().all().unwrap());
    // a split on the device: the same rows as on the CPU backend
    let (xc, yc) = (x.to_device(&cpu).unwrap(), y.to_device(&cpu).unwrap());
    let opts = SplitOptions {
        test_size: TestSize::Count(1000),
        random_state: 5,
        stratify: true,
        shuffle: true,
    };
    let (_, gte, _, gyte) = train_test_split(&x, &y, opts).unwrap();
    let (_, cte, _, cyte) = train_test_split(&xc, &yc, opts).unwrap();
    assert_eq!(gyte.to_vec().unwrap(), cyte.to_vec().unwrap());
    assert_eq!(gte.to_vec().unwrap(), cte.to_vec().unwrap());
}
