#!/usr/bin/env bash
# Tests the offline steps of hosted_bootstrap.sh in a scratch HOME and Jupyter data directory:
# a clear error without cargo, kernelspec registration with an existing binary, idempotence, and
# the wheel path (python/build_wheel.py's wheel installed into a scratch venv, no cargo needed).
#
#   install/test_hosted_bootstrap.sh PYTHON EVCXR_GPU_BINARY
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:?usage: test_hosted_bootstrap.sh PYTHON EVCXR_GPU_BINARY}"
BIN="${2:?usage: test_hosted_bootstrap.sh PYTHON EVCXR_GPU_BINARY}"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
passed=0
failed=0
check() {  # check NAME COMMAND...
  local name="$1"; shift
  if "$@"; then echo "PASS $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

run_bootstrap() {  # environment of a fresh hosted machine: empty HOME, no cargo on PATH
  env -i PATH="$(dirname "$PY"):/usr/bin:/bin" HOME="$SCRATCH/home" JUPYTER_DATA_DIR="$SCRATCH/data" \
    PYTHON="$PY" "$@"
}

no_cargo() {  # --build: a wheel in dist/ would be installed (into PYTHON's environment) instead
  local out
  out="$(run_bootstrap bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm --build 2>&1)"
  [[ $? -ne 0 && "$out" == *"cargo is not installed"* && "$out" == *"rustup.rs"* ]]
}

registers() {
  run_bootstrap EVCXR_GPU_BIN="$BIN" bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm >/dev/null 2>&1 || return 1
  local spec="$SCRATCH/data/kernels/rust-gpu/kernel.json"
  [[ -f "$spec" && -f "$SCRATCH/data/kernels/rust-gpu/logo-64x64.png" ]] || return 1
  "$PY" - "$spec" "$BIN" <<'PY' || return 1
import json, os, sys
spec = json.load(open(sys.argv[1]))
assert spec["display_name"] == "Rust (GPU)" and spec["language"] == "rust", spec
assert spec["argv"][0] == os.path.realpath(sys.argv[2]), spec["argv"]
PY
  JUPYTER_DATA_DIR="$SCRATCH/data" "$PY" -m jupyter kernelspec list 2>/dev/null | grep -q "rust-gpu"
}

idempotent() {
  run_bootstrap EVCXR_GPU_BIN="$BIN" bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm >/dev/null 2>&1
}

bad_binary() {
  ! run_bootstrap EVCXR_GPU_BIN="$SCRATCH/none" bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm >/dev/null 2>&1
}

# The wheel path, in a scratch venv that sees PYTHON's packages (jupyter_client, IPython) through
# a .pth file, so that installing the wheel does not touch PYTHON's environment.
WHEEL_VENV="$SCRATCH/venv"
make_wheel_venv() {
  [[ -x "$WHEEL_VENV/bin/python" ]] && return 0
  "$PY" "$ROOT/python/build_wheel.py" --binary "$BIN" --out "$SCRATCH/dist" >/dev/null || return 1
  "$PY" -m venv "$WHEEL_VENV" || return 1
  local purelib
  purelib="$("$WHEEL_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "$PY" -c 'import site; print("\n".join(site.getsitepackages()))' > "$purelib/_parent.pth"
}

wheel_install() {
  make_wheel_venv || return 1
  local whl out spec="$SCRATCH/data/kernels/rust-gpu/kernel.json"
  whl="$(ls "$SCRATCH"/dist/rust_gpu-*.whl)"
  rm -rf "$SCRATCH/data"
  out="$(env -i PATH="$WHEEL_VENV/bin:/usr/bin:/bin" HOME="$SCRATCH/home" JUPYTER_DATA_DIR="$SCRATCH/data" \
    PYTHON="$WHEEL_VENV/bin/python" RUST_GPU_WHEEL="$whl" bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm 2>&1)" \
    || { echo "$out"; return 1; }
  [[ "$out" == *"installing the prebuilt kernel"* && "$out" == *"cells compile only once Rust is installed"* \
     && "$out" == *"%load_ext rust_gpu"* && "$out" != *"building the kernel"* ]] || { echo "$out"; return 1; }
  "$WHEEL_VENV/bin/python" - "$spec" <<'PY' || return 1
import json, os, sys
import rust_gpu.locate as loc
spec = json.load(open(sys.argv[1]))
binary, gpukit = loc.wheel_binary(), loc.wheel_gpukit()
assert binary and gpukit, (binary, gpukit)
assert spec["argv"][0] == str(binary) and os.access(binary, os.X_OK), spec
assert spec["env"]["EVCXR_GPU_GPUKIT"] == str(gpukit), spec
assert spec["display_name"] == "Rust (GPU)" and spec["interrupt_mode"] == "message", spec
PY
}

bad_wheel() {
  local out
  out="$(run_bootstrap RUST_GPU_WHEEL="$SCRATCH/none.whl" bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm 2>&1)"
  [[ $? -ne 0 && "$out" == *"RUST_GPU_WHEEL="*"is not a .whl file"* ]]
}

build_ignores_wheel() {  # --build: no wheel, so without cargo (offline) it must stop
  make_wheel_venv || return 1
  local out
  out="$(run_bootstrap RUST_GPU_WHEEL="$(ls "$SCRATCH"/dist/rust_gpu-*.whl)" bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm --build 2>&1)"
  [[ $? -ne 0 && "$out" == *"cargo is not installed"* ]]
}

check "bootstrap without cargo says how to get it" no_cargo
check "bootstrap registers the kernelspec" registers
check "bootstrap is idempotent" idempotent
check "bootstrap rejects a missing binary" bad_binary
check "bootstrap installs the wheel (kernelspec with the wheel's gpukit)" wheel_install
check "bootstrap rejects a RUST_GPU_WHEEL that is no wheel" bad_wheel
check "bootstrap --build ignores the wheel" build_ignores_wheel
echo "$passed passed, $failed failed"
((failed == 0))
