#!/usr/bin/env bash
# Bootstrap Rust GPU 101 on a hosted Jupyter (Colab-style): a machine with Python and Jupyter but
# maybe no Rust. Run it from a notebook cell of the running (Python) kernel:
#
#   !git clone <this repository> rust-gpu-101 && bash rust-gpu-101/install/hosted_bootstrap.sh
#
# then reload the page and pick the "Rust (GPU)" kernel.
#
#   hosted_bootstrap.sh [--offline] [--no-warm]
#
# Steps (those marked * need the network and are skipped with --offline):
#   1*  install Rust with rustup if cargo is absent
#   2*  install the Python packages the kernel and its tests use (nbclient, jupyter_client) if absent
#   3   build the kernel (or use EVCXR_GPU_BIN=/path/to/evcxr_gpu if set)
#   4   register the kernelspec in the user's Jupyter data directory (jupyter --data-dir)
#   5   warm the compile cache (skip with --no-warm)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OFFLINE=0
WARM=1
for arg in "$@"; do
  case "$arg" in
    --offline) OFFLINE=1 ;;
    --no-warm) WARM=0 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "hosted_bootstrap.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
PY="${PYTHON:-python3}"
say() { printf '==> %s\n' "$*"; }

# 1. Rust
if ! command -v cargo >/dev/null 2>&1 && [[ -x "$HOME/.cargo/bin/cargo" ]]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if [[ -z "${EVCXR_GPU_BIN:-}" ]] && ! command -v cargo >/dev/null 2>&1; then
  if ((OFFLINE)); then
    echo "hosted_bootstrap.sh: cargo is not installed and --offline forbids downloading it; install Rust from https://rustup.rs" >&2
    exit 1
  fi
  say "installing Rust (rustup, minimal profile)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
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
if [[ -n "${EVCXR_GPU_BIN:-}" ]]; then
  BIN="$EVCXR_GPU_BIN"
  [[ -x "$BIN" ]] || { echo "hosted_bootstrap.sh: EVCXR_GPU_BIN=$BIN is not an executable" >&2; exit 1; }
else
  say "building the kernel (release, about 12 minutes on 2 cores)"
  offline_flag=()
  ((OFFLINE)) && offline_flag=(--offline)
  (cd "$ROOT" && cargo build --release -p evcxr_gpu "${offline_flag[@]}")
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/evcxr_gpu"
fi

# 4. kernelspec in the user's Jupyter data directory
DATA_DIR="$("$PY" -c 'from jupyter_core.paths import jupyter_data_dir; print(jupyter_data_dir())')"
say "registering \"Rust (GPU)\" in $DATA_DIR/kernels"
"$BIN" install --kernels-dir "$DATA_DIR/kernels" --template "$ROOT/kernels/rust-gpu"

# 5. warm
if ((WARM)); then
  say "warming the compile cache (gpukit)"
  "$BIN" warm
fi
say "done: reload the page and choose the \"Rust (GPU)\" kernel"
