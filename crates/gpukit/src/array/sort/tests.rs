//! Sorting on the CPU backend: unit tests, key order, axes, errors, and property tests over
//! random rows (NaN, duplicates, -0.0, empty and one-element rows) for every numeric dtype.
//! The GPU side is compared with this one in `tests/sort_gpu.rs`.

use super::keys::{key, numpy_le, unkey};
use crate::device::Device;
use crate::element::Numeric;
use crate::error::Error;
use crate::Array;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn cpu<T: Numeric>(v: Vec<T>, shape: &[usize]) -> Array<T> {
    Array::from_vec_on(v, shape.to_vec(), &Device::Cpu).unwrap()
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[test]
fn sorts_rows_of_floats_with_nan_last() {
    let nan = f64::NAN;
    let a = cpu(
        vec![3.0, nan, -1.0, 2.0, 0.5, 1.0, -nan, -f64::INFINITY],
        &[2, 4],
    );
    let s = a.sort().unwrap();
    assert_eq!(s.shape(), &[2, 4]);
    assert!(same_bits(
        &s.to_vec().unwrap(),
        &[-1.0, 2.0, 3.0, nan, -f64::INFINITY, 0.5, 1.0, nan]
    ));
    assert_eq!(
        a.argsort().unwrap().to_vec().unwrap(),
        [2, 3, 0, 1, 3, 0, 1, 2]
    );
}

#[test]
fn negative_zero_ties_in_argsort_and_sorts_first_in_sort() {
    let a = cpu(vec![0.0f32, -0.0, 0.0, -1.0, -0.0], &[5]);
    let s = a.sort().unwrap().to_vec().unwrap();
    let bits: Vec<u32> = s.iter().map(|x| x.to_bits()).collect();
    let want: Vec<u32> = [-1.0f32, -0.0, -0.0, 0.0, 0.0]
        .iter()
        .map(|x| x.to_bits())
        .collect();
    assert_eq!(bits, want);
    // stable: the zeros keep their order whatever their sign
    assert_eq!(a.argsort().unwrap().to_vec().unwrap(), [3, 0, 1, 2, 4]);
}

#[test]
fn integers_sort_by_value_at_their_extremes() {
    let a = cpu(vec![i64::MAX, -1, i64::MIN, 0, 1], &[5]);
    assert_eq!(
        a.sort().unwrap().to_vec().unwrap(),
        [i64::MIN, -1, 0, 1, i64::MAX]
    );
    let u = cpu(vec![u64::MAX, 0, 1 << 63, 5], &[4]);
    assert_eq!(
        u.sort().unwrap().to_vec().unwrap(),
        [0, 5, 1 << 63, u64::MAX]
    );
    assert_eq!(u.argsort().unwrap().to_vec().unwrap(), [1, 3, 2, 0]);
    let b = cpu(vec![200u8, 3, 255, 0], &[2, 2]);
    assert_eq!(b.sort().unwrap().to_vec().unwrap(), [3, 200, 0, 255]);
    let i = cpu(vec![i32::MIN, i32::MAX, -7, 7], &[4]);
    assert_eq!(i.argsort().unwrap().to_vec().unwrap(), [0, 2, 3, 1]);
    let w = cpu(vec![u32::MAX, 0], &[2]);
    assert_eq!(w.sort().unwrap().to_vec().unwrap(), [0, u32::MAX]);
}

#[test]
fn keys_order_like_numpy_and_come_back() {
    let vals = [
        f64::NEG_INFINITY,
        -1e300,
        -1.0,
        -f64::MIN_POSITIVE,
        -0.0,
        0.0,
        5e-324,
        1.0,
        f64::MAX,
        f64::INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    for &a in &vals {
        let back: f64 = unkey(key(a, false));
        assert!(
            back.to_bits() == a.to_bits() || (a.is_nan() && back.is_nan()),
            "{a}"
        );
        for &b in &vals {
            if a == b || (a.is_nan() && b.is_nan()) {
                assert_eq!(key(a, true), key(b, true), "{a} {b} tie");
            } else {
                assert_eq!(numpy_le(a, b), key(a, true) < key(b, true), "{a} {b}");
            }
        }
    }
    for x in [i32::MIN, -1, 0, 1, i32::MAX] {
        assert_eq!(unkey::<i32>(key(x, false)), x);
        assert!(key(x, false) <= key(i32::MAX, false));
    }
}

#[test]
fn sorts_along_any_axis() {
    // shape (2, 3, 2): element (i, j, k) = v[6i + 2j + k]
    let v: Vec<i32> = vec![5, 0, 1, 9, 3, 4, 8, 2, 7, 6, 2, 1];
    let a = cpu(v.clone(), &[2, 3, 2]);
    let s1 = a.sort_axis(1).unwrap();
    assert_eq!(s1.shape(), &[2, 3, 2]);
    assert_eq!(s1.to_vec().unwrap(), [1, 0, 3, 4, 5, 9, 2, 1, 7, 2, 8, 6]);
    assert_eq!(
        a.argsort_axis(1).unwrap().to_vec().unwrap(),
        [1, 0, 2, 2, 0, 1, 2, 2, 1, 0, 0, 1]
    );
    let s0 = a.sort_axis(0).unwrap().to_vec().unwrap();
    assert_eq!(s0, [5, 0, 1, 6, 2, 1, 8, 2, 7, 9, 3, 4]);
    assert_eq!(a.sort_axis(-3).unwrap().to_vec().unwrap(), s0);
    assert_eq!(
        a.sort_axis(2).unwrap().to_vec().unwrap(),
        a.sort().unwrap().to_vec().unwrap()
    );
    assert_eq!(
        a.argsort_axis(-1).unwrap().to_vec().unwrap(),
        a.argsort().unwrap().to_vec().unwrap()
    );
}

#[test]
fn empty_and_one_element_shapes() {
    for shape in [
        vec![0],
        vec![3, 0],
        vec![0, 4],
        vec![2, 0, 3],
        vec![1],
        vec![1, 1],
        vec![4, 1],
    ] {
        let n: usize = shape.iter().product();
        let a = cpu((0..n).map(|i| (n - i) as f32).collect(), &shape);
        for axis in 0..shape.len() as isize {
            let s = a.sort_axis(axis).unwrap();
            assert_eq!(s.shape(), &shape[..]);
            let i = a.argsort_axis(axis).unwrap();
            assert_eq!(i.shape(), &shape[..]);
            if shape[axis as usize] == 1 {
                assert_eq!(s.to_vec().unwrap(), a.to_vec().unwrap());
                assert!(i.to_vec().unwrap().iter().all(|&x| x == 0));
            }
        }
    }
}

#[test]
fn bad_axes_name_the_axis_and_the_shape() {
    let a = cpu(vec![1.0f64; 6], &[2, 3]);
    for axis in [2isize, -3, 100] {
        let e = a.sort_axis(axis).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Shape(_)), "{msg}");
        assert!(
            msg.contains(&format!("axis {axis}")) && msg.contains("[2, 3]"),
            "{msg}"
        );
        let e = a.argsort_axis(axis).unwrap_err().to_string();
        assert!(e.contains("argsort") && e.contains("[2, 3]"), "{e}");
    }
    let scalar = cpu(vec![1.0f64], &[]);
    let e = scalar.sort().unwrap_err().to_string();
    assert!(e.contains("0-d") && e.contains("[]"), "{e}");
    assert!(scalar.argsort().is_err());
}

