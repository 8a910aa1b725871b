"""Notebook hashing and the GPU-run manifest (docs/gpu-run/manifest.json).

Standard library only: used on the CPU machine by `make test` (check_manifest.py), on the device
machine by run_notebooks.py, and here again by record.sh.

The manifest format is fixed by issue 4:

    {
      "device": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0",
      "commit": "<project commit that was run>", "date": "<UTC ISO 8601>",
      "cargo_tests": {"passed": N, "failed": N, "skipped": N,
                      "ignored": N, "skipped_tests": ["<package>/<binary>: <test>", ...]},
      "notebooks": [{"path": "notebooks/1.0_....ipynb", "source_sha256": "...",
                     "status": "ok" | "error" | "timeout" | "not_run", "seconds": 12.3}, ...]
    }

`source_sha256` is the SHA-256 of the concatenation, over the notebook's code cells in order, of
each cell's source text (a list of lines joined into one string, as nbformat reads it) followed by
one NUL byte. Extra keys may be present; readers ignore what they do not know.

`cargo_tests.skipped` counts the tests that did not run: libtest's `ignored` ones (`ignored`, run
elsewhere on purpose, e.g. in the benchmark call) and those that passed only by skipping, i.e.
printed a line like `skipped: no CUDA GPU (...)` (`skipped_tests` names them; the run uses
`--show-output`, so every passing test's output is in the log). A run with any such skipped test
is not current: a GPU test that skipped on the GPU machine proves nothing. A manifest without
`skipped_tests` (older runs) is judged from the `cargo-tests.log` recorded beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Iterable

#: Folders (relative to the repository root) whose *.ipynb files the GPU run executes.
NOTEBOOK_DIRS = ("notebooks", "tests/notebooks")

#: Statuses a notebook entry may carry. Only "ok" means every cell ran without error.
STATUSES = ("ok", "error", "timeout", "not_run")

#: A line by which a test says it skipped: "skipped: no CUDA GPU (...)" (gpukit::testing), and
#: the older "CUDA half skipped: ..." and "skipped the CUDA half: ...".
SKIP_RE = re.compile(r"^(?:[\w ]*\b)?skipped\b[^:]*:", re.IGNORECASE)
#: The header libtest (`--show-output`) puts above a test's captured output.
SECTION_RE = re.compile(r"^---- (.+?) std(?:out|err) ----$")
#: The header devrun.py writes above each test executable's output in cargo-tests.log.
BINARY_RE = re.compile(r"^==== (\S+) (\S+) (\S+) \((.+)\)$")


def cell_source(cell: dict) -> str:
    """A cell's source as one string, as nbformat reads it (a list of lines is joined with '')."""
    src = cell.get("source", "")
    if isinstance(src, list):
        return "".join(src)
    return src


def source_sha256(notebook: dict) -> str:
    """SHA-256 (hex) over the code cells in order: each cell's source, then one NUL byte."""
    h = hashlib.sha256()
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            h.update(cell_source(cell).encode("utf-8"))
            h.update(b"\0")
    return h.hexdigest()


def source_sha256_file(path: str | os.PathLike) -> str:
    """`source_sha256` of the notebook stored at `path`."""
    with open(path, encoding="utf-8") as f:
        return source_sha256(json.load(f))


def notebook_paths(root: str | os.PathLike, dirs: Iterable[str] = NOTEBOOK_DIRS) -> list[str]:
    """Repository-relative paths (with '/') of every notebook the GPU run executes, sorted.

    Only the notebooks directly inside each folder count (not checkpoints, not subfolders).
    """
    root = Path(root)
    found = []
    for d in dirs:
        folder = root / d
        if not folder.is_dir():
            continue
        for p in sorted(folder.glob("*.ipynb")):
            if p.is_file():
                found.append(p.relative_to(root).as_posix())
    return found


def current_hashes(root: str | os.PathLike) -> dict[str, str]:
    """{path: source_sha256} for the notebooks in the working tree."""
    root = Path(root)
    return {p: source_sha256_file(root / p) for p in notebook_paths(root)}


def skipped_in_output(output: str) -> list[str]:
    """Names of the tests that passed by skipping in one libtest run's output (`--show-output`):
    those whose captured output, among the successes, has a skip line (`SKIP_RE`)."""
    found: list[str] = []
    mode, current = None, None
    for line in output.splitlines():
        if line in ("successes:", "failures:"):
            mode, current = line[:-1], None
            continue
        if line.startswith("test result: "):
            mode, current = None, None
            continue
        h = SECTION_RE.match(line)
        if h:
            current = h.group(1)
            continue
        if mode == "successes" and current and SKIP_RE.search(line) and current not in found:
            found.append(current)
    return found


def skipped_in_log(log: str) -> list[str]:
    """`<package>/<binary>: <test>` for every test that passed by skipping in a cargo-tests.log
    (the test executables' outputs, each under a `==== <package> <kind> <binary> (<file>)` line)."""
    found: list[str] = []
    label, chunk = None, []

    def flush():
        if label is not None:
            found.extend(f"{label}: {t}" for t in skipped_in_output("\n".join(chunk)))

    for line in log.splitlines():
        m = BINARY_RE.match(line)
        if m:
            flush()
            label, chunk = f"{m.group(1)}/{m.group(3)}", []
        else:
            chunk.append(line)
    flush()
    return found


