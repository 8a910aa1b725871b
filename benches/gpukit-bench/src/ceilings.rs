//! `gpukit-bench ceilings`: the memory ceilings measured from Rust (cupy_twin.py --ceilings
//! measures the CuPy candidates; benchlib.py takes the best of all of them).
//!
//! Three access patterns, each the best rate over kernels and driver calls and over buffer
//! sizes of at least 1 GiB:
//!
//! - **copy** (bytes read + written): the 128-bit kernels `bench_copy_v4_u*` of
//!   bench_kernels.cu, compiled by gpukit (`Module::from_cuda`) and launched in several grid
//!   shapes, and the driver's `cuMemcpyDtoDAsync` through raw cudarc;
//! - **write** (bytes written): `bench_write_v4_u*`, and the driver's `cuMemsetD32Async`;
//! - **read** (bytes read): `bench_read_v4_u*` (every word XORed into one result).
//!
//! A candidate's time is its device time per call: gpukit's kernels by gpukit's profiler (an
//! event pair around each launch), the driver calls by events around [`BATCH`] back-to-back
//! calls queued behind one more (so the device is busy when the start event is reached). Every candidate is then checked: its output poisoned, one more call, every element
//! compared (for reads, the XOR of every word against the host's).

use crate::json::Json;
use crate::rawcuda::{err, RawCuda, TIMED};
use crate::timing::median;
use crate::verify::{Checker, Outcome, Verify};
use cudarc::driver::{sys, CudaSlice};
use gpukit::prelude::*;
use rayon::prelude::*;
use std::sync::Arc;

/// Calls per timed batch of a driver candidate (one event pair around them).
pub const BATCH: usize = 4;

/// A kernel launch shape: `unroll` uint4 in flight per thread (1: one per thread, no loop),
/// `threads` per block, and (for unroll > 1) `blocks_per_sm` blocks per multiprocessor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// uint4 loads or stores in flight per thread.
    pub unroll: u32,
    /// Threads per block.
    pub threads: usize,
    /// Blocks per multiprocessor (grid-stride kernels).
    pub blocks_per_sm: usize,
}

/// The shapes tried for every kernel candidate.
pub const SHAPES: [Shape; 7] = [
    Shape {
        unroll: 1,
        threads: 256,
        blocks_per_sm: 0,
    },
    Shape {
        unroll: 2,
        threads: 256,
        blocks_per_sm: 8,
    },
    Shape {
        unroll: 4,
        threads: 256,
        blocks_per_sm: 8,
    },
    Shape {
        unroll: 8,
        threads: 256,
        blocks_per_sm: 8,
    },
    Shape {
        unroll: 4,
        threads: 1024,
        blocks_per_sm: 2,
    },
    Shape {
        unroll: 4,
        threads: 256,
        blocks_per_sm: 32,
    },
    Shape {
        unroll: 8,
        threads: 512,
        blocks_per_sm: 4,
    },
];

impl Shape {
    /// Grid size for `n4` uint4 elements on `sms` multiprocessors.
    pub fn blocks(&self, n4: usize, sms: usize) -> usize {
        if self.unroll == 1 {
            n4.div_ceil(self.threads).max(1)
        } else {
            (sms * self.blocks_per_sm).max(1)
        }
    }

    /// The shape in words, for the result lines.
    pub fn label(&self) -> String {
        if self.unroll == 1 {
            format!("1 uint4 per thread, {} threads/block", self.threads)
        } else {
            format!(
                "grid-stride, {} uint4 in flight/thread, {} threads/block, {} blocks/SM",
                self.unroll, self.threads, self.blocks_per_sm
            )
        }
    }
}

/// XOR of every 32-bit word of `arange(0, n)` as f64 (what `bench_read_v4_*` must return).
pub fn arange_xor(n: usize) -> u32 {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let b = (i as f64).to_bits();
            (b as u32) ^ ((b >> 32) as u32)
        })
        .reduce(|| 0, |a, b| a ^ b)
}

/// The 16-byte value the write kernels store: two f64 1.5.
const WRITE_WORDS: [u32; 4] = [0, 0x3FF8_0000, 0, 0x3FF8_0000];

