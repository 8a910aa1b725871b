//! Zero-copy interop through the public API: cudarc views and slices, cuBLAS on gpukit memory,
//! raw device pointers, DLPack on the GPU, and how long exported and imported buffers live
//! (gpukit's allocation tracker, `memory_stats`).
//!
//! GPU tests skip visibly ("skipped: no CUDA GPU (...)") where no GPU is usable, or fail there
//! with `GPUKIT_TEST_REQUIRE_GPU=1` (gpukit::testing). Every test of this file holds one lock,
//! so the tracker's counts are not disturbed by another test of the file.

use gpukit::cudarc::driver::{CudaContext, DevicePtr};
use gpukit::{memory_stats, Array, Device, Error, MemoryStats};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

/// The GPU with this file's lock held, or `None` after printing why the test is skipped.
fn gpu() -> Option<(Device, MutexGuard<'static, ()>)> {
    let device = gpukit::testing::gpu_or_skip()?;
    Some((device, turn()))
}

fn cuda(e: impl std::fmt::Display) -> Error {
    Error::Cuda(e.to_string())
}

/// Counts its drops: stands for the owner of foreign memory, to see when it is released.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> (Counted, Arc<AtomicUsize>) {
    let n = Arc::new(AtomicUsize::new(0));
    (Counted(n.clone()), n)
}

fn live(stats: MemoryStats) -> (usize, usize) {
    (stats.arrays, stats.bytes)
}

#[test]
fn cudarc_views_and_slices_are_the_arrays_memory() -> gpukit::Result<()> {
    let Some((device, _turn)) = gpu() else {
        return Ok(());
    };
    let data: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let mut a = Array::from_vec_on(data.clone(), 1024, &device)?;
    let ptr = a.as_device_ptr()?;
    let stream = device.cuda_stream()?;
    {
        let (view, view_stream) = a.cuda_view()?;
        assert!(Arc::ptr_eq(&view_stream, &stream), "gpukit's one stream");
        assert_eq!(view.len(), 1024);
        assert_eq!(view.device_ptr(&stream).0, ptr);
        assert_eq!(stream.clone_dtoh(&view).map_err(cuda)?, data);
    }
    // Written through cudarc, read through gpukit.
    let twos = vec![2.0f32; 1024];
    {
        let (mut view, stream) = a.cuda_view_mut()?;
        stream.memcpy_htod(&twos, &mut view).map_err(cuda)?;
    }
    assert_eq!(a.sum()?, 2048.0);

    // Out to cudarc and back: the same allocation, counted by gpukit only while it owns it.
    let before = live(memory_stats(&device));
    let slice = a.into_cudarc()?;
    assert_eq!(slice.device_ptr(&stream).0, ptr);
    assert_eq!(live(memory_stats(&device)), (before.0 - 1, before.1 - 4096));
    let b = Array::from_cudarc(slice, [32, 32])?;
    assert_eq!(b.as_device_ptr()?, ptr);
    assert_eq!(live(memory_stats(&device)), before);
    assert_eq!(b.to_vec()?, twos);
    Ok(())
}

#[test]
fn from_cudarc_takes_slices_of_other_streams_and_refuses_other_contexts() -> gpukit::Result<()> {
    let Some((device, _turn)) = gpu() else {
        return Ok(());
    };
    // Another stream of gpukit's context: the slice moves to gpukit's stream, after its work.
    let other = device.cuda_context()?.new_stream().map_err(cuda)?;
    let data: Vec<i64> = (0..100_000).map(|i| i * 3 - 7).collect();
    let slice = other.clone_htod(&data).map_err(cuda)?;
    let ptr = slice.device_ptr(&other).0;
    let a = Array::from_cudarc(slice, [1000, 100])?;
    assert_eq!(a.as_device_ptr()?, ptr);
    assert!(Arc::ptr_eq(
        a.cuda_slice()?.stream(),
        &device.cuda_stream()?
    ));
    assert_eq!(a.to_vec()?, data);
    drop(a);
    drop(other);

    // The wrong length is refused.
    let stream = device.cuda_stream()?;
    let e = Array::from_cudarc(stream.alloc_zeros::<f32>(6).map_err(cuda)?, [2, 2]).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");

    // Memory of a context gpukit does not use cannot be used or freed by gpukit.
    let foreign_ctx = CudaContext::new_non_primary(0, 0).map_err(cuda)?;
    let slice = foreign_ctx
        .default_stream()
        .alloc_zeros::<f32>(16)
        .map_err(cuda)?;
    let e = Array::from_cudarc(slice, 16).unwrap_err();
    assert!(
        matches!(&e, Error::DeviceMismatch(m) if m.contains("primary context")),
        "{e}"
    );
    drop(foreign_ctx);
    Ok(())
}

