//! cuRAND (through cudarc's `curand::result` layer): one Philox4x32-10 generator per device,
//! created at its first use and queued on the device's one stream.
//!
//! libcurand is loaded at run time like libcuda; [`probe::curand_probe`](super::probe) checks
//! that it loads before cudarc is asked (cudarc panics when it cannot find it), so a machine
//! without cuRAND gets an `Err` naming the library.
//!
//! Every fill takes `(seed, offset)` and sets both before generating, so its values depend on
//! them alone, never on what the generator produced before: the array layer derives one seed
//! per array drawn from a `random::Generator`.

use super::{probe::curand_probe, CudaBackend};
use crate::error::{Error, Result};
use cudarc::curand::{result, sys};

/// A cuRAND host generator (Philox4x32-10) bound to one backend's stream.
pub(crate) struct Curand {
    gen: sys::curandGenerator_t,
}

// SAFETY: the generator is a handle that cuRAND allows to be used from any thread; gpukit keeps
// it behind its backend's mutex, so it is never used by two threads at once.
unsafe impl Send for Curand {}

impl Drop for Curand {
    fn drop(&mut self) {
        // SAFETY: created by `create_generator_kind` and destroyed only here. An error (a lost
        // context) is ignored: there is nothing left to free then.
        let _ = unsafe { result::destroy_generator(self.gen) };
    }
}

/// What a cuRAND call failed with, as an [`Error::Cuda`].
fn curand_err(what: &str, e: result::CurandError) -> Error {
    Error::Cuda(format!("cuRAND failed {what}: {:?}", e.0))
}

/// Which values a fill produces.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fill {
    /// Uniform `u32` bits (`curandGenerate`).
    Bits32,
    /// Uniform `f32` in (0, 1] (`curandGenerateUniform`).
    UniformF32,
    /// Uniform `f64` in (0, 1] (`curandGenerateUniformDouble`).
    UniformF64,
    /// Normal `f32` (`curandGenerateNormal`): mean, standard deviation. `n` must be even.
    NormalF32(f32, f32),
    /// Normal `f64` (`curandGenerateNormalDouble`): mean, standard deviation. `n` must be even.
    NormalF64(f64, f64),
}

impl CudaBackend {
    /// Queues a cuRAND fill of `n` values at device address `ptr` on this device's stream,
    /// with the generator set to `seed` and `offset` first.
    ///
    /// # Safety
    /// `ptr` must address at least `n` writable values of the type `fill` produces, on this
    /// device, alive until the stream has run the fill.
    pub(crate) unsafe fn curand_fill(
        &self,
        ptr: u64,
        n: usize,
        fill: Fill,
        seed: u64,
        offset: u64,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.ensure_usable()?;
        curand_probe().map_err(Error::Cuda)?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| super::driver_err("binding the CUDA context for cuRAND", e))?;
        let mut slot = self.curand.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let gen = result::create_generator_kind(
                sys::curandRngType_t::CURAND_RNG_PSEUDO_PHILOX4_32_10,
            )
            .map_err(|e| curand_err("creating a generator", e))?;
            let created = Curand { gen };
            // SAFETY: a live generator and this backend's live stream (kept as long as it).
            result::set_stream(created.gen, self.stream.cu_stream() as _)
                .map_err(|e| curand_err("setting its stream", e))?;
            *slot = Some(created);
        }
        let gen = slot.as_ref().map(|c| c.gen).expect("created just above");
        result::set_seed(gen, seed).map_err(|e| curand_err("setting the seed", e))?;
        result::set_offset(gen, offset).map_err(|e| curand_err("setting the offset", e))?;
        let status = match fill {
            Fill::Bits32 => sys::curandGenerate(gen, ptr as *mut u32, n),
            Fill::UniformF32 => sys::curandGenerateUniform(gen, ptr as *mut f32, n),
            Fill::UniformF64 => sys::curandGenerateUniformDouble(gen, ptr as *mut f64, n),
            Fill::NormalF32(m, s) => sys::curandGenerateNormal(gen, ptr as *mut f32, n, m, s),
            Fill::NormalF64(m, s) => sys::curandGenerateNormalDouble(gen, ptr as *mut f64, n, m, s),
        };
        status
            .result()
            .map_err(|e| curand_err(&format!("generating {n} values ({fill:?})"), e))
    }
}
