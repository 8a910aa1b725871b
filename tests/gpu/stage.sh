#!/usr/bin/env bash
# Stage everything the GPU device run needs under .stage/ (git-ignored) and print the device calls.
#
#   tests/gpu/stage.sh            (or: make gpu-stage)
#
# Environment:
#   GPU_STAGE_TARGET_DIR   cargo target dir for the release and test builds (default: $CARGO_TARGET_DIR or ./target)
#   GPU_STAGE_MARGIN_MIB   room left in each call for the working tree to grow (default 4)
#   GPU_STAGE_SKIP_BUILD=1 reuse the binaries of the last build (no cargo invocation for them)
#   GPU_STAGE_STEPS        steps to run (default "bins vendor wheels toolchain plan"); groups made
#                          earlier are reused by the plan step
#
# What it makes (see tests/gpu/README.md):
#   .stage/build/groups/NAME.tar.xz   one compressed group each: tests+bench, evcxr, vendor, wheels,
#                                     and the Rust toolchain in several pieces (cached by content)
#   .stage/callN/                     what device call N carries (groups, or byte pieces of one)
#   .stage/plan.json                  the plan (also inside each call folder), .stage/SEQUENCE.txt
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/gpu
STAGE=$ROOT/.stage
B=$STAGE/build
G=$B/groups
export CARGO_TARGET_DIR=${GPU_STAGE_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}
MARGIN_MIB=${GPU_STAGE_MARGIN_MIB:-4}
PY=${PYTHON:-python3}
XZ=(xz -9e -T1 -c)
DEVICE_STAGE_ROOT=/tmp/gpu-stage   # where run.sh unpacks on the device (must match run.sh)

# Python packages the device image already has (KINDS.md, "Python packages already there"):
# their wheels are not carried.
DEVICE_HAS_PY="attrs python_dateutil six typing_extensions"
# ipykernel: the python3 kernel of tests/notebooks/python_rust_magic.ipynb (%%rust cells through rust_gpu)
WHEELS="nbclient nbformat jupyter_client pyzmq tornado traitlets jupyter_core python-dateutil platformdirs fastjsonschema jsonschema ipykernel"
# ipykernel and IPython run without their debugger and completion engine (10 MiB of wheels)
PY_NOT_NEEDED="debugpy jedi parso"

log() { echo "[gpu-stage $(date -u +%H:%M:%S)] $*" >&2; }
die() { echo "gpu-stage: $*" >&2; exit 1; }

for tool in cargo rustc "$PY" xz tar strip git; do
  command -v "$tool" >/dev/null || die "needs $tool on PATH"
done
grep -qx '/.stage' "$ROOT/.gitignore" || die ".stage must be git-ignored (add /.stage to .gitignore)"
mkdir -p "$B" "$G"

# pack NAME KEY DIR [tar args...]: make $G/NAME.tar.xz from DIR unless its stamp already holds KEY
pack() {
  local name=$1 key=$2 dir=$3; shift 3
  local out=$G/$name.tar.xz stamp=$G/$name.stamp
  if [[ -f $out && -f $stamp && $(cat "$stamp") == "$key" ]]; then
    log "group $name: unchanged ($(du -h "$out" | cut -f1))"
    return
  fi
  log "group $name: compressing"
  rm -f "$stamp"
  tar -C "$dir" -cf - "$@" | "${XZ[@]}" >"$out.tmp"
  mv "$out.tmp" "$out"
  echo "$key" >"$stamp"
  log "group $name: $(du -h "$out" | cut -f1)"
}

# key of a directory's content (names, sizes, bytes)
dir_key() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64); }

# ---------------------------------------------------------------------------------------------
# 1. binaries: evcxr_gpu (release), gpukit-bench and the launch_overhead example (release, when the
#    bench is a workspace member), tests
STEPS=" ${GPU_STAGE_STEPS:-bins vendor wheels toolchain plan} "
step() { [[ $STEPS == *" $1 "* ]]; }
P=$B/payload
mkdir -p "$P"
cd "$ROOT"
has_bench=0
if grep -q '"benches/gpukit-bench"' Cargo.toml; then has_bench=1; fi
if step bins; then
rm -rf "$P/early" "$P/evcxr"; mkdir -p "$P/early/bin" "$P/early/tests" "$P/evcxr/bin"

