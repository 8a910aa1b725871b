"""Unit tests for benches/benchlib.py (merge, full checks, spans and wall ratios, ceilings, HBM
specification, error formatting, README). Standard library only; run by `make bench-selftest`,
and collected by pytest."""

from __future__ import annotations

import json
import math
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402


def verify(checked, failed=0, err=0.0):
    return {"how": "test", "checked": checked, "failed": failed, "elements": 8, "visited": 8,
            "mismatches": 1 if failed else 0, "first_bad": 0 if failed else None, "max_rel_err": err}


def line(side, name, span, wall, check, nbytes=8e9, unit="op", access="rw", ver="auto"):
    """A result line as both sides write it; `ver="auto"`: every timed call checked and passed."""
    if ver == "auto":
        ver = verify(len(span) + len(wall)) if unit == "op" else None
    key = "host_ms" if unit == "per_launch" else "span_ms"
    return {"side": side, "name": name, "unit": unit, key: span, "wall_ms": wall, "verify": ver,
            "check": check, "bytes": nbytes, "access": access, "span": "events"}


def cand(pattern, impl, gbps, ok="yes", gib=2, method="m"):
    return {"side": "ceiling", "pattern": pattern, "impl": impl, "method": method, "bytes_per_buffer": gib << 30,
            "bytes_moved": 0, "ms": [1.0], "gbps": gbps, "check_ok": ok, "verify": verify(1), "tried": []}


A2 = "a * 2 (float64, 2^28)"
SUM = "sum (float64, 2^28)"
ONES = "ones (float64, 2 GiB)"
PAGE = "to_device 2 GiB (pageable host memory)"
EMPTY = "launch overhead: empty kernel"


