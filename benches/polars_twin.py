"""Polars' side of the frame rows (issue 17): the same operations as `gpukit-bench frame`
(benches/gpukit-bench/src/frame_rows.rs) on the same pageview CSV, with Polars on every CPU
core, timed the same way, and the same digests of every result (frame_digest.rs).

    python benches/polars_twin.py --csv PATH --rows N [--reps R] [--warmup W]
                                  [--read-reps K] [--digests PATH] [--tmp DIR]
    python benches/polars_twin.py --self-test     the digests against the shared examples

One JSON line per row on stdout, in the Rust side's format (side "polars"); digests, one JSON
line per row, to --digests. Timing: `time.perf_counter()` around the call (Polars is eager and
returns finished results), `warmup` untimed calls, then `reps` timed ones.

Semantics matched to gpukit-frame (what each of its operations documents):
- filter: Kleene logic; only true rows are kept (Polars' `filter`).
- group-by: gpukit sorts the groups by key; Polars' order is unspecified, so `.sort("project")`
  is part of the timed call (a few hundred rows).
- sort: stable (`maintain_order=True`), nulls last.
- join: gpukit keeps left row order and each left row's matches in right order: Polars'
  `maintain_order="left"`.
- rolling mean: `min_samples = window` (gpukit's `RollingOptions::new(window)`), f64.
- contains: a literal pattern (`literal=True`).

Digests (the same arithmetic as frame_digest.rs, wrapping u64): integers sum `(2i+1) * c_i`
with `c_i` the value's two's-complement bits (`NULL_CODE` for nulls); strings: each row's
UTF-8 bytes plus `\\n`, concatenated, zero-padded to 8 bytes, summed as little-endian u64
words `(2k+1) * w_k`. The string digest needs the column's bytes: Polars writes the column as
CSV without quoting into --tmp (the titles hold no separator, quote or newline) and numpy reads
the file back; this happens after the timed calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hosttiming import host_memory, timed  # noqa: E402

NULL_CODE = 0x9E3779B97F4A7C15
WINDOW = 100
PATTERN = "an"
MASK = (1 << 64) - 1
CHUNK = 1 << 24


def digest_ints(values, valid=None) -> int:
    """frame_digest::digest_ints: values (int64-like), valid (bool array or None)."""
    v = np.asarray(values, dtype=np.int64).view(np.uint64).copy()
    if valid is not None and len(valid):
        v[~np.asarray(valid, dtype=bool)] = np.uint64(NULL_CODE)
    total = np.uint64(0)
    with np.errstate(over="ignore"):
        for start in range(0, len(v), CHUNK):
            part = v[start : start + CHUNK]
            w = np.arange(start, start + len(part), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
            total = total + np.sum(part * w, dtype=np.uint64)
    return int(total) & MASK


def digest_joined_bytes(data) -> tuple[int, int]:
    """The string digest of rows already joined as `row\\n` bytes (a bytes-like or uint8 array)."""
    b = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    n = len(b)
    pad = (-n) % 8
    if pad:
        b = np.concatenate([b, np.zeros(pad, dtype=np.uint8)])
    words = b.view("<u8")
    total = np.uint64(0)
    with np.errstate(over="ignore"):
        for start in range(0, len(words), CHUNK):
            part = words[start : start + CHUNK]
            w = np.arange(start, start + len(part), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
            total = total + np.sum(part * w, dtype=np.uint64)
    return int(total) & MASK, n


def digest_strings(rows) -> tuple[int, int]:
    """frame_digest::digest_strings for a list of str or None (None: a null row)."""
    data = b"".join((r.encode("utf-8") if r is not None else b"") + b"\n" for r in rows)
    return digest_joined_bytes(data)


def quantise(values, scale: float) -> np.ndarray:
    """round(v * scale), half away from zero (Rust's f64::round), as int64; NaN becomes 0."""
    x = np.asarray(values, dtype=np.float64) * scale
    r = np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))
    return np.nan_to_num(r, nan=0.0).astype(np.int64)


def hex16(d: int) -> str:
    return f"{d:016x}"


# ---- digests of Polars results (need polars objects) ----


def series_ints(s):
    """(int64 values with nulls as 0, valid mask or None) of an integer/boolean Series."""
    nulls = s.null_count()
    valid = s.is_not_null().to_numpy() if nulls else None
    v = s.fill_null(0).cast(__import__("polars").Int64).to_numpy()
    return v, valid


def int_digest(s) -> dict:
    v, valid = series_ints(s)
    return {
        "rows": len(s),
        "nulls": s.null_count(),
        "sum": str(int(np.sum(v.astype(np.int64), dtype=np.int64))),
        "digest": hex16(digest_ints(v, valid)),
    }


def quantised_digest(s, scale: float) -> dict:
    nulls = s.null_count()
    valid = s.is_not_null().to_numpy() if nulls else None
    v = quantise(s.fill_null(0.0).to_numpy(), scale)
    return {"rows": len(s), "nulls": nulls, "digest": hex16(digest_ints(v, valid))}


def string_digest(s, tmp: str) -> dict:
    import polars as pl

    path = os.path.join(tmp, f"polars-twin-str-{os.getpid()}.txt")
    try:
        # Nulls are written as empty fields: the row's bytes are then only its "\n", as in Rust.
        pl.DataFrame({"s": s}).write_csv(path, include_header=False, quote_style="never")
        data = np.fromfile(path, dtype=np.uint8)
    finally:
        if os.path.exists(path):
            os.remove(path)
    d, n = digest_joined_bytes(data)
    return {"rows": len(s), "nulls": s.null_count(), "bytes": n, "digest": hex16(d)}


