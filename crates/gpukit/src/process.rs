//! Process-wide state shared by every copy of gpukit loaded in one process.
//!
//! evcxr links each notebook cell into its own shared object, and each of those carries its own
//! copy of gpukit's `static`s. Left alone, every cell would see a fresh default device, a fresh
//! CUDA context, an empty allocation table and empty caches. State that must be one per process
//! (CUDA backends, the default device, allocation counts, pending errors, profiling) is therefore
//! declared with [`process_global!`]: the first copy creates it and publishes the address of a
//! small registry in the environment variable `GPUKIT_PROCESS_STATE`; later copies find it there.
//! All copies come from the same compiled gpukit library, so they agree on every type's layout;
//! the registry still checks size and alignment and falls back to a private value on a mismatch.
//! Each copy caches what it looked up, so an access costs one atomic load after the first.

use std::collections::HashMap;
use std::sync::Mutex;

/// Environment variable holding the registry's address (and gpukit's version, as a guard).
const ENV: &str = "GPUKIT_PROCESS_STATE";

/// One shared value: its address, size and alignment.
type Entry = (usize, usize, usize);

/// The process-wide table from a global's name to its value.
struct Registry {
    entries: Mutex<HashMap<String, Entry>>,
}

/// The tag written next to the address: values from another gpukit version are not reused, nor
/// values a child process inherited with its parent's environment (the address is the parent's:
/// the process id is part of the tag).
fn tag() -> String {
    format!(
        "gpukit-{}-{}-pid{}",
        env!("CARGO_PKG_VERSION"),
        std::mem::size_of::<Registry>(),
        std::process::id()
    )
}

fn parse(value: &str) -> Option<usize> {
    let (addr, tag_found) = value.split_once('/')?;
    if tag_found != tag() {
        return None;
    }
    usize::from_str_radix(addr.strip_prefix("0x")?, 16).ok()
}

/// The registry of this process, created (and published) by the first copy that asks.
fn registry() -> &'static Registry {
    static LOCAL: std::sync::OnceLock<&'static Registry> = std::sync::OnceLock::new();
    LOCAL.get_or_init(|| {
        if let Some(addr) = std::env::var(ENV).ok().as_deref().and_then(parse) {
            // SAFETY: the address was published below by a copy of this same library, which
            // leaked the registry: it lives as long as the process.
            return unsafe { &*(addr as *const Registry) };
        }
        let reg: &'static Registry = Box::leak(Box::new(Registry {
            entries: Mutex::new(HashMap::new()),
        }));
        std::env::set_var(
            ENV,
            format!("{:#x}/{}", reg as *const Registry as usize, tag()),
        );
        reg
    })
}

/// The process-wide value named `key`, created with `init` by the first caller.
///
/// Use [`process_global!`] rather than calling this directly: it adds the per-copy cache.
pub(crate) fn shared<T: Send + Sync + 'static>(key: &str, init: impl FnOnce() -> T) -> &'static T {
    let size = std::mem::size_of::<T>();
    let align = std::mem::align_of::<T>();
    let mut entries = registry().entries.lock().unwrap_or_else(|p| p.into_inner());
    match entries.get(key) {
        // SAFETY: the entry was made from a leaked `T` of this same library under this key.
        Some(&(addr, s, a)) if s == size && a == align => unsafe { &*(addr as *const T) },
        Some(_) => Box::leak(Box::new(init())),
        None => {
            let value: &'static T = Box::leak(Box::new(init()));
            entries.insert(key.to_string(), (value as *const T as usize, size, align));
            value
        }
    }
}

/// Declares `fn name() -> &'static T` returning a value shared by every copy of gpukit in the
/// process (see the [module docs](self)).
macro_rules! process_global {
    ($(#[$meta:meta])* $vis:vis fn $name:ident() -> &'static $ty:ty = $init:expr;) => {
        $(#[$meta])*
        $vis fn $name() -> &'static $ty {
            static LOCAL: ::std::sync::OnceLock<&'static $ty> = ::std::sync::OnceLock::new();
            LOCAL.get_or_init(|| {
                $crate::process::shared::<$ty>(concat!(module_path!(), "::", stringify!($name)), || $init)
            })
        }
    };
}
pub(crate) use process_global;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    process_global! {
        fn counter() -> &'static AtomicUsize = AtomicUsize::new(7);
    }

    #[test]
    fn same_key_gives_the_same_value() {
        let a = shared::<AtomicUsize>("process::tests::same", || AtomicUsize::new(1));
        let b = shared::<AtomicUsize>("process::tests::same", || AtomicUsize::new(2));
        assert!(std::ptr::eq(a, b));
        assert_eq!(b.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn registry_is_published_for_other_copies() {
        let reg = registry() as *const Registry as usize;
        let published = std::env::var(ENV).expect("registry published");
        assert_eq!(parse(&published), Some(reg));
        assert_eq!(
            parse("0x10/gpukit-0.0.0-1"),
            None,
            "another version is not reused"
        );
        let (addr, _) = published.split_once('/').unwrap();
        let inherited = published.replace(
            &format!("-pid{}", std::process::id()),
            &format!("-pid{}", std::process::id().wrapping_add(1)),
        );
        assert_ne!(inherited, published);
        assert_eq!(
            parse(&inherited),
            None,
            "a parent's address ({addr}) inherited by a child is not reused"
        );
    }

    #[test]
    fn macro_value_is_the_registered_one() {
        counter().fetch_add(1, Ordering::SeqCst);
        let direct = shared::<AtomicUsize>(concat!(module_path!(), "::", "counter"), || {
            AtomicUsize::new(0)
        });
        assert!(std::ptr::eq(counter(), direct));
    }

    #[test]
    fn mismatched_layout_gets_a_private_value() {
        let a = shared::<u8>("process::tests::layout", || 1u8);
        let b = shared::<u64>("process::tests::layout", || 2u64);
        assert_eq!((*a, *b), (1, 2));
    }
}
