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
//! 2. tries to recover: resets the device's primary context (`cuDevicePrimaryCtxReset`) and
//!    checks that a fresh context can allocate, copy and synchronise. Where the driver allows
//!    it, the next [`CudaBackend::get`] creates a fresh backend: new arrays work and kernels
//!    compile again (the per-device tables of compiled functions are keyed by the backend's
//!    [generation](CudaBackend::generation)). Where it does not (the CUDA 13 driver documents
//!    that after an illegal address "the process must be terminated and relaunched", and the
//!    check confirms it), the device is marked unusable for the rest of the process: asking
//!    for it is the same clear [`Error::DeviceLost`] at once, and the default device becomes
//!    the CPU ([`crate::device`] reads [`unusable`]), so the notebook goes on there until the
//!    kernel is restarted;
//! 3. keeps the lost backend and its buffers alive for the rest of the process (leaked): their
//!    handles belong to the destroyed context, and freeing them later could free memory of a
//!    new one that happens to have the same address.

use super::{registry, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

crate::process::process_global! {
    /// Devices that cannot be used again in this process, with the message that says why.
    fn unusable_devices() -> &'static Mutex<HashMap<usize, String>> = Mutex::new(HashMap::new());
}

crate::process::process_global! {
    /// Whether any device is in [`unusable_devices`] (a lock-free answer for the common case).
    fn any_unusable() -> &'static AtomicBool = AtomicBool::new(false);
}

/// Why device `ordinal` cannot be used again in this process (after a fault the driver could
/// not recover from), or `None` while it can.
pub(crate) fn unusable(ordinal: usize) -> Option<String> {
    if !any_unusable().load(Ordering::Acquire) {
        return None;
    }
    unusable_devices()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&ordinal)
        .cloned()
}

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
            let recovered = self
                .reset_device()
                .map_err(|e| e.to_string())
                .and_then(|()| verify_device(self.ordinal));
            if let Ok(mut reg) = registry().try_lock() {
                if reg
                    .get(&self.ordinal)
                    .is_some_and(|b| std::ptr::eq(Arc::as_ptr(b), self))
                {
                    reg.remove(&self.ordinal);
                }
            }
            let message = lost_message(&device, cause, recovered.as_ref().err());
            if recovered.is_err() {
                unusable_devices()
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(self.ordinal, message.clone());
                any_unusable().store(true, Ordering::Release);
            }
            Lost { message }
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

/// Whether a fresh context on device `ordinal` works after a reset: it can allocate, copy
/// and synchronise. The error names the first call that failed.
fn verify_device(ordinal: usize) -> std::result::Result<(), String> {
    let ctx = cudarc::driver::CudaContext::new(ordinal)
        .map_err(|e| format!("a new context answers {e}"))?;
    let stream = ctx.default_stream();
    let probe = stream
        .clone_htod(&[1u32, 2, 3])
        .map_err(|e| format!("a first copy answers {e}"))?;
    let back = stream
        .clone_dtoh(&probe)
        .map_err(|e| format!("a copy back answers {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("a synchronisation answers {e}"))?;
    if back != [1, 2, 3] {
        return Err(format!("a copy came back as {back:?}"));
    }
    Ok(())
}

/// The message of a fault: what happened, what is lost, and what state the device is in
/// (`unrecoverable`: why the driver does not let the process use it again).
pub(crate) fn lost_message(device: &str, cause: &str, unrecoverable: Option<&String>) -> String {
    let recovery = match unrecoverable {
        None => format!(
            "gpukit has reset {device}: new arrays work there again, and kernels compile again at \
             their next launch."
        ),
        Some(why) => format!(
            "The CUDA driver does not let this process use {device} again (after a reset, {why}): \
             gpukit made the CPU the default device so that the notebook can go on, and asking \
             for {device} gives this message. Restart the kernel to use the GPU again."
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
        let m = lost_message("cuda:0", "synchronizing the stream: illegal address", None);
        assert!(m.contains("cuda:0 hit a fatal fault (synchronizing the stream"));
        assert!(m.contains("every array that lived on cuda:0 is lost"));
        assert!(m.contains("gpukit has reset cuda:0"));
        let why = "a new context answers CUDA_ERROR_ILLEGAL_ADDRESS".to_string();
        let m = lost_message("cuda:1", "x", Some(&why));
        assert!(m.contains("does not let this process use cuda:1 again"));
        assert!(m.contains(&why));
        assert!(m.contains("Restart the kernel"));
        assert!(m.contains("CPU the default device"));
    }
}
