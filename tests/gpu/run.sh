#!/usr/bin/env bash
# One device call of the GPU run (runs on the device machine):
#
#   bash tests/gpu/run.sh K N      # call K of the N that `make gpu-stage` printed
#
# Unpacks what this call carried (.stage/callK) into /tmp/gpu-stage, runs every step whose inputs
# have arrived, and writes to $OUT: callK.log, results.json, cargo-tests.log, and on the last call
# manifest.json plus the executed notebooks. The logic is in devrun.py (Python 3.12 there).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $# -eq 2 ]] || { echo "usage: bash tests/gpu/run.sh K N" >&2; exit 2; }
export OUT=${OUT:-/tmp/gpu-stage/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${GPU_PYTHON:-python3}
"$PY" "$ROOT/tests/gpu/devrun.py" call "$1" "$2" 2>&1 | tee "$OUT/call$1.log"
exit "${PIPESTATUS[0]}"
