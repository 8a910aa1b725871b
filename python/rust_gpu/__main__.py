"""``python -m rust_gpu`` (or ``rust-gpu``): the kernel this package runs, and the wheel's installer.

    rust-gpu where                      which evcxr_gpu kernel %%rust cells use, and why
    rust-gpu install-kernel [--kernels-dir DIR]
                                        register the wheel's kernel as "Rust (GPU)" (default: the
                                        user's Jupyter data directory), for Rust notebooks
    rust-gpu warm                       build gpukit into the compile cache once (the first Rust
                                        cell is quick afterwards)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .locate import KERNEL_NAME, PACKAGE_DIR, KernelNotFound, find_kernel, wheel_binary, wheel_gpukit


def kernelspec_json(template: str, binary: Path, gpukit: Path) -> dict:
    """The wheel's kernel.json: the template's ``@BINARY@`` filled in and ``EVCXR_GPU_GPUKIT`` set."""
    if "@BINARY@" not in template:
        raise ValueError("kernel.json template has no @BINARY@ placeholder")
    escaped = json.dumps(str(binary))[1:-1]
    spec = json.loads(template.replace("@BINARY@", escaped))
    spec.setdefault("env", {})["EVCXR_GPU_GPUKIT"] = str(gpukit)
    return spec


def install_kernel(kernels_dir: Path, package_dir: Path = PACKAGE_DIR) -> Path:
    """Writes ``kernels_dir/rust-gpu`` for the wheel's binary; returns that directory."""
    binary, gpukit = wheel_binary(package_dir), wheel_gpukit(package_dir)
    template_dir = package_dir / "kernelspec"
    if binary is None or gpukit is None or not (template_dir / "kernel.json").is_file():
        raise KernelNotFound("rust_gpu: install-kernel registers the kernel of the rust_gpu wheel, and this "
                             f"installation ({package_dir}) is not from the wheel; in a checkout use "
                             "`make install` (or install/hosted_bootstrap.sh)")
    spec = kernelspec_json((template_dir / "kernel.json").read_text(), binary, gpukit)
    dest = kernels_dir / KERNEL_NAME
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "kernel.json").write_text(json.dumps(spec, indent=2) + "\n")
    for logo in sorted(template_dir.glob("logo-*.png")):
        shutil.copyfile(logo, dest / logo.name)
    return dest


def main(argv=None) -> int:
    """Entry point of ``python -m rust_gpu``."""
    ap = argparse.ArgumentParser(prog="rust-gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("where", help="which evcxr_gpu kernel %%rust cells use")
    ik = sub.add_parser("install-kernel", help="register the wheel's kernel as \"Rust (GPU)\"")
    ik.add_argument("--kernels-dir", type=Path, help="default: <jupyter data dir>/kernels")
    sub.add_parser("warm", help="build gpukit into the compile cache once")
    args = ap.parse_args(argv)
    try:
        if args.command == "where":
            cmd = find_kernel()
            print(f"{cmd.source}\nargv: {' '.join(cmd.argv)}")
            for k, v in sorted(cmd.env.items()):
                print(f"env: {k}={v}")
        elif args.command == "install-kernel":
            kernels_dir = args.kernels_dir
            if kernels_dir is None:
                from jupyter_core.paths import jupyter_data_dir

                kernels_dir = Path(jupyter_data_dir()) / "kernels"
            print(f"installed kernelspec \"Rust (GPU)\" in {install_kernel(kernels_dir)}")
        elif args.command == "warm":
            cmd = find_kernel()
            return subprocess.call([cmd.argv[0], "warm"], env={**os.environ, **cmd.env})
    except (KernelNotFound, ValueError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
