"""Unit tests for benches/polars_twin.py and benches/frame_collect.py without a GPU.

The digests are checked against the literal examples that frame_digest.rs's tests also check
(the two languages must agree); they need numpy. The whole Polars side runs on a small
hand-written pageview CSV when Polars is installed; without it that test is skipped, saying so.
The collector needs only the standard library."""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import frame_collect as fc  # noqa: E402

try:
    import numpy as np

    import polars_twin as pt

    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

try:
    import polars  # noqa: F401

    HAVE_POLARS = HAVE_NUMPY
except ImportError:
    HAVE_POLARS = False

# The shared examples (benches/gpukit-bench/src/frame_digest.rs, tests).
INT_EXAMPLE = ([3, -1, 0, 7], [True, True, False, True], 1663341875487337626)
STR_EXAMPLE = (["ab", "Zürich", None, "東京"], 1695489216003111724, 19)


@unittest.skipUnless(HAVE_NUMPY, "numpy is not installed: the digest tests are skipped")
class Digests(unittest.TestCase):
    def test_shared_integer_example(self):
        values, valid, expected = INT_EXAMPLE
        self.assertEqual(pt.digest_ints(values, np.array(valid)), expected)
        self.assertEqual(pt.digest_ints([], None), 0)
        self.assertEqual(pt.digest_ints([5], None), 5)

    def test_shared_string_example(self):
        rows, expected, n = STR_EXAMPLE
        self.assertEqual(pt.digest_strings(rows), (expected, n))

    def test_chunks_do_not_change_the_digest(self):
        rng = np.random.default_rng(3)
        v = rng.integers(-(2**62), 2**62, size=1000)
        plain = sum((2 * i + 1) * (int(x) % 2**64) for i, x in enumerate(v)) % 2**64
        old = pt.CHUNK
        try:
            pt.CHUNK = 7
            self.assertEqual(pt.digest_ints(v), plain)
            data = bytes(rng.integers(0, 256, size=1001, dtype=np.uint8))
            small = pt.digest_joined_bytes(data)
            pt.CHUNK = 1 << 20
            self.assertEqual(pt.digest_joined_bytes(data), small)
        finally:
            pt.CHUNK = old

    def test_quantise_rounds_half_away_from_zero(self):
        q = pt.quantise([12.3450000000001, -0.5, 0.5, 2.4999], 1.0)
        self.assertEqual(q.tolist(), [12, -1, 1, 2])
        self.assertEqual(pt.quantise([12.345], 100.0).tolist(), [1235])

    def test_order_and_boundaries_matter(self):
        self.assertNotEqual(pt.digest_ints([1, 2]), pt.digest_ints([2, 1]))
        self.assertNotEqual(pt.digest_strings(["a", "bc"]), pt.digest_strings(["ab", "c"]))


PAGEVIEWS = """en Main_Page 2417 95314205
de Zürich 12 3000
en 東京_Tower 30 999
en Banana 1 10
fr Pomme 44 5
en.m Santana 11 7
en Anagram 50 80
"""


@unittest.skipUnless(HAVE_POLARS, "polars (or numpy) is not installed: the Polars run is skipped")
class PolarsRun(unittest.TestCase):
    def test_every_row_and_digest(self):
        with tempfile.TemporaryDirectory() as tmp:
            csv = os.path.join(tmp, "pv.csv")
            with open(csv, "w", encoding="utf-8") as f:
                f.write(PAGEVIEWS)
            rows, digests = [], []
            args = type("A", (), dict(csv=csv, rows=7, reps=2, warmup=1, read_reps=1, tmp=tmp))()
            with redirect_stderr(io.StringIO()):
                pt.run(args, rows.append, digests.append)
        ops = [r["op"] for r in rows]
        self.assertEqual(ops, ["read csv", "filter+count", "group-by sum/mean", "sort", "join",
                               "str upper", "str contains", "rolling mean"])
        d = {x["op"]: x["digest"] for x in digests}
        self.assertEqual(d["filter+count"]["count"], 3)  # en rows with requests > 10
        table = d["group-by sum/mean"]["table"]
        self.assertEqual([t[0] for t in table], ["de", "en", "en.m", "fr"])
        self.assertEqual(table[1], ["en", 4, 2498, 624.5])
        # join against de (rank 0) and en.m (rank 2): rows 1 and 5 in left order
        self.assertEqual(d["join"]["count"], 2)
        self.assertEqual(d["join"]["rank"]["digest"], f"{pt.digest_ints([0, 2]):016x}")
        upper = ["MAIN_PAGE", "ZÜRICH", "東京_TOWER", "BANANA", "POMME", "SANTANA", "ANAGRAM"]
        self.assertEqual(d["str upper"]["digest"], f"{pt.digest_strings(upper)[0]:016x}")
        contains = [0, 0, 0, 1, 0, 1, 0]
        self.assertEqual(d["str contains"]["digest"], f"{pt.digest_ints(contains):016x}")
        self.assertEqual(d["rolling mean"]["nulls"], 7)  # window 100 > 7 rows
        order = [2417, 50, 44, 30, 12, 11, 1]
        self.assertEqual(d["sort"]["requests"]["digest"], f"{pt.digest_ints(order):016x}")
        self.assertTrue(all(r["wall_ms"] for r in rows))


