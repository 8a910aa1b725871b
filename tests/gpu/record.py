#!/usr/bin/env python3
"""Record a fetched GPU run into docs/gpu-run/ (called by tests/gpu/record.sh).

    record.py RUN_DIR [--dest docs/gpu-run]

RUN_DIR is what the last device call returned (files_at): manifest.json, results.json,
cargo-tests.log, and the executed notebooks either as notebooks/<path with '/' as '__'> or as
executed-notebooks.tar.gz (archive names = repository paths).
docs/gpu-run/ then holds manifest.json, cargo-tests.log and the executed notebooks under their
repository paths (docs/gpu-run/notebooks/..., docs/gpu-run/tests/notebooks/...); the previous run's
files are replaced, other folders there (records of single GPU test runs) are kept.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gpumanifest  # noqa: E402


def executed_notebooks(run: Path, wanted: set[str]) -> dict[str, bytes]:
    """{repository path: executed notebook bytes} from a run folder, limited to `wanted` paths."""
    found: dict[str, bytes] = {}
    tgz = run / "executed-notebooks.tar.gz"
    if tgz.is_file():
        with tarfile.open(tgz, "r:gz") as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name in wanted:
                    f = tf.extractfile(m)
                    if f is not None:
                        found[m.name] = f.read()
    nbdir = run / "notebooks"
    if nbdir.is_dir():
        for f in nbdir.iterdir():
            path = f.name.replace("__", "/")
            if f.is_file() and path in wanted:
                found[path] = f.read_bytes()
    return found


def clear_previous_run(dest: Path, wanted: set[str]) -> None:
    """Removes what a run recorded in `dest` (its manifest, test log and the folders of its
    notebooks, and those of the run about to be recorded), and nothing else: folders of other
    GPU records kept beside it (`docs/gpu-run/<name>/`) stay."""
    paths = set(wanted)
    old = dest / "manifest.json"
    if old.is_file():
        try:
            paths |= {nb["path"] for nb in json.loads(old.read_text(encoding="utf-8")).get("notebooks", [])}
        except (ValueError, KeyError, TypeError):
            pass
    for top in sorted({p.split("/", 1)[0] for p in paths if "/" in p and ".." not in p.split("/")}):
        shutil.rmtree(dest / top, ignore_errors=True)
    for name in ("manifest.json", "cargo-tests.log"):
        (dest / name).unlink(missing_ok=True)


def record(run: Path, dest: Path, root: Path, out=sys.stdout) -> int:
    mpath = run / "manifest.json"
    if not mpath.is_file():
        print(f"record: {mpath} not found: pass the folder the last device call returned (files_at)", file=out)
        return 2
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    # runs before the manifest carried it: the GPU count from the same call's results.json
    rpath = run / "results.json"
    if "gpu_count" not in manifest and rpath.is_file():
        count = json.loads(rpath.read_text(encoding="utf-8")).get("facts", {}).get("gpu_count")
        if count is not None:
            manifest["gpu_count"] = count
    problems = gpumanifest.validate_manifest(manifest)
    if problems:
        print("record: manifest malformed: " + "; ".join(problems), file=out)
        return 2
    wanted = {nb["path"] for nb in manifest["notebooks"]}
    executed = executed_notebooks(run, wanted)
    # the executed notebook must be the one the manifest hashed
    for path, data in executed.items():
        h = gpumanifest.source_sha256(json.load(io.BytesIO(data)))
        entry = next(nb for nb in manifest["notebooks"] if nb["path"] == path)
        if h != entry["source_sha256"]:
            print(f"record: {path}: executed copy hash {h[:12]} != manifest {entry['source_sha256'][:12]}", file=out)
            return 2
    clear_previous_run(dest, wanted)
    dest.mkdir(parents=True, exist_ok=True)
    for path, data in sorted(executed.items()):
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    log = run / "cargo-tests.log"
    if log.is_file():
        shutil.copyfile(log, dest / "cargo-tests.log")
    not_ok = [nb["path"] for nb in manifest["notebooks"] if nb["status"] != "ok"]
    print(f"record: {len(executed)} executed notebook(s), manifest of {manifest['date']} on {manifest['device']} "
          f"(driver {manifest['driver']}, CUDA {manifest['cuda']}), cargo tests {manifest['cargo_tests']}", file=out)
    if len(executed) < len(wanted):
        print(f"record: {len(wanted) - len(executed)} notebook(s) in the manifest came back without an executed copy "
              f"(not run)", file=out)
    for p in not_ok:
        print(f"record: NOT OK on the GPU: {p}", file=out)
    tests_log = dest / "cargo-tests.log"
    r = gpumanifest.staleness(manifest, gpumanifest.current_hashes(root),
                              tests_log.read_text(encoding="utf-8", errors="replace") if tests_log.is_file() else None)
    for t in r["tests_skipped"]:
        print(f"record: SKIPPED on the GPU (not run): {t}", file=out)
    for p in r["changed"]:
        print(f"record: note: {p} changed in the working tree since the run", file=out)
    for p in r["missing"]:
        print(f"record: note: {p} is not in this run", file=out)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--root", type=Path, default=HERE.parent.parent)
    ap.add_argument("--dest", type=Path, default=None)
    args = ap.parse_args(argv)
    root = args.root.resolve()
    return record(args.run, (args.dest or root / "docs" / "gpu-run"), root)


if __name__ == "__main__":
    sys.exit(main())
