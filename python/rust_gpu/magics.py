"""The IPython magics: ``%%rust``/``%rust``, and every evcxr_gpu magic forwarded to the kernel.

The kernel's magics (``crates/evcxr_gpu/src/magics/``) are registered under ``rust_<name>``
always, and under their own name too when IPython (or another extension) does not already have
a magic of that name and kind: ``%gpu``, ``%memory``, ``%device``, ``%ptx``, ``%source`` and
``%%cuda``, ``%%profile`` usually get bare names, while ``%time``, ``%timeit``, ``%lsmagic``,
``%%time`` and ``%%timeit`` stay IPython's (use ``%rust_time``, ``%%rust_timeit``, ...).
Inside a ``%%rust`` cell everything the kernel understands works as written, magics included.
"""

from __future__ import annotations

import atexit
from typing import Optional

from .forward import Forwarder, RustError
from .session import RustSession

#: Line magics of the evcxr_gpu kernel (``LINE_MAGICS`` in crates/evcxr_gpu/src/magics/mod.rs).
KERNEL_LINE_MAGICS = {
    "gpu": "device table from NVML: name, driver, memory, utilisation, temperature, power, processes",
    "memory": "GPU memory used/free (NVML) and gpukit's live allocations",
    "device": "show the default device, or set it: %device cpu | %device cuda:N",
    "time": "%time EXPR: wall time of one Rust statement, device synchronised",
    "timeit": "%timeit [-n N] [-r R] [--graph] EXPR: mean ± std of repeated runs, device synchronised",
    "ptx": "%ptx NAME: the PTX a kernel compiled to",
    "kernelinfo": "%kernelinfo NAME: registers, memory, spills and occupancy of a kernel on the GPU",
    "sass": "%sass NAME: the machine code (SASS) of a kernel, via cuobjdump",
    "source": "%source [--full] NAME: the CUDA C++ source of a kernel (--full: with gpukit's prelude)",
    "doc": "%doc NAME: the documentation of a Rust item (e.g. %doc Vec::new)",
    "features": "%features NAME...: turn on optional gpukit features for the Rust session (e.g. linalg)",
    "crate": "%crate NAME [FEATURE...]: load a crate that ships beside gpukit (e.g. gpukit-frame)",
    "lsmagic": "list the evcxr_gpu kernel's magics",
}
#: Cell magics of the evcxr_gpu kernel (``CELL_MAGICS`` in crates/evcxr_gpu/src/magics/mod.rs).
KERNEL_CELL_MAGICS = {
    "cuda": "CUDA C++ cell compiled with NVRTC; each extern \"C\" __global__ becomes a kernel variable",
    "time": "wall time of the Rust cell, device synchronised",
    "timeit": "%%timeit [-n N] [-r R] [--graph]: IPython-style timing of the Rust cell, device synchronised "
    "every loop (--graph: the cell captured once as a graph, each loop replays it)",
    "graph": "%%graph [NAME] [-n N]: capture the Rust cell's launches and in-place array operations into a "
    "gpukit::Graph and replay it N times (default 1; with NAME: kept as a variable, 0)",
    "profile": "table of every kernel launched in the Rust cell: calls and GPU time (CUDA events)",
    "monitor": "%%monitor [--interval MS]: run the cell with a live chart of GPU utilisation and memory",
}

_session: Optional[RustSession] = None


def session() -> RustSession:
    """The Python process's one Rust session (created on first use; the kernel starts lazily)."""
    global _session
    if _session is None:
        _session = RustSession()
        atexit.register(shutdown)
    return _session


def shutdown() -> None:
    """Stops the Rust kernel, if one was started (at exit, on unload, on ``%rust_restart``)."""
    if _session is not None:
        _session.shutdown()


def line_code(name: str, line: str) -> str:
    """The kernel cell for the line magic ``%name line``."""
    return f"%{name} {line.strip()}".rstrip()


def cell_code(name: str, line: str, cell: str) -> str:
    """The kernel cell for the cell magic ``%%name line`` with body ``cell``."""
    return f"%%{name} {line.strip()}".rstrip() + "\n" + (cell or "")


def run(code: str, forwarder: Optional[Forwarder] = None) -> None:
    """Runs ``code`` in the Rust kernel; errors are raised as :class:`RustError` after showing."""
    if not code.strip():
        return
    session().execute(code, forwarder)


def _line_magic(name: str):
    def magic(line):
        run(line_code(name, line))

    magic.__doc__ = f"%{name}: {KERNEL_LINE_MAGICS[name]} (run by the evcxr_gpu kernel)"
    return magic


def _cell_magic(name: str):
    def magic(line, cell):
        run(cell_code(name, line, cell))

    magic.__doc__ = f"%%{name}: {KERNEL_CELL_MAGICS[name]} (run by the evcxr_gpu kernel)"
    return magic


def rust(line: str, cell: Optional[str] = None) -> None:
    """Rust run by the evcxr_gpu kernel; state is kept from cell to cell.

    ``%%rust`` runs the cell (kernel magics such as ``%%time`` or ``%gpu`` work inside it);
    ``%rust CODE`` runs one line.
    """
    if cell is None:
        run(line)
    else:
        if line.strip():
            raise RustError("UsageError", f"%%rust takes no arguments (got `{line.strip()}`); "
                            "put the Rust code in the cell body")
        run(cell)


def rust_restart(line: str) -> None:
    """%rust_restart: stops the Rust kernel; the next Rust cell starts a new one (state is lost)."""
    shutdown()
    print("rust_gpu: the Rust kernel was stopped; the next Rust cell starts a new one")


def rust_kernel(line: str) -> None:
    """%rust_kernel: which evcxr_gpu kernel rust_gpu runs (or would run) and where it came from."""
    s = session()
    cmd = s.command if s.running else s.find()
    state = "running" if s.running else "not started"
    print(f"evcxr_gpu kernel ({state}): {cmd.source}\n  argv: {' '.join(cmd.argv)}")
    for k, v in sorted(cmd.env.items()):
        print(f"  {k}={v}")


def register(ip) -> dict:
    """Registers every magic on the IPython shell ``ip``; returns ``{kind: [names]}`` registered."""
    done = {"line": [], "cell": [], "line_cell": []}

    def add(func, kind, name, only_if_free=False):
        taken = ip.find_cell_magic(name) if kind == "cell" else ip.find_line_magic(name)
        if only_if_free and taken is not None and not getattr(taken, "_rust_gpu", False):
            return
        func._rust_gpu = True
        ip.register_magic_function(func, magic_kind=kind, magic_name=name)
        done[kind].append(name)

    add(rust, "line_cell", "rust")
    add(rust_restart, "line", "rust_restart")
    add(rust_kernel, "line", "rust_kernel")
    for name in KERNEL_LINE_MAGICS:
        add(_line_magic(name), "line", f"rust_{name}")
        add(_line_magic(name), "line", name, only_if_free=True)
    for name in KERNEL_CELL_MAGICS:
        add(_cell_magic(name), "cell", f"rust_{name}")
        add(_cell_magic(name), "cell", name, only_if_free=True)
    return done
