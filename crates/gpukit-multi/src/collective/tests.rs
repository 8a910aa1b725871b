use super::*;
use gpukit::Array;

fn parts(pool: &DevicePool, f: impl Fn(usize) -> Vec<f64>, shape: Vec<usize>) -> Vec<Array<f64>> {
    (0..pool.len())
        .map(|r| Array::from_vec_on(f(r), shape.clone(), &Device::Cpu).unwrap())
        .collect()
}

#[test]
fn virtual_devices_use_shared_memory() {
    let pool = DevicePool::virtual_cpu(4).unwrap();
    assert_eq!(pool.collectives(), None);
    assert_eq!(
        pool.init_collectives().unwrap(),
        CollectiveBackend::SharedMemory
    );
    assert_eq!(pool.collectives(), Some(CollectiveBackend::SharedMemory));
}

#[test]
fn the_four_collectives_on_four_virtual_devices() {
    let pool = DevicePool::virtual_cpu(4).unwrap();
    let out = pool
        .all_reduce(
            parts(&pool, |r| vec![r as f64, 1.0, 2.0 * r as f64], vec![3]),
            ReduceOp::Sum,
        )
        .unwrap();
    for o in &out {
        assert_eq!(o.to_vec().unwrap(), vec![6.0, 4.0, 12.0]);
    }
    let out = pool
        .all_reduce(parts(&pool, |r| vec![r as f64], vec![1]), ReduceOp::Max)
        .unwrap();
    assert_eq!(out[0].to_vec().unwrap(), vec![3.0]);
    let out = pool
        .broadcast(parts(&pool, |r| vec![r as f64; 2], vec![2]), 2)
        .unwrap();
    assert!(out.iter().all(|o| o.to_vec().unwrap() == vec![2.0, 2.0]));
    let out = pool
        .all_gather(parts(&pool, |r| vec![r as f64; 2], vec![1, 2]))
        .unwrap();
    assert_eq!(out[3].shape(), &[4, 2]);
    assert_eq!(
        out[3].to_vec().unwrap(),
        vec![0., 0., 1., 1., 2., 2., 3., 3.]
    );
    let out = pool
        .reduce_scatter(
            parts(&pool, |r| (0..8).map(|i| (i + r) as f64).collect(), vec![8]),
            ReduceOp::Sum,
        )
        .unwrap();
    // sum over r of (i + r) = 4i + 6
    for (r, o) in out.iter().enumerate() {
        assert_eq!(
            o.to_vec().unwrap(),
            vec![(8 * r + 6) as f64, (8 * r + 10) as f64]
        );
    }
}

#[test]
fn mismatched_inputs_are_errors_before_any_rank_waits() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let mut p = parts(&pool, |_| vec![1.0, 2.0], vec![2]);
    p[1] = Array::from_vec_on(vec![1.0], vec![1], &Device::Cpu).unwrap();
    assert!(pool.all_reduce(p, ReduceOp::Sum).is_err());
    assert!(pool
        .all_reduce(
            parts(&pool, |_| vec![1.0], vec![1])[..1].to_vec_owned(),
            ReduceOp::Sum
        )
        .is_err());
    let e = pool
        .reduce_scatter(parts(&pool, |_| vec![1.0; 3], vec![3]), ReduceOp::Sum)
        .unwrap_err()
        .to_string();
    assert!(e.contains("equal blocks"), "{e}");
    // the collectives still work afterwards
    let out = pool
        .all_reduce(parts(&pool, |_| vec![1.0], vec![1]), ReduceOp::Sum)
        .unwrap();
    assert_eq!(out[0].to_vec().unwrap(), vec![2.0]);
}

trait ToVecOwned {
    fn to_vec_owned(&self) -> Vec<Array<f64>>;
}
impl ToVecOwned for [Array<f64>] {
    fn to_vec_owned(&self) -> Vec<Array<f64>> {
        self.iter().map(|a| a.try_clone().unwrap()).collect()
    }
}

#[test]
fn collectives_inside_jobs_and_integers() {
    let pool = DevicePool::virtual_cpu(3).unwrap();
    pool.init_collectives().unwrap();
    let sums = pool
        .on_each(|ctx| {
            let mut a =
                Array::from_vec_on(vec![ctx.index() as i64 + 1; 5], vec![5], &ctx.device())?;
            ctx.comm()?.all_reduce(&mut a, ReduceOp::Sum)?;
            ctx.comm()?.barrier()?;
            let g = ctx.comm()?.all_gather(&Array::from_vec_on(
                vec![ctx.index() as u32],
                vec![],
                &ctx.device(),
            )?)?;
            Ok((a.to_vec()?, g.to_vec()?))
        })
        .unwrap();
    for (a, g) in sums {
        assert_eq!(a, vec![6; 5]);
        assert_eq!(g, vec![0, 1, 2]);
    }
}

#[test]
fn a_failed_rank_is_a_timeout_not_a_hang() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    pool.init_collectives_with_timeout(Duration::from_millis(500))
        .unwrap();
    let h0 = pool
        .submit(0, |ctx| {
            let mut a = Array::<f32>::ones(2)?;
            ctx.comm()?.all_reduce(&mut a, ReduceOp::Sum)
        })
        .unwrap();
    let e = h0.wait().unwrap_err().to_string();
    assert!(e.contains("worker 0") && e.contains("[1]"), "{e}");
    // the workers themselves are fine
    assert_eq!(pool.submit(1, |_| Ok(5)).unwrap().wait().unwrap(), 5);
}
