#!/usr/bin/env bash
# The ML rows of issue 18 on the device machine: gpukit-ml (`gpukit-bench ml`) against
# scikit-learn on every CPU core (benches/sklearn_twin.py) and linfa (`gpukit-bench ml --side
# linfa`, present when gpukit-bench was built with `--features linfa`), same data (a formula of
# the index, benches/ml_data.py and gpukit-bench's ml_data.rs), in one call.
#
#   WHEELS=<folder with the scikit-learn, scipy, joblib, threadpoolctl, narwhals and cloudpickle
#   wheels> GPUKIT_BENCH=<release gpukit-bench> bash benches/ml_run.sh
#
# Variables: WHEELS (required; the device has no network; installed with --no-deps, numpy is
# the device's own), GPUKIT_BENCH ($GPU_STAGE_ROOT/root/bin/gpukit-bench, as benches/run.sh),
# ML_LINFA_BENCH (the gpukit-bench that runs linfa's side: $GPUKIT_BENCH; it needs a build with
# --features linfa, else linfa's column stays empty),
# ML_BUDGET_S (420: no side or round starts after it; each command is also cut at what is left),
# ML_ROUNDS (1; rounds after the first only while within budget), ML_REPS / ML_WARMUP (gpukit: 3
# timed calls after 1 untimed), ML_CPU_REPS / ML_CPU_WARMUP (scikit-learn: 2 and 0), ML_LINFA_REPS
# (linfa: 1, no warm-up; its ridge fit by coordinate descent is the slowest call of the run),
# ML_KNN_REFS (1000000), ML_KNN_QUERIES (gpukit: 100000), ML_KNN_CPU_QUERIES (scikit-learn: 4000),
# ML_KNN_LINFA_QUERIES (1000), ML_KMEANS_ROWS (1000000), ML_RIDGE_ROWS (10000000),
# ML_SIDES ("gpukit sklearn linfa"), ML_TMP (/tmp/ml-bench: the Python packages), GPU_PYTHON
# (python3), ML_DRY_RUN (set: gpukit-bench on the CPU backend and small sizes, to test this
# script off the device; WHEELS may then be "none" when scikit-learn is importable already).
#
# Then benches/ml_collect.py checks every result and writes $OUT/ml-results.json and
# $OUT/ml-results.md (the table, ratios CPU / gpukit, memory). Raw lines, KNN predictions and
# the log stay in $OUT/ml/.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGE=${GPU_STAGE_ROOT:-/tmp/gpu-stage}
BIN=${GPUKIT_BENCH:-$STAGE/root/bin/gpukit-bench}
LINFA_BIN=${ML_LINFA_BENCH:-$BIN}
BUDGET=${ML_BUDGET_S:-420}
ROUNDS=${ML_ROUNDS:-1}
REPS=${ML_REPS:-3}
WARMUP=${ML_WARMUP:-1}
CPU_REPS=${ML_CPU_REPS:-2}
CPU_WARMUP=${ML_CPU_WARMUP:-0}
LINFA_REPS=${ML_LINFA_REPS:-1}
SIDES=${ML_SIDES:-gpukit sklearn linfa}
TMP=${ML_TMP:-/tmp/ml-bench}
PY=${GPU_PYTHON:-python3}
if [[ -n ${ML_DRY_RUN:-} ]]; then
  DRY=--dry-run
  : "${ML_KNN_REFS:=3000}" "${ML_KNN_QUERIES:=300}" "${ML_KNN_CPU_QUERIES:=200}" "${ML_KNN_LINFA_QUERIES:=100}"
  : "${ML_KMEANS_ROWS:=2000}" "${ML_RIDGE_ROWS:=5000}"
else
  DRY=
fi
REFS=${ML_KNN_REFS:-1000000}
QUERIES=${ML_KNN_QUERIES:-100000}
CPU_QUERIES=${ML_KNN_CPU_QUERIES:-4000}
LINFA_QUERIES=${ML_KNN_LINFA_QUERIES:-1000}
KM_ROWS=${ML_KMEANS_ROWS:-1000000}
RIDGE_ROWS=${ML_RIDGE_ROWS:-10000000}
export OUT=${OUT:-/tmp/ml-out}
DIR=$OUT/ml
LOG=$DIR/ml.log
mkdir -p "$DIR" "$TMP"
export PYTHONUNBUFFERED=1
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
log() { echo "ml: $*" | tee -a "$LOG" >&2; }
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
left() { local l=$(( BUDGET - $(elapsed) )); echo $(( l > 10 ? l : 10 )); }

