#!/usr/bin/env bash
# The frame rows of issue 17 on the device machine: gpukit-frame (`gpukit-bench frame`) against
# Polars on every CPU core (benches/polars_twin.py), same CSV, same operations, in one call.
#
#   WHEELS=<folder with polars-2.0.0 and polars_runtime_32 wheels> \
#   GPUKIT_BENCH=<release gpukit-bench> bash benches/frame_run.sh
#
# Variables: WHEELS (required; the device has no network), GPUKIT_BENCH ($GPU_STAGE_ROOT/root/bin/
# gpukit-bench, as benches/run.sh), FRAME_SIZES ("10000000 100000000"), FRAME_ROUNDS (2),
# FRAME_REPS (3 timed calls per row and round, after FRAME_WARMUP=1; sizes of at least
# FRAME_LARGE=50000000 rows use FRAME_REPS_LARGE=1 and FRAME_WARMUP_LARGE=1), FRAME_READ_REPS (1),
# FRAME_TMP (/tmp/frame-bench: the CSVs, ~3.9 GB at 100M rows), FRAME_BUDGET_S (200: no new
# round or size once past it), POLARS_SPEC (polars==2.0.0), GPU_PYTHON (python3),
# FRAME_DRY_RUN (set: gpukit-bench runs on the CPU backend, to test this script off the device).
#
# For each size: gpukit-bench writes the CSV once (the crate's pageview generator, seed 17), then
# FRAME_ROUNDS rounds alternate gpukit and Polars, each reading the same file; then
# benches/frame_collect.py checks every digest and writes $OUT/frame-results.json and
# $OUT/frame-results.md (the table, with Polars / gpukit ratios and memory). Raw lines, digests
# and the log stay in $OUT/frame/.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGE=${GPU_STAGE_ROOT:-/tmp/gpu-stage}
BIN=${GPUKIT_BENCH:-$STAGE/root/bin/gpukit-bench}
SIZES=${FRAME_SIZES:-10000000 100000000}
ROUNDS=${FRAME_ROUNDS:-2}
REPS=${FRAME_REPS:-3}
WARMUP=${FRAME_WARMUP:-1}
READ_REPS=${FRAME_READ_REPS:-1}
LARGE=${FRAME_LARGE:-50000000}
TMP=${FRAME_TMP:-/tmp/frame-bench}
BUDGET=${FRAME_BUDGET_S:-200}
PY=${GPU_PYTHON:-python3}
DRY=${FRAME_DRY_RUN:+--dry-run}
export OUT=${OUT:-/tmp/frame-out}
DIR=$OUT/frame
LOG=$DIR/frame.log
mkdir -p "$DIR" "$TMP"
export PYTHONUNBUFFERED=1
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
log() { echo "frame: $*" | tee -a "$LOG" >&2; }
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }

[[ -x $BIN ]] || chmod +x "$BIN" 2>/dev/null || { log "no gpukit-bench at $BIN"; exit 2; }
[[ -n ${WHEELS:-} && -d $WHEELS ]] || { log "WHEELS must name the folder of the Polars wheels"; exit 2; }

# Polars into a private folder (no venv needed; numpy comes from the device's python).
PYLIB=$TMP/pylib
if ! PYTHONPATH=$PYLIB "$PY" -c 'import polars' 2>/dev/null; then
  "$PY" -m pip install -q --no-index --find-links "$WHEELS" --target "$PYLIB" "${POLARS_SPEC:-polars==2.0.0}" \
    2>&1 | tee -a "$LOG" || { log "pip could not install Polars from $WHEELS"; exit 2; }
fi
export PYTHONPATH=$PYLIB${PYTHONPATH:+:$PYTHONPATH}
"$PY" -c 'import polars as pl, numpy; print("polars", pl.__version__, "threads", pl.thread_pool_size(), "numpy", numpy.__version__)' \
  2>&1 | tee -a "$LOG"
nproc | sed 's/^/cpu cores: /' | tee -a "$LOG"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"

for n in $SIZES; do
  if (( $(elapsed) > BUDGET )); then log "skipping $n rows: past FRAME_BUDGET_S=$BUDGET"; break; fi
  csv=$TMP/pageviews-$n.csv
  reps=$REPS warmup=$WARMUP
  if ((n >= LARGE)); then reps=${FRAME_REPS_LARGE:-1} warmup=${FRAME_WARMUP_LARGE:-1}; fi
  s=$(date +%s%N)
  "$BIN" frame --write-csv "$csv" --rows "$n" 2>>"$LOG" || { log "writing $csv failed"; exit 1; }
  log "$n rows: wrote $(du -h "$csv" | cut -f1) in $(( ($(date +%s%N) - s) / 1000000 )) ms"
  for ((r = 1; r <= ROUNDS; r++)); do
    if ((r > 1)) && (( $(elapsed) > BUDGET )); then log "$n rows: stopping after round $((r - 1))"; break; fi
    log "$n rows, round $r: gpukit ($(elapsed) s)"
    "$BIN" frame $DRY --rows "$n" --csv "$csv" --reps "$reps" --warmup "$warmup" --read-reps "$READ_REPS" \
      --digests "$DIR/gpukit-$n-r$r.digests" >"$DIR/gpukit-$n-r$r.jsonl" 2>>"$LOG" \
      || log "$n rows, round $r: gpukit-bench failed (exit $?)"
    log "$n rows, round $r: polars ($(elapsed) s)"
    "$PY" "$ROOT/benches/polars_twin.py" --rows "$n" --csv "$csv" --reps "$reps" --warmup "$warmup" \
      --read-reps "$READ_REPS" --tmp "$TMP" --digests "$DIR/polars-$n-r$r.digests" \
      >"$DIR/polars-$n-r$r.jsonl" 2>>"$LOG" || log "$n rows, round $r: polars_twin failed (exit $?)"
  done
  rm -f "$csv"
done
log "done in $(elapsed) s"
"$PY" "$ROOT/benches/frame_collect.py" "$DIR" --json "$OUT/frame-results.json" --md "$OUT/frame-results.md"
