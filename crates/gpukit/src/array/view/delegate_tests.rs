//! CPU-backend tests of array operations on views (`delegate`) and of writing through views
//! (`assign`), against ndarray on the same strided selections.

use crate::array::Array;
use crate::device::Device;
use crate::error::{Error, Result};
use ndarray::{s, ArrayD, Axis, IxDyn};

fn host(shape: &[usize], seed: u64) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n as u64)
        .map(|i| ((i * 7919 + seed * 31) % 1009) as f64 / 100.0 - 5.0)
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn cpu(h: &ArrayD<f64>) -> Array<f64> {
    Array::from_ndarray_on(h, &Device::Cpu).unwrap()
}

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let ok = (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-9 * (1.0 + y.abs());
        assert!(ok, "{what}: element {i}: {x} vs {y}");
    }
}

fn vec_of(h: ArrayD<f64>) -> Vec<f64> {
    h.iter().copied().collect()
}

/// The operations the issue lists, on a transpose and on a stepped slice, against ndarray on
/// the same selections (the inventory of what views accept directly).
#[test]
fn views_take_every_operation_without_copy_first() -> Result<()> {
    for (shape, seed) in [(vec![4usize, 6], 1u64), (vec![3, 5, 4], 2), (vec![1, 7], 3)] {
        let h = host(&shape, seed);
        let a = cpu(&h);
        let t = a.t();
        let ht = h.t().to_owned();
        let mut info = vec![s![..].as_ref()[0]; shape.len()];
        info[1] = s![1..;2].as_ref()[0];
        let st = a.slice(&info)?;
        let hs = h
            .slice_axis(Axis(1), ndarray::Slice::new(1, None, 2))
            .to_owned();
        for (v, hv, what) in [(t, ht, "transpose"), (st, hs, "slice")] {
            let w = |name: &str| format!("{what} {shape:?} {name}");
            close(&[v.sum()?], &[hv.sum()], &w("sum"));
            close(&[v.mean()?], &[hv.mean().unwrap()], &w("mean"));
            close(&[v.std(1)?], &[hv.std(1.0)], &w("std"));
            close(&[v.var(0)?], &[hv.var(0.0)], &w("var"));
            let hmin = hv.iter().copied().fold(f64::INFINITY, f64::min);
            let hmax = hv.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            close(&[v.min()?, v.max()?], &[hmin, hmax], &w("min/max"));
            let flat: Vec<f64> = hv.iter().copied().collect();
            let am = flat.iter().position(|&x| x == hmax).unwrap();
            assert_eq!(v.argmax()?, am, "{}", w("argmax"));
            close(
                &v.sum_axis(0)?.to_vec()?,
                &vec_of(hv.sum_axis(Axis(0))),
                &w("sum_axis"),
            );
            let last = hv.ndim() - 1;
            close(
                &v.mean_axis(-1)?.to_vec()?,
                &vec_of(hv.mean_axis(Axis(last)).unwrap()),
                &w("mean_axis"),
            );
            close(
                &v.std_axis(0, 0)?.to_vec()?,
                &vec_of(hv.std_axis(Axis(0), 0.0)),
                &w("std_axis"),
            );
            close(
                &v.cumprod_axis(0)?.to_vec()?,
                &vec_of(hv.cumprod(Axis(0))),
                &w("cumprod_axis"),
            );
            close(
                &v.cumsum_axis(-1)?.to_vec()?,
                &vec_of({
                    let mut o = hv.clone();
                    o.accumulate_axis_inplace(Axis(last), |&p, c| *c += p);
                    o
                }),
                &w("cumsum_axis"),
            );
            close(
                &v.abs()?.sqrt()?.to_vec()?,
                &vec_of(hv.mapv(|x| x.abs().sqrt())),
                &w("sqrt"),
            );
            close(&v.exp()?.to_vec()?, &vec_of(hv.mapv(f64::exp)), &w("exp"));
            close(&v.sin()?.to_vec()?, &vec_of(hv.mapv(f64::sin)), &w("sin"));
            close(
                &v.arctan()?.to_vec()?,
                &vec_of(hv.mapv(f64::atan)),
                &w("arctan"),
            );
            close(
                &v.clip(-1.0, 2.0)?.to_vec()?,
                &vec_of(hv.mapv(|x| x.clamp(-1.0, 2.0))),
                &w("clip"),
            );
            close(
                &(&v * 2.0)?.to_vec()?,
                &vec_of(hv.mapv(|x| x * 2.0)),
                &w("* scalar"),
            );
            assert_eq!(
                v.gt(0.0)?.to_vec()?,
                hv.iter().map(|&x| x > 0.0).collect::<Vec<_>>(),
                "{}",
                w("gt")
            );
            assert_eq!(
                v.astype::<i32>()?.to_vec()?,
                hv.iter().map(|&x| x as i32).collect::<Vec<_>>(),
                "{}",
                w("astype")
            );
            // Sorting each last-axis row.
            let mut rows: Vec<f64> = Vec::new();
            for lane in hv.lanes(Axis(last)) {
                let mut r: Vec<f64> = lane.iter().copied().collect();
                r.sort_by(|a, b| a.partial_cmp(b).unwrap());
                rows.extend(r);
            }
            close(&v.sort()?.to_vec()?, &rows, &w("sort"));
            let idx = v.argsort()?.to_vec()?;
            assert_eq!(idx.len(), hv.len(), "{}", w("argsort"));
            // Same values as the copy's operation, for the rest.
            let c = v.copy()?;
            assert_eq!(v.argsort_axis(0)?.to_vec()?, c.argsort_axis(0)?.to_vec()?);
            assert_eq!(v.isfinite()?.to_vec()?, c.isfinite()?.to_vec()?);
            assert_eq!(v.count_nonzero()?, c.count_nonzero()?);
            close(
                &v.cumprod()?.to_vec()?,
                &c.cumprod()?.to_vec()?,
                &w("cumprod"),
            );
        }
    }
    Ok(())
}

