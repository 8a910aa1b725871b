#!/usr/bin/env bash
# Installs Rust GPU 101 into this checkout. Idempotent: every step checks before it acts.
#
#   install/install.sh [--no-warm]
#
# 1. checks for cargo and python3 (with venv) and says what is missing
# 2. creates .venv (JupyterLab, nbclient, nbconvert, jupyter_client, ipykernel, pytest, NVRTC wheel)
# 3. builds the evcxr_gpu kernel in release mode
# 4. writes the "Rust (GPU)" kernelspec into .venv/share/jupyter/kernels/rust-gpu
# 5. warms the compile cache by loading gpukit once (skip with --no-warm)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET/release/evcxr_gpu"
WARM=1
for arg in "$@"; do
  case "$arg" in
    --no-warm) WARM=0 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# 1. prerequisites
missing=()
command -v cargo >/dev/null 2>&1 || missing+=("cargo (Rust): install it from https://rustup.rs, e.g. curl --proto '=https' -sSf https://sh.rustup.rs | sh")
command -v python3 >/dev/null 2>&1 || missing+=("python3 (3.9 or newer): e.g. apt-get install python3")
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  missing+=("the python3 venv module: e.g. apt-get install python3-venv")
fi
if ((${#missing[@]})); then
  echo "install.sh: missing prerequisites:" >&2
  for m in "${missing[@]}"; do echo "  - $m" >&2; done
  exit 1
fi

# 2. Python environment
if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
REQ_HASH="$(sha256sum "$ROOT/install/requirements.txt" | cut -d' ' -f1)"
STAMP="$VENV/.requirements.sha256"
if [[ "$(cat "$STAMP" 2>/dev/null || true)" != "$REQ_HASH" ]]; then
  say "installing Python packages (install/requirements.txt)"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet -r "$ROOT/install/requirements.txt"
  echo "$REQ_HASH" > "$STAMP"
else
  say "Python packages up to date"
fi
NVRTC_LIB="$("$VENV/bin/python" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("nvidia")
paths = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
for p in paths:
    lib = pathlib.Path(p) / "cu13" / "lib"
    if lib.is_dir():
        print(lib)
        break
PY
)"

# 3. the kernel
say "building the evcxr_gpu kernel (release; the first build takes about 12 minutes on 2 cores)"
(cd "$ROOT" && cargo build --release -p evcxr_gpu)

# 4. kernelspec
say "registering the \"Rust (GPU)\" kernel"
"$BIN" install --kernels-dir "$VENV/share/jupyter/kernels" \
  --template "$ROOT/kernels/rust-gpu"

# 5. compile cache
if ((WARM)); then
  say "warming the compile cache (builds gpukit for notebooks once)"
  LD_LIBRARY_PATH="${NVRTC_LIB:+$NVRTC_LIB:}${LD_LIBRARY_PATH:-}" "$BIN" warm
fi
say "installed: make lab starts JupyterLab, make test runs the tests"
