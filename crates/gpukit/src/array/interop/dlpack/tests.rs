//! DLPack on the CPU: gpukit's own round trips keep the buffer, foreign tensors are checked
//! field by field and copied, and every layout an array cannot hold is refused.

use super::*;
use dlpark::ffi::{DLManagedTensor, DLManagedTensorVersioned};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts its drops: a tensor's owner, to see when the deleter ran.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a foreign tensor owns: its bytes and a drop counter.
struct Owner {
    bytes: Vec<u8>,
    _count: Counted,
}

/// A tensor of another library over `bytes`, as its producer describes it.
struct Producer<'a> {
    bytes: Vec<u8>,
    dtype: DLDataType,
    device: DLDevice,
    shape: &'a [i64],
    strides: Option<&'a [i64]>,
    byte_offset: u64,
    read_only: bool,
}

impl<'a> Producer<'a> {
    fn cpu(bytes: Vec<u8>, dtype: DLDataType, shape: &'a [i64]) -> Self {
        Producer {
            bytes,
            dtype,
            device: DLDevice::CPU,
            shape,
            strides: None,
            byte_offset: 0,
            read_only: false,
        }
    }

    /// The managed tensor (ABI `M`) and the counter of its owner's drops.
    fn build<M: ManagedTensorBase>(self) -> (Managed<M>, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut owner = Box::new(Owner {
            bytes: self.bytes,
            _count: Counted(drops.clone()),
        });
        let data = owner.bytes.as_mut_ptr().cast();
        let compact = crate::array::interop::c_strides(
            &self
                .shape
                .iter()
                .map(|&d| d.max(0) as usize)
                .collect::<Vec<_>>(),
        );
        let compact: Vec<i64> = compact.iter().map(|&s| s as i64).collect();
        let strides = self.strides.map_or(compact, <[i64]>::to_vec);
        let mut t = Dynamic::new(self.shape.to_vec(), strides)
            .initialize_as::<M>(owner)
            .unwrap();
        t.set_data(data)
            .set_device(self.device)
            .set_dtype(self.dtype)
            .set_byte_offset(self.byte_offset);
        if self.strides.is_none() && !self.shape.is_empty() {
            // No strides at all: compact, as DLPack before 1.2 allows.
            t.tensor_mut().strides = std::ptr::null_mut();
        }
        if self.read_only {
            t.set_flags(DlpackFlags::READ_ONLY).unwrap();
        }
        // SAFETY: the data pointer addresses the owner's bytes, alive until the deleter runs.
        (unsafe { t.finish() }, drops)
    }
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn cpu_ptr<T: Element>(a: &Array<T>) -> usize {
    match a.storage() {
        Storage::Cpu(v) => v.as_ptr() as usize,
        Storage::Cuda { .. } => panic!("a CPU array"),
    }
}

fn is_registered(tensor_ctx: usize) -> bool {
    exports().lock().unwrap().contains_key(&tensor_ctx)
}

#[test]
fn every_element_type_has_its_dlpack_type_and_back() {
    for d in [
        DType::Bool,
        DType::U8,
        DType::I32,
        DType::I64,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::Complex64,
        DType::Complex128,
    ] {
        let dt = dl_dtype(d);
        assert_eq!(gpukit_dtype(dt), Some(d), "{d}");
        assert_eq!(usize::from(dt.bits) / 8, d.size(), "{d}");
    }
    let f16 = DLDataType::new(DLDataTypeCode::FLOAT, 16, 1);
    let f32x4 = DLDataType::new(DLDataTypeCode::FLOAT, 32, 4);
    for dt in [
        f16,
        f32x4,
        DLDataType::I8,
        DLDataType::new(DLDataTypeCode::COMPLEX, 32, 1),
        DLDataType::F8E4M3FN,
    ] {
        assert_eq!(gpukit_dtype(dt), None, "{}", describe_dtype(dt));
    }
    assert_eq!(describe_dtype(f16), "float16 (type code 2)");
    assert_eq!(describe_dtype(f32x4), "float32x4 (4 lanes)");
}

#[test]
fn own_round_trip_keeps_the_buffer_in_both_abis() {
    let a =
        Array::from_vec_on(vec![1.5f32, 2.5, 3.5, 4.5, 5.5, 6.5], [3, 2], &Device::Cpu).unwrap();
    let ptr = cpu_ptr(&a);
    let tensor = a.into_dlpack().unwrap();
    {
        let t = tensor.validate().unwrap();
        assert_eq!(t.device(), DLDevice::CPU);
        assert_eq!(gpukit_dtype(t.dtype()), Some(DType::F32));
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.strides(), Some(&[2i64, 1][..]));
        assert_eq!(t.byte_offset(), 0);
        assert_eq!(t.data_ptr() as usize, ptr);
        assert!(!tensor.flags().contains(DlpackFlags::READ_ONLY));
    }
    let ctx = unsafe { (*tensor.as_ptr()).manager_ctx } as usize;
    assert!(is_registered(ctx));
    let back = Array::<f32>::from_dlpack(tensor).unwrap();
    assert!(
        !is_registered(ctx),
        "the export's context is gone with its tensor"
    );
    assert_eq!(cpu_ptr(&back), ptr, "the same buffer, not a copy");
    assert_eq!(back.shape(), &[3, 2]);
    assert_eq!(back.to_vec().unwrap(), vec![1.5, 2.5, 3.5, 4.5, 5.5, 6.5]);

