#!/usr/bin/env python3
"""Helpers for tests/gpu/stage.sh (runs on the CPU machine, standard library only).

Subcommands:
  tests CARGO_JSON DEST          copy the test executables named in `cargo test --no-run
                                 --message-format=json` output into DEST, write DEST/tests.json
  deps ROOT                      print the crates notebooks `:dep` (TOML dependency lines)
  tree-size ROOT                 bytes of the working tree that a device call sends
  plan --budget B --out DIR ...  assign compressed groups to device calls, write the call folders
                                 and plan.json, print the device call sequence
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

MIB = 1024 * 1024

# ---------------------------------------------------------------------------------------------
# test executables


def test_artifacts(lines):
    """Test executables from cargo's JSON messages: [{package, name, kind, src_path, executable}]."""
    out, seen = [], set()
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact":
            continue
        if not (msg.get("profile") or {}).get("test") or not msg.get("executable"):
            continue
        exe = msg["executable"]
        if exe in seen:
            continue
        seen.add(exe)
        target = msg.get("target") or {}
        pkg = msg.get("package_id", "")
        manifest = msg.get("manifest_path") or ""
        out.append({
            "manifest_dir": str(Path(manifest).parent) if manifest else "",
            "package": package_name(pkg),
            "name": target.get("name", Path(exe).name),
            "kind": (target.get("kind") or ["?"])[0],
            "src_path": target.get("src_path", ""),
            "executable": exe,
        })
    return out


def package_name(package_id: str) -> str:
    """Crate name from a cargo package id (both the old and the newer spec formats)."""
    # newer: "path+file:///work/main/crates/gpukit#0.1.0" or "registry+...#name@1.2.3"
    if "#" in package_id:
        frag = package_id.rsplit("#", 1)[1]
        if "@" in frag:
            return frag.split("@", 1)[0]
        base = package_id.rsplit("#", 1)[0].rstrip("/")
        return base.rsplit("/", 1)[-1]
    # old: "gpukit 0.1.0 (path+file:///...)"
    return package_id.split(" ", 1)[0]


