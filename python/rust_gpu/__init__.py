"""rust_gpu: Rust and CUDA cells in a Python notebook, run by the evcxr_gpu kernel.

    %load_ext rust_gpu

    %%rust
    let x = Array::arange(0.0f64, 8.0)?;
    x

gives ``%%rust`` cells (state kept from cell to cell), ``%%cuda`` cells and the kernel's other
magics (``%gpu``, ``%memory``, ``%device``, ...); see :mod:`rust_gpu.magics`. The kernel is one
evcxr_gpu subprocess per Python session, started on the first Rust cell and found as
:mod:`rust_gpu.locate` describes.
"""

from .forward import Forwarder, RustError
from .locate import KernelNotFound, find_kernel
from .session import KernelDied, RustSession

__version__ = "0.1.0"
__all__ = ["Forwarder", "KernelDied", "KernelNotFound", "RustError", "RustSession", "find_kernel",
           "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ip):
    """``%load_ext rust_gpu``: registers the magics; the kernel starts on the first Rust cell."""
    from . import magics

    magics.register(ip)


def unload_ipython_extension(ip):
    """``%unload_ext rust_gpu``: stops the Rust kernel (the magics stay defined and start a new
    one when used)."""
    from . import magics

    magics.shutdown()