class Collect(unittest.TestCase):
    def lines(self):
        return [
            line("gpukit", A2, [2.0, 2.2, 1.8], [2.4, 2.6, 2.2], [10.0, 0, 5, 9]),
            line("cupy", A2, [1.9, 2.0, 2.1], [3.0, 3.1, 2.9], [10.0, 0, 5, 9]),
            line("gpukit", A2, [2.0], [2.4], [10.0, 0, 5, 9]),
            line("gpukit", PAGE, [1000.0, 1100.0], [1010.0, 1110.0], [1.0], access="h2d"),
            line("cupy", PAGE, [900.0, 950.0], [910.0, 960.0], [1.0], access="h2d"),
            line("gpukit", SUM, [0.5], [0.6], [3.0], access="r"),
            line("cupy", SUM, [0.5], [0.6], [3.1], access="r"),
            line("gpukit", ONES, [1.0], [1.1], [1.0], nbytes=2e9, access="w"),
            line("cupy", ONES, [2.0], [2.2], [1.0], nbytes=2e9, access="w"),
            line("gpukit", EMPTY, [0.003], [0.004], [20000.0], 0, "per_launch", ""),
            line("cupy", EMPTY, [0.019], [0.02], [20000.0], 0, "per_launch", ""),
            line("cupy", "only cupy", [1.0], [1.0], [1.0]),
            line("cudarc", A2, [2.4, 2.6, 2.5], [2.6, 2.7, 2.8], [10.0, 0, 5, 9]),
            line("cudarc", SUM, [0.4], [0.5], [3.0], access="r"),
            line("cudarc", "only cudarc", [1.0], [1.0], [1.0]),
            line("gpukit", "span floor: nothing between the events", [0.008, 0.009, 0.010], [0.01], [], 0,
                 "floor", "", None),
            line("cupy", "span floor: nothing between the events", [0.012], [0.02], [], 0, "floor", "", None),
            cand("copy", "gpukit", 3000.0), cand("copy", "driver", 2950.0), cand("copy", "cupy", 5000.0, ok="no"),
            cand("write", "cupy", 3200.0), cand("read", "gpukit", 3100.0),
            {"side": "ceilings", "h2d_pinned_gbps": 50.0, "d2h_pinned_gbps": 50.0, "gemm_tflops_float32": 51.27,
             "gemm_float32_err_fro": 3.2e-7, "gemm_float32_err_max": 1.234567e-6, "gemm_tflops_float64": 55.2,
             "gemm_float64_err_fro": 0.0, "gemm_float64_err_max": 4.4e-16},
        ]

    def collect(self, lines=None, device="NVIDIA H100 80GB HBM3"):
        return benchlib.collect(self.lines() if lines is None else lines, {"device": device, "driver": "580"},
                                {"commit": "abc", "dirty": 0})

    def test_spans_walls_and_ratios(self):
        res = self.collect()
        rows = {r["name"]: r for r in res["rows"]}
        a = rows[A2]
        self.assertEqual(a["gpukit_ms"], 2.0)          # median of 2.0 2.2 1.8 2.0
        self.assertEqual(a["cupy_ms"], 2.0)
        self.assertEqual(a["ratio"], 1.0)
        self.assertEqual(a["gpukit_wall_ms"], 2.4)
        self.assertEqual(a["cupy_wall_ms"], 3.0)
        self.assertEqual(a["wall_ratio"], 1.25)       # reported beside the span ratio
        self.assertEqual(a["rounds"], {"gpukit": 2, "cupy": 1})
        self.assertTrue(a["check_ok"])
        self.assertEqual(a["verify"]["gpukit"]["checked"], 8)
        self.assertTrue(a["verify"]["gpukit"]["every_timed_call_checked"])
        l = rows[EMPTY]
        self.assertEqual(l["metric"], "us_per_launch_host")
        self.assertAlmostEqual(l["value"], 3.0)
        self.assertTrue(l["check_ok"], "nothing to check on either side is not a failure")
        self.assertAlmostEqual(l["wall_ratio"], 5.0)
        self.assertIsNone(rows["only cupy"]["gpukit_ms"])
        self.assertFalse(rows["only cupy"]["check_ok"])
        # floors are not rows
        self.assertNotIn("span floor: nothing between the events", rows)
        self.assertAlmostEqual(res["span_floor_ms"]["gpukit"], 0.009)
        self.assertAlmostEqual(res["span_floor_ms"]["cupy"], 0.012)
        json.dumps(res)

    def test_cudarc_reference_side(self):
        rows = {r["name"]: r for r in self.collect()["rows"]}
        a, s = rows[A2], rows[SUM]
        self.assertNotIn("only cudarc", rows)
        self.assertEqual(a["cudarc_ms"], 2.5)
        self.assertTrue(a["cudarc_check_ok"])
        self.assertAlmostEqual(a["ratio_vs_cudarc"], 1.25)
        self.assertTrue(s["cudarc_check_ok"])           # gpukit's sum agrees with cudarc's ...
        self.assertAlmostEqual(s["ratio_vs_cudarc"], 0.8)
        self.assertNotIn("cudarc_ms", rows[PAGE])

    def test_summaries_that_disagree_get_no_ratio(self):
        s = {r["name"]: r for r in self.collect()["rows"]}[SUM]
        self.assertFalse(s["check_ok"])
        self.assertFalse(s["summaries_agree"])
        self.assertIsNone(s["ratio"])
        self.assertIsNone(s["wall_ratio"])
        self.assertIn("check", s)
        self.assertEqual(benchlib.check_cell(s), "FAIL (sides disagree)")

    def test_a_failed_full_check_fails_the_row(self):
        lines = self.lines()
        lines[1] = line("cupy", A2, [1.9, 2.0, 2.1], [3.0, 3.1, 2.9], [10.0, 0, 5, 9], ver=verify(6, failed=2))
        a = {r["name"]: r for r in self.collect(lines)["rows"]}[A2]
        self.assertFalse(a["check_ok"])
        self.assertTrue(a["summaries_agree"], "the summaries alone would have passed")
        self.assertIsNone(a["ratio"])
        self.assertEqual(benchlib.check_cell(a), "FAIL (cupy: 2/6 outputs wrong)")

    def test_a_timed_call_without_check_fails_the_row(self):
        lines = self.lines()
        lines[1] = line("cupy", A2, [1.9, 2.0, 2.1], [3.0, 3.1, 2.9], [10.0, 0, 5, 9], ver=verify(5))
        a = {r["name"]: r for r in self.collect(lines)["rows"]}[A2]
        self.assertFalse(a["check_ok"])
        self.assertFalse(a["verify"]["cupy"]["every_timed_call_checked"])
        self.assertIn("unchecked calls", benchlib.check_cell(a))
        lines[1] = line("cupy", A2, [1.9], [3.0], [10.0, 0, 5, 9], ver=None)
        a = {r["name"]: r for r in self.collect(lines)["rows"]}[A2]
        self.assertFalse(a["check_ok"], "an op row with no verify at all")
        # a failing cudarc side marks its column only
        lines = self.lines()
        lines[12] = line("cudarc", A2, [2.5], [2.6], [10.0, 0, 5, 9], ver=verify(2, failed=1))
        a = {r["name"]: r for r in self.collect(lines)["rows"]}[A2]
        self.assertTrue(a["check_ok"])
        self.assertFalse(a["cudarc_check_ok"])
        self.assertNotIn("ratio_vs_cudarc", a)

    def test_ceilings_are_the_best_checked_candidates(self):
        res = self.collect()
        mem = res["memory_ceilings"]
        self.assertEqual(mem["copy"]["gbps"], 3000.0, "the 5000 GB/s candidate failed its check")
        self.assertEqual(mem["copy"]["impl"], "gpukit")
        self.assertEqual(mem["write"]["gbps"], 3200.0)
        self.assertEqual(res["ceiling_copy_gbps"], 3000.0)
        self.assertEqual(res["hbm_spec"]["gbps"], 3350.0)
        self.assertAlmostEqual(res["ceiling_copy_pct_of_spec"], 89.6)
        self.assertEqual(len(res["ceiling_candidates"]), 5)
        self.assertIsNone(benchlib.pick_ceiling([cand("copy", "x", 1.0, ok="no")], "copy"))
        self.assertIsNone(benchlib.pick_ceiling([cand("copy", "x", float("nan"))], "copy"))
        self.assertEqual(benchlib.pick_ceiling([cand("copy", "a", 2.0, gib=1), cand("copy", "a", 2.5, gib=4)],
                                               "copy")["bytes_per_buffer"], 4 << 30)

    def test_pct_of_the_ceiling_of_the_rows_access(self):
        rows = {r["name"]: r for r in self.collect()["rows"]}
        a, o, s, t = rows[A2], rows[ONES], rows[SUM], rows[PAGE]
        self.assertEqual(a["metric"], "GB/s")
        self.assertAlmostEqual(a["value"], 4000.0)
        self.assertEqual(a["ceiling"], "copy")
        self.assertAlmostEqual(a["pct_of_ceiling"], 100 * 4000 / 3000, places=3)
        self.assertEqual(o["ceiling"], "write")
        self.assertAlmostEqual(o["pct_of_ceiling"], 100 * 2000 / 3200, places=3)
        self.assertAlmostEqual(o["pct_of_copy_ceiling"], 100 * 2000 / 3000, places=3)
        self.assertEqual(s["ceiling"], "read")
        self.assertEqual(t["ceiling"], "h2d_pinned")
        self.assertAlmostEqual(t["pct_of_ceiling"], 100 * 8e9 / 1.05 / 1e9 / 50, places=3)
        self.assertIsNone(t["pct_of_copy_ceiling"])
        # without a checked write candidate, write-only rows fall back to the copy ceiling
        lines = [x for x in self.lines() if not (x.get("side") == "ceiling" and x["pattern"] == "write")]
        o = {r["name"]: r for r in self.collect(lines)["rows"]}[ONES]
        self.assertEqual(o["ceiling"], "copy")

    def test_device_time_rows_get_their_own_pct_of_the_ceiling(self):
        name = "sum along axis 1 (float64, 10000x5000)"
        g = line("gpukit", name, [0.2, 0.2], [0.3], [1.0], nbytes=4e8, access="r")
        g["device_ms"] = [0.13, 0.14, 0.15]
        extra = [g, line("cupy", name, [0.25], [0.3], [1.0], nbytes=4e8, access="r")]
        res = self.collect(self.lines() + extra)
        r = {r["name"]: r for r in res["rows"]}[name]
        self.assertAlmostEqual(r["pct_of_ceiling"], 100 * 2000 / 3100, places=2)   # span: 0.2 ms
        self.assertAlmostEqual(r["device_ms"], 0.14)
        self.assertAlmostEqual(r["device_pct_of_ceiling"], 100 * 4e8 / 0.14e-3 / 1e9 / 3100, places=2)
        self.assertNotIn("device_ms", {x["name"]: x for x in res["rows"]}[A2])
        t = benchlib.targets(res)
        self.assertIn(f"below: {name} (64.5%)", t[1])
        self.assertIn("by device time", t[2])
        self.assertIn("met (92.2% or more; against the copy ceiling 95.2% or more)", t[2])
        table = [x for x in benchlib.readme(res, None).splitlines() if x.startswith(f"| {name}")]
        self.assertIn("64.5 (read); device time 92.2", table[0])

    def test_matmul_rows_get_tflops_and_pct_of_the_gemm_ceiling(self):
        name = "matmul (float32, 4096^2)"
        extra = [line("gpukit", name, [2.0], [2.1], [1.0], nbytes=3 * 4 * 4096 ** 2, access="rw"),
                 line("cupy", name, [2.2], [2.3], [1.0], nbytes=3 * 4 * 4096 ** 2, access="rw")]
        rows = {r["name"]: r for r in self.collect(self.lines() + extra)["rows"]}
        m = rows[name]
        self.assertAlmostEqual(m["tflops"], 2 * 4096 ** 3 / 2e-3 / 1e12, places=3)
        self.assertAlmostEqual(m["pct_of_gemm_ceiling"], 100 * m["tflops"] / 51.27, places=2)
        self.assertNotIn("tflops", rows[A2])
        res = self.collect(self.lines() + extra)
        table = [x for x in benchlib.readme(res, None).splitlines() if x.startswith(f"| {name}")]
        self.assertIn("68.7 TFLOP/s", table[0])
        self.assertIn("(cuBLAS GEMM 8192²)", table[0])

    def test_gemm_errors_keep_their_real_value(self):
        res = self.collect()
        c = res["ceilings"]
        self.assertEqual(c["gemm_float32_err_fro"], 3.2e-7)      # not round(…, 4) == 0.0
        self.assertEqual(c["gemm_float32_err_max"], 1.23e-6)     # three significant digits
        self.assertEqual(c["gemm_float64_err_max"], 4.4e-16)
        self.assertEqual(c["gemm_tflops_float32"], 51.27)
        text = " ".join(benchlib.ceiling_text(res))
        self.assertIn("normwise 3.20e-07, max 1.23e-06", text)
        self.assertIn("normwise 0, max 4.40e-16", text)
        self.assertEqual(benchlib.round_ceiling("gemm_float64_err_fro", math.inf), "inf")
        self.assertNotIn("CHECK FAILED", text)
        res["ceilings"]["gemm_float64_check_ok"] = "no"
        self.assertIn("max 4.40e-16 of the largest element, CHECK FAILED", " ".join(benchlib.ceiling_text(res)))

    def test_targets(self):
        t = benchlib.targets(self.collect())
        self.assertEqual(len(t), 6)
        self.assertIn("to_device 2 GiB (pageable host memory) (0.881)", t[0])   # 925 / 1050 < 1
        self.assertIn("no ratio: sum (float64, 2^28), only cupy", t[0])
        self.assertIn("met (133% or more)", t[1])
        self.assertEqual(t[2], "per-launch host overhead ≤ 3 µs: met")
        self.assertEqual(t[3], "launch in a graph ≤ 1.5 µs per launch (issue 14): not measured")
        self.assertIn("below: to_device 2 GiB (pageable host memory)", t[4])
        self.assertEqual(t[5], "first launch with a warm kernel cache ≤ 1.000 ms: not measured")

    def test_first_launch_rows_and_the_gpukit_only_floor(self):
        cold = "first launch of a new kernel, cold kernel cache (compile + load + launch)"
        warm = "first launch of a new kernel, warm kernel cache (disk read + load + launch)"
        floor = "NVRTC floor: compile an empty kernel (no load, no launch)"

        def lat(side, name, ms, failed=0):
            return {"side": side, "name": name, "unit": "latency", "host_ms": ms, "wall_ms": ms,
                    "verify": verify(len(ms), failed), "check": [42.0], "bytes": 0.0, "access": "",
                    "span": "host"}
        res = benchlib.collect([lat("gpukit", cold, [120.0, 110.0, 130.0]), lat("cupy", cold, [240.0, 250.0, 260.0]),
                                lat("gpukit", warm, [0.4, 0.5, 0.6]), lat("cupy", warm, [1.0, 1.2, 1.1]),
                                lat("gpukit", floor, [100.0, 101.0, 99.0])], {}, {})
        rows = {r["name"]: r for r in res["rows"]}
        self.assertEqual((rows[cold]["gpukit_ms"], rows[cold]["ratio"]), (120.0, 2.0833))
        self.assertEqual(rows[warm]["metric"], "ms_first_launch")
        self.assertEqual(rows[warm]["value"], 0.5)
        self.assertTrue(rows[floor]["check_ok"], "a gpukit-only row checks gpukit alone")
        self.assertIsNone(rows[floor]["ratio"])
        t = benchlib.targets(res)
        self.assertEqual(t[0], "ratio ≥ 1.0 on every row: met", "the floor is not 'unrated'")
        self.assertEqual(t[5], "first launch with a warm kernel cache ≤ 1.000 ms: met (0.500 ms) (NVRTC floor 100 ms)")
        readme = benchlib.readme(res, {}) if hasattr(benchlib, "readme") else ""
        self.assertNotIn("GB/s", "".join(x for x in readme.splitlines() if x.startswith("| first launch")))
        # a failed check of the floor fails it
        res = benchlib.collect([lat("gpukit", floor, [100.0], failed=1)], {}, {})
        self.assertFalse(res["rows"][0]["check_ok"])
        # the warm row above its target says so
        res = benchlib.collect([lat("gpukit", warm, [2.0]), lat("cupy", warm, [3.0])], {}, {})
        self.assertEqual(benchlib.targets(res)[5], "first launch with a warm kernel cache ≤ 1.000 ms: above (2.000 ms)")

    def test_graph_target(self):
        for us, want in ((0.0012, "met"), (0.002, "above: 2")):
            rows = [line("gpukit", benchlib.GRAPH_ROW, [us], [us], [20000.0], 0, "per_launch", ""),
                    line("cupy", benchlib.GRAPH_ROW, [us], [us], [20000.0], 0, "per_launch", "")]
            t = benchlib.targets(benchlib.collect(rows, {"device": "NVIDIA H100 80GB HBM3"}, {}))
            self.assertTrue(t[3].startswith("launch in a graph ≤ 1.5 µs per launch (issue 14): " + want), t[3])