def needs_toolchain(src_path: str) -> bool:
    """Whether a test target compiles Rust at run time (trybuild UI tests): it must wait for the
    toolchain and vendored sources on the device."""
    try:
        text = Path(src_path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "trybuild" in text


def relative_dir(manifest_dir: str, root: Path | None) -> str:
    """The package folder relative to the repository root ('' when outside it or unknown)."""
    if not manifest_dir or root is None:
        return ""
    try:
        return Path(manifest_dir).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return ""


def stage_tests(cargo_json: Path, dest: Path, root: Path | None = None) -> list[dict]:
    dest.mkdir(parents=True, exist_ok=True)
    arts = test_artifacts(cargo_json.read_text(encoding="utf-8").splitlines())
    tests = []
    # GPU_STAGE_SKIP_TESTS: a regular expression over "package--kind--name"; matching test
    # executables (CPU-only ones that CI runs anyway) stay home when the first call is full.
    skip = os.environ.get("GPU_STAGE_SKIP_TESTS", "")
    for a in arts:
        stem = Path(a["executable"]).name
        fname = f"{a['package']}--{a['kind']}--{stem}"
        if skip and re.search(skip, f"{a['package']}--{a['kind']}--{a['name']}"):
            print(f"not staged (GPU_STAGE_SKIP_TESTS): {fname}", file=sys.stderr)
            continue
        target = dest / fname
        shutil.copy2(a["executable"], target)
        # all symbols too: 36 test executables no longer fit the first call with only debug info
        # gone, and the test harness needs none (a panic's message and location are in the binary)
        subprocess.run(["strip", "--strip-all", str(target)], check=True)
        tests.append({
            "file": fname,
            "package": a["package"],
            "name": a["name"],
            "kind": a["kind"],
            "needs_toolchain": needs_toolchain(a["src_path"]),
            "dir": relative_dir(a["manifest_dir"], root),
        })
    (dest / "tests.json").write_text(json.dumps(tests, indent=1) + "\n")
    return tests


# ---------------------------------------------------------------------------------------------
# notebook dependencies

DEP_RE = re.compile(r"^\s*:dep\s+(.+?)\s*$")


def dep_line(spec: str):
    """TOML dependency line for an evcxr `:dep` spec, or None for path/git deps (not vendorable)."""
    spec = spec.strip()
    if "=" in spec:
        name, rhs = spec.split("=", 1)
        name, rhs = name.strip(), rhs.strip()
        if "path" in rhs and "{" in rhs:
            return None
        if "git" in rhs and "{" in rhs:
            return None
        return f"{name} = {rhs}"
    if re.fullmatch(r"[A-Za-z0-9_-]+", spec):
        return f'{spec} = "*"'
    return None


def notebook_deps(root: Path) -> list[str]:
    """Dependency lines for every vendorable `:dep` in the notebooks and the kernel's sources."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gpumanifest

    lines = {}
    for rel in gpumanifest.notebook_paths(root):
        nb = json.loads((root / rel).read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            if cell.get("cell_type") != "code":
                continue
            for text_line in gpumanifest.cell_source(cell).splitlines():
                m = DEP_RE.match(text_line)
                if m:
                    line = dep_line(m.group(1))
                    if line:
                        name = line.split("=", 1)[0].strip()
                        lines.setdefault(name, line)
    return [lines[k] for k in sorted(lines)]


def dev_dep_lines(metadata: dict, packages) -> list[str]:
    """Dependency lines for the registry dev-dependencies of `packages` (from `cargo metadata`):
    trybuild UI tests on the device build against them."""
    lines = {}
    for p in metadata.get("packages", []):
        if p["name"] not in packages:
            continue
        for d in p.get("dependencies", []):
            if d.get("kind") != "dev" or not (d.get("source") or "").startswith("registry+"):
                continue
            feats = d.get("features") or []
            extra = ""
            if feats:
                extra += ", features = [" + ", ".join(json.dumps(f) for f in feats) + "]"
            if not d.get("uses_default_features", True):
                extra += ", default-features = false"
            lines.setdefault(d["name"], f"{d['name']} = {{ version = {json.dumps(d['req'])}{extra} }}")
    return [lines[k] for k in sorted(lines)]


#: Vendored crates never compiled for x86_64 Linux: their files are emptied (their manifests stay,
#: so dependency resolution still works).
FOREIGN_CRATE = re.compile(r"^(windows[-_].*|windows|winapi.*|wasm-bindgen.*|web-sys|js-sys|redox_.*|"
                           r"hermit-abi|wasi|wasip2|wit-bindgen.*|libredox|objc2.*|core-foundation.*)-\d")


def prune_vendor(vendor: Path) -> int:
    """Empty the files of foreign-platform crates in a `cargo vendor` folder, keeping Cargo.toml,
    and rewrite their .cargo-checksum.json to match. Returns bytes saved."""
    saved = 0
    for crate in sorted(vendor.iterdir()):
        if not crate.is_dir() or not FOREIGN_CRATE.match(crate.name):
            continue
        ck_path = crate / ".cargo-checksum.json"
        ck = json.loads(ck_path.read_text())
        files = ck.get("files", {})
        for rel in list(files):
            if rel == "Cargo.toml":
                continue
            f = crate / rel
            if f.is_file():
                saved += f.stat().st_size
                f.write_bytes(b"")
                files[rel] = hashlib.sha256(b"").hexdigest()
        ck_path.write_text(json.dumps(ck))
    return saved


# ---------------------------------------------------------------------------------------------
# working tree size


def tree_size(root: Path) -> int:
    """Bytes of tracked plus untracked-not-ignored files (and shared/ if the checkout has one)."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "-c", "-o", "--exclude-standard"],
                         check=True, capture_output=True).stdout
    total = 0
    for rel in out.split(b"\0"):
        if not rel:
            continue
        p = root / os.fsdecode(rel)
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            pass
    shared = root / "shared"
    if shared.is_dir():
        for dirpath, _, files in os.walk(shared):
            for f in files:
                try:
                    total += (Path(dirpath) / f).stat().st_size
                except OSError:
                    pass
    return total


