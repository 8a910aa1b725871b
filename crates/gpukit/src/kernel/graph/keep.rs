//! Keeping the buffers a graph uses alive while the graph lives.
//!
//! A graph replays work on the addresses it captured. An array dropped after the capture would
//! free its buffer, and a replay would then write memory that something else may be using. So
//! each graph registers the start addresses of the buffers its work uses as it is captured
//! (kernel parameters on CUDA, which include every buffer address; the buffers of the recorded
//! operations on the CPU), and an array dropped while a live graph uses its buffer hands the buffer to that graph, which
//! frees it when it is dropped itself. When no graph is alive, a drop pays one atomic load.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The buffers one graph uses, and those it keeps alive after their arrays were dropped.
pub(crate) struct Keeper {
    buffers: Mutex<HashSet<u64>>,
    kept: Mutex<Vec<Box<dyn Any + Send>>>,
}

impl Keeper {
    /// Keeps `buffer` (an array's storage) until the graph is dropped.
    pub(crate) fn keep(&self, buffer: Box<dyn Any + Send>) {
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(buffer);
    }

    fn uses(&self, address: u64) -> bool {
        self.buffers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&address)
    }

    /// How many buffers it keeps for dropped arrays.
    pub(crate) fn kept(&self) -> usize {
        self.kept.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// Live keepers (graphs) in the process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

crate::process::process_global! {
    /// The keepers of the live graphs.
    fn keepers() -> &'static Mutex<Vec<Arc<Keeper>>> = Mutex::new(Vec::new());
}

thread_local! {
    /// The keeper of the graph this thread is capturing: buffers of captured work go into it
    /// at once, so that an array dropped during the capture (or with the capturing closure)
    /// is kept already.
    static CAPTURING: RefCell<Option<Arc<Keeper>>> = const { RefCell::new(None) };
}

/// While alive, [`note`] adds buffers to `keeper` (restores the previous keeper when dropped,
/// for a capture inside a capture on another device).
pub(crate) struct Noting {
    previous: Option<Arc<Keeper>>,
}

impl Noting {
    /// Starts noting the buffers of captured work into `keeper`.
    pub(crate) fn begin(keeper: Arc<Keeper>) -> Noting {
        Noting {
            previous: CAPTURING.with(|c| c.borrow_mut().replace(keeper)),
        }
    }
}

impl Drop for Noting {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CAPTURING.with(|c| *c.borrow_mut() = previous);
    }
}

/// Adds the buffers starting at `addresses` (kernel parameter values may be among them) to the
/// keeper of the graph this thread is capturing.
pub(crate) fn note(addresses: &[u64]) {
    CAPTURING.with(|c| {
        if let Some(k) = c.borrow().as_ref() {
            k.buffers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(addresses.iter().copied());
        }
    });
}

crate::process::process_global! {
    /// Buffers of arrays dropped while their device was being captured that no graph uses:
    /// freeing them then would be captured (or refused) by the driver, so it waits for the
    /// capture to end.
    fn deferred() -> &'static Mutex<Vec<Box<dyn Any + Send>>> = Mutex::new(Vec::new());
}

/// Frees `buffer` once the capture going on ends ([`release_deferred`]).
pub(crate) fn defer(buffer: Box<dyn Any + Send>) {
    deferred()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(buffer);
}

/// Frees what [`defer`] held (called when a capture has ended).
pub(crate) fn release_deferred() {
    let held = std::mem::take(&mut *deferred().lock().unwrap_or_else(|p| p.into_inner()));
    drop(held);
}

/// Registers a graph (about to be captured); its buffers are added by [`note`].
pub(crate) fn register() -> Arc<Keeper> {
    let buffers = HashSet::new();
    let k = Arc::new(Keeper {
        buffers: Mutex::new(buffers),
        kept: Mutex::new(Vec::new()),
    });
    keepers()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(k.clone());
    LIVE.fetch_add(1, Ordering::AcqRel);
    k
}

/// Unregisters a graph's keeper; what it keeps is freed when the last handle goes.
pub(crate) fn unregister(k: &Arc<Keeper>) {
    let mut all = keepers().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = all.iter().position(|x| Arc::ptr_eq(x, k)) {
        all.swap_remove(i);
        LIVE.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether any graph is alive (one atomic load).
#[inline]
pub(crate) fn any_live() -> bool {
    LIVE.load(Ordering::Acquire) > 0
}

/// The keeper of a live graph that uses the buffer starting at `address`, if any.
#[inline]
pub(crate) fn user_of(address: u64) -> Option<Arc<Keeper>> {
    if !any_live() {
        return None;
    }
    keepers()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|k| k.uses(address))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_graph_keeps_what_it_uses_until_unregistered() {
        let k = register();
        {
            let _noting = Noting::begin(k.clone());
            note(&[0x1000, 0x2000]);
        }
        note(&[0x3000]); // not capturing: noted nowhere
        let user = user_of(0x2000).expect("registered");
        assert!(Arc::ptr_eq(&user, &k));
        assert!(user_of(0x3000).is_none());
        let buffer = Arc::new(vec![1u8, 2, 3]);
        user.keep(Box::new(buffer.clone()));
        assert_eq!((k.kept(), Arc::strong_count(&buffer)), (1, 2));
        drop(user);
        unregister(&k);
        assert!(user_of(0x2000).is_none());
        drop(k);
        assert_eq!(Arc::strong_count(&buffer), 1, "freed with the graph");
    }
}