class Spec(unittest.TestCase):
    def test_hbm_spec_by_name(self):
        for name, gbps in (("NVIDIA H100 80GB HBM3", 3350.0), ("NVIDIA H100 PCIe", 2000.0),
                           ("NVIDIA H200", 4800.0), ("NVIDIA H200 NVL", 4800.0), ("NVIDIA H100 NVL", 3900.0)):
            self.assertEqual(benchlib.hbm_spec(name)["gbps"], gbps, name)
        for name in ("NVIDIA A100-SXM4-80GB", "", None, "unknown"):
            self.assertEqual(benchlib.hbm_spec(name), {"gbps": None, "what": "unknown"}, name)

    def test_fmt_err(self):
        self.assertEqual(benchlib.fmt_err(None), "—")
        self.assertEqual(benchlib.fmt_err(0.0), "0")
        self.assertEqual(benchlib.fmt_err(3.2e-7), "3.20e-07")
        self.assertEqual(benchlib.fmt_err(1e-17), "1.00e-17")
        self.assertEqual(benchlib.fmt_err("inf"), "inf")
        self.assertEqual(benchlib.fmt_err(math.inf), "inf")

    def test_side_verified(self):
        ok, v = benchlib.side_verified([line("gpukit", A2, [1.0], [1.0], [], ver=verify(2, err="inf"))], "op")
        self.assertTrue(ok)
        self.assertEqual(v["max_rel_err"], "inf")
        ok, _ = benchlib.side_verified([line("gpukit", EMPTY, [1.0], [1.0], [], unit="per_launch", ver=None)],
                                       "per_launch")
        self.assertIsNone(ok)
        ok, _ = benchlib.side_verified([line("gpukit", A2, [1.0], [1.0], [], ver=verify(0))], "op")
        self.assertFalse(ok)


