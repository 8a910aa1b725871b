#!/usr/bin/env python3
"""The CuPy side of the benchmarks: the same workloads as benches/gpukit-bench (same names, inputs,
span and wall definitions, full checks), one JSON line per row on stdout.

    python3 benches/cupy_twin.py [--warmup 3] [--reps 10] [--only SUBSTRING]
    python3 benches/cupy_twin.py --ceilings [--sizes-gib 1,2,4]
        memory ceilings (128-bit kernels, cp.copyto, cudaMemcpyAsync, fill), cuBLAS GEMM with its
        error against a host reference, pinned link rates

Timing (the same as gpukit-bench's timing.rs): `span_ms` are CUDA events around the whole call
(a start event on a stream of the harness with the device idle; after the call, `bench_mark` is
queued on CuPy's stream, the harness's stream waits for its flag, then records the end event);
`wall_ms` the host clock from before the call to the return of a device synchronisation, in a
separate call. Every timed call's output is checked in full against a host (numpy) reference.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS_CU = HERE / "bench_kernels.cu"

N = 1 << 28
LESSON5_SHAPE = (1000, 500, 500)
FIZZBUZZ_N = 50_000_000
BLUR_SHAPE = (8192, 8192, 4)
LAUNCHES = 20_000
#: Side of the square matrices of the matmul rows.
MATMUL_N = 4096
#: Rows and columns of the sort rows' array (lab 5.1's random array).
SORT_SHAPE = (10_000, 5_000)
#: Side of the cube of the FFT row (gpukit-bench's `Sizes::fft`).
FFT_SIDE = 256
#: The FFT row's name (gpukit-bench's `fft::FFT_ROW`).
FFT_ROW = "FFT 3-D complex (complex128, 256^3)"
#: Side of the square matrices of the large matmul rows (the GEMM ceiling's size).
MATMUL_BIG_N = 8192
#: Side of the square matrix of the SVD row.
SVD_N = 1000
#: Shape of the random row's float64 array (gpukit-bench's `Sizes::random`).
RANDOM_SHAPE = (10_000, 5_000)
#: Side of the square float64 matrix of the transpose-copy row.
TRANSPOSE_N = 8192
#: Shape of the axis-reduction rows' matrix (gpu.rs's `Sizes::axes`).
AXES_SHAPE = (10_000, 5_000)
#: GEMM size of the ceilings.
GEMM_N = 8192
#: Bytes per "GiB" of the memory ceilings' buffer sizes (tests shrink it).
GIB = 1 << 30
#: Result-sized blocks poisoned before each call that allocates its result (gpu.rs's POOL_POISON).
POOL_POISON = 2
#: Threads per block of the checker kernels (a multiple of 32).
CHECK_THREADS = 256
#: Calls per timed batch of a ceiling candidate.
BATCH = 4
#: Kernel shapes of the ceiling candidates (unroll, threads, blocks per SM), as ceilings.rs.
SHAPES = [(1, 256, 0), (2, 256, 8), (4, 256, 8), (8, 256, 8), (4, 1024, 2), (4, 256, 32), (8, 512, 4)]

FIZZBUZZ_SRC = r"""
extern "C" __global__ void fizzbuzz(int* out, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long k = i + 1;
        out[i] = (k % 15 == 0) ? 3 : (k % 5 == 0) ? 2 : (k % 3 == 0) ? 1 : 0;
    }
}
"""

BLUR_SRC = r"""
extern "C" __global__ void blur3(const float* img, float* out,
                                 unsigned long long h, unsigned long long w, unsigned long long c) {
    unsigned long long x = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long y = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (y < h && x < w) {
        for (unsigned long long ch = 0; ch < c; ch++) {
            float acc = 0.0f;
            for (unsigned long long dy = 0; dy < 3; dy++) {
                for (unsigned long long dx = 0; dx < 3; dx++) {
                    unsigned long long yy = min(max(y + dy, 1ULL), h) - 1;
                    unsigned long long xx = min(max(x + dx, 1ULL), w) - 1;
                    acc += img[(yy * w + xx) * c + ch];
                }
            }
            out[(y * w + x) * c + ch] = acc / 9.0f;
        }
    }
}
"""

EMPTY_SRC = r'extern "C" __global__ void empty_kernel() {}'

#: First launch of a new kernel (gpukit-bench's first_launch.rs): the kernel, the value it writes.
FIRST_LAUNCH_SRC = r'extern "C" __global__ void first_launch(int* out, int v) { out[0] = v; }'
FIRST_LAUNCH_VALUE = 42
FIRST_LAUNCH_COLD = "first launch of a new kernel, cold kernel cache (compile + load + launch)"
FIRST_LAUNCH_WARM = "first launch of a new kernel, warm kernel cache (disk read + load + launch)"

FULL_CHECK = "every element against a host reference (device checker kernel), output poisoned before each call"


# ---------------------------------------------------------------------------------------------
# checks (the rule of bench_kernels.cu and verify.rs)


def outcome(expected, elements, mismatches, first_bad, max_rel_err) -> dict:
    return {"expected": int(expected), "elements": int(elements), "mismatches": int(mismatches),
            "first_bad": None if first_bad is None else int(first_bad), "max_rel_err": float(max_rel_err)}


def outcome_ok(o: dict) -> bool:
    return o["elements"] == o["expected"] and o["mismatches"] == 0


def rel_err(out: float, ref: float) -> float:
    if out == ref:
        return 0.0
    try:
        e = abs(out - ref) / abs(ref)
    except ZeroDivisionError:
        return math.inf
    return math.inf if math.isnan(e) else e


def passes(out: float, ref: float, tol: float) -> bool:
    """Equal, or within tol relative to the reference; NaN never passes."""
    if out == ref:
        return True
    try:
        return abs(out - ref) / abs(ref) <= tol
    except ZeroDivisionError:
        return False


def scalar_outcome(out: float, ref: float, tol: float) -> dict:
    ok = passes(out, ref, tol)
    return outcome(1, 1, 0 if ok else 1, None if ok else 0, rel_err(out, ref))


def from_counters(v, n: int) -> dict:
    """The checker kernels' counters: visited, mismatches, first bad index, bits of the worst
    relative error."""
    v = [int(x) for x in v]
    if len(v) != 4:
        return outcome(n, 0, max(n, 1), None, math.inf)
    import struct
    worst = struct.unpack("<d", struct.pack("<Q", v[3]))[0]
    return outcome(n, v[0], v[1], None if v[2] == (1 << 64) - 1 else v[2], worst)


def host_compare(out, ref, tol: float) -> dict:
    """Every element of two numpy arrays (the same rule; an exact fast path)."""
    import numpy as np
    out, ref = np.asarray(out).ravel(), np.asarray(ref).ravel()
    n = ref.size
    if out.size != n:
        return outcome(n, out.size, max(out.size, n, 1), 0, math.inf)
    if tol == 0 and np.array_equal(out, ref):
        return outcome(n, n, 0, None, 0.0)
    o, r = out.astype(np.float64), ref.astype(np.float64)
    with np.errstate(all="ignore"):
        err = np.abs(o - r) / np.abs(r)
    eq = o == r
    err[eq] = 0.0
    err[np.isnan(err)] = np.inf
    bad = ~(eq | (err <= tol))
    k = int(bad.sum())
    return outcome(n, n, k, int(np.argmax(bad)) if k else None, float(err.max()) if n else 0.0)


class Verify:
    """Every check of one row on one side (verify.rs's Verify)."""

    def __init__(self, how: str):
        self.how, self.checked, self.failed, self.worst, self.max_rel_err = how, 0, 0, None, 0.0

    def push(self, o: dict):
        self.checked += 1
        self.max_rel_err = max(self.max_rel_err, o["max_rel_err"])
        bad = not outcome_ok(o)
        if bad:
            self.failed += 1
        w = self.worst
        if w is None or outcome_ok(w) or (bad and o["mismatches"] > w["mismatches"]):
            self.worst = o

    def ok(self) -> bool:
        return self.checked > 0 and self.failed == 0

    def json(self) -> dict:
        w = self.worst or outcome(0, 0, 0, None, 0.0)
        return {"how": self.how, "checked": self.checked, "failed": self.failed, "elements": w["expected"],
                "visited": w["elements"], "mismatches": w["mismatches"], "first_bad": w["first_bad"],
                "max_rel_err": self.max_rel_err if math.isfinite(self.max_rel_err) else "inf"}


def check_blocks(n: int, sms: int) -> int:
    return min(max(-(-n // CHECK_THREADS), 1), max(sms, 1) * 8)


class Checker:
    """The checker kernels of bench_kernels.cu on CuPy arrays."""

    KERNELS = {"float64": "bench_check_f64", "float32": "bench_check_f32", "int32": "bench_check_i32",
               "int64": "bench_check_i64"}

    def __init__(self, cp, module, sms: int):
        self.cp, self.module, self.sms = cp, module, sms

    def _run(self, name, args_before_res, n):
        cp = self.cp
        res = cp.array([0, 0, (1 << 64) - 1, 0], dtype=cp.uint64)
        self.module.get_function(name)((check_blocks(n, self.sms),), (CHECK_THREADS,), (*args_before_res, res))
        return from_counters(res.get().tolist(), n)

    def compare(self, out, ref, tol: float) -> dict:
        cp = self.cp
        n = int(ref.size)
        if out.size != ref.size or out.dtype != ref.dtype:
            return outcome(n, int(out.size), max(int(out.size), n, 1), 0, math.inf)
        if not (out.flags.c_contiguous and ref.flags.c_contiguous):
            out, ref = cp.ascontiguousarray(out), cp.ascontiguousarray(ref)
        return self._run(self.KERNELS[str(out.dtype)], (out, ref, cp.uint64(n), cp.float64(tol)), n)

    def compare_const(self, out, value: float) -> dict:
        cp = self.cp
        n = int(out.size)
        out = cp.ascontiguousarray(out)
        return self._run("bench_check_const_f64", (out, cp.uint64(n), cp.float64(value)), n)


# ---------------------------------------------------------------------------------------------
# timing (timing.rs)


def _driver_wait_value32():
    """cuStreamWaitValue32 from the driver library, or None."""
    try:
        f = ctypes.CDLL("libcuda.so.1").cuStreamWaitValue32_v2
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
    f.restype = ctypes.c_int
    return f


#: How long a span's end may take before the harness gives up (rawcuda.rs's SPAN_LIMIT).
SPAN_LIMIT_S = 120.0


def wait_for(event, limit_s: float):
    """Polls `event` until it completed; a clear error after `limit_s` instead of a hang."""
    t0 = time.perf_counter()
    while not event.done:
        waited = time.perf_counter() - t0
        if waited > limit_s:
            raise RuntimeError(f"the end of a timed span was not reached within {limit_s:.0f} s: the end marker "
                               "on CuPy's stream never ran, or the harness's stream never saw its flag")
        if waited > 1e-3:
            time.sleep(50e-6)


class Bracket:
    """CUDA events around a span of work on CuPy's current stream; rawcuda.rs's Bracket."""

    WAIT_VALUE_GEQ = 0

    def __init__(self, cp, module, wait_value=None):
        self.cp = cp
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.flag = cp.zeros(1, dtype=cp.uint32)
        self.mark = module.get_function("bench_mark")
        self.spin = module.get_function("bench_spin_until")
        self.wait_value = wait_value if wait_value is not None else _driver_wait_value32()
        self.wait = "wait_value" if self.wait_value else "spin"
        self.seq = 0
        self._start = None

    def how(self) -> str:
        w = "cuStreamWaitValue32" if self.wait == "wait_value" else "spin kernel"
        return f"events: start on the harness stream, end after bench_mark on the library stream ({w})"

    def start(self):
        ev = self.cp.cuda.Event()
        ev.record(self.stream)
        self._start = ev

    def stop(self) -> float:
        cp = self.cp
        if self._start is None:
            raise RuntimeError("Bracket.stop without start")
        self.seq = (self.seq + 1) & 0xFFFFFFFF or 1
        ptr = int(self.flag.data.ptr)
        self.mark((1,), (1,), (cp.uint64(ptr), cp.uint32(self.seq)))  # on the current stream
        if self.wait == "wait_value":
            rc = self.wait_value(ctypes.c_void_p(self.stream.ptr), ptr, self.seq, self.WAIT_VALUE_GEQ)
            if rc != 0:
                print(f"bench: cuStreamWaitValue32 refused ({rc}); spans wait with a spin kernel", file=sys.stderr)
                self.wait = "spin"
        if self.wait == "spin":
            with self.stream:
                self.spin((1,), (1,), (cp.uint64(ptr), cp.uint32(self.seq)))
        end = cp.cuda.Event()
        end.record(self.stream)
        wait_for(end, SPAN_LIMIT_S)
        start, self._start = self._start, None
        return float(cp.cuda.get_elapsed_time(start, end))


def device_sync(cp):
    cp.cuda.Device().synchronize()


def measure(cp, bracket: Bracket, warmup: int, reps: int, how: str, op, check, setup=None) -> dict:
    """`warmup` untimed calls, then `reps` calls timed by span and `reps` by wall clock,
    alternating; `setup` before each call and `check(result)` after each timed one, untimed."""
    for _ in range(warmup):
        if setup:
            setup()
        op()
    device_sync(cp)
    # one untimed span, so the marker kernel's first (lazily loaded) launch is not in a timed one
    bracket.start()
    bracket.stop()
    span, wall, verify = [], [], Verify(how)
    for _ in range(reps):
        if setup:
            setup()
        device_sync(cp)
        bracket.start()
        r = op()
        span.append(bracket.stop())
        device_sync(cp)
        verify.push(check(r))
        del r

        if setup:
            setup()
        device_sync(cp)
        t0 = time.perf_counter()
        r = op()
        device_sync(cp)
        wall.append((time.perf_counter() - t0) * 1e3)
        verify.push(check(r))
        del r
    return {"span_ms": span, "wall_ms": wall, "verify": verify}


def span_floor(cp, bracket: Bracket, reps: int):
    device_sync(cp)
    bracket.start()
    bracket.stop()
    span, wall = [], []
    for _ in range(reps):
        device_sync(cp)
        bracket.start()
        span.append(bracket.stop())
        device_sync(cp)
        t0 = time.perf_counter()
        device_sync(cp)
        wall.append((time.perf_counter() - t0) * 1e3)
    return span, wall


def row(name, m, span_how, check, nbytes, access, unit="op", note=""):
    """A result line from measure()'s dict (or a per-launch/floor dict with the same keys)."""
    v = m.get("verify")
    return {"side": "cupy", "name": name, "unit": unit, "span_ms": m.get("span_ms", []),
            "host_ms": m.get("host_ms", []), "wall_ms": m["wall_ms"],
            "verify": v.json() if v is not None else None, "check": check, "bytes": float(nbytes),
            "access": access, "span": span_how, "note": note}


# ---------------------------------------------------------------------------------------------
# inputs and host references


def summary(a) -> list[float]:
    """[sum, first, middle, last] in float64, as gpukit-bench's `summary`."""
    import cupy as cp
    flat = a.ravel()
    n = flat.size
    return [float(cp.sum(flat, dtype=cp.float64)), float(flat[0]), float(flat[n // 2]), float(flat[n - 1])]


def pattern_f32(n):
    import cupy as cp
    return (cp.arange(n, dtype=cp.int32) % 251).astype(cp.float32) / cp.float32(251)


def pattern_f32_host(n):
    import numpy as np
    return (np.arange(n, dtype=np.int64) % 251).astype(np.float32) / np.float32(251)


def fizzbuzz_ref(n):
    import numpy as np
    k = np.arange(1, n + 1, dtype=np.int64)
    out = np.zeros(n, dtype=np.int32)
    out[k % 3 == 0] = 1
    out[k % 5 == 0] = 2
    out[k % 15 == 0] = 3
    return out


def blur_ref(img, shape):
    """Lesson 3.0's blur on the host, in the kernel's order of float32 additions, edges clamped."""
    import numpy as np
    h, w, c = shape
    p = np.pad(img.reshape(h, w, c), ((1, 1), (1, 1), (0, 0)), mode="edge")
    acc = np.zeros((h, w, c), dtype=np.float32)
    for dy in range(3):
        for dx in range(3):
            acc += p[dy:dy + h, dx:dx + w, :]
    return acc / np.float32(9)


def reduction_refs(start: int, n: int) -> list[float]:
    """Exact sum, mean and max of arange(start, start + n) (integer arithmetic, rounded once)."""
    total = n * (2 * start + n - 1) // 2
    return [float(total), (2 * start + n - 1) / 2, float(start + n - 1)]


def matmul_inputs_host(n):
    """The matmul rows' A and B (n x n, float64), as gpukit-bench's `matmul_input_at`:
    (i mod 251) / 256 and (i mod 253) / 256 for C-order index i. Multiples of 2^-8 below 1, exact
    in float32 and float64, so every sum of n <= 4096 products is exact in float64."""
    import numpy as np
    i = np.arange(n * n, dtype=np.int64)
    return ((i % 251) / 256.0).reshape(n, n), ((i % 253) / 256.0).reshape(n, n)


def poison_pool(cp, shape, dtype, value, count):
    """Fills `count` new arrays with `value` and frees them: the blocks CuPy's pool hands to the
    next allocations of that size hold poison, not the last call's result."""
    held = [cp.full(shape, value, dtype=dtype) for _ in range(count)]
    del held


# ---------------------------------------------------------------------------------------------
# the workloads


def run_all(warmup: int, reps: int, only: str | None, emit):
    import cupy as cp
    import numpy as np

    module = cp.RawModule(code=KERNELS_CU.read_text(), options=("--std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    checker = Checker(cp, module, sms)
    bracket = Bracket(cp, module)
    how = bracket.how

    def wants(name):
        return only is None or only in name

    name = "span floor: nothing between the events"
    if wants(name):
        span, wall = span_floor(cp, bracket, reps)
        emit(row(name, {"span_ms": span, "wall_ms": wall}, how(), [], 0, "", unit="floor",
                 note="the bracket's own cost: included in every span of this side"))

    for name, dtype in (("a * 2 (float64, 2^28)", cp.float64), ("a * 2 (float32, 2^28)", cp.float32)):
        if not wants(name):
            continue
        if dtype == cp.float64:
            a = cp.arange(N, dtype=cp.float64)
            ref_host, tol = np.arange(N, dtype=np.float64) * 2.0, 0.0
        else:
            a = pattern_f32(N)
            ref_host, tol = pattern_f32_host(N) * np.float32(2), 1e-6
        ref = cp.asarray(ref_host)
        del ref_host
        two = dtype(2)
        check = summary(a * two)
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: a * two,
                    lambda b: checker.compare(b, ref, tol),
                    setup=lambda: poison_pool(cp, N, dtype, np.nan, POOL_POISON))
        emit(row(name, m, how(), check, N * a.itemsize * 2, "rw"))
        del a, ref

    name = "lesson 5.0: x *= 5; x *= x; x += x (float64, 1000x500x500)"
    if wants(name):
        n = LESSON5_SHAPE[0] * LESSON5_SHAPE[1] * LESSON5_SHAPE[2]
        state = {}

        def setup():
            state.pop("x", None)  # free the last result first, as gpu.rs does
            poison_pool(cp, LESSON5_SHAPE, cp.float64, np.nan, 3)
            state["x"] = cp.ones(LESSON5_SHAPE, dtype=cp.float64)

        def lesson():
            x = state["x"]
            x *= 5
            x *= x
            x += x

        setup()
        lesson()
        check = summary(state["x"])
        v = 1.0 * 5.0  # the lesson on the host: 5, 25, 50
        expected = v * v + v * v
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lesson,
                    lambda _: checker.compare_const(state["x"], expected), setup=setup)
        emit(row(name, m, how(), check, 3 * n * 8 * 2, "rw"))
        state.clear()

    name = "ones (float64, 2 GiB)"
    if wants(name):
        check = summary(cp.ones(N, dtype=cp.float64))
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: cp.ones(N, dtype=cp.float64),
                    lambda a: checker.compare_const(a, 1.0),
                    setup=lambda: poison_pool(cp, N, cp.float64, np.nan, POOL_POISON))
        emit(row(name, m, how(), check, N * 8, "w"))

    name = "arange (float64, 2^28)"
    if wants(name):
        check = summary(cp.arange(N, dtype=cp.float64))
        ref = cp.asarray(np.arange(N, dtype=np.float64))
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: cp.arange(N, dtype=cp.float64),
                    lambda a: checker.compare(a, ref, 0.0),
                    setup=lambda: poison_pool(cp, N, cp.float64, np.nan, POOL_POISON))
        emit(row(name, m, how(), check, N * 8, "w"))
        del ref

    name = "linspace (float64, 2^28)"
    if wants(name):
        check = summary(cp.linspace(0.0, 1.0, N, dtype=cp.float64))
        ref = cp.asarray(np.arange(N, dtype=np.float64) / float(N - 1))
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: cp.linspace(0.0, 1.0, N, dtype=cp.float64),
                    lambda a: checker.compare(a, ref, 1e-12),
                    setup=lambda: poison_pool(cp, N, cp.float64, np.nan, POOL_POISON))
        emit(row(name, m, how(), check, N * 8, "w",
                 note="checked to 1e-12 relative (start + i * step and i / (n - 1) differ in the last bits)"))
        del ref

    name = "DLPack round trip: export + import (float32, 2^28, no copy)"
    if wants(name):
        # cupy.from_dlpack(a) asks `a` for a DLPack capsule and wraps it: the same buffer.
        a = pattern_f32(N)
        ref = pattern_f32(N)
        check = summary(a)

        def same_buffer(b):
            if b.data.ptr != a.data.ptr:
                return scalar_outcome(float(b.data.ptr), float(a.data.ptr), 0.0)
            return checker.compare(b, ref, 0.0)

        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: cp.from_dlpack(a), same_buffer)
        emit(row(name, m, how(), check, 0, "",
                 note="host work only: no byte moves; gpukit synchronises its stream before export"))
        del a, ref

    reductions = ("sum (float64, 2^28)", "mean (float64, 2^28)", "max (float64, 2^28)")
    if any(wants(r) for r in reductions):
        # two inputs in turns, so a result left over from the previous call is wrong
        inputs = [cp.arange(N, dtype=cp.float64), cp.arange(1, N + 1, dtype=cp.float64)]
        refs = [reduction_refs(0, N), reduction_refs(1, N)]
        # tolerances as gpu.rs: rounding past 2^53 stays near 1e-13; the two inputs differ by 7.5e-9
        for k, name, f, tol in ((0, reductions[0], cp.sum, 1e-10), (1, reductions[1], cp.mean, 1e-10),
                                (2, reductions[2], cp.max, 0.0)):
            if not wants(name):
                continue
            check = [float(f(inputs[0]))]
            turn = [0]

            def flip():
                turn[0] += 1

            m = measure(cp, bracket, warmup, reps,
                        "the value against the exact one (integer arithmetic on the host); inputs alternate",
                        lambda: f(inputs[turn[0] % 2]).item(),
                        lambda v: scalar_outcome(v, refs[turn[0] % 2][k], tol), setup=flip)
            emit(row(name, m, how(), check, N * 8, "r", note="the value is returned to the host on both sides (.item())"))
        del inputs

    name = "fizzbuzz kernel (lesson 2.2, 50M int32)"
    if wants(name):
        k = cp.RawKernel(FIZZBUZZ_SRC, "fizzbuzz")
        n = FIZZBUZZ_N
        threads = 256
        blocks = (n + threads - 1) // threads
        ref = cp.asarray(fizzbuzz_ref(n))
        out = cp.full(n, -1, dtype=cp.int32)
        launch = lambda: k((blocks,), (threads,), (out, cp.uint64(n)))  # noqa: E731
        launch()
        counts = [float(cp.count_nonzero(out == c)) for c in range(4)]
        counts.append(float(n - sum(counts)))  # unwritten or out of range
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, launch, lambda _: checker.compare(out, ref, 0.0),
                    setup=lambda: out.fill(-1))
        emit(row(name, m, how(), counts, n * 4, "w", note="RawKernel"))
        del out, ref

    blur_names = ("blur 3x3 kernel (lesson 3.0, 8192x8192x4 float32)",
                  "blur 3x3 kernel, bounds checks off (8192x8192x4 float32)")
    if any(wants(b) for b in blur_names):
        k = cp.RawKernel(BLUR_SRC, "blur3")
        h, w, c = BLUR_SHAPE
        img = pattern_f32(h * w * c).reshape(h, w, c)
        ref = cp.asarray(blur_ref(pattern_f32_host(h * w * c), BLUR_SHAPE))
        out = cp.full((h, w, c), cp.nan, dtype=cp.float32)
        grid = ((w + 15) // 16, (h + 15) // 16)
        launch = lambda: k(grid, (16, 16), (img, out, cp.uint64(h), cp.uint64(w), cp.uint64(c)))  # noqa: E731
        for name in blur_names:
            if not wants(name):
                continue
            out.fill(cp.nan)
            launch()
            check = summary(out)
            m = measure(cp, bracket, warmup, reps, FULL_CHECK, launch, lambda _: checker.compare(out, ref, 1e-6),
                        setup=lambda: out.fill(cp.nan))
            emit(row(name, m, how(), check, h * w * c * 4 * 2, "rw", note="RawKernel"))
        del img, ref, out

    name = "launch overhead: empty kernel"
    if wants(name):
        k = cp.RawKernel(EMPTY_SRC, "empty_kernel")
        k((1,), (1,), ())
        device_sync(cp)
        host, wall = [], []
        for _ in range(max(reps, 3)):
            t0 = time.perf_counter()
            for _ in range(LAUNCHES):
                k((1,), (1,), ())
            h_ms = (time.perf_counter() - t0) * 1e3
            device_sync(cp)
            total = (time.perf_counter() - t0) * 1e3
            host.append(h_ms / LAUNCHES)
            wall.append(total / LAUNCHES)
        emit(row(name, {"host_ms": host, "wall_ms": wall}, "", [float(LAUNCHES)], 0, "", unit="per_launch",
                 note="host_ms = host time per launch, wall_ms = per launch including the device draining the queue"))

    name = "launch in a graph"
    if wants(name):
        # LAUNCHES empty-kernel launches captured once into a CUDA graph (stream capture on a
        # non-default stream, as CuPy requires), then the graph replayed: per kernel launch,
        # the host time of one replay and the time until it has drained
        k = cp.RawKernel(EMPTY_SRC, "empty_kernel")
        k((1,), (1,), ())
        device_sync(cp)
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            s.begin_capture()
            try:
                for _ in range(LAUNCHES):
                    k((1,), (1,), ())
            finally:
                graph = s.end_capture()
        graph.launch(stream=s)  # the first replay uploads the graph
        s.synchronize()
        host, wall = [], []
        for _ in range(max(reps, 3)):
            t0 = time.perf_counter()
            graph.launch(stream=s)
            h_ms = (time.perf_counter() - t0) * 1e3
            s.synchronize()
            total = (time.perf_counter() - t0) * 1e3
            host.append(h_ms / LAUNCHES)
            wall.append(total / LAUNCHES)
        emit(row(name, {"host_ms": host, "wall_ms": wall}, "", [float(LAUNCHES)], 0, "", unit="per_launch",
                 note=f"{LAUNCHES} empty-kernel launches captured in one graph (cupy.cuda.Graph), replayed once "
                      "per sample: host_ms = host time of a replay per launch in it, wall_ms = until it drained"))
        del graph, s

    name = "launch overhead: tiny a * 2 (1 element float32)"
    if wants(name):
        a = cp.full(1, 1.5, dtype=cp.float32)
        two = cp.float32(2)
        check = summary(a * two)
        host, wall = [], []
        for _ in range(max(reps, 3)):
            t0 = time.perf_counter()
            for _ in range(LAUNCHES):
                a * two
            h_ms = (time.perf_counter() - t0) * 1e3
            device_sync(cp)
            total = (time.perf_counter() - t0) * 1e3
            host.append(h_ms / LAUNCHES)
            wall.append(total / LAUNCHES)
        verify = Verify("one more call after the timing, its pool block poisoned")
        poison_pool(cp, 1, cp.float32, np.nan, 1)
        verify.push(scalar_outcome(float((a * two).item()), 3.0, 0.0))
        emit(row(name, {"host_ms": host, "wall_ms": wall, "verify": verify}, "", check, 0, "", unit="per_launch",
                 note="host_ms = host time per operation, wall_ms = per operation including the device draining the queue"))

    if wants(FIRST_LAUNCH_COLD) or wants(FIRST_LAUNCH_WARM):
        run_first_launch(cp, reps, wants, emit)
    for size, label in ((MATMUL_N, "4096^2"), (MATMUL_BIG_N, "8192^2")):
        run_matmuls(cp, np, bracket, checker, warmup, reps, wants, size, label, emit)

    name = "SVD (float64, 1000x1000)"
    if wants(name):
        run_svd(cp, np, bracket, warmup, reps, name, emit)

    name = "random (float64, 10000x5000)"
    if wants(name):
        run_random(cp, np, bracket, warmup, reps, name, emit)

    if any(wants(x) for x in SORT_NAMES):
        run_sort(cp, np, bracket, checker, warmup, reps, wants, emit)
    if wants(FFT_ROW):
        run_fft(cp, np, bracket, checker, warmup, reps, emit)

    name = "transpose copy (float64, 8192^2)"
    if wants(name):
        tn = TRANSPOSE_N
        a = cp.arange(tn * tn, dtype=cp.float64).reshape(tn, tn)
        # the reference transposed on the host (numpy), then uploaded
        ref = cp.asarray(np.ascontiguousarray(np.arange(tn * tn, dtype=np.float64).reshape(tn, tn).T))
        check = summary(cp.ascontiguousarray(a.T))
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: cp.ascontiguousarray(a.T),
                    lambda c: checker.compare(c, ref, 0.0),
                    setup=lambda: poison_pool(cp, (tn, tn), cp.float64, np.nan, POOL_POISON))
        emit(row(name, m, how(), check, 2 * tn * tn * 8, "rw",
                 note="a.t().copy() against CuPy's ascontiguousarray(a.T): a strided view made contiguous "
                      "(gpukit: 32x32 tiles through shared memory)"))
        del a, ref

    exact = "the reduced array stays on the device; reference exact (multiples of 2^-8)"
    axis_rows = (
        ("sum along axis 0 (float64, 10000x5000)", lambda x: x.sum(axis=0), 0.0, exact),
        ("sum along axis 1 (float64, 10000x5000)", lambda x: x.sum(axis=1), 0.0, exact),
        ("std along axis 1 (float64, 10000x5000)", lambda x: x.std(axis=1), 1e-12,
         "two passes over the input (mean, squared deviations), as NumPy; checked to 1e-12 relative"),
    )
    if any(wants(r[0]) for r in axis_rows):
        rows_, cols = AXES_SHAPE
        # gpu.rs's matmul_input_at: multiples of 2^-8 below 1, so every sum is exact in any order
        a_host = ((np.arange(rows_ * cols, dtype=np.int64) % 251) / 256.0).reshape(rows_, cols)
        a = cp.asarray(a_host)
        for name, f, tol, note in axis_rows:
            if not wants(name):
                continue
            ref = cp.asarray(f(a_host))  # numpy on the host
            check = summary(f(a))
            m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda f=f: f(a),
                        lambda s, ref=ref, tol=tol: checker.compare(s, ref, tol),
                        setup=lambda ref=ref: poison_pool(cp, ref.shape, cp.float64, np.nan, POOL_POISON))
            emit(row(name, m, how(), check, (a.size + ref.size) * 8, "r", note=note))
            del ref
        del a, a_host

    transfers = (
        "to_device 2 GiB (pageable host memory)",
        "to_host 2 GiB (pageable host memory)",
        "to_device 2 GiB (pinned host memory)",
        "to_host 2 GiB (pinned host memory)",
    )
    if any(wants(t) for t in transfers):
        run_transfers(cp, np, bracket, checker, reps, wants, transfers, emit)


SORT_NAMES = ("sort (float64, 10000x5000, last axis)", "argsort (float64, 10000x5000, last axis)")
SORT_CHECK = ("every element against a host reference (each row sorted on the host; the stable order for argsort), "
              "device checker kernel, result's pool block poisoned before each call")


def sort_input_host(n):
    """The sort rows' input, as gpukit-bench's `sort_input_at`: the low 32 bits of i * 2654435761
    over 2^32 for C-order index i (exact in float64, scattered, distinct below 2^32 elements)."""
    import numpy as np
    i = np.arange(n, dtype=np.uint64)
    return ((i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)).astype(np.float64) / 4294967296.0


def run_sort(cp, np, bracket, checker, warmup, reps, wants, emit):
    """sort and argsort of lab 5.1's (10_000, 5_000) float64 array along the last axis."""
    rows, cols = SORT_SHAPE
    n = rows * cols
    host = sort_input_host(n).reshape(rows, cols)
    order = np.argsort(host, axis=-1, kind="stable")  # numpy on the host, unique (distinct values)
    a = cp.asarray(host)
    if wants(SORT_NAMES[0]):
        ref = cp.asarray(np.take_along_axis(host, order, axis=-1))
        check = summary(cp.sort(a, axis=-1))
        m = measure(cp, bracket, warmup, reps, SORT_CHECK, lambda: cp.sort(a, axis=-1),
                    lambda s: checker.compare(s, ref, 0.0),
                    setup=lambda: poison_pool(cp, (rows, cols), cp.float64, np.nan, POOL_POISON))
        emit(row(SORT_NAMES[0], m, bracket.how(), check, 2 * n * 8, "rw", note="cp.sort(a, axis=-1)"))
        del ref
    if wants(SORT_NAMES[1]):
        ref = cp.asarray(order.astype(np.int64))
        check = summary(cp.argsort(a, axis=-1).astype(cp.float64))
        m = measure(cp, bracket, warmup, reps, SORT_CHECK, lambda: cp.argsort(a, axis=-1),
                    lambda i: checker.compare(i, ref, 0.0),
                    setup=lambda: poison_pool(cp, (rows, cols), cp.int64, -1, POOL_POISON))
        emit(row(SORT_NAMES[1], m, bracket.how(), check, 2 * n * 8, "rw", note="cp.argsort(a, axis=-1), int64"))
        del ref
    del a, host, order
def fft_input_host(np, side):
    """The FFT row's input (side^3, complex128), as gpukit-bench's `fft_input_at`: real and
    imaginary parts in [1, 2) from two integer hashes of the C-order index i."""
    i = np.arange(side ** 3, dtype=np.uint64)
    re = ((i * np.uint64(2654435761)) % np.uint64(1 << 32)).astype(np.float64) / float(1 << 32)
    im = ((i * np.uint64(40503)) % np.uint64(65521)).astype(np.float64) / 65521.0
    z = np.empty(side ** 3, dtype=np.complex128)
    z.real, z.imag = 1.0 + re, 1.0 + im
    return z.reshape(side, side, side)


def both_outcomes(a: dict, b: dict) -> dict:
    """Two checker outcomes as one (gpukit-bench's `fft::both`)."""
    bad = [x for x in (a["first_bad"], b["first_bad"]) if x is not None]
    return outcome(a["expected"] + b["expected"], a["elements"] + b["elements"],
                   a["mismatches"] + b["mismatches"], min(bad) if bad else None,
                   max(a["max_rel_err"], b["max_rel_err"]))


def run_fft(cp, np, bracket, checker, warmup, reps, emit):
    """`cp.fft.fftn` of a 256^3 complex128 array (cuFFT, CuPy's plan cache), each timed output's
    inverse (untimed) checked against the input element by element (1e-10 relative), as
    gpukit-bench's fft.rs; summary: Parseval's energy, F[0] and F[last]."""
    side = FFT_SIDE
    n = side ** 3
    x = cp.asarray(fft_input_host(np, side))
    x_re, x_im = cp.ascontiguousarray(x.real), cp.ascontiguousarray(x.imag)
    f = cp.fft.fftn(x)
    flat = f.ravel()
    check = [float(cp.sum(cp.abs(flat) ** 2)) / n, float(flat[0].real), float(flat[0].imag),
             float(flat[n - 1].real), float(flat[n - 1].imag)]
    del f, flat

    def verify(out):
        back = cp.fft.ifftn(out)
        return both_outcomes(checker.compare(cp.ascontiguousarray(back.real), x_re, 1e-10),
                             checker.compare(cp.ascontiguousarray(back.imag), x_im, 1e-10))

    m = measure(cp, bracket, warmup, reps,
                "inverse of every timed output (ifftn, untimed) against the input, element by element "
                "(1e-10 relative), output's pool block poisoned before each call",
                lambda: cp.fft.fftn(x), verify,
                setup=lambda: poison_pool(cp, (side, side, side), cp.complex128, complex(np.nan, np.nan), POOL_POISON))
    emit(row(FFT_ROW, m, bracket.how(), check, 2 * n * 16, "rw",
             note="cuFFT Z2Z plan (cached), out of place; bytes = one read and one write of the array "
                  "(an FFT makes several passes, so the rate is a lower bound)"))
    del x, x_re, x_im
def run_matmuls(cp, np, bracket, checker, warmup, reps, wants, n, label, emit):
    """The matmul rows of one size: `a @ b` of n x n float32 and float64 (cuBLAS GEMM)."""
    how = bracket.how
    matmuls = ((f"matmul (float32, {label})", cp.float32, 1e-4), (f"matmul (float64, {label})", cp.float64, 1e-12))
    if not any(wants(x[0]) for x in matmuls):
        return
    a_host, b_host = matmul_inputs_host(n)
    ref_host = a_host @ b_host  # numpy on the host, exact in float64 (see matmul_inputs_host)
    for name, dtype, tol in matmuls:
        if not wants(name):
            continue
        a, b = cp.asarray(a_host.astype(dtype)), cp.asarray(b_host.astype(dtype))
        ref = cp.asarray(ref_host.astype(dtype))
        check = summary(a @ b)
        m = measure(cp, bracket, warmup, reps, FULL_CHECK, lambda: a @ b,
                    lambda c: checker.compare(c, ref, tol),
                    setup=lambda: poison_pool(cp, (n, n), dtype, np.nan, POOL_POISON))
        emit(row(name, m, how(), check, 3 * n * n * a.itemsize, "rw",
                 note="cuBLAS GEMM, compute-bound (2n^3 flops: benchlib adds TFLOP/s and % of the GEMM "
                      "ceiling); reference exact in float64, float32 checked to 1e-4 relative"))
        del a, b, ref
    del a_host, b_host, ref_host


def svd_input_host(n):
    """The SVD row's input (n x n float64), as gpukit-bench's `svd_input_at`: splitmix64 of the
    C-order index i mapped to [-1, 1) (uint64 arithmetic wraps, as Rust's wrapping_*)."""
    import numpy as np
    z = np.arange(n * n, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return ((z >> np.uint64(11)).astype(np.float64) / float(1 << 52) - 1.0).reshape(n, n)


#: svd_row.rs's tolerances: each singular value (relative), and the normwise errors.
SVD_VALUES_TOL = 1e-8
SVD_NORMWISE_TOL = 1e-11


def svd_normwise_errors(a, u, s, vt):
    """Reconstruction ||u diag(s) vt - a||_F / ||a||_F and orthogonality ||u^T u - I||_F / sqrt(n),
    ||vt vt^T - I||_F / sqrt(n), in float64 on the host (svd_row.rs's normwise_errors)."""
    import numpy as np
    n = a.shape[0]
    eye = np.eye(n)
    rec = np.linalg.norm((u * s[None, :]) @ vt - a) / np.linalg.norm(a)
    return [float(rec), float(np.linalg.norm(u.T @ u - eye) / math.sqrt(n)),
            float(np.linalg.norm(vt @ vt.T - eye) / math.sqrt(n))]


def check_uniform(values) -> dict:
    """One output of the random row on the host (random_row.rs's check_uniform): every element in
    [0, 1) (NaN fails), then the mean and the standard deviation within 1e-3 of 1/2 and 1/sqrt(12)
    as two more elements."""
    import numpy as np
    v = np.asarray(values, dtype=np.float64).ravel()
    bad = ~((v >= 0.0) & (v < 1.0))
    n = v.size
    mean = float(v.mean()) if n else math.nan
    std = float(v.std()) if n else math.nan
    errs = [abs(mean - 0.5), abs(std - math.sqrt(1.0 / 12.0))]
    tol = max(1e-3, 4.0 / math.sqrt(max(n, 1)))  # small arrays (tests): 4/sqrt(n)
    moments_bad = sum(1 for e in errs if not e <= tol)
    first = int(np.argmax(bad)) if bad.any() else (n if moments_bad else None)
    return outcome(n + 2, n + 2, int(bad.sum()) + moments_bad, first,
                   max((e if e == e else math.inf) for e in errs))


def run_random(cp, np, bracket, warmup, reps, name, emit):
    """`cp.random.random(RANDOM_SHAPE)` (float64, cuRAND's XORWOW), a new array each call."""
    shape = RANDOM_SHAPE
    first = np.asarray(cp.random.random(shape).get(), dtype=np.float64).ravel()
    # the two sides draw different streams: both report [mean, std] to two decimals and the
    # fraction in [0, 1) (random_row.rs's random_summary) instead of [sum, first, middle, last]
    check = [round(float(first.mean()), 2), round(float(first.std()), 2),
             float(((first >= 0.0) & (first < 1.0)).mean())]
    del first
    m = measure(cp, bracket, warmup, reps,
                "every element in [0, 1) on the host (output poisoned with NaN first), and the mean and "
                "standard deviation within 1e-3 of 1/2 and 1/sqrt(12)",
                lambda: cp.random.random(shape), lambda a: check_uniform(a.get()),
                setup=lambda: poison_pool(cp, shape, cp.float64, np.nan, POOL_POISON))
    emit(row(name, m, bracket.how(), check, shape[0] * shape[1] * 8, "w",
             note="cp.random.random (cuRAND XORWOW) against gpukit's default_rng(..).uniform (cuRAND "
                  "Philox): different streams, each output checked for its range and moments"))


def check_svd(res, a_host, s_ref) -> dict:
    """One output of cp.linalg.svd against the host: every singular value, then the three normwise
    errors as one element each (svd_row.rs's check_svd)."""
    import numpy as np
    u, s, vt = (np.asarray(x.get()) for x in res)
    n = a_host.shape[0]
    if u.shape != (n, n) or vt.shape != (n, n) or s.shape != (n,):
        return outcome(2 * n * n + n, u.size + s.size + vt.size, max(2 * n * n + n, 1), 0, math.inf)
    o = host_compare(s, s_ref, SVD_VALUES_TOL)
    for k, e in enumerate(svd_normwise_errors(a_host, u, s, vt)):
        ok = e <= SVD_NORMWISE_TOL  # NaN fails
        o["expected"] += 1
        o["elements"] += 1
        if not ok:
            o["mismatches"] += 1
            if o["first_bad"] is None:
                o["first_bad"] = n + k
        o["max_rel_err"] = max(o["max_rel_err"], e if e == e else math.inf)
    return o


def run_svd(cp, np, bracket, warmup, reps, name, emit):
    """`cp.linalg.svd(a)` (full_matrices=True, cuSOLVER gesvd) of an SVD_N x SVD_N float64 matrix."""
    n = SVD_N
    a_host = svd_input_host(n)
    a = cp.asarray(a_host)
    s_ref = np.linalg.svd(a_host, compute_uv=False)  # LAPACK on the host, not cuSOLVER
    check = summary(cp.linalg.svd(a)[1])

    def setup():
        poison_pool(cp, (n, n), cp.float64, np.nan, POOL_POISON + 2)
        poison_pool(cp, n, cp.float64, np.nan, POOL_POISON)

    m = measure(cp, bracket, warmup, reps,
                "singular values against a host reference (numpy), and ||u diag(s) vt - a||/||a||, "
                "||u^T u - I||/sqrt(n), ||vt vt^T - I||/sqrt(n) below 1e-11, on the host; result blocks poisoned",
                lambda: cp.linalg.svd(a), lambda r: check_svd(r, a_host, s_ref), setup=setup)
    emit(row(name, m, bracket.how(), check, (3 * n * n + n) * 8, "rw",
             note="cuSOLVER gesvd, full_matrices (NumPy's default) on both sides; compute-bound, so the "
                  "rate is not a fraction of any memory ceiling; check = [sum, first, middle, last] of s"))
    del a


_first_launch_count = 0


def fresh_first_launch_source(tag: str) -> str:
    """FIRST_LAUNCH_SRC under a comment no other call used, so no cache can answer."""
    global _first_launch_count
    _first_launch_count += 1
    return f"// cupy_twin {tag} {os.getpid()} {time.time_ns()} {_first_launch_count}\n{FIRST_LAUNCH_SRC}\n"


def run_first_launch(cp, reps, wants, emit):
    """First launch of a kernel never launched before, timed on the host from making the
    RawKernel to the synchronised return of its first launch: cold (a new source: NVRTC, cache
    write, load) and warm (the source compiled and launched once untimed, then cp.clear_memo(), so
    the cubin comes from CuPy's disk cache). CUPY_CACHE_DIR points at a fresh directory for the
    rows and is restored afterwards."""
    import shutil
    import tempfile
    saved = os.environ.get("CUPY_CACHE_DIR")
    tmp = tempfile.mkdtemp(prefix="cupy-twin-kernels-")
    os.environ["CUPY_CACHE_DIR"] = tmp
    try:
        out = cp.full(1, -1, dtype=cp.int32)
        value = cp.int32(FIRST_LAUNCH_VALUE)

        def first(src):
            cp.RawKernel(src, "first_launch")((1,), (1,), (out, value))
            device_sync(cp)

        first(fresh_first_launch_source("warm-up"))
        for name, warm in ((FIRST_LAUNCH_COLD, False), (FIRST_LAUNCH_WARM, True)):
            if not wants(name):
                continue
            times = []
            verify = Verify("the value the kernel wrote (output poisoned before)")
            for _ in range(max(reps, 3)):
                src = fresh_first_launch_source("warm" if warm else "cold")
                if warm:
                    first(src)  # compiles and writes CuPy's cache entry
                    cp.clear_memo()  # forget the compiled kernel in memory, as a new process
                out.fill(-1)
                device_sync(cp)
                t0 = time.perf_counter()
                first(src)
                times.append((time.perf_counter() - t0) * 1e3)
                verify.push(scalar_outcome(float(out[0].item()), float(FIRST_LAUNCH_VALUE), 0.0))
            note = ("RawKernel + launch + synchronize, the cubin read from CuPy's disk cache (cp.clear_memo() first)"
                    if warm else "RawKernel + launch + synchronize, a source never compiled before")
            emit(row(name, {"host_ms": times, "wall_ms": times, "verify": verify},
                     "host clock from making the RawKernel to the first launch's synchronised return",
                     [float(FIRST_LAUNCH_VALUE)], 0, "", unit="latency", note=note))
    finally:
        if saved is None:
            os.environ.pop("CUPY_CACHE_DIR", None)
        else:
            os.environ["CUPY_CACHE_DIR"] = saved
        shutil.rmtree(tmp, ignore_errors=True)


def run_transfers(cp, np, bracket, checker, reps, wants, names, emit):
    import cupyx
    w, r = 1, min(reps, 3)
    how = bracket.how()
    host = (np.arange(N, dtype=np.int64) % 1000).astype(np.float64) * 0.5
    pinned = cupyx.empty_pinned((N,), dtype=np.float64)
    pinned[:] = host
    # references on the device, each uploaded by the path the row does not time
    ref_by_pinned = cp.empty(N, dtype=cp.float64)
    ref_by_pinned.set(pinned)
    ref_by_pageable = cp.asarray(host)
    dev_check = "every element against the host data uploaded by the other path (device checker kernel)"
    host_check = "every element against the host data, on the host"
    name = names[0]
    if wants(name):
        check = summary(cp.asarray(host))
        m = measure(cp, bracket, w, r, dev_check, lambda: cp.asarray(host),
                    lambda d: checker.compare(d, ref_by_pinned, 0.0),
                    setup=lambda: poison_pool(cp, N, cp.float64, np.nan, POOL_POISON))
        emit(row(name, m, how, check, N * 8, "h2d"))
    name = names[1]
    if wants(name):
        d = cp.asarray(host)
        v = d.get()
        check = [float(v.sum()), float(v[0]), float(v[N // 2]), float(v[N - 1])]
        del v
        m = measure(cp, bracket, w, r, host_check, lambda: d.get(), lambda v: host_compare(v, host, 0.0))
        emit(row(name, m, how, check, N * 8, "d2h", note="into a new numpy array"))
        del d
    name = names[2]
    if wants(name):
        def upload():
            d = cp.empty(N, dtype=cp.float64)
            d.set(pinned)
            return d
        check = summary(upload())
        m = measure(cp, bracket, w, r, dev_check, upload, lambda d: checker.compare(d, ref_by_pageable, 0.0),
                    setup=lambda: poison_pool(cp, N, cp.float64, np.nan, POOL_POISON))
        emit(row(name, m, how, check, N * 8, "h2d", note="pinned numpy array -> new device array (empty + set)"))
    name = names[3]
    if wants(name):
        d = cp.asarray(host)
        out = cupyx.empty_pinned((N,), dtype=np.float64)
        d.get(out=out)
        check = [float(out.sum()), float(out[0]), float(out[N // 2]), float(out[N - 1])]

        def poison():
            out[:] = np.nan

        m = measure(cp, bracket, w, r, host_check, lambda: d.get(out=out), lambda _: host_compare(out, host, 0.0),
                    setup=poison)
        emit(row(name, m, how, check, N * 8, "d2h",
                 note="device array -> existing pinned numpy array (get(out=...)), poisoned with NaN before each call"))
        del d, out
    del host, pinned, ref_by_pinned, ref_by_pageable


# ---------------------------------------------------------------------------------------------
# ceilings


def shape_label(unroll, threads, per_sm):
    if unroll == 1:
        return f"1 uint4 per thread, {threads} threads/block"
    return f"grid-stride, {unroll} uint4 in flight/thread, {threads} threads/block, {per_sm} blocks/SM"


def shape_blocks(unroll, threads, per_sm, n4, sms):
    return max(-(-n4 // threads), 1) if unroll == 1 else max(sms * per_sm, 1)


def per_call_ms(cp, call, reps):
    """Device ms per call: one call to fill the queue, then events around BATCH more (the GPU is
    busy when the start event is recorded, so no launch gap enters the time)."""
    call()
    device_sync(cp)
    out = []
    for _ in range(reps):
        call()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(BATCH):
            call()
        end.record()
        end.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, end) / BATCH)
    return out


def arange_xor(n):
    """XOR of every 32-bit word of arange(0, n) as float64 (what bench_read_v4_* returns)."""
    import numpy as np
    return int(np.bitwise_xor.reduce(np.arange(n, dtype=np.float64).view(np.uint32)))


def ceiling_line(pattern, impl, method, nbytes, moved, ms, verify, tried):
    med = sorted(ms)[len(ms) // 2] if len(ms) % 2 else sum(sorted(ms)[len(ms) // 2 - 1:len(ms) // 2 + 1]) / 2
    return {"side": "ceiling", "pattern": pattern, "impl": impl, "method": method, "bytes_per_buffer": nbytes,
            "bytes_moved": moved, "ms": ms, "gbps": moved / (med * 1e-3) / 1e9,
            "check_ok": "yes" if verify.ok() else "no", "verify": verify.json(), "tried": tried}


def memory_ceilings(cp, reps: int, sizes_gib, emit):
    """Copy, write and read candidates with CuPy, for buffers of each size."""
    module = cp.RawModule(code=KERNELS_CU.read_text(), options=("--std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    checker = Checker(cp, module, sms)
    reps = max(reps, 3)
    words = (0, 0x3FF80000, 0, 0x3FF80000)  # two float64 1.5
    for gib in sizes_gib:
        nbytes = gib * GIB
        n, n4 = nbytes // 8, nbytes // 16
        src = cp.arange(n, dtype=cp.float64)
        dst = cp.full(n, cp.nan, dtype=cp.float64)
        sink = cp.zeros(1, dtype=cp.uint32)
        for pattern in ("copy", "write", "read"):
            moved = 2 * nbytes if pattern == "copy" else nbytes
            tried, best = [], None
            for (u, t, per_sm) in SHAPES:
                k = module.get_function(f"bench_{pattern}_v4_u{u}")
                grid = (shape_blocks(u, t, per_sm, n4, sms),)
                if pattern == "copy":
                    args = (src, dst, cp.uint64(n4))
                elif pattern == "write":
                    args = (dst, cp.uint64(n4), *(cp.uint32(x) for x in words))
                else:
                    args = (src, cp.uint64(n4), sink)
                ms = per_call_ms(cp, lambda: k(grid, (t,), args), reps)
                med = sorted(ms)[len(ms) // 2]
                tried.append([shape_label(u, t, per_sm), moved / (med * 1e-3) / 1e9])
                if best is None or med < best[0]:
                    best = (med, (u, t, per_sm), ms, k, grid, args)
            _, (u, t, per_sm), ms, k, grid, args = best
            verify = Verify("output poisoned, one more call, every element checked")
            dst.fill(cp.nan)
            if pattern == "read":
                sink.fill(0)
                k(grid, (t,), args)
                verify.push(scalar_outcome(float(sink.get()[0]), float(arange_xor(n)), 0.0))
            else:
                k(grid, (t,), args)
                verify.push(checker.compare(dst, src, 0.0) if pattern == "copy" else checker.compare_const(dst, 1.5))
            emit(ceiling_line(pattern, "cupy", f"bench_{pattern}_v4_u{u} via CuPy RawModule, {shape_label(u, t, per_sm)}",
                              nbytes, moved, ms, verify, tried))

        # CuPy's own copy and fill, and the runtime's memcpy
        stream = cp.cuda.get_current_stream()
        own = [("copy", "cp.copyto(dst, src)", lambda: cp.copyto(dst, src)),
               ("copy", "cudaMemcpyAsync device to device (CUDA runtime via CuPy)",
                lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes,
                                                    cp.cuda.runtime.memcpyDeviceToDevice, stream.ptr)),
               ("write", "dst.fill(1.5)", lambda: dst.fill(1.5))]
        for pattern, method, call in own:
            moved = 2 * nbytes if pattern == "copy" else nbytes
            ms = per_call_ms(cp, call, reps)
            verify = Verify("output poisoned, one more call, every element checked")
            dst.fill(cp.nan)
            call()
            verify.push(checker.compare(dst, src, 0.0) if pattern == "copy" else checker.compare_const(dst, 1.5))
            line = ceiling_line(pattern, "cupy", method, nbytes, moved, ms, verify, [])
            line["tried"] = [[method, line["gbps"]]]
            emit(line)
        del src, dst, sink


def gemm_error(z_rows, ref_rows) -> dict:
    """Errors of sampled GEMM rows against a higher-precision host reference: normwise
    ||z - ref||_F / ||ref||_F and max |z - ref| / max |ref|."""
    import numpy as np
    z, r = np.asarray(z_rows, dtype=np.float64), np.asarray(ref_rows)
    d = (z - r).astype(np.float64)
    ref_norm = float(np.linalg.norm(r.astype(np.float64)))
    ref_max = float(np.abs(r).max())
    return {"err_fro": float(np.linalg.norm(d)) / ref_norm if ref_norm else math.inf,
            "err_max": float(np.abs(d).max()) / ref_max if ref_max else math.inf}


def gemm_ceilings(cp, reps: int) -> dict:
    """cuBLAS GEMM 8192^2 in float32 and float64: rate, and errors of 8 sampled rows against a host
    reference in higher precision (float64 for float32 operands, extended precision for float64)."""
    import numpy as np
    out = {}
    n = GEMM_N
    rows = np.linspace(0, n - 1, 8).astype(np.int64)
    for dt, name in ((cp.float32, "float32"), (cp.float64, "float64")):
        rs = cp.random.RandomState(1234)
        x = rs.standard_normal((n, n), dtype=cp.float64).astype(dt)
        y = rs.standard_normal((n, n), dtype=cp.float64).astype(dt)
        z = cp.matmul(x, y)
        ridx = cp.asarray(rows)
        xh, yh = x[ridx].get(), y.get()
        hi = np.float64 if dt == cp.float32 else np.longdouble
        ref = xh.astype(hi) @ yh.astype(hi)
        err = gemm_error(z[ridx].get(), ref)
        del xh, yh, ref
        limit = 1e-2 if dt == cp.float32 else 1e-12
        ok = err["err_fro"] < limit
        if not ok:
            print(f"GEMM ceiling: normwise error {err['err_fro']:.3e} too large for {name}", file=sys.stderr)
        out[f"gemm_{name}_check_ok"] = "yes" if ok else "no"
        s = per_call_ms(cp, lambda: cp.matmul(x, y, out=z), max(3, reps // 2))
        ms = sorted(s)[len(s) // 2]
        out[f"gemm_tflops_{name}"] = 2 * n ** 3 / (ms * 1e-3) / 1e12
        out[f"gemm_{name}_err_fro"] = err["err_fro"]
        out[f"gemm_{name}_err_max"] = err["err_max"]
        del x, y, z
    return out


def link_ceilings(cp) -> dict:
    """Pinned host <-> device, 2 GiB each way."""
    import cupyx
    out = {}
    host = cupyx.empty_pinned((N,), dtype=cp.float64)
    host[:] = 1.5
    d = cp.empty(N, dtype=cp.float64)
    s = per_call_ms(cp, lambda: d.set(host), 3)
    out["h2d_pinned_gbps"] = N * 8 / (sorted(s)[1] * 1e-3) / 1e9
    s = per_call_ms(cp, lambda: d.get(out=host), 3)
    out["d2h_pinned_gbps"] = N * 8 / (sorted(s)[1] * 1e-3) / 1e9
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="CuPy side of the gpukit benchmarks")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only")
    ap.add_argument("--ceilings", action="store_true")
    ap.add_argument("--sizes-gib", default="1,2,4", help="buffer sizes of the memory ceilings, GiB (at least 1)")
    args = ap.parse_args(argv)

    def emit(r):
        if r["side"] == "ceiling":
            print(f"ceiling: {r['pattern']:<5} {r['gbps']:8.1f} GB/s  check {r['check_ok']:<3}  "
                  f"{r['bytes_per_buffer'] / GIB:g} GiB  {r['method']}", file=sys.stderr)
        else:
            t = r["host_ms"] if r["unit"] == "per_launch" else r["span_ms"]
            ms = sorted(t)[len(t) // 2] if t else float("nan")
            ok = "" if r["verify"] is None else ("checked" if r["verify"]["failed"] == 0 and r["verify"]["checked"]
                                                 else "CHECK FAILED")
            print(f"cupy:   {r['name']:<60} {ms:>10.4f} ms {ok}", file=sys.stderr)
        print(json.dumps(r), flush=True)

    if args.ceilings:
        import cupy as cp
        sizes = [int(s) for s in args.sizes_gib.split(",") if s.strip()]
        if not sizes or min(sizes) < 1:
            ap.error("--sizes-gib: sizes of at least 1 GiB")
        memory_ceilings(cp, args.reps, sizes, emit)
        c = gemm_ceilings(cp, args.reps)
        c.update(link_ceilings(cp))
        print(json.dumps({"side": "ceilings", **c}), flush=True)
        print("ceilings: " + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in c.items()),
              file=sys.stderr)
        return 0

    run_all(args.warmup, args.reps, args.only, emit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