# ---------------------------------------------------------------------------------------------
# planning the device calls


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def assign(groups: list[dict], budget: int, first: list[str]) -> list[list[dict]]:
    """Assign groups (each {name, size}) to calls of at most `budget` bytes.

    Groups named in `first` go to call 1, in that order. The others are placed first-fit
    decreasing. A group larger than a whole call is cut into byte pieces that fill calls in
    sequence (it is reassembled on the device once all its pieces have arrived).
    Returns a list of calls, each a list of {group, part, offset, size}.
    """
    calls: list[list[dict]] = []
    free: list[int] = []

    def new_call():
        calls.append([])
        free.append(budget)
        return len(calls) - 1

    by_name = {g["name"]: g for g in groups}
    for name in first:
        g = by_name[name]
        if not calls:
            new_call()
        if g["size"] > free[0]:
            raise ValueError(f"group {name} ({g['size']} B) does not fit in the first call ({free[0]} B free)")
        calls[0].append({"group": name, "part": 0, "offset": 0, "size": g["size"]})
        free[0] -= g["size"]

    rest = sorted((g for g in groups if g["name"] not in first), key=lambda g: -g["size"])
    for g in rest:
        if g["size"] <= budget:
            for i in range(len(calls)):
                if free[i] >= g["size"]:
                    break
            else:
                i = new_call()
            calls[i].append({"group": g["name"], "part": 0, "offset": 0, "size": g["size"]})
            free[i] -= g["size"]
            continue
        # larger than a call: fill the emptiest tail space, then whole new calls
        offset, part = 0, 0
        while offset < g["size"]:
            candidates = [i for i in range(len(calls)) if free[i] >= MIB]
            i = candidates[-1] if candidates else new_call()
            n = min(free[i], g["size"] - offset)
            calls[i].append({"group": g["name"], "part": part, "offset": offset, "size": n})
            free[i] -= n
            offset += n
            part += 1
    return calls


