"""Unit tests for benches/benchlib.py (merge, checks, ratios, README). Run by `make bench-selftest`
and by `python3 tests/gpu/check_manifest.py --self-test` is not needed: pytest collects this too."""

from __future__ import annotations

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402


def line(side, name, gpu, wall, check, nbytes=8e9, unit="op"):
    return {"side": side, "name": name, "gpu_ms": gpu, "wall_ms": wall, "check": check, "bytes": nbytes, "unit": unit}


class Collect(unittest.TestCase):
    def lines(self):
        return [
            line("gpukit", "a * 2 (float64, 2^28)", [2.0, 2.2, 1.8], [2.1, 2.3, 1.9], [10.0, 0, 5, 9]),
            line("cupy", "a * 2 (float64, 2^28)", [1.9, 2.0, 2.1], [2.0, 2.1, 2.2], [10.0, 0, 5, 9]),
            line("gpukit", "a * 2 (float64, 2^28)", [2.0], [2.1], [10.0, 0, 5, 9]),
            line("gpukit", "to_device 2 GiB (pageable host memory)", [None, None], [1000.0, 1100.0], [1.0]),
            line("cupy", "to_device 2 GiB (pageable host memory)", [900.0, 950.0], [910.0, 960.0], [1.0]),
            line("gpukit", "sum (float64, 2^28)", [0.5], [0.6], [3.0]),
            line("cupy", "sum (float64, 2^28)", [0.5], [0.6], [3.1]),
            line("gpukit", "launch overhead: empty kernel", [0.003], [0.004], [20000.0], 0, "per_launch"),
            line("cupy", "launch overhead: empty kernel", [0.019], [0.02], [20000.0], 0, "per_launch"),
            line("cupy", "only cupy", [1.0], [1.0], [1.0]),
            line("cudarc", "a * 2 (float64, 2^28)", [2.4, 2.6, 2.5], [2.6, 2.7, 2.8], [10.0, 0, 5, 9]),
            line("cudarc", "sum (float64, 2^28)", [0.4], [0.5], [3.0]),
            line("cudarc", "only cudarc", [1.0], [1.0], [1.0]),
            {"side": "ceilings", "copy_gbps": 4000.0, "h2d_pinned_gbps": 50.0, "d2h_pinned_gbps": 50.0},
        ]

    def test_collect(self):
        res = benchlib.collect(self.lines(), {"device": "NVIDIA H100", "driver": "580"}, {"commit": "abc", "dirty": 0})
        rows = {r["name"]: r for r in res["rows"]}
        self.assertEqual(res["ceiling_copy_gbps"], 4000.0)
        a = rows["a * 2 (float64, 2^28)"]
        self.assertEqual(a["gpukit_ms"], 2.0)          # median of 2.0 2.2 1.8 2.0
        self.assertEqual(a["cupy_ms"], 2.0)
        self.assertEqual(a["ratio"], 1.0)
        self.assertEqual(a["metric"], "GB/s")
        self.assertAlmostEqual(a["value"], 4000.0)
        self.assertAlmostEqual(a["pct_of_ceiling"], 100.0)
        self.assertEqual(a["rounds"], {"gpukit": 2, "cupy": 1})
        t = rows["to_device 2 GiB (pageable host memory)"]
        self.assertEqual(t["timing"]["gpukit"], "wall")
        self.assertEqual(t["ceiling"], "h2d_pinned_gbps")
        self.assertAlmostEqual(t["ratio"], 925.0 / 1050.0, places=4)
        s = rows["sum (float64, 2^28)"]
        self.assertFalse(s["check_ok"])
        self.assertIsNone(s["ratio"])
        self.assertIn("check", s)
        l = rows["launch overhead: empty kernel"]
        self.assertEqual(l["metric"], "us_per_launch_host")
        self.assertAlmostEqual(l["value"], 3.0)
        self.assertIsNone(rows["only cupy"]["gpukit_ms"])
        # the cudarc reference side adds columns to rows of the two sides, never rows of its own
        self.assertNotIn("only cudarc", rows)
        self.assertEqual(a["cudarc_ms"], 2.5)
        self.assertTrue(a["cudarc_check_ok"])
        self.assertAlmostEqual(a["ratio_vs_cudarc"], 1.25)
        self.assertEqual(a["ratio"], 1.0)              # the CuPy ratio is unchanged by it
        self.assertTrue(s["cudarc_check_ok"])           # gpukit's sum agrees with cudarc's ...
        self.assertAlmostEqual(s["ratio_vs_cudarc"], 0.8)
        self.assertNotIn("cudarc_ms", t)
        readme = benchlib.readme(res, None)
        self.assertIn("| 2.500 | 1.250 |", readme)
        t = benchlib.targets(res)
        self.assertEqual(len(t), 4)
        self.assertIn("to_device 2 GiB (pageable host memory) (0.881)", t[0])   # 925 / 1050 < 1
        self.assertIn("no ratio: sum (float64, 2^28), only cupy", t[0])
        self.assertIn("met (100% or more)", t[1])
        self.assertEqual(t[2], "per-launch host overhead ≤ 3 µs: met")
        self.assertIn("below: to_device 2 GiB (pageable host memory)", t[3])
        self.assertIn("### Against the targets", readme)
        self.assertFalse(rows["only cupy"]["check_ok"])
        self.assertTrue(res["missing"])
        json.dumps(res)

    def test_checks(self):
        self.assertTrue(benchlib.checks_agree([1.0, 2.0], [1.0, 2.0 + 1e-9], 1e-7))
        self.assertFalse(benchlib.checks_agree([1.0], [1.1], 1e-7))
        self.assertFalse(benchlib.checks_agree([None], [None], 1e-7))
        self.assertFalse(benchlib.checks_agree([1.0], [1.0, 2.0], 1e-7))
        self.assertEqual(benchlib.tolerance("a * 2 (float32, 2^28)"), 1e-4)

    def test_readme_and_cpu(self):
        res = benchlib.collect(self.lines(), {"device": "NVIDIA H100", "driver": "580"}, {"commit": "abcdef1234567890"})
        cpu = benchlib.cpu_results([{"side": "cpu", "name": "sum (float64, 2^24)", "gpukit_cpu_ms": [2.0, 4.0, 3.0],
                                     "ndarray_ms": [6.0], "ndarray_rayon_ms": [3.0], "agree": "yes", "threads": 2}], "c0")
        self.assertEqual(cpu["rows"][0]["ratio_ndarray"], 2.0)
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "results.json").write_text(json.dumps(res))
            (d / "cpu.json").write_text(json.dumps(cpu))
            benchlib.write_readme(d)
            text = (d / "README.md").read_text()
        self.assertIn("| a * 2 (float64, 2^28) | 2.000 | 2.000 | 1.000 | 4000 GB/s | 100 | ok |", text)
        self.assertIn("MISMATCH", text)
        self.assertIn("µs", text)
        self.assertIn("| sum (float64, 2^24) | 3.000 | 6.000 | 3.000 | 2.000 | 1.000 | yes |", text)
        self.assertIn("Not measured yet", text)


if __name__ == "__main__":
    unittest.main()
