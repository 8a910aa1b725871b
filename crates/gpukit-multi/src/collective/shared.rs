//! The exchange behind collectives between threads of one process: each rank puts its bytes
//! in a shared round, and once every rank has, each reads all of them.
//!
//! A round is filled, then drained (every rank takes the full set), then reset for the next
//! one; a rank that arrives early for the next round waits until the last reader of the
//! previous one is done. A rank that never arrives (its job failed before the collective) makes
//! the others fail after a timeout, naming the missing ranks, instead of waiting forever; after
//! that the exchange is broken and every later call fails at once (make new communicators with
//! `init_collectives` on a new pool).

use gpukit::{Error, Result};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Bytes of every rank, in rank order.
pub(crate) type Blobs = Arc<Vec<Vec<u8>>>;

/// One exchange shared by `world` ranks (threads).
pub(crate) struct SharedExchange {
    world: usize,
    timeout: Duration,
    state: Mutex<Round>,
    cv: Condvar,
}

struct Round {
    generation: u64,
    slots: Vec<Option<Vec<u8>>>,
    filled: usize,
    done: Option<Blobs>,
    readers_left: usize,
    broken: Option<String>,
}

impl SharedExchange {
    /// An exchange for `world` ranks whose calls give up after `timeout`.
    pub(crate) fn new(world: usize, timeout: Duration) -> Arc<SharedExchange> {
        Arc::new(SharedExchange {
            world,
            timeout,
            state: Mutex::new(Round {
                generation: 0,
                slots: vec![None; world],
                filled: 0,
                done: None,
                readers_left: 0,
                broken: None,
            }),
            cv: Condvar::new(),
        })
    }

    /// Puts `mine` in as `rank`'s bytes and returns every rank's, once all have put theirs.
    pub(crate) fn exchange(&self, rank: usize, mine: Vec<u8>) -> Result<Blobs> {
        let deadline = Instant::now() + self.timeout;
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // Wait for the previous round to be drained.
        while g.readers_left > 0 && g.broken.is_none() {
            g = self.wait(g, deadline, rank)?;
        }
        if let Some(why) = &g.broken {
            return Err(Error::Other(format!(
                "collective exchange is broken: {why}"
            )));
        }
        if g.slots[rank].is_some() {
            return Err(Error::Other(format!(
                "rank {rank} entered a collective twice in one round"
            )));
        }
        g.slots[rank] = Some(mine);
        g.filled += 1;
        let generation = g.generation;
        if g.filled == self.world {
            let all: Vec<Vec<u8>> = g
                .slots
                .iter_mut()
                .map(|s| s.take().unwrap_or_default())
                .collect();
            g.done = Some(Arc::new(all));
            g.filled = 0;
            g.readers_left = self.world;
            g.generation += 1;
            self.cv.notify_all();
        } else {
            while g.generation == generation && g.broken.is_none() {
                match self.wait(g, deadline, rank) {
                    Ok(ng) => g = ng,
                    Err(e) => return Err(e),
                }
            }
            if let Some(why) = &g.broken {
                return Err(Error::Other(format!(
                    "collective exchange is broken: {why}"
                )));
            }
        }
        let blobs = g.done.clone().expect("a completed round has its blobs");
        g.readers_left -= 1;
        if g.readers_left == 0 {
            g.done = None;
            self.cv.notify_all();
        }
        Ok(blobs)
    }

    /// Waits on the condition variable until `deadline`; past it, marks the exchange broken
    /// (naming the ranks that never came) and returns that error.
    fn wait<'a>(
        &'a self,
        g: std::sync::MutexGuard<'a, Round>,
        deadline: Instant,
        rank: usize,
    ) -> Result<std::sync::MutexGuard<'a, Round>> {
        let now = Instant::now();
        if now >= deadline {
            let mut g = g;
            let missing: Vec<usize> = (0..self.world).filter(|r| g.slots[*r].is_none()).collect();
            let why = format!(
                "rank {rank} waited {:?} for ranks {missing:?} to enter the collective",
                self.timeout
            );
            g.broken = Some(why.clone());
            self.cv.notify_all();
            return Err(Error::Other(why));
        }
        let (g, _) = self
            .cv
            .wait_timeout(g, deadline - now)
            .unwrap_or_else(|p| p.into_inner());
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_sees_every_rank_over_many_rounds() {
        let ex = SharedExchange::new(3, Duration::from_secs(20));
        let threads: Vec<_> = (0..3)
            .map(|r| {
                let ex = ex.clone();
                std::thread::spawn(move || {
                    for round in 0..50u8 {
                        let all = ex.exchange(r, vec![r as u8, round]).unwrap();
                        assert_eq!(*all, vec![vec![0, round], vec![1, round], vec![2, round]]);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_missing_rank_is_a_timeout_naming_it() {
        let ex = SharedExchange::new(2, Duration::from_millis(200));
        let e = ex.exchange(0, vec![1]).unwrap_err().to_string();
        assert!(e.contains("[1]"), "{e}");
        assert!(ex
            .exchange(1, vec![1])
            .unwrap_err()
            .to_string()
            .contains("broken"));
    }
}
