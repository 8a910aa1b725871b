#!/usr/bin/env python3
"""The GPU run on the device machine (called by tests/gpu/run.sh; Python 3.12 there).

    devrun.py call K N      one device call: unpack what it carried, then do every step whose
                            inputs have arrived (tests; on the last call: toolchain-dependent tests,
                            wheels, kernelspec, notebooks, manifest), writing results to $OUT
    devrun.py notebook IN OUT RESULT --kernel NAME --cell-timeout S
                            execute one notebook with nbclient (a subprocess of `call`)

State lives in $GPU_STAGE_ROOT (default /tmp/gpu-stage), which a warm machine keeps between
back-to-back calls: parts/ (carried files), root/ (unpacked groups), state/ (results so far).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

import gpumanifest  # noqa: E402

START = time.monotonic()
RESULT_RE = re.compile(r"^test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored")
TEST_LINE_RE = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)")
TOOLCHAIN_GROUPS = ("rust-llvm", "rust-driver", "rust-cargo", "rust-std", "vendor")
OPTIONAL_GROUPS = ("rust-src",)   # staged where the toolchain has it; the notebooks wait for it then
NOTEBOOK_GROUPS = TOOLCHAIN_GROUPS + ("evcxr", "wheels")


def log(msg: str):
    print(f"[gpu-run +{time.monotonic() - START:5.0f}s] {msg}", flush=True)


def remaining(budget: float) -> float:
    return budget - (time.monotonic() - START)


# ---------------------------------------------------------------------------------------------
# unpacking


def sha256(path: Path) -> str:
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def unpack(stage: Path, carried: Path) -> dict:
    """Copy the carried call folder into stage/parts, extract every group whose parts are all
    there (once). Returns the plan."""
    parts = stage / "parts"
    rootdir = stage / "root"
    done = stage / "state" / "extracted"
    for d in (parts, rootdir, done):
        d.mkdir(parents=True, exist_ok=True)
    if carried.is_dir():
        for f in sorted(carried.iterdir()):
            if f.is_file():
                shutil.copyfile(f, parts / f.name)
        log(f"received {carried} ({sum(f.stat().st_size for f in carried.iterdir() if f.is_file()) >> 20} MiB)")
    else:
        log(f"nothing carried at {carried}")
    plan_path = parts / "plan.json"
    if not plan_path.is_file():
        raise SystemExit(f"no plan.json: was {carried} carried? (see tests/gpu/README.md)")
    plan = json.loads(plan_path.read_text())
    for name, g in plan["groups"].items():
        marker = done / name
        if marker.exists():
            continue
        files = [parts / p["file"] for p in g["parts"]]
        if not all(f.is_file() for f in files):
            continue
        blob = parts / f"{name}.tar.xz"
        if len(files) > 1:
            with open(blob, "wb") as out:
                for f in files:
                    with open(f, "rb") as src:
                        shutil.copyfileobj(src, out, 8 << 20)
        if sha256(blob) != g["sha256"]:
            raise SystemExit(f"group {name}: checksum mismatch (stale or partial carry); restage and rerun")
        t0 = time.monotonic()
        if shutil.which("xz"):
            subprocess.run(["tar", "-C", str(rootdir), "-xJf", str(blob)], check=True)
        else:
            with tarfile.open(blob, "r:xz") as tf:
                tf.extractall(rootdir, filter="fully_trusted")
        marker.write_text("ok\n")
        for f in set(files) | {blob}:
            f.unlink(missing_ok=True)
        log(f"unpacked {name} in {time.monotonic() - t0:.1f}s")
    return plan


def have(stage: Path, groups) -> list[str]:
    """Which of `groups` are not unpacked yet."""
    return [g for g in groups if not (stage / "state" / "extracted" / g).exists()]


def link_stage_root(plan: dict):
    """Make the absolute paths baked in at build time (CARGO_MANIFEST_DIR, the kernel's default
    gpukit path) resolve here: link the staging machine's repository path to this checkout."""
    host_root = Path(plan.get("host_stage_root") or plan.get("stage_root") or "")
    if not str(host_root) or host_root == ROOT:
        return
    try:
        if host_root.exists() or host_root.is_symlink():
            if host_root.resolve() != ROOT.resolve():
                log(f"note: {host_root} exists here and is not this checkout; build-time paths may not resolve")
            return
        host_root.parent.mkdir(parents=True, exist_ok=True)
        host_root.symlink_to(ROOT)
        log(f"linked {host_root} -> {ROOT}")
    except OSError as e:
        log(f"note: could not link {host_root} -> {ROOT}: {e}")


