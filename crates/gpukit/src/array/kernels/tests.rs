//! Tests of the built-in kernels that need no GPU (NVRTC compiles every module) and a few that
//! run them where one is usable.

use super::source::*;
use super::table::*;
use super::*;
use crate::array::op::{BinOp, CmpOp, ReduceOp, UnOp};
use crate::element::DType;

/// Every built-in module compiles with NVRTC. Runs wherever libnvrtc loads (no GPU needed);
/// with `GPUKIT_REQUIRE_NVRTC=1` a missing libnvrtc is a failure instead of a skip.
#[test]
fn builtin_kernels_compile_with_nvrtc() {
    if !crate::testing::nvrtc_or_skip() {
        return;
    }
    for (name, source) in all_sources() {
        let ptx = crate::backend::cuda::compile_ptx(&name, &source, "sm_90")
            .unwrap_or_else(|e| panic!("{e}"));
        let entries = crate::backend::cuda::ptx_entries(&ptx);
        assert!(!entries.is_empty(), "{name} defines no kernels");
    }
    let ptx = crate::backend::cuda::compile_ptx("gpukit_ops_f32", &ops_source(DType::F32), "sm_90")
        .unwrap();
    for name in [
        "add_aa_f32",
        "powf_as_f32",
        "sum_f32",
        "ramp_f32",
        "lt_as_f32",
        "fill_f32",
    ] {
        assert!(
            crate::backend::cuda::ptx_entries(&ptx)
                .iter()
                .any(|e| e == name),
            "{name}"
        );
    }
    assert!(
        ptx.contains("ld.global.v4"),
        "elementwise kernels use 16-byte loads"
    );
}

#[test]
fn every_builtin_has_its_own_slot() {
    let mut all = Vec::new();
    for &d in &ALL_DTYPES {
        all.extend([
            Builtin::Fill(d),
            Builtin::Copy(d),
            Builtin::Ramp(d),
            Builtin::Powf(d),
        ]);
        all.extend(ReduceOp::ALL.map(|op| Builtin::Reduce(op, d)));
        all.extend(UnOp::NUMERIC.map(|op| Builtin::Unary(op, d)));
        all.extend(UnOp::FLOAT.map(|op| Builtin::Unary(op, d)));
        for f in [Form::Aa, Form::As] {
            all.extend(CmpOp::ALL.map(|op| Builtin::Compare(op, f, d)));
        }
        for f in [Form::Aa, Form::As, Form::Sa] {
            all.extend(BinOp::ALL.map(|op| Builtin::Binary(op, f, d)));
        }
        all.extend(ALL_DTYPES.map(|b| Builtin::Cast(d, b)));
    }
    let mut slots: Vec<usize> = all.iter().map(|k| k.slot()).collect();
    assert!(slots.iter().all(|&s| s < SLOTS));
    for k in &all {
        if let Builtin::Cast(..) = k {
            continue;
        }
        assert!(k.slot() % OPS_SLOTS < OPS_SLOTS, "{k:?}");
    }
    slots.sort_unstable();
    slots.dedup();
    assert_eq!(slots.len(), all.len(), "two built-in kernels share a slot");
    // Names are those of the kernels in the module sources.
    let src = ops_source(DType::F64);
    for k in all.iter().filter(|k| k.module() == Module::Ops(DType::F64)) {
        let name = k.name();
        let declared = src.contains(&format!(" {name}("));
        // Float-only and numeric-only kernels exist where they apply.
        assert!(declared || matches!(k, Builtin::Unary(..)), "{name}");
    }
}

#[test]
fn prelude_unrolls_match_the_launch_grids() {
    assert!(PRELUDE.contains(&format!("#define GK_RED_UNROLL {RED_UNROLL}\n")));
    assert_eq!(THREADS % 32, 0);
    assert_eq!(bits(1.5f32), 1.5f32.to_bits() as u64);
    assert_eq!(bits(-2.0f64), (-2.0f64).to_bits());
    assert_eq!(bits(true), 1);
}

