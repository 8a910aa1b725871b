//! Beyond one process: rank, world size and rendezvous from the environment, torchrun style.
//!
//! Every process reads `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT` (and `LOCAL_RANK`,
//! optional) — the variables `torchrun`, [`gpukit-launch`](crate::launch), Slurm wrappers and
//! MPI launch scripts set. Rank 0 listens on `MASTER_ADDR:MASTER_PORT`; every other rank
//! connects to it (retrying until the timeout, since processes start in any order) and says
//! who it is. The connections form a star through rank 0 that carries small messages: NCCL's
//! unique id, and the host collectives of processes without NCCL ([`ProcessGroup::exchange`]).
//!
//! Wire format (all integers little-endian): a rank's hello is `GPUKITRV`, version `u32` 1,
//! rank `u32`, world size `u32`; rank 0 answers a status byte (0 = welcome) and a frame with
//! its message. A frame is a `u64` length and that many bytes.

use gpukit::{Device, Error, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The variable giving the rendezvous timeout in seconds (default 120).
pub const RENDEZVOUS_TIMEOUT_VAR: &str = "GPUKIT_RENDEZVOUS_TIMEOUT";

const MAGIC: &[u8; 8] = b"GPUKITRV";
const VERSION: u32 = 1;
/// Larger frames are refused as corrupt (no collective message is near this size).
const MAX_FRAME: u64 = 1 << 40;

/// Where this process stands among the processes of one job, and how to find rank 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendezvous {
    /// This process's rank, `0..world_size`.
    pub rank: usize,
    /// Number of processes.
    pub world_size: usize,
    /// This process's number on its host (picks its GPU), if the launcher set `LOCAL_RANK`.
    pub local_rank: Option<usize>,
    /// Rank 0's host name or address.
    pub master_addr: String,
    /// Rank 0's port.
    pub master_port: u16,
    /// How long connecting and the hello may take.
    pub timeout: Duration,
}

fn var(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(e) => Err(Error::Other(format!("{name}: {e}"))),
    }
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T> {
    v.parse()
        .map_err(|_| Error::Other(format!("{name}={v:?} is not a whole number")))
}

impl Rendezvous {
    /// Reads `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT` and `LOCAL_RANK` (optional).
    /// With none of the first four set, a single process: rank 0 of 1 (nothing to connect).
    /// A missing or malformed variable is an error naming it.
    pub fn from_env() -> Result<Rendezvous> {
        let rank = var("RANK")?;
        let world = var("WORLD_SIZE")?;
        let addr = var("MASTER_ADDR")?;
        let port = var("MASTER_PORT")?;
        let local = var("LOCAL_RANK")?;
        let timeout = match var(RENDEZVOUS_TIMEOUT_VAR)? {
            None => Duration::from_secs(120),
            Some(v) => Duration::from_secs(number::<u64>(RENDEZVOUS_TIMEOUT_VAR, &v)?),
        };
        if rank.is_none() && world.is_none() && addr.is_none() && port.is_none() {
            return Rendezvous::new(0, 1, "127.0.0.1", 0).map(|r| Rendezvous {
                local_rank: local.as_deref().and_then(|l| l.parse().ok()),
                timeout,
                ..r
            });
        }
        let need = |name: &str, v: Option<String>| {
            v.ok_or_else(|| {
                Error::Other(format!(
                    "{name} is not set (a multi-process run needs RANK, WORLD_SIZE, MASTER_ADDR \
                     and MASTER_PORT; gpukit-launch, torchrun or srun set them)"
                ))
            })
        };
        let rank: usize = number("RANK", &need("RANK", rank)?)?;
        let world: usize = number("WORLD_SIZE", &need("WORLD_SIZE", world)?)?;
        let port: u16 = number("MASTER_PORT", &need("MASTER_PORT", port)?)?;
        let addr = need("MASTER_ADDR", addr)?;
        let mut r = Rendezvous::new(rank, world, &addr, port)?;
        r.local_rank = match local {
            None => None,
            Some(l) => Some(number("LOCAL_RANK", &l)?),
        };
        r.timeout = timeout;
        Ok(r)
    }

