"""Collects the ML rows (issue 18): gpukit-ml (`gpukit-bench ml`) against scikit-learn
(benches/sklearn_twin.py) and linfa (`gpukit-bench ml --linfa`, a build with feature `linfa`),
from the files benches/ml_run.sh leaves in one folder:

    <side>-r<round>.jsonl       one JSON line per row (side: gpukit, sklearn, linfa)
    <side>-r<round>-knn.i64     the KNN predictions of that call (little-endian int64)

    python benches/ml_collect.py DIR --json OUT.json --md OUT.md

For each row: each side's median wall time over every timed call of every round, and the ratio
CPU side / gpukit (above 1: gpukit is faster) where that side's check passed. KNN: the CPU
sides classify a subset of the queries (the first `queries` of gpukit's); the ratio is then of
queries per second, and the check compares the predictions query by query over that subset.

Checks (each CPU side against gpukit, every round of each side against its first):
- KNN: equal predictions. A query that differs is looked at in exact arithmetic (float64 of
  the float32 data, rebuilt from the formula in ml_data.py): if its 5th and 6th nearest
  squared distances are within `KNN_TIE_RTOL` x (|q|^2 + |r|^2) of each other (float32 GEMM
  rounding can order them either way), it is counted as a tie and allowed; any other
  difference fails the row.
- KMeans: linfa's KMeans is m_k-means (see ml_linfa.rs), not Lloyd: `n/a`, its time without a
  checked ratio. Otherwise the same number of iterations; centers within `KM_CENTER_TOL` (1e-6) x the largest
  |center| (max over elements); inertia within `KM_INERTIA_RTOL` (1e-9) relative. float64 on
  every side: with the same assignments the centers differ only by summation order (about
  1e-15); one point assigned to another center moves two centers by about 1e-4, which fails.
  (In float32, a trial of scikit-learn float32 against float64 on this data ended 20 iterations
  with 2697 of 1M labels and the centers 6e-3 of the largest apart: rounding decides points
  near a boundary and the differences grow; hence float64.)
- Ridge fit: max |coef - coef_ref| <= 1e-6 max |coef_ref| and |intercept - ref| <= 1e-6
  max(1, |ref|) (float64).
- Ridge predict: every sampled prediction within 1e-6 max(1, |ref|); sums within 1e-6 of the
  sum of |prediction|.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"^(gpukit|sklearn|linfa)-r(\d+)\.jsonl$")
CPU_SIDES = ("sklearn", "linfa")
KNN_TIE_RTOL = 1e-5
KM_CENTER_TOL = 1e-6
KM_INERTIA_RTOL = 1e-9
RIDGE_RTOL = 1e-6
ORDER = ["knn classify", "kmeans fit", "ridge fit", "ridge predict"]


def read_lines(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def read_preds(path: str):
    import numpy as np

    return np.fromfile(path, dtype="<i8")


def knn_check(ref_side: dict, other: dict, knn_tie=None) -> tuple[str, dict]:
    """Compares two KNN runs ({"line":..., "preds": array}) over the other's queries.
    Returns (check, details)."""
    q = int(other["line"]["result"]["queries"])
    a, b = ref_side["preds"], other["preds"]
    if a is None or b is None:
        return "FAIL (no predictions file)", {}
    if len(a) < q or len(b) < q:
        return f"FAIL (predictions: {len(a)} and {len(b)}, need {q})", {}
    differ = [i for i in range(q) if a[i] != b[i]]
    details = {"compared": q, "differ": len(differ), "ties": 0}
    if not differ:
        return "ok", details
    if len(differ) > 100:
        return f"FAIL ({len(differ)} of {q} predictions differ)", details
    ties = knn_tie(differ) if knn_tie else None
    if ties is None:
        return f"FAIL ({len(differ)} of {q} predictions differ; tie analysis unavailable)", details
    details["ties"] = sum(ties)
    bad = [i for i, t in zip(differ, ties) if not t]
    if bad:
        return f"FAIL ({len(bad)} of {q} predictions differ without a tie, e.g. query {bad[0]})", details
    return f"ok ({len(differ)} tie{'s' if len(differ) > 1 else ''} at the 5th neighbour)", details


def make_knn_tie(refs: int, k: int):
    """A function of differing query indices -> [is a tie], rebuilding the data once."""
    cache = {}

    def fn(queries):
        import ml_data as md

        if "x" not in cache:
            cache["x"], _ = md.knn_rows(0, refs)
        x = cache["x"]
        qs, _ = md.knn_rows(refs + min(queries), max(queries) - min(queries) + 1)
        return [md.knn_tie(x, qs[i - min(queries)], k, KNN_TIE_RTOL)[0] for i in queries]

    return fn


MK_MEANS = ("n/a (linfa's KMeans updates centers by m_k-means, the old center counting as one more "
            "point, not Lloyd's mean: different centers by design; time shown, ratio unchecked)")


def kmeans_check(a: dict, b: dict) -> str:
    if "m_k-means" in (a.get("algorithm"), b.get("algorithm")):
        return MK_MEANS
    if a.get("n_iter") is not None and b.get("n_iter") is not None and a["n_iter"] != b["n_iter"]:
        return f"FAIL (iterations {a['n_iter']} vs {b['n_iter']})"
    ca, cb = a["centers"], b["centers"]
    if len(ca) != len(cb) or any(len(x) != len(y) for x, y in zip(ca, cb)):
        return "FAIL (center shapes differ)"
    scale = max(abs(v) for c in cb for v in c) or 1.0
    diff = max(abs(x - y) for p, q in zip(ca, cb) for x, y in zip(p, q))
    if not diff <= KM_CENTER_TOL * scale:
        return f"FAIL (centers differ by {diff:.3g}, {diff / scale:.3g} of the largest)"
    ia, ib = a["inertia"], b["inertia"]
    if not abs(ia - ib) <= KM_INERTIA_RTOL * abs(ib):
        return f"FAIL (inertia {ia!r} vs {ib!r})"
    return f"ok (centers within {diff / scale:.1e} of the largest, inertia {abs(ia - ib) / abs(ib):.1e})"


def ridge_fit_check(a: dict, b: dict) -> str:
    ca, cb = a["coef"], b["coef"]
    if len(ca) != len(cb):
        return f"FAIL (coef lengths {len(ca)} vs {len(cb)})"
    scale = max(abs(v) for v in cb) or 1.0
    diff = max(abs(x - y) for x, y in zip(ca, cb))
    if not diff <= RIDGE_RTOL * scale:
        return f"FAIL (coef differ by {diff:.3g}, {diff / scale:.3g} relative)"
    di = abs(a["intercept"] - b["intercept"])
    if not di <= RIDGE_RTOL * max(1.0, abs(b["intercept"])):
        return f"FAIL (intercept {a['intercept']!r} vs {b['intercept']!r})"
    return f"ok (coef within {diff / scale:.1e})"


def ridge_predict_check(a: dict, b: dict) -> str:
    if len(a["samples"]) != len(b["samples"]):
        return "FAIL (sample counts differ)"
    for i, (x, y) in enumerate(zip(a["samples"], b["samples"])):
        if not abs(x - y) <= RIDGE_RTOL * max(1.0, abs(y)):
            return f"FAIL (sample {i}: {x!r} vs {y!r})"
    if not abs(a["sum"] - b["sum"]) <= RIDGE_RTOL * max(1.0, b["abs_sum"]):
        return f"FAIL (sums {a['sum']!r} vs {b['sum']!r})"
    return "ok"


def check_pair(op: str, ref: dict, other: dict, knn_tie=None) -> tuple[str, dict]:
    """ref, other: {"line": row line, "preds": array or None}."""
    ra, rb = ref["line"]["result"], other["line"]["result"]
    if op == "knn classify":
        return knn_check(ref, other, knn_tie)
    if op == "kmeans fit":
        return kmeans_check(ra, rb), {}
    if op == "ridge fit":
        return ridge_fit_check(ra, rb), {}
    if op == "ridge predict":
        return ridge_predict_check(ra, rb), {}
    return f"FAIL (unknown row {op})", {}


def collect(dirpath: str, runs: dict[str, list[dict]], knn_tie_factory=make_knn_tie) -> list[dict]:
    """runs: base name -> lines. Returns one result per operation."""
    by_op: dict[str, dict[str, list[dict]]] = {}
    for name in sorted(runs):
        m = NAME.match(name)
        if not m:
            continue
        side, rnd = m.group(1), int(m.group(2))
        for line in runs[name]:
            preds = None
            if line["op"] == "knn classify":
                path = os.path.join(dirpath, f"{side}-r{rnd}-knn.i64")
                preds = read_preds(path) if os.path.exists(path) else None
            by_op.setdefault(line["op"], {}).setdefault(side, []).append({"line": line, "preds": preds})
    out = []
    for op in sorted(by_op, key=lambda o: ORDER.index(o) if o in ORDER else len(ORDER)):
        sides = by_op[op]
        res: dict = {"op": op}
        g = sides.get("gpukit", [])
        knn_tie = None
        if op == "knn classify" and g:
            first = g[0]["line"]
            knn_tie = knn_tie_factory(int(first.get("refs", first["rows"])), int(first["result"].get("k", 5)))
        for side, runs_of in sides.items():
            walls = [x for r in runs_of for x in r["line"]["wall_ms"] if x is not None]
            first = runs_of[0]["line"]
            res[f"{side}_ms"] = statistics.median(walls) if walls else None
            res[f"{side}_wall_ms"] = walls
            res[f"{side}_rows"] = first["rows"]
            res[f"{side}_device"] = first.get("device", "")
            res[f"{side}_note"] = first.get("note", "")
            if op == "knn classify":
                res[f"{side}_queries"] = int(first["result"]["queries"])
                res[f"{side}_accuracy"] = first["result"].get("accuracy")
            if op == "kmeans fit":
                res[f"{side}_n_iter"] = first["result"].get("n_iter")
            for field in ("device_peak_bytes", "pool_reserved_bytes", "host_peak_rss_bytes"):
                vals = [int(r["line"][field]) for r in runs_of if field in r["line"]]
                if vals:
                    res[f"{side}_{field}"] = max(vals)
            # every round against the first
            for i, r in enumerate(runs_of[1:], 2):
                c, _ = check_pair(op, runs_of[0], r, knn_tie)
                if not c.startswith("ok"):
                    res[f"{side}_rounds"] = f"FAIL (round {i} differs from round 1: {c})"
                    break
        for side in CPU_SIDES:
            if side not in sides:
                continue
            if not g:
                res[f"{side}_check"] = "FAIL (gpukit: no result)"
                res[f"{side}_ratio"] = None
                continue
            check, details = check_pair(op, sides[side][0], g[0], knn_tie) if op != "knn classify" else \
                check_pair(op, g[0], sides[side][0], knn_tie)
            for who in ("gpukit", side):
                if f"{who}_rounds" in res:
                    check = res[f"{who}_rounds"]
            res[f"{side}_check"] = check
            if details:
                res[f"{side}_knn"] = details
            gm, cm = res.get("gpukit_ms"), res.get(f"{side}_ms")
            ratio = None
            if check.startswith("ok") and gm and cm:
                if op == "knn classify":
                    ratio = (cm / res[f"{side}_queries"]) / (gm / res["gpukit_queries"])
                else:
                    ratio = cm / gm
            res[f"{side}_ratio"] = ratio
            if check.startswith("n/a") and gm and cm:
                res[f"{side}_ratio_unchecked"] = cm / gm
        out.append(res)
    return out


def gib(b) -> str:
    return "" if not b else f"{b / 2**30:.2f}"


def fmt_ms(x) -> str:
    return "" if x is None else (f"{x:.1f}" if x >= 10 else f"{x:.3f}")


def fmt_ratio(x) -> str:
    return "" if x is None else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def ratio_cell(r: dict, side: str) -> str:
    if r.get(f"{side}_ratio") is None and r.get(f"{side}_ratio_unchecked") is not None:
        return f"({fmt_ratio(r[f'{side}_ratio_unchecked'])}, unchecked)"
    return fmt_ratio(r.get(f"{side}_ratio"))


def size_of(r: dict) -> str:
    n = r.get("gpukit_rows") or r.get("sklearn_rows") or r.get("linfa_rows") or 0
    if r["op"] == "knn classify":
        q = r.get("gpukit_queries", "?")
        return f"{q:,} queries x {n:,} refs x 64" if isinstance(q, int) else f"{n:,} refs x 64"
    return f"{n:,} x 64"


def cell_ms(r: dict, side: str) -> str:
    ms = fmt_ms(r.get(f"{side}_ms"))
    if ms and r["op"] == "knn classify" and side != "gpukit":
        return f"{ms} ({r[f'{side}_queries']:,} q)"
    return ms


def markdown(results: list[dict]) -> str:
    lines = [
        "| row | size | gpukit ms | scikit-learn ms | sklearn / gpukit | sklearn check | linfa ms "
        "| linfa / gpukit | linfa check | gpukit device peak GiB | gpukit pool GiB | host peak RSS GiB "
        "(gpukit / sklearn / linfa) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rss = " / ".join(gib(r.get(f"{s}_host_peak_rss_bytes")) or "-" for s in ("gpukit", "sklearn", "linfa"))
        lines.append(
            f"| {r['op']} | {size_of(r)} | {fmt_ms(r.get('gpukit_ms'))} | {cell_ms(r, 'sklearn')} "
            f"| {ratio_cell(r, 'sklearn')} | {r.get('sklearn_check', '')} | {cell_ms(r, 'linfa')} "
            f"| {ratio_cell(r, 'linfa')} | {r.get('linfa_check', '')} "
            f"| {gib(r.get('gpukit_device_peak_bytes'))} | {gib(r.get('gpukit_pool_reserved_bytes'))} | {rss} |"
        )
    lines.append("")
    for side in ("gpukit", "sklearn", "linfa"):
        dev = next((r[f"{side}_device"] for r in results if r.get(f"{side}_device")), None)
        if dev:
            lines.append(f"- {side}: {dev}")
    knn = next((r for r in results if r["op"] == "knn classify"), None)
    if knn:
        acc = ", ".join(
            f"{s} {knn[f'{s}_accuracy']:.4f}" for s in ("gpukit", "sklearn", "linfa")
            if knn.get(f"{s}_accuracy") is not None
        )
        lines.append(
            "- KNN: the CPU sides classify the first queries only (count in brackets); the ratio is "
            f"of queries per second. Accuracy against the generating classes: {acc}."
        )
    km = next((r for r in results if r["op"] == "kmeans fit"), None)
    if km:
        its = ", ".join(f"{s} {km[f'{s}_n_iter']}" for s in ("gpukit", "sklearn", "linfa") if f"{s}_n_iter" in km)
        lines.append(f"- KMeans iterations: {its}.")
    lines.append("- Times: median wall ms over every timed call of every round; ratio above 1: gpukit is faster.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--json", required=True)
    p.add_argument("--md", required=True)
    a = p.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    runs = {
        os.path.basename(f): read_lines(f)
        for f in glob.glob(os.path.join(a.dir, "*.jsonl"))
        if NAME.match(os.path.basename(f))
    }
    results = collect(a.dir, runs)
    with open(a.json, "w") as f:
        json.dump({"rows": results}, f, indent=1)
    md = markdown(results)
    with open(a.md, "w") as f:
        f.write(md)
    print(md)
    ok = all(r.get(f"{s}_check", "ok").startswith(("ok", "n/a")) for r in results for s in CPU_SIDES)
    return 0 if ok and results else 1


if __name__ == "__main__":
    sys.exit(main())
