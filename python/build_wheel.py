#!/usr/bin/env python3
"""Builds the rust_gpu wheel that carries a prebuilt evcxr_gpu kernel (what `make wheel` runs).

    python/build_wheel.py --binary target/release/evcxr_gpu [--out dist] [--plat-name TAG] [--no-strip]

The wheel holds, under the `rust_gpu` package:

* the Python extension (python/rust_gpu/*.py);
* `bin/evcxr_gpu`: the given binary (a stripped copy when `strip` is available), executable;
* `rust/`: the sources of gpukit, gpukit-macros, gpukit-step-sync, gpukit-frame and gpukit-ml (what `%crate gpukit-frame`
  loads, from beside gpukit) in a Cargo workspace of those members (their manifests inherit
  versions and dependencies from it); the kernel is pointed at `rust/crates/gpukit` with
  EVCXR_GPU_GPUKIT, because the binary's built-in default is the checkout it was built in;
* `kernelspec/`: the kernel.json template and logos, for `python -m rust_gpu install-kernel`;
* `_build.json`: the kernel version and the commit the wheel was built from.

It is a platform wheel `rust_gpu-<version>-py3-none-<platform>.whl`: the Python code runs on any
Python 3, the binary only where its platform tag says. The tag is read from the binary itself:
`manylinux_<glibc>_<arch>` with the newest glibc symbol version it needs (it links only libc,
libm, libgcc_s and the loader, all allowed by manylinux), `linux_<arch>` when it needs none.
Only the standard library is used, so the build works offline. The wheel follows the binary
distribution format (PEP 427): dist-info with METADATA, WHEEL, entry points and a RECORD with
SHA-256 hashes; entries are sorted and timestamped with SOURCE_DATE_EPOCH (default 2020-01-01)
so the same inputs give the same file.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent  # python/
ROOT = HERE.parent                      # the repository
PACKAGE = "rust_gpu"
RUST_CRATES = ("gpukit", "gpukit-macros", "gpukit-step-sync", "gpukit-frame", "gpukit-ml")

ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64"}
SHT_GNU_VERNEED = 0x6FFFFFFE


class BuildError(Exception):
    """The wheel cannot be built from these inputs (the message says why)."""


# ---------------------------------------------------------------------------------------------
# platform tag


def elf_requirements(data: bytes) -> tuple:
    """``(arch, newest glibc version needed or None)`` of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF":
        raise BuildError("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise BuildError("only 64-bit little-endian ELF binaries are supported")
    (e_machine,) = struct.unpack_from("<H", data, 18)
    arch = ELF_MACHINES.get(e_machine)
    if arch is None:
        raise BuildError(f"unsupported ELF machine {e_machine:#x}")
    (e_shoff,) = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 58)
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info
        _, sh_type, _, _, sh_offset, sh_size, sh_link, sh_info = struct.unpack_from("<IIQQQQII", data, off)
        sections.append((sh_type, sh_offset, sh_size, sh_link, sh_info))
    newest = None
    for sh_type, offset, _, link, count in sections:
        if sh_type != SHT_GNU_VERNEED:
            continue
        strtab = sections[link][1]
        entry = offset
        for _ in range(count):  # Elf64_Verneed: version, cnt, file, aux, next
            _, vn_cnt, _, vn_aux, vn_next = struct.unpack_from("<HHIII", data, entry)
            aux = entry + vn_aux
            for _ in range(vn_cnt):  # Elf64_Vernaux: hash, flags, other, name, next
                _, _, _, vna_name, vna_next = struct.unpack_from("<IHHII", data, aux)
                end = data.index(b"\0", strtab + vna_name)
                name = data[strtab + vna_name:end].decode("ascii", "replace")
                m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", name)
                if m:
                    v = (int(m.group(1)), int(m.group(2)))
                    newest = v if newest is None or v > newest else newest
                aux += vna_next
            if not vn_next:
                break
            entry += vn_next
    return arch, newest


def platform_tag(arch: str, glibc) -> str:
    """The wheel platform tag for a binary of ``arch`` needing ``glibc`` (``(major, minor)`` or None)."""
    return f"manylinux_{glibc[0]}_{glibc[1]}_{arch}" if glibc else f"linux_{arch}"


# ---------------------------------------------------------------------------------------------
# contents


