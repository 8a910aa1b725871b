//! The CUDA launch path: compiled functions cached per kernel and device, kernel parameters
//! built on the stack, and an asynchronous `cuLaunchKernel` on the device's stream.
//!
//! The first launch of a kernel on a device compiles it (NVRTC, through the backend's PTX cache)
//! and keeps the loaded function in a small table searched by the address of the kernel's
//! source, so later launches do no hashing, no string comparison and no compilation.

use super::args::{ArgRepr, DeviceBuf, KernelArg};
use super::config::LaunchConfig;
use super::info::{full_source, KernelInfo, ParamKind};
use super::{bounds, profile};
use crate::backend::cuda::{driver_err, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::{CUfunction, CUresult};
use cudarc::driver::{CudaFunction, CudaSlice};
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// One compiled function, keyed by the identity of the source it came from.
struct Entry {
    key: Key,
    func: CudaFunction,
}

/// Address and length of the `'static` source, address of the helper list (identical kernel
/// texts may share one literal but call different helpers), device.
type Key = (usize, usize, usize, usize);

// SAFETY: a CUfunction is a handle usable from any thread once its context is current.
unsafe impl Send for Entry {}
unsafe impl Sync for Entry {}

static FUNCTIONS: RwLock<Vec<Entry>> = RwLock::new(Vec::new());

/// The loaded function `name` compiled from `source` on `backend`'s device, compiling on first
/// use. `key_source` must be `'static`: its address identifies it, with `helpers` (the address
/// of the kernel's `#[device]` helper list, or 0).
pub(crate) fn cached_function(
    backend: &CudaBackend,
    key_source: &'static str,
    helpers: usize,
    name: &str,
    compile_source: impl FnOnce() -> String,
) -> Result<CUfunction> {
    let key: Key = (
        key_source.as_ptr() as usize,
        key_source.len(),
        helpers,
        backend.ordinal(),
    );
    let find = |table: &[Entry]| {
        table
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.func.cu_function())
    };
    if let Some(f) = find(&FUNCTIONS.read().unwrap_or_else(|p| p.into_inner())) {
        return Ok(f);
    }
    let func = backend.compile(name, &compile_source())?.function(name)?;
    let mut table = FUNCTIONS.write().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = find(&table) {
        return Ok(f);
    }
    let f = func.cu_function();
    table.push(Entry { key, func });
    Ok(f)
}

/// Kernel parameter values (one `u64` slot each: a pointer, a length, an extent or a scalar's
/// bits) and the pointers to them that `cuLaunchKernel` reads.
struct Params {
    vals: [u64; INLINE],
    ptrs: [*mut c_void; INLINE],
    n: usize,
    spill_vals: Vec<u64>,
    spill_ptrs: Vec<*mut c_void>,
}

/// Parameter slots held on the stack; more spill to the heap.
const INLINE: usize = 48;

impl Params {
    fn new() -> Params {
        Params {
            vals: [0; INLINE],
            ptrs: [std::ptr::null_mut(); INLINE],
            n: 0,
            spill_vals: Vec::new(),
            spill_ptrs: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, v: u64) {
        if self.n < INLINE {
            self.vals[self.n] = v;
        } else {
            self.spill_vals.push(v);
        }
        self.n += 1;
    }

    /// The pointer array; valid while `self` is neither moved nor changed.
    fn pointers(&mut self) -> &mut [*mut c_void] {
        let inline = self.n.min(INLINE);
        for i in 0..inline {
            self.ptrs[i] = &mut self.vals[i] as *mut u64 as *mut c_void;
        }
        if self.n <= INLINE {
            return &mut self.ptrs[..inline];
        }
        self.spill_ptrs.clear();
        self.spill_ptrs.extend_from_slice(&self.ptrs[..INLINE]);
        for v in self.spill_vals.iter_mut() {
            self.spill_ptrs.push(v as *mut u64 as *mut c_void);
        }
        &mut self.spill_ptrs
    }
}

/// How arrays are passed.
#[derive(Clone, Copy)]
pub(crate) enum Abi {
    /// `#[kernel]`: slices as (pointer, length), views as (pointer, extent of each axis).
    Kernel,
    /// Raw CUDA C: a pointer only.
    Raw,
}

/// Builds the parameters of `args`; host arrays use the device copies in `staged` (by index).
fn build_params(
    params: &mut Params,
    abi: Abi,
    kinds: Option<&[super::info::ParamInfo]>,
    args: &[KernelArg<'_>],
    staged: &[(usize, CudaSlice<u8>)],
    backend: &CudaBackend,
) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let (ptr, shape): (u64, &[usize]) = match &a.repr {
            ArgRepr::Scalar { bits, .. } => {
                params.push(*bits);
                continue;
            }
            ArgRepr::Device(d) => match &d.buf {
                DeviceBuf::Cuda { backend: b, ptr } if b.ordinal() == backend.ordinal() => {
                    (*ptr, d.shape)
                }
                _ => {
                    return Err(Error::DeviceMismatch(format!(
                        "argument {} is {} but the kernel runs on {}",
                        i + 1,
                        a.describe(),
                        backend.device()
                    )))
                }
            },
            ArgRepr::Host(h) => {
                let dev = staged
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map(|(_, s)| s)
                    .expect("every host argument was staged");
                let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(dev, backend.stream());
                (ptr, &h.shape)
            }
        };
        params.push(ptr);
        if let Abi::Kernel = abi {
            let kind = kinds.map(|k| k[i].kind).unwrap_or(ParamKind::Slice);
            match kind {
                ParamKind::View | ParamKind::ViewMut => {
                    shape.iter().for_each(|&d| params.push(d as u64))
                }
                _ => params.push(shape.iter().product::<usize>() as u64),
            }
        }
    }
    Ok(())
}