#[test]
fn matmul_and_dot_take_views() -> Result<()> {
    let h = host(&[3, 4], 5);
    let a = cpu(&h);
    let h2 = h.clone().into_dimensionality::<ndarray::Ix2>().unwrap();
    let want = h2.t().dot(&h2); // (4, 4)
    let got = a.t().matmul(&a)?;
    assert_eq!(got.shape(), &[4, 4]);
    close(
        &got.to_vec()?,
        &want.iter().copied().collect::<Vec<_>>(),
        "aᵀa",
    );
    let got = a.view().matmul(a.t())?;
    let want = h2.dot(&h2.t());
    close(
        &got.to_vec()?,
        &want.iter().copied().collect::<Vec<_>>(),
        "aaᵀ",
    );
    let col = a.slice(s![.., 1])?;
    let d = col.dot(col.clone())?.item()?;
    close(&[d], &[h2.column(1).dot(&h2.column(1))], "dot");
    Ok(())
}

#[test]
fn whole_array_views_are_used_in_place() -> Result<()> {
    let a = cpu(&host(&[2, 3], 9));
    let v = a.view();
    assert!(matches!(
        v.contiguous()?,
        super::delegate::Contiguous::Borrowed(_)
    ));
    assert!(matches!(
        a.t().contiguous()?,
        super::delegate::Contiguous::Owned(_)
    ));
    Ok(())
}

#[test]
fn empty_and_single_element_views() -> Result<()> {
    let a = cpu(&host(&[3, 4], 1));
    let e = a.slice(s![.., 2..2])?;
    assert_eq!(e.sum()?, 0.0);
    assert_eq!(e.sqrt()?.shape(), &[3, 0]);
    assert_eq!(e.cumprod_axis(0)?.shape(), &[3, 0]);
    assert!(e.max().is_err());
    let one = a.slice(s![1..2, 3..4])?;
    assert_eq!(one.sum()?, a.to_vec()?[7]);
    assert_eq!(one.t().argmax()?, 0);
    Ok(())
}

