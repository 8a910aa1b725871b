//! Compiled functions, cached per kernel and device: a lock-free, insert-only table per device
//! found by the address of the kernel's source, so that a launch after the first does no
//! hashing, locking or compilation.

use crate::backend::cuda::{probe, CudaBackend};
use crate::error::Result;
use cudarc::driver::sys::CUfunction;
use cudarc::driver::CudaFunction;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

/// One value of `T` per CUDA device backend, created on first use and never freed, reachable
/// with a few atomic loads and no lock.
///
/// Values are keyed by the backend's generation as well as its device: after a sticky fault
/// the device gets a new backend ([`crate::backend::cuda`]'s `fault`), which finds a fresh
/// value here, while references to the old one stay valid (it is leaked, never reused).
pub(crate) struct PerDevice<T> {
    slots: OnceLock<Box<[AtomicPtr<Generation<T>>]>>,
}

/// A value and the backend generation it belongs to.
struct Generation<T> {
    generation: u64,
    value: T,
}

impl<T: Default> PerDevice<T> {
    /// An empty set (usable in a `static`).
    pub(crate) const fn new() -> PerDevice<T> {
        PerDevice {
            slots: OnceLock::new(),
        }
    }

    /// The value of `backend` (created on first use).
    #[inline]
    pub(crate) fn get(&self, backend: &CudaBackend) -> &T {
        let ordinal = backend.ordinal();
        let slots = self.slots.get_or_init(|| {
            let count = probe().unwrap_or(0).max(ordinal + 1);
            (0..count)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect()
        });
        let slot = slots
            .get(ordinal)
            .expect("a CUDA backend's ordinal is below the device count");
        let current = slot.load(Ordering::Acquire);
        // SAFETY: a published pointer comes from `Box::into_raw` below and is never freed.
        match unsafe { current.as_ref() } {
            Some(g) if g.generation == backend.generation() => &g.value,
            _ => Self::renew(slot, current, backend.generation()),
        }
    }

    /// Publishes a fresh value for `generation` (the first use, or the first after a fault).
    #[cold]
    fn renew(slot: &AtomicPtr<Generation<T>>, mut seen: *mut Generation<T>, generation: u64) -> &T {
        let fresh = Box::into_raw(Box::new(Generation {
            generation,
            value: T::default(),
        }));
        loop {
            match slot.compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire) {
                // SAFETY: just published; never freed.
                Ok(_) => return unsafe { &(*fresh).value },
                Err(actual) => {
                    // SAFETY: as in `get`.
                    if let Some(g) = unsafe { actual.as_ref() } {
                        if g.generation == generation {
                            // Another thread published first: use its value, drop ours.
                            // SAFETY: `fresh` was never published.
                            drop(unsafe { Box::from_raw(fresh) });
                            return &g.value;
                        }
                    }
                    seen = actual;
                }
            }
        }
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
pub(super) type Key = (usize, usize, usize);

/// Slots of a device's function table (a power of two). More kernels than this go to a locked
/// overflow list, so there is no limit, only a slower lookup past it.
pub(super) const TABLE: usize = 1024;

/// One device's loaded functions: an insert-only open-addressing table of published entries.
pub(super) struct FnTable {
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

pub(super) static FUNCTIONS: PerDevice<FnTable> = PerDevice::new();

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
    let table = FUNCTIONS.get(backend);
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
pub(super) fn load_function(
    backend: &CudaBackend,
    table: &FnTable,
    key: Key,
    spec: &FnSpec,
    symbol: &str,
    source: &str,
) -> Result<&'static Loaded> {
    // A kernel first launched inside a graph capture is compiled and loaded here: loading is
    // not stream work, which the capture's thread-local mode would refuse.
    let module =
        backend.outside_capture_rules(|| backend.compile(symbol, source)?.function(symbol))?;
    Ok(table.publish(Loaded {
        key,
        func: module.cu_function(),
        kernel: spec.kernel,
        array_names: spec.array_names,
        _module: Some(module),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
