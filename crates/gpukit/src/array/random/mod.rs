//! Random arrays, NumPy-style: [`uniform`], [`normal`], [`integers`], and a seedable
//! [`Generator`] ([`default_rng`]) with the same methods.
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit::random;
//!
//! # fn main() -> gpukit::Result<()> {
//! let mut rng = random::default_rng(42);
//! let x: Array<f64> = rng.uniform(0.0, 1.0, (3, 4))?;    // in [0, 1)
//! let z: Array<f32> = rng.normal(0.0, 2.0, 1000)?;       // mean 0, standard deviation 2
//! let d: Array<i64> = rng.integers(1, 7, 10)?;           // dice: 1..=6
//! # assert!(x.to_vec()?.iter().all(|&v| (0.0..1.0).contains(&v)));
//! # assert_eq!(z.size(), 1000);
//! # assert!(d.to_vec()?.iter().all(|&v| (1..7).contains(&v)));
//! # Ok(())
//! # }
//! ```
//!
//! # Reproducibility
//!
//! A generator made with a seed gives the same arrays, in the same order, every time on the same
//! backend: the `k`-th array drawn from `Generator::new(seed)` depends only on `seed`, `k`, the
//! call's arguments and the device kind, never on the number of CPU threads or on other
//! generators. The two backends use different generators, so **the CPU and GPU streams differ**:
//!
//! * **CPU**: ChaCha8 (`rand_chacha`), sampled with `rand`/`rand_distr` (`Uniform`, the Ziggurat
//!   `Normal`). The array is cut into chunks of 65 536 elements; chunk `c` uses ChaCha stream `c`
//!   of a key derived from `(seed, k)`, so chunks fill in parallel with the same result on any
//!   number of threads.
//! * **CUDA**: cuRAND's Philox4x32-10 (loaded at run time; a missing libcurand is an `Err`),
//!   seeded with the same derived key, queued on the device's stream. Uniform floats map cuRAND's
//!   (0, 1] to [low, high); normals are cuRAND's (Box-Muller); integers map uniform bits to
//!   [low, high) with Lemire's multiply-shift on twice the value's width of bits (bias below
//!   2^-32 of a value's probability; see `array/kernels/random.rs`).
//!
//! The streams may change with a new major version of gpukit, `rand` or CUDA. On CUDA the same
//! seed gives the same arrays for one cuRAND version; gpukit does not promise bitwise-equal
//! normals across GPU models (they come from cuRAND's device math).
//!
//! The free functions ([`uniform`], ...) draw from one process-wide generator, seeded from the
//! clock and process at first use unless [`seed`] was called: call `random::seed(s)` at the top
//! of a notebook to make them reproducible.

mod cpu;
mod cuda;
#[cfg(test)]
mod tests;

use super::construct::IntoShape;
use super::{checked_size, Array, Storage};
use crate::backend::cuda::CudaBackend;
use crate::device::{default_device, Device};
use crate::element::{DType, Element, Float, Numeric, Scalar};
use crate::error::{Error, Result};
use std::sync::Mutex;

/// A seedable source of random arrays (NumPy's `numpy.random.Generator`).
///
/// Each array drawn advances the generator, so successive calls give different values; two
/// generators made with the same seed give the same sequence of arrays on the same backend
/// (see the [module documentation](self) for what "the same" covers).
///
/// ```
/// use gpukit::random::Generator;
///
/// # fn main() -> gpukit::Result<()> {
/// let (mut a, mut b) = (Generator::new(7), Generator::new(7));
/// let x = a.uniform(-1.0f64, 1.0, 5)?;
/// assert_eq!(x.to_vec()?, b.uniform(-1.0f64, 1.0, 5)?.to_vec()?);
/// assert_ne!(a.uniform(-1.0f64, 1.0, 5)?.to_vec()?, x.to_vec()?); // the next draw differs
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    seed: u64,
    /// Arrays drawn so far.
    draws: u64,
}

/// A [`Generator`] seeded with `seed` (NumPy's `numpy.random.default_rng(seed)`).
///
/// ```
/// let mut rng = gpukit::random::default_rng(0);
/// let a = rng.integers(0u32, 10, 4)?;
/// assert!(a.to_vec()?.iter().all(|&v| v < 10));
/// # Ok::<(), gpukit::Error>(())
/// ```
pub fn default_rng(seed: u64) -> Generator {
    Generator::new(seed)
}

