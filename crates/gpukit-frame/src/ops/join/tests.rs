use super::*;
use crate::ops::testutil::*;
use rand::Rng;

fn cpu() -> Device {
    Device::Cpu
}

/// Host join: for each left row in order, its matches in right order (null keys match
/// nothing; NaN matches NaN), or `None` for an unmatched row of a left join.
fn host_pairs(
    l: &DataFrame,
    r: &DataFrame,
    on: &[&str],
    how: JoinHow,
) -> Vec<(usize, Option<usize>)> {
    let lk: Vec<Vec<V>> = on.iter().map(|n| host(l.column(n).unwrap())).collect();
    let rk: Vec<Vec<V>> = on.iter().map(|n| host(r.column(n).unwrap())).collect();
    let mut out = Vec::new();
    for i in 0..l.height() {
        let mut any = false;
        for j in 0..r.height() {
            let m = lk.iter().zip(&rk).all(|(a, b)| {
                a[i] != V::Null && b[j] != V::Null && a[i].order(&b[j]) == std::cmp::Ordering::Equal
            });
            if m {
                out.push((i, Some(j)));
                any = true;
            }
        }
        if !any && how == JoinHow::Left {
            out.push((i, None));
        }
    }
    out
}

fn check(l: &DataFrame, r: &DataFrame, on: &[&str], how: JoinHow) {
    let got = l.join(r, on, how).unwrap();
    let pairs = host_pairs(l, r, on, how);
    assert_eq!(got.height(), pairs.len(), "rows of {how:?} join on {on:?}");
    let hl = host_frame(l);
    let hr = host_frame(r);
    let mut names: Vec<String> = hl.iter().map(|c| c.0.clone()).collect();
    let mut want: Vec<Vec<V>> = hl
        .iter()
        .map(|(_, v)| pairs.iter().map(|(i, _)| v[*i].clone()).collect())
        .collect();
    for (name, v) in &hr {
        if on.contains(&name.as_str()) {
            continue;
        }
        names.push(if hl.iter().any(|c| &c.0 == name) {
            format!("{name}_right")
        } else {
            name.clone()
        });
        want.push(
            pairs
                .iter()
                .map(|(_, j)| j.map_or(V::Null, |j| v[j].clone()))
                .collect(),
        );
    }
    assert_eq!(got.names(), names);
    for ((name, have), w) in host_frame(&got).iter().zip(&want) {
        assert_same(have, w, &format!("{how:?} join on {on:?}, column {name}"));
    }
}

/// A frame of keys drawn from small pools (duplicates on both sides) and a payload.
fn keyed(r: &mut rand::rngs::StdRng, n: usize) -> DataFrame {
    let f = random_frame(r, n, true, &cpu());
    let cols = f.into_columns();
    let payload: Vec<i64> = (0..n).map(|_| r.random_range(0..1000)).collect();
    let mut keep: Vec<Column> = cols
        .into_iter()
        .filter(|c| ["i", "s", "f", "d", "b"].contains(&c.name()))
        .collect();
    keep.push(Column::from_slice_on("payload", &payload, &cpu()).unwrap());
    DataFrame::new(keep).unwrap()
}

#[test]
fn joins_match_a_nested_loop_join() {
    let mut r = rng(40);
    for (nl, nr) in [(0, 5), (5, 0), (1, 1), (7, 9), (60, 45), (300, 17)] {
        let l = keyed(&mut r, nl);
        let rt = keyed(&mut r, nr);
        for how in [JoinHow::Inner, JoinHow::Left] {
            for on in [
                &["i"][..],
                &["s"],
                &["f"],
                &["d"],
                &["b"],
                &["i", "s"],
                &["s", "f", "b"],
            ] {
                check(&l, &rt, on, how);
            }
        }
    }
}

#[test]
fn join_errors_name_columns_and_types() {
    let mut r = rng(41);
    let l = keyed(&mut r, 4);
    let other = DataFrame::new(vec![
        Column::from_strs_on("i", &["a", "b"], &cpu()).unwrap(),
        Column::from_slice_on("x", &[1i64, 2], &cpu()).unwrap(),
    ])
    .unwrap();
    let e = l
        .join(&other, &["i"], JoinHow::Inner)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("join key `i`: the left column `i` is i64 but the right column `i` is str"),
        "{e}"
    );
    let e = l
        .join(&other, &["x"], JoinHow::Inner)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no column named `x`"), "{e}");
    let e = l
        .join(&other, &["s"], JoinHow::Left)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("join key `s` is not a column of the right frame"),
        "{e}"
    );
    assert!(l.join(&other, &[], JoinHow::Inner).is_err());
}

#[test]
fn unicode_keys_and_suffixes() {
    let l = DataFrame::new(vec![
        Column::from_strs_on("k", &["日本語", "Zürich", "en", "日本語"], &cpu()).unwrap(),
        Column::from_slice_on("v", &[1i64, 2, 3, 4], &cpu()).unwrap(),
    ])
    .unwrap();
    let r = DataFrame::new(vec![
        Column::from_slice_on("v", &[10.5f64, 20.5, 30.5], &cpu()).unwrap(),
        Column::from_strs_on("k", &["日本語", "en", "日本語"], &cpu()).unwrap(),
    ])
    .unwrap();
    let j = l.join(&r, &["k"], JoinHow::Inner).unwrap();
    assert_eq!(j.names(), ["k", "v", "v_right"]);
    assert_eq!(
        host(j.column("v").unwrap()),
        [V::Int(1), V::Int(1), V::Int(3), V::Int(4), V::Int(4)]
    );
    assert_eq!(
        host(j.column("v_right").unwrap()),
        [
            V::Float(10.5),
            V::Float(30.5),
            V::Float(20.5),
            V::Float(10.5),
            V::Float(30.5)
        ]
    );
    let j = l.join(&r, &["k"], JoinHow::Left).unwrap();
    assert_eq!(j.height(), 6);
    assert_eq!(host(j.column("v_right").unwrap())[2], V::Null);
}
