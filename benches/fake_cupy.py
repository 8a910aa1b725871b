"""A stand-in for CuPy, on numpy and host memory, for the unit tests of benches/cupy_twin.py
(test_cupy_twin.py) on machines without a GPU. Never imported by the benchmarks themselves.

Arrays are numpy arrays of a subclass with CuPy's extra methods (get, set, data.ptr); "device
pointers" are host addresses. Raw kernels are the harness's and the workloads' kernels written
again in numpy, selected by name, with the grid and block sizes they are launched with (so a grid
too small for a one-element-per-thread kernel leaves elements unwritten, as on a GPU).
`install()` puts the fake in sys.modules as `cupy` and `cupyx`; `uninstall()` removes it.
"""

from __future__ import annotations

import ctypes
import struct
import sys
import time
import types

import numpy as np

float64, float32, int32, int64, uint32, uint64 = np.float64, np.float32, np.int32, np.int64, np.uint32, np.uint64
complex128 = np.complex128
nan = np.nan

#: Kernels to break on purpose: name -> replacement function (tests of the checks).
OVERRIDES: dict = {}
#: Every kernel launch: (name, grid, block).
LAUNCHED: list = []


class _Ptr:
    def __init__(self, ptr):
        self.ptr = ptr


class ndarray(np.ndarray):
    """numpy array with CuPy's host-transfer methods."""

    @property
    def data(self):  # noqa: D401 - CuPy's MemoryPointer stand-in
        return _Ptr(self.__array_interface__["data"][0])

    def get(self, out=None):
        if out is not None:
            out[...] = np.asarray(self)
            return out
        return np.array(self)

    def set(self, arr):
        self[...] = arr


def _wrap(a):
    return np.asarray(a).view(ndarray)


def asarray(a, dtype=None):
    return _wrap(np.array(a, dtype=dtype))


def array(a, dtype=None):
    return _wrap(np.array(a, dtype=dtype))


def arange(*args, dtype=None):
    return _wrap(np.arange(*args, dtype=dtype))


def ones(shape, dtype=float64):
    return _wrap(np.ones(shape, dtype=dtype))


def zeros(shape, dtype=float64):
    return _wrap(np.zeros(shape, dtype=dtype))


def empty(shape, dtype=float64):
    return _wrap(np.empty(shape, dtype=dtype))


def full(shape, value, dtype=None):
    return _wrap(np.full(shape, value, dtype=dtype))


def linspace(a, b, n, dtype=float64):
    return _wrap(np.linspace(a, b, n, dtype=dtype))


def from_dlpack(a):
    """Like CuPy's: a new array object over the same buffer."""
    return a.view(ndarray)


def ascontiguousarray(a):
    return _wrap(np.ascontiguousarray(a))


def copyto(dst, src):
    np.copyto(dst, src)


def matmul(x, y, out=None):
    r = np.matmul(x, y)
    if out is not None:
        out[...] = r
        return out
    return _wrap(r)


def sort(a, axis=-1):
    return _wrap(np.sort(a, axis=axis))


def argsort(a, axis=-1):
    """numpy's stable sort stands in (the bench's input has distinct values: any sort gives one order)."""
    return _wrap(np.argsort(a, axis=axis, kind="stable"))


sum = np.sum  # noqa: A001
abs = np.abs  # noqa: A001
#: `cupy.fft` (the FFT row): numpy's transforms on the host.
fft = types.SimpleNamespace(fftn=lambda a: _wrap(np.fft.fftn(a)), ifftn=lambda a: _wrap(np.fft.ifftn(a)))
mean = np.mean
max = np.max  # noqa: A001
count_nonzero = np.count_nonzero


class _RandomState:
    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def standard_normal(self, shape, dtype=float64):
        return _wrap(self.rs.standard_normal(shape).astype(dtype))


random = types.SimpleNamespace(
    RandomState=_RandomState,
    random=lambda shape, dtype=float64: _wrap(np.random.default_rng(0).random(shape).astype(dtype)),
)


# --- cuda ------------------------------------------------------------------------------------


