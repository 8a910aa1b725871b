//! Sticky CUDA faults: errors after which a CUDA context is unusable, and the recovery.
//!
//! An illegal address in raw CUDA C or in a `#[kernel(unchecked)]` kernel (and a few other
//! faults: misaligned access, illegal instruction, a device-side assert, a hardware stack
//! error) poisons the whole context: from then on every driver call on it fails with the same
//! error, and every allocation made in it is gone. Left alone, a notebook would answer every
//! later cell with a bare CUDA error until the kernel is restarted.
//!
//! gpukit notices such an error wherever a driver call returns it ([`driver_err`]), and then,
//! once per fault:
//!
//! 1. marks the device's backend *lost*, with one message that says what happened and what is
//!    lost; every later use of that backend (an array that lived on it, a launch, a copy) fails
//!    with that message instead of touching the dead context;
//! 2. resets the device's primary context (`cuDevicePrimaryCtxReset`), which the driver allows
//!    for these faults, so that the next [`CudaBackend::get`] creates a fresh backend: new
//!    arrays work and kernels compile again on their next launch (the per-device tables of
//!    compiled functions are keyed by the backend's [generation](CudaBackend::generation));
//! 3. keeps the lost backend and its buffers alive for the rest of the process (leaked): their
//!    handles belong to the destroyed context, and freeing them later could free memory of the
//!    new one that happens to have the same address.

use super::{registry, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;
use std::sync::Arc;

/// Whether the driver reports a fault that leaves the context unusable.
pub(crate) fn is_sticky(e: &DriverError) -> bool {
    matches!(
        e.0,
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
            | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
            | CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUresult::CUDA_ERROR_INVALID_PC
            | CUresult::CUDA_ERROR_LAUNCH_FAILED
            | CUresult::CUDA_ERROR_ASSERT
            | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

/// Maps a driver error to gpukit's error, naming what was being done. A sticky fault marks the
/// backend whose context is current on this thread as lost and resets its device (see the
/// module docs); the error then says so.
pub(crate) fn driver_err(what: &str, e: DriverError) -> Error {
    if is_sticky(&e) {
        if let Some(backend) = current_backend() {
            return backend.lose(&format!("{what}: {e}"));
        }
    }
    Error::Cuda(format!("{what}: {e}"))
}

/// The live backend whose context is current on this thread, if gpukit made one current.
/// `None` while the registry is locked (a backend is being created on this thread), rather
/// than waiting for ourselves.
fn current_backend() -> Option<Arc<CudaBackend>> {
    let current = cudarc::driver::result::ctx::get_current().ok()??;
    let reg = registry().try_lock().ok()?;
    reg.values()
        .find(|b| b.context().cu_ctx() == current)
        .cloned()
}

/// What a lost backend remembers: the message every later use repeats.
#[derive(Debug)]
pub(crate) struct Lost {
    /// The full message (what happened, what is lost, whether the device was reset).
    message: String,
}

impl CudaBackend {
    /// Whether a sticky fault has destroyed this backend's context.
    #[inline]
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.get().is_some()
    }

    /// `Ok` while the backend is usable, else the [`Error::DeviceLost`] of its fault.
    #[inline]
    pub(crate) fn ensure_usable(&self) -> Result<()> {
        match self.lost.get() {
            None => Ok(()),
            Some(lost) => Err(self.lost_error(lost)),
        }
    }

    #[cold]
    fn lost_error(&self, lost: &Lost) -> Error {
        Error::DeviceLost {
            device: format!("cuda:{}", self.ordinal),
            message: lost.message.clone(),
        }
    }

    /// [`driver_err`] for an error of this backend's own work: a sticky fault loses this
    /// backend (whatever context is current on the thread).
    pub(crate) fn fault_err(&self, what: &str, e: DriverError) -> Error {
        if is_sticky(&e) {
            return self.lose(&format!("{what}: {e}"));
        }
        Error::Cuda(format!("{what}: {e}"))
    }

    /// Marks this backend lost after the sticky fault `cause`, resets the device (once), and
    /// returns the error that describes both.
    #[cold]
    pub(crate) fn lose(&self, cause: &str) -> Error {
        if let Some(lost) = self.lost.get() {
            return self.lost_error(lost);
        }
        let device = format!("cuda:{}", self.ordinal);
        // The one caller that marks it resets the device; others wait for the message.
        let mut first = false;
        let lost = self.lost.get_or_init(|| {
            first = true;
            // Never dropped: its buffers and handles belong to the context about to go.
            if let Some(me) = self.shared() {
                std::mem::forget(me);
            }
            let reset = self.reset_device();
            if let Ok(mut reg) = registry().try_lock() {
                if reg
                    .get(&self.ordinal)
                    .is_some_and(|b| std::ptr::eq(Arc::as_ptr(b), self))
                {
                    reg.remove(&self.ordinal);
                }
            }
            Lost {
                message: lost_message(&device, cause, reset),
            }
        });
        if first {
            eprintln!("gpukit: {}", lost.message);
        }
        self.lost_error(lost)
    }

    /// `cuDevicePrimaryCtxReset`: destroys every allocation and all state of the device's
    /// primary context, so that it can be used again.
    fn reset_device(&self) -> std::result::Result<(), DriverError> {
        // SAFETY: the device handle comes from this backend's live context; nothing of gpukit
        // uses the old context after this (the backend is marked lost first, and its buffers
        // are never freed).
        unsafe { cudarc::driver::sys::cuDevicePrimaryCtxReset_v2(self.context().cu_device()) }
            .result()
    }
}

/// The message of a fault: what happened, what is lost, and what state the device is in.
pub(crate) fn lost_message(
    device: &str,
    cause: &str,
    reset: std::result::Result<(), DriverError>,
) -> String {
    let recovery = match reset {
        Ok(()) => format!(
            "gpukit has reset {device}: new arrays work there again, and kernels compile again at \
             their next launch."
        ),
        Err(e) => format!(
            "gpukit could not reset {device} ({e}); restart the kernel to use {device} again \
             (the CPU device still works)."
        ),
    };
    format!(
        "{device} hit a fatal fault ({cause}). Such a fault (typically an index out of range in \
         raw CUDA C or in a #[kernel(unchecked)] kernel) destroys the whole CUDA context: every \
         array that lived on {device} is lost, and using one is an error. {recovery} Host data, \
         CPU arrays and other variables are intact."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_faults_are_told_from_ordinary_errors() {
        assert!(is_sticky(&DriverError(
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        )));
        assert!(is_sticky(&DriverError(
            CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
        )));
        assert!(!is_sticky(&DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)));
        assert!(!is_sticky(&DriverError(CUresult::CUDA_ERROR_INVALID_VALUE)));
    }

    #[test]
    fn the_message_says_what_happened_and_what_is_lost() {
        let m = lost_message(
            "cuda:0",
            "synchronizing the stream: illegal address",
            Ok(()),
        );
        assert!(m.contains("cuda:0 hit a fatal fault (synchronizing the stream"));
        assert!(m.contains("every array that lived on cuda:0 is lost"));
        assert!(m.contains("gpukit has reset cuda:0"));
        let m = lost_message(
            "cuda:1",
            "x",
            Err(DriverError(CUresult::CUDA_ERROR_UNKNOWN)),
        );
        assert!(m.contains("could not reset cuda:1"));
        assert!(m.contains("restart the kernel"));
    }

    #[test]
    fn ordinary_errors_stay_cuda_errors() {
        let e = driver_err("copying", DriverError(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(matches!(e, Error::Cuda(_)), "{e}");
    }
}
