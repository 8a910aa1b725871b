//! CPU-backend tests of views, shape operations and broadcasting against ndarray (the GPU side
//! is `tests/shapes_gpu.rs`, which compares the two backends).

use crate::array::Array;
use crate::device::Device;
use crate::error::Error;
use ndarray::{s, ArrayD, Axis, IxDyn, NewAxis};

/// A small deterministic generator (xorshift), so that the shapes are random but repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shape(&mut self, ndim: usize, max: usize) -> Vec<usize> {
        (0..ndim).map(|_| self.below(max + 1)).collect()
    }
}

fn host(shape: &[usize], seed: u64) -> ArrayD<i64> {
    let n: usize = shape.iter().product();
    let v: Vec<i64> = (0..n as i64)
        .map(|i| (i * 7919 + seed as i64) % 1009 - 500)
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn cpu(a: &ArrayD<i64>) -> Array<i64> {
    Array::from_ndarray_on(a, &Device::Cpu).unwrap()
}

#[test]
fn transposes_and_permutations_match_ndarray() {
    let mut rng = Rng(0x5eed);
    for case in 0..60 {
        let ndim = 1 + case % 5;
        let shape = rng.shape(ndim, 5);
        let h = host(&shape, case as u64);
        let a = cpu(&h);
        let t = a.t();
        assert_eq!(t.shape(), h.t().shape());
        assert_eq!(
            t.copy().unwrap().to_host().unwrap(),
            h.t().to_owned(),
            "{shape:?}"
        );
        let mut axes: Vec<usize> = (0..ndim).collect();
        for k in (1..ndim).rev() {
            axes.swap(k, rng.below(k + 1));
        }
        let p = a.permute(&axes).unwrap();
        let hp = h.clone().permuted_axes(IxDyn(&axes));
        assert_eq!(p.to_host().unwrap(), hp, "{shape:?} {axes:?}");
        // A view of a view, then a copy.
        assert_eq!(
            p.t().copy().unwrap().to_vec().unwrap(),
            hp.t().iter().copied().collect::<Vec<_>>()
        );
    }
    let a = cpu(&host(&[2, 3], 0));
    assert!(matches!(a.permute(&[0, 0]), Err(Error::Shape(_))));
    assert!(matches!(a.permute(&[0, 1, 2]), Err(Error::Shape(_))));
    // More axes than one strided kernel launch takes (8): ten axes of length 2, reversed.
    let shape = vec![2usize; 10];
    let h = host(&shape, 3);
    let axes: Vec<usize> = (0..10).rev().collect();
    assert_eq!(
        cpu(&h).permute(&axes).unwrap().to_host().unwrap(),
        h.clone().permuted_axes(IxDyn(&axes))
    );
}

#[test]
fn slices_with_steps_match_ndarray() {
    let h = host(&[4, 5, 6], 1);
    let a = cpu(&h);
    // An empty range (start after end), through variables: the literal form is a lint.
    let (lo, hi) = (1, 3);
    let cases: Vec<ndarray::SliceInfo<Vec<ndarray::SliceInfoElem>, IxDyn, IxDyn>> = vec![
        s![1..3, .., ..;2].to_vec().try_into().unwrap(),
        s![..;-1, 2, 1..;3].to_vec().try_into().unwrap(),
        s![-1, ..;-2, -4..-1].to_vec().try_into().unwrap(),
        s![.., NewAxis, 0..0, ..].to_vec().try_into().unwrap(),
        s![hi..lo, .., ..].to_vec().try_into().unwrap(),
        s![1..4;2, 1..5;-3, ..].to_vec().try_into().unwrap(),
    ];
    for info in cases {
        let v = a.slice(info.as_ref()).unwrap();
        let expected = h.slice(info.clone());
        assert_eq!(v.shape(), expected.shape(), "{info:?}");
        assert_eq!(v.to_host().unwrap(), expected.to_owned(), "{info:?}");
        assert_eq!(
            v.copy().unwrap().to_host().unwrap(),
            expected.to_owned(),
            "{info:?}"
        );
    }
    // Slices of transposes and of slices.
    let v = a
        .t()
        .slice(s![..;2, 1.., ..;-1])
        .unwrap()
        .slice(s![1.., .., 0])
        .unwrap();
    let h3 = h.clone().into_dimensionality::<ndarray::Ix3>().unwrap();
    let e = h3
        .t()
        .slice_move(s![..;2, 1.., ..;-1])
        .slice_move(s![1.., .., 0]);
    assert_eq!(v.to_host().unwrap(), e.to_owned().into_dyn());
    // NumPy clamps range ends; indices out of range and zero steps are errors.
    assert_eq!(a.slice(s![2..100, .., ..]).unwrap().shape(), &[2, 5, 6]);
    assert!(matches!(a.slice(s![4, .., ..]), Err(Error::Shape(_))));
    assert!(matches!(a.slice(s![.., .., .., ..]), Err(Error::Shape(_))));
}

#[test]
fn reshapes_infer_minus_one_and_views_avoid_copies() {
    let a = Array::<f64>::arange_on(0.0, 24.0, &Device::Cpu).unwrap();
    assert_eq!(a.reshape([2, -1, 3]).unwrap().shape(), &[2, 4, 3]);
    assert_eq!(a.reshape((-1, 6)).unwrap().shape(), &[4, 6]);
    assert_eq!(a.reshape([4, 6]).unwrap().shape(), &[4, 6]);
    let n: usize = 8;
    assert_eq!(a.reshape([n, 3]).unwrap().shape(), &[8, 3]);
    assert_eq!(a.reshape([n as isize, -1]).unwrap().shape(), &[8, 3]);
    let e = a.reshape([5, -1]).unwrap_err().to_string();
    assert!(e.contains("[24]") && e.contains("[5, -1]"), "{e}");
    assert!(a.reshape([-1, -1]).is_err());
    let b = a.try_clone().unwrap().into_shape([-1, 4]).unwrap();
    assert_eq!(b.shape(), &[6, 4]);
    // A view reshapes without a copy where the strides allow it.
    let v = b.view().reshape([2, 3, 4]).unwrap();
    assert!(v.is_contiguous());
    let cols = b.slice(s![.., 1..3]).unwrap();
    let split = cols.reshape([3, 2, 2]).unwrap();
    assert_eq!(split.to_vec().unwrap(), cols.to_vec().unwrap());
    let e = b.t().reshape(-1).unwrap_err().to_string();
    assert!(e.contains("copy"), "{e}");
    let flat = b.t().flatten().unwrap();
    assert_eq!(
        flat.to_vec().unwrap(),
        b.to_host().unwrap().t().iter().copied().collect::<Vec<_>>()
    );
    assert_eq!(b.flatten().unwrap().shape(), &[24]);
    assert_eq!(b.ravel().shape(), &[24]);
}

#[test]
fn squeeze_expand_dims_and_broadcast_to() {
    let a = Array::<i32>::ones_on([1, 3, 1], &Device::Cpu).unwrap();
    assert_eq!(a.squeeze().shape(), &[3]);
    assert_eq!(a.squeeze_axis(-1).unwrap().shape(), &[1, 3]);
    assert!(matches!(a.squeeze_axis(1), Err(Error::Shape(_))));
    assert!(matches!(a.squeeze_axis(3), Err(Error::Shape(_))));
    assert_eq!(a.expand_dims(0).unwrap().shape(), &[1, 1, 3, 1]);
    assert_eq!(a.expand_dims(-1).unwrap().shape(), &[1, 3, 1, 1]);
    assert_eq!(a.expand_dims(3).unwrap().shape(), &[1, 3, 1, 1]);
    assert!(a.expand_dims(5).is_err());
    let r = Array::<i32>::arange_on(0, 3, &Device::Cpu).unwrap();
    let b = r.broadcast_to([2, 3]).unwrap();
    assert_eq!(b.strides(), &[0, 1]);
    assert_eq!(b.to_vec().unwrap(), vec![0, 1, 2, 0, 1, 2]);
    assert!(r.broadcast_to([2, 4]).is_err());
}

/// `f` applied elementwise to `a` and `b` broadcast together (the reference).
fn broadcast_ref(a: &ArrayD<i64>, b: &ArrayD<i64>, f: impl Fn(i64, i64) -> i64) -> ArrayD<i64> {
    let n = a.ndim().max(b.ndim());
    let pad = |s: &[usize]| {
        let mut v = vec![1; n - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (sa, sb) = (pad(a.shape()), pad(b.shape()));
    let shape: Vec<usize> = sa
        .iter()
        .zip(&sb)
        .map(|(&x, &y)| if x == 1 { y } else { x })
        .collect();
    let av = a.broadcast(IxDyn(&shape)).unwrap();
    let bv = b.broadcast(IxDyn(&shape)).unwrap();
    ndarray::Zip::from(&av)
        .and(&bv)
        .map_collect(|&x, &y| f(x, y))
}

#[test]
fn broadcasting_between_arrays_matches_ndarray() {
    let mut rng = Rng(77);
    for case in 0..80u64 {
        let ndim = 1 + rng.below(4);
        let full = rng.shape(ndim, 4);
        // Each operand: some axes set to 1, maybe fewer leading axes.
        let pick = |rng: &mut Rng| {
            let drop = rng.below(ndim);
            full[drop..]
                .iter()
                .map(|&d| if rng.below(3) == 0 { 1 } else { d })
                .collect::<Vec<_>>()
        };
        let (sa, sb) = (pick(&mut rng), pick(&mut rng));
        let (ha, hb) = (
            host(&sa, case),
            host(&sb, case + 1).mapv(|x| if x == 0 { 3 } else { x }),
        );
        let (a, b) = (cpu(&ha), cpu(&hb));
        let r = (&a + &b).unwrap();
        assert_eq!(
            r.to_host().unwrap(),
            broadcast_ref(&ha, &hb, |x, y| x + y),
            "{sa:?} + {sb:?}"
        );
        let r = (&a * &b).unwrap();
        assert_eq!(r.to_host().unwrap(), broadcast_ref(&ha, &hb, |x, y| x * y));
        let r = (&a - &b).unwrap();
        assert_eq!(r.to_host().unwrap(), broadcast_ref(&ha, &hb, |x, y| x - y));
        let r = (&a / &b).unwrap();
        assert_eq!(r.to_host().unwrap(), broadcast_ref(&ha, &hb, |x, y| x / y));
        let r = (&a % &b).unwrap();
        assert_eq!(r.to_host().unwrap(), broadcast_ref(&ha, &hb, |x, y| x % y));
        let lt = a.lt(&b).unwrap().astype::<i64>().unwrap();
        assert_eq!(
            lt.to_host().unwrap(),
            broadcast_ref(&ha, &hb, |x, y| (x < y) as i64)
        );
        let eq = a.eq(&b).unwrap().astype::<i64>().unwrap();
        assert_eq!(
            eq.to_host().unwrap(),
            broadcast_ref(&ha, &hb, |x, y| (x == y) as i64)
        );
    }
    let a = Array::<f32>::zeros_on([3, 2], &Device::Cpu).unwrap();
    let b = Array::<f32>::zeros_on([3], &Device::Cpu).unwrap();
    let e = (&a + &b).unwrap_err().to_string();
    assert!(e.contains("[3, 2]") && e.contains("[3]"), "{e}");
    let e = a.gt(&b).unwrap_err().to_string();
    assert!(e.contains("[3, 2]") && e.contains("[3]"), "{e}");
}

#[test]
fn in_place_broadcasting_keeps_the_left_shape() {
    let h = host(&[3, 4], 5);
    let row = host(&[4], 6);
    let mut a = cpu(&h);
    a += &cpu(&row);
    a.synchronize().unwrap();
    assert_eq!(a.to_host().unwrap(), broadcast_ref(&h, &row, |x, y| x + y));
    let col = host(&[3, 1], 7);
    a.mul_in_place(&cpu(&col)).unwrap();
    let expected = broadcast_ref(&broadcast_ref(&h, &row, |x, y| x + y), &col, |x, y| x * y);
    assert_eq!(a.to_host().unwrap(), expected);
    // The result would be larger than the left operand: an error, the array unchanged.
    let mut small = cpu(&row);
    let e = small.add_in_place(&cpu(&h)).unwrap_err().to_string();
    assert!(e.contains("[4]") && e.contains("[3, 4]"), "{e}");
    assert_eq!(small.to_host().unwrap(), row);
}

#[test]
fn operators_take_views() {
    let h = host(&[3, 4], 8);
    let a = cpu(&h);
    let b = cpu(&host(&[4, 3], 9));
    let ht = h.t().to_owned();
    let hb = b.to_host().unwrap();
    assert_eq!((&a.t() + &b).unwrap().to_host().unwrap(), &ht + &hb);
    assert_eq!((a.t() - b.view()).unwrap().to_host().unwrap(), &ht - &hb);
    assert_eq!((&b * a.t()).unwrap().to_host().unwrap(), &hb * &ht);
    assert_eq!((a.t() * 2).unwrap().to_host().unwrap(), ht.mapv(|x| x * 2));
    let col = a.slice(s![.., 1..2]).unwrap();
    assert_eq!(
        (&a + &col).unwrap().to_host().unwrap(),
        broadcast_ref(&h, &h.slice(s![.., 1..2]).to_owned().into_dyn(), |x, y| x
            + y)
    );
    let m = a.t().gt(0).unwrap().astype::<i64>().unwrap();
    assert_eq!(m.to_host().unwrap(), ht.mapv(|x| (x > 0) as i64));
    let m = a.t().le(&b).unwrap().astype::<i64>().unwrap();
    assert_eq!(
        m.to_host().unwrap(),
        ndarray::Zip::from(&ht)
            .and(&hb)
            .map_collect(|&x, &y| (x <= y) as i64)
    );
}

#[test]
fn concatenate_and_stack_match_ndarray() {
    let mut rng = Rng(99);
    for case in 0..30u64 {
        let ndim = 1 + rng.below(3);
        let shape = rng.shape(ndim, 4);
        let axis = rng.below(ndim);
        let hs: Vec<ArrayD<i64>> = (0..3)
            .map(|k| {
                let mut s = shape.clone();
                s[axis] = rng.below(4);
                host(&s, case * 3 + k)
            })
            .collect();
        let arrays: Vec<Array<i64>> = hs.iter().map(cpu).collect();
        let refs: Vec<&Array<i64>> = arrays.iter().collect();
        let c = crate::array::concatenate(&refs, axis).unwrap();
        let views: Vec<_> = hs.iter().map(|h| h.view()).collect();
        assert_eq!(
            c.to_host().unwrap(),
            ndarray::concatenate(Axis(axis), &views).unwrap()
        );
        let same: Vec<Array<i64>> = (0..3).map(|k| cpu(&host(&shape, k))).collect();
        let hsame: Vec<ArrayD<i64>> = (0..3).map(|k| host(&shape, k)).collect();
        let hv: Vec<_> = hsame.iter().map(|h| h.view()).collect();
        for ax in 0..=ndim {
            let st = crate::array::stack(&same, ax).unwrap();
            assert_eq!(
                st.to_host().unwrap(),
                ndarray::stack(Axis(ax), &hv).unwrap()
            );
        }
    }
    // Views (transposes) join too; negative axes count from the end.
    let a = cpu(&host(&[2, 3], 1));
    let b = cpu(&host(&[4, 3], 2));
    let c = crate::array::concatenate(&[a.t(), b.t()], -1).unwrap();
    let h = ndarray::concatenate(
        Axis(1),
        &[a.to_host().unwrap().t(), b.to_host().unwrap().t()],
    )
    .unwrap();
    assert_eq!(c.to_host().unwrap(), h);
    // Errors name the shapes.
    let e = crate::array::concatenate(&[&a, &b], 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("[2, 3]") && e.contains("[4, 3]"), "{e}");
    assert!(crate::array::concatenate::<i64, &Array<i64>>(&[], 0).is_err());
    assert!(crate::array::stack(&[&a, &b], 0).is_err());
    assert!(crate::array::stack(&[&a], 3).is_err());
    let scalar = Array::<i64>::zeros_on((), &Device::Cpu).unwrap();
    assert!(crate::array::concatenate(&[&scalar], 0).is_err());
    assert_eq!(
        crate::array::stack(&[&scalar, &scalar], 0).unwrap().shape(),
        &[2]
    );
}
