//! Launch configurations: grid and block sizes, how they are written, and their limits.

use crate::error::{Error, Result};
use std::fmt;

/// A size or an index in up to three dimensions (CUDA's `dim3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent (or index) along x.
    pub x: u32,
    /// Extent (or index) along y.
    pub y: u32,
    /// Extent (or index) along z.
    pub z: u32,
}

impl Dim3 {
    /// `Dim3 { x, y, z }`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `x * y * z`, without overflow.
    pub fn volume(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

/// Grid and block sizes of one launch: `blocks` blocks of `threads` threads each.
///
/// Usually written as `[blocks, threads]` in [`launch!`](crate::launch), where each of the two
/// is an integer or a 2-/3-tuple of integers: `launch!(k[(16, 16), (8, 8)](..))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Number of blocks along x, y and z.
    pub grid: Dim3,
    /// Number of threads per block along x, y and z.
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block (`extern __shared__` in raw CUDA C; 0 otherwise).
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads, no dynamic shared memory.
    pub fn new(grid: impl IntoDim3, block: impl IntoDim3) -> Result<LaunchConfig> {
        Ok(LaunchConfig {
            grid: grid.into_dim3("blocks")?,
            block: block.into_dim3("threads")?,
            shared_mem_bytes: 0,
        })
    }

    /// The same configuration with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem(mut self, bytes: u32) -> LaunchConfig {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Checks the sizes against CUDA's limits, which the CPU backend applies too so that a
    /// kernel that runs on one backend runs on the other.
    pub fn validate(&self, kernel: &str) -> Result<()> {
        let bad = |reason: String| {
            Err(Error::LaunchConfig {
                kernel: kernel.to_string(),
                reason,
            })
        };
        let (g, b) = (self.grid, self.block);
        if g.x == 0 || g.y == 0 || g.z == 0 {
            return bad(format!(
                "the grid {g} has a zero size; every dimension needs at least 1 block"
            ));
        }
        if b.x == 0 || b.y == 0 || b.z == 0 {
            return bad(format!(
                "the block {b} has a zero size; every dimension needs at least 1 thread"
            ));
        }
        if b.volume() > MAX_THREADS_PER_BLOCK as u64 {
            return bad(format!(
                "{} threads per block {b} exceeds the limit of {MAX_THREADS_PER_BLOCK}",
                b.volume()
            ));
        }
        if b.x > MAX_BLOCK.x || b.y > MAX_BLOCK.y || b.z > MAX_BLOCK.z {
            return bad(format!(
                "the block {b} exceeds the per-dimension limit {MAX_BLOCK}"
            ));
        }
        if g.x > MAX_GRID.x || g.y > MAX_GRID.y || g.z > MAX_GRID.z {
            return bad(format!("the grid {g} exceeds the limit {MAX_GRID}"));
        }
        Ok(())
    }
}

impl fmt::Display for LaunchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.grid, self.block)
    }
}

/// Most threads in one block.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest block along each dimension.
pub const MAX_BLOCK: Dim3 = Dim3::new(1024, 1024, 64);
/// Largest grid along each dimension.
pub const MAX_GRID: Dim3 = Dim3::new(i32::MAX as u32, 65535, 65535);

/// A grid or block size: an integer (1-D) or a tuple of 2 or 3 integers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a grid or block size",
    note = "write an integer (`256`) or a tuple of 2 or 3 integers of one type (`(16, 16)`)"
)]
pub trait IntoDim3 {
    /// The size as a [`Dim3`]; `what` ("blocks"/"threads") names it in errors.
    fn into_dim3(self, what: &str) -> Result<Dim3>;
}

fn to_u32<N: TryInto<u32> + Copy + fmt::Display>(n: N, what: &str) -> Result<u32> {
    n.try_into().map_err(|_| Error::LaunchConfig {
        kernel: String::new(),
        reason: format!(
            "{what} size {n} is not a whole number between 0 and {}",
            u32::MAX
        ),
    })
}

macro_rules! int_dims {
    ($($t:ty),*) => {$(
        impl IntoDim3 for $t {
            fn into_dim3(self, what: &str) -> Result<Dim3> {
                Ok(Dim3::new(to_u32(self, what)?, 1, 1))
            }
        }
        impl IntoDim3 for ($t, $t) {
            fn into_dim3(self, what: &str) -> Result<Dim3> {
                Ok(Dim3::new(to_u32(self.0, what)?, to_u32(self.1, what)?, 1))
            }
        }
        impl IntoDim3 for ($t, $t, $t) {
            fn into_dim3(self, what: &str) -> Result<Dim3> {
                Ok(Dim3::new(to_u32(self.0, what)?, to_u32(self.1, what)?, to_u32(self.2, what)?))
            }
        }
    )*};
}

int_dims!(u32, usize, i32, u64, i64);

impl IntoDim3 for Dim3 {
    fn into_dim3(self, _what: &str) -> Result<Dim3> {
        Ok(self)
    }
}

/// What a launch's first argument can be: a [`LaunchConfig`] or a `(blocks, threads)` pair.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a launch configuration",
    note = "write `(blocks, threads)`, each an integer or a tuple of 2 or 3 integers, or a `LaunchConfig`"
)]
pub trait IntoLaunchConfig {
    /// The configuration, before validation.
    fn into_launch_config(self) -> Result<LaunchConfig>;
}

impl IntoLaunchConfig for LaunchConfig {
    fn into_launch_config(self) -> Result<LaunchConfig> {
        Ok(self)
    }
}

impl<G: IntoDim3, B: IntoDim3> IntoLaunchConfig for (G, B) {
    fn into_launch_config(self) -> Result<LaunchConfig> {
        LaunchConfig::new(self.0, self.1)
    }
}

/// Resolves and validates a configuration for `kernel`, naming the kernel in every error.
pub(crate) fn resolve(config: impl IntoLaunchConfig, kernel: &str) -> Result<LaunchConfig> {
    let config = config.into_launch_config().map_err(|e| match e {
        Error::LaunchConfig { reason, .. } => Error::LaunchConfig {
            kernel: kernel.to_string(),
            reason,
        },
        other => other,
    })?;
    config.validate(kernel)?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(c: impl IntoLaunchConfig) -> Result<LaunchConfig> {
        resolve(c, "k")
    }

    #[test]
    fn integers_and_tuples() {
        let c = check((4, 256)).unwrap();
        assert_eq!(
            (c.grid, c.block),
            (Dim3::new(4, 1, 1), Dim3::new(256, 1, 1))
        );
        let c = check(((16usize, 8usize), (8u32, 8u32, 4u32))).unwrap();
        assert_eq!((c.grid, c.block), (Dim3::new(16, 8, 1), Dim3::new(8, 8, 4)));
    }

    #[test]
    fn limits() {
        let reason = |c: Result<LaunchConfig>| match c.unwrap_err() {
            Error::LaunchConfig { kernel, reason } => {
                assert_eq!(kernel, "k");
                reason
            }
            e => panic!("unexpected {e}"),
        };
        assert!(reason(check((0, 32))).contains("zero"));
        assert!(reason(check((1, (32, 0)))).contains("zero"));
        assert!(reason(check((1, 1025))).contains("1025 threads"));
        assert!(reason(check((1, (32, 32, 2)))).contains("2048 threads"));
        assert!(reason(check((1, (1, 1, 65)))).contains("limit"));
        assert!(reason(check(((1, 65536), 32))).contains("limit"));
        assert!(reason(check((-1, 32))).contains("-1"));
        assert!(check(((i32::MAX as u32, 65535u32, 65535u32), (1024, 1))).is_ok());
    }
}