#[test]
fn cublas_sgemm_through_cudarc_on_gpukit_memory() -> gpukit::Result<()> {
    use gpukit::cudarc::cublas::{sys::cublasOperation_t::CUBLAS_OP_N, CudaBlas, Gemm, GemmConfig};
    let Some((device, _turn)) = gpu() else {
        return Ok(());
    };
    // SAFETY: only tries to load the library.
    if !unsafe { gpukit::cudarc::cublas::sys::is_culib_present() } {
        let var = std::env::var(gpukit::testing::REQUIRE_GPU_VAR).ok();
        match gpukit::testing::decide(
            gpukit::testing::Need::Gpu,
            Some("libcublas cannot be loaded"),
            var.as_deref(),
        ) {
            gpukit::testing::Decision::Skip(line) => {
                println!("{line}");
                return Ok(());
            }
            other => panic!("{other:?}"),
        }
    }
    let (m, k, n) = (64usize, 48usize, 32usize);
    let a_host: Vec<f32> = (0..m * k)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
        .collect();
    let b_host: Vec<f32> = (0..k * n)
        .map(|i| ((i * 53 % 97) as f32 - 48.0) / 24.0)
        .collect();
    let a = Array::from_vec_on(a_host.clone(), [m, k], &device)?;
    let b = Array::from_vec_on(b_host.clone(), [k, n], &device)?;
    let mut c = Array::<f32>::full_on([m, n], f32::NAN, &device)?;
    let pointers = (a.as_device_ptr()?, b.as_device_ptr()?, c.as_device_ptr()?);
    {
        let (a_view, stream) = a.cuda_view()?;
        let (b_view, _) = b.cuda_view()?;
        let (mut c_view, _) = c.cuda_view_mut()?;
        let blas = CudaBlas::new(stream).map_err(cuda)?;
        // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
        let cfg = GemmConfig {
            transa: CUBLAS_OP_N,
            transb: CUBLAS_OP_N,
            m: n as i32,
            n: m as i32,
            k: k as i32,
            alpha: 1.0f32,
            lda: n as i32,
            ldb: k as i32,
            beta: 0.0f32,
            ldc: n as i32,
        };
        // SAFETY: the views hold k·n, m·k and m·n elements, as `cfg` describes.
        unsafe { blas.gemm(cfg, &b_view, &a_view, &mut c_view) }.map_err(cuda)?;
    }
    let got = c.to_vec()?;
    let mut worst = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k)
                .map(|l| f64::from(a_host[i * k + l]) * f64::from(b_host[l * n + j]))
                .sum();
            worst = worst.max((f64::from(got[i * n + j]) - want).abs());
        }
    }
    assert!(
        worst < 1e-3,
        "largest error {worst} against the CPU product"
    );
    // Computed in place: no array moved.
    assert_eq!(
        pointers,
        (a.as_device_ptr()?, b.as_device_ptr()?, c.as_device_ptr()?)
    );
    Ok(())
}

