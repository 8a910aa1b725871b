# Benchmark targets (issue 6). Included by the top-level Makefile: -include benches/bench.mk
#
#   make bench-cpu                   CPU rows here: gpukit's CPU backend against ndarray -> docs/bench/cpu.json
#   make bench-record BENCH=<dir>    GPU rows from a device run of benches/run.sh (that call's files_at)
#                                    -> docs/bench/results.json, raw.jsonl
#   make bench-readme                regenerate docs/bench/README.md from the two JSON files
#   make bench-selftest              unit tests of benches/benchlib.py and cupy_twin.py (the latter's
#                                    fake-CuPy part needs numpy: BENCH_PY=a python with numpy)
# The device side is staged by `make gpu-stage` (gpukit-bench travels in call 1) and runs as
# `bash benches/run.sh` in that call (see benches/README.md).

BENCH_PY ?= python3
BENCH_BIN ?= $(or $(CARGO_TARGET_DIR),target)/release/gpukit-bench
BENCH_CPU_REPS ?= 10

.PHONY: bench-cpu bench-record bench-readme bench-selftest

bench-cpu:
	cargo build --release -p gpukit-bench
	@raw=$$(mktemp); \
	GPUKIT_DEVICE=cpu $(BENCH_BIN) cpu --reps $(BENCH_CPU_REPS) >$$raw && \
	$(BENCH_PY) benches/benchlib.py cpu $$raw --commit $$(git rev-parse HEAD); \
	status=$$?; rm -f $$raw; exit $$status

bench-record:
	@test -n "$(BENCH)" || { echo "usage: make bench-record BENCH=/work/.device/.../files (files_at of the call that ran benches/run.sh)"; exit 2; }
	$(BENCH_PY) benches/benchlib.py record "$(BENCH)"

bench-readme:
	$(BENCH_PY) benches/benchlib.py readme

bench-selftest:
	$(BENCH_PY) benches/test_benchlib.py
	$(BENCH_PY) benches/test_cupy_twin.py
