"""Unit tests of finding the kernel: wheel, then the rust-gpu kernelspec, then $EVCXR_GPU_BIN."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpec, NoSuchKernel

from rust_gpu.locate import KernelNotFound, find_kernel


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def wheel_package(tmp_path: Path, gpukit=True) -> Path:
    pkg = tmp_path / "site" / "rust_gpu"
    executable(pkg / "bin" / "evcxr_gpu")
    if gpukit:
        (pkg / "rust" / "crates" / "gpukit").mkdir(parents=True)
        (pkg / "rust" / "crates" / "gpukit" / "Cargo.toml").write_text("[package]\n")
    return pkg


class Specs:
    """A kernelspec manager with at most one spec."""

    def __init__(self, spec=None):
        self.spec = spec

    def get_kernel_spec(self, name):
        if self.spec is None or name != "rust-gpu":
            raise NoSuchKernel(name)
        return self.spec


def spec(tmp_path, binary, **kw):
    return KernelSpec(argv=[str(binary), "--connection-file", "{connection_file}"], display_name="Rust (GPU)",
                      language="rust", resource_dir=str(tmp_path / "kernels" / "rust-gpu"), **kw)


def test_the_wheel_comes_first_and_points_the_kernel_at_its_gpukit(tmp_path):
    pkg = wheel_package(tmp_path)
    other = executable(tmp_path / "other" / "evcxr_gpu")
    cmd = find_kernel({"EVCXR_GPU_BIN": str(other)}, pkg, lambda: Specs(spec(tmp_path, other)))
    assert cmd.argv == [str(pkg / "bin" / "evcxr_gpu"), "--connection-file", "{connection_file}"]
    assert cmd.env == {"EVCXR_GPU_GPUKIT": str(pkg / "rust" / "crates" / "gpukit")}
    assert cmd.interrupt_mode == "message" and "wheel" in cmd.source


def test_a_gpukit_the_user_chose_wins_over_the_wheels(tmp_path):
    pkg = wheel_package(tmp_path)
    cmd = find_kernel({"EVCXR_GPU_GPUKIT": "none"}, pkg, Specs)
    assert cmd.env == {}  # the kernel reads the user's EVCXR_GPU_GPUKIT from the inherited environment


def test_kernelspec_next_with_its_env_and_interrupt_mode(tmp_path):
    binary = executable(tmp_path / "bin" / "evcxr_gpu")
    s = spec(tmp_path, binary, env={"EVCXR_GPU_OPT": "0", "X": "{resource_dir}/y"}, interrupt_mode="message")
    cmd = find_kernel({}, tmp_path / "pure" / "rust_gpu", lambda: Specs(s))
    assert cmd.argv[0] == str(binary)
    assert cmd.env == {"EVCXR_GPU_OPT": "0", "X": f"{s.resource_dir}/y"}
    assert cmd.interrupt_mode == "message" and "kernelspec rust-gpu" in cmd.source


def test_env_var_last(tmp_path):
    binary = executable(tmp_path / "b" / "evcxr_gpu")
    cmd = find_kernel({"EVCXR_GPU_BIN": str(binary)}, tmp_path / "pure", Specs)
    assert cmd.argv == [str(binary), "--connection-file", "{connection_file}"] and cmd.env == {}


def test_nothing_found_says_what_was_tried_and_how_to_install(tmp_path):
    stale = spec(tmp_path, tmp_path / "gone" / "evcxr_gpu")
    with pytest.raises(KernelNotFound) as e:
        find_kernel({"EVCXR_GPU_BIN": str(tmp_path / "nope")}, tmp_path / "pure", lambda: Specs(stale))
    text = str(e.value)
    assert "no binary in this package" in text
    assert "runs " + str(tmp_path / "gone" / "evcxr_gpu") + ", which is not an executable" in text
    assert "EVCXR_GPU_BIN=" + str(tmp_path / "nope") + " is not an executable file" in text
    assert "make wheel" in text and "make install" in text and "rustup.rs" in text
    assert e.value._render_traceback_()[0].startswith("KernelNotFound: rust_gpu: no evcxr_gpu kernel found")


def test_unset_env_var_and_missing_kernelspec_are_explained(tmp_path):
    with pytest.raises(KernelNotFound, match="(?s)no kernelspec named rust-gpu.*EVCXR_GPU_BIN is not set"):
        find_kernel({}, tmp_path / "pure", Specs)


def test_broken_wheel_installs_are_explained(tmp_path):
    pkg = wheel_package(tmp_path, gpukit=False)
    with pytest.raises(KernelNotFound, match="gpukit sources are missing"):
        find_kernel({}, pkg, Specs)
    (pkg / "bin" / "evcxr_gpu").chmod(0o644)
    if not os.access(pkg / "bin" / "evcxr_gpu", os.X_OK):  # root may execute anything
        with pytest.raises(KernelNotFound, match="is not executable"):
            find_kernel({}, pkg, Specs)
