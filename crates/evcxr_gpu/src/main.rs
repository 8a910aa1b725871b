//! The `evcxr_gpu` binary: a Jupyter kernel (and, re-executed by evcxr, its user-code process and
//! rustc wrapper).

fn main() {
    // As evcxr's rustc wrapper for a cell crate: re-executes itself once with faster flags.
    evcxr_gpu::cell_rustc::wrap();
    // As evcxr's rustc wrapper for a cached dependency: one kernel at a time builds it (the lock
    // is released when this process exits, which evcxr's wrapper does when the build ends).
    let _dependency_lock = evcxr_gpu::dep_lock::hold();
    // When evcxr starts this binary as the process that runs user code (or wraps rustc), this
    // call never returns.
    evcxr::runtime_hook();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = evcxr_gpu::cli::run(&args) {
        eprintln!("evcxr_gpu: {e:#}");
        std::process::exit(1);
    }
}
