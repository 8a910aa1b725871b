#!/usr/bin/env python3
"""Cell latency of the evcxr_gpu kernel versus plain evcxr_jupyter (a benchmark, not a test).

Rows, each timed by the client (execute_request to reply):

* first cell: the kernel is started (kernel_info answered), then `0` is run; with warm caches
  (gpukit already built in the session's work directory, as after `make install`) this is the
  session's start-up (gpukit loaded, prelude) plus one cell.
* median cell: fixed small cells, several rounds, after the first cell.
* kernel cell vs fn cell (sessions with gpukit): a cell defining a `#[kernel]` against a cell
  defining the same loop as a plain `fn`, alternated, each redefining the same name.

All sessions are started first (one at a time, so each first cell runs alone), then the rounds
alternate between them cell by cell, so a busy machine slows every configuration alike. Medians
come with their spread (25th and 75th percentiles).

    python benches/kernel_latency/bench.py --evcxr-jupyter /work/evcxr-ref/bin/evcxr_jupyter [--rounds 5]
        [--kernel LABEL=KERNELSPEC[@WORKDIR] ...] [--out results.json]

`--kernel` (repeatable; default `evcxr_gpu=rust-gpu`) names evcxr_gpu kernelspecs to compare,
e.g. two builds side by side; WORKDIR is the gpukit session's `EVCXR_GPU_WORKDIR` (default: the
kernel's own). Each gets a plain-session row (`EVCXR_GPU_GPUKIT=none`) and a gpukit row.
`--evcxr-jupyter none` leaves the reference out.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
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

FN_CELL = """fn twice_fn(input: &[f64], output: &mut [f64]) {
    for i in 0..input.len() {
        output[i] = input[i] * 2.0;
    }
}"""

KERNEL_CELL = """#[kernel]
fn twice_kernel(input: &[f64], output: &mut [f64]) {
    let i = grid(1);
    if i < input.len() {
        output[i] = input[i] * 2.0;
    }
}"""


def spread(times: list[float]) -> dict:
    q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    return {"median_s": statistics.median(times), "p25_s": q[0], "p75_s": q[2],
            "min_s": min(times), "max_s": max(times), "n": len(times)}


class Session:
    """One running kernel and what was measured on it."""

    def __init__(self, label: str, kernel_name: str, env: dict, gpukit: bool):
        self.label, self.gpukit = label, gpukit
        t0 = time.monotonic()
        self.km, self.kc = start_new_kernel(kernel_name=kernel_name, startup_timeout=300, env=env)
        self.start_s = time.monotonic() - t0
        self.first_cell_s = self.run("0", timeout=1800)
        self.times: dict[str, list[float]] = {"cells": [], "fn_cell": [], "kernel_cell": []}

    def run(self, code: str, timeout: int = 600) -> float:
        t = time.monotonic()
        r = self.kc.execute_interactive(code, timeout=timeout, output_hook=lambda m: None)
        dt = time.monotonic() - t
        if r["content"]["status"] != "ok":
            raise RuntimeError(f"{self.label}: cell {code!r} failed: {r['content']}")
        return dt

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def result(self) -> dict:
        out = {"start_s": self.start_s, "first_cell_s": self.first_cell_s, **spread(self.times["cells"])}
        out["mean_s"] = statistics.fmean(self.times["cells"])
        if self.times["kernel_cell"]:
            out["fn_cell"] = spread(self.times["fn_cell"])
            out["kernel_cell"] = spread(self.times["kernel_cell"])
            out["kernel_over_fn"] = out["kernel_cell"]["median_s"] / out["fn_cell"]["median_s"]
        return out


def reference_kernelspec(binary: str) -> str:
    """A temporary JUPYTER_PATH holding an `evcxr-ref` kernelspec for `binary`."""
    root = Path(tempfile.mkdtemp(prefix="evcxr-ref-spec-"))
    spec = root / "kernels" / "evcxr-ref"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [binary, "--control_file", "{connection_file}"],
        "display_name": "Rust (evcxr_jupyter reference)", "language": "rust"}))
    return str(root)


def machine() -> dict:
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"host": platform.node(), "cpus": os.cpu_count(), "cpu": cpu,
            "loadavg_1m": os.getloadavg()[0]}


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def parse_kernel(spec: str) -> tuple[str, str, str | None]:
    label, _, rest = spec.partition("=")
    if not rest:
        raise SystemExit(f"bench.py: --kernel {spec!r}: expected LABEL=KERNELSPEC[@WORKDIR]")
    name, _, workdir = rest.partition("@")
    return label, name, workdir or None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evcxr-jupyter", required=True, help="path of the evcxr_jupyter binary, or `none`")
    ap.add_argument("--kernel", action="append", default=[], help="LABEL=KERNELSPEC[@WORKDIR] (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args()
    kernels = [parse_kernel(k) for k in (args.kernel or ["evcxr_gpu=rust-gpu"])]
    base = dict(os.environ)
    configs = []
    if args.evcxr_jupyter != "none":
        if not os.access(args.evcxr_jupyter, os.X_OK):
            raise SystemExit(f"bench.py: {args.evcxr_jupyter} is not an executable; install it with "
                             "`cargo install evcxr_jupyter --version 0.22.0 --locked --root /work/evcxr-ref`")
        # Kernelspecs are looked up by this process: make the reference one findable.
        ref_path = reference_kernelspec(args.evcxr_jupyter)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (ref_path, os.environ.get("JUPYTER_PATH")) if p)
        base = dict(os.environ)
        configs.append(("evcxr_jupyter 0.22", "evcxr-ref", base, False))
    for label, name, workdir in kernels:
        plain_env = {**base, "EVCXR_GPU_GPUKIT": "none",
                     "EVCXR_GPU_WORKDIR": tempfile.mkdtemp(prefix="evcxr-gpu-bench-")}
        gpukit_env = {**base, **({"EVCXR_GPU_WORKDIR": workdir} if workdir else {})}
        configs.append((f"{label}, plain session", name, plain_env, False))
        configs.append((f"{label}, gpukit loaded", name, gpukit_env, True))
    info = machine()
    sessions: list[Session] = []
    try:
        for label, name, env, gpukit in configs:
            s = Session(label, name, env, gpukit)
            print(f"{label:34} started in {s.start_s:5.1f} s, first cell {s.first_cell_s:6.2f} s", flush=True)
            sessions.append(s)
        for _ in range(args.rounds):
            for cell in CELLS:
                for s in sessions:
                    s.times["cells"].append(s.run(cell))
            for s in sessions:
                if s.gpukit:
                    s.times["fn_cell"].append(s.run(FN_CELL))
                    s.times["kernel_cell"].append(s.run(KERNEL_CELL))
        results = {s.label: s.result() for s in sessions}
    finally:
        for s in sessions:
            s.close()
    info["loadavg_1m_end"] = os.getloadavg()[0]
    ms = lambda x: f"{x * 1000:5.0f}"
    print(f"machine: {info['cpus']} CPUs ({info['cpu']}), load average {info['loadavg_1m']:.1f} at start, "
          f"{info['loadavg_1m_end']:.1f} at end")
    for label, r in results.items():
        line = (f"{label:34} median cell {ms(r['median_s'])} ms [{ms(r['p25_s'])}-{ms(r['p75_s'])}]  "
                f"first cell {r['first_cell_s']:6.2f} s")
        if "kernel_cell" in r:
            line += (f"  #[kernel] cell {ms(r['kernel_cell']['median_s'])} ms / fn cell "
                     f"{ms(r['fn_cell']['median_s'])} ms = {r['kernel_over_fn']:.2f}x")
        print(line)
    ref = results.get("evcxr_jupyter 0.22")
    if ref:
        for label, r in results.items():
            if label != "evcxr_jupyter 0.22":
                print(f"{label:34} {r['median_s'] / ref['median_s']:.2f}x evcxr_jupyter (median cell)")
    if args.out:
        args.out.write_text(json.dumps({"commit": git_commit(), "machine": info, "cells": CELLS,
                                        "fn_cell": FN_CELL, "kernel_cell": KERNEL_CELL,
                                        "rounds": args.rounds, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
