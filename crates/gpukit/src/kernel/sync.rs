//! Waiting for every device in use.

use crate::backend::{cpu, cuda};
use crate::error::Result;

/// Waits for all work queued on every device in use and reports the first error any of it
/// raised (such as a kernel's out-of-bounds index). Every device is waited for, even after an
/// error.
pub fn synchronize() -> Result<()> {
    let mut first = cpu::take_pending_error();
    for backend in cuda::backends_in_use() {
        let r = backend.synchronize();
        if first.is_ok() {
            first = r;
        }
    }
    first
}
