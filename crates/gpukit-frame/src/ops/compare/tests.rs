use super::*;
use crate::ops::testutil::*;

fn cpu() -> Device {
    Device::Cpu
}

/// The host answer of `v op lit` (None for null), in Polars' float order (NaN == NaN, largest).
fn host_cmp(v: &V, op: CmpOp, lit: &Lit) -> Option<bool> {
    use std::cmp::Ordering::*;
    let ord = match (v, lit) {
        (V::Null, _) => return None,
        (V::Int(a), Lit::Int(b)) => a.cmp(b),
        (V::Int(a), Lit::Float(b)) => V::Float(*a as f64).order(&V::Float(*b)),
        (V::Float(a), Lit::Int(b)) => V::Float(*a).order(&V::Float(*b as f64)),
        (V::Float(a), Lit::Float(b)) => V::Float(*a).order(&V::Float(*b)),
        (V::Str(a), Lit::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
        (V::Bool(a), Lit::Bool(b)) => a.cmp(b),
        _ => panic!("host_cmp {v:?} {lit:?}"),
    };
    Some(match op {
        CmpOp::Eq => ord == Equal,
        CmpOp::Ne => ord != Equal,
        CmpOp::Lt => ord == Less,
        CmpOp::Le => ord != Greater,
        CmpOp::Gt => ord == Greater,
        CmpOp::Ge => ord != Less,
    })
}

/// The mask on the host (None where null).
fn host_mask(m: &Mask) -> Vec<Option<bool>> {
    let v = m.values.to_vec().unwrap();
    let ok = m
        .valid
        .as_ref()
        .map(|x| x.to_vec().unwrap())
        .unwrap_or_else(|| vec![true; v.len()]);
    v.into_iter()
        .zip(ok)
        .map(|(v, ok)| ok.then_some(v))
        .collect()
}

const OPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];

#[test]
fn columns_against_literals_match_the_host() {
    let mut r = rng(10);
    let lits: Vec<(&str, Lit)> = vec![
        ("i", Lit::Int(0)),
        ("i", Lit::Int(1 << 40)),
        ("i", Lit::Float(0.5)),
        ("f", Lit::Float(0.0)),
        ("f", Lit::Int(1)),
        ("f", Lit::Float(f64::NAN)),
        ("i", Lit::Float(f64::NAN)),
        ("g", Lit::Float(-0.25)),
        ("u", Lit::Int(2_000_000_000)),
        ("u", Lit::Int(-1)),
        ("d", Lit::Int(365)),
        ("s", Lit::Str("en".into())),
        ("s", Lit::Str("".into())),
        ("s", Lit::Str("Main_Page_of_the_wiki".into())),
        ("s", Lit::Str("日本語".into())),
        ("b", Lit::Bool(true)),
    ];
    for n in SIZES {
        let f = random_frame(&mut r, n, true, &cpu());
        for (name, lit) in &lits {
            let c = f.column(name).unwrap();
            let hv = host(c);
            for op in OPS {
                let got = host_mask(&compare_lit(c, op, lit).unwrap());
                let want: Vec<Option<bool>> = hv.iter().map(|v| host_cmp(v, op, lit)).collect();
                assert_eq!(got, want, "{name} {} {lit}, n={n}", op.symbol());
            }
        }
    }
}

#[test]
fn columns_against_columns() {
    let mut r = rng(11);
    for n in SIZES {
        let f = random_frame(&mut r, n, true, &cpu());
        let g = random_frame(&mut r, n, true, &cpu());
        for name in ["i", "s", "b", "d", "u", "f", "g"] {
            let (a, b) = (f.column(name).unwrap(), g.column(name).unwrap());
            let (ha, hb) = (host(a), host(b));
            for op in OPS {
                let got = host_mask(&compare_columns(a, op, b).unwrap());
                let want: Vec<Option<bool>> = ha
                    .iter()
                    .zip(&hb)
                    .map(|(x, y)| {
                        let lit = match y {
                            V::Null => return None,
                            V::Int(v) => Lit::Int(*v),
                            V::Str(s) => Lit::Str(s.clone()),
                            V::Bool(v) => Lit::Bool(*v),
                            V::Float(v) => Lit::Float(*v),
                        };
                        host_cmp(x, op, &lit)
                    })
                    .collect();
                assert_eq!(got, want, "{name} {} {name}, n={n}", op.symbol());
            }
        }
        // mixed numeric types compare as f64
        let m = compare_columns(f.column("i").unwrap(), CmpOp::Lt, f.column("g").unwrap()).unwrap();
        let (hi, hg) = (host(f.column("i").unwrap()), host(f.column("g").unwrap()));
        let want: Vec<Option<bool>> = hi
            .iter()
            .zip(&hg)
            .map(|(x, y)| match (x, y) {
                (V::Int(a), V::Float(b)) => Some((*a as f64) < *b),
                _ => None,
            })
            .collect();
        assert_eq!(host_mask(&m), want);
    }
}

#[test]
fn is_in_matches_the_host() {
    let mut r = rng(12);
    for n in SIZES {
        let f = random_frame(&mut r, n, true, &cpu());
        let cases: Vec<(&str, Vec<Lit>)> = vec![
            (
                "i",
                vec![Lit::Int(-3), Lit::Int(2), Lit::Int(99), Lit::Float(1.0)],
            ),
            ("i", vec![]),
            ("u", vec![Lit::Int(1_000_000_000), Lit::Int(-1)]),
            (
                "f",
                vec![Lit::Float(0.0), Lit::Float(f64::NAN), Lit::Int(1)],
            ),
            ("g", vec![Lit::Float(0.25)]),
            (
                "s",
                vec![
                    Lit::Str("en".into()),
                    Lit::Str("".into()),
                    Lit::Str("日本語".into()),
                ],
            ),
            ("s", vec![]),
            ("b", vec![Lit::Bool(false)]),
            ("d", vec![Lit::Int(-365), Lit::Int(0)]),
        ];
        for (name, lits) in &cases {
            let c = f.column(name).unwrap();
            let got = host_mask(&is_in(c, lits).unwrap());
            let want: Vec<Option<bool>> = host(c)
                .iter()
                .map(|v| match v {
                    V::Null => None,
                    V::Float(x) if x.is_nan() => Some(
                        lits.iter()
                            .any(|l| matches!(l, Lit::Float(y) if y.is_nan())),
                    ),
                    v => Some(lits.iter().any(|l| host_cmp(v, CmpOp::Eq, l) == Some(true))),
                })
                .collect();
            assert_eq!(got, want, "{name} is_in {lits:?}, n={n}");
        }
    }
}

#[test]
fn null_masks_and_type_errors() {
    let f = random_frame(&mut rng(13), 50, true, &cpu());
    let c = f.column("s").unwrap();
    let nulls = host_mask(&null_mask(c, true).unwrap());
    let want: Vec<Option<bool>> = host(c).iter().map(|v| Some(*v == V::Null)).collect();
    assert_eq!(nulls, want);
    let e = compare_lit(c, CmpOp::Gt, &Lit::Int(100))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot compare column `s` of type str with 100 of type i64"),
        "{e}"
    );
    let e = compare_columns(f.column("s").unwrap(), CmpOp::Eq, f.column("i").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column `s` of type str with column `i` of type i64"),
        "{e}"
    );
    let e = is_in(f.column("i").unwrap(), &[Lit::Str("en".into())])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column `i` of type i64 with \"en\" of type str"),
        "{e}"
    );
}