    /// A rendezvous for `rank` of `world` with rank 0 at `addr:port`; an error when the rank
    /// is out of range.
    pub fn new(rank: usize, world: usize, addr: &str, port: u16) -> Result<Rendezvous> {
        if world == 0 || rank >= world {
            return Err(Error::Other(format!(
                "RANK={rank} with WORLD_SIZE={world}: the rank must be in 0..{world}"
            )));
        }
        Ok(Rendezvous {
            rank,
            world_size: world,
            local_rank: None,
            master_addr: addr.to_string(),
            master_port: port,
            timeout: Duration::from_secs(120),
        })
    }

    fn master(&self) -> Result<SocketAddr> {
        (self.master_addr.as_str(), self.master_port)
            .to_socket_addrs()
            .map_err(|e| {
                Error::Other(format!(
                    "MASTER_ADDR={}:{}: {e}",
                    self.master_addr, self.master_port
                ))
            })?
            .next()
            .ok_or_else(|| Error::Other(format!("MASTER_ADDR={} has no address", self.master_addr)))
    }

    /// Meets the other processes: rank 0 listens and waits for every rank's hello, the others
    /// connect (retrying until the timeout). Returns the connected group.
    pub fn connect(&self) -> Result<ProcessGroup> {
        let links = if self.world_size == 1 {
            Links::Single
        } else if self.rank == 0 {
            Links::Root(self.accept_all()?)
        } else {
            Links::Leaf(self.join()?)
        };
        Ok(ProcessGroup {
            rank: self.rank,
            world: self.world_size,
            local_rank: self.local_rank,
            links: Arc::new(Mutex::new(links)),
            io_timeout: crate::collective::timeout()?,
        })
    }

