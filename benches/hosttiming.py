"""What the CPU-side twins (polars_twin.py, sklearn_twin.py) measure on the host: the wall time of
a call with `time.perf_counter()` and this process's memory from /proc."""

from __future__ import annotations

import time


def host_memory() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in bytes (0 where /proc has none)."""
    out = {"VmRSS:": 0, "VmHWM:": 0}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                parts = line.split()
                if parts and parts[0] in out:
                    out[parts[0]] = int(parts[1]) * 1024
    except OSError:
        pass
    return out["VmRSS:"], out["VmHWM:"]


def timed(fn, warmup: int, reps: int):
    """Calls `fn` `warmup` times untimed, then `reps` (at least 1) times timed; returns the wall
    milliseconds of the timed calls and the last call's result."""
    for _ in range(warmup):
        fn()
    times, last = [], None
    for _ in range(max(1, reps)):
        last = None  # the previous result is freed before the next call, not during it
        t = time.perf_counter()
        last = fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times, last