def read_pyproject(path: Path) -> dict:
    """The ``[project]`` table of pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: pip vendors a TOML reader
        from pip._vendor import tomli as tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)["project"]


def metadata_text(project: dict, readme: str) -> str:
    """The METADATA file (core metadata 2.1) for the ``[project]`` table."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    lic = project.get("license", {})
    if isinstance(lic, dict) and lic.get("text"):
        lines.append(f"License: {lic['text']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme


def workspace_manifest(root_manifest: str) -> str:
    """The repository's Cargo.toml with the crates of RUST_CRATES as the only members."""
    members = ", ".join(f'"crates/{c}"' for c in RUST_CRATES)
    text, n = re.subn(r"(?ms)^members\s*=\s*\[[^\]]*\]", f"members = [{members}]", root_manifest)
    if n != 1:
        raise BuildError("Cargo.toml: expected one `members = [...]` line in [workspace]")
    return ("# The workspace the shipped crates inherit from (generated by python/build_wheel.py).\n"
            + text)


def crate_files(crate_dir: Path):
    """``(relative path, path)`` of a crate's manifest and sources (no tests, examples, targets)."""
    if not (crate_dir / "Cargo.toml").is_file():
        raise BuildError(f"{crate_dir} is not a crate (no Cargo.toml)")
    yield "Cargo.toml", crate_dir / "Cargo.toml"
    for extra in ("build.rs", "README.md"):
        if (crate_dir / extra).is_file():
            yield extra, crate_dir / extra
    for p in sorted((crate_dir / "src").rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            yield p.relative_to(crate_dir).as_posix(), p


def stripped_copy(binary: Path, workdir: Path, strip: bool) -> bytes:
    """The binary's bytes, without its symbol table when ``strip`` and the tool exists."""
    tool = shutil.which("strip") if strip else None
    if tool is None:
        return binary.read_bytes()
    out = workdir / "evcxr_gpu"
    subprocess.run([tool, "--strip-unneeded", "-o", str(out), str(binary)], check=True)
    return out.read_bytes()


def kernel_version(binary: Path) -> str:
    """What ``evcxr_gpu --version`` prints."""
    try:
        p = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise BuildError(f"cannot run {binary}: {e}") from None
    if p.returncode != 0 or not p.stdout.startswith("evcxr_gpu "):
        raise BuildError(f"{binary} --version failed ({p.returncode}): {(p.stdout + p.stderr).strip()[:300]}")
    return p.stdout.strip()


def git_commit(root: Path) -> dict:
    """The commit of ``root`` and whether its tracked files differ from it (empty if not git)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True)
    except OSError:
        return {}
    if head.returncode != 0:
        return {}
    return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def wheel_entries(binary: Path, root: Path, plat: str, strip: bool, workdir: Path) -> list:
    """Every ``(archive name, bytes, mode)`` of the package part of the wheel."""
    pkg = root / "python" / PACKAGE
    entries = []
    for p in sorted(pkg.glob("*.py")):
        entries.append((f"{PACKAGE}/{p.name}", p.read_bytes(), 0o644))
    for name in ("bin", "rust", "kernelspec", "_build.json"):
        if (pkg / name).exists():
            raise BuildError(f"{pkg / name} exists in the source tree; the wheel builder makes it (remove it)")
    entries.append((f"{PACKAGE}/bin/evcxr_gpu", stripped_copy(binary, workdir, strip), 0o755))
    manifest = workspace_manifest((root / "Cargo.toml").read_text())
    entries.append((f"{PACKAGE}/rust/Cargo.toml", manifest.encode(), 0o644))
    for crate in RUST_CRATES:
        for rel, p in crate_files(root / "crates" / crate):
            entries.append((f"{PACKAGE}/rust/crates/{crate}/{rel}", p.read_bytes(), 0o644))
    template = root / "kernels" / "rust-gpu"
    if not (template / "kernel.json").is_file():
        raise BuildError(f"{template / 'kernel.json'} is missing")
    for p in sorted(template.iterdir()):
        if p.is_file() and (p.name == "kernel.json" or p.suffix == ".png"):
            entries.append((f"{PACKAGE}/kernelspec/{p.name}", p.read_bytes(), 0o644))
    build = {"kernel": kernel_version(binary), "platform": plat, **git_commit(root)}
    entries.append((f"{PACKAGE}/_build.json", (json.dumps(build, indent=1) + "\n").encode(), 0o644))
    return entries


# ---------------------------------------------------------------------------------------------
# the archive


def record_hash(data: bytes) -> str:
    """``sha256=<urlsafe base64, unpadded>`` as RECORD wants it."""
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def write_wheel(path: Path, entries: list, dist_info: str) -> None:
    """Writes the zip: ``entries`` then the dist-info files, with a RECORD of all of them."""
    stamp = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "1577836800")), 315532800))[:6]
    rows = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            rows.append(f"{name},{record_hash(data)},{len(data)}")
        rows.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=stamp)
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, "\n".join(rows) + "\n")


def build(binary: Path, out: Path, plat: str = "", strip: bool = True, root: Path = ROOT) -> Path:
    """Builds the wheel into ``out``; returns its path."""
    if not binary.is_file():
        raise BuildError(f"{binary} does not exist (build it: make install, or cargo build --release -p evcxr_gpu)")
    arch, glibc = elf_requirements(binary.read_bytes())
    plat = plat or platform_tag(arch, glibc)
    project = read_pyproject(root / "python" / "pyproject.toml")
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"
    with tempfile.TemporaryDirectory() as tmp:
        entries = wheel_entries(binary, root, plat, strip, Path(tmp))
    readme = (root / "python" / "README.md").read_text() if (root / "python" / "README.md").is_file() else ""
    wheel_meta = ("Wheel-Version: 1.0\nGenerator: rust-gpu-101 python/build_wheel.py\n"
                  f"Root-Is-Purelib: false\nTag: py3-none-{plat}\n")
    scripts = "".join(f"{k} = {v}\n" for k, v in project.get("scripts", {}).items())
    entries += [
        (f"{dist_info}/METADATA", metadata_text(project, readme).encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel_meta.encode(), 0o644),
        (f"{dist_info}/top_level.txt", f"{PACKAGE}\n".encode(), 0o644),
    ]
    if scripts:
        entries.append((f"{dist_info}/entry_points.txt", f"[console_scripts]\n{scripts}".encode(), 0o644))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-{version}-py3-none-{plat}.whl"
    tmp_path = path.with_suffix(".whl.part")
    write_wheel(tmp_path, entries, dist_info)
    tmp_path.replace(path)
    return path


def main(argv=None) -> int:
    """Command line of the builder."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", type=Path, required=True, help="the evcxr_gpu binary to ship")
    ap.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (default dist/)")
    ap.add_argument("--plat-name", default="", help="platform tag instead of the one read from the binary")
    ap.add_argument("--no-strip", action="store_true", help="ship the binary with its symbol table")
    args = ap.parse_args(argv)
    try:
        path = build(args.binary, args.out, args.plat_name, strip=not args.no_strip)
    except (BuildError, OSError, subprocess.CalledProcessError) as e:
        print(f"build_wheel.py: {e}", file=sys.stderr)
        return 1
    print(f"built {path} ({path.stat().st_size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