    fn accept_all(&self) -> Result<Vec<Option<TcpStream>>> {
        let addr = self.master()?;
        let listener = TcpListener::bind(addr)
            .map_err(|e| Error::Other(format!("rank 0 cannot listen on {addr}: {e}")))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Other(format!("listener: {e}")))?;
        let deadline = Instant::now() + self.timeout;
        let mut peers: Vec<Option<TcpStream>> = (0..self.world_size).map(|_| None).collect();
        let mut joined = 1;
        while joined < self.world_size {
            match listener.accept() {
                Ok((mut s, from)) => {
                    s.set_nonblocking(false).ok();
                    s.set_nodelay(true).ok();
                    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
                    let (rank, world) = read_hello(&mut s)
                        .map_err(|e| Error::Other(format!("hello from {from}: {e}")))?;
                    let problem = if world != self.world_size {
                        Some(format!(
                            "it says WORLD_SIZE={world}, rank 0 has {}",
                            self.world_size
                        ))
                    } else if rank == 0 || rank >= world {
                        Some(format!("rank {rank} is not in 1..{world}"))
                    } else if peers[rank].is_some() {
                        Some(format!("rank {rank} has already joined"))
                    } else {
                        None
                    };
                    if let Some(p) = problem {
                        let _ = answer(&mut s, 1, &p);
                        return Err(Error::Other(format!(
                            "rendezvous: a process at {from} was refused: {p}"
                        )));
                    }
                    s.set_read_timeout(None).ok();
                    peers[rank] = Some(s);
                    joined += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let missing: Vec<usize> = (1..self.world_size)
                            .filter(|r| peers[*r].is_none())
                            .collect();
                        return Err(Error::Other(format!(
                            "rendezvous on {addr}: ranks {missing:?} did not join within {:?} \
                             ({RENDEZVOUS_TIMEOUT_VAR} sets the wait)",
                            self.timeout
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(Error::Other(format!("rendezvous accept on {addr}: {e}"))),
            }
        }
        for s in peers.iter_mut().flatten() {
            answer(s, 0, "welcome").map_err(|e| Error::Other(format!("rendezvous: {e}")))?;
        }
        Ok(peers)
    }

    fn join(&self) -> Result<TcpStream> {
        let addr = self.master()?;
        let deadline = Instant::now() + self.timeout;
        let mut s = loop {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                Ok(s) => break s,
                Err(e) => {
                    if Instant::now() >= deadline {
                        return Err(Error::Other(format!(
                            "rank {} could not reach rank 0 at {addr} within {:?}: {e}",
                            self.rank, self.timeout
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        };
        s.set_nodelay(true).ok();
        let mut hello = Vec::with_capacity(20);
        hello.extend_from_slice(MAGIC);
        hello.extend_from_slice(&VERSION.to_le_bytes());
        hello.extend_from_slice(&(self.rank as u32).to_le_bytes());
        hello.extend_from_slice(&(self.world_size as u32).to_le_bytes());
        let io = |e: std::io::Error| Error::Other(format!("rank {} rendezvous: {e}", self.rank));
        s.write_all(&hello).map_err(io)?;
        s.set_read_timeout(Some(self.timeout)).ok();
        let mut status = [0u8; 1];
        s.read_exact(&mut status).map_err(io)?;
        let msg = read_frame(&mut s).map_err(io)?;
        s.set_read_timeout(None).ok();
        if status[0] != 0 {
            return Err(Error::Other(format!(
                "rank 0 refused rank {}: {}",
                self.rank,
                String::from_utf8_lossy(&msg)
            )));
        }
        Ok(s)
    }
}

fn read_hello(s: &mut TcpStream) -> std::io::Result<(usize, usize)> {
    let mut b = [0u8; 20];
    s.read_exact(&mut b)?;
    if &b[..8] != MAGIC {
        return Err(std::io::Error::other("not a gpukit-multi rendezvous hello"));
    }
    let u = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    if u(8) != VERSION {
        return Err(std::io::Error::other(format!(
            "rendezvous version {} (this is {VERSION})",
            u(8)
        )));
    }
    Ok((u(12) as usize, u(16) as usize))
}

fn answer(s: &mut TcpStream, status: u8, msg: &str) -> std::io::Result<()> {
    s.write_all(&[status])?;
    write_frame(s, msg.as_bytes())
}

fn write_frame(s: &mut TcpStream, b: &[u8]) -> std::io::Result<()> {
    s.write_all(&(b.len() as u64).to_le_bytes())?;
    s.write_all(b)
}

fn read_frame(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut n = [0u8; 8];
    s.read_exact(&mut n)?;
    let n = u64::from_le_bytes(n);
    if n > MAX_FRAME {
        return Err(std::io::Error::other(format!("a frame of {n} bytes")));
    }
    let mut b = vec![0u8; n as usize];
    s.read_exact(&mut b)?;
    Ok(b)
}

enum Links {
    Single,
    Root(Vec<Option<TcpStream>>),
    Leaf(TcpStream),
}

/// The processes of one job after the rendezvous: who this one is and the connections to
/// rank 0. Cloning shares the connections.
#[derive(Clone)]
pub struct ProcessGroup {
    rank: usize,
    world: usize,
    local_rank: Option<usize>,
    links: Arc<Mutex<Links>>,
    io_timeout: Duration,
}

impl std::fmt::Debug for ProcessGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessGroup")
            .field("rank", &self.rank)
            .field("world", &self.world)
            .field("local_rank", &self.local_rank)
            .finish()
    }
}

impl ProcessGroup {
    /// The rendezvous from the environment ([`Rendezvous::from_env`]), connected.
    pub fn from_env() -> Result<ProcessGroup> {
        Rendezvous::from_env()?.connect()
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of processes.
    pub fn world_size(&self) -> usize {
        self.world
    }

    /// `LOCAL_RANK`, if it was set.
    pub fn local_rank(&self) -> Option<usize> {
        self.local_rank
    }

    /// The device this process should use: GPU `LOCAL_RANK % count` (else `rank % count`)
    /// where GPUs are usable, else the CPU.
    pub fn device(&self) -> Device {
        let n = gpukit::cuda_device_count();
        if n == 0 {
            return Device::Cpu;
        }
        Device::Cuda(self.local_rank.unwrap_or(self.rank) % n)
    }

    /// Sends `mine` and returns every process's bytes in rank order (an all-gather of byte
    /// strings through rank 0). Every process must call it at the same point.
    pub fn exchange(&self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        let mut links = self.links.lock().unwrap_or_else(|p| p.into_inner());
        let io = |peer: usize, e: std::io::Error| {
            Error::Other(format!(
                "rank {} exchanging with rank {peer}: {e} (a process may have failed; {} sets \
                 the wait)",
                self.rank,
                crate::collective::COLLECTIVE_TIMEOUT_VAR
            ))
        };
        match &mut *links {
            Links::Single => Ok(vec![mine]),
            Links::Root(peers) => {
                let mut all = vec![mine];
                for (r, s) in peers.iter_mut().enumerate().skip(1) {
                    let s = s.as_mut().expect("every rank joined");
                    s.set_read_timeout(Some(self.io_timeout)).ok();
                    all.push(read_frame(s).map_err(|e| io(r, e))?);
                }
                for (r, s) in peers.iter_mut().enumerate().skip(1) {
                    let s = s.as_mut().expect("every rank joined");
                    (|| {
                        s.write_all(&(all.len() as u64).to_le_bytes())?;
                        for b in &all {
                            write_frame(s, b)?;
                        }
                        s.flush()
                    })()
                    .map_err(|e| io(r, e))?;
                }
                Ok(all)
            }
            Links::Leaf(s) => {
                s.set_read_timeout(Some(self.io_timeout)).ok();
                write_frame(s, &mine).map_err(|e| io(0, e))?;
                let mut n = [0u8; 8];
                s.read_exact(&mut n).map_err(|e| io(0, e))?;
                let n = u64::from_le_bytes(n) as usize;
                if n != self.world {
                    return Err(Error::Other(format!(
                        "rank 0 sent {n} parts for a world of {}",
                        self.world
                    )));
                }
                (0..n)
                    .map(|_| read_frame(s).map_err(|e| io(0, e)))
                    .collect()
            }
        }
    }

    /// Returns once every process has called it.
    pub fn barrier(&self) -> Result<()> {
        self.exchange(Vec::new()).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn three_ranks_meet_and_exchange_on_localhost() {
        let port = free_port();
        let threads: Vec<_> = (0..3)
            .map(|r| {
                std::thread::spawn(move || {
                    let rv = Rendezvous::new(r, 3, "127.0.0.1", port).unwrap();
                    let g = rv.connect().unwrap();
                    for round in 0..5u8 {
                        let all = g.exchange(vec![r as u8; r + round as usize]).unwrap();
                        for (i, b) in all.iter().enumerate() {
                            assert_eq!(b, &vec![i as u8; i + round as usize]);
                        }
                    }
                    g.barrier().unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_wrong_world_size_is_refused_with_a_reason() {
        let port = free_port();
        let root = std::thread::spawn(move || {
            let mut rv = Rendezvous::new(0, 2, "127.0.0.1", port).unwrap();
            rv.timeout = Duration::from_secs(10);
            rv.connect().map(|_| ())
        });
        let mut rv = Rendezvous::new(1, 3, "127.0.0.1", port).unwrap();
        rv.timeout = Duration::from_secs(10);
        let e = rv.connect().unwrap_err().to_string();
        assert!(e.contains("WORLD_SIZE=3"), "{e}");
        assert!(root.join().unwrap().is_err());
    }

    #[test]
    fn nobody_listening_is_a_timeout_not_a_hang() {
        let mut rv = Rendezvous::new(1, 2, "127.0.0.1", free_port()).unwrap();
        rv.timeout = Duration::from_millis(300);
        let e = rv.connect().unwrap_err().to_string();
        assert!(e.contains("could not reach rank 0"), "{e}");
    }

    #[test]
    fn out_of_range_rank_is_an_error() {
        assert!(Rendezvous::new(2, 2, "127.0.0.1", 1).is_err());
        assert!(Rendezvous::new(0, 0, "127.0.0.1", 1).is_err());
    }
}