if [[ ${GPU_STAGE_SKIP_BUILD:-0} != 1 ]]; then
  log "cargo build --release evcxr_gpu$( ((has_bench)) && echo ' gpukit-bench') (target: $CARGO_TARGET_DIR)"
  cargo build --release -p evcxr_gpu $( ((has_bench)) && echo '-p gpukit-bench')
  # the launch-overhead example (gpukit, raw cudarc and the bare driver call side by side) runs
  # beside the benchmarks, to show the floor of a launch on the device
  ((has_bench)) && cargo build --release -p gpukit --example launch_overhead
fi
# as `make test-cargo`: the kernel crate's tests in release (they reuse the release build of evcxr;
# a debug evcxr would cost another ten minutes and much larger binaries), the rest in debug
log "cargo test --no-run (test executables: workspace in debug, evcxr_gpu in release)"
{ cargo test --workspace --exclude evcxr_gpu --features gpukit-multi/frame --no-run --message-format=json &&
  cargo test --release -p evcxr_gpu --no-run --message-format=json; } \
  >"$B/cargo-tests.json" 2>"$B/cargo-tests.stderr" || { tail -40 "$B/cargo-tests.stderr" >&2; die "cargo test --no-run failed"; }

cp "$CARGO_TARGET_DIR/release/evcxr_gpu" "$P/evcxr/bin/evcxr_gpu"
strip --strip-debug "$P/evcxr/bin/evcxr_gpu"
if ((has_bench)); then
  cp "$CARGO_TARGET_DIR/release/gpukit-bench" "$P/early/bin/gpukit-bench"
  strip --strip-debug "$P/early/bin/gpukit-bench"
  cp "$CARGO_TARGET_DIR/release/examples/launch_overhead" "$P/early/bin/launch_overhead"
  strip --strip-debug "$P/early/bin/launch_overhead"
fi
"$PY" "$HERE/stagelib.py" tests "$B/cargo-tests.json" "$P/early/tests" >&2
pack early "$(dir_key "$P/early")" "$P/early" .
pack evcxr "$(dir_key "$P/evcxr")" "$P/evcxr" .
fi

