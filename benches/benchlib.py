#!/usr/bin/env python3
"""Benchmark results: merge both sides, check them against each other, write results.json and the
README table (standard library only).

    benchlib.py collect RAW.jsonl --plan PLAN.json [--facts FACTS.json] > results.json   (device)
    benchlib.py record RUN_DIR [--dest docs/bench]     (here) results.json + README.md from a fetched run
    benchlib.py cpu CPU.jsonl [--dest docs/bench]      (here) cpu.json + README.md from `gpukit-bench cpu`
    benchlib.py readme [--dest docs/bench]             regenerate README.md from results.json and cpu.json

results.json (issues 6 and 12): device, driver, commit, date, hbm_spec, memory_ceilings (copy, write,
read: the best checked candidate of each), ceiling_copy_gbps, ceilings (GEMM with its errors, pinned link),
span_floor_ms, rows: [{name, gpukit_ms, cupy_ms, ratio, gpukit_wall_ms, cupy_wall_ms, wall_ratio, metric,
value, ceiling, pct_of_ceiling, check_ok, verify, ...}] with ratio = cupy_ms / gpukit_ms (above 1 means
gpukit is faster). Times are medians over every timed call of every round; `*_ms` are event spans of the
whole call (benches/README.md), `*_wall_ms` host times to a synchronised return.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: Workloads of issue 6 that gpukit has no API for yet (kept in results.json as `missing`).
NOT_YET: list[tuple[str, str]] = []

#: The matmul rows: (n, dtype) of their n x n product (2n^3 flops), for their TFLOP/s and their
#: percentage of the GEMM ceiling (CuPy's cuBLAS 8192^2 of the same dtype, measured in the same run).
GEMM_ROWS = {"matmul (float32, 4096^2)": (4096, "float32"), "matmul (float64, 4096^2)": (4096, "float64"),
             "matmul (float32, 8192^2)": (8192, "float32"), "matmul (float64, 8192^2)": (8192, "float64")}


def median(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def read_jsonl(path: Path) -> list[dict]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def tolerance(name: str) -> float:
    """Relative tolerance of the cross-side summary values (sums differ in rounding order)."""
    return 1e-4 if "float32" in name else 1e-7


def checks_agree(a, b, tol: float) -> bool:
    """Element-wise relative agreement of two check lists; null (NaN on a side) never agrees."""
    if a is None or b is None or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None or y is None:
            return False
        if abs(x - y) > tol * max(abs(x), abs(y), 1.0):
            return False
    return True


def err_value(v) -> float:
    """A max_rel_err as written by a side: a number, or "inf"."""
    if v is None:
        return 0.0
    if isinstance(v, str):
        return math.inf if v.strip().lower() in ("inf", "infinity") else float(v)
    return float(v)


def json_err(v: float):
    """An error value for results.json (JSON has no infinity)."""
    return v if math.isfinite(v) else "inf"


#: Units of rows timed by the host clock (`host_ms`) instead of events: per_launch (µs per call of
#: back-to-back launches) and latency (ms of one first launch, cold or warm kernel cache).
HOST_TIMED_UNITS = ("per_launch", "latency")

#: Rows that have no CuPy twin by design (name prefixes): NVRTC's own floor, measured beside the
#: first-launch rows. Their check is gpukit's own; they get no ratio and are not counted as unrated.
GPUKIT_ONLY = ("NVRTC floor",)

#: The warm-cache first-launch row and its target (issue 14), in ms.
FIRST_LAUNCH_WARM = "first launch of a new kernel, warm kernel cache"
FIRST_LAUNCH_TARGET_MS = 1.0


def gpukit_only(name: str) -> bool:
    """Whether a row has no CuPy twin by design."""
    return name.startswith(GPUKIT_ONLY)


def side_times(lines: list[dict], unit: str) -> tuple[float | None, float | None]:
    """(median span, or host time per call for per_launch rows; median wall time) over every
    timed call of every round."""
    key = "host_ms" if unit in HOST_TIMED_UNITS else "span_ms"
    main = [v for line in lines for v in (line.get(key) or []) if v is not None]
    wall = [v for line in lines for v in (line.get("wall_ms") or []) if v is not None]
    return median(main), median(wall)


def side_verified(lines: list[dict], unit: str) -> tuple[bool | None, dict]:
    """Whether every timed output of a side was checked in full and passed.

    True: checked and passed; False: a check failed, or (for "op" rows) a timed call has no check;
    None: nothing to check (an empty kernel's launch rate)."""
    checked = failed = 0
    worst = 0.0
    every = True
    how = None
    for line in lines:
        v = line.get("verify")
        if v is None:
            if unit == "op":
                every = False
            continue
        checked += int(v.get("checked", 0))
        failed += int(v.get("failed", 0))
        how = v.get("how", how)
        worst = max(worst, err_value(v.get("max_rel_err")))
        if unit == "op" and v.get("checked") != len(line.get("span_ms") or []) + len(line.get("wall_ms") or []):
            every = False
    summary = {"checked": checked, "failed": failed, "max_rel_err": json_err(worst), "how": how,
               "every_timed_call_checked": every}
    if checked == 0 and every:
        return None, summary
    return (checked > 0 and failed == 0 and every), summary


#: HBM bandwidth from the data sheets, by device name (lower case, first match wins).
HBM_SPECS = [
    ("h100 pcie", 2000.0, "H100 PCIe 80GB HBM2e, 2.0 TB/s"),
    ("h100 nvl", 3900.0, "H100 NVL 94GB HBM3, 3.9 TB/s"),
    ("h100 80gb hbm3", 3350.0, "H100 SXM5 80GB HBM3, 3.35 TB/s"),
    ("h100 sxm", 3350.0, "H100 SXM5 80GB HBM3, 3.35 TB/s"),
    ("h200", 4800.0, "H200 141GB HBM3e, 4.8 TB/s"),
]


def hbm_spec(device: str | None) -> dict:
    """The HBM specification of a device by its name: {gbps, what}; gbps None when unknown."""
    name = (device or "").lower()
    for key, gbps, what in HBM_SPECS:
        if key in name:
            return {"gbps": gbps, "what": what}
    return {"gbps": None, "what": "unknown"}


#: Which ceiling a row's access pattern is held to.
CEILING_OF_ACCESS = {"rw": "copy", "w": "write", "r": "read", "h2d": "h2d_pinned", "d2h": "d2h_pinned"}


def pick_ceiling(candidates: list[dict], pattern: str) -> dict | None:
    """The best checked candidate of one access pattern (copy, write or read) over every
    implementation and buffer size; None if no candidate passed its check."""
    best = None
    for c in candidates:
        if c.get("pattern") != pattern or c.get("check_ok") != "yes":
            continue
        g = c.get("gbps")
        if not isinstance(g, (int, float)) or not math.isfinite(g) or g <= 0:
            continue
        if best is None or g > best["gbps"]:
            best = {"gbps": float(g), "impl": c.get("impl"), "method": c.get("method"),
                    "bytes_per_buffer": c.get("bytes_per_buffer")}
    return best


def collect(lines: list[dict], facts: dict, plan: dict) -> dict:
    ceil = {}
    candidates = []
    # "cudarc" is a reference side: the plainest raw-cudarc kernel for a few rows (gpukit-bench)
    sides: dict[str, dict[str, list[dict]]] = {"gpukit": {}, "cupy": {}, "cudarc": {}}
    order: list[str] = []
    floors: dict[str, dict] = {}
    for line in lines:
        side = line.get("side")
        if side == "ceilings":
            ceil.update({k: v for k, v in line.items() if k != "side"})
        elif side == "ceiling":
            candidates.append(line)
        elif side in sides:
            if line.get("unit") == "floor":
                floors.setdefault(side, []).append(line)
                continue
            if line["name"] not in order and side != "cudarc":
                order.append(line["name"])
            sides[side].setdefault(line["name"], []).append(line)
    memory = {p: pick_ceiling(candidates, p) for p in ("copy", "write", "read")}
    ceiling_gbps = {p: (m["gbps"] if m else None) for p, m in memory.items()}
    ceiling_gbps["h2d_pinned"] = ceil.get("h2d_pinned_gbps")
    ceiling_gbps["d2h_pinned"] = ceil.get("d2h_pinned_gbps")
    rows = []
    for name in order:
        g, c = sides["gpukit"].get(name), sides["cupy"].get(name)
        ref = (g or c)[0]
        unit, nbytes = ref.get("unit", "op"), float(ref.get("bytes") or 0)
        access = ref.get("access") or ""
        g_ms, g_wall = side_times(g, unit) if g else (None, None)
        c_ms, c_wall = side_times(c, unit) if c else (None, None)
        g_ok, g_ver = side_verified(g, unit) if g else (False, None)
        c_ok, c_ver = side_verified(c, unit) if c else (False, None)
        summaries = bool(g and c) and all(checks_agree(x["check"], y["check"], tolerance(name)) for x in g for y in c)
        agree = summaries and g_ok is not False and c_ok is not False
        if gpukit_only(name) and g and not c:
            agree = g_ok is True
        row = {"name": name, "unit": unit, "access": access,
               "gpukit_ms": g_ms, "cupy_ms": c_ms, "ratio": None,
               "gpukit_wall_ms": g_wall, "cupy_wall_ms": c_wall, "wall_ratio": None,
               "metric": None, "value": None, "ceiling": None, "ceiling_gbps": None, "pct_of_ceiling": None,
               "pct_of_copy_ceiling": None,
               "check_ok": agree, "summaries_agree": summaries, "verify": {"gpukit": g_ver, "cupy": c_ver},
               "span": {"gpukit": g[0].get("span") if g else None, "cupy": c[0].get("span") if c else None},
               "rounds": {"gpukit": len(g or []), "cupy": len(c or [])}}
        if not summaries and g and c:
            row["check"] = {"gpukit": g[0]["check"], "cupy": c[0]["check"]}
        if agree and g_ms and c_ms:
            row["ratio"] = c_ms / g_ms
        if agree and g_wall and c_wall:
            row["wall_ratio"] = c_wall / g_wall
        r = sides["cudarc"].get(name)
        if r:
            r_ms, r_wall = side_times(r, unit)
            r_ok, r_ver = side_verified(r, unit)
            r_agree = bool(g) and r_ok is not False and all(
                checks_agree(x["check"], y["check"], tolerance(name)) for x in g for y in r)
            row.update(cudarc_ms=r_ms, cudarc_wall_ms=r_wall, cudarc_check_ok=r_agree)
            row["verify"]["cudarc"] = r_ver
            if g_ms and r_ms and r_agree:
                row["ratio_vs_cudarc"] = r_ms / g_ms
        if unit == "per_launch" and g_ms is not None:
            row["metric"], row["value"] = "us_per_launch_host", g_ms * 1e3
        elif unit == "latency" and g_ms is not None:
            row["metric"], row["value"] = "ms_first_launch", g_ms
        elif nbytes and g_ms:
            row["metric"], row["value"] = "GB/s", nbytes / (g_ms * 1e-3) / 1e9
            which = CEILING_OF_ACCESS.get(access)
            if which in ("write", "read") and not ceiling_gbps.get(which):
                which = "copy"  # no checked candidate of that pattern: the copy ceiling
            if which and ceiling_gbps.get(which):
                row["ceiling"], row["ceiling_gbps"] = which, ceiling_gbps[which]
                row["pct_of_ceiling"] = 100 * row["value"] / ceiling_gbps[which]
            if access in ("rw", "w", "r") and ceiling_gbps.get("copy"):
                row["pct_of_copy_ceiling"] = 100 * row["value"] / ceiling_gbps["copy"]
            device = median([v for line in (g or []) for v in (line.get("device_ms") or []) if v is not None])
            if device:
                # Device time per call (the sum of the call's kernels, each between an event pair,
                # as the ceilings' kernel candidates are timed): the like-for-like comparison
                # with the ceiling, without the span's dispatch and instrument floor.
                row["device_ms"] = device
                row["device_gbps"] = nbytes / (device * 1e-3) / 1e9
                if row["ceiling_gbps"]:
                    row["device_pct_of_ceiling"] = 100 * row["device_gbps"] / row["ceiling_gbps"]
        if name in GEMM_ROWS and g_ms:
            n, dt = GEMM_ROWS[name]
            row["tflops"] = 2 * n ** 3 / (g_ms * 1e-3) / 1e12
            gemm = ceil.get(f"gemm_tflops_{dt}")
            row["pct_of_gemm_ceiling"] = 100 * row["tflops"] / gemm if gemm else None
        for k in ("gpukit_ms", "cupy_ms", "ratio", "wall_ratio", "value", "pct_of_ceiling", "pct_of_copy_ceiling",
                  "device_ms", "device_gbps", "device_pct_of_ceiling",
                  "tflops", "pct_of_gemm_ceiling", "gpukit_wall_ms", "cupy_wall_ms", "cudarc_ms", "cudarc_wall_ms", "ratio_vs_cudarc", "ceiling_gbps"):
            if isinstance(row.get(k), float):
                row[k] = round(row[k], 6 if row[k] < 1 else 4)
        rows.append(row)
    spec = hbm_spec(facts.get("device"))
    copy = ceiling_gbps["copy"]
    return {
        "device": facts.get("device", "unknown"),
        "driver": facts.get("driver", "unknown"),
        "cuda": facts.get("cuda", "unknown"),
        "commit": plan.get("commit", "unknown"),
        "dirty": bool(plan.get("dirty")),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "ceiling_copy_gbps": round(copy, 1) if copy else None,
        "hbm_spec": spec,
        "ceiling_copy_pct_of_spec": round(100 * copy / spec["gbps"], 1) if copy and spec["gbps"] else None,
        "memory_ceilings": memory,
        "ceiling_candidates": [
            {"pattern": c.get("pattern"), "impl": c.get("impl"), "method": c.get("method"),
             "gib": (c.get("bytes_per_buffer") or 0) / (1 << 30), "gbps": round(c.get("gbps") or 0.0, 1),
             "check_ok": c.get("check_ok"), "tried": c.get("tried")} for c in candidates],
        "ceilings": {k: round_ceiling(k, v) for k, v in ceil.items()},
        "span_floor_ms": {s: side_times(ls, "floor")[0] for s, ls in floors.items()},
        "rows": rows,
        "missing": [{"name": n, "why": w} for n, w in NOT_YET],
    }


def round_ceiling(key: str, v):
    """Rates to 4 decimals; errors to 3 significant digits (never rounded to 0)."""
    if not isinstance(v, (int, float)):
        return v
    if "err" in key:
        return json_err(float(f"{v:.3g}")) if math.isfinite(v) else "inf"
    return round(v, 4)


# ---------------------------------------------------------------------------------------------
# README


def fmt(v, digits=3):
    if v is None:
        return "—"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}g}" if abs(v) < 0.01 else f"{v:.{digits}f}"