def cargo_test_totals(results: Iterable[dict]) -> dict:
    """Sum the test executables' results (devrun.parse_libtest, plus `package` and `name`):
    `passed`, `failed`, `skipped` (ignored + passed by skipping), `ignored`, and `skipped_tests`
    (`<package>/<binary>: <test>` of each test that passed by skipping)."""
    total = {"passed": 0, "failed": 0, "skipped": 0, "ignored": 0, "skipped_tests": []}
    for r in results:
        total["passed"] += int(r.get("passed", 0))
        total["failed"] += int(r.get("failed", 0))
        total["skipped"] += int(r.get("skipped", r.get("ignored", 0)))
        total["ignored"] += int(r.get("ignored", 0))
        where = f"{r.get('package', '?')}/{r.get('name', '?')}"
        total["skipped_tests"] += [f"{where}: {t}" for t in r.get("skipped_tests", [])]
    return total


def build_manifest(*, device: str, driver: str, cuda: str, commit: str, date: str,
                   cargo_tests: dict, notebooks: list[dict], extra: dict | None = None) -> dict:
    """The manifest dict, keys in the documented order, each notebook entry validated."""
    entries = []
    for nb in notebooks:
        status = nb["status"]
        if status not in STATUSES:
            raise ValueError(f"notebook {nb['path']}: unknown status {status!r}")
        entry = {
            "path": nb["path"],
            "source_sha256": nb["source_sha256"],
            "status": status,
            "seconds": round(float(nb["seconds"]), 2),
        }
        for k in ("error", "failed_cell"):
            if nb.get(k) is not None:
                entry[k] = nb[k]
        entries.append(entry)
    manifest = {
        "device": device,
        "driver": driver,
        "cuda": cuda,
        "commit": commit,
        "date": date,
        "cargo_tests": {k: int(cargo_tests.get(k, 0)) for k in ("passed", "failed", "skipped", "ignored")},
        "notebooks": sorted(entries, key=lambda e: e["path"]),
    }
    manifest["cargo_tests"]["skipped_tests"] = [str(t) for t in cargo_tests.get("skipped_tests", [])]
    if extra:
        for k, v in extra.items():
            if k not in manifest:
                manifest[k] = v
    return manifest


def validate_manifest(manifest: dict) -> list[str]:
    """Problems with the manifest's shape (an empty list when it is well formed)."""
    problems = []
    for key, typ in (("device", str), ("driver", str), ("cuda", str), ("commit", str),
                     ("date", str), ("cargo_tests", dict), ("notebooks", list)):
        if not isinstance(manifest.get(key), typ):
            problems.append(f"`{key}` missing or not a {typ.__name__}")
    ct = manifest.get("cargo_tests")
    if isinstance(ct, dict):
        for k in ("passed", "failed", "skipped"):
            if not isinstance(ct.get(k), int):
                problems.append(f"`cargo_tests.{k}` missing or not an integer")
        if "ignored" in ct and not isinstance(ct["ignored"], int):
            problems.append("`cargo_tests.ignored` not an integer")
        st = ct.get("skipped_tests")
        if st is not None and not (isinstance(st, list) and all(isinstance(t, str) for t in st)):
            problems.append("`cargo_tests.skipped_tests` not a list of strings")
    for i, nb in enumerate(manifest.get("notebooks") or []):
        for k in ("path", "source_sha256", "status", "seconds"):
            if k not in nb:
                problems.append(f"notebooks[{i}] lacks `{k}`")
        if nb.get("status") not in STATUSES:
            problems.append(f"notebooks[{i}] has status {nb.get('status')!r}")
    return problems


def staleness(manifest: dict, hashes: dict[str, str], log: str | None = None) -> dict:
    """Compare a manifest with the current notebooks' hashes, and say which tests it did not run.

    `log` is the run's cargo-tests.log where there is one (recorded beside the manifest).

    Returns {"changed": [...], "missing": [...], "removed": [...], "not_ok": [...],
    "tests_failed": N, "tests_skipped": [...], "skips_unknown": N}: `changed` have a different
    hash, `missing` are current notebooks absent from the manifest, `removed` are manifest entries
    with no notebook any more, `not_ok` are entries whose status is not "ok" (whether or not they
    are current); `tests_skipped` are the tests that passed by skipping (the manifest's
    `skipped_tests` and those the log shows); `skips_unknown` is the number of skipped tests of a
    manifest that does not name them, beyond its ignored ones, where no log says which (0 when
    known).
    """
    recorded = {nb["path"]: nb for nb in manifest.get("notebooks", [])}
    changed = sorted(p for p, h in hashes.items() if p in recorded and recorded[p].get("source_sha256") != h)
    missing = sorted(p for p in hashes if p not in recorded)
    removed = sorted(p for p in recorded if p not in hashes)
    not_ok = sorted(p for p, nb in recorded.items() if nb.get("status") != "ok")
    ct = manifest.get("cargo_tests") or {}
    failed = int(ct.get("failed", 0))
    recorded_skips = ct.get("skipped_tests")
    skipped = list(recorded_skips or [])
    if log is not None:
        skipped += [t for t in skipped_in_log(log) if t not in skipped]
    unknown = 0
    if recorded_skips is None and log is None:
        unknown = max(0, int(ct.get("skipped", 0)) - int(ct.get("ignored", 0)))
    return {"changed": changed, "missing": missing, "removed": removed, "not_ok": not_ok,
            "tests_failed": failed, "tests_skipped": skipped, "skips_unknown": unknown}


def is_current(report: dict) -> bool:
    """True when the manifest covers exactly the current notebooks, unchanged, all ok, and every
    cargo test ran (none failed, none passed by skipping, none possibly so)."""
    return not (report["changed"] or report["missing"] or report["removed"] or report["not_ok"]
                or report["tests_failed"] or report.get("tests_skipped") or report.get("skips_unknown"))
