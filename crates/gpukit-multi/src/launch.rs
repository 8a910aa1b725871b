//! `gpukit-launch`: start N copies of a program with torchrun's variables, as
//! `torchrun --standalone --nproc-per-node N` does.
//!
//! ```text
//! gpukit-launch --nproc 2 -- ./my_program arg1 arg2
//! gpukit-launch --nproc 8 --nnodes 2 --node-rank 0 --master-addr node0 --master-port 29500 -- ./prog
//! ```
//!
//! Process `i` of this node gets `LOCAL_RANK=i`, `RANK=node_rank*nproc+i`,
//! `WORLD_SIZE=nnodes*nproc`, `LOCAL_WORLD_SIZE=nproc`, `MASTER_ADDR`, `MASTER_PORT` (on one
//! node: a free local port unless given) and `NCCL_NVLS_ENABLE=0`. When one process fails, the
//! others are stopped and the launcher exits with the failed one's code.

use gpukit::{Error, Result};
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

/// What to launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Processes on this node.
    pub nproc: usize,
    /// Nodes in the job.
    pub nnodes: usize,
    /// This node's number, `0..nnodes`.
    pub node_rank: usize,
    /// Rank 0's address.
    pub master_addr: String,
    /// Rank 0's port (`None`: a free local port, one node only).
    pub master_port: Option<u16>,
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// The usage text.
pub const USAGE: &str = "usage: gpukit-launch --nproc N [--nnodes M --node-rank K] \
[--master-addr ADDR] [--master-port PORT] -- PROGRAM [ARGS...]";

