#!/usr/bin/env bash
# The benchmarks on the device machine, both sides in one call:
#
#   bash benches/run.sh          (after `bash tests/gpu/run.sh 1 N` unpacked the staged binary)
#   GPUKIT_BENCH=path/to/gpukit-bench BENCH_COMMIT=<sha> bash benches/run.sh
#                                (a release binary carried otherwise; the commit for results.json)
#
# Variables: BENCH_ROUNDS (3), BENCH_REPS (10), BENCH_BUDGET_S (400: no new round past it),
# BENCH_CEILING_GIB (1,2,4: buffer sizes of the memory ceilings), GPU_PYTHON (python3).
#
# Alternates rounds of gpukit-bench and benches/cupy_twin.py (BENCH_ROUNDS, default 3), measures
# the ceilings with both in the same run, checks both sides against each other and writes to $OUT:
# bench-raw.jsonl (every sample), bench-results.json (docs/bench/results.json's format), bench.log,
# bench-diagnostics.txt (launch floor, host copy and page-touch rates).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGE=${GPU_STAGE_ROOT:-/tmp/gpu-stage}
BIN=${GPUKIT_BENCH:-$STAGE/root/bin/gpukit-bench}
ROUNDS=${BENCH_ROUNDS:-3}
REPS=${BENCH_REPS:-10}
PY=${GPU_PYTHON:-python3}
export OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
RAW=$OUT/bench-raw.jsonl
LOG=$OUT/bench.log
: >"$RAW"
[[ -x $BIN ]] || chmod +x "$BIN" 2>/dev/null || { echo "bench: no gpukit-bench at $BIN (run tests/gpu/run.sh 1 N first)" | tee -a "$LOG"; exit 2; }
t0=$(date +%s)
BUDGET=${BENCH_BUDGET_S:-400}
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r > 1)) && (( $(date +%s) - t0 > BUDGET * (r - 1) / r )); then
    # a round took more than its share of BENCH_BUDGET_S: the next would not fit
    echo "bench: stopping after $((r - 1)) round(s) (BENCH_BUDGET_S=$BUDGET)" | tee -a "$LOG"
    break
  fi
  echo "== round $r: gpukit" | tee -a "$LOG"
  "$BIN" gpu --reps "$REPS" >>"$RAW" 2> >(tee -a "$LOG" >&2) || echo "bench: gpukit-bench round $r exited $?" | tee -a "$LOG"
  echo "== round $r: cupy" | tee -a "$LOG"
  "$PY" "$ROOT/benches/cupy_twin.py" --reps "$REPS" >>"$RAW" 2> >(tee -a "$LOG" >&2) || echo "bench: cupy_twin round $r exited $?" | tee -a "$LOG"
done
# Ceilings: memory (copy, write, read; 128-bit kernels through gpukit and CuPy, the driver's and
# CuPy's copy and fill; buffers of BENCH_CEILING_GIB), cuBLAS GEMM with its error, pinned link rates.
# benchlib.py takes the best checked candidate of each memory pattern over both programs.
SIZES=${BENCH_CEILING_GIB:-1,2,4}
echo "== ceilings: gpukit-bench" | tee -a "$LOG"
"$BIN" ceilings --reps "$REPS" --sizes-gib "$SIZES" >>"$RAW" 2> >(tee -a "$LOG" >&2) || echo "bench: gpukit-bench ceilings exited $?" | tee -a "$LOG"
echo "== ceilings: cupy" | tee -a "$LOG"
"$PY" "$ROOT/benches/cupy_twin.py" --ceilings --reps "$REPS" --sizes-gib "$SIZES" >>"$RAW" 2> >(tee -a "$LOG" >&2) || echo "bench: cupy ceilings exited $?" | tee -a "$LOG"
# The results first (the diagnostics below are the part a short call may cut).
"$PY" -c "import sys; sys.path.insert(0, '$ROOT/tests/gpu'); import devrun, json; print(json.dumps(devrun.device_facts()))" >"$OUT/facts.json"
PLAN=$STAGE/parts/plan.json; [[ -f $PLAN ]] || PLAN=$ROOT/.stage/call1/plan.json
if [[ ! -f $PLAN && -n ${BENCH_COMMIT:-} ]]; then
  # a run without the staged pipeline: the commit comes from the caller
  PLAN=$OUT/plan.json
  printf '{"commit": "%s", "dirty": %s}\n' "$BENCH_COMMIT" "${BENCH_DIRTY:-false}" >"$PLAN"
fi
"$PY" "$ROOT/benches/benchlib.py" collect "$RAW" --plan "$PLAN" --facts "$OUT/facts.json" >"$OUT/bench-results.json" 2> >(tee -a "$LOG" >&2)
rm -f "$OUT/facts.json" "$OUT/plan.json"
echo "bench: results in bench-results.json after $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
# Diagnostics that explain the floors the rows meet: what one launch costs through gpukit, raw
# cudarc and the bare driver call; how fast this host copies memory and touches new pages (what
# caps transfers from and to pageable memory). Plain text, kept beside the results.
DIAG=$OUT/bench-diagnostics.txt
{
  echo "# Bench diagnostics ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo
  if [[ -x $STAGE/root/bin/launch_overhead ]] || chmod +x "$STAGE/root/bin/launch_overhead" 2>/dev/null; then
    timeout 120 "$STAGE/root/bin/launch_overhead" 2>&1 || echo "launch_overhead exited $?"
  else
    echo "(no launch_overhead binary staged)"
  fi
  echo
  rates=$(ls "$STAGE"/root/tests/gpukit--test--transfer_gpu-* 2>/dev/null | head -1)
  if [[ -n $rates ]]; then
    echo "# Host<->device transfer rates and host memory rates (transfer_gpu's transfer_rates, debug build)"
    echo
    chmod +x "$rates"
    (cd "$ROOT/crates/gpukit" && RATE_HOST=1 RATE_SIZES_MIB=${BENCH_RATE_SIZES_MIB:-64,2048} timeout 180 \
      "$rates" --ignored --exact transfer_rates --nocapture --test-threads 1 2>&1) || echo "transfer_rates exited $?"
  else
    echo "(no transfer_gpu test binary staged)"
  fi
} >"$DIAG" 2>&1
echo "bench: diagnostics in $(basename "$DIAG") after $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
echo "bench: done in $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