#[test]
fn compile_errors_carry_the_nvrtc_log() {
    if !crate::testing::nvrtc_or_skip() {
        return;
    }
    let e = crate::backend::cuda::compile_ptx(
        "broken",
        "extern \"C\" __global__ void k() { int x = ; }",
        "sm_90",
    )
    .unwrap_err();
    match e {
        crate::error::Error::Compile { name, log } => {
            assert_eq!(name, "broken");
            assert!(
                log.contains("broken.cu(1)"),
                "the log names the line: {log}"
            );
            assert!(log.contains("expected an expression"), "{log}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
}

/// A launch that trusts this thread's record of the bound context still works after
/// someone else unbinds it (skips without a GPU).
#[test]
fn launches_survive_a_context_changed_behind_gpukits_back() {
    use crate::kernel::profile;
    use crate::Array;
    let Some(dev) = crate::testing::gpu_or_skip() else {
        return;
    };
    let _turn = profile::TEST_SESSION
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let mut a = Array::<f32>::ones_on(1000, &dev).unwrap();
    a.mul_in_place(2.0).unwrap();
    // SAFETY: unbinding leaves no context current; the next launch must bind again.
    unsafe { cudarc::driver::result::ctx::set_current(std::ptr::null_mut()) }.unwrap();
    a.mul_in_place(3.0).unwrap();
    assert!(a.to_vec().unwrap().iter().all(|&x| x == 6.0));
}

/// Built-in array operations are timed like every other kernel (skips without a GPU).
#[test]
fn built_in_array_operations_are_profiled() {
    use crate::kernel::profile::{start, stop, TEST_SESSION};
    use crate::Array;
    let _turn = TEST_SESSION.lock().unwrap_or_else(|p| p.into_inner());
    let Some(dev) = crate::testing::gpu_or_skip() else {
        return;
    };
    let a = Array::<f32>::ones_on(1 << 20, &dev).unwrap();
    let _ = (&a * 2.0).unwrap().sum().unwrap();
    start();
    let b = (&a * 2.0).unwrap();
    let s = b.sum().unwrap();
    let records = stop().unwrap();
    assert_eq!(s, 2.0 * (1 << 20) as f32);
    for name in ["mul_as_f32", "sum_f32"] {
        let r = records
            .iter()
            .find(|r| r.kernel == name)
            .unwrap_or_else(|| panic!("{name} not profiled: {records:?}"));
        assert!(r.calls >= 1 && r.min_ms > 0.0, "{r}");
        assert_eq!(r.device, dev);
    }
}

#[test]
fn random_and_diagonal_kernels_compile_with_nvrtc() {
    if !crate::testing::nvrtc_or_skip() {
        return;
    }
    let cases = [
        (
            super::random::program(),
            &[
                "gk_rand_uniform_f32",
                "gk_rand_uniform_f64",
                "gk_rand_int_i32",
                "gk_rand_int_u32",
                "gk_rand_int_i64",
                "gk_rand_int_u64",
            ][..],
        ),
        (
            super::diagonal::program(),
            &["gk_diag_w1", "gk_diag_w4", "gk_diag_w8"][..],
        ),
        (
            super::complex::program(),
            &[
                "gk_cvt_f32_c64",
                "gk_cvt_c128_f64",
                "gk_cvt_c64_c128",
                "gk_cfill_c64",
                "gk_cdiag_c128",
                "gk_cpart_c64",
                "gk_cscale_c128",
                "gk_cconj_c64",
                "gk_cbin_c64",
                "gk_cbin_c128",
            ][..],
        ),
    ];
    for ((name, source), expected) in cases {
        let ptx = crate::backend::cuda::compile_ptx(name, source, "sm_90")
            .unwrap_or_else(|e| panic!("{e}"));
        let entries = crate::backend::cuda::ptx_entries(&ptx);
        for e in expected {
            assert!(
                entries.iter().any(|x| x == e),
                "{name} lacks {e}: {entries:?}"
            );
        }
    }
}
