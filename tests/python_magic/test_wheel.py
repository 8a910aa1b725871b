"""The wheel with the prebuilt kernel (python/build_wheel.py, `make wheel`): its platform tag,
its RECORD, and a real install into a fresh venv that runs a Rust cell with the shipped gpukit."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import build_wheel

ROOT = Path(__file__).resolve().parents[2]


def test_elf_requirements_of_this_python():
    exe = Path(os.path.realpath(sys.executable))
    data = exe.read_bytes()
    if data[:4] != b"\x7fELF" or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"{exe} is not a 64-bit ELF of a supported machine")
    arch, glibc = build_wheel.elf_requirements(data)
    assert arch == platform.machine()
    lib, version = platform.libc_ver()
    if lib == "glibc" and glibc is not None:
        assert glibc <= tuple(int(x) for x in version.split(".")[:2])  # it runs here


def test_elf_errors_and_tags():
    with pytest.raises(build_wheel.BuildError, match="not an ELF"):
        build_wheel.elf_requirements(b"#!/bin/sh\n")
    with pytest.raises(build_wheel.BuildError, match="64-bit little-endian"):
        build_wheel.elf_requirements(b"\x7fELF\x01\x01" + bytes(60))
    assert build_wheel.platform_tag("x86_64", (2, 34)) == "manylinux_2_34_x86_64"
    assert build_wheel.platform_tag("aarch64", None) == "linux_aarch64"


def test_workspace_manifest_keeps_only_the_library_crates():
    text = build_wheel.workspace_manifest((ROOT / "Cargo.toml").read_text())
    assert 'members = ["crates/gpukit", "crates/gpukit-macros", "crates/gpukit-step-sync", "crates/gpukit-frame", "crates/gpukit-ml"]' in text
    assert "[workspace.dependencies]" in text and "benches" not in text
    with pytest.raises(build_wheel.BuildError, match="members"):
        build_wheel.workspace_manifest("[workspace]\n")


def record_ok(zf: zipfile.ZipFile) -> list:
    """Names whose RECORD hash or size is wrong (none for a good wheel)."""
    record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
    bad, listed = [], set()
    for row in zf.read(record).decode().splitlines():
        name, digest, size = row.rsplit(",", 2)
        listed.add(name)
        if name == record:
            continue
        data = zf.read(name)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if digest != want or int(size) != len(data):
            bad.append(name)
    return bad + sorted(set(zf.namelist()) - listed)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, kernel_binary):
    out = tmp_path_factory.mktemp("dist")
    return build_wheel.build(kernel_binary, out)


def test_wheel_contents(wheel, kernel_binary):
    arch, glibc = build_wheel.elf_requirements(kernel_binary.read_bytes())
    assert wheel.name == f"rust_gpu-0.1.0-py3-none-{build_wheel.platform_tag(arch, glibc)}.whl"
    with zipfile.ZipFile(wheel) as zf:
        assert record_ok(zf) == []
        names = set(zf.namelist())
        assert {"rust_gpu/__init__.py", "rust_gpu/bin/evcxr_gpu", "rust_gpu/rust/Cargo.toml",
                "rust_gpu/rust/crates/gpukit/Cargo.toml", "rust_gpu/rust/crates/gpukit/src/lib.rs",
                "rust_gpu/rust/crates/gpukit-macros/Cargo.toml", "rust_gpu/rust/crates/gpukit-step-sync/src/lib.rs",
                "rust_gpu/rust/crates/gpukit-frame/Cargo.toml",
                "rust_gpu/rust/crates/gpukit-frame/src/lib.rs", "rust_gpu/rust/crates/gpukit-ml/src/lib.rs", "rust_gpu/kernelspec/kernel.json",
                "rust_gpu/_build.json", "rust_gpu-0.1.0.dist-info/WHEEL"} <= names
        assert (zf.getinfo("rust_gpu/bin/evcxr_gpu").external_attr >> 16) & 0o111
        tag = build_wheel.platform_tag(arch, glibc)
        assert f"Tag: py3-none-{tag}" in zf.read("rust_gpu-0.1.0.dist-info/WHEEL").decode()
        meta = zf.read("rust_gpu-0.1.0.dist-info/METADATA").decode()
        assert "Name: rust_gpu" in meta and "Requires-Dist: jupyter_client" in meta
        assert json.loads(zf.read("rust_gpu/_build.json"))["kernel"].startswith("evcxr_gpu ")
        assert not any("/tests/" in n or "/examples/" in n for n in names)


def test_same_inputs_same_wheel(wheel, kernel_binary, tmp_path):
    again = build_wheel.build(kernel_binary, tmp_path)
    assert again.read_bytes() == wheel.read_bytes()


def test_fresh_venv_install_runs_a_rust_cell(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True)
    # jupyter_client and IPython from this interpreter (the install itself was --no-deps, offline)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "_test_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    pkg = Path(purelib) / "rust_gpu"
    binary = pkg / "bin" / "evcxr_gpu"
    assert os.access(binary, os.X_OK)
    assert subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.startswith("evcxr_gpu ")
    env = {k: v for k, v in os.environ.items() if k not in ("EVCXR_GPU_BIN", "EVCXR_GPU_GPUKIT", "PYTHONPATH")}

    where = subprocess.run([str(venv / "bin" / "rust-gpu"), "where"], capture_output=True, text=True, env=env)
    assert where.returncode == 0, where.stderr
    assert f"the rust_gpu wheel ({binary})" in where.stdout
    assert f"EVCXR_GPU_GPUKIT={pkg / 'rust' / 'crates' / 'gpukit'}" in where.stdout

    kernels = tmp_path / "kernels"
    subprocess.run([str(py), "-m", "rust_gpu", "install-kernel", "--kernels-dir", str(kernels)], check=True, env=env)
    spec = json.loads((kernels / "rust-gpu" / "kernel.json").read_text())
    assert spec["argv"][0] == str(binary) and spec["display_name"] == "Rust (GPU)"
    assert spec["env"]["EVCXR_GPU_GPUKIT"] == str(pkg / "rust" / "crates" / "gpukit")
    assert (kernels / "rust-gpu" / "logo-64x64.png").is_file()

    if shutil.which("cargo"):  # the shipped manifests inherit from the shipped workspace
        meta = subprocess.run(["cargo", "metadata", "--no-deps", "--offline", "--format-version", "1",
                               "--manifest-path", str(pkg / "rust" / "crates" / "gpukit" / "Cargo.toml")],
                              capture_output=True, text=True)
        assert meta.returncode == 0, meta.stderr
        assert sorted(p["name"] for p in json.loads(meta.stdout)["packages"]) == ["gpukit", "gpukit-frame", "gpukit-macros", "gpukit-ml", "gpukit-step-sync"]

    code = ("from rust_gpu import RustSession, Forwarder\n"
            "out = []\n"
            "f = Forwarder(publish=lambda d, m, transient=None, update=False: out.append(d.get('text/plain', '')))\n"
            "s = RustSession()\n"
            "s.execute('let a = Array::arange(0.0f64, 8.0)?;', f)\n"
            "s.execute('a.sum()?', f)\n"
            "print('RESULT', out[-1], s.command.source)\n"
            "s.shutdown()\n")
    run = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env, timeout=1500)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"RESULT 28.0 the rust_gpu wheel ({binary})" in run.stdout
