#!/usr/bin/env bash
# Rehearse the device run here, from what `make gpu-stage` put in .stage/ (no GPU needed).
#
#   tests/gpu/rehearse.sh offline-build   unpack the staged toolchain and vendored sources into a
#                                         temporary folder and build a crate that depends on gpukit
#                                         with them alone: no rustup, an empty CARGO_HOME, --offline
#                                         (what evcxr does inside the kernel on the device)
#   GPU_NOTEBOOKS=GLOB limits the notebooks of `calls` (e.g. 'tests/notebooks/*').
#   tests/gpu/rehearse.sh calls [K...]    run every staged call (or calls K...) with tests/gpu/run.sh as the device
#                                         would (tests and notebooks then run on the CPU backend),
#                                         PATH stripped of this machine's Rust; needs python3.12
#
# GPU_REHEARSE_DIR (default: a new temporary folder) keeps the unpacked files for inspection.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
G=$ROOT/.stage/build/groups
MODE=${1:-offline-build}
W=${GPU_REHEARSE_DIR:-$(mktemp -d /tmp/gpu-rehearse.XXXXXX)}
mkdir -p "$W"
echo "rehearsal in $W"
# a PATH without this machine's cargo/rustc (rustup's ~/.cargo/bin) but with the system tools
CLEAN_PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -e '\.cargo/bin' -e '\.rustup' | paste -sd:)

case $MODE in
offline-build)
  for g in rust-llvm rust-driver rust-cargo rust-std vendor; do
    [[ -f $G/$g.tar.xz ]] || { echo "missing $G/$g.tar.xz: run make gpu-stage first" >&2; exit 1; }
    t0=$(date +%s)
    tar -C "$W" -xJf "$G/$g.tar.xz"
    echo "unpacked $g ($(du -h "$G/$g.tar.xz" | cut -f1) packed) in $(( $(date +%s) - t0 ))s"
  done
  echo "toolchain unpacked: $(du -sh "$W/rust" | cut -f1); vendored sources: $(du -sh "$W/vendor" | cut -f1) in $(ls "$W/vendor" | wc -l) crates"
  mkdir -p "$W/cargo-home" "$W/cell/src"
  cat >"$W/cargo-home/config.toml" <<EOF
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "$W/vendor"

[net]
offline = true
EOF
  cat >"$W/cell/Cargo.toml" <<EOF
[package]
name = "cell"
version = "0.0.0"
edition = "2021"

[dependencies]
gpukit = { path = "$ROOT/crates/gpukit" }

[workspace]
EOF
  cat >"$W/cell/src/main.rs" <<'EOF'
use gpukit::prelude::*;

#[kernel]
fn scale(input: &[f64], output: &mut [f64], k: f64) {
    let i = grid(1);
    if i < input.len() {
        output[i] = input[i] * k;
    }
}

fn main() -> gpukit::Result<()> {
    set_default_device(Device::cpu());
    let a = Array::<f64>::arange(0.0, 8.0)?;
    let mut b = Array::<f64>::zeros(8)?;
    launch!(scale[1, 8](&a, &mut b, 3.0))?;
    println!("{}", b.sum()?);
    Ok(())
}
EOF
  cd "$W/cell"
  env -i PATH="$W/rust/bin:$CLEAN_PATH" HOME="$W" CARGO_HOME="$W/cargo-home" CARGO_NET_OFFLINE=true \
    bash -c 'set -e; command -v cargo; rustc -V; cargo -V; cargo build --offline -q 2>&1 | tail -20; ./target/debug/cell' \
    | tee "$W/offline-build.log"
  out=$(tail -1 "$W/offline-build.log")
  [[ $out == 84 ]] || { echo "offline build FAILED (expected 84, got '$out')" >&2; exit 1; }
  echo "offline build OK: a crate using gpukit and #[kernel] built with the staged toolchain and vendored sources only"
  ;;
calls)
  PY312=${GPU_PYTHON:-}
  if [[ -z $PY312 ]]; then
    for c in ~/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 "$(command -v python3.12 || true)"; do
      if [[ -n $c && -x $c ]] && "$c" -V >/dev/null 2>&1; then PY312=$c; break; fi
    done
  fi
  [[ -n $PY312 ]] || { echo "needs python3.12 (set GPU_PYTHON)" >&2; exit 1; }
  n=$(python3 -c "import json;print(json.load(open('$ROOT/.stage/plan.json'))['calls'])")
  # what the device image has and the staged wheels leave out (KINDS.md): give it to this python too
  if [[ ! -d $W/device-site/attr ]]; then
    "$PY312" -m pip install -q --disable-pip-version-check --target "$W/device-site" attrs python-dateutil six typing_extensions
  fi
  shift
  calls=("$@")
  ((${#calls[@]})) || calls=($(seq 1 "$n"))
  for k in "${calls[@]}"; do
    mkdir -p "$W/out$k"
    env -i PATH="$CLEAN_PATH" HOME="$W/home" OUT="$W/out$k" GPU_STAGE_ROOT="$W/stage" GPU_PYTHON="$PY312" \
      PYTHONPATH="$W/device-site" \
      GPU_RUN_BUDGET_S="${GPU_RUN_BUDGET_S:-3000}" GPU_NB_JOBS="${GPU_NB_JOBS:-2}" GPU_CELL_TIMEOUT_S=900 ${GPU_NOTEBOOKS:+GPU_NOTEBOOKS="$GPU_NOTEBOOKS"} \
      bash "$ROOT/tests/gpu/run.sh" "$k" "$n" || echo "call $k exited $?"
    ls -la "$W/out$k"
  done
  echo "last call's files: $W/out$n  (record with: tests/gpu/record.sh $W/out$n — for a rehearsal, into a scratch --dest)"
  ;;
*)
  echo "usage: tests/gpu/rehearse.sh offline-build|calls" >&2; exit 2 ;;
esac