class Collect(unittest.TestCase):
    def digest(self, side, op, d):
        return {"side": side, "op": op, "rows": 10, "digest": d}

    def row(self, side, op, ms):
        return {"side": side, "op": op, "rows": 10, "wall_ms": ms, "device_peak_bytes": 2**30,
                "host_peak_rss_bytes": 2**31}

    def files(self, polars_table_mean=2.5):
        g = {"count": 1, "table": [["en", 2, 5, 2.5]]}
        p = {"count": 1, "table": [["en", 2, 5, polars_table_mean]]}
        return {
            "gpukit-10-r1.jsonl": [self.row("gpukit", "group-by sum/mean", [1.0, 3.0])],
            "gpukit-10-r1.digests": [self.digest("gpukit", "group-by sum/mean", g)],
            "polars-10-r1.jsonl": [self.row("polars", "group-by sum/mean", [4.0, 8.0])],
            "polars-10-r1.digests": [self.digest("polars", "group-by sum/mean", p)],
        }

    def test_ratio_when_digests_agree(self):
        (r,) = fc.collect(self.files())
        self.assertEqual(r["check"], "ok")
        self.assertEqual((r["gpukit_ms"], r["polars_ms"], r["ratio"]), (2.0, 6.0, 3.0))
        self.assertEqual(r["gpukit_device_peak_bytes"], 2**30)
        self.assertIn("| 10 | group-by sum/mean | 2.000 | 6.000 | 3.00 | ok |", fc.markdown([r]))

    def test_means_within_tolerance_and_failures(self):
        (r,) = fc.collect(self.files(2.5 * (1 + 1e-15)))
        self.assertEqual(r["check"], "ok")
        (r,) = fc.collect(self.files(2.6))
        self.assertTrue(r["check"].startswith("FAIL (gpukit vs polars: table.0.3"), r["check"])
        self.assertIsNone(r["ratio"])
        f = self.files()
        del f["polars-10-r1.digests"]
        (r,) = fc.collect(f)
        self.assertEqual(r["check"], "FAIL (polars: no digest)")

    def test_rounds_must_agree(self):
        f = self.files()
        f["gpukit-10-r2.digests"] = [self.digest("gpukit", "group-by sum/mean", {"count": 2, "table": []})]
        (r,) = fc.collect(f)
        self.assertTrue(r["check"].startswith("FAIL (gpukit round 2"), r["check"])

    def test_compare_digest(self):
        self.assertIsNone(fc.compare_digest({"a": [1, "x"]}, {"a": [1, "x"]}))
        self.assertEqual(fc.compare_digest({"a": "01"}, {"a": "02"}), "a: 01 vs 02")
        self.assertIn("keys", fc.compare_digest({"a": 1}, {"b": 1}))

    def test_main_writes_json_and_markdown(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, lines in self.files().items():
                with open(os.path.join(tmp, name), "w") as f:
                    f.writelines(json.dumps(x) + "\n" for x in lines)
            out_json, out_md = os.path.join(tmp, "r.json"), os.path.join(tmp, "r.md")
            with redirect_stderr(io.StringIO()), open(os.devnull, "w") as null:
                old = sys.stdout
                sys.stdout = null
                try:
                    rc = fc.main([tmp, "--json", out_json, "--md", out_md])
                finally:
                    sys.stdout = old
            self.assertEqual(rc, 0)
            with open(out_json) as f:
                self.assertEqual(json.load(f)["rows"][0]["ratio"], 3.0)


if __name__ == "__main__":
    unittest.main()