class Stream:
    _next = 0x1000

    def __init__(self, non_blocking=False, null=False):
        Stream._next += 1
        self.ptr = 0 if null else Stream._next

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        if _CAPTURE is not None:
            raise RuntimeError("synchronize inside a stream capture")

    def begin_capture(self, mode=None):
        global _CAPTURE
        if self.ptr == 0:
            raise RuntimeError("capturing on the null stream is not allowed")
        if _CAPTURE is not None:
            raise RuntimeError("already capturing")
        _CAPTURE = []

    def end_capture(self):
        global _CAPTURE
        ops, _CAPTURE = _CAPTURE, None
        if ops is None:
            raise RuntimeError("not capturing")
        return Graph(ops)


Stream.null = Stream(null=True)

#: The launches recorded by the stream capture in progress (None: not capturing).
_CAPTURE = None


class Graph:
    """cupy.cuda.Graph: the captured launches, run again at every launch."""

    def __init__(self, ops):
        self.ops = ops

    def launch(self, stream=None):
        if _CAPTURE is not None:
            raise RuntimeError("graph launch inside a stream capture")
        for op in self.ops:
            op()

    def upload(self, stream=None):
        pass


class Event:
    def __init__(self, *a, **k):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        if self.t is None:
            raise RuntimeError("event never recorded")

    @property
    def done(self):
        return self.t is not None and not HANG


#: Set to make every event stay incomplete (a span whose end is never reached).
HANG = False


def get_elapsed_time(a, b):
    return (b.t - a.t) * 1e3


class Device:
    attributes = {"MultiProcessorCount": 4}

    def synchronize(self):
        pass


def _memcpy_async(dst, src, size, kind, stream):
    ctypes.memmove(dst, src, size)


cuda = types.SimpleNamespace(
    Stream=Stream, Event=Event, Device=Device, Graph=Graph, get_elapsed_time=get_elapsed_time,
    get_current_stream=lambda: Stream.null,
    runtime=types.SimpleNamespace(memcpyAsync=_memcpy_async, memcpyDeviceToDevice=3),
)


# --- kernels ---------------------------------------------------------------------------------


def _threads(grid, block):
    g = np.prod(grid if isinstance(grid, tuple) else (grid,))
    b = np.prod(block if isinstance(block, tuple) else (block,))
    return int(g * b)


def _check(grid, block, out, ref, n, tol, res, value=None):
    n = int(n)
    if int(np.prod(block)) % 32:
        raise ValueError("checker blocks must be whole warps")
    o = np.asarray(out).ravel()[:n].astype(np.float64)
    r = np.full(n, value) if value is not None else np.asarray(ref).ravel()[:n].astype(np.float64)
    with np.errstate(all="ignore"):
        err = np.abs(o - r) / np.abs(r)
    eq = o == r
    err[eq] = 0
    bad = ~(eq | (err <= float(tol)))
    err[np.isnan(err)] = np.inf
    worst = float(err.max()) if n else 0.0
    res[0] += n
    res[1] += int(bad.sum())
    if bad.any():
        res[2] = np.uint64(builtin_min(int(res[2]), int(np.argmax(bad))))
    if worst > 0:
        res[3] = np.uint64(struct.unpack("<Q", struct.pack("<d", worst))[0])


builtin_min = min


def _poke_u32(ptr, value):
    ctypes.c_uint32.from_address(int(ptr)).value = int(value)


def _peek_u32(ptr):
    return ctypes.c_uint32.from_address(int(ptr)).value


def _u4(a):
    return np.asarray(a).view(np.uint32).reshape(-1, 4)


