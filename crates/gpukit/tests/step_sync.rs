//! The kernel's step synchronisation (`__private::register_synchronize` and
//! `synchronize_registered`): a deferred error comes out of the registered `synchronize`.
//! One test in its own process, so no other test takes the pending error first.

use gpukit::__private::{register_synchronize, synchronize_registered};
use gpukit::prelude::*;

#[test]
fn the_registered_synchronize_reports_a_deferred_error_once() -> gpukit::Result<()> {
    let device = Device::cpu();
    assert!(
        synchronize_registered().is_ok(),
        "nothing registered: nothing to report"
    );
    register_synchronize();
    let mut a = Array::<f32>::zeros_on(3, &device)?;
    let b = Array::<f32>::zeros_on(4, &device)?;
    // An assigning operator cannot return its error: it is kept for the next synchronisation.
    a += &b;
    let e = synchronize_registered().expect_err("the shape mismatch is reported");
    assert!(
        e.contains("+=") && e.contains("[3]") && e.contains("[4]"),
        "{e}"
    );
    assert!(
        synchronize_registered().is_ok(),
        "an error is reported once"
    );
    Ok(())
}