/// One candidate's result line.
#[allow(clippy::too_many_arguments)]
fn line(
    pattern: &str,
    implementation: &str,
    method: String,
    bytes_per_buffer: usize,
    moved: usize,
    ms: &[f64],
    verify: Verify,
    tried: Vec<(String, f64)>,
) -> Json {
    let med = median(ms);
    Json::Obj(vec![
        ("side", Json::Str("ceiling".into())),
        ("pattern", Json::Str(pattern.into())),
        ("impl", Json::Str(implementation.into())),
        ("method", Json::Str(method)),
        ("bytes_per_buffer", Json::Int(bytes_per_buffer as i64)),
        ("bytes_moved", Json::Int(moved as i64)),
        ("ms", Json::nums(ms)),
        ("gbps", Json::Num(moved as f64 / (med * 1e-3) / 1e9)),
        (
            "check_ok",
            Json::Str(if verify.ok() { "yes" } else { "no" }.into()),
        ),
        ("verify", verify.json()),
        (
            "tried",
            Json::Arr(
                tried
                    .into_iter()
                    .map(|(l, g)| Json::Arr(vec![Json::Str(l), Json::Num(g)]))
                    .collect(),
            ),
        ),
    ])
}

/// Device ms per launch of `launch` (gpukit's profiler), `reps` samples of [`BATCH`] launches.
fn profiled(reps: usize, kernel: &str, launch: &mut dyn FnMut() -> Result<()>) -> Result<Vec<f64>> {
    launch()?;
    synchronize()?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        profile::start();
        for _ in 0..BATCH {
            launch()?;
        }
        let recs = profile::stop()?;
        let r = recs
            .iter()
            .find(|r| r.kernel == kernel)
            .ok_or_else(|| Error::Other(format!("profiler recorded no {kernel}")))?;
        out.push(r.total_ms / r.calls as f64);
    }
    Ok(out)
}

/// Device ms per call of a driver call queued by `call` on the harness's stream: one call to
/// keep the device busy, then events around [`BATCH`] more (the start event is reached when the
/// first call ends, so no host enqueue time enters), `reps` times.
fn evented(raw: &RawCuda, reps: usize, call: &mut dyn FnMut() -> Result<()>) -> Result<Vec<f64>> {
    call()?;
    raw.stream.synchronize().map_err(err)?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        call()?;
        let a = raw.stream.record_event(Some(TIMED)).map_err(err)?;
        for _ in 0..BATCH {
            call()?;
        }
        let b = raw.stream.record_event(Some(TIMED)).map_err(err)?;
        b.synchronize().map_err(err)?;
        out.push(a.elapsed_ms(&b).map_err(err)? as f64 / BATCH as f64);
    }
    Ok(out)
}

