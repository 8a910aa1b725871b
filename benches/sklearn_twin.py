"""scikit-learn's side of the ML rows (issue 18): the same models as `gpukit-bench ml`
(benches/gpukit-bench/src/ml_rows.rs) on the same data (benches/ml_data.py: a formula of the
index, no files), on every CPU core, timed the same way, with what the checks need.

    python benches/sklearn_twin.py [--knn-refs N] [--knn-queries Q] [--kmeans-rows N]
        [--ridge-rows N] [--reps R] [--warmup W] [--only knn,kmeans,ridge] [--preds PATH]
    python benches/sklearn_twin.py --self-test     the data formula against the shared examples

Rows (one JSON line each on stdout, in gpukit-bench's format, side "sklearn"):
- `knn classify`: `KNeighborsClassifier(n_neighbors=5, algorithm="brute", n_jobs=-1)`, fit on
  the `--knn-refs` (1M) reference rows, predict the first `--knn-queries` query rows (a subset
  of gpukit's 100k: the CPU would need minutes for all; the collector compares queries/s). The
  timed call is fit + predict (fit only stores the references). The predictions go to --preds
  (little-endian int64) for the collector, which compares them with gpukit's query by query.
- `kmeans fit`: `KMeans(100, init=x[:100], n_init=1, max_iter=20, tol=0, algorithm="lloyd")`
  on `--kmeans-rows` (1M) x 64 float64. Result: centers, inertia, n_iter. (scikit-learn stops
  early only when no label changed, "strict convergence"; n_iter says whether it did.)
- `ridge fit`: `Ridge(alpha=1.0, solver="cholesky")` (fit_intercept: x and y centred, then the
  normal equations) on `--ridge-rows` (10M) x 64 float64. Result: coef, intercept.
- `ridge predict`: `predict` of the same rows with the fitted model. Result: the sum and sum of
  |.| of the predictions and 16 sampled values.

Timing: `time.perf_counter()` around the call, `warmup` untimed calls, then `reps` timed ones.
The data is built before the timed calls (its time goes to stderr). Threads: scikit-learn's
OpenMP and BLAS pools default to every core; threadpoolctl's view is printed and kept in
`device`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ml_data as md  # noqa: E402
from hosttiming import host_memory, timed  # noqa: E402

K = 5
CLUSTERS = 100
ITERS = 20
ALPHA = 1.0
SAMPLES = 16

FULL = {"knn_refs": 1_000_000, "knn_queries": 4000, "kmeans_rows": 1_000_000, "ridge_rows": 10_000_000}


def sample_indices(n: int) -> list[int]:
    """The prediction rows the ridge predict row reports (the same on every side)."""
    return sorted({(i * (n - 1)) // (SAMPLES - 1) for i in range(SAMPLES)}) if n > 1 else [0]


def thread_info() -> str:
    cores = os.cpu_count() or 1
    try:
        from threadpoolctl import threadpool_info

        pools = ", ".join(f"{p.get('internal_api')} {p.get('num_threads')}" for p in threadpool_info())
    except Exception as e:  # threadpoolctl missing or failing: say so, do not stop
        pools = f"threadpoolctl: {e}"
    return f"cpu ({cores} cores; {pools})"


def row_json(side: str, op: str, n: int, wall_ms, note: str, device: str, result: dict, **extra) -> dict:
    rss, hwm = host_memory()
    return {
        "side": side,
        "name": f"ml {op}, {n} rows",
        "op": op,
        "rows": n,
        "unit": "wall",
        "wall_ms": wall_ms,
        "span": "host clock around the call",
        "note": note,
        "device": device,
        "host_rss_bytes": rss,
        "host_peak_rss_bytes": hwm,
        "result": result,
        **extra,
    }


def run(args, emit) -> None:
    import sklearn
    from sklearn.cluster import KMeans
    from sklearn.linear_model import Ridge
    from sklearn.neighbors import KNeighborsClassifier

    device = thread_info()
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}; {device}", file=sys.stderr)
    only = set(args.only.split(",")) if args.only else {"knn", "kmeans", "ridge"}
    w, reps = args.warmup, args.reps

    def out(op, n, times, note, result, **extra):
        med = float(np.median(times))
        print(f"sklearn: ml {op}, {n} rows: {med:10.3f} ms (median of {len(times)})", file=sys.stderr)
        emit(row_json("sklearn", op, n, times, note, device, result, **extra))

    def gen(what, fn):
        t = time.perf_counter()
        r = fn()
        print(f"sklearn: {what} built in {time.perf_counter() - t:.2f} s", file=sys.stderr)
        return r

    if "knn" in only:
        n, q = args.knn_refs, args.knn_queries
        x, y = gen(f"knn data ({n} refs)", lambda: md.knn_rows(0, n))
        xq, yq = gen(f"knn queries ({q})", lambda: md.knn_rows(n, q))

        def knn():
            m = KNeighborsClassifier(n_neighbors=K, algorithm="brute", n_jobs=-1)
            return m.fit(x, y).predict(xq)

        times, pred = timed(knn, w, reps)
        pred = np.asarray(pred, dtype=np.int64)
        if args.preds:
            pred.astype("<i8").tofile(args.preds)
        out("knn classify", n, times,
            f"KNeighborsClassifier(5, algorithm='brute', n_jobs=-1): fit + predict of {q} queries, float32",
            {"queries": q, "k": K, "accuracy": float(np.mean(pred == yq)),
             "pred_sum": int(pred.sum()), "preds_file": os.path.basename(args.preds or "")},
            queries=q, refs=n)
        del x, y, xq, yq

    if "kmeans" in only:
        n = args.kmeans_rows
        x = gen(f"kmeans data ({n} rows)", lambda: md.kmeans_rows(n))
        init = x[:CLUSTERS].copy()

        def fit():
            return KMeans(CLUSTERS, init=init, n_init=1, max_iter=ITERS, tol=0.0, algorithm="lloyd").fit(x)

        times, m = timed(fit, w, reps)
        out("kmeans fit", n, times,
            "KMeans(100, init=x[:100], n_init=1, max_iter=20, tol=0, algorithm='lloyd'), float64",
            {"n_iter": int(m.n_iter_), "inertia": float(m.inertia_),
             "centers": [[float(v) for v in c] for c in m.cluster_centers_]})
        del x, m

    if "ridge" in only:
        n = args.ridge_rows
        x, y = gen(f"ridge data ({n} rows)", lambda: md.ridge_rows(n))

        times, m = timed(lambda: Ridge(alpha=ALPHA, solver="cholesky").fit(x, y), w, reps)
        out("ridge fit", n, times, "Ridge(alpha=1, solver='cholesky'), fit_intercept, float64",
            {"coef": [float(v) for v in m.coef_], "intercept": float(m.intercept_)})

        times, p = timed(lambda: m.predict(x), w, reps)
        out("ridge predict", n, times, "predict of the training rows, float64",
            {"sum": float(np.sum(p)), "abs_sum": float(np.sum(np.abs(p))),
             "samples": [float(p[i]) for i in sample_indices(n)]})


def self_test() -> None:
    """The shared examples (ml_data.rs's tests check the same numbers)."""
    for x, expected in SHARED_MIX:
        got = int(md.mix(np.array([x], dtype=np.uint64))[0])
        assert got == expected, (x, hex(got), hex(expected))
    x, y = md.knn_rows(0, 3)
    assert y.tolist() == SHARED_KNN_LABELS, y.tolist()
    assert [float(v) for v in x[2, :3]] == SHARED_KNN_ROW2, x[2, :3].tolist()
    xk = md.kmeans_rows(2)
    assert [float(v) for v in xk[1, :3]] == SHARED_KMEANS_ROW1, xk[1, :3].tolist()
    xr, yr = md.ridge_rows(2)
    assert float(yr[1]) == SHARED_RIDGE_Y1, repr(float(yr[1]))
    print("the data formula agrees with the shared examples")


# The shared examples: mix() of 0 and 1 (mix(0) is splitmix64's well-known first output for
# seed 0), the first KNN labels, the first values of a KNN and a KMeans row, and a Ridge target; ml_data.rs's tests assert the same literals.
SHARED_MIX = [(0, 0xE220A8397B1DCDAF), (1, 0x910A2DEC89025CC1)]
SHARED_KNN_LABELS = [1, 9, 8]
SHARED_KNN_ROW2 = [1.39533531665802, 0.6319046020507812, 1.6808738708496094]
SHARED_KMEANS_ROW1 = [-0.5028103590011597, -0.5872864723205566, -0.7814810276031494]
SHARED_RIDGE_Y1 = 1.2295405614073331


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--knn-refs", type=int, default=FULL["knn_refs"])
    p.add_argument("--knn-queries", type=int, default=FULL["knn_queries"])
    p.add_argument("--kmeans-rows", type=int, default=FULL["kmeans_rows"])
    p.add_argument("--ridge-rows", type=int, default=FULL["ridge_rows"])
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--only", default="")
    p.add_argument("--preds")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args(argv)
    if args.self_test:
        self_test()
        return 0
    if args.kmeans_rows < CLUSTERS and "kmeans" in (args.only or "kmeans"):
        p.error(f"--kmeans-rows must be at least {CLUSTERS}")
    run(args, lambda j: print(json.dumps(j), flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