class Readme(unittest.TestCase):
    def test_readme_and_cpu(self):
        res = Collect().collect()
        cpu = benchlib.cpu_results([{"side": "cpu", "name": "sum (float64, 2^24)", "gpukit_cpu_ms": [2.0, 4.0, 3.0],
                                     "ndarray_ms": [6.0], "ndarray_rayon_ms": [3.0], "agree": "yes", "threads": 2}], "c0")
        self.assertEqual(cpu["rows"][0]["ratio_ndarray"], 2.0)
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "results.json").write_text(json.dumps(res))
            (d / "cpu.json").write_text(json.dumps(cpu))
            benchlib.write_readme(d)
            text = (d / "README.md").read_text()
        self.assertIn("| a * 2 (float64, 2^28) | 2.000 | 2.000 | 1.000 | 1.250 | 4000 GB/s | 133 (copy) | ok | "
                      "2.500 | 1.250 |", text)
        self.assertIn("| ones (float64, 2 GiB) | 1.000 | 2.000 | 2.000 | 2.000 | 2000 GB/s | 62.5 (write) | ok |", text)
        self.assertIn("FAIL (sides disagree)", text)
        self.assertIn("| wall ratio |", text)
        self.assertIn("µs", text)
        self.assertIn("gpukit 9.000 µs, cupy 12.0 µs", text)       # span floors
        self.assertIn("copy (read + write) **3000 GB/s**", text)
        self.assertIn("89.6% of the specification", text)
        self.assertIn("HBM specification: **H100 SXM5 80GB HBM3, 3.35 TB/s**", text)
        self.assertIn("| sum (float64, 2^24) | 3.000 | 6.000 | 3.000 | 2.000 | 1.000 | yes |", text)
        self.assertNotIn("Not measured yet", text)  # every workload of the issues has a row

    def test_unknown_device_says_unknown(self):
        res = Collect().collect(device="Some Future GPU")
        text = " ".join(benchlib.ceiling_text(res))
        self.assertIn("HBM specification: **unknown for this device name**", text)
        self.assertNotIn("of the specification", text)
        self.assertIsNone(res["ceiling_copy_pct_of_spec"])

    def test_readme_of_results_from_before_issue_12(self):
        old = Path(__file__).resolve().parent.parent / "docs" / "bench" / "results.json"
        if not old.is_file():
            self.skipTest("no docs/bench/results.json in this checkout")
        res = json.loads(old.read_text())
        if "memory_ceilings" in res:
            self.skipTest("docs/bench/results.json is already in the new format")
        text = benchlib.readme(res, None)
        self.assertIn("device-to-device copy", text)
        self.assertIn("Recorded with the harness before issue 12", text)
        self.assertNotIn("normwise 0", text, "an error rounded to 0 is not shown as a value")
        self.assertIn("| a * 2 (float64, 2^28) |", text)


if __name__ == "__main__":
    unittest.main()