def fmt_err(v) -> str:
    """An error in scientific notation with its real value ("0" only when it is exactly 0)."""
    if v is None:
        return "—"
    v = err_value(v)
    if math.isinf(v):
        return "inf"
    if v == 0:
        return "0"
    return f"{v:.2e}"


#: Rows of elementwise work and reductions, held to the memory-ceiling target.
BANDWIDTH_ROWS = ("a * 2", "lesson 5.0", "sum", "mean", "max", "std")


#: The row of launches replayed from a CUDA graph, and its target in µs of host time per launch.
GRAPH_ROW = "launch in a graph"
GRAPH_TARGET_US = 1.5


def targets(results: dict) -> list[str]:
    """One line per target of issue 6: met, or which rows miss it and by how much."""
    rows = results["rows"]
    lines = []
    below = [f"{r['name']} ({fmt(r['ratio'])})" for r in rows if r["ratio"] is not None and r["ratio"] < 1.0]
    unrated = [r["name"] for r in rows if r["ratio"] is None and not gpukit_only(r["name"])]
    lines.append("ratio ≥ 1.0 on every row: " + ("met" if not below and not unrated else
                 "; ".join(x for x in ("below: " + ", ".join(below) if below else "",
                                       "no ratio: " + ", ".join(unrated) if unrated else "") if x)))
    bw = [r for r in rows if r["name"].startswith(BANDWIDTH_ROWS) and r.get("pct_of_ceiling") is not None]
    low = [f"{r['name']} ({fmt(r['pct_of_ceiling'])}%)" for r in bw if r["pct_of_ceiling"] < 90]
    lines.append("elementwise and reductions ≥ 90% of their memory ceiling (span): "
                 + (f"met ({fmt(min(r['pct_of_ceiling'] for r in bw))}% or more)" if bw and not low else
                    "below: " + ", ".join(low) if low else "not measured"))
    dev = [r for r in bw if r.get("device_pct_of_ceiling") is not None]
    if dev:
        dlow = [f"{r['name']} ({fmt(r['device_pct_of_ceiling'])}%)" for r in dev if r["device_pct_of_ceiling"] < 90]
        copy = results.get("memory_ceilings", {}).get("copy", {}).get("gbps")
        of_copy = (f"; against the copy ceiling {fmt(min(100 * r['device_gbps'] / copy for r in dev))}% or more"
                   if copy else "")
        lines.append("the same by device time, the ceilings' own measure (rows that record it: "
                     + ", ".join(r["name"] for r in dev) + "): "
                     + (f"met ({fmt(min(r['device_pct_of_ceiling'] for r in dev))}% or more" if not dlow
                        else "below: " + ", ".join(dlow)) + of_copy + (")" if not dlow else ""))
    launch = [r for r in rows if r["unit"] == "per_launch" and r["value"] is not None]
    slow = [f"{r['name']} ({fmt(r['value'])} µs)" for r in launch if r["value"] > 3.0]
    lines.append("per-launch host overhead ≤ 3 µs: " + ("met" if launch and not slow else
                 "above: " + ", ".join(slow) if slow else "not measured"))
    graph = [r for r in rows if r["name"] == GRAPH_ROW and r["unit"] == "per_launch" and r["value"] is not None]
    lines.append(f"{GRAPH_ROW} ≤ {GRAPH_TARGET_US} µs per launch (issue 14): " + (
        ("met" if graph[0]["value"] <= GRAPH_TARGET_US else f"above: {fmt(graph[0]['value'])} µs")
        if graph else "not measured"))
    pageable = [r for r in rows if "pageable" in r["name"] and r.get("pct_of_ceiling") is not None]
    short = [f"{r['name']} ({fmt(r['pct_of_ceiling'])}%)" for r in pageable if r["pct_of_ceiling"] < 80]
    lines.append("pageable to_device / to_host ≥ 80% of the pinned link rate: " + (
        "met" if pageable and not short else "below: " + ", ".join(short) if short else "not measured"))
    warm = [r for r in rows if r["name"].startswith(FIRST_LAUNCH_WARM) and r["gpukit_ms"] is not None]
    floor = [r for r in rows if gpukit_only(r["name"]) and r["gpukit_ms"] is not None]
    context = (f" (NVRTC floor {fmt(floor[0]['gpukit_ms'])} ms)" if floor else "")
    lines.append(f"first launch with a warm kernel cache ≤ {fmt(FIRST_LAUNCH_TARGET_MS)} ms: " + (
        "not measured" if not warm else
        ("met" if warm[0]["gpukit_ms"] <= FIRST_LAUNCH_TARGET_MS else "above")
        + f" ({fmt(warm[0]['gpukit_ms'])} ms)" + context))
    return lines


