#!/usr/bin/env bash
# Bootstrap Rust GPU 101 on a hosted Jupyter (Colab-style): a machine with Python and Jupyter but
# maybe no Rust. Run it from a notebook cell of the running (Python) kernel:
#
#   !git clone <this repository> rust-gpu-101 && bash rust-gpu-101/install/hosted_bootstrap.sh
#
# then either reload the page and pick the "Rust (GPU)" kernel, or (Colab, which runs only its own
# Python kernel) stay in the Python notebook and write `%load_ext rust_gpu`, then `%%rust` cells.
#
#   hosted_bootstrap.sh [--offline] [--no-warm] [--build]
#
# Steps (those marked * need the network and are skipped with --offline):
#   1*  install Rust with rustup if cargo is absent (cells are compiled: the kernel needs it), and
#       its rust-src component (evcxr's type inference reads the standard library's sources)
#   2*  install the Python packages the kernel and its tests use (nbclient, jupyter_client) if absent
#   3   the kernel: EVCXR_GPU_BIN=/path/to/evcxr_gpu if set; else the rust_gpu wheel with the
#       prebuilt kernel when there is one ($RUST_GPU_WHEEL, else the newest dist/rust_gpu-*.whl of
#       this checkout, which `make wheel` builds; --build ignores it), installed with pip (it also
#       gives Python notebooks `%load_ext rust_gpu`); else build it (about 12 minutes on 2 cores)
#   4   register the kernelspec in the user's Jupyter data directory (jupyter --data-dir)
#   5   warm the compile cache (skip with --no-warm)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OFFLINE=0
WARM=1
BUILD=0
for arg in "$@"; do
  case "$arg" in
    --offline) OFFLINE=1 ;;
    --no-warm) WARM=0 ;;
    --build) BUILD=1 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "hosted_bootstrap.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
PY="${PYTHON:-python3}"
say() { printf '==> %s\n' "$*"; }

# the wheel with the prebuilt kernel, if any (step 3)
WHEEL=""
if [[ -z "${EVCXR_GPU_BIN:-}" ]] && ((!BUILD)); then
  if [[ -n "${RUST_GPU_WHEEL:-}" ]]; then
    WHEEL="$RUST_GPU_WHEEL"
    [[ -f "$WHEEL" && "$WHEEL" == *.whl ]] || { echo "hosted_bootstrap.sh: RUST_GPU_WHEEL=$WHEEL is not a .whl file" >&2; exit 1; }
  else
    WHEEL="$(ls -1 "$ROOT"/dist/rust_gpu-*.whl 2>/dev/null | sort -V | tail -n 1 || true)"
  fi
fi

# 1. Rust
if ! command -v cargo >/dev/null 2>&1 && [[ -x "$HOME/.cargo/bin/cargo" ]]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if [[ -z "${EVCXR_GPU_BIN:-}" ]] && ! command -v cargo >/dev/null 2>&1; then
  if ((OFFLINE)) && [[ -n "$WHEEL" ]]; then
    echo "hosted_bootstrap.sh: warning: cargo is not installed (--offline): the kernel gets installed, but cells compile only once Rust is installed (https://rustup.rs)" >&2
  elif ((OFFLINE)); then
    echo "hosted_bootstrap.sh: cargo is not installed and --offline forbids downloading it; install Rust from https://rustup.rs" >&2
    exit 1
  else
    say "installing Rust (rustup, minimal profile, with rust-src)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rust-src
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
if ((!OFFLINE)) && command -v rustup >/dev/null 2>&1 && ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
  say "adding rust-src (evcxr's type inference reads the standard library's sources)"
  rustup component add rust-src
fi

# 2. Python packages in the environment that runs Jupyter
if ! "$PY" -c 'import jupyter_client, nbclient' >/dev/null 2>&1; then
  if ((OFFLINE)); then
    echo "hosted_bootstrap.sh: $PY lacks jupyter_client/nbclient and --offline forbids installing them" >&2
    exit 1
  fi
  say "installing jupyter_client and nbclient"
  "$PY" -m pip install --quiet jupyter_client nbclient
