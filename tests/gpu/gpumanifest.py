"""Notebook hashing and the GPU-run manifest (docs/gpu-run/manifest.json).

Standard library only: used on the CPU machine by `make test` (check_manifest.py), on the device
machine by run_notebooks.py, and here again by record.sh.

The manifest format is fixed by issue 4:

    {
      "device": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0",
      "commit": "<project commit that was run>", "date": "<UTC ISO 8601>",
      "cargo_tests": {"passed": N, "failed": N, "skipped": N},
      "notebooks": [{"path": "notebooks/1.0_....ipynb", "source_sha256": "...",
                     "status": "ok" | "error" | "timeout" | "not_run", "seconds": 12.3}, ...]
    }

`source_sha256` is the SHA-256 of the concatenation, over the notebook's code cells in order, of
each cell's source text (a list of lines joined into one string, as nbformat reads it) followed by
one NUL byte. Extra keys may be present; readers ignore what they do not know.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable

#: Folders (relative to the repository root) whose *.ipynb files the GPU run executes.
NOTEBOOK_DIRS = ("notebooks", "tests/notebooks")

#: Statuses a notebook entry may carry. Only "ok" means every cell ran without error.
STATUSES = ("ok", "error", "timeout", "not_run")


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


def cargo_test_totals(results: Iterable[dict]) -> dict:
    """Sum libtest result counts: `ignored` tests are reported as `skipped`."""
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for r in results:
        total["passed"] += int(r.get("passed", 0))
        total["failed"] += int(r.get("failed", 0))
        total["skipped"] += int(r.get("skipped", r.get("ignored", 0)))
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
        "cargo_tests": {k: int(cargo_tests.get(k, 0)) for k in ("passed", "failed", "skipped")},
        "notebooks": sorted(entries, key=lambda e: e["path"]),
    }
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
    for i, nb in enumerate(manifest.get("notebooks") or []):
        for k in ("path", "source_sha256", "status", "seconds"):
            if k not in nb:
                problems.append(f"notebooks[{i}] lacks `{k}`")
        if nb.get("status") not in STATUSES:
            problems.append(f"notebooks[{i}] has status {nb.get('status')!r}")
    return problems


def staleness(manifest: dict, hashes: dict[str, str]) -> dict:
    """Compare a manifest with the current notebooks' hashes.

    Returns {"changed": [...], "missing": [...], "removed": [...], "not_ok": [...],
    "tests_failed": N}: `changed` have a different hash, `missing` are current notebooks absent
    from the manifest, `removed` are manifest entries with no notebook any more, `not_ok` are
    entries whose status is not "ok" (whether or not they are current).
    """
    recorded = {nb["path"]: nb for nb in manifest.get("notebooks", [])}
    changed = sorted(p for p, h in hashes.items() if p in recorded and recorded[p].get("source_sha256") != h)
    missing = sorted(p for p in hashes if p not in recorded)
    removed = sorted(p for p in recorded if p not in hashes)
    not_ok = sorted(p for p, nb in recorded.items() if nb.get("status") != "ok")
    failed = int((manifest.get("cargo_tests") or {}).get("failed", 0))
    return {"changed": changed, "missing": missing, "removed": removed, "not_ok": not_ok,
            "tests_failed": failed}


def is_current(report: dict) -> bool:
    """True when the manifest covers exactly the current notebooks, unchanged, all ok, no failed test."""
    return not (report["changed"] or report["missing"] or report["removed"] or report["not_ok"]
                or report["tests_failed"])
