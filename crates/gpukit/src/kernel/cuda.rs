//! The CUDA launch path: compiled functions cached per kernel and device, kernel parameters
//! built on the stack, and an asynchronous `cuLaunchKernel` on the device's stream.
//!
//! The first launch of a kernel on a device compiles it (NVRTC, through the backend's PTX cache)
//! and publishes the loaded function in that device's lock-free table, found by the address of
//! the kernel's source. Later launches read a few atomics (plain loads on x86) and do no
//! hashing of text, no string comparison, no locking, no allocation and no compilation.
//!
//! Per launch, the path adds to `cuLaunchKernel` itself: the argument checks of
//! `launch::check_args`, one table probe, (checked kernels) one load-and-compare for the error
//! record (`bounds::next_record`), a thread-local load for the current context (no
//! `cuCtxGetCurrent`: see `make_current`), and one relaxed load for profiling.

use super::args::{ArgRepr, DeviceBuf, KernelArg};
use super::config::LaunchConfig;
use super::info::{full_source, KernelInfo, ParamKind};
use super::{bounds, profile};
use crate::backend::cuda::{driver_err, probe, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::sys::{CUfunction, CUresult};
use cudarc::driver::{CudaFunction, CudaSlice};
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// One value of `T` per CUDA device, created on first use and never freed, reachable with two
/// atomic loads and no lock.
pub(crate) struct PerDevice<T> {
    slots: OnceLock<Box<[T]>>,
}

impl<T: Default> PerDevice<T> {
    /// An empty set (usable in a `static`).
    pub(crate) const fn new() -> PerDevice<T> {
        PerDevice {
            slots: OnceLock::new(),
        }
    }

    /// The value of device `ordinal` (an ordinal of an existing [`CudaBackend`]).
    #[inline]
    pub(crate) fn get(&self, ordinal: usize) -> &T {
        let slots = self.slots.get_or_init(|| {
            let count = probe().unwrap_or(0).max(ordinal + 1);
            (0..count).map(|_| T::default()).collect()
        });
        slots
            .get(ordinal)
            .expect("a CUDA backend's ordinal is below the device count")
    }
}

/// A compiled and loaded function, published once per (source, device) and never freed.
pub(crate) struct Loaded {
    key: Key,
    /// The function handle `cuLaunchKernel` takes.
    pub(crate) func: CUfunction,
    /// The kernel's name as errors and profiles report it.
    pub(crate) kernel: &'static str,
    /// The kernel's array names by array id (empty for vectorized kernels).
    pub(crate) array_names: &'static [&'static str],
    /// Keeps the module (and so `func`) loaded (`None` only in tests).
    _module: Option<CudaFunction>,
}

// SAFETY: a CUfunction is a handle usable from any thread once its context is current; the
// rest is immutable 'static data.
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

/// Address and length of the `'static` source, and address of the helper list (identical
/// kernel texts may share one literal but call different helpers).
type Key = (usize, usize, usize);

/// Slots of a device's function table (a power of two). More kernels than this go to a locked
/// overflow list, so there is no limit, only a slower lookup past it.
const TABLE: usize = 1024;

/// One device's loaded functions: an insert-only open-addressing table of published entries.
struct FnTable {
    slots: Box<[AtomicPtr<Loaded>]>,
    /// Serialises inserts; holds the entries that found no free slot.
    insert: Mutex<Vec<&'static Loaded>>,
}

impl Default for FnTable {
    fn default() -> FnTable {
        FnTable {
            slots: (0..TABLE)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            insert: Mutex::new(Vec::new()),
        }
    }
}

impl FnTable {
    /// First slot to probe for `key` (Fibonacci hashing of the source address).
    #[inline]
    fn home(key: &Key) -> usize {
        let h = (key.0 ^ key.1.rotate_left(32) ^ key.2.rotate_left(17)) as u64;
        (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & (TABLE - 1)
    }

    /// The published entry for `key`, without locking (unless the table is full).
    #[inline]
    fn find(&self, key: &Key) -> Option<&'static Loaded> {
        let home = Self::home(key);
        for i in 0..TABLE {
            let p = self.slots[(home + i) & (TABLE - 1)].load(Ordering::Acquire);
            if p.is_null() {
                return None;
            }
            // SAFETY: published entries are leaked boxes, never freed or changed.
            let e: &'static Loaded = unsafe { &*p };
            if e.key == *key {
                return Some(e);
            }
        }
        let overflow = self.insert.lock().unwrap_or_else(|p| p.into_inner());
        overflow.iter().copied().find(|e| e.key == *key)
    }