#[test]
fn slice_assignment_writes_into_the_parent_like_ndarray() -> Result<()> {
    let h = host(&[4, 5], 3);
    let mut a = cpu(&h);
    let mut hh = h.clone();
    // a[1:3, ::2] = b
    let b = host(&[2, 3], 8);
    a.slice_mut(s![1..3, ..;2])?.assign(cpu(&b))?;
    hh.slice_mut(s![1..3, ..;2]).assign(&b);
    // a[:, -1] = 7 ; a[3] = row broadcast ; reversed columns from a view of another array
    a.slice_mut(s![.., -1])?.fill(7.0)?;
    hh.slice_mut(s![.., -1]).fill(7.0);
    let row = host(&[1, 5], 4);
    a.slice_mut(s![3, ..])?.assign(cpu(&row))?;
    hh.slice_mut(s![3, ..]).assign(&row.index_axis(Axis(0), 0));
    let other = cpu(&host(&[5, 2], 6));
    a.slice_mut(s![..2, ..;-1])?.assign(other.t())?;
    let ho = host(&[5, 2], 6);
    hh.slice_mut(s![..2, ..;-1]).assign(&ho.t());
    // In-place arithmetic through the view.
    a.slice_mut(s![.., 1])?.mul_in_place(-2.0)?;
    hh.slice_mut(s![.., 1]).mapv_inplace(|x| x * -2.0);
    close(&a.to_vec()?, &vec_of(hh), "after the writes");
    Ok(())
}

#[test]
fn slice_assignment_errors() {
    let mut a = cpu(&host(&[3, 4], 1));
    let b = cpu(&host(&[3], 2));
    let e = a.slice_mut(s![.., ..2]).unwrap().assign(&b).unwrap_err();
    assert!(
        matches!(e, Error::Shape(_))
            && e.to_string().contains("[3]")
            && e.to_string().contains("[3, 2]"),
        "{e}"
    );
    assert!(a.slice_mut(s![5, ..]).is_err());
    let mut e0 = a.slice_mut(s![..0, ..]).unwrap();
    e0.fill(1.0).unwrap(); // nothing to write
    assert_eq!(e0.size(), 0);
}

#[test]
fn arctan2_and_cumprod_match_std_and_ndarray() -> Result<()> {
    let y = cpu(&host(&[3, 4], 2));
    let x = cpu(&host(&[3, 4], 7));
    let (hy, hx) = (host(&[3, 4], 2), host(&[3, 4], 7));
    let want: Vec<f64> = hy.iter().zip(hx.iter()).map(|(a, b)| a.atan2(*b)).collect();
    close(&y.arctan2(&x)?.to_vec()?, &want, "arctan2");
    close(&y.atan2(&x)?.to_vec()?, &want, "atan2");
    let mut o = hy.t().to_owned();
    o.zip_mut_with(&hx.t(), |a, b| *a = a.atan2(*b));
    close(
        &y.t().arctan2(x.t())?.to_vec()?,
        &vec_of(o),
        "arctan2 of views",
    );
    assert!(y.arctan2(&cpu(&host(&[4, 3], 1))).is_err());
    for axis in 0..2 {
        close(
            &y.cumprod_axis(axis)?.to_vec()?,
            &vec_of(hy.cumprod(Axis(axis))),
            "cumprod_axis",
        );
    }
    let i = Array::from_vec_on(vec![1i64, 2, 3, 4, 5], [5], &Device::Cpu)?;
    assert_eq!(i.cumprod()?.to_vec()?, vec![1, 2, 6, 24, 120]);
    assert!(y.cumprod_axis(2).is_err());
    Ok(())
}

#[test]
fn where_takes_views_and_scalars() -> Result<()> {
    let h = host(&[3, 4], 2);
    let a = cpu(&h);
    let b = cpu(&host(&[4, 3], 5));
    let cond = a.t().gt(0.0)?;
    let want: Vec<f64> = h
        .t()
        .iter()
        .zip(host(&[4, 3], 5).iter())
        .map(|(&x, &y)| if x > 0.0 { x } else { y })
        .collect();
    assert_eq!(crate::ArrayView::where_(&cond, a.t(), &b)?.to_vec()?, want);
    let relu: Vec<f64> = h.t().iter().map(|&x| x.max(0.0)).collect();
    assert_eq!(
        crate::ArrayView::where_(cond.view(), a.t(), 0.0)?.to_vec()?,
        relu
    );
    let ones: Vec<f64> = h
        .t()
        .iter()
        .map(|&x| if x > 0.0 { 1.0 } else { -1.0 })
        .collect();
    assert_eq!(crate::ArrayView::where_(&cond, 1.0, -1.0)?.to_vec()?, ones);
    assert!(crate::ArrayView::where_(&cond, &a, 0.0).is_err()); // (3, 4) vs (4, 3)
    Ok(())
}