def provide_kernel_binary(plan: dict, stage: Path):
    """Put the staged kernel binary where the kernel's integration tests look for it: cargo bakes
    `CARGO_BIN_EXE_evcxr_gpu` (the build machine's target dir) into them at build time."""
    built = stage / "root" / "bin" / "evcxr_gpu"
    host_root = Path(plan.get("host_stage_root") or plan.get("stage_root") or str(ROOT))
    target = Path(plan.get("host_target_dir") or host_root / "target")
    dest = target / "release" / "evcxr_gpu"
    if not built.exists() or dest.exists():
        return
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(built)
        log(f"linked {dest} -> {built} (for the kernel's integration tests)")
    except OSError as e:
        log(f"note: could not link {dest} -> {built}: {e}")


# ---------------------------------------------------------------------------------------------
# environment


def device_facts() -> dict:
    facts = {"device": "unknown", "driver": "unknown", "cuda": "unknown", "cuda_driver_api": "unknown"}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
        rows = [r.split(",") for r in q.stdout.strip().splitlines() if r.strip()]
        if rows:
            facts["device"] = rows[0][0].strip()
            facts["driver"] = rows[0][1].strip()
            facts["gpu_count"] = len(rows)
        head = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"CUDA Version:\s*([\d.]+)", head)
        if m:
            facts["cuda_driver_api"] = m.group(1)
    except (OSError, subprocess.SubprocessError):
        pass
    vj = Path("/usr/local/cuda/version.json")
    if vj.is_file():
        try:
            facts["cuda"] = json.loads(vj.read_text())["cuda"]["version"]
        except (KeyError, ValueError):
            pass
    if facts["cuda"] == "unknown" and facts["cuda_driver_api"] != "unknown":
        facts["cuda"] = facts["cuda_driver_api"]
    return facts