def group_table(g) -> dict:
    rows = [
        [p, int(n), int(total), float(mean)]
        for p, n, total, mean in zip(
            g["project"].to_list(), g["len"].to_list(), g["requests"].to_list(), g["mean"].to_list()
        )
    ]
    return {"count": g.height, "table": rows}


# ---- the rows ----


def row_json(op: str, rows: int, wall_ms, note: str, threads: int) -> dict:
    rss, hwm = host_memory()
    return {
        "side": "polars",
        "name": f"frame {op}, {rows} rows",
        "op": op,
        "rows": rows,
        "unit": "wall",
        "span_ms": [],
        "host_ms": [],
        "wall_ms": wall_ms,
        "verify": None,
        "check": [],
        "bytes": 0.0,
        "access": "",
        "span": "host clock around the eager call",
        "note": note,
        "device": f"cpu ({threads} Polars threads)",
        "host_rss_bytes": rss,
        "host_peak_rss_bytes": hwm,
    }


def run(args, emit, emit_digest) -> None:
    import polars as pl

    threads = pl.thread_pool_size()
    print(f"polars {pl.__version__}, thread_pool_size {threads}", file=sys.stderr)
    n = args.rows
    w, reps = args.warmup, args.reps

    def out(op, times, note, digest):
        med = float(np.median(times))
        print(f"polars: frame {op}, {n} rows: {med:10.3f} ms (median of {len(times)})", file=sys.stderr)
        emit(row_json(op, n, times, note, threads))
        emit_digest({"side": "polars", "op": op, "rows": n, "digest": digest})

    schema = {"project": pl.String, "page_title": pl.String, "requests": pl.Int64, "bytes": pl.Int64}

    def read():
        return pl.read_csv(
            args.csv, separator=" ", has_header=False, schema=schema, quote_char=None,
            empty_string_is_null=False,
        )

    times, df = timed(read, 0, args.read_reps)
    if df.height != n:
        raise SystemExit(f"{args.csv} has {df.height} rows, --rows says {n}")
    out("read csv", times, "pl.read_csv, every core",
        {"count": df.height, "requests": int_digest(df["requests"]), "bytes": int_digest(df["bytes"])})

    times, r = timed(lambda: df.filter((pl.col("requests") > 10) & (pl.col("project") == "en")), w, reps)
    out("filter+count", times, "requests > 10 & project == \"en\"; the whole filtered frame",
        {"count": r.height, "requests": int_digest(r["requests"]), "bytes": int_digest(r["bytes"])})

    def group():
        return (
            df.group_by("project")
            .agg(pl.len(), pl.col("requests").sum(), pl.col("requests").mean().alias("mean"))
            .sort("project")
        )

    times, g = timed(group, w, reps)
    out("group-by sum/mean", times, "by project: len, sum and mean of requests; then sorted by project",
        group_table(g))

    times, r = timed(lambda: df.sort("requests", descending=True, maintain_order=True, nulls_last=True), w, reps)
    out("sort", times, "the whole frame by requests, descending, stable",
        {"count": r.height, "requests": int_digest(r["requests"]), "bytes": int_digest(r["bytes"])})
    del r

    projects = g["project"].to_list()
    small = pl.DataFrame(
        {"project": [p for i, p in enumerate(projects) if i % 2 == 0],
         "rank": [i for i in range(len(projects)) if i % 2 == 0]},
        schema={"project": pl.String, "rank": pl.Int64},
    )
    times, r = timed(lambda: df.join(small, on="project", how="inner", maintain_order="left"), w, reps)
    out("join", times, "inner, on project, maintain_order=\"left\"",
        {"count": r.height, "requests": int_digest(r["requests"]), "rank": int_digest(r["rank"])})
    del r

    titles = df["page_title"]
    times, r = timed(lambda: titles.str.to_uppercase(), w, reps)
    out("str upper", times, "page_title.str.to_uppercase()", string_digest(r, args.tmp))
    del r

    times, r = timed(lambda: titles.str.contains(PATTERN, literal=True), w, reps)
    out("str contains", times, "page_title.str.contains(\"an\", literal=True)", int_digest(r))

    req = df["requests"]
    times, r = timed(lambda: req.rolling_mean(WINDOW, min_samples=WINDOW), w, reps)
    out("rolling mean", times, "requests.rolling_mean(100, min_samples=100)", quantised_digest(r, WINDOW))


def self_test() -> None:
    """The shared examples of frame_digest.rs's tests."""
    assert digest_ints([3, -1, 0, 7], np.array([True, True, False, True])) == 1663341875487337626
    assert digest_strings(["ab", "Zürich", None, "東京"]) == (1695489216003111724, 19)
    print("digests agree with the shared examples")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--csv")
    p.add_argument("--rows", type=int)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--read-reps", type=int, default=1)
    p.add_argument("--digests")
    p.add_argument("--tmp", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args(argv)
    if args.self_test:
        self_test()
        return 0
    if not args.csv or args.rows is None:
        p.error("--csv and --rows are needed")
    digests = []
    run(args, lambda j: print(json.dumps(j), flush=True), digests.append)
    if args.digests:
        with open(args.digests, "w") as f:
            for d in digests:
                f.write(json.dumps(d) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
