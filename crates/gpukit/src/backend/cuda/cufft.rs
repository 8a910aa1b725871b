//! cuFFT (through cudarc's `cufft::result` layer): batched plans over C-contiguous data, queued
//! on the device's one stream and cached per shape.
//!
//! libcufft is loaded at run time like libcuda; [`probe::cufft_probe`](super::probe) checks that
//! it loads before cudarc is asked (cudarc panics when it cannot find it), so a machine without
//! cuFFT gets an `Err` naming the library. A device keeps at most [`MAX_PLANS`] plans (each
//! holds a work area in device memory); past that the cache is emptied, after the stream's
//! queued work is done, as CuPy's plan cache bounds itself.

use super::{probe::cufft_probe, CudaBackend};
use crate::error::{Error, Result};
use cudarc::cufft::{result, sys};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, OnceLock};

/// Most plans cached per device.
const MAX_PLANS: usize = 16;

/// Which transform a plan computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FftKind {
    /// complex64 ↔ complex64.
    C2C,
    /// float32 → complex64 (half spectrum).
    R2C,
    /// complex64 (half spectrum) → float32.
    C2R,
    /// complex128 ↔ complex128.
    Z2Z,
    /// float64 → complex128.
    D2Z,
    /// complex128 → float64.
    Z2D,
}

impl FftKind {
    fn sys(self) -> sys::cufftType {
        match self {
            FftKind::C2C => sys::cufftType::CUFFT_C2C,
            FftKind::R2C => sys::cufftType::CUFFT_R2C,
            FftKind::C2R => sys::cufftType::CUFFT_C2R,
            FftKind::Z2Z => sys::cufftType::CUFFT_Z2Z,
            FftKind::D2Z => sys::cufftType::CUFFT_D2Z,
            FftKind::Z2D => sys::cufftType::CUFFT_Z2D,
        }
    }
}

/// A cuFFT plan: `batch` transforms of the dimensions `dims` (logical sizes, the real side's
/// for R2C/C2R), over consecutive C-contiguous signals.
pub(crate) struct FftPlan {
    handle: sys::cufftHandle,
    kind: FftKind,
}

// SAFETY: a plan is a handle that cuFFT allows to be used from any thread; gpukit queues every
// execution on the one stream of its device while holding the cache's lock.
unsafe impl Send for FftPlan {}
unsafe impl Sync for FftPlan {}

impl Drop for FftPlan {
    fn drop(&mut self) {
        // SAFETY: created by `plan_many` and destroyed only here. An error (a lost context) is
        // ignored: there is nothing left to free then.
        let _ = unsafe { result::destroy(self.handle) };
    }
}

/// What a cuFFT call failed with, as an [`Error::Cuda`].
fn cufft_err(what: &str, e: result::CufftError) -> Error {
    Error::Cuda(format!("cuFFT failed {what}: {:?}", e.0))
}

type Key = (usize, u64, FftKind, Vec<usize>, usize);

/// The plans of every device, keyed by device, backend generation, kind, dims and batch.
fn plans() -> &'static Mutex<HashMap<Key, Arc<FftPlan>>> {
    static PLANS: OnceLock<Mutex<HashMap<Key, Arc<FftPlan>>>> = OnceLock::new();
    PLANS.get_or_init(|| Mutex::new(HashMap::new()))
}

impl CudaBackend {
    /// Queues `batch` transforms of `dims` (1 to 3 dimensions) from the device address `input`
    /// to `output` (`inverse`: cuFFT's unnormalised inverse for C2C/Z2Z).
    ///
    /// # Safety
    /// `input` and `output` must be live device buffers of this backend holding `batch`
    /// consecutive signals of the kind's input and output layouts; for C2R/Z2D `input` is
    /// overwritten (cuFFT uses it as scratch).
    pub(crate) unsafe fn cufft_exec(
        &self,
        kind: FftKind,
        dims: &[usize],
        batch: usize,
        input: u64,
        output: u64,
        inverse: bool,
    ) -> Result<()> {
        if batch == 0 || dims.contains(&0) {
            return Ok(());
        }
        self.ensure_usable()?;
        cufft_probe().map_err(Error::Cuda)?;
        if dims.is_empty() || dims.len() > 3 {
            return Err(Error::Shape(format!(
                "cuFFT transforms 1 to 3 dimensions at once, not {}",
                dims.len()
            )));
        }
        let too_big = || {
            Error::Shape(format!(
                "an FFT of dims {dims:?} x {batch} is too large for cuFFT's 32-bit plan sizes"
            ))
        };
        let n: Vec<c_int> = dims
            .iter()
            .map(|&d| c_int::try_from(d).map_err(|_| too_big()))
            .collect::<Result<_>>()?;
        let batch_i = c_int::try_from(batch).map_err(|_| too_big())?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| super::driver_err("binding the CUDA context for cuFFT", e))?;
        let key: Key = (self.ordinal, self.generation, kind, dims.to_vec(), batch);
        let mut cache = plans().lock().unwrap_or_else(|p| p.into_inner());
        let plan = match cache.get(&key) {
            Some(p) => p.clone(),
            None => {
                if cache.len() >= MAX_PLANS {
                    // Queued transforms may still use the plans' work areas.
                    self.stream
                        .synchronize()
                        .map_err(|e| super::driver_err("waiting before freeing cuFFT plans", e))?;
                    cache.clear();
                }
                // NULL embeddings: the basic layout (consecutive C-contiguous signals; for
                // R2C/C2R the complex side has n_last / 2 + 1 elements on its last axis).
                let handle = result::plan_many(
                    n.len() as c_int,
                    n.as_ptr() as *mut c_int,
                    std::ptr::null_mut(),
                    1,
                    0,
                    std::ptr::null_mut(),
                    1,
                    0,
                    kind.sys(),
                    batch_i,
                )
                .map_err(|e| cufft_err(&format!("planning {kind:?} of {dims:?} x {batch}"), e))?;
                let plan = Arc::new(FftPlan { handle, kind });
                result::set_stream(plan.handle, self.stream.cu_stream() as _)
                    .map_err(|e| cufft_err("setting the plan's stream", e))?;
                cache.insert(key, plan.clone());
                plan
            }
        };
        let dir = if inverse { 1 } else { -1 };
        let h = plan.handle;
        let status = match plan.kind {
            FftKind::C2C => result::exec_c2c(h, input as _, output as _, dir),
            FftKind::R2C => result::exec_r2c(h, input as _, output as _),
            FftKind::C2R => result::exec_c2r(h, input as _, output as _),
            FftKind::Z2Z => result::exec_z2z(h, input as _, output as _, dir),
            FftKind::D2Z => result::exec_d2z(h, input as _, output as _),
            FftKind::Z2D => result::exec_z2d(h, input as _, output as _),
        };
        status.map_err(|e| cufft_err(&format!("executing {kind:?} of {dims:?} x {batch}"), e))
    }
}
