//! # gpukit-step-sync
//!
//! The Rust GPU kernel ends every notebook step with a device synchronisation, so a GPU error
//! is reported by the cell that caused it. Each cell is built into its own shared object, and
//! what a cell calls costs it twice: the compiler generates code for the call's generic parts,
//! and the linker copies the callee's object files, and everything they reach, out of the rlibs.
//! `gpukit::synchronize()` reaches gpukit's CUDA backend; even a small function in gpukit sits
//! in an object file that reaches much of gpukit (measured: a 260 ms cell build spent 60 ms more
//! linking). This crate is that call's small home:
//!
//! * once per user process, [`register`] stores a synchronising function (compiled in that one
//!   cell, where it links gpukit) as `PID:ADDRESS` in the environment variable [`ENV`];
//! * every step calls [`synchronize_registered`], compiled here once, never inlined, depending
//!   on std alone: the cell links this crate's one small object and generates one call.
//!
//! The process id in the value means a process started by a cell, which inherits the variable,
//! never calls an address of its parent. evcxr keeps every shared object it loaded until the
//! process ends, so the registered address stays valid.

/// The environment variable of the user process that holds `PID:ADDRESS`.
pub const ENV: &str = "GPUKIT_STEP_SYNC";

/// A synchronising function: waits for the devices and returns their error as text.
pub type SyncFn = fn() -> Result<(), String>;

/// Makes `f` the function [`synchronize_registered`] calls in this process.
pub fn register(f: SyncFn) {
    let value = format!("{}:{}", std::process::id(), f as usize);
    // SAFETY (edition 2024 calls this unsafe): the user process sets it from the step running
    // on its main thread, before any later step reads it.
    #[allow(unused_unsafe)]
    unsafe {
        std::env::set_var(ENV, value)
    };
}

/// The address registered by this process, if any (another process's value is ignored).
fn registered() -> Option<usize> {
    let value = std::env::var(ENV).ok()?;
    let (pid, address) = value.split_once(':')?;
    if pid.parse::<u32>().ok()? != std::process::id() {
        return None;
    }
    address.parse::<usize>().ok().filter(|a| *a != 0)
}

/// Calls the function [`register`]ed in this process; `Ok(())` when there is none.
#[inline(never)]
pub fn synchronize_registered() -> Result<(), String> {
    match registered() {
        None => Ok(()),
        Some(address) => {
            // SAFETY: the address was stored by `register` in this process (the process id
            // matched) from a value of type `SyncFn`, in a shared object that is never unloaded.
            let f = unsafe { std::mem::transmute::<usize, SyncFn>(address) };
            f()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing() -> Result<(), String> {
        Err("device fault".to_string())
    }

    /// One test: the variable is process-wide, so the steps run in order here.
    #[test]
    fn only_this_processs_registration_is_called() {
        #[allow(unused_unsafe)]
        unsafe {
            std::env::remove_var(ENV)
        };
        assert_eq!(synchronize_registered(), Ok(()), "nothing registered");
        #[allow(unused_unsafe)]
        unsafe {
            std::env::set_var(ENV, format!("{}:{}", u32::MAX, failing as SyncFn as usize))
        };
        assert_eq!(synchronize_registered(), Ok(()), "another process's value");
        register(failing);
        assert_eq!(synchronize_registered(), Err("device fault".to_string()));
        let value = std::env::var(ENV).unwrap();
        assert!(
            value.starts_with(&format!("{}:", std::process::id())),
            "{value}"
        );
    }
}
