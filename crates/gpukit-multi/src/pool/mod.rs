//! The device pool: one worker thread per device, jobs submitted to a worker, results gathered.
//!
//! This is the part of Dask's `LocalCUDACluster` + `Client` that a notebook needs: a worker per
//! GPU, each holding its device for its whole life (`worker`), `submit` of a closure to one
//! worker returning a [`Handle`] to wait on, `map` over partitions and `gather` of results.

mod worker;

pub use worker::WorkerCtx;

use crate::collective::{self, CollectiveBackend};
use gpukit::{Device, Error, Result};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};
use worker::{panic_message, Job};

/// The variable giving the number of virtual CPU devices of [`DevicePool::new`] on a machine
/// without a usable GPU (default 1).
pub const CPU_DEVICES_VAR: &str = "GPUKIT_CPU_DEVICES";

/// Workers, one per device, each a thread that binds its device once and serves jobs in order.
///
/// On GPUs each worker owns one CUDA device: its primary context is bound to the worker's
/// thread and gpukit's one stream of that device carries the worker's work, so workers run
/// their GPUs side by side. Without a GPU the pool has *virtual* CPU devices: N worker threads
/// that each act as one device on gpukit's CPU backend. They are real threads running real
/// work, but they share the host's memory and gpukit's CPU thread pool, so they give the
/// behaviour of several devices (partitioning, per-device workers, collectives) for learning
/// and testing, not more speed than one CPU device.
///
/// Cloning a pool is cheap: clones share the same workers, which stop when the last clone is
/// dropped (after finishing the jobs already submitted).
///
/// ```
/// use gpukit_multi::DevicePool;
/// # fn main() -> gpukit::Result<()> {
/// let pool = DevicePool::virtual_cpu(4)?;
/// let squares = pool.map((0..8u64).collect(), |_ctx, x| Ok(x * x))?;
/// assert_eq!(squares, vec![0, 1, 4, 9, 16, 25, 36, 49]);
/// let h = pool.submit(2, |ctx| Ok(ctx.index()))?;
/// assert_eq!(h.wait()?, 2);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct DevicePool {
    inner: Arc<Inner>,
}

struct Inner {
    workers: Vec<Slot>,
    virtual_cpu: bool,
    collectives: Mutex<Option<CollectiveBackend>>,
}

