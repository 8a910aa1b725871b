use super::*;
use crate::ops::testutil::*;

fn cpu() -> Device {
    Device::Cpu
}

/// A column's bools on the host (None where null).
fn bools(c: &Column) -> Vec<Option<bool>> {
    host(c)
        .into_iter()
        .map(|v| match v {
            V::Bool(b) => Some(b),
            V::Null => None,
            v => panic!("not a bool: {v:?}"),
        })
        .collect()
}

fn kleene_and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn kleene_or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

#[test]
fn logic_is_kleene_and_filters_drop_nulls() {
    let mut r = rng(20);
    for n in SIZES {
        let f = random_frame(&mut r, n, true, &cpu());
        let a = col("i").gt(0);
        let b = col("s").is_in(&["en", "日本語", ""]);
        let ha = bools(&a.evaluate(&f).unwrap());
        let hb = bools(&b.evaluate(&f).unwrap());
        let and = bools(&(a.clone() & b.clone()).evaluate(&f).unwrap());
        let or = bools(&(a.clone() | b.clone()).evaluate(&f).unwrap());
        let not = bools(&(!a.clone()).evaluate(&f).unwrap());
        for i in 0..n {
            assert_eq!(and[i], kleene_and(ha[i], hb[i]), "and, row {i}");
            assert_eq!(or[i], kleene_or(ha[i], hb[i]), "or, row {i}");
            assert_eq!(not[i], ha[i].map(|x| !x), "not, row {i}");
        }
        // the filter keeps exactly the true rows
        let expr = (a.clone() & b.clone()) | col("b").eq(true);
        let hm = bools(&expr.evaluate(&f).unwrap());
        let got = f.filter(expr.clone()).unwrap();
        let keep: Vec<usize> = (0..n).filter(|&i| hm[i] == Some(true)).collect();
        let want = f
            .take(
                &Array::from_slice_on(&keep.iter().map(|&i| i as i64).collect::<Vec<_>>(), &cpu())
                    .unwrap(),
            )
            .unwrap();
        assert_frames(&got, &want, &format!("filter, n={n}"));
        assert_frames(&f.filter_expr(&expr).unwrap(), &want, "filter_expr");
    }
}

#[test]
fn literals_columns_and_null_tests() {
    let f = random_frame(&mut rng(21), 200, true, &cpu());
    // literal on the left is the swapped comparison
    let l = bools(&lit(0).lt(col("i")).evaluate(&f).unwrap());
    let r = bools(&col("i").gt(0).evaluate(&f).unwrap());
    assert_eq!(l, r);
    // column against column
    let c = bools(&col("i").eq(col("i")).evaluate(&f).unwrap());
    let nn = bools(&col("i").is_not_null().evaluate(&f).unwrap());
    assert_eq!(
        c.iter().map(|x| x.is_some()).collect::<Vec<_>>(),
        nn.iter().map(|x| x.unwrap()).collect::<Vec<_>>()
    );
    let isnull = bools(&col("i").is_null().evaluate(&f).unwrap());
    assert!(isnull
        .iter()
        .zip(&nn)
        .all(|(a, b)| a.unwrap() != b.unwrap()));
    // the result is named after the first column
    let m = col("s").eq("en").evaluate(&f).unwrap();
    assert_eq!(m.name(), "s");
    assert_eq!(lit("en").eq(col("s")).output_name(), "s");
    // a boolean literal in logic
    let all = f.filter(col("i").gt(0) | true).unwrap();
    assert_eq!(all.height(), 200);
}

#[test]
fn bad_expressions_are_errors() {
    let f = random_frame(&mut rng(22), 10, false, &cpu());
    let e = f.filter(col("nope").gt(1)).unwrap_err().to_string();
    assert!(e.contains("no column named `nope`"), "{e}");
    let e = f.filter(col("s").gt(100)).unwrap_err().to_string();
    assert!(
        e.contains("column `s` of type str with 100 of type i64"),
        "{e}"
    );
    let e = f.filter(col("i").eq("en")).unwrap_err().to_string();
    assert!(
        e.contains("column `i` of type i64 with \"en\" of type str"),
        "{e}"
    );
    let e = f.filter(col("i") & col("b")).unwrap_err().to_string();
    assert!(e.contains("column `i` is i64"), "{e}");
    let e = f.filter(lit(1).eq(2)).unwrap_err().to_string();
    assert!(e.contains("needs a column"), "{e}");
    let e = f.filter(col("i")).unwrap_err().to_string();
    assert!(e.contains("column `i` is i64"), "{e}");
}