    let legacy = back.into_dlpack_legacy().unwrap();
    let back = Array::<f32>::from_dlpack(legacy).unwrap();
    assert_eq!(cpu_ptr(&back), ptr);

    // 0-d and empty arrays travel too.
    let scalar = Array::from_vec_on(vec![7u64], Vec::<usize>::new(), &Device::Cpu).unwrap();
    let t = scalar.into_dlpack().unwrap();
    assert_eq!(t.validate().unwrap().ndim(), 0);
    assert_eq!(Array::<u64>::from_dlpack(t).unwrap().item().unwrap(), 7);
    let empty = Array::<i32>::zeros_on([0, 4], &Device::Cpu).unwrap();
    let back = Array::<i32>::from_dlpack(empty.into_dlpack().unwrap()).unwrap();
    assert_eq!(back.shape(), &[0, 4]);
}

#[test]
fn dropping_an_export_drops_its_array() {
    let a = Array::<u8>::ones_on(16, &Device::Cpu).unwrap();
    let tensor = a.into_dlpack_legacy().unwrap();
    let ctx = unsafe { (*tensor.as_ptr()).manager_ctx } as usize;
    assert!(is_registered(ctx));
    drop(tensor);
    assert!(!is_registered(ctx));
}

#[test]
fn a_foreign_cpu_tensor_is_copied_once_and_released() {
    let shape = [2i64, 3];
    let values = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0];
    let mut p = Producer::cpu(f64_bytes(&values), DLDataType::F64, &shape);
    p.strides = Some(&[3, 1]);
    let (tensor, drops) = p.build::<DLManagedTensorVersioned>();
    let data = tensor.validate().unwrap().data_ptr() as usize;
    let a = Array::<f64>::from_dlpack(tensor).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1, "released after the copy");
    assert_ne!(cpu_ptr(&a), data);
    assert_eq!(
        (a.shape(), a.to_vec().unwrap()),
        (&[2usize, 3][..], values.to_vec())
    );
}

