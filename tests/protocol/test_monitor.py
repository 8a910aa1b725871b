"""The live GPU monitor through the protocol: `%%monitor` and `%gpu --watch` show a chart with a
display_id, update it in place while the cell runs, and leave the final chart; without NVML they
say so in one line and the cell runs. Also `%memory`.

These kernels load gpukit (the checkout the kernel binary was built from) and read the fake NVML
source that GPUKIT_NVML_FAKE=1 selects (test-only), so the sequence is checked on machines
without a GPU. The first cell builds gpukit inside the session: slow the first time; the work
directory (EVCXR_GPU_PROTOCOL_GPUKIT_WORKDIR, else a fresh temporary one) keeps the build.
"""

from __future__ import annotations

import os
import tempfile

import pytest

from conftest import run, start


def outputs(msgs, kind):
    return [c for t, c, _ in msgs if t == kind]


def stdout(msgs):
    return "".join(c["text"] for c in outputs(msgs, "stream") if c["name"] == "stdout")


@pytest.fixture(scope="module")
def gpukit_kernel():
    work = os.environ.get("EVCXR_GPU_PROTOCOL_GPUKIT_WORKDIR") or tempfile.mkdtemp(
        prefix="evcxr-gpu-monitor-")
    env = {k: v for k, v in os.environ.items() if k not in ("EVCXR_GPU_GPUKIT", "EVCXR_GPU_PRELUDE")}
    env.update({"EVCXR_GPU_WORKDIR": work, "EVCXR_GPU_OPT": "0", "GPUKIT_NVML_FAKE": "1",
                "GPUKIT_DEVICE": "cpu"})
    km, kc = start(env)
    reply, msgs = run(kc, "gpukit::default_device()", timeout=3600)
    assert reply["status"] == "ok", (reply, msgs)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def live_sequence(msgs):
    """The display messages, checked to be one display_data with a display_id followed only by
    update_display_data with that id; returns (the first, the updates)."""
    shown = [(t, c) for t, c, _ in msgs if t in ("display_data", "update_display_data")]
    assert shown, msgs
    kind, first = shown[0]
    assert kind == "display_data", shown[0]
    display_id = first["transient"]["display_id"]
    assert display_id.startswith("gpukit-")
    updates = [c for _, c in shown[1:]]
    assert [t for t, _ in shown[1:]] == ["update_display_data"] * len(updates)
    assert all(u["transient"]["display_id"] == display_id for u in updates)
    return first, updates


def assert_final_chart(update, readings_at_least):
    data = update["data"]
    assert data["image/png"].startswith("iVBOR")
    assert data["text/html"].startswith("<img width=\"720\" height=\"570\"")
    text = data["text/plain"]
    assert text.startswith("GPU 0: Fake GPU, ") and "GPUKIT_NVML_FAKE=1, tests only" in text
    readings = int(text.split(" readings every ")[0].rsplit(" ", 1)[1])
    assert readings >= readings_at_least, text
    for quantity in ("GPU utilisation", "memory used", "power", "temperature", "SM clock",
                     "PCIe traffic"):
        assert quantity in text


def test_monitor_cell_updates_in_place_and_leaves_the_final_chart(gpukit_kernel):
    _, kc = gpukit_kernel
    code = ("%%monitor\nlet kept = 6 * 7;\n"
            "std::thread::sleep(std::time::Duration::from_millis(1800));\nkept")
    reply, msgs = run(kc, code, timeout=1200)
    assert reply["status"] == "ok", reply
    first, updates = live_sequence(msgs)
    assert first["data"]["text/plain"].startswith("GPU monitor: reading GPU 0 (Fake GPU) every 100 ms")
    # Redrawn while the cell ran (every 500 ms over 1.8 s), then the final chart.
    assert len(updates) >= 2, [u["data"].get("text/plain", "")[:60] for u in updates]
    assert_final_chart(updates[-1], readings_at_least=10)
    # The cell's value and variables are the cell's.
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "42"
    reply, msgs = run(kc, "kept + 1")
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "43"


def test_monitor_cell_that_fails_keeps_the_chart_of_what_it_did(gpukit_kernel):
    _, kc = gpukit_kernel
    code = ("%%monitor --interval 50\n"
            "std::thread::sleep(std::time::Duration::from_millis(300));\n"
            "let r: Result<u8, String> = Err(\"stopped early\".into());\nr?;")
    reply, msgs = run(kc, code, timeout=1200)
    assert reply["status"] == "error"
    _, updates = live_sequence(msgs)
    assert updates and "every 50 ms" in updates[-1]["data"]["text/plain"]
    assert "image/png" in updates[-1]["data"]


def test_gpu_watch_updates_in_place_for_its_seconds(gpukit_kernel):
    _, kc = gpukit_kernel
    reply, msgs = run(kc, "%gpu --watch 1.5", timeout=1200)
    assert reply["status"] == "ok", reply
    _, updates = live_sequence(msgs)
    assert len(updates) >= 2
    assert_final_chart(updates[-1], readings_at_least=12)
    text = updates[-1]["data"]["text/plain"]
    seconds = float(text.split("Fake GPU, ")[1].split(" s,")[0])
    assert 1.4 <= seconds < 5, text


def test_without_nvml_both_say_so_in_one_line_and_the_cell_runs(gpukit_kernel):
    _, kc = gpukit_kernel
    # This machine's NVML, or none: on a machine with a GPU there is nothing to check here.
    reply, msgs = run(kc, "gpukit::nvml::gpus().is_err()")
    if outputs(msgs, "execute_result")[0]["data"]["text/plain"] != "true":
        pytest.skip("NVML sees a GPU here")
    run(kc, 'unsafe { std::env::set_var("GPUKIT_NVML_FAKE", "0") };')
    try:
        reply, msgs = run(kc, "%%monitor\nlet after_monitor = 5;\nafter_monitor * 2", timeout=1200)
        assert reply["status"] == "ok", reply
        lines = [l for l in stdout(msgs).splitlines() if l]
        assert len(lines) == 1 and lines[0].startswith("no NVIDIA GPU, running on CPU"), lines
        assert lines[0].endswith("; nothing to monitor")
        assert not outputs(msgs, "display_data") and not outputs(msgs, "update_display_data")
        assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "10"
        reply, msgs = run(kc, "%gpu --watch 5", timeout=1200)
        assert reply["status"] == "ok", reply
        lines = [l for l in stdout(msgs).splitlines() if l]
        assert len(lines) == 1 and lines[0].startswith("no NVIDIA GPU, running on CPU"), lines
        assert not outputs(msgs, "display_data")
    finally:
        run(kc, 'unsafe { std::env::set_var("GPUKIT_NVML_FAKE", "1") };')


def test_memory_says_which_number_is_which(gpukit_kernel):
    _, kc = gpukit_kernel
    run(kc, "let held = gpukit::Array::<f64>::zeros(1000)?;")
    reply, msgs = run(kc, "%memory")
    assert reply["status"] == "ok", reply
    text = "".join(c["data"]["text/plain"] for c in outputs(msgs, "display_data"))
    assert "CPU (host memory)" in text and "gpukit's live arrays" in text
    assert "7.8 KiB in 1 array" in text, text
    reply, msgs = run(kc, "%memory --free")
    assert reply["status"] == "ok", reply
    text = "".join(c["data"]["text/plain"] for c in outputs(msgs, "display_data"))
    assert text.startswith("freed: ")
