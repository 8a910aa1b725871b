//! Launching a `#[kernel]`: check the arguments against the signature, pick the device, and run
//! on the CPU executor or queue on the CUDA stream.

use super::args::{ArgRepr, DeviceBuf, KernelArg, LaunchArgs};
use super::config::{self, IntoLaunchConfig, LaunchConfig};
use super::cpu::{self, CpuArg};
use super::info::{KernelInfo, ParamKind};
use super::{cuda, profile};
use crate::backend::cpu_capture;
use crate::backend::cuda::CudaBackend;
use crate::device::{default_device, Device};
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::sync::Arc;

/// Launches `info` with `config` over `args` (one per parameter, in order: an array such as
/// `[KernelArg::array(&x), KernelArg::scalar(2.0)]`, or a `Vec`).
///
/// On the CPU the launch runs to completion and returns the kernel's first out-of-bounds
/// index as an error. On a CUDA device it is queued on the device's stream and returns at once;
/// an out-of-bounds index is reported by the next synchronisation of that device.
///
/// The CUDA path allocates nothing and takes no lock when `args` is an array: the checks below,
/// a lock-free lookup of the loaded function, (checked kernels) a lock-free error record, and
/// `cuLaunchKernel`.
#[inline]
pub fn launch<'a>(
    info: &KernelInfo,
    config: impl IntoLaunchConfig,
    mut args: impl LaunchArgs<'a>,
) -> Result<()> {
    let config = config::resolve(config, info.name)?;
    launch_resolved(info, &config, args.as_mut_args())
}

/// [`launch`] after the configuration has been resolved (not generic: one copy in the binary).
fn launch_resolved(
    info: &KernelInfo,
    config: &LaunchConfig,
    args: &mut [KernelArg<'_>],
) -> Result<()> {
    check_args(info, args)?;
    match target(info.name, args)? {
        None if cpu_capture::is_capturing() => record_cpu(info, config, args),
        None => {
            let timer = profile::cpu_timer();
            let result = run_cpu(info, config, args);
            profile::finish_cpu(timer, info.name);
            result
        }
        Some(backend) => cuda::launch_kernel(info, config, args, &backend),
    }
}

/// Where a launch runs: `None` for the CPU executor, else the CUDA device's backend, borrowed
/// from the arguments when one of them is a CUDA array (no reference count is touched), owned
/// when the launch goes to the default device.
pub(crate) type Target<'a> = Option<Cow<'a, Arc<CudaBackend>>>;

/// The device of the gpukit arrays among `args` (all must agree), else the default device.
pub(crate) fn target<'a>(kernel: &str, args: &[KernelArg<'a>]) -> Result<Target<'a>> {
    // The first gpukit array's position and backend (`None` inside: a CPU array).
    let mut first: Option<(usize, Option<&'a Arc<CudaBackend>>)> = None;
    for (i, a) in args.iter().enumerate() {
        let ArgRepr::Device(d) = &a.repr else {
            continue;
        };
        let this = match d.buf {
            DeviceBuf::Cuda { backend, .. } => Some(backend),
            DeviceBuf::Cpu(_) => None,
        };
        match first {
            None => first = Some((i, this)),
            // Same device: both on the CPU, or one backend (one per device, so pointer equality).
            Some((_, f)) if same_backend(f, this) => {}
            Some((j, _)) => {
                let dev_of = |k: usize| match &args[k].repr {
                    ArgRepr::Device(d) => d.device(),
                    _ => Device::Cpu,
                };
                return Err(Error::DeviceMismatch(format!(
                    "kernel `{kernel}`: argument {} is on {} but argument {} is on {}; move one with `.to_device(..)`",
                    j + 1,
                    dev_of(j),
                    i + 1,
                    dev_of(i)
                )));
            }
        }
    }
    match first {
        Some((_, Some(b))) => Ok(Some(Cow::Borrowed(b))),
        Some((_, None)) => Ok(None),
        None => match default_device() {
            Device::Cpu => Ok(None),
            Device::Cuda(n) => Ok(Some(Cow::Owned(CudaBackend::get(n)?))),
        },
    }
}

/// Whether two arrays' buffers are on the same device (`None`: the CPU).
#[inline]
fn same_backend(a: Option<&Arc<CudaBackend>>, b: Option<&Arc<CudaBackend>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.ordinal() == b.ordinal(),
        _ => false,
    }
}

