#!/usr/bin/env python3
"""Replay the cell crate's rustc of one session on variants of its last cell (a diagnosis tool).

Takes a session crate that a kernel left behind (`$EVCXR_GPU_WORKDIR/session-N`), asks cargo for
the exact `rustc --crate-name ctx` command evcxr's build runs (`cargo build -v` with the
session's settings), and times that command on variants of the crate's source, interleaved in
random order, each round with a fresh name for evcxr's entry function (as every real build has),
each variant with its own incremental directory. Variants:

* `as-is`: the source as the kernel wrote it;
* `no-sync`: without the step's `synchronize_registered()?` call;
* `no-gpukit`: without the sync and without `use gpukit::prelude::*` (gpukit not loaded at all).

    python benches/kernel_latency/replay.py /path/to/workdir/session-0 [--rounds 10] [--passes]

`--passes` adds `-Z time-passes` (RUSTC_BOOTSTRAP=1, diagnosis only) and prints each pass's median.
The source file is restored afterwards.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

SYNC = "gpukit::__private::synchronize_registered()?;"
PRELUDE = "use gpukit::prelude::*;"


def tool(name: str) -> str:
    return subprocess.run(["rustup", "which", name], capture_output=True, text=True, check=True).stdout.strip()


def ctx_command(session: Path) -> list[str]:
    """The rustc arguments of the session's cell crate, as cargo runs them for evcxr."""
    env = dict(os.environ, CARGO_TARGET_DIR="target", CARGO_BUILD_BUILD_DIR="target",
               RUSTC=tool("rustc"), RUSTFLAGS="-Cprefer-dynamic")
    (session / "src" / "lib.rs").touch()
    out = subprocess.run([tool("cargo"), "build", "-v", "--target", host()], cwd=session, env=env,
                         capture_output=True, text=True).stderr
    for line in out.splitlines():
        if "--crate-name ctx" in line and "Running `" in line:
            return shlex.split(line.split("Running `", 1)[1].rstrip("`"))
    raise SystemExit(f"replay.py: cargo ran no rustc for the cell crate:\n{out[-2000:]}")


def host() -> str:
    info = subprocess.run([tool("rustc"), "-vV"], capture_output=True, text=True, check=True).stdout
    return next(l.split(": ", 1)[1] for l in info.splitlines() if l.startswith("host: "))


def with_dirs(args: list[str], label: str, scratch: Path) -> list[str]:
    """`args` with this variant's own incremental and output directories."""
    out, it = [], iter(args)
    for a in it:
        if a == "-C":
            b = next(it)
            if b.startswith("incremental="):
                b = f"incremental={scratch / ('inc-' + label)}"
            out += [a, b]
        elif a == "--out-dir":
            next(it)
            out += [a, str(scratch / ("out-" + label))]
        else:
            out.append(a)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("session", type=Path)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--passes", action="store_true")
    a = ap.parse_args()

    lib = a.session / "src" / "lib.rs"
    source = lib.read_text()
    if SYNC not in source or PRELUDE not in source:
        raise SystemExit("replay.py: not a gpukit session crate of this kernel (no step sync or prelude)")
    variants = {
        "as-is": source,
        "no-sync": source.replace(SYNC, ""),
        "no-gpukit": source.replace(SYNC, "").replace(PRELUDE, ""),
    }
    base = ctx_command(a.session) + ["-C", "lto=off"]  # as the kernel's wrapper adds
    scratch = Path(tempfile.mkdtemp(prefix="replay-"))
    env = dict(os.environ, RUSTC_BOOTSTRAP="1") if a.passes else None
    times, passes = defaultdict(list), defaultdict(lambda: defaultdict(list))
    try:
        for label in variants:
            (scratch / ("out-" + label)).mkdir()
        for r in range(a.rounds + 1):  # round 0 fills the incremental directories
            order = list(variants)
            random.shuffle(order)
            for label in order:
                fn = f"run_user_code_{random.randint(10**6, 10**7)}"
                lib.write_text(re.sub(r"run_user_code_\d+", fn, variants[label]))
                cmd = with_dirs(base, label, scratch) + (["-Z", "time-passes"] if a.passes else [])
                t = time.monotonic()
                p = subprocess.run(cmd, cwd=a.session, capture_output=True, text=True, env=env)
                dt = time.monotonic() - t
                if p.returncode != 0:
                    raise SystemExit(f"replay.py: {label} failed:\n{(p.stdout + p.stderr)[-2000:]}")
                if r == 0:
                    continue
                times[label].append(dt)
                for line in (p.stdout + p.stderr).splitlines():
                    m = re.match(r"time:\s+([\d.]+);.*\s(\S+)$", line.strip())
                    if m:
                        passes[m.group(2)][label].append(float(m.group(1)))
    finally:
        lib.write_text(source)
        shutil.rmtree(scratch, ignore_errors=True)
    for label, v in times.items():
        q = statistics.quantiles(v, n=4)
        print(f"{label:10} rustc median {statistics.median(v) * 1000:6.0f} ms  [{q[0] * 1000:.0f}-{q[2] * 1000:.0f}]")
    if a.passes:
        top = sorted(passes.items(), key=lambda kv: -max(statistics.median(x) for x in kv[1].values()))[:15]
        for name, by_label in top:
            print(f"  {name:38}", "  ".join(f"{k} {statistics.median(v) * 1000:6.1f}" for k, v in by_label.items()))


if __name__ == "__main__":
    main()
