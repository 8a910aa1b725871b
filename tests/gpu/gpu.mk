# GPU pipeline targets (issue 4). Included by the top-level Makefile: -include tests/gpu/gpu.mk
#
#   make gpu-stage                 stage binaries, tests, vendored sources, wheels and the Rust
#                                  toolchain under .stage/ and print the device calls
#   make gpu-record RUN=<dir>      copy a fetched run (the last call's files_at) into docs/gpu-run/
#   make gpu-check                 say whether docs/gpu-run/manifest.json is current (never fails)
#   make gpu-selftest              unit tests of the pipeline scripts

GPU_PY ?= python3

.PHONY: gpu-stage gpu-record gpu-check gpu-selftest

gpu-stage:
	bash tests/gpu/stage.sh

gpu-record:
	@test -n "$(RUN)" || { echo "usage: make gpu-record RUN=/work/.device/.../files (the last call's files_at)"; exit 2; }
	bash tests/gpu/record.sh "$(RUN)"

gpu-check:
	@$(GPU_PY) tests/gpu/check_manifest.py

gpu-selftest:
	$(GPU_PY) tests/gpu/check_manifest.py --self-test
