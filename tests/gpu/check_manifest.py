#!/usr/bin/env python3
"""Report whether docs/gpu-run/manifest.json is current for the notebooks in the working tree.

Always exits 0 (a stale GPU run is news, not a test failure): `make test` calls it.
A run in which any cargo test passed only by skipping (printed `skipped: ...`) is not current
(gpumanifest.staleness; the cargo-tests.log beside the manifest is read too).

    python3 tests/gpu/check_manifest.py [--root DIR] [--manifest PATH]
    python3 tests/gpu/check_manifest.py --self-test    # run the pipeline's unit tests too
"""

from __future__ import annotations

import argparse
import json
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gpumanifest  # noqa: E402


def report(root: Path, manifest_path: Path, out=sys.stdout) -> bool:
    """Print the staleness report; returns True when the manifest is current."""
    hashes = gpumanifest.current_hashes(root)
    if not manifest_path.is_file():
        print(f"gpu-run: no {manifest_path.relative_to(root) if manifest_path.is_relative_to(root) else manifest_path}"
              f" yet; {len(hashes)} notebook(s) have no GPU run recorded (see tests/gpu/README.md)", file=out)
        return False
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(f"gpu-run: cannot read {manifest_path}: {e}", file=out)
        return False
    problems = gpumanifest.validate_manifest(manifest)
    if problems:
        print("gpu-run: manifest malformed: " + "; ".join(problems), file=out)
        return False
    log_path = manifest_path.parent / "cargo-tests.log"
    log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.is_file() else None
    r = gpumanifest.staleness(manifest, hashes, log)
    head = (f"gpu-run: manifest of {manifest.get('date')} on {manifest.get('device')} "
            f"(commit {str(manifest.get('commit'))[:12]})")
    if gpumanifest.is_current(r):
        print(f"{head}: current, {len(hashes)} notebook(s) ok, "
              f"cargo tests {manifest['cargo_tests']['passed']} passed / 0 failed", file=out)
        return True
    print(f"{head}: STALE or incomplete — rerun the GPU pipeline (tests/gpu/README.md)", file=out)
    for key, label in (("changed", "changed since the run"), ("missing", "never run on the GPU"),
                       ("removed", "recorded but no longer present"), ("not_ok", "did not pass on the GPU")):
        for p in r[key]:
            print(f"  {label}: {p}", file=out)
    if r["tests_failed"]:
        print(f"  cargo tests failed on the GPU: {r['tests_failed']}", file=out)
    for t in r["tests_skipped"]:
        print(f"  skipped on the GPU (not run): {t}", file=out)
    if r["skips_unknown"]:
        print(f"  {r['skips_unknown']} cargo test(s) skipped on the GPU, and neither the manifest nor a "
              f"cargo-tests.log beside it says which", file=out)
    return False


def self_test() -> bool:
    """Run the unit tests of the GPU pipeline scripts (tests/gpu/test_*.py)."""
    suite = unittest.defaultTestLoader.discover(str(HERE), pattern="test_*.py", top_level_dir=str(HERE))
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return result.wasSuccessful()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent.parent)
    ap.add_argument("--manifest", type=Path, default=None)
    ap.add_argument("--self-test", action="store_true", help="also run the pipeline's unit tests; exit 1 if they fail")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    manifest = (args.manifest or root / "docs/gpu-run/manifest.json").resolve()
    report(root, manifest)
    if args.self_test:
        return 0 if self_test() else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