def _kernel_impl(name):
    if name in OVERRIDES:
        return OVERRIDES[name]
    if name.startswith("bench_check_const"):
        return lambda g, b, out, n, value, res: _check(g, b, out, None, n, 0.0, res, float(value))
    if name.startswith("bench_check_"):
        return lambda g, b, out, ref, n, tol, res: _check(g, b, out, ref, n, tol, res)
    if name == "bench_mark":
        return lambda g, b, flag, value: _poke_u32(flag, value)
    if name == "bench_spin_until":
        def spin(g, b, flag, value):
            if (_peek_u32(flag) - int(value)) & 0x80000000:
                raise RuntimeError("spin kernel would wait forever: the marker never ran")
        return spin
    unroll = int(name.rsplit("_u", 1)[1]) if "_v4_u" in name else 0

    def covered(g, b, n4):
        return builtin_min(int(n4), _threads(g, b)) if unroll == 1 else int(n4)

    if name.startswith("bench_copy_v4"):
        def copy(g, b, src, dst, n4):
            k = covered(g, b, n4)
            _u4(dst)[:k] = _u4(src)[:k]
        return copy
    if name.startswith("bench_write_v4"):
        def write(g, b, dst, n4, x, y, z, w):
            k = covered(g, b, n4)
            _u4(dst)[:k] = [int(x), int(y), int(z), int(w)]
        return write
    if name.startswith("bench_read_v4"):
        def read(g, b, src, n4, sink):
            k = covered(g, b, n4)
            sink[0] ^= np.bitwise_xor.reduce(_u4(src)[:k].ravel()) if k else 0
        return read
    if name == "fizzbuzz":
        def fizzbuzz(g, b, out, n):
            k = np.arange(1, builtin_min(int(n), _threads(g, b)) + 1)
            v = np.zeros(k.size, dtype=np.int32)
            v[k % 3 == 0] = 1
            v[k % 5 == 0] = 2
            v[k % 15 == 0] = 3
            out[:k.size] = v
        return fizzbuzz
    if name == "blur3":
        def blur(g, b, img, out, h, w, c):
            h, w, c = int(h), int(w), int(c)
            if g[0] * b[0] < w or g[1] * b[1] < h:
                raise ValueError("blur grid too small")
            p = np.pad(np.asarray(img).reshape(h, w, c), ((1, 1), (1, 1), (0, 0)), mode="edge")
            acc = np.zeros((h, w, c), dtype=np.float32)
            for dy in range(3):
                for dx in range(3):
                    acc += p[dy:dy + h, dx:dx + w, :]
            out.reshape(h, w, c)[...] = acc / np.float32(9)
        return blur
    if name == "empty_kernel":
        return lambda g, b: None
    if name == "first_launch":
        def first_launch(g, b, out, v):
            out[0] = v
        return first_launch
    raise KeyError(f"fake cupy has no kernel {name}")


class RawKernel:
    def __init__(self, code, name, options=()):
        self.name = name

    def __call__(self, grid, block, args, shared_mem=0):
        grid = grid if isinstance(grid, tuple) else (grid,)
        block = block if isinstance(block, tuple) else (block,)
        def run():
            LAUNCHED.append((self.name, grid, block))
            _kernel_impl(self.name)(grid, block, *args)

        if _CAPTURE is not None:
            _CAPTURE.append(run)  # recorded, run at each replay of the graph
        else:
            run()


class RawModule:
    def __init__(self, code=None, options=()):
        if "bench_check_f64" not in (code or ""):
            raise ValueError("not bench_kernels.cu")
        self.code = code

    def get_function(self, name):
        if f"void {name}(" not in self.code and f"bench_{name.split('_')[1]}_v4_u##U" not in self.code:
            raise KeyError(name)
        return RawKernel(self.code, name)


#: Calls of clear_memo() (CuPy forgets its memoized compiled kernels).
MEMO_CLEARS: list = []


def clear_memo():
    MEMO_CLEARS.append(True)


class linalg:  # noqa: N801 - CuPy's module name
    """cupy.linalg: numpy's, on the fake device arrays."""

    @staticmethod
    def svd(a, full_matrices=True, compute_uv=True):
        if not compute_uv:
            return _wrap(np.linalg.svd(np.asarray(a), compute_uv=False))
        return tuple(_wrap(x) for x in np.linalg.svd(np.asarray(a), full_matrices=full_matrices))


# --- cupyx and installation ------------------------------------------------------------------


def empty_pinned(shape, dtype=float64):
    return np.empty(shape, dtype=dtype)


def install():
    me = sys.modules[__name__]
    cupyx = types.ModuleType("cupyx")
    cupyx.empty_pinned = empty_pinned
    sys.modules["cupy"] = me
    sys.modules["cupyx"] = cupyx


def uninstall():
    global HANG, _CAPTURE
    HANG = False
    _CAPTURE = None
    sys.modules.pop("cupy", None)
    sys.modules.pop("cupyx", None)
    OVERRIDES.clear()
    LAUNCHED.clear()
    MEMO_CLEARS.clear()
