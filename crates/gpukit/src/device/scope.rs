//! A default device for a block of code on this thread: [`with_device`] and [`DeviceGuard`]
//! (CuPy's `with cupy.cuda.Device(1): ...`). Arrays created inside the block without an
//! explicit device go there; the previous default comes back when the block ends, also when
//! it returns an error or panics. Other threads keep the process default.

use super::Device;
use crate::error::Result;
use std::cell::Cell;
use std::marker::PhantomData;

thread_local! {
    /// This thread's default device while a [`DeviceGuard`] lives, else `None`.
    static SCOPED: Cell<Option<Device>> = const { Cell::new(None) };
}

/// This thread's scoped default device, if a [`DeviceGuard`] is alive on it.
pub(crate) fn scoped_device() -> Option<Device> {
    SCOPED.with(Cell::get)
}

/// Things that name a device: a [`Device`], a CUDA device number (`1` is `cuda:1`, checked
/// to exist), or a string (`"cpu"`, `"cuda:1"`).
pub trait IntoDevice {
    /// The device, or an error when it does not exist.
    fn into_device(self) -> Result<Device>;
}

impl IntoDevice for Device {
    fn into_device(self) -> Result<Device> {
        if let Device::Cuda(n) = self {
            return Device::cuda(n);
        }
        Ok(self)
    }
}

impl IntoDevice for &Device {
    fn into_device(self) -> Result<Device> {
        (*self).into_device()
    }
}

impl IntoDevice for usize {
    fn into_device(self) -> Result<Device> {
        Device::cuda(self)
    }
}

impl IntoDevice for i32 {
    fn into_device(self) -> Result<Device> {
        let n = usize::try_from(self).map_err(|_| {
            crate::error::Error::NoGpu(format!("cuda:{self} requested: no such device number"))
        })?;
        Device::cuda(n)
    }
}

impl IntoDevice for &str {
    fn into_device(self) -> Result<Device> {
        self.parse()
    }
}

/// While alive, makes a device this thread's default ([`crate::default_device`]); dropping it
/// restores the default it replaced (guards nest). Made by [`Device::use_`] or
/// [`DeviceGuard::new`]. Not `Send`: it belongs to the thread it was made on.
#[must_use = "the device is the default only while the guard lives"]
#[derive(Debug)]
pub struct DeviceGuard {
    previous: Option<Device>,
    device: Device,
    _not_send: PhantomData<*const ()>,
}

impl DeviceGuard {
    /// Makes `device` this thread's default until the guard is dropped.
    pub fn new(device: impl IntoDevice) -> Result<DeviceGuard> {
        let device = device.into_device()?;
        let previous = SCOPED.with(|s| s.replace(Some(device)));
        Ok(DeviceGuard {
            previous,
            device,
            _not_send: PhantomData,
        })
    }

    /// The device this guard makes the default.
    pub fn device(&self) -> Device {
        self.device
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        SCOPED.with(|s| s.set(self.previous));
    }
}

impl Device {
    /// Makes this device the default on this thread until the returned guard is dropped:
    /// `let _on = Device::cuda(1)?.use_()?;` (a CUDA device is checked to exist).
    pub fn use_(self) -> Result<DeviceGuard> {
        DeviceGuard::new(self)
    }
}

/// Runs `f` with `device` as this thread's default device, then restores the previous default
/// (also when `f` returns an error or panics). `device` is a [`Device`], a CUDA device number
/// or a name such as `"cpu"`; an error if it does not exist.
///
/// ```
/// # use gpukit::{Array, Device, with_device};
/// let a = with_device(Device::Cpu, || Array::<f32>::ones(3))?;
/// assert_eq!(a.device(), Device::Cpu);
/// # Ok::<(), gpukit::Error>(())
/// ```
pub fn with_device<R>(device: impl IntoDevice, f: impl FnOnce() -> Result<R>) -> Result<R> {
    let _guard = DeviceGuard::new(device)?;
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::default_device;

    #[test]
    fn scopes_nest_and_restore() {
        let before = default_device();
        let inner = with_device(Device::Cpu, || {
            assert_eq!(default_device(), Device::Cpu);
            let g = Device::Cpu.use_()?;
            assert_eq!(g.device(), Device::Cpu);
            drop(g);
            Ok(default_device())
        })
        .unwrap();
        assert_eq!(inner, Device::Cpu);
        assert_eq!(default_device(), before);
        assert_eq!(scoped_device(), None);
    }

    #[test]
    fn restores_after_an_error_and_a_panic() {
        let r: Result<()> = with_device("cpu", || Err(crate::error::Error::Other("x".into())));
        assert!(r.is_err());
        assert_eq!(scoped_device(), None);
        let caught = std::panic::catch_unwind(|| {
            let _g = DeviceGuard::new(Device::Cpu).unwrap();
            panic!("inside");
        });
        assert!(caught.is_err());
        assert_eq!(scoped_device(), None);
    }

    #[test]
    fn bad_devices_are_errors() {
        assert!(with_device(99_999usize, || Ok(())).is_err());
        assert!(with_device(-1, || Ok(())).is_err());
        assert!(with_device("tpu", || Ok(())).is_err());
        assert_eq!(scoped_device(), None);
    }

    #[test]
    fn other_threads_keep_the_process_default() {
        let outside = std::thread::spawn(default_device).join().unwrap();
        let _g = Device::Cpu.use_().unwrap();
        let other = std::thread::spawn(default_device).join().unwrap();
        assert_eq!(other, outside);
        assert_eq!(default_device(), Device::Cpu);
    }
}
