//! The device synchronisation that ends every Rust step of a gpukit session, without linking
//! gpukit's code into every cell.
//!
//! evcxr links each cell into its own shared object. A call to `gpukit::synchronize()` in a cell
//! makes the linker pull that function and everything it reaches (the CUDA backend, cudarc's
//! loader, ...) out of gpukit's rlibs into every cell, and the compiler generate and optimise the
//! call site's code: about a third of a small cell's build on a 2-core machine. Instead, once in
//! every user process (beside the panic hook), [`REGISTER`] stores in the process environment
//! the address of a function, compiled in that step's shared object, that calls
//! `gpukit::synchronize()`; the end of each step ([`SYNC`]) reads the address and calls it,
//! which needs nothing from gpukit. evcxr keeps every shared object it loaded until the process
//! ends, so the address stays valid. The value carries the process id: a process started by a
//! cell inherits the variable but its own id differs, so it never calls an address of another
//! process. Without the variable (the registration did not run in this process) the step skips
//! the synchronisation.

/// The environment variable of the user process that holds `PID:ADDRESS`.
pub const ENV: &str = "EVCXR_GPU_SYNC";

/// Rust for one step of every user process of a gpukit session: publishes the synchronising
/// function's address in [`ENV`]. Statements only (no trailing value), so evcxr compiles it once.
pub const REGISTER: &str =
    "{ fn __gk_sync() -> ::std::result::Result<(), ::std::string::String> { \
     gpukit::synchronize().map_err(|e| e.to_string()) } \
     let __gk_sync_fn: fn() -> ::std::result::Result<(), ::std::string::String> = __gk_sync; \
     #[allow(unused_unsafe)] unsafe { ::std::env::set_var(\"EVCXR_GPU_SYNC\", \
     ::std::format!(\"{}:{}\", ::std::process::id(), __gk_sync_fn as usize)) }; }";

/// The statement that ends each Rust step: calls the registered function, if any, and returns
/// its error (gpukit's error message) with `?`.
pub const SYNC: &str = "::std::env::var(\"EVCXR_GPU_SYNC\").ok().and_then(|__gk_v| { \
     let (__gk_pid, __gk_addr) = __gk_v.split_once(':')?; \
     if __gk_pid.parse::<u32>().ok()? != ::std::process::id() { return None; } \
     __gk_addr.parse::<usize>().ok().filter(|__gk_a| *__gk_a != 0) }) \
     .map_or(Ok(()), |__gk_a| { let __gk_f = unsafe { \
     ::std::mem::transmute::<usize, fn() -> ::std::result::Result<(), ::std::string::String>>(__gk_a) }; \
     __gk_f() })?;";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_epilogue_does_not_name_gpukit() {
        assert!(!SYNC.contains("gpukit"));
        assert!(SYNC.contains(ENV) && REGISTER.contains(ENV));
        assert!(SYNC.trim_end().ends_with(")?;"));
        assert!(REGISTER.contains("gpukit::synchronize()"));
        // One statement each: the epilogue keeps a cell's trailing expression displayed, and
        // the registration adds no value to display (so evcxr does not compile it twice).
        assert!(crate::rewrite::tail(SYNC)
            .is_some_and(|t| !matches!(t, crate::rewrite::Tail::Expr { .. })));
        assert!(crate::rewrite::tail(&format!("{REGISTER};"))
            .is_some_and(|t| !matches!(t, crate::rewrite::Tail::Expr { .. })));
    }

    /// The two snippets as evcxr runs them in one process (copied here as ordinary Rust, with a
    /// stand-in for `gpukit::synchronize`): nothing is called for another process's value; the
    /// registered function's error comes back through `?`.
    #[test]
    fn registered_function_is_called_and_its_error_returned() {
        mod gpukit {
            pub fn synchronize() -> Result<(), &'static str> {
                Err("device fault")
            }
        }
        fn register() {
            fn __gk_sync() -> ::std::result::Result<(), ::std::string::String> {
                gpukit::synchronize().map_err(|e| e.to_string())
            }
            let __gk_sync_fn: fn() -> ::std::result::Result<(), ::std::string::String> = __gk_sync;
            #[allow(unused_unsafe)]
            unsafe {
                ::std::env::set_var(
                    "EVCXR_GPU_SYNC",
                    ::std::format!("{}:{}", ::std::process::id(), __gk_sync_fn as usize),
                )
            };
        }
        fn step() -> Result<(), String> {
            ::std::env::var("EVCXR_GPU_SYNC")
                .ok()
                .and_then(|__gk_v| {
                    let (__gk_pid, __gk_addr) = __gk_v.split_once(':')?;
                    if __gk_pid.parse::<u32>().ok()? != ::std::process::id() {
                        return None;
                    }
                    __gk_addr
                        .parse::<usize>()
                        .ok()
                        .filter(|__gk_a| *__gk_a != 0)
                })
                .map_or(Ok(()), |__gk_a| {
                    let __gk_f = unsafe {
                        ::std::mem::transmute::<
                            usize,
                            fn() -> ::std::result::Result<(), ::std::string::String>,
                        >(__gk_a)
                    };
                    __gk_f()
                })?;
            Ok(())
        }
        let squash = |s: &str| s.split_whitespace().collect::<String>();
        // The copies above are the constants' text.
        let src = squash(include_str!("sync.rs"));
        for part in [
            "gpukit::synchronize().map_err(|e|e.to_string())",
            "if__gk_pid.parse::<u32>().ok()?!=::std::process::id(){returnNone;}",
        ] {
            assert!(
                squash(REGISTER).contains(part) || squash(SYNC).contains(part),
                "{part}"
            );
            assert!(src.matches(part).count() >= 2, "{part}");
        }
        // No registration yet, or another process's: nothing is called.
        #[allow(unused_unsafe)] // unsafe from edition 2024 on
        unsafe {
            std::env::remove_var(ENV)
        };
        assert_eq!(step(), Ok(()));
        #[allow(unused_unsafe)]
        unsafe {
            std::env::set_var(ENV, "4294967295:12345")
        };
        assert_eq!(step(), Ok(()));
        register();
        assert_eq!(step(), Err("device fault".to_string()));
    }
}
