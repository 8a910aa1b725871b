//! The `#[vectorize]` runtime: apply an elementwise scalar function to arrays (NumPy ufuncs,
//! Numba's `@vectorize`), on the CPU with rayon or on a CUDA device with the generated
//! grid-stride kernel.
//!
//! Inputs are gpukit arrays, host arrays (ndarray, `Vec`, slices) or scalars. Arrays of one
//! element and scalars are broadcast; every other array must have the same shape, which the
//! result takes. The result lives on the device of the gpukit arrays among the inputs (they must
//! agree), else on the default device.

use super::{Array, Storage};
use crate::backend::cuda::CudaBackend;
use crate::device::{default_device, Device};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel::config::{Dim3, LaunchConfig};
use crate::kernel::cuda::{cached_function, launch_values, FnSpec};
use crate::kernel::info::VectorizeInfo;
use crate::kernel::profile;
use cudarc::driver::{CudaSlice, DevicePtr};
use ndarray::{ArrayBase, Data, Dimension};
use std::borrow::Cow;
use std::sync::Arc;

/// One input of a vectorized function, as given.
pub enum VecInput<'s, T: Element> {
    /// A scalar, broadcast to every element.
    Scalar(T),
    /// A gpukit array.
    Array(&'s Array<T>),
    /// Host data in C order, and its shape.
    Host(Cow<'s, [T]>, Vec<usize>),
}

/// What a `#[vectorize]` function accepts for an input of type `T`: `&Array<T>`, host arrays
/// (`&ndarray::ArrayBase`, `&Vec<T>`, `&[T]`) and a plain `T`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an input of `{T}` of a vectorized function",
    label = "expected an array of `{T}` or a `{T}` scalar",
    note = "pass `&Array<{T}>`, a host `&ndarray::Array<{T}, _>`, `&Vec<{T}>`, `&[{T}]` or a `{T}` value"
)]
pub trait VecArg<T: Element> {
    /// The input, borrowed for the call.
    fn into_vec_input<'s>(self) -> VecInput<'s, T>
    where
        Self: 's;
}

impl<T: Element> VecArg<T> for &Array<T> {
    fn into_vec_input<'s>(self) -> VecInput<'s, T>
    where
        Self: 's,
    {
        VecInput::Array(self)
    }
}

impl<T: Element> VecArg<T> for &Vec<T> {
    fn into_vec_input<'s>(self) -> VecInput<'s, T>
    where
        Self: 's,
    {
        VecInput::Host(Cow::Borrowed(self.as_slice()), vec![self.len()])
    }
}

impl<T: Element> VecArg<T> for &[T] {
    fn into_vec_input<'s>(self) -> VecInput<'s, T>
    where
        Self: 's,
    {
        VecInput::Host(Cow::Borrowed(self), vec![self.len()])
    }
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> VecArg<T> for &ArrayBase<S, D> {
    fn into_vec_input<'s>(self) -> VecInput<'s, T>
    where
        Self: 's,
    {
        let shape = self.shape().to_vec();
        match self.as_slice() {
            Some(s) => VecInput::Host(Cow::Borrowed(s), shape),
            None => VecInput::Host(Cow::Owned(self.iter().copied().collect()), shape),
        }
    }
}

macro_rules! scalar_vec_args {
    ($($t:ty),*) => {$(
        impl VecArg<$t> for $t {
            fn into_vec_input<'s>(self) -> VecInput<'s, $t>
            where
                Self: 's,
            {
                VecInput::Scalar(self)
            }
        }
    )*};
}

scalar_vec_args!(f32, f64, i32, i64, u32, u64, u8, bool);

impl<T: Element> VecInput<'_, T> {
    fn shape(&self) -> Option<&[usize]> {
        match self {
            VecInput::Scalar(_) => None,
            VecInput::Array(a) => Some(a.shape()),
            VecInput::Host(_, s) => Some(s),
        }
    }

    fn device(&self) -> Option<Device> {
        match self {
            VecInput::Array(a) => Some(a.device()),
            _ => None,
        }
    }

    /// An error when the input is an array whose device was lost in a fault.
    fn ensure_usable(&self) -> Result<()> {
        match self {
            VecInput::Array(a) => a.storage().ensure_usable(),
            _ => Ok(()),
        }
    }

