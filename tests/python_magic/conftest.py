"""Shared setup of the rust_gpu tests: the extension is imported from the checkout (python/), and
kernels started here (the python3 kernel, and the evcxr_gpu kernel it starts) see it too.

The evcxr_gpu kernel is found as rust_gpu finds it: the installed `rust-gpu` kernelspec
(`make install`) or $EVCXR_GPU_BIN.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYDIR = ROOT / "python"
sys.path.insert(0, str(PYDIR))


@pytest.fixture(scope="session")
def kernel_env():
    """Environment of a python3 kernel that imports rust_gpu from the checkout."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": f"{PYDIR}{os.pathsep}{path}" if path else str(PYDIR)}


@pytest.fixture(scope="session")
def kernel_binary():
    """The evcxr_gpu binary rust_gpu would run from the checkout (fails with how to install one)."""
    from rust_gpu.locate import find_kernel

    return Path(find_kernel().argv[0])
