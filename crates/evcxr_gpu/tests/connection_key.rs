//! The kernel binary warns once, on its stderr, when its connection file has an empty key.
//!
//! The session is made to fail right after the connection file is read (an invalid
//! `EVCXR_GPU_OPT`), so the test sees the whole stderr of a start without serving anything.

use std::process::Command;

fn start_with_key(key: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kernel.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"ip":"127.0.0.1","transport":"tcp","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"key":"{key}","signature_scheme":"hmac-sha256"}}"#
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_evcxr_gpu"))
        .arg("--connection-file")
        .arg(&file)
        .env("EVCXR_GPU_OPT", "not-a-level")
        .env("EVCXR_GPU_GPUKIT", "none")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn empty_key_is_warned_about_once() {
    let (code, stderr) = start_with_key("");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.matches("key is empty").count(), 1, "{stderr}");
    let line = stderr.lines().next().unwrap();
    assert!(line.contains("authentication (HMAC) is off"), "{stderr}");
    assert!(stderr.contains("EVCXR_GPU_OPT"), "{stderr}");
}

#[test]
fn a_key_gives_no_warning() {
    let (code, stderr) = start_with_key("0123456789abcdef");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("key is empty"), "{stderr}");
    assert!(stderr.contains("EVCXR_GPU_OPT"), "{stderr}");
}
