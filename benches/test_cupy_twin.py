"""Unit tests for benches/cupy_twin.py without a GPU.

The check rule, counters and exact references need only the standard library. The workloads and
ceilings run under benches/fake_cupy.py (numpy standing in for CuPy) at tiny sizes: every row is
produced, every timed output is checked, a kernel that writes nothing fails its check, and the rows
merge with benchlib.py. Those need numpy; without it they are skipped, saying so."""

from __future__ import annotations

import importlib
import json
import math
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import benchlib  # noqa: E402
import cupy_twin as ct  # noqa: E402

try:
    import numpy as np  # noqa: F401
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False


class Rule(unittest.TestCase):
    def test_passes_and_rel_err(self):
        self.assertTrue(ct.passes(1.0, 1.0, 0.0))
        self.assertFalse(ct.passes(1.0 + 1e-15, 1.0, 0.0))
        self.assertTrue(ct.passes(1.0 + 1e-15, 1.0, 1e-12))
        self.assertFalse(ct.passes(math.nan, 1.0, 1.0))
        self.assertFalse(ct.passes(math.nan, math.nan, 1.0))
        self.assertFalse(ct.passes(1e-300, 0.0, 0.5))
        self.assertTrue(ct.passes(0.0, 0.0, 0.0))
        self.assertEqual(ct.rel_err(math.nan, 1.0), math.inf)
        self.assertEqual(ct.rel_err(1.0, 0.0), math.inf)
        self.assertEqual(ct.rel_err(3.0, 2.0), 0.5)

    def test_counters(self):
        self.assertTrue(ct.outcome_ok(ct.from_counters([10, 0, (1 << 64) - 1, 0], 10)))
        self.assertFalse(ct.outcome_ok(ct.from_counters([0, 0, (1 << 64) - 1, 0], 10)), "checker did not run")
        o = ct.from_counters([10, 3, 4, 0x4004000000000000], 10)  # 2.5 as bits
        self.assertEqual((o["mismatches"], o["first_bad"], o["max_rel_err"]), (3, 4, 2.5))
        self.assertFalse(ct.outcome_ok(ct.from_counters([], 10)))

    def test_verify_json(self):
        v = ct.Verify("t")
        self.assertFalse(v.ok())
        v.push(ct.scalar_outcome(1.0, 1.0, 0.0))
        v.push(ct.scalar_outcome(math.nan, 1.0, 0.0))
        v.push(ct.scalar_outcome(1.0, 1.0, 0.0))
        j = v.json()
        self.assertEqual((j["checked"], j["failed"], j["mismatches"], j["max_rel_err"]), (3, 1, 1, "inf"))
        json.dumps(j)

    def test_exact_references(self):
        self.assertEqual(ct.reduction_refs(0, 4), [6.0, 1.5, 3.0])
        self.assertEqual(ct.reduction_refs(1, 4), [10.0, 2.5, 4.0])
        s, m, x = ct.reduction_refs(0, 1 << 28)
        self.assertEqual((m, x), (134217727.5, 268435455.0))
        self.assertEqual(s, float((1 << 28) * ((1 << 28) - 1) // 2))

    def test_driver_lookup_does_not_fail_without_a_driver(self):
        f = ct._driver_wait_value32()
        self.assertTrue(f is None or callable(f))

    def test_grids(self):
        self.assertEqual(ct.check_blocks(1 << 28, 132), 132 * 8)
        self.assertEqual(ct.check_blocks(1, 132), 1)
        self.assertEqual(ct.shape_blocks(1, 256, 0, 1 << 26, 132), (1 << 26) // 256)
        self.assertEqual(ct.shape_blocks(4, 256, 8, 1 << 26, 132), 132 * 8)
        self.assertTrue(all(u in (1, 2, 4, 8) for u, _, _ in ct.SHAPES))


@unittest.skipUnless(HAVE_NUMPY, "numpy is not installed: the host comparison needs it")
class HostCompare(unittest.TestCase):
    def test_every_element(self):
        import numpy as np
        ref = np.arange(10, dtype=np.float64)
        self.assertTrue(ct.outcome_ok(ct.host_compare(ref.copy(), ref, 0.0)))
        out = ref.copy()
        out[3] = np.nan
        out[7] += 1e-9
        o = ct.host_compare(out, ref, 0.0)
        self.assertEqual((o["mismatches"], o["first_bad"], o["max_rel_err"]), (2, 3, math.inf))
        o = ct.host_compare(out, ref, 1e-6)
        self.assertEqual((o["mismatches"], o["first_bad"]), (1, 3), "the NaN fails at any tolerance")
        self.assertFalse(ct.outcome_ok(ct.host_compare(ref[:5], ref, 0.0)))
        self.assertFalse(ct.outcome_ok(ct.host_compare(np.full(10, -1, dtype=np.int32),
                                                       np.zeros(10, dtype=np.int32), 0.0)))


@unittest.skipUnless(HAVE_NUMPY, "numpy is not installed: the fake-CuPy tests need it")
class UnderFakeCupy(unittest.TestCase):
    #: gpukit-bench's DRY sizes, so the summaries can be compared with its dry run
    SIZES = {"N": 1 << 14, "LESSON5_SHAPE": (10, 20, 30), "FIZZBUZZ_N": 3000, "BLUR_SHAPE": (40, 24, 4),
             "LAUNCHES": 20, "GEMM_N": 64, "MATMUL_N": 37, "MATMUL_BIG_N": 41, "SVD_N": 24, "TRANSPOSE_N": 45, "GIB": 1 << 16,
             "SORT_SHAPE": (7, 300), "FFT_SIDE": 6, "AXES_SHAPE": (37, 23),
             "RANDOM_SHAPE": (37, 29)}

    def setUp(self):
        import fake_cupy
        self.fake = fake_cupy
        fake_cupy.install()
        self.ct = importlib.reload(ct)
        self.saved = {k: getattr(self.ct, k) for k in self.SIZES}
        for k, v in self.SIZES.items():
            setattr(self.ct, k, v)
        self.real_wait = self.ct._driver_wait_value32
        self.waits = []

        def wait_value(stream, ptr, value, flags):
            self.waits.append((value, flags))
            return 0 if self.fake._peek_u32(ptr) >= value else 1

        self.ct._driver_wait_value32 = lambda: wait_value

    def tearDown(self):
        for k, v in self.saved.items():
            setattr(self.ct, k, v)
        self.ct._driver_wait_value32 = self.real_wait
        self.fake.uninstall()

    def rows(self, only=None, reps=2):
        out = []
        self.ct.run_all(1, reps, only, out.append)
        return out

    def test_every_row_is_timed_and_checked_in_full(self):
        rows = self.rows()
        names = [r["name"] for r in rows]
        self.assertEqual(len(rows), 36, names)
        for r in rows:
            json.dumps(r)
            self.assertEqual(r["side"], "cupy")
            if r["unit"] == "op":
                v = r["verify"]
                self.assertEqual((v["failed"], v["checked"]), (0, len(r["span_ms"]) + len(r["wall_ms"])), r["name"])
                self.assertEqual(len(r["span_ms"]), 2)
                moves = r["access"] and r["bytes"] > 0
                # a hand-over row (DLPack) moves no byte, and says so
                handover = r["access"] == "" and r["bytes"] == 0 and "no byte moves" in r["note"]
                self.assertTrue(moves or handover, r["name"])
                self.assertIn("cuStreamWaitValue32", r["span"])
            elif r["unit"] == "per_launch":
                self.assertEqual(len(r["host_ms"]), 3)
            elif r["unit"] == "latency":
                v = r["verify"]
                self.assertEqual((v["failed"], v["checked"]), (0, 3), r["name"])
                self.assertEqual((len(r["host_ms"]), r["check"]), (3, [42.0]), r["name"])
            else:
                self.assertEqual(r["unit"], "floor")
        latency = [r["name"] for r in rows if r["unit"] == "latency"]
        self.assertEqual(latency, [self.ct.FIRST_LAUNCH_COLD, self.ct.FIRST_LAUNCH_WARM])
        self.assertEqual(len(self.fake.MEMO_CLEARS), 3, "the warm row clears CuPy's memo before each call")
        # every span ended by the marker on CuPy's stream and a wait for it
        self.assertTrue(self.waits and all(f == 0 for _, f in self.waits))
        self.assertEqual(sorted(v for v, _ in self.waits), list(range(1, len(self.waits) + 1)))

    def test_the_graph_row_captures_once_and_replays(self):
        (r,) = self.rows(only="launch in a graph", reps=2)
        self.assertEqual((r["unit"], r["check"]), ("per_launch", [20.0]))
        self.assertEqual(len(r["host_ms"]), 3)
        empties = [k for k in self.fake.LAUNCHED if k[0] == "empty_kernel"]
        # one launch before the capture, none during it, 20 per replay: the first and three timed
        self.assertEqual(len(empties), 1 + 4 * 20)
        self.assertIsNone(self.fake._CAPTURE, "the capture ended")

    def test_a_kernel_that_writes_nothing_fails(self):
        self.fake.OVERRIDES["fizzbuzz"] = lambda g, b, out, n: None
        (r,) = self.rows(only="fizzbuzz")
        self.assertEqual(r["verify"]["failed"], r["verify"]["checked"])
        self.assertEqual(r["verify"]["mismatches"], self.ct.FIZZBUZZ_N)
        self.fake.OVERRIDES.clear()
        self.fake.OVERRIDES["blur3"] = lambda g, b, img, out, h, w, c: None
        rows = self.rows(only="blur")
        self.assertTrue(all(r["verify"]["failed"] == 4 for r in rows))
        self.assertTrue(all(r["verify"]["max_rel_err"] == "inf" for r in rows), "NaN poison")
        self.fake.OVERRIDES.clear()
        self.fake.OVERRIDES["first_launch"] = lambda g, b, out, v: None
        rows = self.rows(only="first launch")
        self.assertEqual([r["verify"]["failed"] for r in rows], [3, 3], "the poisoned -1 fails")

    def test_a_result_left_from_the_last_call_fails(self):
        # a sum that returns the previous call's value: the alternating inputs catch it
        calls = []
        real = self.fake.sum

        def stale(a, *args, **kw):
            v = real(a, *args, **kw)
            calls.append(v)
            return calls[-2] if len(calls) > 1 else v

        self.fake.sum = stale
        try:
            (r,) = self.rows(only="sum (")
        finally:
            self.fake.sum = real
        self.assertGreater(r["verify"]["failed"], 0)

    def test_a_wrong_product_fails_its_check(self):
        # a matmul off by 1e-3 (say TF32 rounding) or with one element wrong fails every call
        for wrong in (lambda c: c * 1.001, lambda c: c.__setitem__((0, 0), c[0, 0] + 1) or c):
            self.fake.ndarray.__matmul__ = lambda x, y, wrong=wrong: wrong(np.matmul(x, y))
            try:
                rows = self.rows(only="matmul (")
            finally:
                del self.fake.ndarray.__matmul__
            self.assertEqual(len(rows), 4)  # 4096^2 and 8192^2, float32 and float64
            for r in rows:
                self.assertEqual(r["verify"]["failed"], r["verify"]["checked"], r["name"])
        rows = self.rows(only="matmul (")  # and the real product passes
        self.assertTrue(all(r["verify"]["failed"] == 0 for r in rows))

    def test_a_wrong_svd_fails_its_check(self):
        real = self.fake.linalg.svd
        for wrong in (lambda u, s, vt: (u, s, vt * 1.001), lambda u, s, vt: (u, s * 1.001, vt)):
            self.fake.linalg.svd = staticmethod(lambda a, wrong=wrong, **k: wrong(*real(a, **k)))
            try:
                (r,) = self.rows(only="SVD (")
            finally:
                self.fake.linalg.svd = staticmethod(real)
            self.assertEqual(r["verify"]["failed"], r["verify"]["checked"])
        (r,) = self.rows(only="SVD (")  # and the real decomposition passes
        self.assertEqual((r["verify"]["failed"], len(r["check"])), (0, 4))
        self.assertEqual(self.ct.svd_input_host(2)[0, 0], (0xE220A8397B1DCDAF >> 11) / 2.0 ** 52 - 1.0)

    def test_spin_fallback_when_the_driver_refuses(self):
        self.ct._driver_wait_value32 = lambda: (lambda *a: 801)  # CUDA_ERROR_NOT_SUPPORTED
        (r,) = self.rows(only="ones")
        self.assertIn("spin kernel", r["span"])
        self.assertTrue(any(name == "bench_spin_until" for name, _, _ in self.fake.LAUNCHED))

    def test_a_span_that_never_ends_is_an_error_not_a_hang(self):
        self.fake.HANG = True
        self.ct.SPAN_LIMIT_S = 0.05
        try:
            with self.assertRaisesRegex(RuntimeError, "not reached within"):
                self.rows(only="ones")
        finally:
            self.ct.SPAN_LIMIT_S = 120.0
            self.fake.HANG = False

    def test_memory_ceilings_pick_and_check(self):
        lines = []
        self.ct.memory_ceilings(self.fake, 3, [1, 2], lines.append)
        self.assertEqual(len(lines), 2 * (3 + 3))  # per size: 3 kernel patterns + copyto, memcpy, fill
        for l in lines:
            self.assertEqual(l["check_ok"], "yes", l["method"])
            self.assertEqual(len(l["ms"]), 3)
            self.assertTrue(l["tried"])
            json.dumps(l)
        self.assertEqual({l["pattern"] for l in lines}, {"copy", "write", "read"})
        self.assertTrue(benchlib.pick_ceiling(lines, "copy"))

    def test_a_copy_kernel_that_misses_elements_fails_its_check(self):
        def half_copy(g, b, src, dst, n4):
            k = int(n4) // 2
            self.fake._u4(dst)[:k] = self.fake._u4(src)[:k]

        for u in (1, 2, 4, 8):
            self.fake.OVERRIDES[f"bench_copy_v4_u{u}"] = half_copy
        lines = []
        self.ct.memory_ceilings(self.fake, 3, [1], lines.append)
        copy = [l for l in lines if l["pattern"] == "copy" and "bench_copy" in l["method"]]
        self.assertEqual(copy[0]["check_ok"], "no")
        self.assertIsNone(benchlib.pick_ceiling(copy, "copy"), "a failed candidate is never the ceiling")

    def test_gemm_errors_are_real_values(self):
        c = self.ct.gemm_ceilings(self.fake, 3)
        self.assertGreater(c["gemm_float32_err_fro"], 0.0)
        self.assertLess(c["gemm_float32_err_fro"], 1e-5)
        self.assertGreaterEqual(c["gemm_float64_err_fro"], 0.0)
        self.assertLess(c["gemm_float64_err_fro"], 1e-13)
        self.assertIn("gemm_float64_err_max", c)
        self.assertEqual((c["gemm_float32_check_ok"], c["gemm_float64_check_ok"]), ("yes", "yes"))
        self.assertNotEqual(benchlib.fmt_err(c["gemm_float32_err_fro"]), "0")

    def test_main_prints_json_lines(self):
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(self.ct.main(["--reps", "2", "--only", "arange"]), 0)
        (r,) = [json.loads(x) for x in buf.getvalue().splitlines()]
        self.assertEqual(r["name"], "arange (float64, 2^28)")
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            self.ct.main(["--ceilings", "--sizes-gib", "0"])
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(self.ct.main(["--ceilings", "--sizes-gib", "1", "--reps", "3"]), 0)
        lines = [json.loads(x) for x in buf.getvalue().splitlines()]
        self.assertEqual([x["side"] for x in lines], ["ceiling"] * 6 + ["ceilings"])
        self.assertIn("h2d_pinned_gbps", lines[-1])
        res = benchlib.collect(lines, {"device": "NVIDIA H200"}, {})
        self.assertTrue(all(res["memory_ceilings"].values()))
        self.assertEqual(res["hbm_spec"]["gbps"], 4800.0)

    def test_rows_merge_with_benchlib(self):
        rows = self.rows()
        # the same rows as a second side that agrees: every row rated, every check ok
        twin = [dict(r, side="gpukit") for r in rows]
        res = benchlib.collect(rows + twin, {"device": "NVIDIA H100 80GB HBM3"}, {})
        self.assertEqual(len(res["rows"]), 35)
        for r in res["rows"]:
            self.assertTrue(r["check_ok"], r["name"])
            self.assertEqual(r["ratio"], 1.0, r["name"])
        self.assertIn("cupy", res["span_floor_ms"])


if __name__ == "__main__":
    unittest.main()