    /// Elementwise reader on the host (the CPU device).
    fn host(&self) -> Reader<'_, T> {
        match self {
            VecInput::Scalar(v) => Reader::Splat(*v),
            VecInput::Array(a) => match a.storage() {
                Storage::Cpu(v) => Reader::from_slice(&v[..a.size()]),
                Storage::Cuda { .. } => unreachable!("plan() sends CUDA arrays to the CUDA path"),
            },
            VecInput::Host(d, _) => Reader::from_slice(d),
        }
    }

    /// Device pointer and length (uploading host data and scalars into `keep`).
    fn cuda(&self, backend: &CudaBackend, keep: &mut Vec<CudaSlice<T>>) -> Result<(u64, u64)> {
        let (data, len): (&[T], usize) = match self {
            VecInput::Array(a) => match a.storage() {
                Storage::Cuda { slice, .. } => {
                    let (ptr, _record) = slice.device_ptr(backend.stream());
                    return Ok((ptr, a.size() as u64));
                }
                Storage::Cpu(_) => unreachable!("plan() keeps CPU arrays off the CUDA path"),
            },
            VecInput::Scalar(v) => (std::slice::from_ref(v), 1),
            VecInput::Host(d, _) => (d, d.len()),
        };
        let slice = backend.upload(data)?;
        let ptr = slice.device_ptr(backend.stream()).0;
        keep.push(slice);
        Ok((ptr, len as u64))
    }
}

/// Reads element `i` of an input, broadcasting one element.
enum Reader<'d, T> {
    Splat(T),
    Slice(&'d [T]),
}