def check_cell(r: dict) -> str:
    """The table's check column: ok, or what failed."""
    if r.get("check_ok"):
        return "ok"
    why = []
    for side, v in (r.get("verify") or {}).items():
        if side == "cudarc":
            continue
        if v is None:
            why.append(f"{side}: no result")
        elif v.get("failed") or not v.get("every_timed_call_checked", True):
            why.append(f"{side}: {v.get('failed')}/{v.get('checked')} outputs wrong"
                       + ("" if v.get("every_timed_call_checked", True) else ", unchecked calls"))
    if r.get("summaries_agree") is False:
        why.append("sides disagree")
    return "FAIL" + (f" ({'; '.join(why)})" if why else "")


def ceiling_text(results: dict) -> list[str]:
    """The ceilings paragraph: memory ceilings with the HBM specification, GEMM, link."""
    c = results.get("ceilings", {})
    spec = results.get("hbm_spec") or {"gbps": None, "what": "unknown"}
    mem = results.get("memory_ceilings")
    out = []
    if mem is None:  # results.json from before issue 12
        out.append(f"Ceilings measured in the same run: device-to-device copy "
                   f"**{fmt(results.get('ceiling_copy_gbps'))} GB/s** (read + write, `cp.copyto`).")
    else:
        spec_s = f"{spec['what']}" if spec.get("gbps") else "unknown for this device name"
        parts = []
        for p, what in (("copy", "copy (read + write)"), ("write", "write only"), ("read", "read only")):
            m = mem.get(p)
            if m is None:
                parts.append(f"{what}: no candidate passed its check")
                continue
            pct = f", {fmt(100 * m['gbps'] / spec['gbps'])}% of the specification" if spec.get("gbps") else ""
            parts.append(f"{what} **{fmt(m['gbps'])} GB/s** ({m['method']}, {(m.get('bytes_per_buffer') or 0) >> 30} GiB"
                         f" buffers{pct})")
        out.append("Memory ceilings measured in the same run, each the best checked candidate over 128-bit "
                   "kernels (through gpukit and through CuPy), the driver's and CuPy's copy and fill, and "
                   f"buffers of 1 to 4 GiB: {'; '.join(parts)}. HBM specification: **{spec_s}**.")
    gemm = []
    for dt in ("float32", "float64"):
        rate = c.get(f"gemm_tflops_{dt}")
        if rate is None:
            continue
        e_fro, e_max = c.get(f"gemm_{dt}_err_fro"), c.get(f"gemm_{dt}_err_max")
        if e_fro is None:  # recorded before issue 12 (rounded to 4 decimals then: not a value)
            gemm.append(f"{fmt(rate)} TFLOP/s {dt}")
            continue
        err = f"error against a host reference in higher precision: normwise {fmt_err(e_fro)}"
        if e_max is not None:
            err += f", max {fmt_err(e_max)} of the largest element"
        if c.get(f"gemm_{dt}_check_ok") == "no":
            err += ", CHECK FAILED"
        gemm.append(f"{fmt(rate)} TFLOP/s {dt} ({err})")
    if gemm:
        out.append("cuBLAS GEMM 8192²: " + "; ".join(gemm) + ".")
    out.append(f"Pinned host→device {fmt(c.get('h2d_pinned_gbps'))} GB/s, device→host "
               f"{fmt(c.get('d2h_pinned_gbps'))} GB/s.")
    return out