    /// Publishes `entry` unless an entry for its key exists; returns the one that is published.
    fn publish(&self, entry: Loaded) -> &'static Loaded {
        let mut overflow = self.insert.lock().unwrap_or_else(|p| p.into_inner());
        let home = Self::home(&entry.key);
        for i in 0..TABLE {
            let slot = &self.slots[(home + i) & (TABLE - 1)];
            let p = slot.load(Ordering::Acquire);
            if p.is_null() {
                let e: &'static Loaded = Box::leak(Box::new(entry));
                slot.store(e as *const Loaded as *mut Loaded, Ordering::Release);
                return e;
            }
            // SAFETY: as in `find`.
            let e: &'static Loaded = unsafe { &*p };
            if e.key == entry.key {
                return e;
            }
        }
        if let Some(e) = overflow.iter().copied().find(|e| e.key == entry.key) {
            return e;
        }
        let e: &'static Loaded = Box::leak(Box::new(entry));
        overflow.push(e);
        e
    }
}

static FUNCTIONS: PerDevice<FnTable> = PerDevice::new();

/// What identifies a compiled function and how to label it.
pub(crate) struct FnSpec {
    /// The `'static` source whose address identifies the function.
    pub(crate) key_source: &'static str,
    /// Address of the kernel's `#[device]` helper list, or 0.
    pub(crate) helpers: usize,
    /// The kernel's name in errors and profiles.
    pub(crate) kernel: &'static str,
    /// Array names by array id (for bounds errors).
    pub(crate) array_names: &'static [&'static str],
}

/// The loaded function of `spec` on `backend`'s device. On first use `build()` gives the entry
/// point's symbol and the source to compile; later calls build nothing and take no lock.
#[inline]
pub(crate) fn cached_function(
    backend: &CudaBackend,
    spec: &FnSpec,
    build: impl FnOnce() -> (String, String),
) -> Result<&'static Loaded> {
    let key: Key = (
        spec.key_source.as_ptr() as usize,
        spec.key_source.len(),
        spec.helpers,
    );
    let table = FUNCTIONS.get(backend.ordinal());
    match table.find(&key) {
        Some(e) => Ok(e),
        None => {
            let (symbol, source) = build();
            load_function(backend, table, key, spec, &symbol, &source)
        }
    }
}

/// Compiles and publishes a function (the first launch of a kernel on a device).
#[cold]
fn load_function(
    backend: &CudaBackend,
    table: &FnTable,
    key: Key,
    spec: &FnSpec,
    symbol: &str,
    source: &str,
) -> Result<&'static Loaded> {
    let module = backend.compile(symbol, source)?.function(symbol)?;
    Ok(table.publish(Loaded {
        key,
        func: module.cu_function(),
        kernel: spec.kernel,
        array_names: spec.array_names,
        _module: Some(module),
    }))
}

/// Kernel parameter values (one `u64` slot each: a pointer, a length, an extent or a scalar's
/// bits) and the pointers to them that `cuLaunchKernel` reads. The first [`INLINE`] live on the
/// stack, uninitialised until pushed (no per-launch clearing); more spill to the heap.
struct Params {
    vals: [MaybeUninit<u64>; INLINE],
    ptrs: [MaybeUninit<*mut c_void>; INLINE],
    n: usize,
    spill_vals: Vec<u64>,
    spill_ptrs: Vec<*mut c_void>,
}

/// Parameter slots held on the stack; more spill to the heap.
const INLINE: usize = 48;