impl<'d, T: Copy> Reader<'d, T> {
    fn from_slice(s: &'d [T]) -> Reader<'d, T> {
        match s {
            [one] => Reader::Splat(*one),
            _ => Reader::Slice(s),
        }
    }

    #[inline(always)]
    fn at(&self, i: usize) -> T {
        match self {
            Reader::Splat(v) => *v,
            Reader::Slice(s) => s[i],
        }
    }
}

/// The result's shape and the device to compute on.
fn plan(
    info: &VectorizeInfo,
    shapes: &[Option<&[usize]>],
    devices: &[Option<Device>],
) -> Result<(Vec<usize>, Device)> {
    let mut shape: Option<(usize, &[usize])> = None;
    for (i, s) in shapes.iter().enumerate() {
        let Some(s) = s else { continue };
        let size: usize = s.iter().product();
        match shape {
            None => shape = Some((i, s)),
            Some((_, cur)) if cur.iter().product::<usize>() == 1 && size != 1 => {
                shape = Some((i, s))
            }
            Some((j, cur)) => {
                if size != 1 && cur != *s {
                    return Err(Error::Shape(format!(
                        "`{}`: input {} has shape {s:?} but input {} has shape {cur:?}; inputs must have the same shape, one element, or be scalars",
                        info.name,
                        i + 1,
                        j + 1
                    )));
                }
            }
        }
    }
    let mut device: Option<(usize, Device)> = None;
    for (i, d) in devices.iter().enumerate() {
        let Some(d) = d else { continue };
        match device {
            None => device = Some((i, *d)),
            Some((j, first)) if first != *d => {
                return Err(Error::DeviceMismatch(format!(
                    "`{}`: input {} is on {first} but input {} is on {d}",
                    info.name,
                    j + 1,
                    i + 1
                )))
            }
            Some(_) => {}
        }
    }
    let shape = shape.map(|(_, s)| s.to_vec()).unwrap_or_default();
    Ok((shape, device.map_or_else(default_device, |(_, d)| d)))
}

/// Grid-stride launch configuration for `n` elements.
fn grid_for(backend: &CudaBackend, n: usize) -> LaunchConfig {
    const THREADS: usize = 256;
    let cap = (backend.properties().multiprocessors as usize * 32).max(1);
    let blocks = n.div_ceil(THREADS).clamp(1, cap);
    LaunchConfig {
        grid: Dim3::new(blocks as u32, 1, 1),
        block: Dim3::new(THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

macro_rules! vectorize_fn {
    ($(#[$doc:meta])* $fname:ident, $arity:literal, $($a:ident: $A:ident => $T:ident),+) => {
        $(#[$doc])*
        pub fn $fname<$($T: Element, $A: VecArg<$T>,)+ R: Element>(
            info: &VectorizeInfo,
            $($a: $A,)+
            f: impl Fn($($T),+) -> R + Sync,
        ) -> Result<Array<R>> {
            debug_assert_eq!(info.arity, $arity);
            $(let $a = $a.into_vec_input();)+
            $($a.ensure_usable()?;)+
            let (shape, device) = plan(info, &[$($a.shape()),+], &[$($a.device()),+])?;
            let n: usize = shape.iter().product();
            match device {
                Device::Cpu => {
                    let timer = profile::cpu_timer();
                    $(let $a = $a.host();)+
                    let mut out = vec![R::zero(); n];
                    crate::backend::cpu::fill_indexed(&mut out, |i| f($($a.at(i)),+));
                    profile::finish_cpu(timer, info.name);
                    Array::from_storage(shape, Storage::Cpu(out))
                }
                Device::Cuda(ordinal) => {
                    let backend = CudaBackend::get(ordinal)?;
                    run_cuda(info, &backend, shape, n, |keep_values| {
                        $(let mut keep = Vec::new();
                        let (p, l) = $a.cuda(&backend, &mut keep)?;
                        keep_values.push(Box::new(keep));
                        keep_values.values.extend([p, l]);)+
                        Ok(())
                    })
                }
            }
        }
    };
}

/// Device pointers and lengths of the inputs, and the uploads they need kept alive.
struct CudaInputs {
    values: Vec<u64>,
    keep: Vec<Box<dyn std::any::Any>>,
}

impl CudaInputs {
    fn push(&mut self, k: Box<dyn std::any::Any>) {
        self.keep.push(k);
    }
}

fn run_cuda<R: Element>(
    info: &VectorizeInfo,
    backend: &Arc<CudaBackend>,
    shape: Vec<usize>,
    n: usize,
    inputs: impl FnOnce(&mut CudaInputs) -> Result<()>,
) -> Result<Array<R>> {
    let spec = FnSpec {
        key_source: info.cuda_source,
        helpers: 0,
        kernel: info.name,
        array_names: &[],
    };
    let func = cached_function(backend, &spec, || {
        (
            format!("{}_vectorized", info.name),
            info.cuda_source.to_string(),
        )
    })?
    .func;
    let mut ins = CudaInputs {
        values: Vec::with_capacity(2 * info.arity + 2),
        keep: Vec::new(),
    };
    inputs(&mut ins)?;
    // SAFETY: every element below `n` is written by the kernel before anyone reads it.
    let out = unsafe { backend.alloc::<R>(n)? };
    if n > 0 {
        let (ptr, _record) = out.device_ptr(backend.stream());
        ins.values.extend([ptr, n as u64]);
        launch_values(backend, func, &grid_for(backend, n), &ins.values, info.name)?;
    }
    drop(ins);
    Array::from_storage(
        shape,
        Storage::Cuda {
            backend: backend.clone(),
            slice: out,
        },
    )
}

vectorize_fn!(
    /// Applies a one-input `#[vectorize]` function elementwise.
    vectorize1, 1, a0: A0 => T0
);
vectorize_fn!(
    /// Applies a two-input `#[vectorize]` function elementwise, broadcasting scalars.
    vectorize2, 2, a0: A0 => T0, a1: A1 => T1
);
vectorize_fn!(
    /// Applies a three-input `#[vectorize]` function elementwise, broadcasting scalars.
    vectorize3, 3, a0: A0 => T0, a1: A1 => T1, a2: A2 => T2
);
vectorize_fn!(
    /// Applies a four-input `#[vectorize]` function elementwise, broadcasting scalars.
    vectorize4, 4, a0: A0 => T0, a1: A1 => T1, a2: A2 => T2, a3: A3 => T3
);

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: VectorizeInfo = VectorizeInfo {
        name: "f",
        arity: 3,
        rust_source: "",
        cuda_source: "",
    };

    #[test]
    fn shapes_broadcast_one_element_and_scalars() {
        let cpu = Some(Device::Cpu);
        let (s, d) = plan(
            &INFO,
            &[Some(&[1][..]), Some(&[2, 3][..]), None],
            &[cpu, None, None],
        )
        .unwrap();
        assert_eq!((s, d), (vec![2, 3], Device::Cpu));
        let (s, _) = plan(
            &INFO,
            &[Some(&[1, 1][..]), Some(&[1][..]), None],
            &[cpu, cpu, None],
        )
        .unwrap();
        assert_eq!(s, [1, 1]);
        let (s, _) = plan(&INFO, &[None, None, None], &[cpu, None, None]).unwrap();
        assert!(s.is_empty());
        let e = plan(
            &INFO,
            &[Some(&[4][..]), Some(&[1][..]), Some(&[2, 2][..])],
            &[cpu; 3],
        )
        .unwrap_err();
        assert!(matches!(e, Error::Shape(_)), "{e}");
        assert!(
            e.to_string()
                .contains("input 3 has shape [2, 2] but input 1 has shape [4]"),
            "{e}"
        );
        let e = plan(
            &INFO,
            &[None, None, None],
            &[cpu, Some(Device::Cuda(0)), None],
        )
        .unwrap_err();
        assert!(matches!(e, Error::DeviceMismatch(_)), "{e}");
    }

    #[test]
    fn readers_broadcast_single_elements() {
        assert_eq!(Reader::from_slice(&[7]).at(5), 7);
        assert_eq!(Reader::from_slice(&[1, 2, 3]).at(2), 3);
        assert_eq!(Reader::Splat(4).at(100), 4);
    }
}
