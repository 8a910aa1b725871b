"""The data of the ML rows (issue 18), built from a formula of the index so that every side
(gpukit: benches/gpukit-bench/src/ml_data.rs; scikit-learn and linfa) has the same arrays
without a file. NumPy, vectorised, in row chunks on threads (NumPy's integer ufuncs release
the GIL).

The formula (ml_data.rs implements it the same way; both test the same literal examples):

    mix(x)      = splitmix64's finaliser of x + 0x9E3779B97F4A7C15 (wrapping u64):
                  z = x + 0x9E3779B97F4A7C15; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
                  z = (z ^ z>>27) * 0x94D049BB133111EB; z ^ z>>31
    key(s, i)   = (s << 40) + i                       (stream s, counter i < 2^40)
    unit(s, i)  = ((mix(key(s, i)) >> 40) - 2^23) / 2^23      in [-1, 1), a multiple of 2^-23
    label(s, i, m) = mix(key(s, i)) mod m

Every value is computed in float64 from such units by exact operations (sums and products of
dyadic numbers with few bits), then rounded once to float32 where the row is float32, so both
languages produce identical bits.

- KNN (float32, 64 features, 10 classes): row r (references r < n_ref, queries
  n_ref <= r < n_ref + n_query) has class c = label(KNN_LABEL, r, 10) and features
  x[r, j] = unit(KNN_CENTER, 64 c + j) + 2 unit(KNN_NOISE, 64 r + j). y = c.
- KMeans (float64, 64 features): blob b = label(KM_BLOB, r, 100),
  x[r, j] = unit(KM_CENTER, 64 b + j) + unit(KM_NOISE, 64 r + j) (overlapping blobs: a
  smooth density, so no cluster empties and labels still change at iteration 20); the initial
  centers are the first 100 rows.
- Ridge (float64, 64 features): x[r, j] = unit(RIDGE_X, 64 r + j) + j / 64;
  w[j] = 2 unit(RIDGE_W, j); y[r] = ((3 + w[0] x[r, 0]) + w[1] x[r, 1]) + ... + w[63] x[r, 63]
  + unit(RIDGE_NOISE, r) / 2, summed in that order (so both sides' y are the same bits).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

DIMS = 64
KNN_CLASSES = 10
KMEANS_BLOBS = 100

# stream numbers
KNN_LABEL, KNN_CENTER, KNN_NOISE = 1, 2, 3
KM_BLOB, KM_CENTER, KM_NOISE = 4, 5, 6
RIDGE_X, RIDGE_W, RIDGE_NOISE = 7, 8, 9

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
TWO23 = float(1 << 23)
ROW_CHUNK = 1 << 16


def mix(x) -> np.ndarray:
    """splitmix64's output function of x + golden (x: uint64 array), wrapping."""
    z = np.asarray(x, dtype=np.uint64) + GOLDEN
    z ^= z >> np.uint64(30)
    z *= M1
    z ^= z >> np.uint64(27)
    z *= M2
    z ^= z >> np.uint64(31)
    return z


def keys(stream: int, start: int, n: int) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.uint64) + np.uint64(stream << 40)


def unit(stream: int, start: int, n: int) -> np.ndarray:
    """unit(stream, i) for i in [start, start + n), float64 in [-1, 1)."""
    return ((mix(keys(stream, start, n)) >> np.uint64(40)).astype(np.float64) - TWO23) / TWO23


def label(stream: int, start: int, n: int, m: int) -> np.ndarray:
    return (mix(keys(stream, start, n)) % np.uint64(m)).astype(np.int64)


def threads() -> int:
    return max(1, os.cpu_count() or 1)


def _fill(out: np.ndarray, n: int, rows_fn) -> np.ndarray:
    """out[r0:r1] = rows_fn(r0, r1) over row chunks, on every core."""
    chunks = [(s, min(n, s + ROW_CHUNK)) for s in range(0, n, ROW_CHUNK)]

    def one(c):
        out[c[0] : c[1]] = rows_fn(*c)

    with ThreadPoolExecutor(threads()) as ex:
        list(ex.map(one, chunks))
    return out


def knn_centers() -> np.ndarray:
    return unit(KNN_CENTER, 0, KNN_CLASSES * DIMS).reshape(KNN_CLASSES, DIMS)


def knn_rows(first: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(x float32 (n, 64), y int64 (n,)) of KNN rows first .. first + n."""
    centers = knn_centers()
    y = label(KNN_LABEL, first, n, KNN_CLASSES)
    x = np.empty((n, DIMS), dtype=np.float32)

    def rows(a, b):
        noise = unit(KNN_NOISE, (first + a) * DIMS, (b - a) * DIMS).reshape(b - a, DIMS)
        return (centers[y[a:b]] + 2.0 * noise).astype(np.float32)

    return _fill(x, n, rows), y


def kmeans_rows(n: int) -> np.ndarray:
    """The KMeans data, float64 (n, 64)."""
    centers = unit(KM_CENTER, 0, KMEANS_BLOBS * DIMS).reshape(KMEANS_BLOBS, DIMS)
    b = label(KM_BLOB, 0, n, KMEANS_BLOBS)
    x = np.empty((n, DIMS), dtype=np.float64)

    def rows(s, e):
        noise = unit(KM_NOISE, s * DIMS, (e - s) * DIMS).reshape(e - s, DIMS)
        return centers[b[s:e]] + noise

    return _fill(x, n, rows)


def ridge_weights() -> np.ndarray:
    return 2.0 * unit(RIDGE_W, 0, DIMS)


def ridge_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(x float64 (n, 64), y float64 (n,)) of the Ridge rows."""
    w = ridge_weights()
    offset = np.arange(DIMS, dtype=np.float64) / DIMS
    x = np.empty((n, DIMS), dtype=np.float64)
    y = np.empty(n, dtype=np.float64)

    def rows(s, e):
        xs = unit(RIDGE_X, s * DIMS, (e - s) * DIMS).reshape(e - s, DIMS) + offset
        acc = np.full(e - s, 3.0)
        for j in range(DIMS):
            acc = acc + w[j] * xs[:, j]
        y[s:e] = acc + unit(RIDGE_NOISE, s, e - s) / 2.0
        return xs

    return _fill(x, n, rows), y


def knn_tie(x_refs: np.ndarray, q: np.ndarray, k: int, rtol: float = 1e-5) -> tuple[bool, float]:
    """Whether the k-th and (k+1)-th exact squared distances from query q to the references tie
    within float32 rounding of the GEMM form: |d_k - d_k+1| <= rtol (|q|^2 + max |r|^2 of the
    two). Returns (tie, the gap). Exact: float64 differences of float32 values."""
    diff = x_refs.astype(np.float64) - q.astype(np.float64)
    d = np.einsum("ij,ij->i", diff, diff)
    idx = np.argpartition(d, k)[: k + 1]
    idx = idx[np.argsort(d[idx], kind="stable")]
    a, b = idx[k - 1], idx[k]
    scale = float(q.astype(np.float64) @ q) + max(
        float(x_refs[a].astype(np.float64) @ x_refs[a]), float(x_refs[b].astype(np.float64) @ x_refs[b])
    )
    gap = float(d[b] - d[a])
    return gap <= rtol * scale, gap