def write_plan(args) -> dict:
    out = Path(args.out)
    groups = []
    for spec in args.group:
        name, path = spec.split("=", 1)
        p = Path(path)
        groups.append({"name": name, "path": str(p), "size": p.stat().st_size, "sha256": sha256_file(p)})
    calls = assign(groups, args.budget, args.first or [])
    by_name = {g["name"]: g for g in groups}

    for d in out.glob("call*"):
        if d.is_dir():
            shutil.rmtree(d)
    plan_groups = {}
    for g in groups:
        plan_groups[g["name"]] = {"sha256": g["sha256"], "size": g["size"], "parts": []}
    for ci, call in enumerate(calls, start=1):
        cdir = out / f"call{ci}"
        cdir.mkdir(parents=True)
        for piece in call:
            g = by_name[piece["group"]]
            whole = piece["size"] == g["size"]
            fname = f"{g['name']}.tar.xz" if whole else f"{g['name']}.tar.xz.part{piece['part']:02d}"
            with open(g["path"], "rb") as src, open(cdir / fname, "wb") as dst:
                src.seek(piece["offset"])
                remaining = piece["size"]
                while remaining:
                    block = src.read(min(remaining, 8 * MIB))
                    if not block:
                        raise IOError(f"short read in {g['path']}")
                    dst.write(block)
                    remaining -= len(block)
            plan_groups[g["name"]]["parts"].append({"file": fname, "call": ci, "size": piece["size"]})

    plan = {
        "format": 1,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": args.commit,
        "dirty": bool(args.dirty),
        "stage_root": args.stage_root,
        "calls": len(calls),
        "budget_bytes": args.budget,
        "tree_bytes": args.tree_bytes,
        "groups": plan_groups,
    }
    if args.info:
        plan.update(json.loads(Path(args.info).read_text()))
    for ci in range(1, len(calls) + 1):
        (out / f"call{ci}" / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    (out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    return plan


def call_sequence(plan: dict, stage_rel: str = ".stage") -> list[dict]:
    """The device calls: [{command, carry, bytes}]."""
    seq = []
    n = plan["calls"]
    for ci in range(1, n + 1):
        size = sum(p["size"] for g in plan["groups"].values() for p in g["parts"] if p["call"] == ci)
        command = f"bash tests/gpu/run.sh {ci} {n}"
        if ci == 1 and plan.get("bench"):
            # leave the benchmarks about four minutes of the call's ten
            command = f"GPU_RUN_BUDGET_S=300 {command}; BENCH_BUDGET_S=200 bash benches/run.sh"
        seq.append({"command": command, "carry": [f"{stage_rel}/call{ci}"], "bytes": size})
    return seq


def print_sequence(plan: dict, stage_rel: str = ".stage", out=sys.stdout):
    seq = call_sequence(plan, stage_rel)
    print(f"\nDevice calls ({len(seq)}), back to back on one warm machine (each within 30 s of the last):", file=out)
    for i, c in enumerate(seq, start=1):
        total = (c["bytes"] + plan["tree_bytes"]) / MIB
        print(f"  call {i}: command: {c['command']}", file=out)
        print(f"          carry:   {json.dumps(c['carry'])}    ({c['bytes'] / MIB:.1f} MiB carried, "
              f"{total:.1f} MiB with the working tree)", file=out)
        print(f"          timeout_s: 600", file=out)
    print("Then, here: make gpu-record RUN=<files_at of the last call>"
          + ("  and  make bench-record BENCH=<files_at of call 1>" if plan.get("bench") else ""), file=out)


# ---------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tests")
    t.add_argument("cargo_json", type=Path)
    t.add_argument("dest", type=Path)
    t.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent.parent)
    d = sub.add_parser("deps")
    d.add_argument("root", type=Path)
    dd = sub.add_parser("devdeps")
    dd.add_argument("metadata", type=Path)
    dd.add_argument("packages", nargs="+")
    pv = sub.add_parser("prune-vendor")
    pv.add_argument("vendor", type=Path)
    s = sub.add_parser("tree-size")
    s.add_argument("root", type=Path)
    p = sub.add_parser("plan")
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=int, required=True)
    p.add_argument("--group", action="append", default=[], help="NAME=PATH of a .tar.xz")
    p.add_argument("--first", action="append", default=[], help="group that must travel in call 1")
    p.add_argument("--commit", required=True)
    p.add_argument("--dirty", type=int, default=0)
    p.add_argument("--stage-root", required=True)
    p.add_argument("--tree-bytes", type=int, required=True)
    p.add_argument("--info", help="JSON file merged into plan.json")
    q = sub.add_parser("sequence")
    q.add_argument("plan", type=Path)
    args = ap.parse_args(argv)

    if args.cmd == "tests":
        tests = stage_tests(args.cargo_json, args.dest, args.root)
        late = sum(t["needs_toolchain"] for t in tests)
        print(f"staged {len(tests)} test executable(s) ({late} need the toolchain on the device)")
    elif args.cmd == "deps":
        for line in notebook_deps(args.root):
            print(line)
    elif args.cmd == "devdeps":
        for line in dev_dep_lines(json.loads(args.metadata.read_text()), set(args.packages)):
            print(line)
    elif args.cmd == "prune-vendor":
        print(f"pruned foreign-platform crates: {prune_vendor(args.vendor) >> 20} MiB emptied", file=sys.stderr)
    elif args.cmd == "tree-size":
        print(tree_size(args.root))
    elif args.cmd == "plan":
        plan = write_plan(args)
        print_sequence(plan)
    elif args.cmd == "sequence":
        print_sequence(json.loads(args.plan.read_text()))


if __name__ == "__main__":
    main()
