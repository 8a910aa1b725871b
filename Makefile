# Rust GPU 101. The two commands: `make lab` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
CARGO_TARGET_DIR ?= $(ROOT)/target
KERNEL_BIN := $(CARGO_TARGET_DIR)/release/evcxr_gpu
INSTALLED := $(VENV)/.evcxr_gpu-installed
# libnvrtc from the nvidia-cuda-nvrtc wheel (found once the venv exists; deferred on purpose).
NVRTC_LIB = $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/nvidia/cu13/lib))
RUN_ENV = LD_LIBRARY_PATH="$(NVRTC_LIB)$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"
TEST_ENV = $(RUN_ENV) GPUKIT_REQUIRE_NVRTC=1
KERNEL_SOURCES := $(shell find crates/evcxr_gpu/src -name '*.rs' 2>/dev/null) crates/evcxr_gpu/Cargo.toml
INSTALL_INPUTS := install/install.sh install/requirements.txt kernels/rust-gpu/kernel.json Cargo.lock $(KERNEL_SOURCES)
NOTEBOOK_DIRS := notebooks tests/notebooks
# JupyterLab refuses to run as root unless told; containers and hosted machines often are root.
LAB_FLAGS := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help lab test install reinstall wheel test-cargo test-protocol test-install test-python-magic test-notebooks test-browser bench-kernel-latency

help:
	@echo "make lab    install if needed, then start JupyterLab on notebooks/ with the \"Rust (GPU)\" kernel"
	@echo "make test   install if needed, then run the crate tests, the kernel protocol tests, every notebook and the browser test"
	@echo "make wheel  build dist/rust_gpu-*.whl: the prebuilt kernel for hosted Jupyter (Colab), see python/README.md"
	@echo "helpers: make install | reinstall | test-cargo | test-protocol | test-install | test-python-magic | test-notebooks | test-browser | bench-kernel-latency"

$(INSTALLED): $(INSTALL_INPUTS)
	bash install/install.sh
	@touch $@

install: $(INSTALLED)

reinstall:
	bash install/install.sh
	@touch $(INSTALLED)

# The rust_gpu wheel: the Python extension (%%rust cells in Python notebooks), the release kernel
# and gpukit's sources, for machines that should not spend 12 minutes building the kernel.
wheel: $(INSTALLED)
	$(PY) python/build_wheel.py --binary "$(KERNEL_BIN)" --out "$(ROOT)/dist"

lab: $(INSTALLED)
	$(RUN_ENV) $(VENV)/bin/jupyter lab $(LAB_FLAGS) --notebook-dir="$(ROOT)/notebooks"

# The kernel crate is tested in release mode, reusing the release build of the installer
# (a debug build of evcxr would cost another ten minutes).
test-cargo: $(INSTALLED)
	$(TEST_ENV) cargo test --workspace --exclude evcxr_gpu --features gpukit-multi/frame
	$(TEST_ENV) cargo test --release -p evcxr_gpu

test-protocol: $(INSTALLED)
	$(PY) -m pytest -q tests/protocol

test-install: $(INSTALLED)
	bash install/test_hosted_bootstrap.sh "$(PY)" "$(KERNEL_BIN)"

# rust_gpu: unit tests, a python3 kernel with %%rust cells, the wheel in a fresh venv.
test-python-magic: $(INSTALLED)
	$(TEST_ENV) $(PY) -m pytest -q tests/python_magic

test-notebooks: $(INSTALLED)
	@if [ -f tests/gpu/check_manifest.py ]; then $(PY) tests/gpu/check_manifest.py || true; fi
	$(TEST_ENV) $(PY) tests/notebooks/run.py $(NOTEBOOK_DIRS)

# JupyterLab as `make lab` starts it, driven by Debian's Chromium (CHROMIUM=path to choose
# another) through Playwright's Python package, which never downloads a browser here.
# BROWSER_PY: a Python with pytest and playwright (default: the project venv, given them once).
BROWSER_PY ?= $(PY)
test-browser: $(INSTALLED)
	@$(BROWSER_PY) -c 'import playwright.sync_api, PIL' 2>/dev/null || $(BROWSER_PY) -m pip install --quiet -r tests/browser/requirements.txt
	$(RUN_ENV) LAB_VENV="$(VENV)" $(BROWSER_PY) -m pytest -q --durations=0 tests/browser

test: test-cargo test-protocol test-install test-python-magic test-notebooks test-browser

bench-kernel-latency: $(INSTALLED)
	$(PY) benches/kernel_latency/bench.py --evcxr-jupyter "$${EVCXR_JUPYTER:-/work/evcxr-ref/bin/evcxr_jupyter}"

-include tests/gpu/gpu.mk
-include benches/bench.mk
