//! Blocks and threads of a CPU launch: indices, shared memory, barriers, error reports.
//!
//! A block runs on one worker thread. Without barriers its threads run one after the other. With
//! barriers (`uses_barrier`) each thread is a coroutine on a small stack of its own; the block
//! resumes them round-robin, and each runs until its next `sync_threads()` or its end. A thread
//! that has returned (normally or after an out-of-bounds index) counts as arrived at every later
//! barrier, so the others are never stuck waiting for it.

use super::memory::SliceMut;
use crate::element::Element;
use crate::kernel::config::Dim3;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Size of each coroutine stack (address space; pages are committed as they are touched).
const STACK_BYTES: usize = 256 * 1024;

/// What went wrong in a CPU launch (the first report wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// An index out of range: array id, index, length, axis, thread, block.
    OutOfBounds {
        array: usize,
        index: usize,
        len: usize,
        axis: usize,
        thread: Dim3,
        block: Dim3,
    },
    /// The twin panicked. Translated code is not expected to (integers wrap, division by zero
    /// gives 0, indices are checked); this is the safety net that turns a gpukit bug into an
    /// error naming the thread instead of a crash.
    Panic {
        message: String,
        thread: Dim3,
        block: Dim3,
    },
    /// The generated code and the runtime disagree.
    Internal(String),
}

/// The state all blocks of one launch share: the first failure.
///
/// An out-of-bounds index ends only its thread, as on the GPU; a panic or an internal error
/// also skips the blocks not started yet.
#[derive(Debug, Default)]
pub(crate) struct LaunchState {
    abort: AtomicBool,
    first: Mutex<Option<Failure>>,
}

impl LaunchState {
    pub(crate) fn report(&self, f: Failure) {
        if !matches!(f, Failure::OutOfBounds { .. }) {
            self.abort.store(true, Ordering::Release);
        }
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(f);
        }
    }

    /// Whether the remaining blocks should be skipped.
    pub(crate) fn aborted(&self) -> bool {
        self.abort.load(Ordering::Acquire)
    }

    pub(crate) fn take(&self) -> Option<Failure> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// One block of a CPU launch, as the twin sees it.
pub struct BlockCtx {
    block_idx: Dim3,
    block_dim: Dim3,
    grid_dim: Dim3,
    shared: *mut u8,
    shared_len: usize,
    state: *const LaunchState,
    /// The thread running now (names the thread of a panic).
    current: Cell<Dim3>,
}

impl BlockCtx {
    /// # Safety
    /// `shared` (of `shared_len` bytes, 8-byte aligned) and `state` outlive the block.
    pub(crate) unsafe fn new(
        block_idx: Dim3,
        block_dim: Dim3,
        grid_dim: Dim3,
        shared: *mut u8,
        shared_len: usize,
        state: &LaunchState,
    ) -> BlockCtx {
        BlockCtx {
            block_idx,
            block_dim,
            grid_dim,
            shared,
            shared_len,
            state,
            current: Cell::new(Dim3::new(0, 0, 0)),
        }
    }

    /// blockIdx of this block.
    pub fn block_idx(&self) -> Dim3 {
        self.block_idx
    }

    /// blockDim (threads per block).
    pub fn block_dim(&self) -> Dim3 {
        self.block_dim
    }

    /// gridDim (blocks in the grid).
    pub fn grid_dim(&self) -> Dim3 {
        self.grid_dim
    }

    pub(crate) fn current_thread(&self) -> Dim3 {
        self.current.get()
    }

    fn state(&self) -> &LaunchState {
        // SAFETY: the launch state outlives every block (see `new`).
        unsafe { &*self.state }
    }

    fn thread_indices(&self) -> impl Iterator<Item = Dim3> {
        let d = self.block_dim;
        (0..d.z).flat_map(move |z| {
            (0..d.y).flat_map(move |y| (0..d.x).map(move |x| Dim3::new(x, y, z)))
        })
    }