#[test]
fn raw_device_pointers_alias_and_their_owner_lives_as_long_as_the_array() -> gpukit::Result<()> {
    let Some((device, _turn)) = gpu() else {
        return Ok(());
    };
    let a = Array::from_vec_on(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], &device)?;
    let before = live(memory_stats(&device));
    // SAFETY: `a`'s four elements, alive until `b` is dropped (below, before `a`).
    let mut b = unsafe { Array::<f32>::from_raw_device_ptr(a.as_device_ptr()?, 4, &device, ())? };
    assert_eq!(b.as_device_ptr()?, a.as_device_ptr()?);
    assert_eq!(
        live(memory_stats(&device)),
        before,
        "not gpukit's allocation"
    );
    b += 10.0f32; // modified through one array, read through the other
    assert_eq!(a.to_vec()?, vec![11.0, 12.0, 13.0, 14.0]);
    drop(b);
    assert_eq!(
        a.to_vec()?,
        vec![11.0, 12.0, 13.0, 14.0],
        "not freed by the alias"
    );

    let stream = device.cuda_stream()?;
    let slice = stream.clone_htod(&[5u32, 6, 7]).map_err(cuda)?;
    let ptr = slice.device_ptr(&stream).0;
    let (count, drops) = counter();
    // SAFETY: three u32 of the slice, which the owner holds.
    let c = unsafe { Array::<u32>::from_raw_device_ptr(ptr, 3, &device, (slice, count))? };
    assert_eq!(c.to_vec()?, vec![5, 6, 7]);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(c);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the owner goes with the array"
    );

    // What the driver can tell is wrong is refused.
    let host = [1.0f32; 4];
    for (ptr, len, want) in [
        (a.as_device_ptr()? + 2, 2, "not aligned"),
        // (Lengths far beyond any rounding of the allocation's size by the driver.)
        (
            a.as_device_ptr()?,
            1 << 28,
            "past the end of its allocation",
        ),
        (
            a.as_device_ptr()? + 8,
            1 << 28,
            "past the end of its allocation",
        ),
        // Unknown to the driver, or (with HMM) known as host memory.
        (host.as_ptr() as u64, 4, "memory"),
    ] {
        // SAFETY: each is refused before use.
        let e = unsafe { Array::<f32>::from_raw_device_ptr(ptr, len, &device, ()) }.unwrap_err();
        let e = e.to_string();
        assert!(e.contains(want), "{ptr:#x} x{len}: {e}");
        if want == "memory" {
            assert!(
                e.contains("not memory that CUDA allocated") || e.contains("it is host memory"),
                "{e}"
            );
        }
    }
    Ok(())
}

#[cfg(feature = "dlpack")]
mod dlpack {
    use super::*;
    use gpukit::dlpark::ffi::{DLDataType, DLDevice, DLDeviceType, DLManagedTensorVersioned};
    use gpukit::dlpark::metadata::Dynamic;
    use gpukit::dlpark::{versioned, DlpackFlags};

    #[test]
    fn an_export_keeps_its_buffer_alive_and_counted_until_its_deleter() -> gpukit::Result<()> {
        let _turn = turn();
        let cpu = Device::Cpu;
        let before = live(memory_stats(&cpu));
        let a = Array::<f64>::full_on(1000, 0.25, &cpu)?;
        let with_array = live(memory_stats(&cpu));
        assert_eq!(with_array, (before.0 + 1, before.1 + 8000));
        let tensor = a.into_dlpack()?; // `a` is gone; its buffer lives in the tensor
        assert_eq!(live(memory_stats(&cpu)), with_array);
        let view = tensor.validate().unwrap();
        // SAFETY: the tensor's own CPU data, alive while `tensor` is.
        assert!(unsafe { view.cpu_slice::<f64>() }
            .unwrap()
            .iter()
            .all(|&x| x == 0.25));
        drop(tensor);
        assert_eq!(live(memory_stats(&cpu)), before, "freed by the deleter");

        let legacy = Array::<u8>::zeros_on(64, &cpu)?.into_dlpack_legacy()?;
        assert_eq!(live(memory_stats(&cpu)), (before.0 + 1, before.1 + 64));
        drop(legacy);
        assert_eq!(live(memory_stats(&cpu)), before);
        Ok(())
    }

    /// A tensor of "another library" over `slice`'s memory, which its context owns.
    fn foreign_cuda(
        slice: gpukit::cudarc::driver::CudaSlice<f32>,
        device: &Device,
        shape: &[i64],
        strides: &[i64],
        byte_offset: u64,
        flags: DlpackFlags,
    ) -> (versioned::Dlpack, Arc<AtomicUsize>) {
        let stream = device.cuda_stream().unwrap();
        let ptr = slice.device_ptr(&stream).0;
        let (count, drops) = counter();
        let mut t = Dynamic::new(shape.to_vec(), strides.to_vec())
            .initialize_as::<DLManagedTensorVersioned>(Box::new((slice, count)))
            .unwrap();
        t.set_data(ptr as usize as *mut std::ffi::c_void)
            .set_device(DLDevice::cuda(0))
            .set_dtype(DLDataType::F32)
            .set_byte_offset(byte_offset)
            .set_flags(flags)
            .unwrap();
        // SAFETY: the slice's memory, owned by the tensor's context until its deleter runs.
        (unsafe { t.finish() }, drops)
    }