/// Queues one `#[kernel]` launch on `backend`.
pub(crate) fn launch_kernel(
    info: &KernelInfo,
    config: &LaunchConfig,
    args: Vec<KernelArg<'_>>,
    backend: &Arc<CudaBackend>,
) -> Result<()> {
    let helpers = info.device_fns.as_ptr() as usize;
    let func = cached_function(backend, info.cuda_source, helpers, info.name, || {
        full_source(info)
    })?;
    let kinds = Some(info.params);
    let has_host = args.iter().any(|a| matches!(a.repr, ArgRepr::Host(_)));
    if has_host {
        return launch_with_host_args(
            info.name,
            backend,
            func,
            config,
            Abi::Kernel,
            kinds,
            args,
            |p| {
                if info.checked {
                    p.push(bounds::next_record(backend, info.name, info.array_names)?);
                }
                Ok(())
            },
        );
    }
    let mut params = Params::new();
    build_params(&mut params, Abi::Kernel, kinds, &args, &[], backend)?;
    if info.checked {
        params.push(bounds::next_record(backend, info.name, info.array_names)?);
    }
    raw_launch(backend, func, config, &mut params, info.name)
}

/// Queues a launch of a raw CUDA C kernel (arrays passed as pointers).
pub(crate) fn launch_raw(
    name: &str,
    backend: &Arc<CudaBackend>,
    func: CUfunction,
    config: &LaunchConfig,
    args: Vec<KernelArg<'_>>,
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
    build_params(&mut params, Abi::Raw, None, &args, &[], backend)?;
    raw_launch(backend, func, config, &mut params, name)
}

/// Host arrays: copy in, launch, copy the `&mut` ones back (waiting for the kernel), and say so
/// once per kernel.
#[allow(clippy::too_many_arguments)]
fn launch_with_host_args(
    name: &str,
    backend: &Arc<CudaBackend>,
    func: CUfunction,
    config: &LaunchConfig,
    abi: Abi,
    kinds: Option<&[super::info::ParamInfo]>,
    args: Vec<KernelArg<'_>>,
    trailing: impl FnOnce(&mut Params) -> Result<()>,
) -> Result<()> {
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
    build_params(&mut params, abi, kinds, &args, &staged, backend)?;
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
    for a in args {
        if let ArgRepr::Host(h) = a.repr {
            if h.mutable {
                h.finish();
            }
        }
    }
    waited
}

fn notice_host_copies(kernel: &str, backend: &CudaBackend) {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if seen.insert(kernel.to_string()) {
        eprintln!(
            "gpukit: kernel `{kernel}` got host arrays: they are copied to {} (and `&mut` ones back) on every launch; pass gpukit Arrays to avoid the copies",
            backend.device()
        );
    }
}

/// `cuLaunchKernel` on the device's stream, with profiling events when profiling is on.
fn raw_launch(
    backend: &CudaBackend,
    func: CUfunction,
    config: &LaunchConfig,
    params: &mut Params,
    name: &str,
) -> Result<()> {
    backend
        .context()
        .bind_to_thread()
        .map_err(|e| driver_err("binding the CUDA context", e))?;
    let events = profile::cuda_begin(backend)?;
    let (g, b) = (config.grid, config.block);
    // SAFETY: the parameters match the kernel's signature (checked against its INFO, or the
    // caller's responsibility for raw CUDA C); the buffers outlive the queued work because
    // gpukit frees device memory in stream order.
    let launched = unsafe {
        cudarc::driver::result::launch_kernel(
            func,
            (g.x, g.y, g.z),
            (b.x, b.y, b.z),
            config.shared_mem_bytes,
            backend.stream().cu_stream(),
            params.pointers(),
        )
    };
    if let Err(e) = launched {
        return Err(match e.0 {
            CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES | CUresult::CUDA_ERROR_INVALID_VALUE => {
                Error::LaunchConfig {
                    kernel: name.to_string(),
                    reason: format!("the device refused {config}: {e}"),
                }
            }
            _ => driver_err(&format!("launching `{name}`"), e),
        });
    }
    profile::cuda_end(events, backend, name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_pointers_point_at_their_values_inline_and_spilled() {
        for count in [0usize, 1, INLINE, INLINE + 17] {
            let mut p = Params::new();
            (0..count as u64).for_each(|v| p.push(v * 3 + 1));
            let ptrs = p.pointers().to_vec();
            assert_eq!(ptrs.len(), count);
            for (i, ptr) in ptrs.iter().enumerate() {
                // SAFETY: `p` is alive and unchanged since `pointers()`.
                assert_eq!(unsafe { *(*ptr as *const u64) }, i as u64 * 3 + 1);
            }
        }
    }
}