impl LaunchConfig {
    /// Parses the launcher's arguments (without the program name); an error names what is
    /// wrong and shows the usage.
    pub fn parse(args: &[String]) -> Result<LaunchConfig> {
        let bad = |m: String| Error::Other(format!("{m}\n{USAGE}"));
        let mut c = LaunchConfig {
            nproc: 0,
            nnodes: 1,
            node_rank: 0,
            master_addr: "127.0.0.1".into(),
            master_port: None,
            program: String::new(),
            args: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "--" {
                let rest: Vec<String> = it.by_ref().cloned().collect();
                let Some((p, r)) = rest.split_first() else {
                    return Err(bad("no program after --".into()));
                };
                c.program = p.clone();
                c.args = r.to_vec();
                break;
            }
            let (key, inline) = match a.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (a.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| bad(format!("{key} needs a value")))
            };
            let num = |k: &str, v: String| {
                v.parse::<usize>()
                    .map_err(|_| bad(format!("{k} {v:?} is not a whole number")))
            };
            match key.as_str() {
                "--nproc" | "--nproc-per-node" | "--nproc_per_node" => {
                    c.nproc = num(&key, value()?)?
                }
                "--nnodes" => c.nnodes = num(&key, value()?)?,
                "--node-rank" | "--node_rank" => c.node_rank = num(&key, value()?)?,
                "--master-addr" | "--master_addr" => c.master_addr = value()?,
                "--master-port" | "--master_port" => {
                    let v = value()?;
                    c.master_port = Some(
                        v.parse()
                            .map_err(|_| bad(format!("--master-port {v:?} is not a port")))?,
                    )
                }
                other => return Err(bad(format!("unknown option {other}"))),
            }
        }
        if c.program.is_empty() {
            return Err(bad("no program given (put it after --)".into()));
        }
        if c.nproc == 0 || c.nnodes == 0 {
            return Err(bad("--nproc and --nnodes must be at least 1".into()));
        }
        if c.node_rank >= c.nnodes {
            return Err(bad(format!(
                "--node-rank {} with --nnodes {}",
                c.node_rank, c.nnodes
            )));
        }
        if c.nnodes > 1 && c.master_port.is_none() {
            c.master_port = Some(29500);
        }
        Ok(c)
    }

    /// The variables of local process `local_rank`, with rank 0 at `port`.
    pub fn env_for(&self, local_rank: usize, port: u16) -> Vec<(String, String)> {
        vec![
            (
                "RANK".into(),
                (self.node_rank * self.nproc + local_rank).to_string(),
            ),
            ("LOCAL_RANK".into(), local_rank.to_string()),
            ("WORLD_SIZE".into(), (self.nnodes * self.nproc).to_string()),
            ("LOCAL_WORLD_SIZE".into(), self.nproc.to_string()),
            ("MASTER_ADDR".into(), self.master_addr.clone()),
            ("MASTER_PORT".into(), port.to_string()),
            (crate::env::NVLS_VAR.into(), "0".into()),
        ]
    }

    /// Starts the processes and waits for them; returns each local process's exit status (in
    /// local-rank order). When one fails, the others are stopped (and show as killed).
    pub fn run(&self) -> Result<Vec<ExitStatus>> {
        self.run_with(|_| {})
    }

    /// [`LaunchConfig::run`], letting `adjust` add to each process's command (extra variables,
    /// output redirection) before it starts.
    pub fn run_with(&self, adjust: impl Fn(&mut Command)) -> Result<Vec<ExitStatus>> {
        if let Ok(v) = std::env::var(crate::env::NVLS_VAR) {
            if v.trim() != "0" {
                return Err(Error::Other(format!(
                    "{}={v:?}: the launcher keeps NVLink multicast off; unset it or set 0",
                    crate::env::NVLS_VAR
                )));
            }
        }
        let port = match self.master_port {
            Some(p) => p,
            None => free_port(&self.master_addr)?,
        };
        let mut children: Vec<Child> = Vec::with_capacity(self.nproc);
        for local in 0..self.nproc {
            let mut cmd = Command::new(&self.program);
            cmd.args(&self.args).envs(self.env_for(local, port));
            adjust(&mut cmd);
            match cmd.spawn() {
                Ok(c) => children.push(c),
                Err(e) => {
                    stop(&mut children);
                    return Err(Error::Other(format!(
                        "gpukit-launch: cannot start {}: {e}",
                        self.program
                    )));
                }
            }
        }
        let mut statuses: Vec<Option<ExitStatus>> = vec![None; self.nproc];
        loop {
            let mut failed = false;
            for (i, c) in children.iter_mut().enumerate() {
                if statuses[i].is_none() {
                    if let Ok(Some(s)) = c.try_wait() {
                        failed |= !s.success();
                        statuses[i] = Some(s);
                    }
                }
            }
            if failed {
                stop(&mut children);
                for (i, c) in children.iter_mut().enumerate() {
                    if statuses[i].is_none() {
                        statuses[i] = c.wait().ok();
                    }
                }
            }
            if statuses.iter().all(Option::is_some) {
                return Ok(statuses.into_iter().map(|s| s.expect("all done")).collect());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Stops the launched processes still running (only children this launcher started).
fn stop(children: &mut [Child]) {
    for c in children.iter_mut() {
        if let Ok(None) = c.try_wait() {
            let _ = c.kill();
        }
    }
}

/// A port free on `addr` right now (the OS picks it).
fn free_port(addr: &str) -> Result<u16> {
    std::net::TcpListener::bind((addr, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::Other(format!("no free port on {addr}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_like_torchrun() {
        let c = LaunchConfig::parse(&args("--nproc 2 -- prog a b")).unwrap();
        assert_eq!((c.nproc, c.program.as_str()), (2, "prog"));
        assert_eq!(c.args, vec!["a", "b"]);
        assert_eq!(c.master_port, None);
        let c = LaunchConfig::parse(&args(
            "--nproc-per-node=4 --nnodes 2 --node-rank 1 --master-addr n0 -- p",
        ))
        .unwrap();
        assert_eq!(c.master_port, Some(29500));
        let env = c.env_for(3, 29500);
        assert!(env.contains(&("RANK".into(), "7".into())));
        assert!(env.contains(&("WORLD_SIZE".into(), "8".into())));
        assert!(env.contains(&("LOCAL_RANK".into(), "3".into())));
        assert!(env.contains(&("NCCL_NVLS_ENABLE".into(), "0".into())));
    }

    #[test]
    fn bad_arguments_are_errors_with_usage() {
        for bad in [
            "",
            "--nproc 2",
            "--nproc x -- p",
            "--nproc 0 -- p",
            "--bogus 1 -- p",
            "--nnodes 2 --node-rank 2 --nproc 1 -- p",
        ] {
            let e = LaunchConfig::parse(&args(bad)).unwrap_err().to_string();
            assert!(e.contains("usage:"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_failing_process_stops_the_others() {
        // `sh -c` exits 3 on local rank 1 and sleeps on the others.
        let c = LaunchConfig::parse(&[
            "--nproc".into(),
            "3".into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            "if [ \"$LOCAL_RANK\" = 1 ]; then exit 3; fi; sleep 30".into(),
        ])
        .unwrap();
        let t = std::time::Instant::now();
        let s = c.run().unwrap();
        assert_eq!(s[1].code(), Some(3));
        assert!(!s[0].success() && !s[2].success());
        assert!(t.elapsed() < Duration::from_secs(20));
    }
}