[[ -x $BIN ]] || chmod +x "$BIN" 2>/dev/null || { log "no gpukit-bench at $BIN"; exit 2; }

# scikit-learn into a private folder (no venv; numpy is the device's). --no-deps: every wheel is
# named, so pip never looks for numpy in the folder.
PYLIB=$TMP/pylib
if ! PYTHONPATH=$PYLIB "$PY" -c 'import sklearn' 2>/dev/null; then
  if [[ -z ${WHEELS:-} || ! -d $WHEELS ]]; then
    log "WHEELS must name the folder of the scikit-learn wheels"; exit 2
  fi
  for w in scikit_learn scipy joblib threadpoolctl narwhals cloudpickle; do
    ls "$WHEELS"/${w}-*.whl >/dev/null 2>&1 || log "warning: no ${w} wheel in $WHEELS (scikit-learn needs it)"
  done
  s=$(date +%s)
  "$PY" -m pip install -q --no-deps --no-index --target "$PYLIB" "$WHEELS"/*.whl 2>&1 | tee -a "$LOG" \
    || { log "pip could not install the wheels of $WHEELS"; exit 2; }
  log "installed the wheels in $(( $(date +%s) - s )) s"
fi
export PYTHONPATH=$PYLIB${PYTHONPATH:+:$PYTHONPATH}
"$PY" -c 'import sklearn, numpy, scipy; print("scikit-learn", sklearn.__version__, "scipy", scipy.__version__, "numpy", numpy.__version__)' \
  2>&1 | tee -a "$LOG"
nproc | sed 's/^/cpu cores: /' | tee -a "$LOG"
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"; fi

sizes=(--knn-refs "$REFS" --kmeans-rows "$KM_ROWS" --ridge-rows "$RIDGE_ROWS")
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r > 1)) && (( $(elapsed) > BUDGET )); then log "stopping after round $((r - 1)): past ML_BUDGET_S=$BUDGET"; break; fi
  for side in $SIDES; do
    if (( $(elapsed) > BUDGET )); then log "round $r: skipping $side: past ML_BUDGET_S=$BUDGET"; continue; fi
    log "round $r: $side ($(elapsed) s)"
    out=$DIR/$side-r$r.jsonl
    case $side in
      gpukit)
        timeout "$(left)" "$BIN" ml $DRY "${sizes[@]}" --knn-queries "$QUERIES" --reps "$REPS" --warmup "$WARMUP" \
          --preds "$DIR/gpukit-r$r-knn.i64" >"$out" 2>>"$LOG" || log "round $r: gpukit-bench ml failed (exit $?)" ;;
      sklearn)
        timeout "$(left)" "$PY" "$ROOT/benches/sklearn_twin.py" "${sizes[@]}" --knn-queries "$CPU_QUERIES" \
          --reps "$CPU_REPS" --warmup "$CPU_WARMUP" --preds "$DIR/sklearn-r$r-knn.i64" >"$out" 2>>"$LOG" \
          || log "round $r: sklearn_twin failed (exit $?)" ;;
      linfa)
        timeout "$(left)" "$LINFA_BIN" ml --side linfa "${sizes[@]}" --knn-queries "$LINFA_QUERIES" --reps "$LINFA_REPS" \
          --warmup 0 --preds "$DIR/linfa-r$r-knn.i64" >"$out" 2>>"$LOG"
        rc=$?
        if ((rc == 3)); then log "linfa: this gpukit-bench was built without --features linfa; no linfa rows"; rm -f "$out"
        elif ((rc != 0)); then log "round $r: gpukit-bench ml --side linfa failed (exit $rc)"; fi ;;
      *) log "unknown side $side" ;;
    esac
  done
done
log "done in $(elapsed) s"
"$PY" "$ROOT/benches/ml_collect.py" "$DIR" --json "$OUT/ml-results.json" --md "$OUT/ml-results.md"
