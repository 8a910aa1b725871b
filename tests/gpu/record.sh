#!/usr/bin/env bash
# Record a GPU run fetched from the device into docs/gpu-run/ (executed notebooks, manifest.json,
# cargo-tests.log):
#
#   tests/gpu/record.sh /work/.device/<...>/files      (the last call's files_at)
#   make gpu-record RUN=/work/.device/<...>/files
#
# Then review `git diff --stat docs/gpu-run` and commit docs/gpu-run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $# -eq 1 ]] || { echo "usage: tests/gpu/record.sh RUN_DIR" >&2; exit 2; }
exec "${PYTHON:-python3}" "$ROOT/tests/gpu/record.py" "$1" --root "$ROOT"
