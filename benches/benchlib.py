#!/usr/bin/env python3
"""Benchmark results: merge both sides, check them against each other, write results.json and the
README table (standard library only).

    benchlib.py collect RAW.jsonl --plan PLAN.json [--facts FACTS.json] > results.json   (device)
    benchlib.py record RUN_DIR [--dest docs/bench]     (here) results.json + README.md from a fetched run
    benchlib.py cpu CPU.jsonl [--dest docs/bench]      (here) cpu.json + README.md from `gpukit-bench cpu`
    benchlib.py readme [--dest docs/bench]             regenerate README.md from results.json and cpu.json

results.json (issue 6): device, driver, commit, date, ceiling_copy_gbps, rows: [{name, gpukit_ms,
cupy_ms, ratio, metric, value, pct_of_ceiling, ...}] with ratio = cupy_ms / gpukit_ms (above 1 means
gpukit is faster). Times are medians over every timed repetition of every round.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: Workloads of issue 6 that gpukit has no API for yet (kept in results.json as `missing`).
NOT_YET = [
    ("sort (float64, 10000x5000, last axis)", "gpukit has no sort yet"),
    ("SVD (float64, 1000x1000)", "gpukit has no SVD (cuSOLVER) yet"),
    ("matmul (float32, 8192^2)", "gpukit has no matmul (cuBLAS) yet"),
    ("matmul (float64, 8192^2)", "gpukit has no matmul (cuBLAS) yet"),
    ("random (float64, 10000x5000)", "gpukit has no random (cuRAND) yet"),
]


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


def side_ms(samples: list[dict]) -> tuple[float | None, float | None, str]:
    """(median event time or, where the side launched no kernel, median wall time; median wall
    time; which one the first is)."""
    gpu = [v for s in samples for v in s.get("gpu_ms", []) if v is not None]
    wall = [v for s in samples for v in s.get("wall_ms", []) if v is not None]
    if gpu:
        return median(gpu), median(wall), "events"
    return median(wall), median(wall), "wall"


def collect(lines: list[dict], facts: dict, plan: dict) -> dict:
    ceil = {}
    # "cudarc" is a reference side: the plainest raw-cudarc kernel for a few rows (gpukit-bench)
    sides: dict[str, dict[str, list[dict]]] = {"gpukit": {}, "cupy": {}, "cudarc": {}}
    order: list[str] = []
    for l in lines:
        if l.get("side") == "ceilings":
            ceil.update({k: v for k, v in l.items() if k != "side"})
        elif l.get("side") in sides:
            if l["name"] not in order and l["side"] != "cudarc":
                order.append(l["name"])
            sides[l["side"]].setdefault(l["name"], []).append(l)
    copy = ceil.get("copy_gbps")
    rows = []
    for name in order:
        g, c = sides["gpukit"].get(name), sides["cupy"].get(name)
        ref = (g or c)[0]
        unit, nbytes = ref.get("unit", "op"), float(ref.get("bytes") or 0)
        g_ms, g_wall, g_how = side_ms(g) if g else (None, None, None)
        c_ms, c_wall, c_how = side_ms(c) if c else (None, None, None)
        agree = bool(g and c) and all(checks_agree(x["check"], y["check"], tolerance(name))
                                      for x in g for y in c)
        row = {"name": name, "gpukit_ms": g_ms, "cupy_ms": c_ms, "ratio": None, "metric": None, "value": None,
               "pct_of_ceiling": None, "gpukit_wall_ms": g_wall, "cupy_wall_ms": c_wall,
               "timing": {"gpukit": g_how, "cupy": c_how}, "check_ok": agree, "unit": unit,
               "rounds": {"gpukit": len(g or []), "cupy": len(c or [])}}
        if not agree and g and c:
            row["check"] = {"gpukit": g[0]["check"], "cupy": c[0]["check"]}
        if g_ms and c_ms and agree:
            row["ratio"] = c_ms / g_ms
        r = sides["cudarc"].get(name)
        if r:
            r_ms, r_wall, _ = side_ms(r)
            r_agree = bool(g) and all(checks_agree(x["check"], y["check"], tolerance(name)) for x in g for y in r)
            row["cudarc_ms"], row["cudarc_wall_ms"], row["cudarc_check_ok"] = r_ms, r_wall, r_agree
            if g_ms and r_ms and r_agree:
                row["ratio_vs_cudarc"] = r_ms / g_ms
        if unit == "per_launch" and g_ms is not None:
            row["metric"], row["value"] = "us_per_launch_host", g_ms * 1e3
        elif nbytes and g_ms:
            row["metric"], row["value"] = "GB/s", nbytes / (g_ms * 1e-3) / 1e9
            if "to_device" in name and ceil.get("h2d_pinned_gbps"):
                row["pct_of_ceiling"] = 100 * row["value"] / ceil["h2d_pinned_gbps"]
                row["ceiling"] = "h2d_pinned_gbps"
            elif "to_host" in name and ceil.get("d2h_pinned_gbps"):
                row["pct_of_ceiling"] = 100 * row["value"] / ceil["d2h_pinned_gbps"]
                row["ceiling"] = "d2h_pinned_gbps"
            elif copy:
                row["pct_of_ceiling"] = 100 * row["value"] / copy
                row["ceiling"] = "copy_gbps"
        for k in ("gpukit_ms", "cupy_ms", "ratio", "value", "pct_of_ceiling", "gpukit_wall_ms", "cupy_wall_ms",
                  "cudarc_ms", "cudarc_wall_ms", "ratio_vs_cudarc"):
            if isinstance(row.get(k), float):
                row[k] = round(row[k], 6 if row[k] < 1 else 4)
        rows.append(row)
    return {
        "device": facts.get("device", "unknown"),
        "driver": facts.get("driver", "unknown"),
        "cuda": facts.get("cuda", "unknown"),
        "commit": plan.get("commit", "unknown"),
        "dirty": bool(plan.get("dirty")),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "ceiling_copy_gbps": round(copy, 1) if copy else None,
        "ceilings": {k: round(v, 4) for k, v in ceil.items()},
        "rows": rows,
        "missing": [{"name": n, "why": w} for n, w in NOT_YET],
    }


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


#: Rows of elementwise work and reductions, held to the copy-ceiling target.
BANDWIDTH_ROWS = ("a * 2", "lesson 5.0", "sum", "mean", "max")


def targets(results: dict) -> list[str]:
    """One line per target of issue 6: met, or which rows miss it and by how much."""
    rows = results["rows"]
    lines = []
    below = [f"{r['name']} ({fmt(r['ratio'])})" for r in rows if r["ratio"] is not None and r["ratio"] < 1.0]
    unrated = [r["name"] for r in rows if r["ratio"] is None]
    lines.append("ratio ≥ 1.0 on every row: " + ("met" if not below and not unrated else
                 "; ".join(x for x in ("below: " + ", ".join(below) if below else "",
                                       "no ratio: " + ", ".join(unrated) if unrated else "") if x)))
    bw = [r for r in rows if r["name"].startswith(BANDWIDTH_ROWS) and r["pct_of_ceiling"] is not None]
    low = [f"{r['name']} ({fmt(r['pct_of_ceiling'])}%)" for r in bw if r["pct_of_ceiling"] < 90]
    lines.append(f"elementwise and reductions ≥ 90% of the copy ceiling: "
                 + (f"met ({fmt(min(r['pct_of_ceiling'] for r in bw))}% or more)" if bw and not low else
                    "below: " + ", ".join(low) if low else "not measured"))
    launch = [r for r in rows if r["unit"] == "per_launch" and r["value"] is not None]
    slow = [f"{r['name']} ({fmt(r['value'])} µs)" for r in launch if r["value"] > 3.0]
    lines.append("per-launch host overhead ≤ 3 µs: " + ("met" if launch and not slow else
                 "above: " + ", ".join(slow) if slow else "not measured"))
    pageable = [r for r in rows if "pageable" in r["name"] and r["pct_of_ceiling"] is not None]
    short = [f"{r['name']} ({fmt(r['pct_of_ceiling'])}%)" for r in pageable if r["pct_of_ceiling"] < 80]
    lines.append("pageable to_device / to_host ≥ 80% of the pinned link rate: " + (
        "met" if pageable and not short else "below: " + ", ".join(short) if short else "not measured"))
    return lines


def readme(results: dict | None, cpu: dict | None) -> str:
    out = ["# Benchmarks: gpukit against CuPy",
           "",
           "Generated by `make bench-record` (GPU rows, from a device run of `benches/run.sh`) and "
           "`make bench-cpu` (CPU rows, this machine); do not edit by hand. Method: "
           "[benches/README.md](../../benches/README.md).",
           ""]
    if results:
        c = results.get("ceilings", {})
        out += [f"## GPU: {results['device']} (driver {results['driver']}, CUDA {results.get('cuda', '?')})",
                "",
                f"Commit `{results['commit'][:12]}`{' (with uncommitted changes)' if results.get('dirty') else ''}, "
                f"{results['date']}. Ceilings measured in the same run: device-to-device copy "
                f"**{fmt(results.get('ceiling_copy_gbps'))} GB/s** (read + write); cuBLAS GEMM 8192² "
                f"{fmt(c.get('gemm_tflops_float32'))} TFLOP/s float32, {fmt(c.get('gemm_tflops_float64'))} float64; "
                f"pinned host→device {fmt(c.get('h2d_pinned_gbps'))} GB/s, device→host {fmt(c.get('d2h_pinned_gbps'))} GB/s.",
                "",
                "`ratio` = CuPy time / gpukit time (above 1: gpukit is faster). Times are medians, in ms "
                "(µs per launch for the launch rows); `check` says whether both sides computed the same result.",
                "",
                "`raw cudarc` is a reference: the plainest kernel (one element per thread) or launch call "
                "written directly against cudarc, with `vs cudarc` = its time / gpukit's.",
                "",
                "| workload | gpukit ms | CuPy ms | ratio | gpukit rate | % of ceiling | check | raw cudarc ms | vs cudarc |",
                "|---|---:|---:|---:|---:|---:|:---:|---:|---:|"]
        for r in results["rows"]:
            per = r["unit"] == "per_launch"
            g = r["gpukit_ms"] * 1e3 if per and r["gpukit_ms"] is not None else r["gpukit_ms"]
            cu = r["cupy_ms"] * 1e3 if per and r["cupy_ms"] is not None else r["cupy_ms"]
            rate = (f"{fmt(r['value'])} µs/launch" if per else f"{fmt(r['value'])} GB/s") if r["value"] is not None else "—"
            rd = r.get("cudarc_ms")
            rd = rd * 1e3 if per and rd is not None else rd
            ref = (f"{fmt(rd)}{' µs' if per else ''}{'' if r.get('cudarc_check_ok') else ' (MISMATCH)'}"
                   if rd is not None else "—")
            out.append(f"| {r['name']} | {fmt(g)}{' µs' if per and g is not None else ''} | "
                       f"{fmt(cu)}{' µs' if per and cu is not None else ''} | {fmt(r['ratio'])} | {rate} | "
                       f"{fmt(r['pct_of_ceiling'])} | {'ok' if r['check_ok'] else 'MISMATCH'} | {ref} | "
                       f"{fmt(r.get('ratio_vs_cudarc'))} |")
        out += ["", "### Against the targets (issue 6)", ""] + [f"- {t}" for t in targets(results)]
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
        for r in res["rows"]:
            print(f"{r['name']:<62} gpukit {fmt(r['gpukit_ms']):>9}  cupy {fmt(r['cupy_ms']):>9}  "
                  f"ratio {fmt(r['ratio']):>6}  {'' if r['check_ok'] else 'CHECK MISMATCH'}", file=sys.stderr)
        if bad:
            print(f"bench: results disagree for {bad}", file=sys.stderr)
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
