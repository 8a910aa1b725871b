use super::*;
use crate::collective::ReduceOp;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn host(v: Vec<f64>, shape: Vec<usize>) -> Array<f64> {
    Array::from_vec_on(v, shape, &Device::Cpu).unwrap()
}

fn random(rows: usize, cols: usize, seed: u64) -> Vec<f64> {
    let mut r = StdRng::seed_from_u64(seed);
    (0..rows * cols)
        .map(|_| r.random_range(-1.0..1.0))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn split_rows_is_balanced() {
    assert_eq!(split_rows(10, 3), vec![4, 3, 3]);
    assert_eq!(split_rows(2, 4), vec![1, 1, 0, 0]);
    assert_eq!(split_rows(0, 2), vec![0, 0]);
}

#[test]
fn partitioned_results_equal_single_device_results_on_random_data() {
    let pool = DevicePool::virtual_cpu(4).unwrap();
    for (rows, cols, seed) in [(1001, 3, 1), (7, 5, 2), (3, 1, 3), (10_000, 8, 4)] {
        let v = random(rows, cols, seed);
        let w = random(rows, cols, seed + 100);
        let a = host(v.clone(), vec![rows, cols]);
        let b = host(w.clone(), vec![rows, cols]);
        let da = DistArray::scatter(&pool, &a).unwrap();
        let db = DistArray::scatter(&pool, &b).unwrap();
        assert_eq!(da.shape(), vec![rows, cols]);
        assert_eq!(da.partition_rows().iter().sum::<usize>(), rows);
        assert!(close(da.sum().unwrap(), a.sum().unwrap()));
        assert!(close(da.mean().unwrap(), a.mean().unwrap()));
        assert_eq!(da.min().unwrap(), a.min().unwrap());
        assert_eq!(da.max().unwrap(), a.max().unwrap());
        // elementwise: exactly the single-device values
        let single = ((((&a * 2.0).unwrap() + &b).unwrap() - 0.5).unwrap() / 3.0).unwrap();
        let dist = ((((&da * 2.0).unwrap() + &db).unwrap() - 0.5).unwrap() / 3.0).unwrap();
        assert_eq!(
            dist.gather().unwrap().to_vec().unwrap(),
            single.to_vec().unwrap()
        );
        assert_eq!(dist.gather_to(&Device::Cpu).unwrap().shape(), &[rows, cols]);
        assert_eq!(da.gather().unwrap().to_vec().unwrap(), v);
    }
}

#[test]
fn integers_reduce_exactly() {
    let pool = DevicePool::virtual_cpu(3).unwrap();
    let mut r = StdRng::seed_from_u64(9);
    let v: Vec<i64> = (0..5000).map(|_| r.random_range(-1000..1000)).collect();
    let a = Array::from_vec_on(v.clone(), vec![5000], &Device::Cpu).unwrap();
    let d = DistArray::scatter_into(&pool, &a, 7).unwrap();
    assert_eq!(d.num_partitions(), 7);
    assert_eq!(d.sum().unwrap(), v.iter().sum::<i64>());
    assert_eq!(d.min().unwrap(), *v.iter().min().unwrap());
    assert_eq!(d.max().unwrap(), *v.iter().max().unwrap());
    assert_eq!(d.combine_path().unwrap(), CombinePath::Host);
}

#[test]
fn from_map_and_map_partitions() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let d = DistArray::<f32>::from_map(&pool, 4, |ctx, i| {
        Array::full_on(vec![i + 1, 2], i as f32, &ctx.device())
    })
    .unwrap();
    assert_eq!(d.shape(), vec![10, 2]);
    assert_eq!(d.sum().unwrap(), 2.0 * (2.0 + 2.0 * 3.0 + 3.0 * 4.0));
    let workers = d.map_partitions_collect(|ctx, _| Ok(ctx.index())).unwrap();
    assert_eq!(workers, vec![0, 1, 0, 1]);
    let doubled = d.map_partitions(|_, p| p * 2.0).unwrap();
    assert_eq!(doubled.max().unwrap(), 6.0);
}

#[test]
fn mismatches_are_errors() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let a = DistArray::scatter(&pool, &host(vec![1.0; 4], vec![4])).unwrap();
    let b = DistArray::scatter_into(&pool, &host(vec![1.0; 4], vec![4]), 3).unwrap();
    assert!((&a + &b).is_err());
    assert!(DistArray::scatter(&pool, &host(vec![1.0], vec![])).is_err());
    let parts = vec![
        host(vec![1.0; 4], vec![2, 2]),
        host(vec![1.0; 3], vec![1, 3]),
    ];
    assert!(DistArray::from_partitions(&pool, parts).is_err());
    let empty = DistArray::scatter(&pool, &host(vec![], vec![0])).unwrap();
    assert!(empty.min().is_err());
    assert_eq!(empty.sum().unwrap(), 0.0);
}

#[test]
fn a_failing_partition_job_leaves_the_pool_usable() {
    let pool = DevicePool::virtual_cpu(2).unwrap();
    let d = DistArray::scatter(&pool, &host(vec![1.0; 6], vec![6])).unwrap();
    let e = d
        .map_partitions(|ctx, p| {
            if ctx.index() == 1 {
                return Err(Error::Other("no".into()));
            }
            p + 1.0
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("worker 1 (cpu)"), "{e}");
    assert_eq!(d.sum().unwrap(), 6.0);
}

#[test]
fn collectives_between_partitions() {
    let pool = DevicePool::virtual_cpu(3).unwrap();
    let d = DistArray::<i64>::from_map(&pool, 3, |ctx, i| {
        Array::from_vec_on(
            vec![i as i64, 10 * i as i64, 1, 2, 3, 4],
            vec![3, 2],
            &ctx.device(),
        )
    })
    .unwrap();
    let r = d.all_reduce(ReduceOp::Sum).unwrap();
    assert_eq!(r.shape(), vec![9, 2]);
    for i in 0..3 {
        assert_eq!(
            r.partition(i).unwrap().to_vec().unwrap(),
            vec![3, 30, 3, 6, 9, 12]
        );
    }
    let b = d.broadcast(2).unwrap();
    assert_eq!(
        b.partition(0).unwrap().to_vec().unwrap(),
        vec![2, 20, 1, 2, 3, 4]
    );
    let g = d.all_gather().unwrap();
    assert_eq!(g.partition_rows(), vec![9, 9, 9]);
    assert_eq!(
        g.partition(1).unwrap().to_vec().unwrap()[..6],
        [0, 0, 1, 2, 3, 4]
    );
    let s = d.reduce_scatter(ReduceOp::Max).unwrap();
    assert_eq!(s.partition_rows(), vec![1, 1, 1]);
    assert_eq!(
        s.gather().unwrap().to_vec().unwrap(),
        vec![2, 20, 1, 2, 3, 4]
    );
    // one partition per worker is required
    let e = DistArray::scatter_into(&pool, &d.gather().unwrap(), 2).unwrap();
    assert!(e.all_reduce(ReduceOp::Sum).is_err());
}