/// Runs every candidate for buffers of each size in `sizes_gib`, emitting one line per
/// (pattern, implementation, size): the best shape, with every shape's rate in `tried`.
pub fn run(reps: usize, sizes_gib: &[usize], emit: &mut dyn FnMut(Json)) -> Result<()> {
    let dev = Device::cuda(0)?;
    set_default_device(dev);
    let raw = Arc::new(RawCuda::new()?);
    let checker = Checker::for_device(&dev)?;
    let module = checker
        .module()
        .ok_or_else(|| Error::Other("ceilings need a GPU".into()))?;
    let sms = raw.sms as usize;
    let reps = reps.max(3);
    for &gib in sizes_gib {
        let bytes = gib << 30;
        let (n, n4) = (bytes / 8, bytes / 16);
        let src = Array::<f64>::arange(0.0, n as f64)?;
        let mut dst = Array::<f64>::full(n, f64::NAN)?;

        for pattern in ["copy", "write", "read"] {
            let moved = if pattern == "copy" { 2 * bytes } else { bytes };
            let mut tried = Vec::new();
            let mut best: Option<(Shape, Vec<f64>)> = None;
            let mut sink = Array::<u32>::zeros(1)?;
            for shape in SHAPES {
                let kname = format!("bench_{pattern}_v4_u{}", shape.unroll);
                let k = module.kernel(&kname)?;
                let cfg = (shape.blocks(n4, sms), shape.threads);
                let [x, y, z, w] = WRITE_WORDS;
                let mut launch = || -> Result<()> {
                    match pattern {
                        "copy" => launch!(k[cfg.0, cfg.1](&src, &mut dst, n4 as u64)),
                        "write" => launch!(k[cfg.0, cfg.1](&mut dst, n4 as u64, x, y, z, w)),
                        _ => launch!(k[cfg.0, cfg.1](&src, n4 as u64, &mut sink)),
                    }
                };
                let ms = profiled(reps, &kname, &mut launch)?;
                let gbps = moved as f64 / (median(&ms) * 1e-3) / 1e9;
                tried.push((shape.label(), gbps));
                if best.as_ref().is_none_or(|(_, b)| median(&ms) < median(b)) {
                    best = Some((shape, ms));
                }
            }
            let (shape, ms) = best.expect("SHAPES is not empty");
            // check the best shape: poison, one call, every element
            let kname = format!("bench_{pattern}_v4_u{}", shape.unroll);
            let k = module.kernel(&kname)?;
            let cfg = (shape.blocks(n4, sms), shape.threads);
            let mut verify = Verify::new("output poisoned, one more call, every element checked");
            dst.fill(f64::NAN)?;
            match pattern {
                "copy" => {
                    launch!(k[cfg.0, cfg.1](&src, &mut dst, n4 as u64))?;
                    verify.push(checker.compare(&dst, &src, 0.0)?);
                }
                "write" => {
                    let [x, y, z, w] = WRITE_WORDS;
                    launch!(k[cfg.0, cfg.1](&mut dst, n4 as u64, x, y, z, w))?;
                    verify.push(checker.compare_const(&dst, 1.5)?);
                }
                _ => {
                    let mut sink = Array::<u32>::zeros(1)?;
                    launch!(k[cfg.0, cfg.1](&src, n4 as u64, &mut sink))?;
                    let got = sink.item()?;
                    let want = arange_xor(n);
                    verify.push(Outcome::scalar(got as f64, want as f64, 0.0));
                }
            }
            emit(line(
                pattern,
                "gpukit",
                format!("{kname} via gpukit Module::from_cuda, {}", shape.label()),
                bytes,
                moved,
                &ms,
                verify,
                tried,
            ));
        }
        drop(dst);

        // the driver's own copy and fill, through raw cudarc on the harness's stream
        let s = &raw.stream;
        // SAFETY: both buffers are filled by the driver calls below before anything reads them.
        let (a, b): (CudaSlice<f64>, CudaSlice<f64>) = unsafe {
            (
                s.alloc::<f64>(n).map_err(err)?,
                s.alloc::<f64>(n).map_err(err)?,
            )
        };
        let (pa, pb) = (raw.ptr(s, &a), raw.ptr(s, &b));
        raw.ctx.bind_to_thread().map_err(err)?;
        // src words: 0x3FF80000 everywhere (every f64 = from_bits(0x3FF800003FF80000))
        let word = 0x3FF8_0000u32;
        let value = f64::from_bits(((word as u64) << 32) | word as u64);
        // SAFETY: a holds n f64 = 2n u32.
        crate::rawcuda::check_rc("cuMemsetD32Async", unsafe {
            sys::cuMemsetD32Async(pa, word, 2 * n, s.cu_stream())
        })?;
        let mut copy = || -> Result<()> {
            // SAFETY: both buffers hold `bytes` bytes.
            crate::rawcuda::check_rc("cuMemcpyDtoDAsync", unsafe {
                sys::cuMemcpyDtoDAsync_v2(pb, pa, bytes, s.cu_stream())
            })
        };
        let ms = evented(&raw, reps, &mut copy)?;
        let mut verify = Verify::new("output poisoned, one more call, every element checked");
        raw.poison(s, pb, bytes)?;
        copy()?;
        verify.push(raw.compare_const(s, &b, value)?);
        let g = 2.0 * bytes as f64 / (median(&ms) * 1e-3) / 1e9;
        emit(line(
            "copy",
            "driver",
            "cuMemcpyDtoDAsync (raw cudarc)".into(),
            bytes,
            2 * bytes,
            &ms,
            verify,
            vec![("cuMemcpyDtoDAsync".into(), g)],
        ));
        let mut fill = || -> Result<()> {
            // SAFETY: b holds 2n u32.
            crate::rawcuda::check_rc("cuMemsetD32Async", unsafe {
                sys::cuMemsetD32Async(pb, word, 2 * n, s.cu_stream())
            })
        };
        let ms = evented(&raw, reps, &mut fill)?;
        let mut verify = Verify::new("output poisoned, one more call, every element checked");
        raw.poison(s, pb, bytes)?;
        fill()?;
        verify.push(raw.compare_const(s, &b, value)?);
        let g = bytes as f64 / (median(&ms) * 1e-3) / 1e9;
        emit(line(
            "write",
            "driver",
            "cuMemsetD32Async (raw cudarc)".into(),
            bytes,
            bytes,
            &ms,
            verify,
            vec![("cuMemsetD32Async".into(), g)],
        ));
        drop((a, b));
        s.synchronize().map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_grids() {
        let s = SHAPES[0];
        assert_eq!(s.blocks(1 << 26, 132), (1 << 26) / 256);
        assert_eq!(SHAPES[2].blocks(1 << 26, 132), 132 * 8);
        assert!(SHAPES[2].label().contains("4 uint4 in flight"));
        assert!(SHAPES.iter().all(|s| [1, 2, 4, 8].contains(&s.unroll)));
    }

    #[test]
    fn the_read_check_is_not_trivially_zero() {
        // the XOR the read kernels must return, for the sizes the ceilings use
        for gib in [1usize, 2, 4] {
            assert_ne!(arange_xor((gib << 30) / 8), 0, "{gib} GiB");
        }
        assert_eq!(arange_xor(2), (1.0f64.to_bits() >> 32) as u32);
    }
}