fi

# 3. the kernel binary
KERNEL_ENV=()
if [[ -n "${EVCXR_GPU_BIN:-}" ]]; then
  BIN="$EVCXR_GPU_BIN"
  [[ -x "$BIN" ]] || { echo "hosted_bootstrap.sh: EVCXR_GPU_BIN=$BIN is not an executable" >&2; exit 1; }
elif [[ -n "$WHEEL" ]]; then
  say "installing the prebuilt kernel from $WHEEL"
  pip_flags=(--quiet --force-reinstall --no-deps)
  ((OFFLINE)) && pip_flags+=(--no-index)
  "$PY" -m pip install "${pip_flags[@]}" "$WHEEL"
  if ! "$PY" -c 'import IPython, jupyter_client' >/dev/null 2>&1; then
    if ((OFFLINE)); then
      echo "hosted_bootstrap.sh: $PY lacks IPython/jupyter_client (needed by rust_gpu) and --offline forbids installing them" >&2
      exit 1
    fi
    "$PY" -m pip install --quiet "$WHEEL"
  fi
  BIN="$("$PY" -c 'from rust_gpu.locate import wheel_binary; print(wheel_binary() or "")')"
  [[ -n "$BIN" && -x "$BIN" ]] || { echo "hosted_bootstrap.sh: $WHEEL did not install an executable rust_gpu/bin/evcxr_gpu" >&2; exit 1; }
  KERNEL_ENV=("EVCXR_GPU_GPUKIT=${EVCXR_GPU_GPUKIT:-$("$PY" -c 'from rust_gpu.locate import wheel_gpukit; print(wheel_gpukit() or "")')}")
else
  say "building the kernel (release, about 12 minutes on 2 cores; \`make wheel\` on another machine avoids this)"
  offline_flag=()
  ((OFFLINE)) && offline_flag=(--offline)
  (cd "$ROOT" && cargo build --release -p evcxr_gpu "${offline_flag[@]}")
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/evcxr_gpu"
fi
# the Python extension (%%rust cells in Python notebooks) without the wheel: from python/
if [[ -z "$WHEEL" ]] && ! "$PY" -c 'import rust_gpu' >/dev/null 2>&1; then
  if ((OFFLINE)); then
    say "skipping the rust_gpu extension (pip install $ROOT/python needs the network for its build backend)"
  else
    say "installing the rust_gpu extension (%load_ext rust_gpu) from $ROOT/python"
    "$PY" -m pip install --quiet "$ROOT/python"
  fi
fi

# 4. kernelspec in the user's Jupyter data directory
DATA_DIR="$("$PY" -c 'from jupyter_core.paths import jupyter_data_dir; print(jupyter_data_dir())')"
say "registering \"Rust (GPU)\" in $DATA_DIR/kernels"
if [[ -n "$WHEEL" && -z "${EVCXR_GPU_BIN:-}" ]]; then
  "$PY" -m rust_gpu install-kernel --kernels-dir "$DATA_DIR/kernels"   # with EVCXR_GPU_GPUKIT
else
  "$BIN" install --kernels-dir "$DATA_DIR/kernels" --template "$ROOT/kernels/rust-gpu"
fi

# 5. warm
if ((WARM)); then
  say "warming the compile cache (gpukit)"
  env "${KERNEL_ENV[@]}" "$BIN" warm
fi
if "$PY" -c 'import rust_gpu' >/dev/null 2>&1; then
  say "done: reload the page and choose the \"Rust (GPU)\" kernel, or in a Python notebook run %load_ext rust_gpu and write %%rust cells"
else
  say "done: reload the page and choose the \"Rust (GPU)\" kernel (for %%rust cells in Python notebooks: pip install $ROOT/python)"
fi
