#!/usr/bin/env python3
"""Execute notebooks through the installed "Rust (GPU)" kernel with nbclient.

    python tests/notebooks/run.py [--kernel rust-gpu] [--timeout 1800] [--out DIR] NOTEBOOK_OR_DIR...

Prints one line per notebook (PASS/FAIL, seconds, the failing cell) and closes with
`N passed, M failed`; exits non-zero if any notebook failed. A cell error fails the notebook
unless the cell is tagged `raises-exception` (nbclient's convention).

Rust notebooks run with `--kernel`. A notebook whose kernelspec declares another language (a
Python notebook with `%%rust` cells, `%load_ext rust_gpu`) runs with its own kernelspec (e.g.
`python3`), with this checkout's `python/` first on its PYTHONPATH so that it imports the
checkout's rust_gpu.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError


def collect(paths: list[str]) -> list[Path]:
    """The .ipynb files named or contained (not recursively, no checkpoints) in `paths`."""
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(sorted(q for q in p.glob("*.ipynb") if ".ipynb_checkpoints" not in q.parts))
        elif p.suffix == ".ipynb" and p.is_file():
            found.append(p)
        else:
            raise SystemExit(f"run.py: {p} is neither a notebook nor a directory")
    return found


def first_line(text: str) -> str:
    lines = [l for l in str(text).strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


ROOT = Path(__file__).resolve().parents[2]


def kernel_for(metadata: dict, rust_kernel: str) -> str:
    """The kernel of a notebook: `rust_kernel` for Rust notebooks (or when none is declared),
    the notebook's own kernelspec when it declares another language."""
    spec = metadata.get("kernelspec") or {}
    language = spec.get("language") or (metadata.get("language_info") or {}).get("name")
    if language and language != "rust" and spec.get("name"):
        return spec["name"]
    return rust_kernel


def kernel_env(kernel: str, rust_kernel: str) -> dict | None:
    """Environment of a non-Rust kernel: ours, with the checkout's python/ first on PYTHONPATH."""
    if kernel == rust_kernel:
        return None
    path = os.environ.get("PYTHONPATH")
    pydir = str(ROOT / "python")
    return {**os.environ, "PYTHONPATH": f"{pydir}{os.pathsep}{path}" if path else pydir}


def run_one(path: Path, kernel: str, timeout: int, out: Path | None) -> tuple[bool, str]:
    """Executes one notebook (`kernel` is the Rust kernel); returns (passed, detail)."""
    nb = nbformat.read(path, as_version=4)
    own = kernel_for(nb.metadata, kernel)
    client = NotebookClient(nb, kernel_name=own, timeout=timeout, startup_timeout=300,
                            resources={"metadata": {"path": str(path.parent)}})
    env = kernel_env(own, kernel)
    try:
        client.execute(**({"env": env} if env is not None else {}))
        ok, detail = True, ""
    except CellExecutionError as e:
        ok, detail = False, f"cell error: {e.ename}: {first_line(e.evalue) or first_line(e)}"
    except CellTimeoutError as e:
        ok, detail = False, f"cell timed out after {timeout} s: {first_line(e)}"
    except DeadKernelError as e:
        ok, detail = False, f"kernel died: {first_line(e)}"
    except Exception as e:  # a broken notebook file or a kernel that does not start
        ok, detail = False, f"{type(e).__name__}: {first_line(e)}"
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out / path.name)
    return ok, detail


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--kernel", default="rust-gpu")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    ap.add_argument("--out", type=Path, help="write executed notebooks here")
    args = ap.parse_args(argv)
    notebooks = collect(args.paths)
    passed = failed = 0
    for nb in notebooks:
        start = time.monotonic()
        ok, detail = run_one(nb, args.kernel, args.timeout, args.out)
        secs = time.monotonic() - start
        status = "PASS" if ok else "FAIL"
        print(f"{status} {nb} ({secs:.1f} s){'  ' + detail if detail else ''}", flush=True)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and notebooks else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
