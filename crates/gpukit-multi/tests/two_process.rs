//! The multi-process path on one machine without NCCL: two processes started by the launcher
//! library (as `gpukit-launch --nproc 2` does) meet through the TCP rendezvous and run the
//! collectives over its sockets on the CPU. Each child checks its results against values it
//! computes itself and writes a line to a file the parent reads, so a child that did not run
//! cannot pass.

use gpukit::{Array, Device};
use gpukit_multi::launch::LaunchConfig;
use gpukit_multi::{CollectiveBackend, Communicator, ProcessGroup, ReduceOp};

const OUT_VAR: &str = "GPUKIT_MULTI_TEST_OUT";

/// The data rank `r` contributes (deterministic, so every rank can compute every rank's).
fn data(r: usize, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + r * 13) % 101) as f64 * 0.25 - 3.0 + r as f64)
        .collect()
}

#[test]
#[ignore = "a child process of two_processes_all_reduce_over_sockets"]
fn child_all_reduce_over_sockets() {
    let Ok(out) = std::env::var(OUT_VAR) else {
        println!("child test: run by two_processes_all_reduce_over_sockets");
        return;
    };
    let group = ProcessGroup::from_env().expect("rendezvous");
    let (rank, world) = (group.rank(), group.world_size());
    let comm = Communicator::from_group(&group, Device::Cpu).expect("communicator");
    assert_eq!(comm.backend(), &CollectiveBackend::Sockets);
    let n = 10_000;
    let mut a = Array::from_vec_on(data(rank, n), vec![n], &Device::Cpu).unwrap();
    comm.all_reduce(&mut a, ReduceOp::Sum).unwrap();
    let mut expected = data(0, n);
    for r in 1..world {
        for (e, x) in expected.iter_mut().zip(data(r, n)) {
            *e += x;
        }
    }
    assert_eq!(a.to_vec().unwrap(), expected);
    let g = comm
        .all_gather(&Array::from_vec_on(vec![rank as i64; 2], vec![2], &Device::Cpu).unwrap())
        .unwrap();
    assert_eq!(
        g.to_vec().unwrap(),
        (0..world).flat_map(|r| [r as i64; 2]).collect::<Vec<_>>()
    );
    let mut b = Array::from_vec_on(vec![rank as f32 + 1.0; 3], vec![3], &Device::Cpu).unwrap();
    comm.broadcast(&mut b, 1).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![2.0; 3]);
    let rs = comm
        .reduce_scatter(
            &Array::from_vec_on(vec![1u32; 2 * world], vec![2 * world], &Device::Cpu).unwrap(),
            ReduceOp::Sum,
        )
        .unwrap();
    assert_eq!(rs.to_vec().unwrap(), vec![world as u32; 2]);
    comm.barrier().unwrap();
    let total: f64 = expected.iter().sum();
    std::fs::write(
        format!("{out}/rank{rank}.txt"),
        format!("rank {rank} of {world}: all-reduce sum {total}\n"),
    )
    .unwrap();
}

#[test]
fn two_processes_all_reduce_over_sockets() {
    let dir = std::env::temp_dir().join(format!("gpukit-multi-2p-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    let config = LaunchConfig {
        nproc: 2,
        nnodes: 1,
        node_rank: 0,
        master_addr: "127.0.0.1".into(),
        master_port: None,
        program: exe.display().to_string(),
        args: [
            "--ignored",
            "--exact",
            "child_all_reduce_over_sockets",
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
                .env("GPUKIT_RENDEZVOUS_TIMEOUT", "60");
        })
        .unwrap();
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");
    let n = 10_000;
    let total: f64 = {
        let mut e = data(0, n);
        for (x, y) in e.iter_mut().zip(data(1, n)) {
            *x += y;
        }
        e.iter().sum()
    };
    for r in 0..2 {
        let line = std::fs::read_to_string(dir.join(format!("rank{r}.txt")))
            .unwrap_or_else(|e| panic!("rank {r} wrote no result: {e}"));
        assert_eq!(line, format!("rank {r} of 2: all-reduce sum {total}\n"));
        print!("{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same job through the `gpukit-launch` binary itself (built beside this test by cargo;
/// where only the test executable was copied, as in the GPU staging, it skips visibly).
#[test]
fn the_launcher_binary_runs_the_same_job() {
    let launcher = std::path::Path::new(env!("CARGO_BIN_EXE_gpukit-launch"));
    if !launcher.exists() {
        println!(
            "skipped: {} is not here (the library path is tested above)",
            launcher.display()
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("gpukit-multi-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = std::process::Command::new(launcher)
        .args(["--nproc", "2", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_all_reduce_over_sockets",
            "--nocapture",
        ])
        .env(OUT_VAR, &dir)
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    for r in 0..2 {
        let line = std::fs::read_to_string(dir.join(format!("rank{r}.txt"))).unwrap();
        assert!(
            line.starts_with(&format!("rank {r} of 2: all-reduce sum")),
            "{line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // a bad command line is refused with the usage and exit code 2
    let out = std::process::Command::new(launcher)
        .args(["--nproc", "0", "--", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage:"));
}
