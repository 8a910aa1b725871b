//! Tests of the sort kernels that need no GPU: plans, the network run on the host with the
//! kernels' index arithmetic, and NVRTC compiling every module.

use super::source::programs;
use super::*;

#[test]
fn plans_pack_short_rows_and_split_long_ones() {
    // The lab's rows: 5000 f64 padded to 8192, one row per block.
    assert_eq!(
        plan(10_000, 5_000, 16_384),
        Plan {
            lp: 13,
            lc: 13,
            global: false
        }
    );
    // Short rows share a block of 2048 elements.
    assert_eq!(
        plan(1000, 3, 16_384),
        Plan {
            lp: 2,
            lc: 11,
            global: false
        }
    );
    // A tiny array: one block just large enough.
    assert_eq!(
        plan(1, 5, 16_384),
        Plan {
            lp: 3,
            lc: 3,
            global: false
        }
    );
    assert_eq!(
        plan(1, 1, 16_384),
        Plan {
            lp: 0,
            lc: 0,
            global: false
        }
    );
    // Longer than a chunk: chunks of the capacity, merged in global memory.
    assert_eq!(
        plan(3, 100_000, 16_384),
        Plan {
            lp: 17,
            lc: 14,
            global: true
        }
    );
    assert_eq!(ceil_log2(1), 0);
    assert_eq!(ceil_log2(2), 1);
    assert_eq!(ceil_log2(5000), 13);
    assert_eq!(ceil_log2(8192), 13);
}

/// Every sort module compiles with NVRTC and has its four kernels (no GPU needed; skipped
/// without libnvrtc unless `GPUKIT_REQUIRE_NVRTC=1`).
#[test]
fn sort_modules_compile_with_nvrtc() {
    if !crate::testing::nvrtc_or_skip() {
        return;
    }
    for (name, src) in programs() {
        let ptx = crate::backend::cuda::compile_ptx(&name, &src, "sm_90")
            .unwrap_or_else(|e| panic!("{e}"));
        let entries = crate::backend::cuda::ptx_entries(&ptx);
        let want: Vec<String> = match name.strip_prefix("gpukit_sort_") {
            Some(s) => ["sort_chunk", "argsort_chunk", "sort_step", "argsort_step"]
                .iter()
                .map(|k| format!("gk_{k}_{s}"))
                .collect(),
            None => ["w1", "w4", "w8"]
                .iter()
                .map(|w| format!("gk_transpose_{w}"))
                .collect(),
        };
        for w in want {
            assert!(entries.contains(&w), "{name}: {w} missing from {entries:?}");
        }
    }
    assert_eq!(programs().len(), 8);
}

/// The kernels' network, run on the host with the same index arithmetic: sorted and stable
/// for several geometries, the global-memory merge included.
#[test]
fn the_network_sorts_on_the_host() {
    fn run(rows: usize, len: usize, capacity: usize, keys: &[u64]) -> Vec<u32> {
        let p = plan(rows, len, capacity);
        let pp = 1usize << p.lp;
        let c = 1usize << p.lc;
        let total = (rows * pp).div_ceil(c) * c;
        let mut k_: Vec<u64> = (0..total)
            .map(|g| {
                let (r, j) = (g / pp, g % pp);
                if r < rows && j < len {
                    keys[r * len + j]
                } else {
                    u64::MAX
                }
            })
            .collect();
        let mut i_: Vec<u32> = (0..total).map(|g| (g % pp) as u32).collect();
        let mut cmpx = |a: usize, b: usize, up: bool| {
            let gt = (k_[a], i_[a]) > (k_[b], i_[b]);
            if up == gt {
                k_.swap(a, b);
                i_.swap(a, b);
            }
        };
        let ppu = pp as u64;
        // chunk sort, block by block, with the kernel's direction rule (`base` a multiple
        // of C: bit k of the index is a's own below C, the block's from C on)
        let up_of = |base: usize, a: usize, k: usize| {
            let whole = k as u64 == ppu;
            if k >= c {
                whole || (base & k) == 0
            } else {
                whole || (a & k) == 0
            }
        };
        let kl = pp.min(c);
        let mut k = 2;
        while k <= kl {
            let mut j = k / 2;
            while j > 0 {
                for base in (0..total).step_by(c) {
                    for t in 0..c / 2 {
                        let a = ((t & !(j - 1)) << 1) | (t & (j - 1));
                        cmpx(base + a, base + a + j, up_of(base, a, k));
                    }
                }
                j /= 2;
            }
            k *= 2;
        }
        let mut k = 2 * c;
        while p.global && k <= pp {
            let mut j = k / 2;
            // the global steps (j >= C), then the chunk's steps (j < C)
            while j >= c {
                for t in 0..total / 2 {
                    let a = ((t & !(j - 1)) << 1) | (t & (j - 1));
                    let up = k == pp || (a & k) == 0;
                    cmpx(a, a + j, up);
                }
                j /= 2;
            }
            while j > 0 {
                for base in (0..total).step_by(c) {
                    for t in 0..c / 2 {
                        let a = ((t & !(j - 1)) << 1) | (t & (j - 1));
                        cmpx(base + a, base + a + j, up_of(base, a, k));
                    }
                }
                j /= 2;
            }
            k *= 2;
        }
        (0..rows)
            .flat_map(|r| i_[r * pp..r * pp + len].to_vec())
            .collect()
    }
    let mut seed = 7u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % 5
    };
    for (rows, len, cap) in [(3, 5, 64), (7, 1, 64), (2, 100, 16), (5, 33, 8), (1, 64, 4)] {
        let keys: Vec<u64> = (0..rows * len).map(|_| next()).collect();
        let idx = run(rows, len, cap, &keys);
        for r in 0..rows {
            let row = &keys[r * len..(r + 1) * len];
            let mut want: Vec<u32> = (0..len as u32).collect();
            want.sort_by_key(|&i| row[i as usize]);
            assert_eq!(
                &idx[r * len..(r + 1) * len],
                &want[..],
                "rows {rows} len {len} capacity {cap}"
            );
        }
    }
}
