"""Unit tests for the GPU pipeline scripts (hashing, manifest, staging plan, device-run parsing,
recording). Standard library only; run by `python3 tests/gpu/check_manifest.py --self-test`
(`make gpu-selftest`) and collected by pytest as well."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import unittest.mock
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_manifest  # noqa: E402
import devrun  # noqa: E402
import gpumanifest as gm  # noqa: E402
import record  # noqa: E402
import stagelib  # noqa: E402


def nb(*cells):
    """A minimal nbformat-4 notebook: ("code", src) / ("markdown", src) pairs."""
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": t, "source": s, "metadata": {}, **({"outputs": [], "execution_count": None}
                                                                        if t == "code" else {})}
                      for t, s in cells]}


class Hashing(unittest.TestCase):
    def test_definition(self):
        n = nb(("code", "let x = 1;\n"), ("markdown", "# title"), ("code", "x"))
        want = hashlib.sha256(b"let x = 1;\n\0x\0").hexdigest()
        self.assertEqual(gm.source_sha256(n), want)

    def test_known_vectors(self):
        # no code cells: the hash of nothing
        self.assertEqual(gm.source_sha256(nb(("markdown", "only text"))),
                         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        # one empty code cell: the hash of one NUL byte
        self.assertEqual(gm.source_sha256(nb(("code", ""))),
                         "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")

    def test_list_of_lines_equals_joined_string(self):
        a = nb(("code", ["let a = 1;\n", "a + 1"]))
        b = nb(("code", "let a = 1;\na + 1"))
        self.assertEqual(gm.source_sha256(a), gm.source_sha256(b))

    def test_cell_boundaries_matter(self):
        one = nb(("code", "ab"))
        two = nb(("code", "a"), ("code", "b"))
        self.assertNotEqual(gm.source_sha256(one), gm.source_sha256(two))

    def test_outputs_and_markdown_do_not_matter(self):
        a = nb(("code", "1"), ("markdown", "x"))
        b = nb(("code", "1"), ("markdown", "y"))
        b["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
        self.assertEqual(gm.source_sha256(a), gm.source_sha256(b))

    def test_unicode_is_utf8(self):
        self.assertEqual(gm.source_sha256(nb(("code", "π"))), hashlib.sha256("π".encode() + b"\0").hexdigest())


class Manifest(unittest.TestCase):
    def make(self, **over):
        m = gm.build_manifest(device="NVIDIA H200", driver="580.1", cuda="13.0", commit="abc", date="2026-11-22T00:00:00Z",
                              cargo_tests={"passed": 3, "failed": 0, "skipped": 1, "ignored": 1, "skipped_tests": []},
                              notebooks=[{"path": "notebooks/b.ipynb", "source_sha256": "22", "status": "ok", "seconds": 1.234},
                                         {"path": "notebooks/a.ipynb", "source_sha256": "11", "status": "ok", "seconds": 2}])
        m.update(over)
        return m

    def test_shape(self):
        m = self.make()
        self.assertEqual(list(m)[:7], ["device", "driver", "cuda", "commit", "date", "cargo_tests", "notebooks"])
        self.assertEqual([e["path"] for e in m["notebooks"]], ["notebooks/a.ipynb", "notebooks/b.ipynb"])
        self.assertEqual(m["notebooks"][1]["seconds"], 1.23)
        self.assertEqual(gm.validate_manifest(m), [])
        json.dumps(m)

    def test_rejects_unknown_status(self):
        with self.assertRaises(ValueError):
            gm.build_manifest(device="d", driver="d", cuda="c", commit="c", date="d", cargo_tests={},
                              notebooks=[{"path": "p", "source_sha256": "h", "status": "fine", "seconds": 0}])

    def test_validate_finds_problems(self):
        m = self.make()
        del m["driver"]
        m["cargo_tests"]["failed"] = "0"
        probs = gm.validate_manifest(m)
        self.assertTrue(any("driver" in p for p in probs))
        self.assertTrue(any("cargo_tests.failed" in p for p in probs))

    def test_staleness(self):
        m = self.make()
        current = {"notebooks/a.ipynb": "11", "notebooks/b.ipynb": "22"}
        self.assertTrue(gm.is_current(gm.staleness(m, current)))
        r = gm.staleness(m, {"notebooks/a.ipynb": "XX", "notebooks/c.ipynb": "33"})
        self.assertEqual(r["changed"], ["notebooks/a.ipynb"])
        self.assertEqual(r["missing"], ["notebooks/c.ipynb"])
        self.assertEqual(r["removed"], ["notebooks/b.ipynb"])
        self.assertFalse(gm.is_current(r))
        m["notebooks"][0]["status"] = "error"
        self.assertEqual(gm.staleness(m, current)["not_ok"], ["notebooks/a.ipynb"])
        m = self.make(cargo_tests={"passed": 1, "failed": 2, "skipped": 0})
        self.assertFalse(gm.is_current(gm.staleness(m, current)))

    def test_a_test_that_skipped_on_the_gpu_makes_the_run_not_current(self):
        current = {"notebooks/a.ipynb": "11", "notebooks/b.ipynb": "22"}
        m = self.make(cargo_tests={"passed": 3, "failed": 0, "skipped": 2, "ignored": 1,
                                   "skipped_tests": ["gpukit/bounds: gpu_reports"]})
        self.assertEqual(m["cargo_tests"]["skipped_tests"], ["gpukit/bounds: gpu_reports"])
        self.assertEqual(gm.validate_manifest(m), [])
        r = gm.staleness(m, current)
        self.assertEqual(r["tests_skipped"], ["gpukit/bounds: gpu_reports"])
        self.assertFalse(gm.is_current(r))
        # ignored tests (run elsewhere on purpose) alone keep the run current
        self.assertTrue(gm.is_current(gm.staleness(self.make(), current)))

    def test_skips_of_older_manifests(self):
        current = {"notebooks/a.ipynb": "11", "notebooks/b.ipynb": "22"}
        legacy = self.make()
        legacy["cargo_tests"] = {"passed": 3, "failed": 0, "skipped": 1}
        # which test skipped is unknown without a log: not current
        r = gm.staleness(legacy, current)
        self.assertEqual(r["skips_unknown"], 1)
        self.assertFalse(gm.is_current(r))
        # the log beside it says: the one skipped test was an ignored one
        log = ("==== gpukit test transfer_gpu (gpukit--test--transfer_gpu-1)\n"
               "test transfer_rates ... ignored\ntest gpu_copy ... ok\n\nsuccesses:\n\n"
               "---- gpu_copy stdout ----\ncopied 3 MiB\n\nsuccesses:\n    gpu_copy\n\n"
               "test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n==== exit 0, 1.0s\n")
        self.assertTrue(gm.is_current(gm.staleness(legacy, current, log)))
        r = gm.staleness(legacy, current, log.replace("copied 3 MiB", "skipped: no CUDA GPU (x)"))
        self.assertEqual(r["tests_skipped"], ["gpukit/transfer_gpu: gpu_copy"])
        self.assertFalse(gm.is_current(r))
        legacy["cargo_tests"]["skipped_tests"] = "gpu_copy"
        self.assertIn("`cargo_tests.skipped_tests` not a list of strings", gm.validate_manifest(legacy))

    def test_skipped_in_log(self):
        log = ("==== gpukit test bounds (gpukit--test--bounds-1)\n"
               "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\nsuccesses:\n\n"
               "---- a stdout ----\nskipped: no CUDA GPU (no NVIDIA driver)\n\nsuccesses:\n    a\n\nfailures:\n\n"
               "---- b stdout ----\nskipped: no CUDA GPU (child output quoted in a failure)\n\nfailures:\n    b\n\n"
               "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n==== exit 101, 0.1s\n\n"
               "==== gpukit lib gpukit (gpukit--lib--gpukit-2)\n"
               "test m::c ... ok\n\nsuccesses:\n\n---- m::c stdout ----\nCUDA half skipped: no CUDA GPU\n\n"
               "successes:\n    m::c\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
               "==== exit 0, 0.1s\n")
        self.assertEqual(gm.skipped_in_log(log), ["gpukit/bounds: a", "gpukit/gpukit: m::c"])
        self.assertEqual(gm.skipped_in_log("test result: ok. 1 passed; 0 failed; 0 ignored\n"), [])

    def test_totals(self):
        t = gm.cargo_test_totals([{"passed": 2, "failed": 1, "skipped": 3, "ignored": 1, "package": "p", "name": "x",
                                   "skipped_tests": ["gpu_a", "gpu_b"]},
                                  {"passed": 1, "failed": 0, "ignored": 2}])
        self.assertEqual(t, {"passed": 3, "failed": 1, "skipped": 5, "ignored": 3,
                             "skipped_tests": ["p/x: gpu_a", "p/x: gpu_b"]})


class Tree(unittest.TestCase):
    def test_notebook_paths_and_check(self):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "notebooks" / "images").mkdir(parents=True)
            (root / "tests" / "notebooks").mkdir(parents=True)
            (root / "notebooks" / "2.0_kernels.ipynb").write_text(json.dumps(nb(("code", "1"))))
            (root / "notebooks" / "1.0_intro.ipynb").write_text(json.dumps(nb(("code", "2"))))
            (root / "notebooks" / "images" / "x.ipynb").write_text(json.dumps(nb()))
            (root / "tests" / "notebooks" / "errors.ipynb").write_text(json.dumps(nb(("code", "3"))))
            paths = gm.notebook_paths(root)
            self.assertEqual(paths, ["notebooks/1.0_intro.ipynb", "notebooks/2.0_kernels.ipynb",
                                     "tests/notebooks/errors.ipynb"])
            buf = io.StringIO()
            self.assertFalse(check_manifest.report(root, root / "docs/gpu-run/manifest.json", out=buf))
            self.assertIn("no docs/gpu-run/manifest.json", buf.getvalue())
            hashes = gm.current_hashes(root)
            m = gm.build_manifest(device="NVIDIA H100", driver="1", cuda="13.0", commit="c", date="d",
                                  cargo_tests={"passed": 1}, notebooks=[
                                      {"path": p, "source_sha256": h, "status": "ok", "seconds": 1} for p, h in hashes.items()])
            (root / "docs/gpu-run").mkdir(parents=True)
            (root / "docs/gpu-run/manifest.json").write_text(json.dumps(m))
            buf = io.StringIO()
            self.assertTrue(check_manifest.report(root, root / "docs/gpu-run/manifest.json", out=buf))
            self.assertIn("current, 3 notebook(s) ok", buf.getvalue())
            (root / "notebooks" / "1.0_intro.ipynb").write_text(json.dumps(nb(("code", "changed"))))
            buf = io.StringIO()
            self.assertFalse(check_manifest.report(root, root / "docs/gpu-run/manifest.json", out=buf))
            self.assertIn("changed since the run: notebooks/1.0_intro.ipynb", buf.getvalue())
            self.assertEqual(check_manifest.main(["--root", str(root)]), 0)

    def test_check_reads_skips_from_the_manifest_and_the_log(self):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "notebooks").mkdir()
            (root / "notebooks" / "a.ipynb").write_text(json.dumps(nb(("code", "1"))))
            entries = [{"path": p, "source_sha256": h, "status": "ok", "seconds": 1}
                       for p, h in gm.current_hashes(root).items()]
            mdir = root / "docs/gpu-run"
            mdir.mkdir(parents=True)
            mpath = mdir / "manifest.json"

            def check(cargo_tests, log=None):
                m = gm.build_manifest(device="NVIDIA H100", driver="1", cuda="13.0", commit="c", date="d",
                                      cargo_tests=cargo_tests, notebooks=entries)
                if "skipped_tests" not in cargo_tests:
                    del m["cargo_tests"]["skipped_tests"]   # a manifest written before skips were named
                mpath.write_text(json.dumps(m))
                (mdir / "cargo-tests.log").unlink(missing_ok=True)
                if log is not None:
                    (mdir / "cargo-tests.log").write_text(log)
                buf = io.StringIO()
                return check_manifest.report(root, mpath, out=buf), buf.getvalue()

            ok, text = check({"passed": 2, "failed": 0, "skipped": 1, "ignored": 1, "skipped_tests": []})
            self.assertTrue(ok, text)
            ok, text = check({"passed": 2, "failed": 0, "skipped": 1, "ignored": 0,
                              "skipped_tests": ["gpukit/launch: gpu_launch"]})
            self.assertFalse(ok)
            self.assertIn("skipped on the GPU (not run): gpukit/launch: gpu_launch", text)
            ok, text = check({"passed": 2, "failed": 0, "skipped": 1})
            self.assertFalse(ok)
            self.assertIn("1 cargo test(s) skipped on the GPU, and neither the manifest nor", text)
            log = ("==== gpukit test launch (gpukit--test--launch-1)\ntest gpu_launch ... ok\n\nsuccesses:\n\n"
                   "---- gpu_launch stdout ----\nskipped: no CUDA GPU (x)\n\nsuccesses:\n    gpu_launch\n\n"
                   "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
            ok, text = check({"passed": 2, "failed": 0, "skipped": 1}, log)
            self.assertFalse(ok)
            self.assertIn("skipped on the GPU (not run): gpukit/launch: gpu_launch", text)
            ok, text = check({"passed": 2, "failed": 0, "skipped": 0}, log.replace("skipped: no CUDA GPU (x)", "ok"))
            self.assertTrue(ok, text)


class Staging(unittest.TestCase):
    def test_assign_fits_and_splits(self):
        M = stagelib.MIB
        groups = [{"name": "early", "size": 5 * M}, {"name": "llvm", "size": 41 * M}, {"name": "driver", "size": 36 * M},
                  {"name": "std", "size": 22 * M}, {"name": "big", "size": 130 * M}, {"name": "wheels", "size": 3 * M}]
        calls = stagelib.assign(groups, 60 * M, ["early"])
        self.assertEqual(calls[0][0]["group"], "early")
        for c in calls:
            self.assertLessEqual(sum(p["size"] for p in c), 60 * M)
        pieces = [p for c in calls for p in c if p["group"] == "big"]
        self.assertGreater(len(pieces), 1)
        self.assertEqual(sum(p["size"] for p in pieces), 130 * M)
        offsets = [p["offset"] for p in sorted(pieces, key=lambda p: p["part"])]
        self.assertEqual(offsets[0], 0)
        for g in groups:
            self.assertEqual(sum(p["size"] for c in calls for p in c if p["group"] == g["name"]), g["size"])
        total = sum(g["size"] for g in groups)
        self.assertLessEqual(len(calls), -(-total // (60 * M)) + 1)

    def test_assign_first_too_big(self):
        with self.assertRaises(ValueError):
            stagelib.assign([{"name": "early", "size": 10}], 5, ["early"])

    def test_write_plan_and_reassemble(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            blobs = {"early": b"e" * 1000, "big": bytes(range(256)) * 40}
            args = []
            for name, data in blobs.items():
                (d / f"{name}.tar.xz").write_bytes(data)
            ns = type("A", (), dict(out=str(d / "stage"), budget=4096, first=["early"], commit="c0ffee", dirty=0,
                                    stage_root="/work/main", tree_bytes=100, info=None,
                                    group=[f"{n}={d / (n + '.tar.xz')}" for n in blobs]))
            plan = stagelib.write_plan(ns)
            self.assertGreaterEqual(plan["calls"], 3)
            for name, data in blobs.items():
                parts = plan["groups"][name]["parts"]
                joined = b"".join((d / "stage" / f"call{p['call']}" / p["file"]).read_bytes() for p in parts)
                self.assertEqual(joined, data)
                self.assertEqual(plan["groups"][name]["sha256"], hashlib.sha256(data).hexdigest())
            seq = stagelib.call_sequence(plan)
            self.assertEqual(seq[0]["carry"], [".stage/call1"])
            self.assertEqual(seq[-1]["command"], f"bash tests/gpu/run.sh {plan['calls']} {plan['calls']}")
            del args

    def test_test_artifacts(self):
        lines = [
            json.dumps({"reason": "compiler-artifact", "package_id": "path+file:///work/main/crates/gpukit#0.1.0",
                        "manifest_path": "/work/main/crates/gpukit/Cargo.toml",
                        "target": {"name": "gpukit", "kind": ["lib"], "src_path": "/work/main/crates/gpukit/src/lib.rs"},
                        "profile": {"test": True}, "executable": "/t/debug/deps/gpukit-123"}),
            json.dumps({"reason": "compiler-artifact", "package_id": "registry+https://x#syn@2.0.1",
                        "target": {"name": "syn", "kind": ["lib"]}, "profile": {"test": False}, "executable": None}),
            json.dumps({"reason": "compiler-artifact", "package_id": "gpukit-macros 0.1.0 (path+file:///w)",
                        "target": {"name": "ui", "kind": ["test"], "src_path": "/nonexistent/ui.rs"},
                        "profile": {"test": True}, "executable": "/t/debug/deps/ui-9"}),
            "not json", json.dumps({"reason": "build-finished", "success": True}),
        ]
        arts = stagelib.test_artifacts(lines)
        self.assertEqual([a["package"] for a in arts], ["gpukit", "gpukit-macros"])
        self.assertEqual(arts[1]["kind"], "test")
        self.assertEqual(stagelib.relative_dir(arts[0]["manifest_dir"], Path("/work/main")), "crates/gpukit")

    def test_package_name(self):
        self.assertEqual(stagelib.package_name("path+file:///work/main/crates/gpukit#0.1.0"), "gpukit")
        self.assertEqual(stagelib.package_name("path+file:///work/main/benches/x#gpukit-bench@0.1.0"), "gpukit-bench")
        self.assertEqual(stagelib.package_name("evcxr_gpu 0.1.0 (path+file:///w)"), "evcxr_gpu")

    def test_dep_lines(self):
        self.assertEqual(stagelib.dep_line('ndarray = "0.17"'), 'ndarray = "0.17"')
        self.assertEqual(stagelib.dep_line("plotters"), 'plotters = "*"')
        self.assertEqual(stagelib.dep_line('rand = { version = "0.9", features = ["small_rng"] }'),
                         'rand = { version = "0.9", features = ["small_rng"] }')
        self.assertIsNone(stagelib.dep_line('gpukit = { path = "../crates/gpukit" }'))
        self.assertIsNone(stagelib.dep_line('x = { git = "https://example.invalid/x" }'))

    def test_dev_dep_lines(self):
        meta = {"packages": [
            {"name": "gpukit", "dependencies": [
                {"name": "plotters", "req": "^0.3.7", "kind": "dev", "source": "registry+https://x",
                 "features": ["bitmap_backend"], "uses_default_features": False},
                {"name": "rand", "req": "^0.9", "kind": "dev", "source": "registry+https://x", "features": []},
                {"name": "cudarc", "req": "^0.19", "kind": None, "source": "registry+https://x"},
                {"name": "gpukit-macros", "req": "*", "kind": "dev", "source": None}]},
            {"name": "evcxr_gpu", "dependencies": [
                {"name": "tempfile", "req": "^3", "kind": "dev", "source": "registry+https://x"}]}]}
        self.assertEqual(stagelib.dev_dep_lines(meta, {"gpukit"}), [
            'plotters = { version = "^0.3.7", features = ["bitmap_backend"], default-features = false }',
            'rand = { version = "^0.9" }'])

    def test_prune_vendor(self):
        with tempfile.TemporaryDirectory() as d:
            v = Path(d)
            for name in ("windows-sys-0.59.0", "libc-0.2.1"):
                (v / name / "src").mkdir(parents=True)
                (v / name / "Cargo.toml").write_text("[package]\n")
                (v / name / "src" / "lib.rs").write_text("pub fn f() {}\n" * 100)
                files = {rel: hashlib.sha256((v / name / rel).read_bytes()).hexdigest()
                         for rel in ("Cargo.toml", "src/lib.rs")}
                (v / name / ".cargo-checksum.json").write_text(json.dumps({"files": files, "package": "abc"}))
            saved = stagelib.prune_vendor(v)
            self.assertEqual(saved, len("pub fn f() {}\n" * 100))
            self.assertEqual((v / "windows-sys-0.59.0" / "src" / "lib.rs").read_bytes(), b"")
            self.assertEqual((v / "windows-sys-0.59.0" / "Cargo.toml").read_text(), "[package]\n")
            ck = json.loads((v / "windows-sys-0.59.0" / ".cargo-checksum.json").read_text())
            self.assertEqual(ck["files"]["src/lib.rs"], hashlib.sha256(b"").hexdigest())
            self.assertEqual(ck["package"], "abc")
            self.assertNotEqual((v / "libc-0.2.1" / "src" / "lib.rs").read_bytes(), b"")

    def test_notebook_deps(self):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "notebooks").mkdir()
            (root / "notebooks" / "a.ipynb").write_text(json.dumps(nb(
                ("code", ':dep ndarray = "0.17"\n:dep gpukit = { path = "x" }\nlet a = 1;'),
                ("markdown", ":dep notthis"), ("code", ":dep plotters"))))
            self.assertEqual(stagelib.notebook_deps(root), ['ndarray = "0.17"', 'plotters = "*"'])


class DeviceRun(unittest.TestCase):
    def test_parse_libtest(self):
        out = ("running 3 tests\ntest a::b ... ok\ntest a::c ... FAILED\ntest d ... ignored, needs a GPU\n\n"
               "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n"
               "running 1 test\ntest e ... ok\n"
               "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n")
        r = devrun.parse_libtest(out)
        self.assertEqual((r["passed"], r["failed"], r["skipped"], r["ignored"]), (2, 1, 1, 1))
        self.assertEqual(r["failed_tests"], ["a::c"])
        self.assertEqual(r["result_lines"], 2)

    def test_visible_skips_count_as_skipped(self):
        out = ("running 2 tests\ntest gpu_add ... ok\ntest cpu_add ... ok\n\nsuccesses:\n\n"
               "---- gpu_add stdout ----\nskipped: no CUDA GPU (libcuda.so.1 not found)\n\n"
               "---- cpu_add stdout ----\nsum 3\n\nsuccesses:\n    cpu_add\n    gpu_add\n\n"
               "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n")
        r = devrun.parse_libtest(out)
        self.assertEqual((r["passed"], r["failed"], r["skipped"], r["ignored"]), (1, 0, 1, 0))
        self.assertEqual(r["skipped_tests"], ["gpu_add"])

    def test_skip_lines_of_gpukit_testing(self):
        # the line gpukit::testing prints (crates/gpukit/src/testing.rs) and the gpukit-macros one
        for line in ("skipped: no CUDA GPU (no NVIDIA driver (libcuda.so.1 not found)); "
                     "set GPUKIT_TEST_REQUIRE_GPU=1 to make this a failure",
                     "skipped: libnvrtc not available (libnvrtc not found); "
                     "set GPUKIT_REQUIRE_NVRTC=1 to make this a failure"):
            out = ("successes:\n\n---- t stdout ----\n" + line + "\n\nsuccesses:\n    t\n\n"
                   "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
            self.assertEqual(devrun.parse_libtest(out)["skipped_tests"], ["t"], line)

    def test_partial_skips(self):
        for line, skipped in (("skipped: no CUDA GPU", True), ("CUDA half skipped: no CUDA GPU (x)", True),
                              ("skipped the CUDA half: no CUDA GPU", True), ("3 rows, none skipped", False),
                              ("sum 3", False)):
            out = ("successes:\n\n---- t stdout ----\n" + line + "\n\n"
                   "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
            r = devrun.parse_libtest(out)
            self.assertEqual(r["skipped"], int(skipped), line)

    def test_run_tests_counts_crash_as_failure(self):
        with tempfile.TemporaryDirectory() as d:
            stage = Path(d)
            (stage / "root" / "tests").mkdir(parents=True)
            ok = stage / "root" / "tests" / "p--lib--ok"
            ok.write_text("#!/bin/sh\necho 'test x ... ok'\n"
                          "echo 'test result: ok. 1 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out'\n")
            bad = stage / "root" / "tests" / "p--test--crash"
            bad.write_text("#!/bin/sh\necho 'running 1 test'\nkill -SEGV $$\n")
            tests = [{"file": ok.name, "package": "p", "name": "ok", "kind": "lib", "dir": ""},
                     {"file": bad.name, "package": "p", "name": "crash", "kind": "test", "dir": ""}]
            res = devrun.run_tests(stage, tests, {"PATH": "/usr/bin:/bin"}, stage / "log", timeout=30)
            self.assertEqual(gm.cargo_test_totals(res), {"passed": 1, "failed": 1, "skipped": 2, "ignored": 2,
                                                         "skipped_tests": []})
            self.assertIn("==== p test crash", (stage / "log").read_text())

    def test_run_tests_leaves_a_binary_the_budget_cut_for_the_next_call(self):
        with tempfile.TemporaryDirectory() as d:
            stage = Path(d)
            (stage / "root" / "tests").mkdir(parents=True)
            slow = stage / "root" / "tests" / "p--test--slow"
            slow.write_text("#!/bin/sh\necho 'running 1 test'\n")
            tests = [{"file": slow.name, "package": "p", "name": "slow", "kind": "test", "dir": ""}]
            # 41 s left of the call: the binary gets 30 s (the floor), short of its own 60
            with unittest.mock.patch.object(devrun, "remaining", lambda budget: 41.0):
                with unittest.mock.patch("subprocess.run", side_effect=subprocess.TimeoutExpired("x", 30)):
                    before = devrun.run_tests(stage, tests, {"PATH": "/usr/bin:/bin"}, stage / "log",
                                              timeout=60, budget=90, last_call=False)
                    last = devrun.run_tests(stage, tests, {"PATH": "/usr/bin:/bin"}, stage / "log",
                                            timeout=60, budget=90, last_call=True)
            # a binary that runs past its own full timeout is a failure in any call
            with unittest.mock.patch.object(devrun, "remaining", lambda budget: 1000.0):
                with unittest.mock.patch("subprocess.run", side_effect=subprocess.TimeoutExpired("x", 60)):
                    own = devrun.run_tests(stage, tests, {"PATH": "/usr/bin:/bin"}, stage / "log",
                                           timeout=60, budget=2000, last_call=False)
            self.assertEqual(before, [])
            self.assertIn("left for the next call", (stage / "log").read_text())
            counts = lambda res: {k: gm.cargo_test_totals(res)[k] for k in ("passed", "failed", "skipped")}
            self.assertEqual(counts(last), {"passed": 0, "failed": 1, "skipped": 0})
            self.assertEqual(counts(own), {"passed": 0, "failed": 1, "skipped": 0})

    def test_a_run_with_a_skipping_gpu_test_is_not_current(self):
        """End to end on the CPU: a test executable whose GPU test skips (its output shows only
        with --show-output, as libtest does) -> run_tests -> manifest -> not current."""
        with tempfile.TemporaryDirectory() as d:
            stage = Path(d)
            (stage / "root" / "tests").mkdir(parents=True)
            exe = stage / "root" / "tests" / "gpukit--test--bounds-1"
            exe.write_text(
                "#!/bin/sh\n"
                "echo 'running 2 tests'; echo 'test cpu_check ... ok'; echo 'test gpu_check ... ok'; echo\n"
                "for a in \"$@\"; do if [ \"$a\" = --show-output ]; then\n"
                "  printf 'successes:\\n\\n---- gpu_check stdout ----\\n'\n"
                "  echo 'skipped: no CUDA GPU (no CUDA device); set GPUKIT_TEST_REQUIRE_GPU=1 to make this a failure'\n"
                "  printf '\\nsuccesses:\\n    cpu_check\\n    gpu_check\\n\\n'\n"
                "fi; done\n"
                "echo 'test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\n")
            tests = [{"file": exe.name, "package": "gpukit", "name": "bounds", "kind": "test", "dir": ""}]
            res = devrun.run_tests(stage, tests, {"PATH": "/usr/bin:/bin"}, stage / "log", timeout=30)
            totals = gm.cargo_test_totals(res)
            self.assertEqual(totals, {"passed": 1, "failed": 0, "skipped": 1, "ignored": 0,
                                      "skipped_tests": ["gpukit/bounds: gpu_check"]})
            self.assertEqual(gm.skipped_in_log((stage / "log").read_text()), ["gpukit/bounds: gpu_check"])
            m = gm.build_manifest(device="NVIDIA H100", driver="1", cuda="13.0", commit="c", date="d",
                                  cargo_tests=totals, notebooks=[])
            r = gm.staleness(m, {})
            self.assertEqual(r["tests_skipped"], ["gpukit/bounds: gpu_check"])
            self.assertFalse(gm.is_current(r))
            # the device environment requires the GPU, so the helper fails rather than skips there
            env = devrun.base_env(stage)
            self.assertEqual((env["GPUKIT_TEST_REQUIRE_GPU"], env["GPUKIT_REQUIRE_NVRTC"]), ("1", "1"))

    def test_unpack_joins_parts_and_checks(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            src = d / "src"
            (src / "rust" / "bin").mkdir(parents=True)
            (src / "rust" / "bin" / "tool").write_text("#!/bin/sh\necho hi\n")
            blob = d / "g.tar.xz"
            with tarfile.open(blob, "w:xz") as tf:
                tf.add(src / "rust", arcname="rust")
            data = blob.read_bytes()
            half = len(data) // 2
            carried = d / "carried"
            carried.mkdir()
            (carried / "g.tar.xz.part00").write_bytes(data[:half])
            plan = {"calls": 2, "groups": {"g": {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "parts": [
                {"file": "g.tar.xz.part00", "call": 1, "size": half},
                {"file": "g.tar.xz.part01", "call": 2, "size": len(data) - half}]}}}
            (carried / "plan.json").write_text(json.dumps(plan))
            stage = d / "stage"
            devrun.unpack(stage, carried)
            self.assertEqual(devrun.have(stage, ["g"]), ["g"])
            for f in carried.iterdir():
                f.unlink()
            (carried / "g.tar.xz.part01").write_bytes(data[half:])
            (carried / "plan.json").write_text(json.dumps(plan))
            devrun.unpack(stage, carried)
            self.assertEqual(devrun.have(stage, ["g"]), [])
            self.assertTrue((stage / "root" / "rust" / "bin" / "tool").is_file())


class NotebookState(unittest.TestCase):
    def test_merge_and_pending(self):
        with tempfile.TemporaryDirectory() as d:
            root, stage = Path(d) / "repo", Path(d) / "stage"
            (root / "notebooks").mkdir(parents=True)
            (stage / "state").mkdir(parents=True)
            for name in ("a", "b", "c"):
                (root / "notebooks" / f"{name}.ipynb").write_text(json.dumps(nb(("code", name))))
            old_root = devrun.ROOT
            devrun.ROOT = root
            try:
                h = {p: gm.source_sha256_file(root / p) for p in gm.notebook_paths(root)}
                first = devrun.merge_notebook_state(stage, [
                    {"path": "notebooks/a.ipynb", "source_sha256": h["notebooks/a.ipynb"], "status": "ok", "seconds": 1},
                    {"path": "notebooks/b.ipynb", "source_sha256": h["notebooks/b.ipynb"], "status": "error", "seconds": 2}])
                self.assertEqual([e["status"] for e in first], ["ok", "error", "not_run"])
                self.assertEqual(devrun.select_notebooks(stage, "pending"), {"notebooks/b.ipynb", "notebooks/c.ipynb"})
                self.assertEqual(devrun.select_notebooks(stage, "notebooks/[ab]*"), {"notebooks/a.ipynb", "notebooks/b.ipynb"})
                self.assertIsNone(devrun.select_notebooks(stage, None))
                second = devrun.merge_notebook_state(stage, [
                    {"path": "notebooks/c.ipynb", "source_sha256": h["notebooks/c.ipynb"], "status": "ok", "seconds": 3}])
                self.assertEqual([e["status"] for e in second], ["ok", "error", "ok"])
                (root / "notebooks" / "a.ipynb").write_text(json.dumps(nb(("code", "changed"))))
                third = devrun.merge_notebook_state(stage, [])
                self.assertEqual(third[0]["status"], "not_run")
                self.assertIn("notebooks/a.ipynb", devrun.select_notebooks(stage, "pending"))
            finally:
                devrun.ROOT = old_root


class NotebookKernel(unittest.TestCase):
    def test_rust_notebooks_use_the_rust_kernel_others_their_own(self):
        rust = {"kernelspec": {"name": "rust-gpu", "language": "rust"}}
        self.assertEqual(devrun.notebook_kernel(rust, "rust-gpu"), ("rust-gpu", None))
        self.assertEqual(devrun.notebook_kernel({}, "rust-gpu"), ("rust-gpu", None))
        py = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
        kernel, env = devrun.notebook_kernel(py, "rust-gpu")
        self.assertEqual(kernel, "python3")
        self.assertEqual(env["PYTHONPATH"].split(os.pathsep)[0], str(devrun.ROOT / "python"))


class Recording(unittest.TestCase):
    def run_folder(self, d: Path, as_tar: bool):
        root = d / "repo"
        (root / "notebooks").mkdir(parents=True)
        src = nb(("code", "1 + 1"))
        (root / "notebooks" / "a.ipynb").write_text(json.dumps(src))
        executed = json.loads(json.dumps(src))
        executed["cells"][0]["outputs"] = [{"output_type": "execute_result", "data": {"text/plain": "2"},
                                           "metadata": {}, "execution_count": 1}]
        run = d / "run"
        run.mkdir()
        m = gm.build_manifest(device="NVIDIA H100 80GB HBM3", driver="580", cuda="13.0", commit="c", date="d",
                              cargo_tests={"passed": 5, "failed": 0, "skipped": 0},
                              notebooks=[{"path": "notebooks/a.ipynb", "source_sha256": gm.source_sha256(src),
                                          "status": "ok", "seconds": 3}])
        (run / "manifest.json").write_text(json.dumps(m))
        (run / "cargo-tests.log").write_text("test result: ok.\n")
        data = json.dumps(executed).encode()
        if as_tar:
            with tarfile.open(run / "executed-notebooks.tar.gz", "w:gz") as tf:
                info = tarfile.TarInfo("notebooks/a.ipynb")
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
                evil = tarfile.TarInfo("../../evil.ipynb")
                evil.size = 1
                tf.addfile(evil, io.BytesIO(b"x"))
        else:
            (run / "notebooks").mkdir()
            (run / "notebooks" / "notebooks__a.ipynb").write_bytes(data)
        return root, run

    def test_record_both_layouts(self):
        for as_tar in (False, True):
            with tempfile.TemporaryDirectory() as d:
                root, run = self.run_folder(Path(d), as_tar)
                buf = io.StringIO()
                self.assertEqual(record.record(run, root / "docs/gpu-run", root, out=buf), 0, buf.getvalue())
                out = root / "docs/gpu-run"
                self.assertTrue((out / "notebooks/a.ipynb").is_file())
                self.assertTrue((out / "cargo-tests.log").is_file())
                self.assertFalse((Path(d) / "evil.ipynb").exists())
                self.assertTrue(check_manifest.report(root, out / "manifest.json", out=io.StringIO()))

    def test_record_replaces_the_previous_run_and_keeps_other_records(self):
        with tempfile.TemporaryDirectory() as d:
            root, run = self.run_folder(Path(d), False)
            out = root / "docs/gpu-run"
            (out / "notebooks").mkdir(parents=True)
            (out / "notebooks/gone.ipynb").write_text("{}")
            (out / "axes-16").mkdir()
            (out / "axes-16/README.md").write_text("a single test run")
            (out / "manifest.json").write_text(json.dumps({"notebooks": [{"path": "notebooks/gone.ipynb"}]}))
            buf = io.StringIO()
            self.assertEqual(record.record(run, out, root, out=buf), 0, buf.getvalue())
            self.assertTrue((out / "notebooks/a.ipynb").is_file())
            self.assertFalse((out / "notebooks/gone.ipynb").exists())
            self.assertEqual((out / "axes-16/README.md").read_text(), "a single test run")

    def test_record_names_tests_that_skipped_on_the_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            root, run = self.run_folder(Path(d), False)
            m = json.loads((run / "manifest.json").read_text())
            m["cargo_tests"].update(skipped=1, skipped_tests=["gpukit/array_gpu: gpu_sum"])
            (run / "manifest.json").write_text(json.dumps(m))
            buf = io.StringIO()
            self.assertEqual(record.record(run, root / "docs/gpu-run", root, out=buf), 0, buf.getvalue())
            self.assertIn("record: SKIPPED on the GPU (not run): gpukit/array_gpu: gpu_sum", buf.getvalue())
            self.assertFalse(check_manifest.report(root, root / "docs/gpu-run/manifest.json", out=io.StringIO()))

    def test_record_refuses_mismatched_copy(self):
        with tempfile.TemporaryDirectory() as d:
            root, run = self.run_folder(Path(d), False)
            (run / "notebooks" / "notebooks__a.ipynb").write_text(json.dumps(nb(("code", "other"))))
            buf = io.StringIO()
            self.assertEqual(record.record(run, root / "docs/gpu-run", root, out=buf), 2)
            self.assertIn("hash", buf.getvalue())


if __name__ == "__main__":
    unittest.main()
