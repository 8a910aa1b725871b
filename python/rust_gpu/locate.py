"""Finding the evcxr_gpu kernel to run, in this order:

1. the binary shipped inside this package (the wheel that `make wheel` builds), with the gpukit
   sources shipped beside it (``EVCXR_GPU_GPUKIT`` points the kernel at them);
2. the installed ``rust-gpu`` kernelspec (``make install`` or ``install/hosted_bootstrap.sh``);
3. the binary named by ``$EVCXR_GPU_BIN``.

Anything else is a :class:`KernelNotFound` error that says how to install the kernel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

#: Name of the kernelspec that ``make install`` and the bootstrap register.
KERNEL_NAME = "rust-gpu"
#: This package's directory (where the wheel puts ``bin/`` and ``rust/``).
PACKAGE_DIR = Path(__file__).resolve().parent
#: The connection-file argument of the kernel's command line (jupyter_client fills it in).
CONNECTION_ARGS = ["--connection-file", "{connection_file}"]

INSTALL_HELP = """\
Install the kernel in one of these ways:
  * the wheel with the prebuilt kernel (no Rust build): in a rust-gpu-101 checkout run
    `make wheel`, then `pip install dist/rust_gpu-*.whl`; or run install/hosted_bootstrap.sh,
    which installs a wheel from dist/ (or $RUST_GPU_WHEEL) when there is one;
  * the "Rust (GPU)" kernelspec: `make install` (or install/hosted_bootstrap.sh) in a checkout;
  * or point EVCXR_GPU_BIN at an evcxr_gpu binary.
Running cells also needs a Rust toolchain (cargo; https://rustup.rs): evcxr compiles every cell."""


class KernelNotFound(RuntimeError):
    """No evcxr_gpu kernel could be found; the message lists what was tried and how to install one."""

    def _render_traceback_(self):
        """What IPython shows: the message alone (it is the whole story; no Python frames)."""
        return [f"KernelNotFound: {self}"]


@dataclass(frozen=True)
class KernelCommand:
    """How to start the kernel: its command line, extra environment and interrupt mode."""

    #: Command line, containing ``{connection_file}``.
    argv: list
    #: Variables added to the kernel's environment (over the Python process's own).
    env: dict = field(default_factory=dict)
    #: ``message`` (interrupt_request on the control channel) or ``signal`` (SIGINT).
    interrupt_mode: str = "message"
    #: Where the kernel came from, for messages (e.g. ``kernelspec rust-gpu in /x``).
    source: str = ""


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def wheel_binary(package_dir: Path = PACKAGE_DIR) -> Optional[Path]:
    """The evcxr_gpu binary inside this package, when the wheel put one there."""
    p = package_dir / "bin" / "evcxr_gpu"
    return p if p.is_file() else None


def wheel_gpukit(package_dir: Path = PACKAGE_DIR) -> Optional[Path]:
    """The gpukit crate shipped inside this package, when the wheel put it there."""
    p = package_dir / "rust" / "crates" / "gpukit"
    return p if (p / "Cargo.toml").is_file() else None


def from_wheel(package_dir: Path, environ: Mapping[str, str]) -> tuple:
    """The kernel of the wheel: ``(KernelCommand or None, why not)``."""
    binary = wheel_binary(package_dir)
    if binary is None:
        return None, f"no binary in this package ({package_dir / 'bin' / 'evcxr_gpu'}: not installed from the wheel)"
    if not _executable(binary):
        return None, f"{binary} is not executable (chmod +x it, or reinstall the wheel)"
    env = {}
    gpukit = wheel_gpukit(package_dir)
    if not environ.get("EVCXR_GPU_GPUKIT"):
        if gpukit is None:
            return None, f"the wheel's gpukit sources are missing ({package_dir / 'rust'}); reinstall the wheel"
        env["EVCXR_GPU_GPUKIT"] = str(gpukit)
    return KernelCommand([str(binary)] + CONNECTION_ARGS, env, "message", f"the rust_gpu wheel ({binary})"), ""


def from_kernelspec(spec_manager_factory: Callable[[], object]) -> tuple:
    """The installed ``rust-gpu`` kernelspec: ``(KernelCommand or None, why not)``."""
    from jupyter_client.kernelspec import NoSuchKernel

    try:
        spec = spec_manager_factory().get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        return None, f"no kernelspec named {KERNEL_NAME} (jupyter kernelspec list)"
    argv = list(spec.argv or [])
    if not argv:
        return None, f"kernelspec {KERNEL_NAME} in {spec.resource_dir} has an empty argv"
    if not _executable(Path(argv[0])):
        return None, f"kernelspec {KERNEL_NAME} in {spec.resource_dir} runs {argv[0]}, which is not an executable"
    argv = [a.replace("{resource_dir}", spec.resource_dir) for a in argv]
    env = {k: str(v).replace("{resource_dir}", spec.resource_dir) for k, v in (spec.env or {}).items()}
    mode = getattr(spec, "interrupt_mode", "signal") or "signal"
    return KernelCommand(argv, env, mode, f"kernelspec {KERNEL_NAME} in {spec.resource_dir}"), ""


def from_env_var(environ: Mapping[str, str]) -> tuple:
    """The binary named by ``$EVCXR_GPU_BIN``: ``(KernelCommand or None, why not)``."""
    value = environ.get("EVCXR_GPU_BIN", "").strip()
    if not value:
        return None, "EVCXR_GPU_BIN is not set"
    binary = Path(value).expanduser()
    if not _executable(binary):
        return None, f"EVCXR_GPU_BIN={value} is not an executable file"
    return KernelCommand([str(binary)] + CONNECTION_ARGS, {}, "message", f"EVCXR_GPU_BIN ({binary})"), ""


def _default_spec_manager():
    from jupyter_client.kernelspec import KernelSpecManager

    return KernelSpecManager()


def find_kernel(
    environ: Optional[Mapping[str, str]] = None,
    package_dir: Path = PACKAGE_DIR,
    spec_manager_factory: Callable[[], object] = _default_spec_manager,
) -> KernelCommand:
    """The kernel to start: the wheel's, else the ``rust-gpu`` kernelspec's, else ``$EVCXR_GPU_BIN``.

    Raises :class:`KernelNotFound` with every reason and the ways to install one.
    """
    environ = os.environ if environ is None else environ
    reasons = []
    for attempt in (
        lambda: from_wheel(package_dir, environ),
        lambda: from_kernelspec(spec_manager_factory),
        lambda: from_env_var(environ),
    ):
        cmd, why = attempt()
        if cmd is not None:
            return cmd
        reasons.append(why)
    tried = "\n".join(f"  - {r}" for r in reasons)
    raise KernelNotFound(f"rust_gpu: no evcxr_gpu kernel found. Tried:\n{tried}\n{INSTALL_HELP}")
