//! The device synchronisation that ends every Rust step of a gpukit session, without linking
//! gpukit's backends into every cell or generating code for it in every cell.
//!
//! evcxr links each cell into its own shared object. A call to `gpukit::synchronize()` in a cell
//! makes the linker pull that function and everything it reaches (the CUDA backend, cudarc's
//! loader, ...) out of gpukit's rlibs into every cell. Instead, once in every user process
//! (beside the panic hook), [`REGISTER`] has gpukit hand its `synchronize` to the small
//! `gpukit-step-sync` crate, which keeps the address for the process; the end of each step
//! ([`SYNC`]) calls that crate's `synchronize_registered`, compiled once and never inlined, so a
//! cell generates code for one call and links one small object. (Writing the lookup out in every
//! step, as the kernel first did, made LLVM optimise it anew for every cell, about 90 ms of a
//! small cell's 260 ms compile on a 2-core machine; calling a function that lives in gpukit made
//! the linker copy gpukit objects, 60 ms: `-Z time-passes`.) Without a registration in the
//! process the call does nothing.

/// Rust for one step of every user process of a gpukit session: registers this step's
/// `gpukit::synchronize` as the one every later step calls. A statement (no trailing value), so
/// evcxr compiles it once.
pub const REGISTER: &str = "gpukit::__private::register_synchronize();";

/// The statement that ends each Rust step: waits for the devices' work and returns gpukit's
/// error, if any, with `?`.
pub const SYNC: &str = "gpukit::__private::synchronize_registered()?;";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_epilogue_is_one_call_to_gpukits_compiled_lookup() {
        assert!(SYNC.contains("synchronize_registered()?"));
        assert!(REGISTER.contains("register_synchronize()"));
        assert!(
            !SYNC.contains("gpukit::synchronize()"),
            "the epilogue must not link the backends"
        );
        // One statement each: the epilogue keeps a cell's trailing expression displayed, and
        // the registration adds no value to display (so evcxr does not compile it twice).
        for code in [SYNC, REGISTER] {
            assert!(crate::rewrite::tail(code)
                .is_some_and(|t| !matches!(t, crate::rewrite::Tail::Expr { .. })));
        }
    }
}