/// SplitMix64's finaliser: a bijection of `u64` that spreads every input bit over the output.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator { seed, draws: 0 }
    }

    /// The seed this generator was made with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The key of the next array: depends on the seed and the number of arrays drawn so far.
    fn next_key(&mut self) -> u64 {
        let key = mix(mix(self.seed) ^ self.draws);
        self.draws += 1;
        key
    }

    /// Uniform floats in `[low, high)`, on the default device.
    ///
    /// `low < high`, both finite, and `high - low` finite in `T`; otherwise an `Err` naming them.
    ///
    /// ```
    /// let mut rng = gpukit::random::default_rng(1);
    /// let a = rng.uniform(2.0f32, 3.0, (2, 2))?;
    /// assert!(a.to_vec()?.iter().all(|v| (2.0..3.0).contains(v)));
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn uniform<T: Float>(
        &mut self,
        low: T,
        high: T,
        shape: impl IntoShape,
    ) -> Result<Array<T>> {
        self.uniform_on(low, high, shape, &default_device())
    }

    /// [`Generator::uniform`] on `device`.
    pub fn uniform_on<T: Float>(
        &mut self,
        low: T,
        high: T,
        shape: impl IntoShape,
        device: &Device,
    ) -> Result<Array<T>> {
        let (l, h) = (low.to_f64(), high.to_f64());
        float_dtype::<T>("uniform")?;
        let span = high.elem_sub(low).to_f64();
        if !(l.is_finite() && h.is_finite() && l < h && span.is_finite()) {
            return Err(Error::Other(format!(
                "random uniform: need finite low < high with a finite high - low in {} (got low = \
                 {l}, high = {h})",
                T::DTYPE
            )));
        }
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        let key = self.next_key();
        match device {
            Device::Cpu => Array::from_storage(shape, Storage::Cpu(cpu::uniform(n, l, h, key)?)),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let slice = cuda::uniform::<T>(&backend, n, l, h, key)?;
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
        }
    }

    /// Normally distributed floats with mean `mean` and standard deviation `std`, on the
    /// default device.
    ///
    /// `mean` finite, `std` finite and not negative (0 gives `mean` everywhere); otherwise an
    /// `Err` naming them.
    ///
    /// ```
    /// let mut rng = gpukit::random::default_rng(2);
    /// let a = rng.normal(10.0f64, 0.5, 10_000)?;
    /// assert!((a.mean()? - 10.0).abs() < 0.05);
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn normal<T: Float>(&mut self, mean: T, std: T, shape: impl IntoShape) -> Result<Array<T>> {
        self.normal_on(mean, std, shape, &default_device())
    }

    /// [`Generator::normal`] on `device`.
    pub fn normal_on<T: Float>(
        &mut self,
        mean: T,
        std: T,
        shape: impl IntoShape,
        device: &Device,
    ) -> Result<Array<T>> {
        let (m, s) = (mean.to_f64(), std.to_f64());
        float_dtype::<T>("normal")?;
        if !(m.is_finite() && s.is_finite() && s >= 0.0) {
            return Err(Error::Other(format!(
                "random normal: need a finite mean and a finite std >= 0 (got mean = {m}, std = {s})"
            )));
        }
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        let key = self.next_key();
        match device {
            Device::Cpu => Array::from_storage(shape, Storage::Cpu(cpu::normal(n, m, s, key)?)),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let slice = cuda::normal::<T>(&backend, n, m, s, key)?;
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
        }
    }

    /// Uniform integers in `[low, high)` (half-open, like NumPy's `Generator.integers`), on the
    /// default device. `T` is i32, i64, u32 or u64.
    ///
    /// `low < high`; otherwise, or for another element type, an `Err` naming them.
    ///
    /// ```
    /// let mut rng = gpukit::random::default_rng(3);
    /// let a = rng.integers(-5i32, 5, 100)?;
    /// assert!(a.to_vec()?.iter().all(|v| (-5..5).contains(v)));
    /// # Ok::<(), gpukit::Error>(())
    /// ```
    pub fn integers<T: Numeric>(
        &mut self,
        low: T,
        high: T,
        shape: impl IntoShape,
    ) -> Result<Array<T>> {
        self.integers_on(low, high, shape, &default_device())
    }

    /// [`Generator::integers`] on `device`.
    pub fn integers_on<T: Numeric>(
        &mut self,
        low: T,
        high: T,
        shape: impl IntoShape,
        device: &Device,
    ) -> Result<Array<T>> {
        if !matches!(T::DTYPE, DType::I32 | DType::I64 | DType::U32 | DType::U64) {
            return Err(Error::Other(format!(
                "random integers: dtype {} is not supported (use i32, i64, u32 or u64; uniform or \
                 normal for floats)",
                T::DTYPE
            )));
        }
        let (Scalar::Int(l), Scalar::Int(h)) = (low.to_scalar(), high.to_scalar()) else {
            return Err(Error::Other(format!(
                "random integers: dtype {} is not an integer type",
                T::DTYPE
            )));
        };
        if l >= h {
            return Err(Error::Other(format!(
                "random integers: need low < high (got low = {l}, high = {h}; the range is \
                 [low, high), high excluded)"
            )));
        }
        let shape = shape.into_shape();
        let n = checked_size(&shape)?;
        let key = self.next_key();
        match device {
            Device::Cpu => Array::from_storage(shape, Storage::Cpu(cpu::integers(n, l, h, key)?)),
            Device::Cuda(i) => {
                let backend = CudaBackend::get(*i)?;
                let slice = cuda::integers::<T>(&backend, n, l, h, key)?;
                Array::from_storage(shape, Storage::Cuda { backend, slice })
            }
        }
    }
}