#[test]
fn strides_of_length_one_dimensions_and_absent_strides_are_contiguous() {
    let values = [1.0f32, 2.0, 3.0];
    // PyTorch leaves the stride of a length-1 dimension as it likes.
    let mut f = Producer::cpu(f32_bytes(&values), DLDataType::F32, &[1, 3]);
    f.strides = Some(&[99, 1]);
    let (tensor, _) = f.build::<DLManagedTensorVersioned>();
    assert_eq!(
        Array::<f32>::from_dlpack(tensor).unwrap().to_vec().unwrap(),
        values
    );
    // A legacy tensor without strides is compact.
    let (tensor, drops) =
        Producer::cpu(f32_bytes(&values), DLDataType::F32, &[3, 1]).build::<DLManagedTensor>();
    assert!(tensor.validate().unwrap().strides().is_none());
    let a = Array::<f32>::from_dlpack(tensor).unwrap();
    assert_eq!(
        (a.shape(), drops.load(Ordering::SeqCst)),
        (&[3usize, 1][..], 1)
    );
    // A versioned 1.3 tensor must carry strides: refused as malformed, not guessed.
    let (tensor, drops) = Producer::cpu(f32_bytes(&values), DLDataType::F32, &[3])
        .build::<DLManagedTensorVersioned>();
    let e = Array::<f32>::from_dlpack(tensor).err().unwrap().to_string();
    assert!(
        e.contains("description is invalid") && e.contains("strides"),
        "{e}"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn non_contiguous_layouts_are_refused_never_misread() {
    let values: Vec<f64> = (0..6).map(f64::from).collect();
    let cases: [(&[i64], &[i64]); 4] = [
        (&[3, 2], &[1, 3]), // column-major (a transpose)
        (&[3], &[2]),       // every other element
        (&[2, 3], &[0, 1]), // broadcast rows
        (&[3], &[-1]),      // reversed
    ];
    for (shape, strides) in cases {
        let mut f = Producer::cpu(f64_bytes(&values), DLDataType::F64, shape);
        f.strides = Some(strides);
        let (tensor, drops) = f.build::<DLManagedTensor>();
        let e = Array::<f64>::from_dlpack(tensor).err().unwrap().to_string();
        assert!(
            e.contains(&format!("strides {strides:?}")) && e.contains("not C-contiguous"),
            "{shape:?} {strides:?}: {e}"
        );
        assert_eq!(drops.load(Ordering::SeqCst), 1, "released on refusal");
    }
}

#[test]
fn element_types_must_match_exactly() {
    let (tensor, _) =
        Producer::cpu(f64_bytes(&[1.0, 2.0]), DLDataType::F64, &[2]).build::<DLManagedTensor>();
    let e = Array::<f32>::from_dlpack(tensor).err().unwrap().to_string();
    assert!(
        e.contains("holds float64, not float32") && e.contains("Array<f64>"),
        "{e}"
    );
    let f16 = DLDataType::new(DLDataTypeCode::FLOAT, 16, 1);
    let (tensor, _) = Producer::cpu(vec![0; 4], f16, &[2]).build::<DLManagedTensor>();
    let e = Array::<f32>::from_dlpack(tensor).err().unwrap().to_string();
    assert!(
        e.contains("float16") && e.contains("no gpukit element type"),
        "{e}"
    );
    let f32x2 = DLDataType::new(DLDataTypeCode::FLOAT, 32, 2);
    let (tensor, _) = Producer::cpu(vec![0; 16], f32x2, &[2]).build::<DLManagedTensor>();
    let e = Array::<f32>::from_dlpack(tensor).err().unwrap().to_string();
    assert!(e.contains("2 lanes"), "{e}");
    // A gpukit export of another type is refused the same way.
    let a = Array::<i32>::zeros_on(3, &Device::Cpu).unwrap();
    let e = Array::<i64>::from_dlpack(a.into_dlpack().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("holds int32, not int64"), "{e}");
}

#[test]
fn other_devices_are_refused() {
    for (device, name) in [
        (DLDevice::metal(0), "kDLMetal"),
        (
            DLDevice {
                device_type: DLDeviceType::CUDAHOST,
                device_id: 0,
            },
            "kDLCUDAHost",
        ),
        (
            DLDevice {
                device_type: DLDeviceType::CUDAMANAGED,
                device_id: 0,
            },
            "kDLCUDAManaged",
        ),
        (
            DLDevice {
                device_type: DLDeviceType::ROCM,
                device_id: 1,
            },
            "kDLROCM",
        ),
    ] {
        let mut f = Producer::cpu(f32_bytes(&[1.0, 2.0]), DLDataType::F32, &[2]);
        f.device = device;
        let (tensor, drops) = f.build::<DLManagedTensor>();
        let e = Array::<f32>::from_dlpack(tensor).err().unwrap().to_string();
        assert!(e.contains(name) && e.contains("kDLCPU"), "{e}");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn a_cuda_tensor_over_host_memory_is_refused() {
    // Where there is no GPU the device is refused; where there is one the driver does not know
    // the address. Either way nothing is read.
    let mut f = Producer::cpu(f32_bytes(&[1.0, 2.0]), DLDataType::F32, &[2]);
    f.device = DLDevice::cuda(0);
    let (tensor, drops) = f.build::<DLManagedTensor>();
    let e = Array::<f32>::from_dlpack(tensor).err().unwrap();
    assert!(
        matches!(e, Error::NoGpu(_))
            || e.to_string().contains("not memory that CUDA allocated")
            || e.to_string().contains("it is host memory"),
        "{e}"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn byte_offsets_are_honoured_and_checked() {
    let values = [10.0f32, 11.0, 12.0, 13.0];
    let mut f = Producer::cpu(f32_bytes(&values), DLDataType::F32, &[3]);
    f.byte_offset = 4;
    f.strides = Some(&[1]);
    let (tensor, _) = f.build::<DLManagedTensorVersioned>();
    assert_eq!(
        Array::<f32>::from_dlpack(tensor).unwrap().to_vec().unwrap(),
        vec![11.0, 12.0, 13.0]
    );
    let mut f = Producer::cpu(f32_bytes(&values), DLDataType::F32, &[3]);
    f.byte_offset = 2;
    f.strides = Some(&[1]);
    let (tensor, drops) = f.build::<DLManagedTensorVersioned>();
    let e = Array::<f32>::from_dlpack(tensor).err().unwrap().to_string();
    assert!(e.contains("not aligned to 4 bytes"), "{e}");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn foreign_bools_are_read_as_bytes() {
    let mut f = Producer::cpu(vec![0, 1, 2, 255], DLDataType::BOOL, &[4]);
    f.strides = Some(&[1]);
    f.read_only = true; // copied, so a read-only CPU tensor is fine
    let (tensor, _) = f.build::<DLManagedTensorVersioned>();
    assert_eq!(
        Array::<bool>::from_dlpack(tensor)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![false, true, true, true]
    );
}