# ---------------------------------------------------------------------------------------------
# 2. vendored sources: what notebook cells compile against (gpukit, gpukit-macros and their
#    dependency closure, every crate the notebooks `:dep`) plus the library crates' dev-dependencies
#    (trybuild UI tests build against them). Not the kernel's own dependencies: they are in its binary.
if step vendor; then
NB=$B/nbdeps
mkdir -p "$NB/src"
: >"$NB/src/lib.rs"
{
  echo '[package]'
  echo 'name = "gpu-notebook-deps"'
  echo 'version = "0.0.0"'
  echo 'edition = "2021"'
  echo 'publish = false'
  echo
  echo '[dependencies]'
  # with the optional features lessons turn on (`%features linalg`), so their crates are vendored
  echo "gpukit = { path = \"$ROOT/crates/gpukit\", features = [\"linalg\", \"candle\"] }"
  echo "gpukit-macros = { path = \"$ROOT/crates/gpukit-macros\" }"
  # companion crates lessons load with `%crate NAME` (6.0: gpukit-frame, with arrow-csv and friends;
  # 7.0: gpukit-ml)
  echo "gpukit-frame = { path = \"$ROOT/crates/gpukit-frame\" }"
  echo "gpukit-ml = { path = \"$ROOT/crates/gpukit-ml\" }"
  # (8.0: gpukit-multi with `frame`, as `%crate gpukit-multi frame` loads it; its own dependencies
  # are gpukit's and gpukit-frame's)
  echo "gpukit-multi = { path = \"$ROOT/crates/gpukit-multi\", features = [\"frame\"] }"
  cargo metadata --no-deps --format-version 1 >"$B/metadata.json"
  { "$PY" "$HERE/stagelib.py" deps "$ROOT"; "$PY" "$HERE/stagelib.py" devdeps "$B/metadata.json" gpukit gpukit-macros; } \
    | awk -F' = ' '!seen[$1]++ && $1 != "gpukit" && $1 != "gpukit-macros" && $1 != "gpukit-frame" && $1 != "gpukit-ml" && $1 != "gpukit-multi"'
  echo
  echo '[workspace]'
} >"$NB/Cargo.toml.new"
if ! cmp -s "$NB/Cargo.toml.new" "$NB/Cargo.toml"; then mv "$NB/Cargo.toml.new" "$NB/Cargo.toml"; rm -f "$NB/Cargo.lock"; else rm "$NB/Cargo.toml.new"; fi
# start from the workspace's lock so the vendored versions are the ones the tests were built with
cp "$ROOT/Cargo.lock" "$NB/Cargo.lock"
(cd "$NB" && cargo fetch -q)
# rust-analyzer inside evcxr loads the standard library with `cargo metadata --locked` on rust-src's
# library/Cargo.toml; offline that needs the library's own dependencies vendored too (without them
# it falls back to a "stitched" sysroot under which `?` types as `!` and cells fail)
LIBRARY=$(rustc --print sysroot)/lib/rustlib/src/rust/library
sync=()
[[ -f $LIBRARY/Cargo.toml ]] && sync=(-s "$LIBRARY/Cargo.toml")
vkey=$(cat "$NB/Cargo.lock" "$NB/Cargo.toml" "$HERE/stagelib.py" ${sync:+"$LIBRARY/Cargo.lock"} | sha256sum | cut -c1-64)
if [[ ! -f $G/vendor.stamp || $(cat "$G/vendor.stamp") != "$vkey" ]]; then
  log "cargo vendor (notebook dependencies${sync:+ and those of the standard library})"
  rm -rf "$P/vendor"; mkdir -p "$P/vendor"
  # the library uses nightly-only manifest keys (public dependencies): cargo accepts them this way
  __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly \
    cargo vendor -q --locked --manifest-path "$NB/Cargo.toml" "${sync[@]}" --versioned-dirs "$P/vendor/vendor" >/dev/null
  "$PY" "$HERE/stagelib.py" prune-vendor "$P/vendor/vendor"
fi
pack vendor "$vkey" "$P/vendor" vendor
fi

# ---------------------------------------------------------------------------------------------
# 3. Python wheels for nbclient and friends (Python 3.12, manylinux, x86_64)
if step wheels; then
wkey=$(echo "$WHEELS / $DEVICE_HAS_PY / $PY_NOT_NEEDED / 3.12" | sha256sum | cut -c1-64)
if [[ ! -f $G/wheels.stamp || $(cat "$G/wheels.stamp") != "$wkey" ]]; then
  log "pip download wheels for Python 3.12"
  rm -rf "$P/wheels"; mkdir -p "$P/wheels/wheels"
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_26_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    -d "$P/wheels/wheels" $WHEELS
  for name in $DEVICE_HAS_PY $PY_NOT_NEEDED; do rm -f "$P/wheels/wheels/$name"-[0-9]*.whl; done
  # tzdata is only python-dateutil 4's need; the device keeps its own python-dateutil
  rm -f "$P/wheels/wheels"/tzdata-*.whl
  pack wheels "$wkey" "$P/wheels" wheels
else
  log "group wheels: unchanged ($(du -h "$G/wheels.tar.xz" | cut -f1))"
fi
fi

