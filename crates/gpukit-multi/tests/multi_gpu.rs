//! gpukit-multi on real GPUs: the pool with one worker per GPU, partitioned results against one
//! device, collectives (NCCL where libnccl loads), transfers, and two processes whose NCCL
//! talks over sockets only.
//!
//! Every test skips visibly ("skipped: ...") without a usable GPU, or fails there with
//! `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). With one GPU the pool has one worker (the
//! tests say so) and the two-process test skips: NCCL needs a GPU per rank. With two or more,
//! the collectives run through NCCL across them.

use gpukit::testing::serial_gpu_or_skip as gpu;
use gpukit::{Array, Device};
use gpukit_multi::launch::LaunchConfig;
use gpukit_multi::{
    transfer, CollectiveBackend, CombinePath, Communicator, DevicePool, DistArray, ProcessGroup,
    ReduceOp, TransferPath,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn pool() -> DevicePool {
    let pool = DevicePool::new().expect("a pool on the GPUs");
    let n = pool.len();
    assert!(pool.devices().iter().all(|d| d.is_cuda()), "{pool}");
    if n == 1 {
        println!("one GPU: the pool has one worker (collectives run with one rank)");
    }
    println!("{pool}");
    pool
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn nccl_is_found_next_to_pytorch() {
    let Some(_g) = gpu() else { return };
    match gpukit_multi::nccl::library() {
        Ok(lib) => println!("NCCL {} from {}", lib.version(), lib.path()),
        Err(e) => panic!("{e}"),
    }
    assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"));
}

#[test]
fn partitioned_results_equal_one_gpu_on_random_data() {
    let Some((dev0, _g)) = gpu() else { return };
    let pool = pool();
    let backend = pool.init_collectives().unwrap();
    println!("collectives: {backend}");
    let mut r = StdRng::seed_from_u64(5);
    for (rows, cols) in [(1_000_003, 4), (17, 3), (2, 1)] {
        let v: Vec<f64> = (0..rows * cols)
            .map(|_| r.random_range(-1.0..1.0))
            .collect();
        let w: Vec<f64> = (0..rows * cols)
            .map(|_| r.random_range(-1.0..1.0))
            .collect();
        let a = Array::from_vec_on(v.clone(), vec![rows, cols], &dev0).unwrap();
        let b = Array::from_vec_on(w, vec![rows, cols], &dev0).unwrap();
        let da = DistArray::scatter(&pool, &a).unwrap();
        let db = DistArray::scatter(&pool, &b).unwrap();
        assert_eq!(
            da.partition_devices(),
            pool.devices()[..da.num_partitions()].to_vec()
        );
        let path = da.combine_path().unwrap();
        println!("{rows}x{cols}: reductions combine through {path:?}");
        if matches!(backend, CollectiveBackend::Nccl { .. }) {
            assert_eq!(path, CombinePath::Nccl);
        }
        assert!(close(da.sum().unwrap(), a.sum().unwrap(), 1e-9));
        assert!(close(da.mean().unwrap(), a.mean().unwrap(), 1e-9));
        assert_eq!(da.min().unwrap(), a.min().unwrap());
        assert_eq!(da.max().unwrap(), a.max().unwrap());
        let single = (((&a * 3.0).unwrap() - &b).unwrap() / 2.0).unwrap();
        let dist = (((&da * 3.0).unwrap() - &db).unwrap() / 2.0).unwrap();
        assert_eq!(
            dist.gather().unwrap().to_vec().unwrap(),
            single.to_vec().unwrap()
        );
        let on0 = dist.gather_to(&dev0).unwrap();
        assert_eq!(on0.device(), dev0);
        assert_eq!(on0.to_vec().unwrap(), single.to_vec().unwrap());
    }
    // integers are exact through any path
    let v: Vec<i64> = (0..100_000).map(|_| r.random_range(-1000..1000)).collect();
    let d = DistArray::scatter(
        &pool,
        &Array::from_vec_on(v.clone(), vec![v.len()], &dev0).unwrap(),
    )
    .unwrap();
    assert_eq!(d.sum().unwrap(), v.iter().sum::<i64>());
}

#[test]
fn collectives_across_the_pool_gpus() {
    let Some((_d, _g)) = gpu() else { return };
    let pool = pool();
    let n = pool.len();
    println!("collectives: {}", pool.init_collectives().unwrap());
    let parts = |f: &dyn Fn(usize) -> Vec<f32>, len: usize| -> Vec<Array<f32>> {
        pool.devices()
            .iter()
            .enumerate()
            .map(|(r, d)| Array::from_vec_on(f(r), vec![len], d).unwrap())
            .collect()
    };
    let len = 1 << 20;
    let out = pool
        .all_reduce(parts(&|r| vec![(r + 1) as f32; len], len), ReduceOp::Sum)
        .unwrap();
    let want = (n * (n + 1) / 2) as f32;
    for o in &out {
        assert!(o.to_vec().unwrap().iter().all(|&x| x == want));
    }
    let out = pool
        .broadcast(parts(&|r| vec![r as f32; 8], 8), n - 1)
        .unwrap();
    assert!(out
        .iter()
        .all(|o| o.to_vec().unwrap() == vec![(n - 1) as f32; 8]));
    let out = pool.all_gather(parts(&|r| vec![r as f32; 2], 2)).unwrap();
    let want: Vec<f32> = (0..n).flat_map(|r| [r as f32; 2]).collect();
    assert!(out.iter().all(|o| o.to_vec().unwrap() == want));
    let out = pool
        .reduce_scatter(
            parts(&|_| (0..2 * n).map(|i| i as f32).collect(), 2 * n),
            ReduceOp::Max,
        )
        .unwrap();
    for (r, o) in out.iter().enumerate() {
        assert_eq!(
            o.to_vec().unwrap(),
            vec![(2 * r) as f32, (2 * r + 1) as f32]
        );
    }
    // the same between the partitions of a distributed array (one per GPU)
    let d = DistArray::<i64>::from_map(&pool, n, move |ctx, i| {
        Array::from_vec_on(vec![i as i64 + 1; 4 * n], vec![n, 4], &ctx.device())
    })
    .unwrap();
    let r = d.all_reduce(ReduceOp::Sum).unwrap();
    let want = (n * (n + 1) / 2) as i64;
    assert!(r
        .gather()
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == want));
    let s = d.reduce_scatter(ReduceOp::Max).unwrap();
    assert_eq!(s.partition_rows(), vec![1; n]);
    assert!(s
        .gather()
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == n as i64));
}

