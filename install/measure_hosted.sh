#!/usr/bin/env bash
# Measures the hosted path: from a bare venv (Python + jupyter_client + ipykernel + nbclient, made
# before the clock starts) and an empty HOME to the first `%gpu` output in a Python notebook.
#
#   install/measure_hosted.sh WORKDIR [hosted_bootstrap.sh options...]
#
# e.g. `RUST_GPU_WHEEL=dist/rust_gpu-....whl install/measure_hosted.sh /tmp/m` (with the wheel) or
# `install/measure_hosted.sh /tmp/m --build` (building the kernel). The Rust toolchain (RUSTUP_HOME)
# is the machine's; CARGO_HOME and CARGO_TARGET_DIR start empty, so crates are downloaded and (with
# --build) the kernel is built as on a fresh machine.
# Prints one line per phase and the total, in seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:?usage: measure_hosted.sh WORKDIR [hosted_bootstrap.sh options...]}"
shift
[[ ! -e "$WORK" ]] || { echo "measure_hosted.sh: $WORK exists; give a new directory" >&2; exit 2; }
mkdir -p "$WORK/home"
WORK="$(cd "$WORK" && pwd)"
RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
TOOLCHAIN_BIN="$(dirname "$(rustup which cargo 2>/dev/null || command -v cargo)")"

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet jupyter_client ipykernel nbclient
echo "bare venv ready: $("$WORK/venv/bin/python" -m pip list 2>/dev/null | wc -l) packages"

run() {  # a fresh machine: empty HOME and CARGO_HOME, the venv first on PATH, the toolchain after
  env -i PATH="$WORK/venv/bin:$TOOLCHAIN_BIN:/usr/bin:/bin" HOME="$WORK/home" RUSTUP_HOME="$RUSTUP_HOME" \
    CARGO_HOME="$WORK/home/.cargo" CARGO_TARGET_DIR="$WORK/target" PYTHON="$WORK/venv/bin/python" ${RUST_GPU_WHEEL:+RUST_GPU_WHEEL="$RUST_GPU_WHEEL"} \
    ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} "$@"
}

t0=$(date +%s.%N)
run bash "$ROOT/install/hosted_bootstrap.sh" "$@" 2>&1 | while IFS= read -r line; do
  printf '%7.1f s  %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$line"
done
t1=$(date +%s.%N)
run "$WORK/venv/bin/python" - "$t0" <<'PY'
import sys, time
from jupyter_client.manager import KernelManager

t0 = float(sys.argv[1])
km = KernelManager(kernel_name="python3")
km.start_kernel()
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=120)
print(f"{time.time() - t0:7.1f} s  python3 kernel ready")
shown = []
for code in ("%load_ext rust_gpu", "%gpu"):

    def hook(msg):
        if msg["msg_type"] in ("display_data", "stream", "error"):
            print(f"{time.time() - t0:7.1f} s  {code}: {msg['msg_type']} {str(msg['content'])[:150]}")
            if code == "%gpu" and msg["msg_type"] == "display_data" and not shown:
                shown.append(time.time())

    reply = kc.execute_interactive(code, timeout=3600, output_hook=hook)
    if reply["content"]["status"] != "ok":
        sys.exit(f"{code} failed: {reply['content']}")
if not shown:
    sys.exit("%gpu showed no device table")
print(f"TOTAL {shown[0] - t0:.1f} s from the bootstrap's start to the %gpu device table")
kc.stop_channels()
km.shutdown_kernel()
PY
echo "bootstrap took $(echo "$t1 - $t0" | bc) s"