def readme(results: dict | None, cpu: dict | None) -> str:
    out = ["# Benchmarks: gpukit against CuPy",
           "",
           "Generated by `make bench-record` (GPU rows, from a device run of `benches/run.sh`) and "
           "`make bench-cpu` (CPU rows, this machine); do not edit by hand. Method and the meaning of "
           "every column: [benches/README.md](../../benches/README.md).",
           ""]
    if results:
        out += [f"## GPU: {results['device']} (driver {results['driver']}, CUDA {results.get('cuda', '?')})",
                "",
                f"Commit `{results['commit'][:12]}`{' (with uncommitted changes)' if results.get('dirty') else ''}, "
                f"{results['date']}.",
                ""]
        out += [" ".join(ceiling_text(results)), ""]
        if "memory_ceilings" not in results:
            out += ["Recorded with the harness before issue 12: gpukit's times are sums of its kernels' event "
                    "times (host gaps and allocation left out), CuPy's events around the call; results were "
                    "checked by summary values only; the ceiling is `cp.copyto`. The column meanings below "
                    "apply to runs from issue 12 on.", ""]
        floors = results.get("span_floor_ms") or {}
        floor_s = ", ".join(f"{s} {fmt(v * 1e3)} µs" for s, v in floors.items() if v is not None)
        out += ["`ms` = median span: CUDA events around the whole call, result allocation and dispatch "
                "included, the same on every side" + (f" (span of an empty call: {floor_s})" if floor_s else "")
                + "; µs per launch (host time) for the launch rows. `ratio` = CuPy span / gpukit span, "
                "`wall ratio` = the same for the wall clock (call to synchronised return); above 1: gpukit is "
                "faster. `% of ceiling`: gpukit's rate against the memory ceiling of the row's access (copy, "
                "write, read) or the pinned link rate; `device time` (axis reductions): the same rate over the "
                "device time of the call's kernels, each between an event pair as the ceilings' kernels are "
                "timed (no dispatch, no span floor). `check`: every timed output of both sides matched a "
                "host reference in full, and the sides agree.",
                "",
                "`raw cudarc` is a reference: the plainest kernel (one element per thread) or launch call "
                "written directly against cudarc, timed the same way, with `vs cudarc` = its time / gpukit's.",
                "",
                "| workload | gpukit ms | CuPy ms | ratio | wall ratio | gpukit rate | % of ceiling | check | raw cudarc ms | vs cudarc |",
                "|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|"]
        for r in results["rows"]:
            per = r["unit"] == "per_launch"
            g = r["gpukit_ms"] * 1e3 if per and r["gpukit_ms"] is not None else r["gpukit_ms"]
            cu = r["cupy_ms"] * 1e3 if per and r["cupy_ms"] is not None else r["cupy_ms"]
            rate = (f"{fmt(r['value'])} µs/launch" if per else f"{fmt(r['value'])} GB/s") \
                if r["value"] is not None and r["unit"] != "latency" else "—"
            pct = fmt(r.get("pct_of_ceiling"))
            if r.get("pct_of_ceiling") is not None and r.get("ceiling"):
                pct += f" ({r['ceiling'].replace('_pinned', ' link')})"
            if r.get("device_pct_of_ceiling") is not None:
                pct += f"; device time {fmt(r['device_pct_of_ceiling'])}"
            if r.get("tflops") is not None:  # a GEMM: compute, not bytes, is what limits it
                rate = f"{fmt(r['tflops'])} TFLOP/s"
                pct = f"{fmt(r.get('pct_of_gemm_ceiling'))} (cuBLAS GEMM 8192²)"
            rd = r.get("cudarc_ms")
            rd = rd * 1e3 if per and rd is not None else rd
            ref = (f"{fmt(rd)}{' µs' if per else ''}{'' if r.get('cudarc_check_ok') else ' (MISMATCH)'}"
                   if rd is not None else "—")
            out.append(f"| {r['name']} | {fmt(g)}{' µs' if per and g is not None else ''} | "
                       f"{fmt(cu)}{' µs' if per and cu is not None else ''} | {fmt(r['ratio'])} | "
                       f"{fmt(r.get('wall_ratio'))} | {rate} | {pct} | {check_cell(r)} | {ref} | "
                       f"{fmt(r.get('ratio_vs_cudarc'))} |")
        out += ["", "### Against the targets (issues 6 and 14)", ""] + [f"- {t}" for t in targets(results)]
        out += ["", "Diagnostics from the same run (launch floor through gpukit, raw cudarc and the bare "
                "driver call; host memory copy and page-touch rates): [diagnostics.txt](diagnostics.txt). "
                "What limits the rows that miss a target: [benches/README.md](../../benches/README.md#limits)."]
        if results.get("missing"):
            out += ["", "Not measured yet (no gpukit API):", ""]
            out += [f"- {m['name']}: {m['why']}" for m in results["missing"]]
        out.append("")
    else:
        out += ["## GPU", "", "No device run recorded yet (see benches/README.md).", ""]
    if cpu:
        out += [f"## CPU: gpukit's CPU backend against ndarray ({cpu.get('threads')} threads, this machine)",
                "",
                f"Commit `{cpu.get('commit', '?')[:12]}`, {cpu.get('date')}. Medians in ms; ratio = ndarray / gpukit "
                "(above 1: gpukit faster).",
                "",
                "| workload | gpukit CPU ms | ndarray ms | ndarray + rayon ms | ratio vs ndarray | ratio vs rayon | agree |",
                "|---|---:|---:|---:|---:|---:|:---:|"]
        for r in cpu["rows"]:
            out.append(f"| {r['name']} | {fmt(r['gpukit_cpu_ms'])} | {fmt(r['ndarray_ms'])} | "
                       f"{fmt(r['ndarray_rayon_ms'])} | {fmt(r['ratio_ndarray'])} | {fmt(r['ratio_rayon'])} | "
                       f"{r['agree']} |")
        out.append("")
    return "\n".join(out)