impl Params {
    #[inline]
    fn new() -> Params {
        Params {
            vals: [const { MaybeUninit::uninit() }; INLINE],
            ptrs: [const { MaybeUninit::uninit() }; INLINE],
            n: 0,
            spill_vals: Vec::new(),
            spill_ptrs: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, v: u64) {
        if self.n < INLINE {
            self.vals[self.n] = MaybeUninit::new(v);
        } else {
            self.spill_vals.push(v);
        }
        self.n += 1;
    }

    /// The pointer array; valid while `self` is neither moved nor changed.
    #[inline]
    fn pointers(&mut self) -> &mut [*mut c_void] {
        let inline = self.n.min(INLINE);
        for i in 0..inline {
            self.ptrs[i] = MaybeUninit::new(self.vals[i].as_mut_ptr() as *mut c_void);
        }
        if self.n <= INLINE {
            // SAFETY: the first `inline` pointers were written just above.
            return unsafe {
                std::slice::from_raw_parts_mut(self.ptrs.as_mut_ptr() as *mut *mut c_void, inline)
            };
        }
        self.spill_ptrs.clear();
        // SAFETY: all INLINE pointers were written above (n > INLINE).
        self.spill_ptrs.extend_from_slice(unsafe {
            std::slice::from_raw_parts(self.ptrs.as_ptr() as *const *mut c_void, INLINE)
        });
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
    args: &mut [KernelArg<'_>],
    backend: &Arc<CudaBackend>,
) -> Result<()> {
    let spec = FnSpec {
        key_source: info.cuda_source,
        helpers: info.device_fns.as_ptr() as usize,
        kernel: info.name,
        array_names: info.array_names,
    };
    let loaded = cached_function(backend, &spec, || {
        (info.name.to_string(), full_source(info))
    })?;
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
                if info.checked {
                    p.push(bounds::next_record(backend, loaded)?);
                }
                Ok(())
            },
        );
    }
    let mut params = Params::new();
    build_params(&mut params, Abi::Kernel, kinds, args, &[], backend)?;
    if info.checked {
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
    /// The context gpukit last made current on this thread (0: none yet). Another library (or
    /// cudarc, for another device) can change the current context behind gpukit's back; a
    /// launch that the driver then refuses is bound for real and retried ([`raw_launch`]).
    static BOUND: Cell<usize> = const { Cell::new(0) };
}

/// Makes `backend`'s context current on this thread if it is not; `Ok(true)` when it trusted
/// this thread's record of what gpukit bound last (no driver call).
///
/// The record saves a driver call (`cuCtxGetCurrent`) per launch for a thread-local load.
/// `CudaContext::bind_to_thread` also swaps cudarc's deferred-error word first (an atomic
/// read-modify-write on a shared cache line); a launch leaves that check to the next
/// synchronisation, which goes through `bind_to_thread` and so still reports such errors.
#[inline]
fn make_current(backend: &CudaBackend) -> Result<bool> {
    let want = backend.context().cu_ctx();
    if BOUND.with(Cell::get) == want as usize {
        return Ok(true);
    }
    bind(backend).map(|_| false)
}

/// Asks the driver for the current context and sets `backend`'s if it differs.
#[cold]
fn bind(backend: &CudaBackend) -> Result<()> {
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
    BOUND.with(|b| b.set(want as usize));
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
    let trusted = make_current(backend)?;
    let events = profile::cuda_begin(backend)?;
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
        return Err(launch_error(name, config, e));
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
fn launch_error(name: &str, config: &LaunchConfig, e: cudarc::driver::DriverError) -> Error {
    match e.0 {
        CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES | CUresult::CUDA_ERROR_INVALID_VALUE => {
            Error::LaunchConfig {
                kernel: name.to_string(),
                reason: format!("the device refused {config}: {e}"),
            }
        }
        _ => driver_err(&format!("launching `{name}`"), e),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch that trusts this thread's record of the bound context still works after
    /// someone else unbinds it (skips without a GPU).
    #[test]
    fn launches_survive_a_context_changed_behind_gpukits_back() {
        use crate::Array;
        let Some(dev) = crate::testing::gpu_or_skip() else {
            return;
        };
        let _turn = profile::TEST_SESSION
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut a = Array::<f32>::ones_on(1000, &dev).unwrap();
        a.mul_in_place(2.0).unwrap();
        // SAFETY: unbinding leaves no context current; the next launch must bind again.
        unsafe { cudarc::driver::result::ctx::set_current(std::ptr::null_mut()) }.unwrap();
        a.mul_in_place(3.0).unwrap();
        assert!(a.to_vec().unwrap().iter().all(|&x| x == 6.0));
    }

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

    fn entry(key: Key) -> Loaded {
        Loaded {
            key,
            func: std::ptr::null_mut(),
            kernel: "k",
            array_names: &[],
            _module: None,
        }
    }

    #[test]
    fn function_table_finds_what_it_published_past_its_size() {
        let table = FnTable::default();
        // Keys that look like nearby string addresses, twice as many as there are slots.
        let keys: Vec<Key> = (0..2 * TABLE)
            .map(|i| (0x5555_0000 + 24 * i, 100 + i, 0))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(table.find(k).is_none());
            let e = table.publish(entry(*k));
            assert_eq!(e.key, *k);
            // Publishing a key again returns the first entry.
            assert!(std::ptr::eq(table.publish(entry(*k)), e));
            for earlier in &keys[..=i].iter().step_by(97).collect::<Vec<_>>()[..] {
                assert_eq!(table.find(earlier).map(|e| e.key), Some(**earlier));
            }
        }
        assert_eq!(table.insert.lock().unwrap().len(), TABLE);
        // The helper list is part of the key.
        assert!(table.find(&(keys[3].0, keys[3].1, 8)).is_none());
    }
}