#[test]
fn transfers_say_which_path_they_took() {
    let Some((dev0, _g)) = gpu() else { return };
    let v: Vec<f32> = (0..1_000_000).map(|i| i as f32).collect();
    let a = Array::from_vec_on(v.clone(), vec![1000, 1000], &dev0).unwrap();
    let t = transfer(&a, Device::Cpu).unwrap();
    assert_eq!(t.path, TransferPath::DeviceToHost);
    let back = transfer(&t.array, dev0).unwrap();
    assert_eq!(back.path, TransferPath::HostToDevice);
    assert_eq!(transfer(&a, dev0).unwrap().path, TransferPath::SameDevice);
    if gpukit::cuda_device_count() < 2 {
        println!("one GPU: no GPU-to-GPU path to try");
        return;
    }
    let dev1 = Device::cuda(1).unwrap();
    let peer = gpukit_multi::can_access_peer(0, 1).unwrap();
    let t = transfer(&a, dev1).unwrap();
    println!("cuda:0 -> cuda:1: {} (can_access_peer: {peer})", t.path);
    assert_eq!(
        t.path,
        if peer {
            TransferPath::PeerToPeer
        } else {
            TransferPath::StagedPinnedHost
        }
    );
    assert_eq!(t.array.device(), dev1);
    assert_eq!(t.array.shape(), &[1000, 1000]);
    assert_eq!(t.array.to_vec().unwrap(), v);
    let s = gpukit_multi::staged_copy(&a, dev1).unwrap();
    assert_eq!(s.to_vec().unwrap(), v);
}

