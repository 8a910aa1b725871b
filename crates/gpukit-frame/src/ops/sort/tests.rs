use super::*;
use crate::ops::testutil::*;
use std::cmp::Ordering;

fn cpu() -> Device {
    Device::Cpu
}

/// Host stable sort of row indices by the columns `by` (nulls last or first, descending
/// reverses the value order only: NaN first, nulls where asked).
fn host_order(f: &DataFrame, by: &[&str], desc: &[bool], nulls_last: bool) -> Vec<usize> {
    let cols: Vec<Vec<V>> = by.iter().map(|n| host(f.column(n).unwrap())).collect();
    let desc: Vec<bool> = match desc.len() {
        1 => vec![desc[0]; by.len()],
        _ => desc.to_vec(),
    };
    let mut idx: Vec<usize> = (0..f.height()).collect();
    idx.sort_by(|&a, &b| {
        for (c, &d) in cols.iter().zip(&desc) {
            let o = match (&c[a], &c[b]) {
                (V::Null, V::Null) => Ordering::Equal,
                (V::Null, _) => {
                    if nulls_last {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    }
                }
                (_, V::Null) => {
                    if nulls_last {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    }
                }
                (x, y) => {
                    let o = x.order(y);
                    if d {
                        o.reverse()
                    } else {
                        o
                    }
                }
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    idx
}

fn check(f: &DataFrame, by: &[&str], desc: &[bool], nulls_last: bool) {
    let got = f
        .arg_sort_by(by, desc, nulls_last)
        .unwrap()
        .to_vec()
        .unwrap();
    let want: Vec<i64> = host_order(f, by, desc, nulls_last)
        .into_iter()
        .map(|i| i as i64)
        .collect();
    if got != want {
        for name in by {
            eprintln!("{name}: {:?}", host(f.column(name).unwrap()));
        }
    }
    assert_eq!(
        got,
        want,
        "sort by {by:?} desc {desc:?} nulls_last {nulls_last}, n={}",
        f.height()
    );
}

#[test]
fn single_keys_of_every_type_match_a_stable_host_sort() {
    let mut r = rng(30);
    for n in SIZES {
        for nulls in [false, true] {
            let f = random_frame(&mut r, n, nulls, &cpu());
            for name in ["i", "f", "s", "b", "u", "d", "g"] {
                for desc in [false, true] {
                    check(&f, &[name], &[desc], true);
                }
            }
            check(&f, &["s"], &[false], false);
            check(&f, &["f"], &[true], false);
        }
    }
}

#[test]
fn several_keys_sort_lexicographically() {
    let mut r = rng(31);
    for n in SIZES {
        let f = random_frame(&mut r, n, true, &cpu());
        check(&f, &["b", "s", "i"], &[false, true, false], true);
        check(&f, &["s", "f"], &[true, true], true);
        check(&f, &["d", "u", "g"], &[false], false);
        let sorted = f.sort_by(&["s", "i"], &[false, true]).unwrap();
        let order = host_order(&f, &["s", "i"], &[false, true], true);
        let want = f
            .take(
                &Array::from_slice_on(&order.iter().map(|&i| i as i64).collect::<Vec<_>>(), &cpu())
                    .unwrap(),
            )
            .unwrap();
        assert_frames(&sorted, &want, "sort_by");
    }
}

#[test]
fn string_ranks_order_bytes_with_long_prefixes_and_nul() {
    let words = [
        "abcdefghijklmnop",
        "abcdefghijklmno",
        "abcdefghijklmnop\u{0}",
        "abcdefg",
        "abcdefg\u{0}",
        "",
        "\u{0}",
        "Zürich",
        "Zurich",
        "日本語",
        "日本",
        "abcdefghijklmnop",
        "",
    ];
    let s = Utf8Data::from_strs_on(&words, &cpu()).unwrap();
    let ranks = string_ranks(&s).unwrap().to_vec().unwrap();
    let mut distinct: Vec<&str> = words.to_vec();
    distinct.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    distinct.dedup();
    for (w, r) in words.iter().zip(&ranks) {
        let want = distinct.iter().position(|d| d == w).unwrap() as u64;
        assert_eq!(*r, want, "rank of {w:?}");
    }
}

#[test]
fn column_sorts_and_bad_keys() {
    let c = Column::from_slice_on("x", &[3.0f64, f64::NAN, -1.0, 2.0], &cpu()).unwrap();
    assert_eq!(c.arg_sort(false).unwrap().to_vec().unwrap(), [2, 3, 0, 1]);
    assert_eq!(c.arg_sort(true).unwrap().to_vec().unwrap(), [1, 0, 3, 2]);
    assert_eq!(host(&c.sort(false).unwrap())[0], V::Float(-1.0));
    let f = random_frame(&mut rng(32), 5, false, &cpu());
    let e = f.sort_by(&["nope"], &[]).unwrap_err().to_string();
    assert!(e.contains("no column named `nope`"), "{e}");
    let e = f
        .sort_by(&["i", "s"], &[true, false, true])
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 key(s) (i, s) but 3 descending flags"), "{e}");
    assert!(f.sort_by(&[], &[]).is_err());
}