struct Slot {
    device: Device,
    tx: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for s in &mut self.workers {
            s.tx.take();
        }
        for s in &mut self.workers {
            if let Some(t) = s.thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl DevicePool {
    /// A worker on every usable CUDA GPU (as `CUDA_VISIBLE_DEVICES` shows them). Without one,
    /// or with `GPUKIT_DEVICE=cpu`, `GPUKIT_CPU_DEVICES=N` virtual CPU devices (default 1); a
    /// value of that variable that is not a whole number from 1 to 1024 is an error naming it.
    pub fn new() -> Result<DevicePool> {
        let forced_cpu = std::env::var("GPUKIT_DEVICE")
            .map(|v| v.trim().eq_ignore_ascii_case("cpu"))
            .unwrap_or(false);
        let gpus = if forced_cpu {
            0
        } else {
            gpukit::cuda_device_count()
        };
        if gpus > 0 {
            return DevicePool::with_devices((0..gpus).map(Device::Cuda).collect());
        }
        let n = match std::env::var(CPU_DEVICES_VAR) {
            Err(_) => 1,
            Ok(v) => parse_cpu_devices(&v)?,
        };
        DevicePool::virtual_cpu(n)
    }

    /// `n` virtual CPU devices (see the type's documentation for what "virtual" means), whatever
    /// GPUs the machine has; `n` from 1 to 1024.
    pub fn virtual_cpu(n: usize) -> Result<DevicePool> {
        if n == 0 || n > 1024 {
            return Err(Error::Other(format!(
                "a pool of {n} virtual CPU devices: use 1 to 1024"
            )));
        }
        Self::start(vec![Device::Cpu; n], true)
    }

    /// One worker per device of `devices`, in that order. CUDA devices must exist; a device
    /// may appear once only (two workers on one GPU would share its one stream), the CPU any
    /// number of times (virtual CPU devices).
    pub fn with_devices(devices: Vec<Device>) -> Result<DevicePool> {
        if devices.is_empty() {
            return Err(Error::Other(
                "a device pool needs at least one device".into(),
            ));
        }
        for (i, d) in devices.iter().enumerate() {
            if d.is_cuda() && devices[..i].contains(d) {
                return Err(Error::Other(format!(
                    "{d} is listed twice: a GPU gets one worker (its stream is shared)"
                )));
            }
        }
        let all_cpu = devices.iter().all(|d| !d.is_cuda());
        Self::start(devices, all_cpu)
    }

    fn start(devices: Vec<Device>, virtual_cpu: bool) -> Result<DevicePool> {
        let world = devices.len();
        let mut workers = Vec::with_capacity(world);
        for (i, device) in devices.into_iter().enumerate() {
            // On an error the workers started so far stop when `workers` is dropped.
            let (tx, thread) = match worker::spawn(i, world, device) {
                Ok(w) => w,
                Err(e) => {
                    drop(Inner {
                        workers,
                        virtual_cpu,
                        collectives: Mutex::new(None),
                    });
                    return Err(e);
                }
            };
            workers.push(Slot {
                device,
                tx: Some(tx),
                thread: Some(thread),
            });
        }
        Ok(DevicePool {
            inner: Arc::new(Inner {
                workers,
                virtual_cpu,
                collectives: Mutex::new(None),
            }),
        })
    }

    /// Number of workers (devices).
    pub fn len(&self) -> usize {
        self.inner.workers.len()
    }

    /// Always false: a pool has at least one worker.
    pub fn is_empty(&self) -> bool {
        self.inner.workers.is_empty()
    }

    /// The device of each worker, in worker order.
    pub fn devices(&self) -> Vec<Device> {
        self.inner.workers.iter().map(|s| s.device).collect()
    }

    /// The device of worker `i`, or an error naming the pool's size.
    pub fn device(&self, worker: usize) -> Result<Device> {
        self.slot(worker).map(|s| s.device)
    }

    /// Whether the workers are virtual CPU devices.
    pub fn is_virtual_cpu(&self) -> bool {
        self.inner.virtual_cpu
    }

    fn slot(&self, worker: usize) -> Result<&Slot> {
        self.inner.workers.get(worker).ok_or_else(|| {
            Error::Other(format!(
                "no worker {worker}: this pool has {} (0..{})",
                self.len(),
                self.len()
            ))
        })
    }

    /// Runs `f` on worker `worker` after the jobs already queued there, returning at once with
    /// a [`Handle`] to wait on. An error returned by `f`, or a panic in it, comes back from
    /// [`Handle::wait`] as an `Err` naming the worker and its device; the worker keeps its
    /// stored values and communicator and runs the next job as usual.
    pub fn submit<R, F>(&self, worker: usize, f: F) -> Result<Handle<R>>
    where
        R: Send + 'static,
        F: FnOnce(&mut WorkerCtx) -> Result<R> + Send + 'static,
    {
        let slot = self.slot(worker)?;
        let device = slot.device;
        let (tx, rx) = mpsc::sync_channel::<Result<R>>(1);
        let job: Job = Box::new(move |ctx: &mut WorkerCtx| {
            // The worker thread's default device is already `device` (a guard set when it
            // started), but this generic function is compiled into the caller's crate, and where
            // gpukit is linked into more than one library (each evcxr cell is one) the guard set
            // by the pool's copy is invisible to the caller's: scoping the job here sets it for
            // the copy the closure uses, so `Array::zeros(..)` in a job lands on its worker's GPU.
            let r = match catch_unwind(AssertUnwindSafe(|| gpukit::with_device(device, || f(ctx))))
            {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(Error::Other(format!("worker {worker} ({device}): {e}"))),
                Err(p) => Err(Error::Other(format!(
                    "worker {worker} ({device}): the job panicked: {}",
                    panic_message(p.as_ref())
                ))),
            };
            let _ = tx.send(r);
        });
        let sender = slot
            .tx
            .as_ref()
            .ok_or_else(|| Error::Other(format!("worker {worker} ({device}) has stopped")))?;
        sender
            .send(job)
            .map_err(|_| Error::Other(format!("worker {worker} ({device}) has stopped")))?;
        Ok(Handle { rx, worker, device })
    }

    /// Runs `f` on every partition, partition `i` on worker `i % len()`, and returns the results
    /// in partition order once all have finished (as Dask's `client.map` + `gather`). If jobs
    /// fail, every job still runs to its end and the error names each failed worker.
    pub fn map<P, R, F>(&self, partitions: Vec<P>, f: F) -> Result<Vec<R>>
    where
        P: Send + 'static,
        R: Send + 'static,
        F: Fn(&mut WorkerCtx, P) -> Result<R> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let n = self.len();
        let mut handles = Vec::with_capacity(partitions.len());
        for (i, p) in partitions.into_iter().enumerate() {
            let f = f.clone();
            handles.push(self.submit(i % n, move |ctx| f(ctx, p))?);
        }
        self.gather(handles)
    }

    /// Runs `f` once on every worker (worker order) and returns each result.
    pub fn on_each<R, F>(&self, f: F) -> Result<Vec<R>>
    where
        R: Send + 'static,
        F: Fn(&mut WorkerCtx) -> Result<R> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let handles = (0..self.len())
            .map(|w| {
                let f = f.clone();
                self.submit(w, move |ctx| f(ctx))
            })
            .collect::<Result<Vec<_>>>()?;
        self.gather(handles)
    }