def base_env(stage: Path) -> dict:
    env = dict(os.environ)
    cuda_libs = [p for p in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib") if os.path.isdir(p)]
    env["LD_LIBRARY_PATH"] = ":".join(cuda_libs + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    env["RUST_BACKTRACE"] = "1"
    env["GPUKIT_TEST_REQUIRE_GPU"] = "1"   # GPU tests fail instead of skipping (gpukit::testing)
    env["GPUKIT_REQUIRE_NVRTC"] = "1"      # and so do NVRTC tests
    env["PYTHONUNBUFFERED"] = "1"
    return env


def toolchain_env(stage: Path, env: dict) -> dict:
    env = dict(env)
    rust = stage / "root" / "rust"
    home = stage / "cargo-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n"
        f"[source.vendored-sources]\ndirectory = \"{stage / 'root' / 'vendor'}\"\n\n"
        "[net]\noffline = true\n")
    env["PATH"] = f"{rust / 'bin'}:{stage / 'root' / 'bin'}:{env.get('PATH', '')}"
    std_libs = [str(rust / "lib" / "rustlib" / "x86_64-unknown-linux-gnu" / "lib"), str(rust / "lib")]
    env["LD_LIBRARY_PATH"] = ":".join(std_libs + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    env["CARGO_HOME"] = str(home)
    env["CARGO_NET_OFFLINE"] = "true"
    env["XDG_CACHE_HOME"] = str(stage / "cache")
    env.pop("RUSTUP_TOOLCHAIN", None)
    return env


# ---------------------------------------------------------------------------------------------
# cargo test executables


def parse_libtest(output: str) -> dict:
    """Counts and test names from one libtest run's output (run with --show-output).

    A passing test whose captured output has a line like `skipped: ...` (gpukit::testing's skip
    line; also the older `CUDA half skipped: ...`) did not run what it tests: it counts as
    skipped, not passed, and is named in `skipped_tests` (gpumanifest.skipped_in_output).
    `skipped` = libtest's `ignored` + those; `ignored` alone is kept too.
    """
    r = {"passed": 0, "failed": 0, "skipped": 0, "ignored": 0, "failed_tests": [], "skipped_tests": [],
         "result_lines": 0}
    for line in output.splitlines():
        m = RESULT_RE.match(line)
        if m:
            r["passed"] += int(m.group(2))
            r["failed"] += int(m.group(3))
            r["ignored"] += int(m.group(4))
            r["result_lines"] += 1
            continue
        m = TEST_LINE_RE.match(line)
        if m and m.group(2) == "FAILED" and m.group(1) not in r["failed_tests"]:
            r["failed_tests"].append(m.group(1))
    r["skipped_tests"] = gpumanifest.skipped_in_output(output)
    moved = min(len(r["skipped_tests"]), r["passed"])
    r["passed"] -= moved
    r["skipped"] = r["ignored"] + moved
    return r


def late_test(t: dict) -> bool:
    """Tests that wait for the toolchain: trybuild UI tests compile Rust, the kernel's tests may
    start evcxr sessions, proc-macro crates' test binaries link the toolchain's libstd dynamically."""
    return (bool(t.get("needs_toolchain")) or t.get("package") == "evcxr_gpu"
            or t.get("kind") == "proc-macro")  # proc-macro test binaries load the toolchain's libstd-*.so


def run_tests(stage: Path, tests: list[dict], env: dict, log_path: Path, timeout: float,
              budget: float = float("inf"), last_call: bool = True) -> list[dict]:
    """Runs test executables until the call's time budget is nearly spent; those not started are
    left for the next call, and so is one that the budget cut short (before the last call), since
    its time ran out, not its tests."""
    results = []
    tdir = stage / "root" / "tests"
    with open(log_path, "a") as logf:
        for t in tests:
            if remaining(budget) < 40:
                log(f"tests {t['package']}/{t['name']}: left for the next call (time budget)")
                continue
            full_timeout = timeout
            this_timeout = min(full_timeout, max(30.0, remaining(budget) - 20))
            exe = tdir / t["file"]
            cwd = ROOT / t["dir"] if t.get("dir") else ROOT
            tenv = dict(env)
            tenv["CARGO_MANIFEST_DIR"] = str(cwd)
            tenv["CARGO_PKG_NAME"] = t["package"]
            t0 = time.monotonic()
            head = f"==== {t['package']} {t['kind']} {t['name']} ({t['file']})"
            logf.write(head + "\n")
            logf.flush()
            try:
                exe.chmod(0o755)
                p = subprocess.run([str(exe), "--test-threads", "4", "--show-output"], cwd=cwd, env=tenv, capture_output=True,
                                   text=True, timeout=this_timeout, errors="replace")
                out, code = p.stdout + p.stderr, p.returncode
            except subprocess.TimeoutExpired as e:
                out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                out += f"\n(timed out after {this_timeout:.0f}s)\n"
                code = -1
                if this_timeout < full_timeout and not last_call:
                    logf.write(out)
                    logf.write(f"==== cut short by the call's time budget after {this_timeout:.0f}s: "
                               "left for the next call\n\n")
                    logf.flush()
                    log(f"tests {t['package']}/{t['name']}: cut short by the call's time budget; "
                        "left for the next call")
                    continue
            logf.write(out)
            logf.write(f"==== exit {code}, {time.monotonic() - t0:.1f}s\n\n")
            logf.flush()
            r = parse_libtest(out)
            if code != 0 and r["failed"] == 0:
                # crashed, timed out or failed outside a test: count the binary as one failure
                r["failed"] = 1
                r["failed_tests"].append(f"{t['name']} (exit {code})")
            r.update({"file": t["file"], "package": t["package"], "name": t["name"], "exit": code,
                      "seconds": round(time.monotonic() - t0, 2)})
            log(f"tests {t['package']}/{t['name']}: {r['passed']} passed, {r['failed']} failed, "
                f"{r['skipped']} skipped ({r['seconds']}s)"
                + "".join(f"\n    SKIPPED (not run on the GPU): {n}" for n in r["skipped_tests"]))
            results.append(r)
    return results


# ---------------------------------------------------------------------------------------------
# kernelspec and notebooks


def install_wheels(stage: Path, python: str) -> Path:
    site = stage / "site"
    if (stage / "state" / "wheels-installed").exists():
        return site
    wheels = sorted(str(p) for p in (stage / "root" / "wheels").glob("*.whl"))
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--no-cache-dir", "--upgrade", "--target", str(site)] + wheels, check=True)
    (stage / "state" / "wheels-installed").write_text("ok\n")
    log(f"installed {len(wheels)} wheels into {site}")
    return site


def kernelspec(stage: Path, env: dict) -> tuple[str, Path]:
    """Install the evcxr_gpu kernelspec for the staged binary (with the kernel's own `install`
    command; from the template in kernels/rust-gpu if that fails). Returns (name, JUPYTER_PATH)."""
    binary = stage / "root" / "bin" / "evcxr_gpu"
    binary.chmod(0o755)
    jpath = stage / "jupyter"
    kernels = jpath / "kernels"
    kernels.mkdir(parents=True, exist_ok=True)
    template_dir = ROOT / "kernels" / "rust-gpu"
    gpukit = ROOT / "crates" / "gpukit"
    name = "rust-gpu"
    # the kernel finds gpukit through EVCXR_GPU_GPUKIT in its environment (set by the caller)
    p = subprocess.run([str(binary), "install", "--kernels-dir", str(kernels), "--template", str(template_dir)],
                       env=env, capture_output=True, text=True, timeout=60)
    if p.returncode == 0 and (kernels / name / "kernel.json").is_file():
        log(f"kernelspec installed by evcxr_gpu install: {(kernels / name / 'kernel.json').read_text().strip()}")
        return name, jpath
    log(f"evcxr_gpu install failed ({p.returncode}): {(p.stdout + p.stderr).strip()[-500:]}; writing the kernelspec here")
    kdir = kernels / name
    kdir.mkdir(parents=True, exist_ok=True)
    text = (template_dir / "kernel.json").read_text() if (template_dir / "kernel.json").is_file() else json.dumps(
        {"argv": ["@BINARY@", "--connection-file", "{connection_file}"], "display_name": "Rust (GPU)",
         "language": "rust", "env": {"EVCXR_GPU_GPUKIT": "@GPUKIT@"}})
    spec = json.loads(text.replace("@BINARY@", str(binary)).replace("@GPUKIT@", str(gpukit)))
    if spec.get("argv") and spec["argv"][0] != str(binary):
        spec["argv"][0] = str(binary)
    if template_dir.is_dir():
        for f in template_dir.iterdir():
            if f.is_file() and f.name != "kernel.json":
                shutil.copyfile(f, kdir / f.name)
    (kdir / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return name, jpath


def warm(stage: Path, env: dict, timeout: float) -> None:
    """`evcxr_gpu warm`: one session start, which builds gpukit and its dependencies into the
    compile cache so that the notebooks do not each wait for that build."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([str(stage / "root" / "bin" / "evcxr_gpu"), "warm"], env=env, capture_output=True,
                           text=True, timeout=timeout)
        tail = (p.stdout + p.stderr).strip()[-1500:]
        log(f"evcxr_gpu warm: exit {p.returncode} in {time.monotonic() - t0:.0f}s" + (f"\n{tail}" if p.returncode else ""))
    except subprocess.TimeoutExpired:
        log(f"evcxr_gpu warm: still building after {timeout:.0f}s; the notebooks go on")


def notebook_kernel(metadata: dict, rust_kernel: str) -> tuple[str, dict | None]:
    """(kernel, environment) of a notebook, as tests/notebooks/run.py chooses them: Rust notebooks
    run with `rust_kernel` in our environment; a notebook declaring another language (a Python
    notebook with %%rust cells) runs with its own kernelspec, with the checkout's python/ (the
    rust_gpu extension) first on PYTHONPATH."""
    spec = metadata.get("kernelspec") or {}
    language = spec.get("language") or (metadata.get("language_info") or {}).get("name")
    if not language or language == "rust" or not spec.get("name"):
        return rust_kernel, None
    path = os.environ.get("PYTHONPATH")
    pydir = str(ROOT / "python")
    return spec["name"], {**os.environ, "PYTHONPATH": f"{pydir}{os.pathsep}{path}" if path else pydir}


def execute_notebook(src: str, dst: str, result: str, kernel: str, cell_timeout: int) -> int:
    """Run one notebook with nbclient; always writes the executed notebook and the result JSON."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(src, as_version=4)
    kernel, env = notebook_kernel(nb.metadata, kernel)
    client = NotebookClient(nb, kernel_name=kernel, timeout=cell_timeout, startup_timeout=180,
                            resources={"metadata": {"path": str(Path(src).parent)}})
    t0 = time.monotonic()
    status, error = "ok", None
    try:
        client.execute(**({"env": env} if env is not None else {}))
    except CellTimeoutError as e:
        status, error = "timeout", str(e).strip().splitlines()[-1:] or ["timeout"]
    except (CellExecutionError, DeadKernelError) as e:
        status, error = "error", str(e).strip()[-2000:]
    except Exception as e:  # kernel failed to start, protocol error: still an error of this notebook
        status, error = "error", f"{type(e).__name__}: {e}"[-2000:]
    seconds = time.monotonic() - t0
    failed_cell = None
    code_index = -1
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code_index += 1
        if "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue  # an error is this cell's expected result (nbclient's convention)
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            failed_cell = code_index
            if status == "ok":
                status = "error"
                error = "error output in code cell %d" % code_index
            break
    nbformat.write(nb, dst)
    if isinstance(error, list):
        error = " ".join(error)
    Path(result).write_text(json.dumps({"status": status, "seconds": round(seconds, 2), "error": error,
                                        "failed_cell": failed_cell}) + "\n")
    return 0


def select_notebooks(stage: Path, spec: str | None) -> set[str] | None:
    """Which notebooks to run: all (None), those matching a glob, or `pending`: those this machine
    has not yet run to `ok` (to finish a run in a further call on the warm machine)."""
    if not spec:
        return None
    paths = gpumanifest.notebook_paths(ROOT)
    if spec == "pending":
        state = stage / "state" / "notebooks.json"
        done = json.loads(state.read_text()) if state.is_file() else {}
        return {p for p in paths if done.get(p, {}).get("status") != "ok"
                or done[p].get("source_sha256") != gpumanifest.source_sha256_file(ROOT / p)}
    import fnmatch
    return {p for p in paths if fnmatch.fnmatch(p, spec)}


def merge_notebook_state(stage: Path, ran: list[dict]) -> list[dict]:
    """Fold this call's notebook results into those of earlier calls on this machine; returns an
    entry for every current notebook (`not_run` where none ran, or where the notebook changed)."""
    state = stage / "state" / "notebooks.json"
    done = json.loads(state.read_text()) if state.is_file() else {}
    for e in ran:
        done[e["path"]] = e
    state.write_text(json.dumps(done, indent=1) + "\n")
    out = []
    for p in gpumanifest.notebook_paths(ROOT):
        h = gpumanifest.source_sha256_file(ROOT / p)
        e = done.get(p)
        if e is None or e.get("source_sha256") != h:
            e = {"path": p, "source_sha256": h, "status": "not_run", "seconds": 0.0}
        out.append(e)
    return out


def run_notebooks(stage: Path, env: dict, python: str, kernel: str, budget: float, jobs: int,
                  cell_timeout: int, only: set[str] | None) -> list[dict]:
    paths = gpumanifest.notebook_paths(ROOT)
    if only is not None:
        paths = [p for p in paths if p in only]
    execdir = stage / "executed"
    execdir.mkdir(exist_ok=True)
    entries = {p: {"path": p, "source_sha256": gpumanifest.source_sha256_file(ROOT / p), "status": "not_run",
                   "seconds": 0.0} for p in paths}
    pending = list(paths)
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    first = True
    while pending or running:
        # start notebooks: the first one alone (it fills the dependency build cache), then `jobs` at once
        limit = 1 if first else jobs
        while pending and len(running) < limit and remaining(budget) > 45:
            p = pending.pop(0)
            flat = p.replace("/", "__")
            cmd = [python, str(HERE / "devrun.py"), "notebook", str(ROOT / p), str(execdir / flat),
                   str(execdir / (flat + ".result.json")), "--kernel", kernel, "--cell-timeout", str(cell_timeout)]
            logf = open(execdir / (flat + ".log"), "w")
            proc = subprocess.Popen(cmd, cwd=(ROOT / p).parent, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            running[p] = (proc, time.monotonic())
            log(f"notebook {p}: started")
        if not pending:
            first = False
        time.sleep(0.5)
        for p, (proc, t0) in list(running.items()):
            if proc.poll() is None:
                if remaining(budget) < 15:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    entries[p].update(status="timeout", seconds=round(time.monotonic() - t0, 2),
                                      error="stopped at the device call's time budget")
                    log(f"notebook {p}: stopped (call time budget)")
                    del running[p]
                continue
            del running[p]
            first = False
            flat = p.replace("/", "__")
            rfile = execdir / (flat + ".result.json")
            if rfile.is_file():
                r = json.loads(rfile.read_text())
                entries[p].update(status=r["status"], seconds=r["seconds"], error=r.get("error"),
                                  failed_cell=r.get("failed_cell"))
            else:
                tail = (execdir / (flat + ".log")).read_text(errors="replace")[-1500:]
                entries[p].update(status="error", seconds=round(time.monotonic() - t0, 2),
                                  error=f"runner exited {proc.returncode}: {tail}")
            log(f"notebook {p}: {entries[p]['status']} ({entries[p]['seconds']}s)")
        if pending and not running and remaining(budget) <= 45:
            for p in pending:
                entries[p]["error"] = "not started: the device call's time budget ran out"
                log(f"notebook {p}: not run (time budget)")
            pending = []
    return [entries[p] for p in paths]


# ---------------------------------------------------------------------------------------------
# writing $OUT


def write_out(stage: Path, out: Path, plan: dict, tests: list[dict], notebooks: list[dict] | None,
              facts: dict, k: int, n: int):
    out.mkdir(parents=True, exist_ok=True)
    tlog = stage / "state" / "cargo-tests.log"
    if tlog.is_file():
        shutil.copyfile(tlog, out / "cargo-tests.log")
    results = {"call": k, "calls": n, "plan_commit": plan.get("commit"), "dirty": plan.get("dirty"),
               "facts": facts, "tests": tests, "notebooks": notebooks}
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    if notebooks is None:
        return
    manifest = gpumanifest.build_manifest(
        device=facts["device"], driver=facts["driver"], cuda=facts["cuda"],
        commit=plan.get("commit", "unknown"), date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        cargo_tests=gpumanifest.cargo_test_totals(tests), notebooks=notebooks,
        extra={"dirty": bool(plan.get("dirty")), "cuda_driver_api": facts.get("cuda_driver_api"),
               "calls": n, "rustc": plan.get("rustc"), "gpu_count": facts.get("gpu_count")})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    execdir = stage / "executed"
    executed = [(nb["path"], execdir / nb["path"].replace("/", "__")) for nb in notebooks if nb["status"] != "not_run"]
    executed = [(p, f) for p, f in executed if f.is_file()]
    # 8 files come back: manifest, results, cargo-tests.log, callN.log, and the notebooks
    if len(executed) <= 4:
        nbdir = out / "notebooks"
        nbdir.mkdir(exist_ok=True)
        for p, f in executed:
            shutil.copyfile(f, nbdir / f.name)
    else:
        with tarfile.open(out / "executed-notebooks.tar.gz", "w:gz") as tf:
            for p, f in executed:
                tf.add(f, arcname=p)
    t = manifest["cargo_tests"]
    log(f"wrote manifest: cargo tests {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped "
        f"({t['ignored']} ignored, {len(t['skipped_tests'])} passed only by skipping), "
        f"{sum(nb['status'] == 'ok' for nb in notebooks)}/{len(notebooks)} notebooks ok")
    for name in t["skipped_tests"]:
        log(f"  SKIPPED on the GPU (the manifest is not current): {name}")


# ---------------------------------------------------------------------------------------------


def call(args) -> int:
    stage = Path(os.environ.get("GPU_STAGE_ROOT", "/tmp/gpu-stage"))
    out = Path(os.environ.get("OUT") or stage / "out")
    budget = float(os.environ.get("GPU_RUN_BUDGET_S", "560"))
    python = os.environ.get("GPU_PYTHON", sys.executable)
    k, n = args.k, args.n
    (stage / "state").mkdir(parents=True, exist_ok=True)
    plan = unpack(stage, ROOT / ".stage" / f"call{k}")
    if plan["calls"] != n:
        log(f"note: the plan has {plan['calls']} calls; this is call {k} of {n}")
        n = plan["calls"]
    link_stage_root(plan)
    provide_kernel_binary(plan, stage)
    facts = device_facts()
    log(f"device: {facts}")
    env = base_env(stage)
    tlog = stage / "state" / "cargo-tests.log"
    done_path = stage / "state" / "tests.json"
    tests_done = json.loads(done_path.read_text()) if done_path.is_file() else []
    done_files = {t["file"] for t in tests_done}
    all_tests = json.loads((stage / "root" / "tests" / "tests.json").read_text())
    tool_ready = not have(stage, TOOLCHAIN_GROUPS)
    if tool_ready:
        env = toolchain_env(stage, env)
    todo = [t for t in all_tests if t["file"] not in done_files and (tool_ready or not late_test(t))]
    if os.environ.get("GPU_RUN_SKIP_TESTS") == "1":
        todo = []
    if todo:
        log(f"running {len(todo)} test executable(s)")
        tests_done += run_tests(stage, todo, env, tlog, timeout=float(os.environ.get("GPU_TEST_TIMEOUT_S", "240")),
                                budget=budget, last_call=k >= n)
        done_path.write_text(json.dumps(tests_done, indent=1) + "\n")
    if k < n:
        write_out(stage, out, plan, tests_done, None, facts, k, n)
        log(f"call {k} of {n} done; make call {k + 1} now (the machine stays warm about 30 s)")
        return 0
    missing = have(stage, NOTEBOOK_GROUPS + tuple(g for g in OPTIONAL_GROUPS if g in plan["groups"]))
    if missing:
        log(f"ERROR: groups {missing} never arrived: the machine was not kept warm between calls. "
            f"Redo calls 1..{n} back to back.")
        write_out(stage, out, plan, tests_done, None, facts, k, n)
        return 3
    untested = [t["file"] for t in all_tests if t["file"] not in {d["file"] for d in tests_done}]
    if untested and os.environ.get("GPU_RUN_SKIP_TESTS") != "1":
        log(f"ERROR: test executables never ran: {untested}")
    python_env = dict(env)
    site = install_wheels(stage, python)
    python_env["PYTHONPATH"] = f"{site}:{python_env.get('PYTHONPATH', '')}".rstrip(":")
    python_env["EVCXR_GPU_WORKDIR"] = str(stage / "evcxr-work")
    python_env["EVCXR_GPU_GPUKIT"] = str(ROOT / "crates" / "gpukit")
    kname, jpath = kernelspec(stage, python_env)
    if os.environ.get("GPU_RUN_WARM", "1") == "1":
        warm(stage, python_env, timeout=max(60.0, min(300.0, remaining(budget) - 120)))
    python_env["JUPYTER_PATH"] = str(jpath)
    python_env["JUPYTER_RUNTIME_DIR"] = str(stage / "jupyter-runtime")
    python_env["JUPYTER_PLATFORM_DIRS"] = "1"
    notebooks = run_notebooks(stage, python_env, python, kname, budget,
                              jobs=int(os.environ.get("GPU_NB_JOBS", "4")),
                              cell_timeout=int(os.environ.get("GPU_CELL_TIMEOUT_S", "300")),
                              only=select_notebooks(stage, os.environ.get("GPU_NOTEBOOKS")))
    notebooks = merge_notebook_state(stage, notebooks)
    write_out(stage, out, plan, tests_done, notebooks, facts, k, n)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("call")
    c.add_argument("k", type=int)
    c.add_argument("n", type=int)
    nbp = sub.add_parser("notebook")
    nbp.add_argument("src")
    nbp.add_argument("dst")
    nbp.add_argument("result")
    nbp.add_argument("--kernel", required=True)
    nbp.add_argument("--cell-timeout", type=int, default=300)
    args = ap.parse_args(argv)
    if args.cmd == "call":
        return call(args)
    return execute_notebook(args.src, args.dst, args.result, args.kernel, args.cell_timeout)


if __name__ == "__main__":
    sys.exit(main())
