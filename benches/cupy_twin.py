#!/usr/bin/env python3
"""The CuPy side of the benchmarks: the same workloads as benches/gpukit-bench (same names, inputs
and check values), one JSON line per row on stdout.

    python3 benches/cupy_twin.py [--warmup 3] [--reps 10] [--only SUBSTRING]
    python3 benches/cupy_twin.py --ceilings          # copy bandwidth, cuBLAS GEMM, pinned link rates

Timing: CUDA events recorded on the current stream around each operation (after warm-up), and the
host clock between two synchronisations; benches/collect.py takes medians.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

N = 1 << 28
LESSON5_SHAPE = (1000, 500, 500)
FIZZBUZZ_N = 50_000_000
BLUR_SHAPE = (8192, 8192, 4)
LAUNCHES = 20_000

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


def summary(a) -> list[float]:
    """[sum, first, middle, last] in float64, as gpukit-bench's `summary`."""
    import cupy as cp
    flat = a.ravel()
    n = flat.size
    return [float(cp.sum(flat, dtype=cp.float64)), float(flat[0]), float(flat[n // 2]), float(flat[n - 1])]


def measure(warmup: int, reps: int, op, setup=None) -> list[dict]:
    import cupy as cp
    for _ in range(warmup):
        if setup:
            setup()
        op()
    cp.cuda.Device().synchronize()
    out = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(reps):
        if setup:
            setup()
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        start.record()
        op()
        end.record()
        end.synchronize()
        wall = (time.perf_counter() - t0) * 1e3
        out.append({"gpu_ms": cp.cuda.get_elapsed_time(start, end), "wall_ms": wall})
    return out


def row(name, samples, check, nbytes, unit="op", note=""):
    return {"side": "cupy", "name": name, "gpu_ms": [s["gpu_ms"] for s in samples],
            "wall_ms": [s["wall_ms"] for s in samples], "check": check, "bytes": float(nbytes),
            "unit": unit, "note": note}


def pattern_f32(n):
    import cupy as cp
    return (cp.arange(n, dtype=cp.int32) % 251).astype(cp.float32) / cp.float32(251)


def run_all(warmup: int, reps: int, only: str | None, emit):
    import cupy as cp

    def wants(name):
        return only is None or only in name

    for name, dtype in (("a * 2 (float64, 2^28)", cp.float64), ("a * 2 (float32, 2^28)", cp.float32)):
        if not wants(name):
            continue
        a = cp.arange(N, dtype=cp.float64) if dtype == cp.float64 else pattern_f32(N)
        two = dtype(2)
        check = summary(a * two)
        emit(row(name, measure(warmup, reps, lambda: a * two), check, N * a.itemsize * 2))
        del a

    name = "lesson 5.0: x *= 5; x *= x; x += x (float64, 1000x500x500)"
    if wants(name):
        n = LESSON5_SHAPE[0] * LESSON5_SHAPE[1] * LESSON5_SHAPE[2]
        state = {}

        def setup():
            state["x"] = cp.ones(LESSON5_SHAPE, dtype=cp.float64)

        def lesson():
            x = state["x"]
            x *= 5
            x *= x
            x += x

        setup()
        lesson()
        check = summary(state["x"])
        emit(row(name, measure(warmup, reps, lesson, setup), check, 3 * n * 8 * 2))
        state.clear()

    name = "ones (float64, 2 GiB)"
    if wants(name):
        check = summary(cp.ones(N, dtype=cp.float64))
        emit(row(name, measure(warmup, reps, lambda: cp.ones(N, dtype=cp.float64)), check, N * 8))

    name = "arange (float64, 2^28)"
    if wants(name):
        check = summary(cp.arange(N, dtype=cp.float64))
        emit(row(name, measure(warmup, reps, lambda: cp.arange(N, dtype=cp.float64)), check, N * 8))

    name = "linspace (float64, 2^28)"
    if wants(name):
        check = summary(cp.linspace(0.0, 1.0, N, dtype=cp.float64))
        emit(row(name, measure(warmup, reps, lambda: cp.linspace(0.0, 1.0, N, dtype=cp.float64)), check, N * 8))

    if wants("(float64, 2^28)"):
        a = cp.arange(N, dtype=cp.float64)
        for name, f in (("sum (float64, 2^28)", cp.sum), ("mean (float64, 2^28)", cp.mean),
                        ("max (float64, 2^28)", cp.max)):
            if not wants(name):
                continue
            check = [float(f(a))]
            emit(row(name, measure(warmup, reps, lambda: f(a)), check, N * 8))
        del a

    name = "fizzbuzz kernel (lesson 2.2, 50M int32)"
    if wants(name):
        k = cp.RawKernel(FIZZBUZZ_SRC, "fizzbuzz")
        n = FIZZBUZZ_N
        threads = 256
        blocks = (n + threads - 1) // threads
        state = {"out": cp.full(n, -1, dtype=cp.int32)}
        launch = lambda: k((blocks,), (threads,), (state["out"], cp.uint64(n)))  # noqa: E731
        launch()
        v = state["out"]
        counts = [float(cp.count_nonzero(v == c)) for c in range(4)]
        counts.append(float(n - sum(counts)))  # unwritten or out of range
        emit(row(name, measure(warmup, reps, launch, lambda: state.update(out=cp.full(n, -1, dtype=cp.int32))),
                 counts, n * 4, note="RawKernel"))
        state.clear()

    for name in ("blur 3x3 kernel (lesson 3.0, 8192x8192x4 float32)",
                 "blur 3x3 kernel, bounds checks off (8192x8192x4 float32)"):
        if not wants(name):
            continue
        k = cp.RawKernel(BLUR_SRC, "blur3")
        h, w, c = BLUR_SHAPE
        img = pattern_f32(h * w * c).reshape(h, w, c)
        state = {"out": cp.full((h, w, c), cp.nan, dtype=cp.float32)}
        grid = ((w + 15) // 16, (h + 15) // 16)
        launch = lambda: k(grid, (16, 16), (img, state["out"], cp.uint64(h), cp.uint64(w), cp.uint64(c)))  # noqa: E731
        launch()
        check = summary(state["out"])
        emit(row(name, measure(warmup, reps, launch,
                               lambda: state.update(out=cp.full((h, w, c), cp.nan, dtype=cp.float32))),
                 check, h * w * c * 4 * 2, note="RawKernel"))
        state.clear()
        del img

    name = "launch overhead: empty kernel"
    if wants(name):
        k = cp.RawKernel(EMPTY_SRC, "empty_kernel")
        k((1,), (1,), ())
        cp.cuda.Device().synchronize()
        samples = []
        for _ in range(max(reps, 3)):
            t0 = time.perf_counter()
            for _ in range(LAUNCHES):
                k((1,), (1,), ())
            host = (time.perf_counter() - t0) * 1e3
            cp.cuda.Device().synchronize()
            total = (time.perf_counter() - t0) * 1e3
            samples.append({"gpu_ms": host / LAUNCHES, "wall_ms": total / LAUNCHES})
        emit(row(name, samples, [float(LAUNCHES)], 0, unit="per_launch",
                 note="gpu_ms = host time per launch, wall_ms = per launch including the device draining the queue"))

    name = "launch overhead: tiny a * 2 (1 element float32)"
    if wants(name):
        a = cp.full(1, 1.5, dtype=cp.float32)
        two = cp.float32(2)
        check = summary(a * two)
        samples = []
        for _ in range(max(reps, 3)):
            t0 = time.perf_counter()
            for _ in range(LAUNCHES):
                a * two
            host = (time.perf_counter() - t0) * 1e3
            cp.cuda.Device().synchronize()
            total = (time.perf_counter() - t0) * 1e3
            samples.append({"gpu_ms": host / LAUNCHES, "wall_ms": total / LAUNCHES})
        emit(row(name, samples, check, 0, unit="per_launch",
                 note="gpu_ms = host time per operation, wall_ms = per operation including the device draining the queue"))

    transfers = (
        "to_device 2 GiB (pageable host memory)",
        "to_host 2 GiB (pageable host memory)",
        "to_device 2 GiB (pinned host memory)",
        "to_host 2 GiB (pinned host memory)",
    )
    if any(wants(n) for n in transfers):
        import cupyx
        import numpy as np
        host = (np.arange(N, dtype=np.int64) % 1000).astype(np.float64) * 0.5
        name = transfers[0]
        if wants(name):
            check = summary(cp.asarray(host))
            emit(row(name, measure(1, min(reps, 3), lambda: cp.asarray(host)), check, N * 8))
        name = transfers[1]
        if wants(name):
            d = cp.asarray(host)
            v = d.get()
            check = [float(v.sum()), float(v[0]), float(v[N // 2]), float(v[N - 1])]
            del v
            emit(row(name, measure(1, min(reps, 3), lambda: d.get()), check, N * 8))
            del d
        name = transfers[2]
        if wants(name):
            pinned = cupyx.empty_pinned((N,), dtype=np.float64)
            pinned[:] = host

            def upload():
                d = cp.empty(N, dtype=cp.float64)
                d.set(pinned)
                return d
            check = summary(upload())
            emit(row(name, measure(1, min(reps, 3), upload), check, N * 8,
                     note="pinned numpy array -> new device array (empty + set)"))
            del pinned
        name = transfers[3]
        if wants(name):
            d = cp.asarray(host)
            out = cupyx.empty_pinned((N,), dtype=np.float64)
            d.get(out=out)
            check = [float(out.sum()), float(out[0]), float(out[N // 2]), float(out[N - 1])]
            emit(row(name, measure(1, min(reps, 3), lambda: d.get(out=out)), check, N * 8,
                     note="device array -> existing pinned numpy array (get(out=...))"))
            del d, out
        del host


def ceilings(reps: int) -> dict:
    """Hardware ceilings measured with CuPy in the same run."""
    import cupy as cp
    import cupyx
    out = {}
    # device-to-device copy, bytes read + written
    a = cp.arange(N, dtype=cp.float64)
    b = cp.empty_like(a)
    b.fill(cp.nan)
    cp.copyto(b, a)
    if not bool(cp.array_equal(a, b)):
        raise SystemExit("copy ceiling: the copy is wrong")
    s = measure(3, reps, lambda: cp.copyto(b, a))
    ms = sorted(x["gpu_ms"] for x in s)[len(s) // 2]
    out["copy_gbps"] = 2 * N * 8 / (ms * 1e-3) / 1e9
    del a, b
    # cuBLAS GEMM, 8192^2, float32 and float64, random operands checked against a float64 product
    n = 8192
    for dt, key in ((cp.float32, "gemm_tflops_float32"), (cp.float64, "gemm_tflops_float64")):
        rs = cp.random.RandomState(1234)
        x = rs.standard_normal((n, n), dtype=cp.float64).astype(dt)
        y = rs.standard_normal((n, n), dtype=cp.float64).astype(dt)
        z = cp.matmul(x, y)
        ref = cp.matmul(x[:256].astype(cp.float64), y.astype(cp.float64))
        err = float(cp.linalg.norm(z[:256].astype(cp.float64) - ref) / cp.linalg.norm(ref))
        if not err < (1e-2 if dt == cp.float32 else 1e-12):
            raise SystemExit(f"GEMM ceiling: relative error {err} too large for {dt}")
        s = measure(2, max(3, reps // 2), lambda: cp.matmul(x, y, out=z))
        ms = sorted(v["gpu_ms"] for v in s)[len(s) // 2]
        out[key] = 2 * n ** 3 / (ms * 1e-3) / 1e12
        out[key + "_relerr"] = err
        del x, y, z, ref
    # pinned host <-> device, 2 GiB each way
    host = cupyx.empty_pinned((N,), dtype=cp.float64)
    host[:] = 1.5
    d = cp.empty(N, dtype=cp.float64)
    s = measure(1, 3, lambda: d.set(host))
    out["h2d_pinned_gbps"] = N * 8 / (sorted(v["gpu_ms"] for v in s)[1] * 1e-3) / 1e9
    s = measure(1, 3, lambda: d.get(out=host))
    out["d2h_pinned_gbps"] = N * 8 / (sorted(v["gpu_ms"] for v in s)[1] * 1e-3) / 1e9
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="CuPy side of the gpukit benchmarks")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only")
    ap.add_argument("--ceilings", action="store_true")
    args = ap.parse_args(argv)
    if args.ceilings:
        c = ceilings(args.reps)
        print(json.dumps({"side": "ceilings", **c}), flush=True)
        print("ceilings: " + ", ".join(f"{k} {v:.4g}" for k, v in c.items()), file=sys.stderr)
        return 0

    def emit(r):
        ms = sorted(r["gpu_ms"])[len(r["gpu_ms"]) // 2]
        print(f"cupy:   {r['name']:<60} {ms:>10.4f} ms", file=sys.stderr)
        print(json.dumps(r), flush=True)

    run_all(args.warmup, args.reps, args.only, emit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
