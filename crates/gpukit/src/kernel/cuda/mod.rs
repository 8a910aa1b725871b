//! The CUDA launch path: compiled functions cached per kernel and device, kernel parameters
//! built on the stack, and an asynchronous `cuLaunchKernel` on the device's stream.
//!
//! The first launch of a kernel on a device compiles it (NVRTC, through the backend's kernel cache)
//! and publishes the loaded function in that device's lock-free table, found by the address of
//! the kernel's source. Later launches read a few atomics (plain loads on x86) and do no
//! hashing of text, no string comparison, no locking, no allocation and no compilation.
//!
//! Per launch, the path adds to `cuLaunchKernel` itself: the argument checks of
//! `launch::check_args`, one table probe, (checked kernels) one load-and-compare for the error
//! record (`bounds::next_record`), a thread-local load for the current context (no
//! `cuCtxGetCurrent`: see `make_current`), and one relaxed load for profiling.
//!
//! Files: `functions` (the per-device function tables), `params` (a launch's parameters), and
//! here the launch itself.

mod functions;
mod params;

pub(crate) use functions::{cached_function, FnSpec, Loaded, PerDevice};

use params::{build_params, Abi, Params};

use super::args::{ArgRepr, KernelArg};
use super::config::LaunchConfig;
use super::info::{source_with_helpers, KernelInfo};
use super::{bounds, profile};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::{CUfunction, CUresult};
use cudarc::driver::CudaSlice;
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// Queues one `#[kernel]` launch on `backend`.
pub(crate) fn launch_kernel(
    info: &KernelInfo,
    config: &LaunchConfig,
    args: &mut [KernelArg<'_>],
    backend: &Arc<CudaBackend>,
) -> Result<()> {
    // Arguments that prove every access in range run the unchecked twin (`ProvenTwin`).
    let twin = info.proven.filter(|t| info.checked && t.holds(args));
    let (key_source, symbol) = match twin {
        Some(t) => (t.cuda_source, t.symbol),
        None => (info.cuda_source, info.name),
    };
    let spec = FnSpec {
        key_source,
        helpers: info.device_fns.as_ptr() as usize,
        kernel: info.name,
        array_names: info.array_names,
    };
    let loaded = cached_function(backend, &spec, || {
        (
            symbol.to_string(),
            source_with_helpers(key_source, info.device_fns),
        )
    })?;
    let checked = info.checked && twin.is_none();
    let kinds = Some(info.params);
    if args.iter().any(|a| matches!(a.repr, ArgRepr::Host(_))) {
        return launch_with_host_args(
            info.name,
            backend,
            loaded.func,
            config,
            Abi::Kernel,
            kinds,
            args,
            |p| {
                if checked {
                    p.push(bounds::next_record(backend, loaded)?);
                }
                Ok(())
            },
        );
    }
    let mut params = Params::new();
    build_params(&mut params, Abi::Kernel, kinds, args, &[], backend)?;
    if checked {
        params.push(bounds::next_record(backend, loaded)?);
    }
    raw_launch(backend, loaded.func, config, &mut params, info.name)
}

/// Queues a launch of a raw CUDA C kernel (arrays passed as pointers).
pub(crate) fn launch_raw(
    name: &str,
    backend: &Arc<CudaBackend>,
    func: CUfunction,
    config: &LaunchConfig,
    args: &mut [KernelArg<'_>],
) -> Result<()> {
    if args.iter().any(|a| matches!(a.repr, ArgRepr::Host(_))) {
        return launch_with_host_args(
            name,
            backend,
            func,
            config,
            Abi::Raw,
            None,
            args,
            |_| Ok(()),
        );
    }
    let mut params = Params::new();
    build_params(&mut params, Abi::Raw, None, args, &[], backend)?;
    raw_launch(backend, func, config, &mut params, name)
}

/// Host arrays: copy in, launch, copy the `&mut` ones back (waiting for the kernel), and say so
/// once per kernel.
#[allow(clippy::too_many_arguments)]
#[cold]
fn launch_with_host_args(
    name: &str,
    backend: &Arc<CudaBackend>,
    func: CUfunction,
    config: &LaunchConfig,
    abi: Abi,
    kinds: Option<&[super::info::ParamInfo]>,
    args: &mut [KernelArg<'_>],
    trailing: impl FnOnce(&mut Params) -> Result<()>,
) -> Result<()> {
    // A graph replays launches on the buffers it captured; host arrays are copied per launch.
    backend.forbid_in_capture(&format!(
        "launching `{name}` with host arrays (ndarray, Vec or slices; pass gpukit Arrays)"
    ))?;
    notice_host_copies(name, backend);
    let mut staged: Vec<(usize, CudaSlice<u8>)> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if let ArgRepr::Host(h) = &a.repr {
            // SAFETY: `ptr` holds `nbytes` bytes of the caller's (or staging) data.
            let bytes = unsafe { std::slice::from_raw_parts(h.ptr as *const u8, h.nbytes()) };
            staged.push((i, backend.upload(bytes)?));
        }
    }
    let mut params = Params::new();
    build_params(&mut params, abi, kinds, args, &staged, backend)?;
    trailing(&mut params)?;
    raw_launch(backend, func, config, &mut params, name)?;
    let mut copied_back = false;
    for (i, dev) in &staged {
        let ArgRepr::Host(h) = &args[*i].repr else {
            continue;
        };
        if h.mutable && h.nbytes() > 0 {
            // SAFETY: the caller's buffer (or the staging copy), `nbytes` long, borrowed mutably.
            let host = unsafe { std::slice::from_raw_parts_mut(h.ptr, h.nbytes()) };
            backend
                .stream()
                .memcpy_dtoh(&dev.slice(..h.nbytes()), host)
                .map_err(|e| driver_err("copying a host argument back", e))?;
            copied_back = true;
        }
    }
    let waited = if copied_back {
        backend.synchronize()
    } else {
        Ok(())
    };
    for a in args.iter_mut() {
        if let ArgRepr::Host(h) = &mut a.repr {
            if h.mutable {
                h.finish();
            }
        }
    }
    waited
}

fn notice_host_copies(kernel: &str, backend: &CudaBackend) {
    crate::process::process_global! {
        fn seen() -> &'static Mutex<HashSet<String>> = Mutex::new(HashSet::new());
    }
    let mut seen = seen().lock().unwrap_or_else(|p| p.into_inner());
    if seen.insert(kernel.to_string()) {
        eprintln!(
            "gpukit: kernel `{kernel}` got host arrays: they are copied to {} (and `&mut` ones back) on every launch; pass gpukit Arrays to avoid the copies",
            backend.device()
        );
    }
}

thread_local! {
    /// The generation of the backend whose context gpukit last made current on this thread
    /// (0: none yet; a generation rather than the context handle, since a device reset after a
    /// fault may give the new context the old handle). Another library (or
    /// cudarc, for another device) can change the current context behind gpukit's back; a
    /// launch that the driver then refuses is bound for real and retried ([`raw_launch`]).
    static BOUND: Cell<u64> = const { Cell::new(0) };
}

/// Makes `backend`'s context current on this thread if it is not; `Ok(true)` when it trusted
/// this thread's record of what gpukit bound last (no driver call).
///
/// The record saves a driver call (`cuCtxGetCurrent`) per launch for a thread-local load.
/// `CudaContext::bind_to_thread` also swaps cudarc's deferred-error word first (an atomic
/// read-modify-write on a shared cache line); a launch leaves that check to the next
/// synchronisation, which goes through `bind_to_thread` and so still reports such errors.
#[inline]
pub(crate) fn make_current(backend: &CudaBackend) -> Result<bool> {
    if BOUND.with(Cell::get) == backend.generation() {
        return Ok(true);
    }
    bind(backend).map(|_| false)
}

/// Asks the driver for the current context and sets `backend`'s if it differs.
#[cold]
pub(crate) fn bind(backend: &CudaBackend) -> Result<()> {
    use cudarc::driver::result::ctx;
    let want = backend.context().cu_ctx();
    BOUND.with(|b| b.set(0));
    match ctx::get_current() {
        Ok(Some(current)) if current == want => {}
        // SAFETY: the context is alive (the backend holds it) and belongs to this process.
        Ok(_) => unsafe { ctx::set_current(want) }
            .map_err(|e| driver_err("binding the CUDA context", e))?,
        Err(e) => return Err(driver_err("binding the CUDA context", e)),
    }
    BOUND.with(|b| b.set(backend.generation()));
    Ok(())
}

/// `cuLaunchKernel` on the device's stream, with profiling events when profiling is on.
#[inline]
fn raw_launch(
    backend: &CudaBackend,
    func: CUfunction,
    config: &LaunchConfig,
    params: &mut Params,
    name: &str,
) -> Result<()> {
    backend.ensure_usable()?;
    let trusted = make_current(backend)?;
    let events = if backend.is_capturing() {
        // Captured into a graph: its buffers are noted for the graph's keeper, and it is not
        // timed now (a replay of the graph is).
        super::graph::note_params(&params.values());
        None
    } else {
        profile::cuda_begin(backend)?
    };
    let pointers = params.pointers();
    let mut launched = cu_launch(backend, func, config, pointers);
    if trusted && launched.is_err() {
        // Perhaps someone else changed this thread's context since gpukit bound it (the driver
        // answers that with one of several errors): bind for real and try once more; a genuine
        // error repeats and is reported.
        bind(backend)?;
        launched = cu_launch(backend, func, config, pointers);
    }
    if let Err(e) = launched {
        return Err(launch_error(backend, name, config, e));
    }
    match events {
        None => Ok(()),
        Some(start) => profile::cuda_end(start, backend, name),
    }
}

#[inline]
fn cu_launch(
    backend: &CudaBackend,
    func: CUfunction,
    config: &LaunchConfig,
    pointers: &mut [*mut c_void],
) -> std::result::Result<(), cudarc::driver::DriverError> {
    let (g, b) = (config.grid, config.block);
    // SAFETY: the parameters match the kernel's signature (checked against its INFO, or the
    // caller's responsibility for raw CUDA C); the buffers outlive the queued work because
    // gpukit frees device memory in stream order.
    unsafe {
        cudarc::driver::result::launch_kernel(
            func,
            (g.x, g.y, g.z),
            (b.x, b.y, b.z),
            config.shared_mem_bytes,
            backend.stream().cu_stream(),
            pointers,
        )
    }
}

/// The error of a refused launch.
#[cold]
fn launch_error(
    backend: &CudaBackend,
    name: &str,
    config: &LaunchConfig,
    e: cudarc::driver::DriverError,
) -> Error {
    match e.0 {
        CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES | CUresult::CUDA_ERROR_INVALID_VALUE => {
            Error::LaunchConfig {
                kernel: name.to_string(),
                reason: format!("the device refused {config}: {e}"),
            }
        }
        _ => backend.fault_err(&format!("launching `{name}`"), e),
    }
}

/// Queues `func` with parameters given as their `u64` slots (vectorized kernels).
pub(crate) fn launch_values(
    backend: &CudaBackend,
    func: CUfunction,
    config: &LaunchConfig,
    values: &[u64],
    name: &str,
) -> Result<()> {
    let mut params = Params::new();
    values.iter().for_each(|&v| params.push(v));
    raw_launch(backend, func, config, &mut params, name)
}
