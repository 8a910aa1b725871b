"""Unit tests for the ML rows' Python side without a GPU: benches/ml_data.py (the data formula,
against the literal examples gpukit-bench's ml_data.rs also checks), benches/sklearn_twin.py
(a small run when scikit-learn is installed; skipped, saying so, without it) and
benches/ml_collect.py (checks and ratios on hand-made lines, and on a real small run).

With GPUKIT_BENCH set to a gpukit-bench binary, benches/ml_run.sh runs end to end in its dry-run
mode (gpukit on the CPU backend, small sizes) and its collector must pass every check."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ml_collect as mc  # noqa: E402

try:
    import numpy as np

    import ml_data as md

    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

try:
    import sklearn  # noqa: F401

    HAVE_SKLEARN = HAVE_NUMPY
except ImportError:
    HAVE_SKLEARN = False

if HAVE_NUMPY:
    import sklearn_twin as st


@unittest.skipUnless(HAVE_NUMPY, "numpy is not installed: the data tests are skipped")
class Data(unittest.TestCase):
    def test_shared_examples(self):
        with redirect_stdout(io.StringIO()):
            st.self_test()

    def test_mix_is_splitmix64(self):
        # splitmix64 written with Python integers, for a few counters
        def ref(x):
            z = (x + 0x9E3779B97F4A7C15) % 2**64
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
            return z ^ (z >> 31)

        xs = [0, 1, 2, 12345, 2**40 + 7, 2**63]
        got = md.mix(np.array(xs, dtype=np.uint64))
        self.assertEqual([int(v) for v in got], [ref(x) for x in xs])

    def test_units_are_dyadic_in_range(self):
        u = md.unit(md.KNN_NOISE, 0, 10000)
        self.assertTrue(np.all((u >= -1) & (u < 1)))
        self.assertTrue(np.all(u * 2**23 == np.round(u * 2**23)))

    def test_rows_do_not_depend_on_chunks(self):
        n = md.ROW_CHUNK + 9
        x, y = md.knn_rows(5, n)
        x2, y2 = md.knn_rows(5 + md.ROW_CHUNK, 9)
        np.testing.assert_array_equal(x[md.ROW_CHUNK:], x2)
        np.testing.assert_array_equal(y[md.ROW_CHUNK:], y2)
        self.assertEqual(x.dtype, np.float32)
        k = md.kmeans_rows(300)
        self.assertEqual((k.shape, k.dtype), ((300, 64), np.float64))

    def test_ridge_targets_follow_the_formula(self):
        x, y = md.ridge_rows(50)
        w = md.ridge_weights()
        np.testing.assert_allclose(y, 3 + x @ w + md.unit(md.RIDGE_NOISE, 0, 50) / 2, rtol=1e-13)
        np.testing.assert_allclose(x.mean(axis=0) - np.arange(64) / 64, 0, atol=0.35)

    def test_knn_tie(self):
        refs = np.array([[0, 0], [1, 0], [0, 1], [3, 3]], dtype=np.float32)
        q = np.array([0, 0], dtype=np.float32)
        self.assertTrue(md.knn_tie(refs, q, 2)[0])  # 2nd and 3rd are both at distance 1
        self.assertFalse(md.knn_tie(refs, q, 3)[0])  # 3rd at 1, 4th at 18


@unittest.skipUnless(HAVE_SKLEARN, "scikit-learn is not installed: the twin's run is skipped")
class Twin(unittest.TestCase):
    def run_twin(self, d, name="sklearn-r1"):
        buf = io.StringIO()
        args = ["--knn-refs", "2000", "--knn-queries", "60", "--kmeans-rows", "1500", "--ridge-rows", "3000",
                "--reps", "1", "--preds", os.path.join(d, f"{name}-knn.i64")]
        with redirect_stdout(buf), redirect_stderr(io.StringIO()):
            self.assertEqual(st.main(args), 0)
        lines = [json.loads(x) for x in buf.getvalue().splitlines()]
        with open(os.path.join(d, f"{name}.jsonl"), "w") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        return lines

    def test_small_run_and_collect(self):
        with tempfile.TemporaryDirectory() as d:
            lines = self.run_twin(d)
            self.assertEqual([x["op"] for x in lines], mc.ORDER)
            knn, km, rf, rp = lines
            self.assertEqual(knn["result"]["queries"], 60)
            self.assertGreater(knn["result"]["accuracy"], 0.6)
            self.assertEqual(len(np.fromfile(os.path.join(d, "sklearn-r1-knn.i64"), dtype="<i8")), 60)
            self.assertEqual(len(km["result"]["centers"]), 100)
            self.assertLessEqual(km["result"]["n_iter"], 20)  # small data converges sooner
            coef = np.array(rf["result"]["coef"])
            np.testing.assert_allclose(coef, md.ridge_weights(), atol=0.05)
            self.assertEqual(len(rp["result"]["samples"]), 16)
            # the same run standing in for gpukit: every check passes, ratios near 1
            self.run_twin(d, "gpukit-r1")
            out = io.StringIO()
            with redirect_stdout(out):
                rc = mc.main([d, "--json", os.path.join(d, "r.json"), "--md", os.path.join(d, "r.md")])
            self.assertEqual(rc, 0, out.getvalue())
            res = json.load(open(os.path.join(d, "r.json")))["rows"]
            self.assertEqual([r["op"] for r in res], mc.ORDER)
            self.assertTrue(all(r["sklearn_check"].startswith("ok") for r in res), res)
            self.assertIn("| knn classify |", out.getvalue())


def line(side, op, wall, result, rows=1000, **extra):
    return {"side": side, "op": op, "rows": rows, "wall_ms": wall, "result": result, "device": side, **extra}


def knn_line(side, wall, q):
    return line(side, "knn classify", wall, {"queries": q, "k": 5, "accuracy": 0.9}, queries=q, refs=1000)


class Collector(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def preds(self, name, values):
        if HAVE_NUMPY:
            np.asarray(values, dtype="<i8").tofile(os.path.join(self.d, name))

    def collect(self, runs, tie=None):
        return mc.collect(self.d, runs, knn_tie_factory=lambda refs, k: tie)

    @unittest.skipUnless(HAVE_NUMPY, "numpy is not installed")
    def test_knn_ratio_is_per_query_and_ties_are_allowed(self):
        self.preds("gpukit-r1-knn.i64", [1, 2, 3, 4, 5, 6, 7, 8])
        self.preds("sklearn-r1-knn.i64", [1, 2, 9, 4])
        runs = {"gpukit-r1.jsonl": [knn_line("gpukit", [10.0, 12.0, 11.0], 8)],
                "sklearn-r1.jsonl": [knn_line("sklearn", [40.0, 44.0], 4)]}
        r = self.collect(runs, tie=lambda qs: [True for _ in qs])[0]
        self.assertTrue(r["sklearn_check"].startswith("ok (1 tie"), r["sklearn_check"])
        # 42 ms for 4 queries against 11 ms for 8: 7.6x per query
        self.assertAlmostEqual(r["sklearn_ratio"], (42.0 / 4) / (11.0 / 8))
        r = self.collect(runs, tie=lambda qs: [False for _ in qs])[0]
        self.assertTrue(r["sklearn_check"].startswith("FAIL"), r)
        self.assertIsNone(r["sklearn_ratio"])

    def test_kmeans_and_ridge_tolerances(self):
        c = [[1.0, 2.0], [3.0, -4.0]]
        km = {"n_iter": 20, "inertia": 100.0, "centers": c}
        near = {"n_iter": 20, "inertia": 100.0 * (1 + 1e-12), "centers": [[1.0 + 1e-12, 2.0], [3.0, -4.0]]}
        far = {"n_iter": 20, "inertia": 100.0, "centers": [[1.0 + 1e-4, 2.0], [3.0, -4.0]]}
        self.assertTrue(mc.kmeans_check(near, km).startswith("ok"))
        self.assertIn("centers differ", mc.kmeans_check(far, km))
        self.assertIn("iterations", mc.kmeans_check({**km, "n_iter": 7}, km))
        self.assertTrue(mc.kmeans_check({**km, "n_iter": None}, km).startswith("ok"))
        self.assertTrue(mc.kmeans_check({**far, "algorithm": "m_k-means"}, km).startswith("n/a"))
        ref = {"coef": [1.0, -0.5, 0.25], "intercept": 3.0}
        self.assertTrue(mc.ridge_fit_check({"coef": [1.0 + 5e-7, -0.5, 0.25], "intercept": 3.0}, ref).startswith("ok"))
        self.assertIn("coef", mc.ridge_fit_check({"coef": [1.0 + 5e-6, -0.5, 0.25], "intercept": 3.0}, ref))
        self.assertIn("intercept", mc.ridge_fit_check({"coef": ref["coef"], "intercept": 3.1}, ref))
        p = {"sum": 10.0, "abs_sum": 12.0, "samples": [1.0, 2.0]}
        self.assertEqual(mc.ridge_predict_check(p, p), "ok")
        self.assertIn("sample 1", mc.ridge_predict_check({**p, "samples": [1.0, 2.1]}, p))

    def test_rows_ratios_and_round_mismatch(self):
        km = {"n_iter": 20, "inertia": 1.0, "centers": [[0.5]]}
        rf = {"coef": [1.0], "intercept": 0.0}
        runs = {
            "gpukit-r1.jsonl": [line("gpukit", "kmeans fit", [2.0, 2.0, 2.0], km),
                                line("gpukit", "ridge fit", [1.0], rf, device_peak_bytes=2**30)],
            "gpukit-r2.jsonl": [line("gpukit", "kmeans fit", [2.0], {**km, "centers": [[0.6]]}),
                                line("gpukit", "ridge fit", [1.0], rf)],
            "sklearn-r1.jsonl": [line("sklearn", "kmeans fit", [50.0], km), line("sklearn", "ridge fit", [30.0], rf)],
            "linfa-r1.jsonl": [line("linfa", "kmeans fit", [80.0], {**km, "n_iter": None})],
        }
        res = {r["op"]: r for r in self.collect(runs)}
        self.assertIn("round 2 differs", res["kmeans fit"]["sklearn_check"])
        self.assertIsNone(res["kmeans fit"]["sklearn_ratio"])
        self.assertEqual(res["ridge fit"]["sklearn_check"], "ok (coef within 0.0e+00)")
        self.assertAlmostEqual(res["ridge fit"]["sklearn_ratio"], 30.0)
        self.assertNotIn("linfa_check", res["ridge fit"])
        self.assertTrue(res["kmeans fit"]["linfa_check"].startswith("FAIL (round 2"))  # gpukit's rounds
        runs["linfa-r1.jsonl"][0]["result"]["algorithm"] = "m_k-means"
        del runs["gpukit-r2.jsonl"]
        res = {r["op"]: r for r in self.collect(runs)}
        self.assertTrue(res["kmeans fit"]["linfa_check"].startswith("n/a"))
        self.assertIsNone(res["kmeans fit"]["linfa_ratio"])
        self.assertIn("(40.0, unchecked)", mc.markdown(list(res.values())))
        md_text = mc.markdown(list(res.values()))
        self.assertIn("| ridge fit | 1,000 x 64 | 1.000 | 30.0 | 30.0 |", md_text)
        self.assertIn("| 1.00 |", md_text)  # gpukit's device peak, GiB

    def test_a_side_without_gpukit_fails(self):
        runs = {"sklearn-r1.jsonl": [line("sklearn", "ridge fit", [30.0], {"coef": [1.0], "intercept": 0.0})]}
        r = self.collect(runs)[0]
        self.assertTrue(r["sklearn_check"].startswith("FAIL"))


@unittest.skipUnless(HAVE_SKLEARN and os.environ.get("GPUKIT_BENCH"),
                     "GPUKIT_BENCH is not set (or scikit-learn missing): the dry run of ml_run.sh is skipped")
class RunScript(unittest.TestCase):
    def test_dry_run_of_the_script(self):
        with tempfile.TemporaryDirectory() as d:
            env = {**os.environ, "OUT": d, "ML_DRY_RUN": "1", "ML_TMP": os.path.join(d, "tmp"),
                   "GPU_PYTHON": sys.executable, "WHEELS": "none"}
            p = subprocess.run(["bash", str(HERE / "ml_run.sh")], env=env, capture_output=True, text=True,
                               timeout=900)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            res = json.load(open(os.path.join(d, "ml-results.json")))["rows"]
            self.assertEqual([r["op"] for r in res], mc.ORDER)
            for r in res:
                self.assertTrue(r["sklearn_check"].startswith("ok"), r)
                self.assertIsNotNone(r["sklearn_ratio"])


if __name__ == "__main__":
    unittest.main()
