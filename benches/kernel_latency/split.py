#!/usr/bin/env python3
"""Where a cell's time goes: each cell's client time split into cargo, the cell crate's rustc and
the rest (a diagnosis tool beside bench.py, not a benchmark).

The kernel is started with a directory of timing shims first on its PATH: `cargo` and `rustc`
log their start and end times, and `rustup which cargo|rustc` answers the shims, since that is
how evcxr finds both tools. Each cell's window then holds one `cargo build` and, inside it, one
`rustc --crate-name ctx`; what is outside cargo is rust-analyzer's typing, evcxr's own work and
running the cell. With `--passes` the cell crate's rustc also runs with `-Z time-passes`
(RUSTC_BOOTSTRAP=1, for diagnosis only) and the median of each pass is printed.

    .venv/bin/python benches/kernel_latency/split.py [--plain] [--rounds 3] [--passes] \
        [--kernel rust-gpu] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench import CELLS
from jupyter_client.manager import start_new_kernel

SHIM = """#!/bin/bash
# timing shim written by benches/kernel_latency/split.py
real={real}
name=?
prev=
for a in "$@"; do [[ "$prev" == --crate-name ]] && name=$a; prev=$a; done
t0=$(date +%s.%N)
if [[ {tool} == rustc && "$name" == ctx && -n "$SPLIT_PASSES" ]]; then
  RUSTC_BOOTSTRAP=1 "$real" "$@" -Z time-passes 2> >(tee >(grep '^time:' >> "$SPLIT_LOG.passes") | grep -v '^time:' >&2)
  rc=$?
else
  "$real" "$@"; rc=$?
fi
t1=$(date +%s.%N)
[[ {tool} == cargo ]] && name=$1
echo "{tool} $name $t0 $t1" >> "$SPLIT_LOG"
exit $rc
"""

RUSTUP = """#!/bin/bash
# `rustup which cargo|rustc` answers the timing shims beside this file
d="$(dirname "$0")"
if [[ "$1" == which && ( "$2" == cargo || "$2" == rustc ) ]]; then echo "$d/$2"; exit 0; fi
exec {real} "$@"
"""


def write_shims(directory: Path) -> None:
    """The cargo, rustc and rustup shims, pointing at the real tools."""
    rustup = shutil.which("rustup")
    if not rustup:
        raise SystemExit("split.py: needs rustup on PATH (evcxr finds cargo and rustc through it)")
    for tool in ("cargo", "rustc"):
        real = subprocess.run([rustup, "which", tool], capture_output=True, text=True, check=True).stdout.strip()
        (directory / tool).write_text(SHIM.format(real=real, tool=tool))
    (directory / "rustup").write_text(RUSTUP.format(real=rustup))
    for f in directory.iterdir():
        f.chmod(0o755)


def read_log(path: Path) -> list[tuple[str, str, float, float]]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        tool, name, t0, t1 = line.split()
        rows.append((tool, name, float(t0), float(t1)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="rust-gpu", help="kernelspec name")
    ap.add_argument("--plain", action="store_true", help="a plain session (EVCXR_GPU_GPUKIT=none)")
    ap.add_argument("--workdir", help="EVCXR_GPU_WORKDIR of the session (default: the kernel's)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--passes", action="store_true", help="time the cell crate's rustc passes too")
    args = ap.parse_args()

    shims = Path(tempfile.mkdtemp(prefix="split-shims-"))
    write_shims(shims)
    log = shims / "times.log"
    env = dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}", SPLIT_LOG=str(log))
    if args.passes:
        env["SPLIT_PASSES"] = "1"
    if args.plain:
        env["EVCXR_GPU_GPUKIT"] = "none"
        env["EVCXR_GPU_WORKDIR"] = tempfile.mkdtemp(prefix="split-plain-")
    elif args.workdir:
        env["EVCXR_GPU_WORKDIR"] = args.workdir

    km, kc = start_new_kernel(kernel_name=args.kernel, startup_timeout=300, env=env)
    windows = []
    try:
        for i, cell in enumerate(["0"] + CELLS * args.rounds):
            t0 = time.time()
            reply = kc.execute_interactive(cell, timeout=1800, output_hook=lambda m: None)
            windows.append((cell if i else "(first cell) 0", t0, time.time()))
            if reply["content"]["status"] != "ok":
                raise SystemExit(f"split.py: cell {cell!r} failed: {reply['content']}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

    entries = read_log(log)
    columns = defaultdict(list)
    for i, (cell, t0, t1) in enumerate(windows):
        inside = [e for e in entries if e[2] >= t0 - 0.01 and e[3] <= t1 + 0.01]
        cargo = sum(e[3] - e[2] for e in inside if e[0] == "cargo")
        ctx = sum(e[3] - e[2] for e in inside if e[0] == "rustc" and e[1] == "ctx")
        whole = t1 - t0
        print(f"{cell[:38]:40} cell {whole * 1000:6.0f} ms  cargo {cargo * 1000:6.0f}  "
              f"rustc(ctx) {ctx * 1000:6.0f}  outside cargo {(whole - cargo) * 1000:6.0f}")
        if i:  # the first cell carries the session's start-up
            for key, value in (("cell", whole), ("cargo", cargo), ("rustc_ctx", ctx),
                               ("cargo_itself", cargo - ctx), ("outside_cargo", whole - cargo)):
                columns[key].append(value)
    print("medians (ms):", {k: round(statistics.median(v) * 1000) for k, v in columns.items()})

    passes = Path(f"{log}.passes")
    if args.passes and passes.exists():
        by_pass = defaultdict(list)
        for line in passes.read_text().splitlines():
            m = re.match(r"time:\s+([\d.]+);.*\s(\S+)$", line.strip())
            if m:
                by_pass[m.group(2)].append(float(m.group(1)))
        top = sorted(by_pass.items(), key=lambda kv: -statistics.median(kv[1]))[:15]
        for name, values in top:
            print(f"  {name:40} {statistics.median(values) * 1000:7.1f} ms (n={len(values)})")


if __name__ == "__main__":
    main()