#[test]
fn a_failing_gpu_job_does_not_poison_its_worker() {
    let Some((_d, _g)) = gpu() else { return };
    let pool = pool();
    let w = pool.len() - 1;
    pool.submit(w, |ctx| {
        let a = Array::<f64>::ones(vec![1000])?;
        assert_eq!(a.device(), ctx.device());
        ctx.put("a", a);
        Ok(())
    })
    .unwrap()
    .wait()
    .unwrap();
    let e = pool
        .submit(w, |ctx| {
            let a = ctx.get::<Array<f64>>("a").unwrap();
            let b = Array::<f64>::ones(vec![3])?;
            (a + &b).map(|_| ())
        })
        .unwrap()
        .wait()
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("worker {w} (cuda:{w})")), "{e}");
    let e = pool
        .submit(w, |_| -> gpukit::Result<()> { panic!("on purpose") })
        .unwrap()
        .wait()
        .unwrap_err()
        .to_string();
    assert!(e.contains("on purpose"), "{e}");
    let s = pool
        .submit(w, |ctx| ctx.get::<Array<f64>>("a").unwrap().sum())
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(s, 1000.0);
}

const OUT_VAR: &str = "GPUKIT_MULTI_TEST_OUT";

#[test]
#[ignore = "a child process of nccl_two_processes_over_sockets"]
fn child_nccl_all_reduce() {
    let Ok(out) = std::env::var(OUT_VAR) else {
        println!("child test: run by nccl_two_processes_over_sockets");
        return;
    };
    let group = ProcessGroup::from_env().expect("rendezvous");
    let device = group.device();
    let comm = Communicator::from_group(&group, device).expect("NCCL communicator");
    assert!(
        matches!(comm.backend(), CollectiveBackend::Nccl { .. }),
        "{:?}",
        comm.backend()
    );
    let n = 1 << 24;
    let mut a = Array::<f32>::full_on(vec![n], (group.rank() + 1) as f32, &device).unwrap();
    comm.all_reduce(&mut a, ReduceOp::Sum).unwrap();
    let w = group.world_size();
    let want = (w * (w + 1) / 2) as f32;
    // every element is the sum of the ranks' values (min and max read on the GPU)
    let (min, max) = (a.min().unwrap(), a.max().unwrap());
    assert_eq!((min, max), (want, want));
    std::fs::write(
        format!("{out}/rank{}.txt", group.rank()),
        format!(
            "rank {} on {device}: {} ; all-reduce of {n} elements: every element {min}\n",
            group.rank(),
            comm.backend()
        ),
    )
    .unwrap();
}

/// The lead's command for this on a 2-GPU machine is in docs/multi-gpu.md ("Two processes,
/// NCCL over sockets").
#[test]
fn nccl_two_processes_over_sockets() {
    let Some((_d, g)) = gpu() else { return };
    let count = gpukit::cuda_device_count();
    if count < 2 {
        println!("skipped: needs 2 GPUs (NCCL wants one GPU per rank), found {count}");
        return;
    }
    let _serial = g; // keep the other GPU tests of this binary off the GPUs meanwhile
    let dir = std::env::temp_dir().join(format!("gpukit-multi-nccl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = LaunchConfig {
        nproc: 2,
        nnodes: 1,
        node_rank: 0,
        master_addr: "127.0.0.1".into(),
        master_port: None,
        program: std::env::current_exe().unwrap().display().to_string(),
        args: [
            "--ignored",
            "--exact",
            "child_nccl_all_reduce",
            "--nocapture",
            "--test-threads",
            "1",
        ]
        .map(String::from)
        .to_vec(),
    };
    let statuses = config
        .run_with(|cmd| {
            cmd.env(OUT_VAR, &dir)
                .env("NCCL_P2P_DISABLE", "1")
                .env("NCCL_SHM_DISABLE", "1")
                .env("NCCL_IB_DISABLE", "1")
                .env("NCCL_DEBUG", "WARN");
        })
        .unwrap();
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");
    let want = format!("all-reduce of {} elements: every element 3\n", 1 << 24);
    for r in 0..2 {
        let line = std::fs::read_to_string(dir.join(format!("rank{r}.txt")))
            .unwrap_or_else(|e| panic!("rank {r} wrote no result: {e}"));
        print!("{line}");
        assert!(line.ends_with(&want), "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
