use super::*;
use crate::ops::testutil::*;
use rand::Rng;

fn cpu() -> Device {
    Device::Cpu
}

#[test]
fn take_gathers_every_type_with_nulls_and_repeats() {
    let mut r = rng(1);
    for n in SIZES {
        for nulls in [false, true] {
            let f = random_frame(&mut r, n, nulls, &cpu());
            let m = if n == 0 { 0 } else { n * 2 + 3 };
            let idx: Vec<i64> = (0..m).map(|_| r.random_range(0..n as i64)).collect();
            let got = f
                .take(&Array::from_slice_on(&idx, &cpu()).unwrap())
                .unwrap();
            assert_eq!(got.shape(), (m, f.width()));
            for ((name, want), (_, have)) in host_frame(&f).iter().zip(host_frame(&got)) {
                let expect: Vec<V> = idx.iter().map(|&i| want[i as usize].clone()).collect();
                assert_same(&have, &expect, &format!("take {name}, n={n}"));
            }
        }
    }
}

#[test]
fn take_out_of_range_names_the_index() {
    let f = random_frame(&mut rng(2), 5, true, &cpu());
    let idx = Array::from_slice_on(&[0i64, 7, 2], &cpu()).unwrap();
    let e = f.take(&idx).unwrap_err().to_string();
    assert!(e.contains("index 7 is out of range for 5 rows"), "{e}");
    let idx = Array::from_slice_on(&[-1i64, 2], &cpu()).unwrap();
    let e = f.column("s").unwrap().take(&idx).unwrap_err().to_string();
    assert!(e.contains("column `s`") && e.contains("index -1"), "{e}");
    let empty = Array::<i64>::zeros_on(0, &cpu()).unwrap();
    assert_eq!(f.take(&empty).unwrap().shape(), (0, f.width()));
    let two_d = Array::<i64>::zeros_on((1, 1), &cpu()).unwrap();
    assert!(f.take(&two_d).unwrap_err().to_string().contains("1-D"));
}

#[test]
fn filter_keeps_true_rows_and_null_counts_as_false() {
    let mut r = rng(3);
    for n in SIZES {
        let f = random_frame(&mut r, n, true, &cpu());
        let keep: Vec<bool> = (0..n).map(|_| r.random_bool(0.4)).collect();
        let mask = Array::from_slice_on(&keep, &cpu()).unwrap();
        let got = f.filter(&mask).unwrap();
        let got_col = f.column("s").unwrap().filter(&mask).unwrap();
        for ((name, want), (_, have)) in host_frame(&f).iter().zip(host_frame(&got)) {
            let expect: Vec<V> = want
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(v, _)| v.clone())
                .collect();
            assert_same(&have, &expect, &format!("filter {name}, n={n}"));
        }
        assert_same(
            &host(&got_col),
            &host(got.column("s").unwrap()),
            "column filter",
        );
        // the bool column `b` as the mask: its nulls drop rows
        let b = f.column("b").unwrap();
        let by_col = f.filter(b).unwrap();
        let expect = host(b).iter().filter(|v| **v == V::Bool(true)).count();
        assert_eq!(by_col.height(), expect, "mask column, n={n}");
    }
}

#[test]
fn filter_errors_name_the_problem() {
    let f = random_frame(&mut rng(4), 4, false, &cpu());
    let short = Array::from_slice_on(&[true, false], &cpu()).unwrap();
    let e = f.filter(&short).unwrap_err().to_string();
    assert!(e.contains("mask has shape [2] but there are 4 rows"), "{e}");
    let e = f.filter(f.column("i").unwrap()).unwrap_err().to_string();
    assert!(e.contains("mask column `i` is i64, not bool"), "{e}");
}

#[test]
fn all_null_and_one_row_columns() {
    let c = Column::new(
        "x",
        ColumnData::Int64(Array::from_slice_on(&[0i64, 0, 0], &cpu()).unwrap()),
        Some(Bitmap::from_bools_on(&[false; 3], &cpu()).unwrap()),
    )
    .unwrap();
    let t = c
        .take(&Array::from_slice_on(&[2i64, 0], &cpu()).unwrap())
        .unwrap();
    assert_eq!(host(&t), [V::Null, V::Null]);
    assert_eq!(t.null_count(), 2);
    let one = Column::from_strs_on("s", &["日本"], &cpu()).unwrap();
    let t = one
        .take(&Array::from_slice_on(&[0i64, 0], &cpu()).unwrap())
        .unwrap();
    assert_eq!(host(&t), [V::Str("日本".into()), V::Str("日本".into())]);
    assert!(t.validity().is_none());
}

#[test]
fn nullable_take_gives_null_rows_for_minus_one() {
    let c = Column::from_strs_on("s", &["a", "bc"], &cpu()).unwrap();
    let idx = Array::from_slice_on(&[1i64, -1, 0], &cpu()).unwrap();
    let t = c.take_unchecked(&idx, true).unwrap();
    assert_eq!(host(&t), [V::Str("bc".into()), V::Null, V::Str("a".into())]);
}
