//! The crate's host random numbers: a small seeded generator (SplitMix64) for what must be the
//! same on every backend and every version of the dependencies: split permutations, k-means
//! initial picks, the diabetes table. Large random arrays come from `gpukit::random` on the
//! device instead.

/// SplitMix64 (Steele, Lea and Flood, 2014): 64 bits of state, a fixed output function; every
/// seed gives its own stream, the same on every machine.
#[derive(Debug, Clone)]
pub(crate) struct HostRng {
    state: u64,
}

impl HostRng {
    /// A generator seeded with `seed`.
    pub(crate) fn new(seed: u64) -> HostRng {
        HostRng {
            state: seed ^ 0x5851_f42d_4c95_7f2d,
        }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)` (53 random bits).
    pub(crate) fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `[0, n)` (`n > 0`), without bias (Lemire's method with rejection).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A standard normal value (Box-Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Shuffles `v` in place (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }

    /// `k` distinct indices below `n` (`k <= n`) in the order drawn (Floyd's algorithm, then a
    /// shuffle), without an `n`-long buffer.
    pub(crate) fn sample_distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut chosen = std::collections::HashSet::with_capacity(k);
        let mut out = Vec::with_capacity(k);
        for j in n - k..n {
            let t = self.below(j as u64 + 1) as usize;
            let pick = if chosen.contains(&t) { j } else { t };
            chosen.insert(pick);
            out.push(pick);
        }
        self.shuffle(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_seeded_and_in_range() {
        let (mut a, mut b) = (HostRng::new(3), HostRng::new(3));
        let xs: Vec<u64> = (0..10).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..10).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(HostRng::new(4).next_u64(), xs[0]);
        let mut r = HostRng::new(9);
        let mut hist = [0usize; 7];
        for _ in 0..70_000 {
            let v = r.below(7) as usize;
            hist[v] += 1;
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
        }
        assert!(
            hist.iter().all(|&h| (9_000..11_000).contains(&h)),
            "{hist:?}"
        );
        let z: Vec<f64> = (0..20_000).map(|_| r.normal()).collect();
        let mean = z.iter().sum::<f64>() / z.len() as f64;
        let var = z.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / z.len() as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }

    #[test]
    fn distinct_samples_are_distinct() {
        let mut r = HostRng::new(1);
        for (n, k) in [(10, 10), (1000, 7), (5, 0), (3, 1)] {
            let s = r.sample_distinct(n, k);
            let set: std::collections::HashSet<_> = s.iter().copied().collect();
            assert_eq!((s.len(), set.len()), (k, k));
            assert!(s.iter().all(|&i| i < n));
        }
        let mut v: Vec<usize> = (0..50).collect();
        r.shuffle(&mut v);
        let mut w = v.clone();
        w.sort();
        assert_eq!(w, (0..50).collect::<Vec<_>>());
        assert_ne!(v, w);
    }
}