/// Checks count, kinds, element types, mutability and view dimensions against the signature.
fn check_args(info: &KernelInfo, args: &[KernelArg<'_>]) -> Result<()> {
    if args.len() != info.params.len() {
        return Err(Error::Argument {
            kernel: info.name.to_string(),
            param: format!("#{}", args.len().min(info.params.len()) + 1),
            reason: format!(
                "the kernel takes {} argument(s) but {} were given",
                info.params.len(),
                args.len()
            ),
        });
    }
    for (p, a) in info.params.iter().zip(args) {
        let bad = |reason: String| {
            Err(Error::Argument {
                kernel: info.name.to_string(),
                param: p.name.to_string(),
                reason,
            })
        };
        if a.dtype() != p.dtype {
            return bad(format!(
                "expected {} elements, got {}",
                p.dtype,
                a.describe()
            ));
        }
        match (p.kind, a.shape()) {
            (ParamKind::Scalar, None) => {}
            (ParamKind::Scalar, Some(_)) => {
                return bad(format!("expected a scalar, got {}", a.describe()))
            }
            (_, None) => return bad(format!("expected an array, got {}", a.describe())),
            (kind, Some(shape)) => {
                if kind.is_mut() && !a.is_mut() {
                    return bad("the kernel writes to it: pass it as `&mut`".into());
                }
                if matches!(kind, ParamKind::View | ParamKind::ViewMut) && shape.len() != p.ndim {
                    return bad(format!(
                        "expected a {}-d array (View{}), got {}; reshape it first",
                        p.ndim,
                        p.ndim,
                        a.describe()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The array id a parameter reports in bounds errors: its position in `array_names`.
pub(crate) fn array_id(info: &KernelInfo, param: usize) -> u32 {
    let name = info.params[param].name;
    match info.array_names.iter().position(|n| *n == name) {
        Some(id) => id as u32,
        None => info.params[..param]
            .iter()
            .filter(|p| p.kind.is_array())
            .count() as u32,
    }
}

/// Records a CPU launch into the graph being captured on this thread (host arrays cannot be
/// recorded: their memory is not gpukit's to keep alive).
#[cold]
fn record_cpu(info: &KernelInfo, config: &LaunchConfig, args: &mut [KernelArg<'_>]) -> Result<()> {
    if args.iter().any(|a| matches!(a.repr, ArgRepr::Host(_))) {
        return Err(Error::GraphCapture {
            what: format!(
                "launching `{}` with host arrays (ndarray, Vec or slices)",
                info.name
            ),
            reason: "a graph replays launches on the buffers it captured, and host arrays are \
                     copied per launch; pass gpukit Arrays"
                .into(),
        });
    }
    let cpu_args = cpu_args(info, args);
    let buffers: Vec<u64> = cpu_args
        .iter()
        .filter(|a| !a.ptr.is_null())
        .map(|a| a.ptr as u64)
        .collect();
    crate::kernel::graph::keep::note(&buffers);
    let (info, config) = (*info, *config);
    let op = cpu_capture::record(Box::new(move || {
        let timer = profile::cpu_timer();
        let result = cpu::run(&info, &config, cpu_args.clone());
        profile::finish_cpu(timer, info.name);
        result
    }));
    match op {
        None => Ok(()),
        // Not capturing after all (cannot happen: checked on this thread just before): run it.
        Some(mut op) => op(),
    }
}

fn run_cpu(info: &KernelInfo, config: &LaunchConfig, args: &mut [KernelArg<'_>]) -> Result<()> {
    let result = cpu::run(info, config, cpu_args(info, args));
    for a in args.iter_mut() {
        if let ArgRepr::Host(h) = &mut a.repr {
            if h.mutable {
                h.finish();
            }
        }
    }
    result
}

/// The CPU executor's view of `args`.
fn cpu_args(info: &KernelInfo, args: &[KernelArg<'_>]) -> Vec<CpuArg> {
    let mut cpu_args = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let id = array_id(info, i);
        cpu_args.push(match &a.repr {
            ArgRepr::Scalar { dtype, bits } => CpuArg {
                dtype: *dtype,
                ptr: std::ptr::null_mut(),
                shape: Vec::new(),
                bits: *bits,
                id,
            },
            ArgRepr::Device(d) => CpuArg {
                dtype: d.dtype,
                ptr: match d.buf {
                    DeviceBuf::Cpu(p) => p,
                    DeviceBuf::Cuda { .. } => {
                        unreachable!("target() sends CUDA arrays to the CUDA path")
                    }
                },
                shape: d.shape.to_vec(),
                bits: 0,
                id,
            },
            ArgRepr::Host(h) => CpuArg {
                dtype: h.dtype,
                ptr: h.ptr,
                shape: h.shape.clone(),
                bits: 0,
                id,
            },
        });
    }
    cpu_args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::DType;
    use crate::kernel::info::ParamInfo;

    fn no_cpu(_: &cpu::BlockCtx, _: &cpu::CpuArgs) {}

    const fn p(name: &'static str, kind: ParamKind) -> ParamInfo {
        ParamInfo {
            name,
            kind,
            dtype: DType::F32,
            ndim: 1,
        }
    }

    #[test]
    fn array_ids_follow_array_names_and_skip_scalars() {
        const PARAMS: &[ParamInfo] = &[
            p("n", ParamKind::Scalar),
            p("x", ParamKind::Slice),
            p("s", ParamKind::Scalar),
            p("y", ParamKind::SliceMut),
        ];
        let info = KernelInfo {
            name: "k",
            rust_source: "",
            cuda_source: "",
            device_fns: &[],
            params: PARAMS,
            array_names: &["x", "y", "tile"],
            checked: true,
            proven: None,
            uses_barrier: false,
            shared_bytes: 0,
            cpu: no_cpu,
        };
        assert_eq!((array_id(&info, 1), array_id(&info, 3)), (0, 1));
        // Without names (hand-written INFO): counted among the array parameters.
        let unnamed = KernelInfo {
            array_names: &[],
            ..info
        };
        assert_eq!(array_id(&unnamed, 3), 1);
    }
}