# ---------------------------------------------------------------------------------------------
# 4. the Rust toolchain: rustc, cargo, the x86_64 std, rust-lld; no docs, sources, sanitizers
if step toolchain; then
SYSROOT=$(rustc --print sysroot)
HOST=x86_64-unknown-linux-gnu
[[ $(rustc -vV | sed -n 's/^host: //p') == "$HOST" ]] || die "toolchain host is not $HOST"
tkey=$( (rustc -vV; cargo -V; echo "$SYSROOT") | sha256sum | cut -c1-64)
(
  cd "$SYSROOT"
  llvm=(lib/libLLVM*)
  driver=(lib/librustc_driver-*.so)
  std=()
  while IFS= read -r f; do std+=("$f"); done < <(find "lib/rustlib/$HOST/lib" -maxdepth 1 -type f ! -name 'librustc-*_rt.*.a' | sort)
  T=$B/toolchain-tree
  rm -rf "$T"; mkdir -p "$T/rust"
  # hard links keep this cheap; a copy where the sysroot is on another filesystem
  for f in bin/rustc bin/cargo "${llvm[@]}" "${driver[@]}" "${std[@]}" \
           "lib/rustlib/$HOST/bin/rust-lld" "lib/rustlib/$HOST/bin/rust-objcopy" lib/rustlib/$HOST/bin/gcc-ld/*; do
    mkdir -p "$T/rust/$(dirname "$f")"
    cp -al "$f" "$T/rust/$f" 2>/dev/null || cp -a "$f" "$T/rust/$f"
  done
  # rustc looks for these to know it is in a sysroot
  for f in lib/rustlib/components lib/rustlib/rust-installer-version; do
    [[ -f $f ]] && cp "$f" "$T/rust/$f"
  done
  pack rust-llvm "$tkey" "$T" $(printf 'rust/%s ' "${llvm[@]}")
  pack rust-driver "$tkey" "$T" rust/bin/rustc $(printf 'rust/%s ' "${driver[@]}")
  pack rust-cargo "$tkey" "$T" rust/bin/cargo rust/lib/rustlib/components
  pack rust-std "$tkey" "$T" "rust/lib/rustlib/$HOST"
  # the standard library's sources: evcxr's type inference (rust-analyzer) reads them to give
  # variables like `let x = Array::arange(0.0, 8.0)?;` their type
  if [[ -d lib/rustlib/src/rust/library ]]; then
    mkdir -p "$T/rust/lib/rustlib/src"
    cp -al lib/rustlib/src/rust "$T/rust/lib/rustlib/src/rust" 2>/dev/null || cp -a lib/rustlib/src/rust "$T/rust/lib/rustlib/src/rust"
    pack rust-src "$( (echo "$tkey"; find lib/rustlib/src/rust -type f | wc -l) | sha256sum | cut -c1-64)" "$T" rust/lib/rustlib/src
  else
    rm -f "$G/rust-src.tar.xz" "$G/rust-src.stamp"
    log "WARNING: no rust-src in $SYSROOT: evcxr cannot infer variable types without it (rustup component add rust-src)"
  fi
)
fi

# ---------------------------------------------------------------------------------------------
# 5. assign groups to device calls and print the sequence
step plan || exit 0
tree=$("$PY" "$HERE/stagelib.py" tree-size "$ROOT")
budget=$(( 64 * 1024 * 1024 - tree - MARGIN_MIB * 1024 * 1024 ))
commit=$(git rev-parse HEAD)
dirty=0; [[ -n $(git status --porcelain --untracked-files=no) ]] && dirty=1
cat >"$B/info.json" <<EOF
{"bench": $has_bench, "rustc": "$(rustc -V)", "host_stage_root": "$ROOT", "host_target_dir": "$CARGO_TARGET_DIR", "device_stage_root": "$DEVICE_STAGE_ROOT"}
EOF
log "working tree $((tree / 1024)) KiB; budget per call $((budget / 1024 / 1024)) MiB"
args=()
for f in "$G"/*.tar.xz; do n=$(basename "$f" .tar.xz); args+=(--group "$n=$f"); done
"$PY" "$HERE/stagelib.py" plan --out "$STAGE" --budget "$budget" "${args[@]}" --first early \
  --commit "$commit" --dirty "$dirty" --stage-root "$ROOT" --tree-bytes "$tree" --info "$B/info.json" \
  | tee "$STAGE/SEQUENCE.txt"
du -sh "$STAGE"/call* | sed 's/^/  /'