def cpu_results(lines: list[dict], commit: str) -> dict:
    rows = []
    threads = None
    for l in lines:
        if l.get("side") != "cpu":
            continue
        threads = l.get("threads")
        g, n, r = median(l["gpukit_cpu_ms"]), median(l["ndarray_ms"]), median(l["ndarray_rayon_ms"])
        rows.append({"name": l["name"], "gpukit_cpu_ms": g, "ndarray_ms": n, "ndarray_rayon_ms": r,
                     "ratio_ndarray": n / g if g else None, "ratio_rayon": r / g if g else None,
                     "agree": l.get("agree")})
    return {"commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "threads": threads,
            "rows": rows}


def load(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def write_readme(dest: Path):
    (dest / "README.md").write_text(readme(load(dest / "results.json"), load(dest / "cpu.json")), encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("raw", type=Path)
    c.add_argument("--plan", type=Path)
    c.add_argument("--facts", type=Path)
    r = sub.add_parser("record")
    r.add_argument("run", type=Path)
    r.add_argument("--dest", type=Path, default=ROOT / "docs" / "bench")
    p = sub.add_parser("cpu")
    p.add_argument("raw", type=Path)
    p.add_argument("--commit", default="unknown")
    p.add_argument("--dest", type=Path, default=ROOT / "docs" / "bench")
    m = sub.add_parser("readme")
    m.add_argument("--dest", type=Path, default=ROOT / "docs" / "bench")
    args = ap.parse_args(argv)

    if args.cmd == "collect":
        plan = load(args.plan) if args.plan else {}
        facts = load(args.facts) if args.facts else {}
        res = collect(read_jsonl(args.raw), facts or {}, plan or {})
        print(json.dumps(res, indent=1))
        bad = [r["name"] for r in res["rows"] if not r["check_ok"]]
        for line in ceiling_text(res):
            print(f"bench: {line}", file=sys.stderr)
        for r in res["rows"]:
            print(f"{r['name']:<62} gpukit {fmt(r['gpukit_ms']):>9}  cupy {fmt(r['cupy_ms']):>9}  "
                  f"ratio {fmt(r['ratio']):>6}  wall {fmt(r['wall_ratio']):>6}  "
                  f"{fmt(r['pct_of_ceiling']):>5}% of {r['ceiling'] or '—':<10} {check_cell(r)}", file=sys.stderr)
        if bad:
            print(f"bench: checks failed or sides disagree for {bad}", file=sys.stderr)
        return 0
    dest = args.dest
    dest.mkdir(parents=True, exist_ok=True)
    if args.cmd == "record":
        src = args.run / "bench-results.json"
        if not src.is_file():
            print(f"bench-record: {src} not found (pass the files_at of the call that ran benches/run.sh)", file=sys.stderr)
            return 2
        shutil.copyfile(src, dest / "results.json")
        raw = args.run / "bench-raw.jsonl"
        if raw.is_file():
            shutil.copyfile(raw, dest / "raw.jsonl")
        diag = args.run / "bench-diagnostics.txt"
        if diag.is_file():
            shutil.copyfile(diag, dest / "diagnostics.txt")
    elif args.cmd == "cpu":
        (dest / "cpu.json").write_text(json.dumps(cpu_results(read_jsonl(args.raw), args.commit), indent=1) + "\n")
    write_readme(dest)
    print(f"wrote {dest / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
