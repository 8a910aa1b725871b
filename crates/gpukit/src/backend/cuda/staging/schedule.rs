//! The schedule of a staged transfer as plain data: the chunks, the steps that move them
//! through the buffers in a pipeline, and the [`Engine`] that carries the steps out. Tested
//! against a simulated copy engine whose copies land only when waited for.

use crate::error::Result;

/// One piece of a transfer: bytes `offset..offset + len`, staged through buffer `buf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) offset: usize,
    pub(crate) len: usize,
    pub(crate) buf: usize,
}

/// Cuts `total` bytes into chunks of at most `chunk` bytes, given round-robin to `buffers`
/// buffers. No chunk is empty; the last one may be short.
pub(crate) fn plan(total: usize, chunk: usize, buffers: usize) -> Vec<Chunk> {
    let (chunk, buffers) = (chunk.max(1), buffers.max(1));
    (0..total.div_ceil(chunk))
        .map(|i| Chunk {
            offset: i * chunk,
            len: chunk.min(total - i * chunk),
            buf: i % buffers,
        })
        .collect()
}

/// What a staged transfer does, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The host waits until the copy engine is done with this buffer.
    Wait(usize),
    /// The host copies the chunk from the source into its buffer (to the device).
    Fill(Chunk),
    /// The copy engine is given the chunk (buffer -> device, or device -> buffer), and the
    /// buffer's event is recorded after it.
    Dma(Chunk),
    /// The host copies the chunk from its buffer into the destination (to the host).
    Drain(Chunk),
}

/// Host -> device: wait for the buffer, fill it, hand it to the copy engine; the fill of the
/// next chunk overlaps the copy of this one. The last copies may still run at the end (the
/// source is no longer needed then; the next user of a buffer waits for it).
pub(crate) fn upload_steps(chunks: &[Chunk]) -> Vec<Step> {
    chunks
        .iter()
        .flat_map(|&c| [Step::Wait(c.buf), Step::Fill(c), Step::Dma(c)])
        .collect()
}

/// Device -> host: the copy engine fills every buffer ahead; the host drains each chunk as soon
/// as it has landed and hands the buffer back for the chunk `buffers` places later. Everything
/// has landed at the end.
pub(crate) fn download_steps(chunks: &[Chunk], buffers: usize) -> Vec<Step> {
    let buffers = buffers.max(1);
    let mut steps: Vec<Step> = chunks.iter().take(buffers).map(|&c| Step::Dma(c)).collect();
    for (k, &c) in chunks.iter().enumerate() {
        steps.push(Step::Wait(c.buf));
        steps.push(Step::Drain(c));
        if let Some(&next) = chunks.get(k + buffers) {
            steps.push(Step::Dma(next));
        }
    }
    steps
}

/// Carries out the steps of a staged transfer.
pub(crate) trait Engine {
    /// [`Step::Wait`].
    fn wait(&mut self, buf: usize) -> Result<()>;
    /// [`Step::Fill`].
    fn fill(&mut self, c: Chunk) -> Result<()>;
    /// [`Step::Dma`].
    fn dma(&mut self, c: Chunk) -> Result<()>;
    /// [`Step::Drain`].
    fn drain(&mut self, c: Chunk) -> Result<()>;
}

