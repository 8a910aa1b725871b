"""Fixtures: a real evcxr_gpu kernel started through its installed kernelspec with jupyter_client.

The kernels run as plain Rust sessions (EVCXR_GPU_GPUKIT=none) in their own work directory, so
these tests exercise the protocol without waiting for gpukit builds; the notebooks test gpukit.
The few tests that need gpukit (test_gpukit_typing.py) start a session like a notebook's.
"""

from __future__ import annotations

import atexit
import functools
import glob
import os
import shutil
import sys
import tempfile

import pytest
from jupyter_client.manager import start_new_kernel

KERNEL = os.environ.get("EVCXR_GPU_KERNEL", "rust-gpu")


@functools.cache
def plain_env():
    """The environment of a plain Rust session (no gpukit) in a work directory of this test run."""
    work = tempfile.mkdtemp(prefix="evcxr-gpu-protocol-")
    atexit.register(shutil.rmtree, work, True)
    return {**os.environ, "EVCXR_GPU_GPUKIT": "none", "EVCXR_GPU_WORKDIR": work, "EVCXR_GPU_OPT": "0"}


def gpukit_env():
    """The environment of a session with gpukit loaded, as notebooks get it: the kernel's own
    gpukit, work directory and optimisation level (so the compile cache `make install` warmed is
    used), and libnvrtc from this Python environment's NVRTC wheel when it has one (so PTX can be
    produced without a GPU)."""
    env = dict(os.environ)
    if env.get("EVCXR_GPU_GPUKIT", "").strip() == "none":
        del env["EVCXR_GPU_GPUKIT"]
    env.pop("EVCXR_GPU_PRELUDE", None)
    libs = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "cu13", "lib")))
    if libs:
        env["LD_LIBRARY_PATH"] = ":".join([libs[0]] + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
    return env


@pytest.fixture(scope="session")
def kernel_env():
    return plain_env()


def start(env, **popen):
    """A started kernel and its client; `popen` goes to the kernel's process (e.g. `stderr=`)."""
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=120, env=env, **popen)
    return km, kc


@pytest.fixture(scope="module")
def kernel(kernel_env):
    """A kernel shared by the tests of one module (the first cell pays the session start)."""
    km, kc = start(kernel_env)
    run(kc, "1")
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture
def fresh_kernel(kernel_env):
    """A kernel of its own, for tests that interrupt, restart or shut it down."""
    km, kc = start(kernel_env)
    yield km, kc
    kc.stop_channels()
    if km.is_alive():
        km.shutdown_kernel(now=True)


def run(kc, code, timeout=300):
    """Executes `code`; returns (reply content, [(msg_type, content, arrival time)...])."""
    import time

    msgs = []

    def hook(msg):
        msgs.append((msg["msg_type"], msg["content"], time.monotonic()))

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook, allow_stdin=False)
    return reply["content"], msgs
