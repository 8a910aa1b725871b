//! Capture on the CPU backend: the CPU's counterpart of CUDA stream capture.
//!
//! While a thread captures, the CPU operations it starts (kernel launches, in-place array
//! operations) are recorded as closures over the buffers' addresses instead of being run, and
//! [`forbid_in_capture`] turns what a CUDA capture cannot record either (allocation, reading
//! data on the host, waiting) into the same [`Error::GraphCapture`]. A graph replays the closures
//! in order, so a graph behaves the same on both backends. Capture is per thread: other threads
//! keep running their CPU work at once.

use crate::error::{Error, Result};
use std::cell::RefCell;

/// One recorded CPU operation (run at every replay of its graph).
pub(crate) type CpuOp = Box<dyn FnMut() -> Result<()>>;

thread_local! {
    static RECORDING: RefCell<Option<Vec<CpuOp>>> = const { RefCell::new(None) };
}

/// Whether this thread is capturing CPU work.
#[inline]
pub(crate) fn is_capturing() -> bool {
    RECORDING.with(|r| r.borrow().is_some())
}

/// Starts a capture on this thread (captures do not nest).
pub(crate) fn begin() -> Result<()> {
    RECORDING.with(|r| {
        let mut r = r.borrow_mut();
        if r.is_some() {
            return Err(Error::GraphCapture {
                what: "capturing a graph".into(),
                reason: "this thread is already capturing one on the CPU (captures do not nest)"
                    .into(),
            });
        }
        *r = Some(Vec::new());
        Ok(())
    })
}

/// Ends this thread's capture and returns the operations it recorded, in order (none without
/// a capture).
pub(crate) fn end() -> Vec<CpuOp> {
    RECORDING.with(|r| r.borrow_mut().take().unwrap_or_default())
}

/// Records `op`; it is handed back when this thread is not capturing (the caller then runs it
/// at once). The caller makes the graph keep the buffers `op` uses (`kernel::graph::keep`).
pub(crate) fn record(op: CpuOp) -> Option<CpuOp> {
    RECORDING.with(|r| match r.borrow_mut().as_mut() {
        Some(ops) => {
            ops.push(op);
            None
        }
        None => Some(op),
    })
}

/// `Ok` unless this thread is capturing; then an [`Error::GraphCapture`] saying that `what`
/// cannot be part of a graph.
#[inline]
pub(crate) fn forbid_in_capture(what: &str) -> Result<()> {
    if is_capturing() {
        return Err(Error::GraphCapture {
            what: what.to_string(),
            reason: "a graph is being captured on the CPU, which only records the operations \
                     (they run at the graph's launch): create arrays before `Graph::capture`, \
                     use in-place operations and kernels inside it, and read results after \
                     `launch()`"
                .into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_records_instead_of_running_and_forbids_reads() {
        assert!(!is_capturing());
        assert!(record(Box::new(|| Ok(()))).is_some(), "no capture: run it");
        begin().unwrap();
        assert!(matches!(begin(), Err(Error::GraphCapture { .. })));
        assert!(record(Box::new(|| Ok(()))).is_none());
        let e = forbid_in_capture("reading an array on the host").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("reading an array on the host cannot run inside a graph capture:"),
            "{e}"
        );
        assert_eq!(end().len(), 1);
        assert!(!is_capturing());
        forbid_in_capture("anything").unwrap();
    }
}