/// Runs `steps` on `engine`, stopping at the first error.
pub(crate) fn run(steps: &[Step], engine: &mut impl Engine) -> Result<()> {
    for &s in steps {
        match s {
            Step::Wait(b) => engine.wait(b)?,
            Step::Fill(c) => engine.fill(c)?,
            Step::Dma(c) => engine.dma(c)?,
            Step::Drain(c) => engine.drain(c)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::staging::config::{Config, MIB};
    use crate::error::Error;

    #[test]
    fn plan_covers_every_byte_once() {
        for &(total, chunk, bufs) in &[
            (0, 16, 4),
            (1, 16, 4),
            (15, 16, 4),
            (16, 16, 4),
            (17, 16, 4),
            (100, 16, 3),
            (1000, 7, 2),
            (5, 1, 1),
        ] {
            let p = plan(total, chunk, bufs);
            let mut next = 0;
            for (i, c) in p.iter().enumerate() {
                assert_eq!(c.offset, next, "{total}/{chunk}: contiguous");
                assert!(c.len >= 1 && c.len <= chunk);
                assert_eq!(c.buf, i % bufs);
                next += c.len;
            }
            assert_eq!(next, total);
            assert_eq!(p.len(), total.div_ceil(chunk));
        }
    }

    #[test]
    fn chunks_shrink_for_mid_sized_transfers() {
        let c = Config::from_lookup(|_| None);
        assert_eq!(c.chunk_for(4 * MIB), MIB);
        assert_eq!(c.chunk_for(10 * MIB), 3 * MIB);
        assert_eq!(c.chunk_for(64 * MIB), 16 * MIB);
        assert_eq!(c.chunk_for(128 * MIB), 32 * MIB);
        assert_eq!(c.chunk_for(2048 * MIB), 32 * MIB);
        assert!(plan(10 * MIB, c.chunk_for(10 * MIB), 4).len() >= 3);
    }

    /// A copy engine whose copies land only when the host waits for them (or at the end),
    /// as the real one may: a schedule that touches a buffer with a copy in flight, or drains
    /// one before its copy landed, corrupts the data.
    struct Sim {
        host_src: Vec<u8>,
        device: Vec<u8>,
        host_dst: Vec<u8>,
        bufs: Vec<Vec<u8>>,
        in_flight: Vec<Vec<Chunk>>,
        upload: bool,
        log: Vec<Step>,
    }

    impl Sim {
        fn new(total: usize, chunk: usize, buffers: usize, upload: bool) -> Sim {
            let data: Vec<u8> = (0..total).map(|i| (i * 31 % 253) as u8 + 1).collect();
            let (host_src, device) = if upload {
                (data, vec![0; total])
            } else {
                (vec![], data)
            };
            Sim {
                host_src,
                device,
                host_dst: vec![0; total],
                bufs: vec![vec![0xEE; chunk]; buffers],
                in_flight: vec![vec![]; buffers],
                upload,
                log: vec![],
            }
        }
        fn land(&mut self, buf: usize) {
            for c in std::mem::take(&mut self.in_flight[buf]) {
                let range = c.offset..c.offset + c.len;
                if self.upload {
                    self.device[range].copy_from_slice(&self.bufs[buf][..c.len]);
                } else {
                    self.bufs[buf][..c.len].copy_from_slice(&self.device[range]);
                }
            }
        }
        fn finish(&mut self) {
            for b in 0..self.bufs.len() {
                self.land(b);
            }
        }
    }

    impl Engine for Sim {
        fn wait(&mut self, buf: usize) -> Result<()> {
            self.log.push(Step::Wait(buf));
            self.land(buf);
            Ok(())
        }
        fn fill(&mut self, c: Chunk) -> Result<()> {
            self.log.push(Step::Fill(c));
            assert!(self.in_flight[c.buf].is_empty(), "fill of a busy buffer");
            self.bufs[c.buf][..c.len].copy_from_slice(&self.host_src[c.offset..c.offset + c.len]);
            Ok(())
        }
        fn dma(&mut self, c: Chunk) -> Result<()> {
            self.log.push(Step::Dma(c));
            self.in_flight[c.buf].push(c);
            Ok(())
        }
        fn drain(&mut self, c: Chunk) -> Result<()> {
            self.log.push(Step::Drain(c));
            assert!(
                self.in_flight[c.buf].is_empty(),
                "drain before the copy landed"
            );
            self.host_dst[c.offset..c.offset + c.len].copy_from_slice(&self.bufs[c.buf][..c.len]);
            Ok(())
        }
    }

    const CASES: &[(usize, usize, usize)] = &[
        (0, 8, 2),
        (1, 8, 2),
        (7, 8, 2),
        (8, 8, 2),
        (9, 8, 2),
        (100, 8, 2),
        (100, 8, 3),
        (1001, 16, 4),
        (1 << 12, 64, 4),
        (12345, 1000, 5),
    ];

    #[test]
    fn upload_schedule_moves_every_byte() {
        for &(total, chunk, buffers) in CASES {
            let mut sim = Sim::new(total, chunk, buffers, true);
            let steps = upload_steps(&plan(total, chunk, buffers));
            run(&steps, &mut sim).unwrap();
            sim.finish();
            assert!(sim.device == sim.host_src, "{total}/{chunk}/{buffers}");
            // the fill of chunk k+1 comes before the wait for chunk k's copy: they overlap
            if total > 2 * chunk {
                let second_fill = steps.iter().filter(|s| matches!(s, Step::Fill(_))).nth(1);
                let first_dma = steps.iter().position(|s| matches!(s, Step::Dma(_)));
                let second_fill_at = steps.iter().position(|s| Some(s) == second_fill);
                assert!(first_dma < second_fill_at);
            }
        }
    }

    #[test]
    fn download_schedule_moves_every_byte_and_runs_ahead() {
        for &(total, chunk, buffers) in CASES {
            let mut sim = Sim::new(total, chunk, buffers, false);
            let chunks = plan(total, chunk, buffers);
            let steps = download_steps(&chunks, buffers);
            run(&steps, &mut sim).unwrap();
            // everything has landed without a final sync
            assert!(sim.host_dst == sim.device, "{total}/{chunk}/{buffers}");
            assert!(sim.in_flight.iter().all(|f| f.is_empty()));
            // the copy engine has `buffers` chunks queued before the host waits for the first
            let first_wait = steps.iter().position(|s| matches!(s, Step::Wait(_)));
            let queued = steps
                .iter()
                .take_while(|s| matches!(s, Step::Dma(_)))
                .count();
            assert_eq!(queued, chunks.len().min(buffers));
            assert_eq!(first_wait.unwrap_or(0), queued);
            assert_eq!(sim.log, steps);
        }
    }

    #[test]
    fn a_failing_step_stops_the_transfer() {
        struct Failing(usize);
        impl Engine for Failing {
            fn wait(&mut self, _: usize) -> Result<()> {
                Ok(())
            }
            fn fill(&mut self, _: Chunk) -> Result<()> {
                Ok(())
            }
            fn dma(&mut self, _: Chunk) -> Result<()> {
                self.0 += 1;
                if self.0 == 2 {
                    Err(Error::Cuda("copy failed".into()))
                } else {
                    Ok(())
                }
            }
            fn drain(&mut self, _: Chunk) -> Result<()> {
                panic!("drain after a failed copy")
            }
        }
        let steps = upload_steps(&plan(100, 10, 2));
        let mut e = Failing(0);
        assert!(matches!(run(&steps, &mut e), Err(Error::Cuda(_))));
        assert_eq!(e.0, 2);
        let steps = download_steps(&plan(100, 10, 2), 2);
        assert!(run(&steps, &mut Failing(0)).is_err());
    }
}
