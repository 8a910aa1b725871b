//! The CPU backend.
use crate::error::Result;

/// Returns (and clears) an error left by an asynchronous operation on the CPU device.
pub(crate) fn take_pending_error() -> Result<()> {
    Ok(())
}
