use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn opts(test_size: TestSize, stratify: bool) -> SplitOptions {
    SplitOptions {
        test_size,
        random_state: 7,
        stratify,
        shuffle: true,
    }
}

#[test]
fn rows_are_split_disjointly_and_with_their_labels() {
    let cpu = Device::Cpu;
    let n = 101;
    let x = Array::<f64>::arange_on(0.0, (n * 3) as f64, &cpu)
        .unwrap()
        .into_shape([n, 3])
        .unwrap();
    let y = Array::<i64>::arange_on(0, n as i64, &cpu).unwrap();
    let (xtr, xte, ytr, yte) =
        train_test_split(&x, &y, opts(TestSize::Fraction(0.2), false)).unwrap();
    assert_eq!(xte.shape(), &[21, 3]); // ceil(0.2 · 101)
    assert_eq!(xtr.shape(), &[80, 3]);
    let (ytr, yte) = (ytr.to_vec().unwrap(), yte.to_vec().unwrap());
    let mut all: Vec<i64> = ytr.iter().chain(&yte).copied().collect();
    all.sort();
    assert_eq!(all, (0..n as i64).collect::<Vec<_>>());
    // each row travelled with its label
    let xtr = xtr.to_vec().unwrap();
    for (i, &label) in ytr.iter().enumerate() {
        assert_eq!(xtr[i * 3], (label * 3) as f64);
    }
    // seeded: the same again, another seed differs
    let again = train_test_split(&x, &y, opts(TestSize::Fraction(0.2), false)).unwrap();
    assert_eq!(again.3.to_vec().unwrap(), yte);
    let mut o = opts(TestSize::Fraction(0.2), false);
    o.random_state = 8;
    assert_ne!(
        train_test_split(&x, &y, o).unwrap().3.to_vec().unwrap(),
        yte
    );
    // no shuffle: the last rows
    o.shuffle = false;
    let (_, _, _, last) = train_test_split(&x, &y, o).unwrap();
    assert_eq!(last.to_vec().unwrap(), (80..101).collect::<Vec<i64>>());
}

#[test]
fn stratified_splits_keep_class_ratios_within_one_row() {
    let mut r = StdRng::seed_from_u64(11);
    for trial in 0..40 {
        let n = r.random_range(20..600);
        let n_classes = r.random_range(2..6);
        // skewed class sizes, each at least 2
        let mut labels: Vec<i64> = (0..n)
            .map(|_| {
                let u: f64 = r.random();
                ((u * u) * n_classes as f64) as i64 * 10 - 3
            })
            .collect();
        for c in 0..n_classes as i64 {
            labels[(2 * c) as usize] = c * 10 - 3;
            labels[(2 * c + 1) as usize] = c * 10 - 3;
        }
        let size = if trial % 2 == 0 {
            TestSize::Fraction(r.random_range(0.1..0.5))
        } else {
            TestSize::Count(r.random_range(n_classes..n / 2))
        };
        let keys: Vec<f64> = labels.iter().map(|&l| l as f64).collect();
        let (train, test) = split_indices(n, Some(&keys), opts(size, true)).unwrap();
        let t = test.len();
        assert_eq!(train.len() + t, n);
        let mut seen: Vec<i64> = train.iter().chain(&test).copied().collect();
        seen.sort();
        assert_eq!(seen, (0..n as i64).collect::<Vec<_>>());
        let mut classes = labels.clone();
        classes.sort();
        classes.dedup();
        for c in classes {
            let total = labels.iter().filter(|&&l| l == c).count() as f64;
            let in_test = test.iter().filter(|&&i| labels[i as usize] == c).count() as f64;
            let exact = total * t as f64 / n as f64;
            assert!(
                (in_test - exact).abs() < 1.0,
                "class {c}: {in_test} test rows, exact share {exact} (n {n}, t {t})"
            );
        }
    }
}

#[test]
fn stratified_counts_add_up() {
    assert_eq!(stratified_counts(&[500, 268], 768, 154), vec![100, 54]);
    let c = stratified_counts(&[3, 3, 3], 9, 4);
    assert_eq!(c.iter().sum::<usize>(), 4);
    assert_eq!(c, vec![2, 1, 1]); // equal remainders: the first class in label order
}

#[test]
fn bad_splits_are_errors() {
    let cpu = Device::Cpu;
    let x = Array::<f64>::zeros_on([4, 2], &cpu).unwrap();
    let y = Array::from_vec_on(vec![0i64, 0, 1, 2], 4, &cpu).unwrap();
    let short = Array::from_vec_on(vec![0i64, 1, 2], 3, &cpu).unwrap();
    let e = train_test_split(&x, &short, opts(TestSize::Fraction(0.5), false)).unwrap_err();
    assert!(e.to_string().contains("4 rows"), "{e}");
    for bad in [
        TestSize::Fraction(0.0),
        TestSize::Fraction(1.0),
        TestSize::Count(0),
        TestSize::Count(4),
    ] {
        let e = train_test_split(&x, &y, opts(bad, false)).unwrap_err();
        assert!(e.to_string().contains("test_size"), "{e}");
    }
    let e = train_test_split(&x, &y, opts(TestSize::Count(2), true)).unwrap_err();
    assert!(e.to_string().contains("only 1 row"), "{e}");
    let mut o = opts(TestSize::Count(2), true);
    o.shuffle = false;
    assert!(train_test_split(&x, &y, o)
        .unwrap_err()
        .to_string()
        .contains("shuffle"));
}
