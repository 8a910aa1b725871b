#!/usr/bin/env python3
"""Cell latency of the evcxr_gpu kernel versus plain evcxr_jupyter (a benchmark, not a test).

Each kernel runs the same fixed small cells several times after a warm-up; the median wall time
of a cell (execute_request to idle, measured by the client) is reported, with the ratio to
evcxr_jupyter. Three configurations: evcxr_gpu as installed (gpukit loaded), evcxr_gpu as a plain
Rust session (EVCXR_GPU_GPUKIT=none), and evcxr_jupyter.

    python benches/kernel_latency/bench.py --evcxr-jupyter /work/evcxr-ref/bin/evcxr_jupyter [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import start_new_kernel

CELLS = [
    "1 + 1",
    "let a = 21;",
    "a * 2",
    "let v: Vec<u64> = (0..1000).collect();",
    "v.iter().sum::<u64>()",
    'println!("hello");',
    "fn sq(x: u64) -> u64 { x * x }",
    "sq(12)",
]


def time_cells(kernel_name: str, env: dict, rounds: int) -> dict:
    km, kc = start_new_kernel(kernel_name=kernel_name, startup_timeout=300, env=env)
    try:
        t0 = time.monotonic()
        warm = kc.execute_interactive("0", timeout=1800, output_hook=lambda m: None)
        first = time.monotonic() - t0
        if warm["content"]["status"] != "ok":
            raise RuntimeError(f"{kernel_name}: warm-up cell failed: {warm['content']}")
        times = []
        for _ in range(rounds):
            for cell in CELLS:
                t = time.monotonic()
                r = kc.execute_interactive(cell, timeout=600, output_hook=lambda m: None)
                times.append(time.monotonic() - t)
                if r["content"]["status"] != "ok":
                    raise RuntimeError(f"{kernel_name}: cell {cell!r} failed: {r['content']}")
        return {"first_cell_s": first, "median_s": statistics.median(times),
                "mean_s": statistics.fmean(times), "cells": len(times)}
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def reference_kernelspec(binary: str) -> str:
    """A temporary JUPYTER_PATH holding an `evcxr-ref` kernelspec for `binary`."""
    root = Path(tempfile.mkdtemp(prefix="evcxr-ref-spec-"))
    spec = root / "kernels" / "evcxr-ref"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [binary, "--control_file", "{connection_file}"],
        "display_name": "Rust (evcxr_jupyter reference)", "language": "rust"}))
    return str(root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evcxr-jupyter", required=True, help="path of the evcxr_jupyter binary")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args()
    if not os.access(args.evcxr_jupyter, os.X_OK):
        raise SystemExit(f"bench.py: {args.evcxr_jupyter} is not an executable; install it with "
                         "`cargo install evcxr_jupyter --version 0.22.0 --locked --root /work/evcxr-ref`")
    # Kernelspecs are looked up by this process: make the reference one findable.
    ref_path = reference_kernelspec(args.evcxr_jupyter)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (ref_path, os.environ.get("JUPYTER_PATH")) if p)
    base = dict(os.environ)
    ref_env = base
    plain_env = {**base, "EVCXR_GPU_GPUKIT": "none",
                 "EVCXR_GPU_WORKDIR": tempfile.mkdtemp(prefix="evcxr-gpu-bench-")}
    configs = [
        ("evcxr_jupyter 0.22", "evcxr-ref", ref_env),
        ("evcxr_gpu, plain session", "rust-gpu", plain_env),
        ("evcxr_gpu, gpukit loaded", "rust-gpu", base),
    ]
    results = {}
    for label, kernel, env in configs:
        results[label] = time_cells(kernel, env, args.rounds)
        print(f"{label:28} median {results[label]['median_s'] * 1000:7.0f} ms  "
              f"mean {results[label]['mean_s'] * 1000:7.0f} ms  first cell {results[label]['first_cell_s']:6.1f} s",
              flush=True)
    ref = results["evcxr_jupyter 0.22"]["median_s"]
    for label in list(results)[1:]:
        print(f"{label:28} {results[label]['median_s'] / ref:.2f}x evcxr_jupyter (median cell)")
    if args.out:
        args.out.write_text(json.dumps({"cells": CELLS, "rounds": args.rounds, "results": results}, indent=2))


if __name__ == "__main__":
    main()
