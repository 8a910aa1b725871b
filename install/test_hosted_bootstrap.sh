#!/usr/bin/env bash
# Tests the offline steps of hosted_bootstrap.sh in a scratch HOME and Jupyter data directory:
# a clear error without cargo, kernelspec registration with an existing binary, idempotence.
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

no_cargo() {
  local out
  out="$(run_bootstrap bash "$ROOT/install/hosted_bootstrap.sh" --offline --no-warm 2>&1)"
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

check "bootstrap without cargo says how to get it" no_cargo
check "bootstrap registers the kernelspec" registers
check "bootstrap is idempotent" idempotent
check "bootstrap rejects a missing binary" bad_binary
echo "$passed passed, $failed failed"
((failed == 0))
