//! One worker: a thread bound to one device for its whole life, serving jobs in order.
//!
//! The thread makes its device the thread's default (so `Array::zeros(..)` in a job lands there),
//! binds the device's CUDA context once, then runs each job it receives. A job that returns an
//! error or panics is reported to whoever waits on it; the worker, its stored values and its
//! communicator stay as they were and the next job runs normally.

use crate::collective::Communicator;
use gpukit::{Device, DeviceGuard, Error, Result};
use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

/// A job as the worker thread sees it: run with the worker's context.
pub(crate) type Job = Box<dyn FnOnce(&mut WorkerCtx) + Send + 'static>;

/// What a job can reach on its worker: which worker and device it is on, the worker's
/// communicator (after [`DevicePool::init_collectives`](crate::DevicePool::init_collectives)),
/// and values stored on the worker between jobs (as Dask workers keep data in memory).
pub struct WorkerCtx {
    index: usize,
    world: usize,
    device: Device,
    pub(crate) comm: Option<Communicator>,
    store: HashMap<String, Box<dyn Any + Send>>,
}

impl WorkerCtx {
    /// This worker's number in the pool (0-based): its rank in the pool's collectives.
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many workers the pool has.
    pub fn world_size(&self) -> usize {
        self.world
    }

    /// The device this worker runs on (also the thread's default device during a job).
    pub fn device(&self) -> Device {
        self.device
    }

    /// Keeps `value` on this worker under `key` (replacing what was there) for later jobs.
    pub fn put<V: Any + Send>(&mut self, key: impl Into<String>, value: V) {
        self.store.insert(key.into(), Box::new(value));
    }

    /// The value stored under `key`, if there is one of type `V`.
    pub fn get<V: Any + Send>(&self, key: &str) -> Option<&V> {
        self.store.get(key).and_then(|v| v.downcast_ref())
    }

    /// The value stored under `key`, mutably, if there is one of type `V`.
    pub fn get_mut<V: Any + Send>(&mut self, key: &str) -> Option<&mut V> {
        self.store.get_mut(key).and_then(|v| v.downcast_mut())
    }

    /// Removes and returns the value stored under `key`; `None` (and nothing removed) when
    /// there is none or it is not a `V`.
    pub fn take<V: Any + Send>(&mut self, key: &str) -> Option<V> {
        if !self.store.get(key).is_some_and(|v| v.is::<V>()) {
            return None;
        }
        self.store
            .remove(key)
            .and_then(|v| v.downcast().ok())
            .map(|b| *b)
    }

    /// The names of the values stored on this worker, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut k: Vec<String> = self.store.keys().cloned().collect();
        k.sort();
        k
    }

    /// This worker's communicator, or an error saying to call `init_collectives` first.
    pub fn comm(&self) -> Result<&Communicator> {
        self.comm.as_ref().ok_or_else(|| {
            Error::Other(format!(
                "worker {} ({}) has no communicator: call pool.init_collectives() first",
                self.index, self.device
            ))
        })
    }
}

/// Starts the worker thread for `device`; returns once the thread has bound its device (or
/// with the error that kept it from doing so).
pub(crate) fn spawn(
    index: usize,
    world: usize,
    device: Device,
) -> Result<(mpsc::Sender<Job>, std::thread::JoinHandle<()>)> {
    let (tx, rx) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
    let thread = std::thread::Builder::new()
        .name(format!("gpukit-worker-{index}-{device}"))
        .spawn(move || {
            let bound = bind(device);
            let guard = match bound {
                Ok(g) => {
                    let _ = ready_tx.send(Ok(()));
                    g
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let mut ctx = WorkerCtx {
                index,
                world,
                device,
                comm: None,
                store: HashMap::new(),
            };
            while let Ok(job) = rx.recv() {
                // The job itself catches panics of the user's closure (see `DevicePool::submit`);
                // this outer guard keeps the thread alive even if reporting the result panics.
                let _ = catch_unwind(AssertUnwindSafe(|| job(&mut ctx)));
            }
            drop(ctx);
            drop(guard);
        })
        .map_err(|e| Error::Other(format!("cannot start a worker thread for {device}: {e}")))?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok((tx, thread)),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(Error::Other(format!(
                "worker {index} cannot use {device}: {e}"
            )))
        }
        Err(_) => {
            let _ = thread.join();
            Err(Error::Other(format!(
                "worker {index} for {device} stopped while starting"
            )))
        }
    }
}

/// Makes `device` the thread's default and, for a GPU, binds its (primary) context once.
fn bind(device: Device) -> Result<DeviceGuard> {
    if let Device::Cuda(_) = device {
        device
            .cuda_context()?
            .bind_to_thread()
            .map_err(|e| Error::Cuda(format!("binding the context of {device}: {e}")))?;
    }
    DeviceGuard::new(device)
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