    /// Waits for every handle and returns the results in order. If any failed, the error says
    /// how many did and carries each failure's message (one failure is returned as it is).
    pub fn gather<R>(&self, handles: Vec<Handle<R>>) -> Result<Vec<R>> {
        gather(handles)
    }

    /// Gives every worker a communicator for collectives ([`WorkerCtx::comm`]) and says which
    /// kind: NCCL where every worker has its own GPU and libnccl loads (feature `nccl`), else
    /// an exchange through host memory with the same results (virtual CPU devices, or GPUs
    /// without NCCL, saying why). Called again, it keeps the communicators it made.
    pub fn init_collectives(&self) -> Result<CollectiveBackend> {
        self.init_collectives_with_timeout(collective::timeout()?)
    }

    /// [`DevicePool::init_collectives`] with the time a host collective waits for the other
    /// workers before failing (instead of `GPUKIT_COLLECTIVE_TIMEOUT`, default 300 s).
    pub fn init_collectives_with_timeout(
        &self,
        timeout: std::time::Duration,
    ) -> Result<CollectiveBackend> {
        let mut guard = self
            .inner
            .collectives
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(b) = guard.as_ref() {
            return Ok(b.clone());
        }
        let backend = collective::init_pool(self, timeout)?;
        *guard = Some(backend.clone());
        Ok(backend)
    }

    /// The collectives' kind if [`DevicePool::init_collectives`] has run.
    pub fn collectives(&self) -> Option<CollectiveBackend> {
        self.inner
            .collectives
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// See [`DevicePool::gather`].
pub(crate) fn gather<R>(handles: Vec<Handle<R>>) -> Result<Vec<R>> {
    let mut out = Vec::with_capacity(handles.len());
    let mut errors = Vec::new();
    for h in handles {
        match h.wait() {
            Ok(v) => out.push(v),
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => Ok(out),
        1 => Err(errors.pop().expect("one error")),
        n => Err(Error::Other(format!(
            "{n} jobs failed: {}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
    }
}

fn parse_cpu_devices(v: &str) -> Result<usize> {
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(Error::Other(format!(
            "{CPU_DEVICES_VAR}={v:?}: expected a whole number of virtual CPU devices from 1 to 1024"
        ))),
    }
}

impl fmt::Display for DevicePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inner.virtual_cpu {
            return write!(
                f,
                "DevicePool: {} virtual CPU device(s) (worker threads sharing the host's cores and memory)",
                self.len()
            );
        }
        write!(f, "DevicePool: {} worker(s):", self.len())?;
        for (i, d) in self.devices().iter().enumerate() {
            let name = match d.properties() {
                Ok(gpukit::DeviceProperties::Cuda(p)) => p.name,
                _ => String::new(),
            };
            write!(f, " [{i}] {d} {name}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DevicePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DevicePool")
            .field("devices", &self.devices())
            .field("virtual_cpu", &self.inner.virtual_cpu)
            .finish()
    }
}

/// A job submitted to a worker: wait for its result with [`Handle::wait`].
#[must_use = "a job's error is seen only by waiting on its handle"]
pub struct Handle<R> {
    rx: mpsc::Receiver<Result<R>>,
    worker: usize,
    device: Device,
}

impl<R> Handle<R> {
    /// Blocks until the job has finished and returns its result (an `Err` naming the worker and
    /// its device when the job failed or panicked).
    pub fn wait(self) -> Result<R> {
        self.rx.recv().unwrap_or_else(|_| {
            Err(Error::Other(format!(
                "worker {} ({}) stopped before finishing the job",
                self.worker, self.device
            )))
        })
    }

    /// The same as [`Handle::wait`] (thread-style name).
    pub fn join(self) -> Result<R> {
        self.wait()
    }

    /// The worker running the job.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The device of the worker running the job.
    pub fn device(&self) -> Device {
        self.device
    }
}

#[cfg(test)]
mod tests;