/// A random value for the property tests: duplicates, NaN, signed zeros and extremes are
/// frequent.
trait Pick: Numeric + PartialOrd + std::fmt::Debug {
    fn pick(rng: &mut StdRng) -> Self;
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! pick_int {
    ($($t:ty),*) => {$(
        impl Pick for $t {
            fn pick(rng: &mut StdRng) -> $t {
                match rng.random_range(0..10) {
                    0 => <$t>::MAX,
                    1 => <$t>::MIN,
                    2..=5 => rng.random_range(0..4) as $t,
                    _ => rng.random(),
                }
            }
            fn same(a: $t, b: $t) -> bool { a == b }
        }
    )*};
}
pick_int!(u8, i32, i64, u32, u64);

macro_rules! pick_float {
    ($($t:ty),*) => {$(
        impl Pick for $t {
            fn pick(rng: &mut StdRng) -> $t {
                match rng.random_range(0..12) {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => 0.0,
                    3 => -0.0,
                    4 => <$t>::INFINITY,
                    5 => <$t>::NEG_INFINITY,
                    6..=7 => rng.random_range(-3..3) as $t,
                    _ => rng.random_range(-1e6..1e6),
                }
            }
            fn same(a: $t, b: $t) -> bool {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
        }
    )*};
}
pick_float!(f32, f64);

/// The properties of one sorted row: ordered as NumPy orders, the same multiset as the input,
/// and the argsort a stable permutation that gathers the input to the sorted row.
fn check_row<T: Pick>(input: &[T], sorted: &[T], idx: &[i64]) {
    let n = input.len();
    assert_eq!(sorted.len(), n);
    assert_eq!(idx.len(), n);
    for w in sorted.windows(2) {
        assert!(numpy_le(w[0], w[1]), "not sorted: {:?}", sorted);
    }
    let mut seen = vec![false; n];
    for (p, &i) in idx.iter().enumerate() {
        let i = usize::try_from(i).expect("index >= 0");
        assert!(i < n && !seen[i], "not a permutation: {idx:?}");
        seen[i] = true;
        let g = input[i];
        // the gathered element equals the sorted one (NumPy equality: NaN with NaN, -0 with 0)
        let s = sorted[p];
        assert!(
            numpy_le(g, s) && numpy_le(s, g),
            "gather {p}: {g:?} vs {s:?}"
        );
        if p > 0 {
            let (a, b) = (input[idx[p - 1] as usize], g);
            let tie = numpy_le(a, b) && numpy_le(b, a);
            assert!(!tie || idx[p - 1] < idx[p], "unstable at {p}: {idx:?}");
        }
    }
    // the same multiset: the sorted keys of the input are the keys of the result
    let mut want: Vec<u64> = input.iter().map(|&x| key(x, true)).collect();
    want.sort_unstable();
    let got: Vec<u64> = sorted.iter().map(|&x| key(x, true)).collect();
    assert_eq!(want, got);
    // -0.0 comes back with its sign: the bits of the result are those of the input, as a
    // multiset, NaN aside
    let mut a: Vec<u64> = input.iter().map(|&x| key(x, false)).collect();
    let mut b: Vec<u64> = sorted.iter().map(|&x| key(x, false)).collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

fn property<T: Pick>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for case in 0..60 {
        let rows = rng.random_range(0..6usize);
        let len = match case % 5 {
            0 => 0,
            1 => 1,
            2 => rng.random_range(2..9),
            _ => rng.random_range(0..300),
        };
        let v: Vec<T> = (0..rows * len).map(|_| T::pick(&mut rng)).collect();
        let a = cpu(v.clone(), &[rows, len]);
        let s = a.sort().unwrap().to_vec().unwrap();
        let i = a.argsort().unwrap().to_vec().unwrap();
        for r in 0..rows {
            let span = r * len..(r + 1) * len;
            check_row(&v[span.clone()], &s[span.clone()], &i[span]);
        }
        // along the first axis: the same as the last axis of the transpose
        let t: Vec<T> = (0..rows * len)
            .map(|k| v[(k % rows) * len + k / rows])
            .collect();
        let at = cpu(t, &[len, rows]);
        let s0 = a.sort_axis(0).unwrap().to_vec().unwrap();
        let i0 = a.argsort_axis(0).unwrap().to_vec().unwrap();
        let st = at.sort().unwrap().to_vec().unwrap();
        let it = at.argsort().unwrap().to_vec().unwrap();
        for k in 0..rows * len {
            let (r, c) = (k / len, k % len);
            assert!(T::same(s0[k], st[c * rows + r]), "case {case}");
            assert_eq!(i0[k], it[c * rows + r], "case {case}");
        }
    }
}

#[test]
fn property_sorted_permutation_stable_for_every_dtype() {
    property::<f64>(1);
    property::<f32>(2);
    property::<i32>(3);
    property::<i64>(4);
    property::<u32>(5);
    property::<u64>(6);
    property::<u8>(7);
}

#[test]
fn long_rows_use_the_parallel_sort() {
    // one row of 300 000 (fewer rows than threads): par_sort_unstable
    let n = 300_000usize;
    let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 100_003) as f64).collect();
    let a = cpu(v.clone(), &[n]);
    let s = a.sort().unwrap().to_vec().unwrap();
    let i = a.argsort().unwrap().to_vec().unwrap();
    check_row(&v, &s, &i);
}