    /// Runs `body` once per thread of the block, one thread after the other (kernels that do
    /// not call `sync_threads()`).
    pub fn for_each_thread<F: Fn(&ThreadCtx)>(&self, body: F) {
        let d = self.block_dim;
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    let idx = Dim3::new(x, y, z);
                    self.current.set(idx);
                    body(&ThreadCtx {
                        thread_idx: idx,
                        block: self,
                        yielder: std::ptr::null(),
                    });
                }
            }
        }
    }

    /// Runs `body` once per thread of the block as coroutines that meet at every
    /// `sync_threads()` (kernels with barriers). Threads that have returned count as arrived.
    pub fn run_cooperative<F: Fn(&ThreadCtx)>(&self, body: F) {
        let n = self.block_dim.volume() as usize;
        if n == 1 {
            // A lone thread never waits: its barriers are no-ops.
            return self.for_each_thread(body);
        }
        STACKS.with(|pool| match pool.try_borrow_mut() {
            Ok(mut pool) => {
                while pool.len() < n {
                    pool.push(new_stack());
                }
                self.run_coroutines(pool.iter_mut().take(n), &body);
            }
            // Only reachable if a twin launched a kernel from inside a kernel.
            Err(_) => {
                let mut stacks: Vec<DefaultStack> = (0..n).map(|_| new_stack()).collect();
                self.run_coroutines(stacks.iter_mut(), &body);
            }
        });
    }

    fn run_coroutines<'s, F: Fn(&ThreadCtx)>(
        &self,
        stacks: impl Iterator<Item = &'s mut DefaultStack>,
        body: &F,
    ) {
        let mut threads: Vec<(Dim3, ThreadCoroutine<'s>)> = self
            .thread_indices()
            .zip(stacks)
            .map(|(idx, stack)| {
                let block: *const BlockCtx = self;
                let run = move |y: &Yielder<(), ()>, ()| {
                    body(&ThreadCtx {
                        thread_idx: idx,
                        block,
                        yielder: y,
                    })
                };
                // SAFETY: every coroutine is driven to completion or dropped (unwinding it)
                // before this function returns, while `self`, `body` and the stacks are alive.
                (idx, unsafe { Coroutine::with_stack_unchecked(stack, run) })
            })
            .collect();
        let mut live = threads.len();
        while live > 0 {
            for (idx, co) in threads.iter_mut() {
                if co.done() {
                    continue;
                }
                self.current.set(*idx);
                if let CoroutineResult::Return(()) = co.resume(()) {
                    live -= 1;
                }
            }
        }
    }
}

/// One thread of a cooperative block, on a borrowed stack.
type ThreadCoroutine<'s> = Coroutine<(), (), (), &'s mut DefaultStack>;

fn new_stack() -> DefaultStack {
    DefaultStack::new(STACK_BYTES).unwrap_or_else(|e| {
        panic!("cannot map a {STACK_BYTES}-byte stack for a CPU kernel thread: {e}")
    })
}

thread_local! {
    /// Coroutine stacks of this worker thread, reused by every block it runs.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// One thread of a CPU launch, as the twin sees it.
pub struct ThreadCtx {
    thread_idx: Dim3,
    /// The block this thread belongs to (outlives the thread).
    block: *const BlockCtx,
    /// The coroutine's yielder when the block runs cooperatively, else null.
    yielder: *const Yielder<(), ()>,
}

impl ThreadCtx {
    #[inline(always)]
    fn block(&self) -> &BlockCtx {
        // SAFETY: a ThreadCtx only exists while its block runs.
        unsafe { &*self.block }
    }

    /// threadIdx.
    #[inline(always)]
    pub fn thread_idx(&self) -> Dim3 {
        self.thread_idx
    }

    /// blockIdx.
    #[inline(always)]
    pub fn block_idx(&self) -> Dim3 {
        self.block().block_idx
    }

    /// blockDim.
    #[inline(always)]
    pub fn block_dim(&self) -> Dim3 {
        self.block().block_dim
    }

    /// gridDim.
    #[inline(always)]
    pub fn grid_dim(&self) -> Dim3 {
        self.block().grid_dim
    }

    /// Waits until every other thread of the block has reached a barrier (or returned).
    pub fn sync_threads(&self) {
        if self.yielder.is_null() {
            if self.block().block_dim.volume() > 1 {
                self.block().state().report(Failure::Internal(
                    "sync_threads() called by a kernel whose INFO.uses_barrier is false".into(),
                ));
            }
            return;
        }
        // SAFETY: set only while this thread runs inside its coroutine.
        unsafe { (*self.yielder).suspend(()) };
    }

    /// The block's shared array at `offset_bytes` holding `len` elements; `array_id` names it in
    /// bounds errors. A request that does not fit the block's shared memory yields an empty
    /// array (every access then reports an out-of-bounds index) and an internal error.
    pub fn shared<T: Element>(
        &self,
        offset_bytes: usize,
        len: usize,
        array_id: usize,
    ) -> SliceMut<T> {
        let size = std::mem::size_of::<T>();
        let fits = offset_bytes.is_multiple_of(std::mem::align_of::<T>())
            && len
                .checked_mul(size)
                .and_then(|b| b.checked_add(offset_bytes))
                .is_some_and(|end| end <= self.block().shared_len);
        if !fits {
            self.block().state().report(Failure::Internal(format!(
                "shared array {array_id} ({len} x {size} bytes at offset {offset_bytes}) does not fit the {} bytes of INFO.shared_bytes",
                self.block().shared_len
            )));
            return SliceMut::from_raw(
                std::ptr::NonNull::<T>::dangling().as_ptr(),
                0,
                array_id as u32,
            );
        }
        // SAFETY: in bounds and aligned, checked above.
        let ptr = unsafe { self.block().shared.add(offset_bytes) } as *mut T;
        SliceMut::from_raw(ptr, len, array_id as u32)
    }

    /// Records an out-of-bounds index (the launch then returns it as an error).
    pub fn report_oob(&self, array_id: usize, index: usize, len: usize, axis: usize) {
        self.block().state().report(Failure::OutOfBounds {
            array: array_id,
            index,
            len,
            axis,
            thread: self.thread_idx,
            block: self.block().block_idx,
        });
    }
}
