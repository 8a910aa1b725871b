//! GPU tests cannot pass by skipping where a GPU is required: this test executable runs its own
//! GPU test again in a child process with the GPUs hidden (`CUDA_VISIBLE_DEVICES=-1`, which the
//! CUDA driver honours, so this is meaningful on a GPU machine too), and checks that the child
//! fails with the reason under `GPUKIT_TEST_REQUIRE_GPU=1` and passes with a visible
//! `skipped:` line without it (the rule of `gpukit::testing`).

use gpukit::testing::REQUIRE_GPU_VAR;
use gpukit::{Array, Device};
use std::process::Command;

/// The GPU test the child runs: arithmetic on the GPU gives the CPU's bits.
#[test]
fn gpu_arithmetic_matches_the_cpu() {
    let Some(gpu) = gpukit::testing::gpu_or_skip() else {
        return;
    };
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.37 - 100.0).collect();
    let compute = |d: &Device| {
        let a = Array::from_vec_on(x.clone(), [1000], d).unwrap();
        let b = (&a * 3.0f32).unwrap();
        (&b + 1.0f32).unwrap().to_vec().unwrap()
    };
    let (on_gpu, on_cpu) = (compute(&gpu), compute(&Device::Cpu));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&on_gpu), bits(&on_cpu));
}

/// What a child run of [`gpu_arithmetic_matches_the_cpu`] with the GPUs hidden did: whether it
/// exited 0, and its stdout and stderr.
struct Child {
    success: bool,
    stdout: String,
    stderr: String,
}

impl Child {
    /// Runs the GPU test alone in this executable, GPUs hidden, with `GPUKIT_TEST_REQUIRE_GPU`
    /// set to `require` (removed when `None`, whatever this process has).
    fn run(require: Option<&str>) -> Child {
        let exe = std::env::current_exe().expect("the test executable's path");
        let mut cmd = Command::new(exe);
        cmd.args([
            "gpu_arithmetic_matches_the_cpu",
            "--exact",
            // as the GPU pipeline runs tests: passing tests' output shown, under a header line
            "--show-output",
            "--test-threads=1",
        ])
        .env("CUDA_VISIBLE_DEVICES", "-1")
        .env_remove(REQUIRE_GPU_VAR);
        if let Some(value) = require {
            cmd.env(REQUIRE_GPU_VAR, value);
        }
        let out = cmd.output().expect("the test executable runs again");
        Child {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Both streams, for assertion messages.
    fn both(&self) -> String {
        format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }
}

#[test]
fn a_gpu_less_run_fails_when_a_gpu_is_required() {
    let child = Child::run(Some("1"));
    let all = child.both();
    assert!(!child.success, "the GPU test passed with the GPUs hidden (does CUDA_VISIBLE_DEVICES=-1 hide them?):\n{all}");
    assert!(
        all.contains("test gpu_arithmetic_matches_the_cpu ... FAILED") && all.contains("1 failed"),
        "the GPU test itself must be the failure:\n{all}"
    );
    assert!(
        all.contains("GPUKIT_TEST_REQUIRE_GPU=1 but no CUDA GPU here: "),
        "the failure must give the reason:\n{all}"
    );
    assert!(
        !child.stdout.lines().any(|l| l.starts_with("skipped:")),
        "a required GPU test must not also report a skip:\n{all}"
    );
}

#[test]
fn a_gpu_less_run_skips_visibly_when_no_gpu_is_required() {
    for require in [None, Some("0")] {
        let child = Child::run(require);
        let all = child.both();
        assert!(
            child.success,
            "{REQUIRE_GPU_VAR}={require:?}: the GPU test must skip, not fail:\n{all}"
        );
        assert!(
            all.contains("1 passed"),
            "{REQUIRE_GPU_VAR}={require:?}: the GPU test did not run:\n{all}"
        );
        assert!(
            child
                .stdout
                .lines()
                .any(|l| l.starts_with("skipped: no CUDA GPU (")),
            "{REQUIRE_GPU_VAR}={require:?}: the skip must be visible:\n{all}"
        );
    }
}

#[test]
fn a_misspelt_requirement_fails_instead_of_skipping() {
    let child = Child::run(Some("ture"));
    let all = child.both();
    assert!(!child.success, "`ture` was taken as `no`:\n{all}");
    assert!(
        all.contains("GPUKIT_TEST_REQUIRE_GPU=\"ture\" is not understood"),
        "the failure must name the variable and value:\n{all}"
    );
}