    #[test]
    fn cuda_tensors_cross_without_copies() -> gpukit::Result<()> {
        let Some((device, _turn)) = gpu() else {
            return Ok(());
        };
        // gpukit -> DLPack -> gpukit: one allocation throughout, counted while gpukit owns it.
        let before = live(memory_stats(&device));
        let a = Array::<f32>::linspace_on(0.0, 1.0, 4096, &device)?;
        let ptr = a.as_device_ptr()?;
        let tensor = a.into_dlpack()?;
        {
            let t = tensor.validate().unwrap();
            assert_eq!(t.device().device_type, DLDeviceType::CUDA);
            assert_eq!(t.device().device_id, 0);
            assert_eq!(t.data_ptr() as usize as u64, ptr);
            assert_eq!(
                (t.shape(), t.strides()),
                (&[4096i64][..], Some(&[1i64][..]))
            );
        }
        assert_eq!(
            live(memory_stats(&device)),
            (before.0 + 1, before.1 + 4 * 4096)
        );
        let back = Array::<f32>::from_dlpack(tensor)?;
        assert_eq!(back.as_device_ptr()?, ptr);
        drop(back);
        assert_eq!(live(memory_stats(&device)), before);

        // Another library's CUDA tensor: wrapped, not copied, not counted; released with the array.
        let stream = device.cuda_stream()?;
        let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let slice = stream.clone_htod(&data).map_err(cuda)?;
        let ptr = slice.device_ptr(&stream).0;
        let (tensor, drops) =
            foreign_cuda(slice, &device, &[3, 4], &[4, 1], 0, DlpackFlags::empty());
        let mut wrapped = Array::<f32>::from_dlpack(tensor)?;
        assert_eq!(wrapped.as_device_ptr()?, ptr);
        assert_eq!(live(memory_stats(&device)), before);
        wrapped *= 2.0f32;
        assert_eq!(
            wrapped.to_vec()?,
            data.iter().map(|x| x * 2.0).collect::<Vec<_>>()
        );
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(wrapped);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "the deleter runs with the array"
        );

        // A byte offset is honoured.
        let slice = stream.clone_htod(&data).map_err(cuda)?;
        let (tensor, _) = foreign_cuda(slice, &device, &[11], &[1], 4, DlpackFlags::empty());
        assert_eq!(
            Array::<f32>::from_dlpack(tensor)?.to_vec()?,
            data[1..].to_vec()
        );
        Ok(())
    }

    #[test]
    fn cuda_tensors_gpukit_cannot_hold_are_refused() -> gpukit::Result<()> {
        let Some((device, _turn)) = gpu() else {
            return Ok(());
        };
        let stream = device.cuda_stream()?;
        let fresh = || stream.alloc_zeros::<f32>(12).map_err(cuda);
        /// Shape, strides, byte offset, flags, and what the refusal says.
        type Case = (
            &'static [i64],
            &'static [i64],
            u64,
            DlpackFlags,
            &'static str,
        );
        let cases: [Case; 5] = [
            (
                &[4, 3],
                &[1, 4],
                0,
                DlpackFlags::empty(),
                "not C-contiguous",
            ),
            (&[6], &[2], 0, DlpackFlags::empty(), "not C-contiguous"),
            (
                &[1 << 28],
                &[1],
                0,
                DlpackFlags::empty(),
                "past the end of its allocation",
            ),
            // 1 GiB on: outside the allocation (unknown to the driver, or past its end).
            (
                &[12],
                &[1],
                1 << 30,
                DlpackFlags::empty(),
                "the tensor's data at 0x",
            ),
            (&[12], &[1], 0, DlpackFlags::READ_ONLY, "read-only"),
        ];
        for (shape, strides, offset, flags, want) in cases {
            let (tensor, drops) = foreign_cuda(fresh()?, &device, shape, strides, offset, flags);
            let e = Array::<f32>::from_dlpack(tensor).unwrap_err();
            assert!(e.to_string().contains(want), "{shape:?} {strides:?}: {e}");
            assert_eq!(drops.load(Ordering::SeqCst), 1, "released on refusal");
        }
        let (tensor, _) = foreign_cuda(fresh()?, &device, &[12], &[1], 0, DlpackFlags::empty());
        let e = Array::<i32>::from_dlpack(tensor).unwrap_err();
        assert!(e.to_string().contains("holds float32, not int32"), "{e}");
        Ok(())
    }
}