/// An `Err` unless `T` is f32 or f64.
fn float_dtype<T: Element>(what: &str) -> Result<()> {
    match T::DTYPE {
        DType::F32 | DType::F64 => Ok(()),
        d => Err(Error::Other(format!(
            "random {what}: dtype {d} is not supported (use f32 or f64)"
        ))),
    }
}

crate::process::process_global! {
    /// The generator behind the free functions (shared by every copy of gpukit in the process,
    /// so `seed` in one notebook cell holds for the next).
    fn global() -> &'static Mutex<Option<Generator>> = Mutex::new(None);
}

/// Runs `f` with the process-wide generator, seeding it from the clock and process at first use.
fn with_global<R>(f: impl FnOnce(&mut Generator) -> R) -> R {
    let mut g = global().lock().unwrap_or_else(|p| p.into_inner());
    let rng = g.get_or_insert_with(|| {
        use std::hash::BuildHasher;
        let now = std::time::SystemTime::now();
        let seed =
            std::collections::hash_map::RandomState::new().hash_one((now, std::process::id()));
        Generator::new(seed)
    });
    f(rng)
}

/// Reseeds the process-wide generator behind [`uniform`], [`normal`] and [`integers`]
/// (NumPy's `numpy.random.seed`): after `seed(s)` they draw the same arrays as
/// `Generator::new(s)` would.
///
/// ```
/// use gpukit::random;
/// random::seed(5);
/// let a = random::uniform(0.0f64, 1.0, 3)?;
/// assert_eq!(a.to_vec()?, random::default_rng(5).uniform(0.0f64, 1.0, 3)?.to_vec()?);
/// # Ok::<(), gpukit::Error>(())
/// ```
pub fn seed(seed: u64) {
    *global().lock().unwrap_or_else(|p| p.into_inner()) = Some(Generator::new(seed));
}

/// Uniform floats in `[low, high)` from the process-wide generator, on the default device
/// (see [`Generator::uniform`] and [`seed`]).
///
/// ```
/// let a = gpukit::random::uniform(0.0f64, 10.0, (2, 3))?;
/// assert_eq!(a.shape(), &[2, 3]);
/// # Ok::<(), gpukit::Error>(())
/// ```
pub fn uniform<T: Float>(low: T, high: T, shape: impl IntoShape) -> Result<Array<T>> {
    uniform_on(low, high, shape, &default_device())
}

/// [`uniform`] on `device`.
pub fn uniform_on<T: Float>(
    low: T,
    high: T,
    shape: impl IntoShape,
    device: &Device,
) -> Result<Array<T>> {
    with_global(|g| g.uniform_on(low, high, shape, device))
}

/// Normal floats from the process-wide generator, on the default device (see
/// [`Generator::normal`] and [`seed`]).
///
/// ```
/// let a = gpukit::random::normal(0.0f32, 1.0, 100)?;
/// assert_eq!(a.size(), 100);
/// # Ok::<(), gpukit::Error>(())
/// ```
pub fn normal<T: Float>(mean: T, std: T, shape: impl IntoShape) -> Result<Array<T>> {
    normal_on(mean, std, shape, &default_device())
}

/// [`normal`] on `device`.
pub fn normal_on<T: Float>(
    mean: T,
    std: T,
    shape: impl IntoShape,
    device: &Device,
) -> Result<Array<T>> {
    with_global(|g| g.normal_on(mean, std, shape, device))
}

/// Integers in `[low, high)` from the process-wide generator, on the default device (see
/// [`Generator::integers`] and [`seed`]).
///
/// ```
/// let a = gpukit::random::integers(0i64, 2, 8)?;
/// assert!(a.to_vec()?.iter().all(|&v| v == 0 || v == 1));
/// # Ok::<(), gpukit::Error>(())
/// ```
pub fn integers<T: Numeric>(low: T, high: T, shape: impl IntoShape) -> Result<Array<T>> {
    integers_on(low, high, shape, &default_device())
}

/// [`integers`] on `device`.
pub fn integers_on<T: Numeric>(
    low: T,
    high: T,
    shape: impl IntoShape,
    device: &Device,
) -> Result<Array<T>> {
    with_global(|g| g.integers_on(low, high, shape, device))
}
