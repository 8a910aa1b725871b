"""Collects the frame rows (issue 17): gpukit-frame (`gpukit-bench frame`) against Polars
(benches/polars_twin.py), from the files benches/frame_run.sh leaves in one folder:

    <side>-<rows>-r<round>.jsonl     one JSON line per row (side: gpukit, polars)
    <side>-<rows>-r<round>.digests   one JSON line per row: the result's digest

    python benches/frame_collect.py DIR --json OUT.json --md OUT.md

For each (rows, operation): the median wall time of each side over every timed call of every
round, the ratio Polars / gpukit (above 1: gpukit is faster), and the check: `ok` when every
round of both sides gave the same digest (counts, u64 digests, the group-by table with means
equal to 1e-12 relative), otherwise `FAIL (...)` naming the first difference, and no ratio.
Memory: gpukit's device peak (gpukit's own allocations, the process's peak up to and including
the row), its pool's reserved bytes, and each process's peak host RSS.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"^(gpukit|polars)-(\d+)-r(\d+)\.(jsonl|digests)$")
MEAN_RTOL = 1e-12


def read_lines(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def compare_digest(a, b, where: str = "") -> str | None:
    """None when the digests agree, else a short description of the first difference."""
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            return f"{where}keys {sorted(a)} vs {sorted(b)}"
        for k in sorted(a):
            d = compare_digest(a[k], b[k], f"{where}{k}.")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = compare_digest(x, y, f"{where}{i}.")
            if d:
                return d
        return None
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return f"{where.rstrip('.')}: {a} vs {b}"
        x, y = float(a), float(b)
        if x == y or abs(x - y) <= MEAN_RTOL * max(abs(x), abs(y)):
            return None
        return f"{where.rstrip('.')}: {x!r} vs {y!r}"
    if a != b:
        return f"{where.rstrip('.')}: {a} vs {b}"
    return None


def collect(files: dict[str, list[dict]]) -> list[dict]:
    """`files`: base name -> its lines. Returns one result per (rows, op), in run order."""
    walls: dict[tuple, dict[str, list[float]]] = {}
    digests: dict[tuple, dict[str, list]] = {}
    mem: dict[tuple, dict[str, int]] = {}
    order: list[tuple] = []
    for name in sorted(files):
        m = NAME.match(name)
        if not m:
            continue
        side, _rows, _round, kind = m.groups()
        for line in files[name]:
            key = (int(line["rows"]), line["op"])
            if key not in order:
                order.append(key)
            if kind == "jsonl":
                walls.setdefault(key, {}).setdefault(side, []).extend(
                    x for x in line["wall_ms"] if x is not None
                )
                mm = mem.setdefault(key, {})
                for field in ("device_peak_bytes", "pool_reserved_bytes", "host_peak_rss_bytes"):
                    if field in line:
                        k = f"{side}_{field}"
                        mm[k] = max(mm.get(k, 0), int(line[field]))
                if side == "gpukit" and "device" in line:
                    mm["gpukit_device"] = line["device"]
                if side == "polars" and "device" in line:
                    mm["polars_threads"] = line["device"]
            else:
                digests.setdefault(key, {}).setdefault(side, []).append(line["digest"])
    out = []
    for key in sorted(order, key=lambda k: (k[0], order.index(k))):
        rows, op = key
        w = walls.get(key, {})
        g = statistics.median(w["gpukit"]) if w.get("gpukit") else None
        p = statistics.median(w["polars"]) if w.get("polars") else None
        check = check_of(digests.get(key, {}))
        ratio = p / g if (check == "ok" and g and p) else None
        out.append(
            {"rows": rows, "op": op, "gpukit_ms": g, "polars_ms": p, "ratio": ratio, "check": check,
             "gpukit_wall_ms": w.get("gpukit", []), "polars_wall_ms": w.get("polars", []),
             **mem.get(key, {})}
        )
    return out


def check_of(d: dict[str, list]) -> str:
    for side in ("gpukit", "polars"):
        if not d.get(side):
            return f"FAIL ({side}: no digest)"
        for i, other in enumerate(d[side][1:], 2):
            diff = compare_digest(d[side][0], other)
            if diff:
                return f"FAIL ({side} round {i} differs from round 1: {diff})"
    diff = compare_digest(d["gpukit"][0], d["polars"][0])
    return "ok" if diff is None else f"FAIL (gpukit vs polars: {diff})"


def gib(b) -> str:
    return "" if not b else f"{b / 2**30:.2f}"


def fmt_ms(x) -> str:
    return "" if x is None else (f"{x:.1f}" if x >= 10 else f"{x:.3f}")


def markdown(results: list[dict]) -> str:
    lines = [
        "| rows | operation | gpukit ms | Polars ms | Polars / gpukit | check | gpukit device peak GiB "
        "| gpukit pool GiB | gpukit host peak RSS GiB | Polars host peak RSS GiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(
            f"| {r['rows']:,} | {r['op']} | {fmt_ms(r['gpukit_ms'])} | {fmt_ms(r['polars_ms'])} | {ratio} "
            f"| {r['check']} | {gib(r.get('gpukit_device_peak_bytes'))} | {gib(r.get('gpukit_pool_reserved_bytes'))} "
            f"| {gib(r.get('gpukit_host_peak_rss_bytes'))} | {gib(r.get('polars_host_peak_rss_bytes'))} |"
        )
    dev = next((r["gpukit_device"] for r in results if "gpukit_device" in r), "?")
    thr = next((r["polars_threads"] for r in results if "polars_threads" in r), "?")
    lines.append("")
    lines.append(f"gpukit: {dev}; Polars: {thr}. Times: median wall ms over every timed call of every round.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--json", required=True)
    p.add_argument("--md", required=True)
    a = p.parse_args(argv)
    files = {
        os.path.basename(f): read_lines(f)
        for f in glob.glob(os.path.join(a.dir, "*"))
        if NAME.match(os.path.basename(f))
    }
    results = collect(files)
    with open(a.json, "w") as f:
        json.dump({"rows": results}, f, indent=1)
    md = markdown(results)
    with open(a.md, "w") as f:
        f.write(md)
    print(md)
    return 0 if all(r["check"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
