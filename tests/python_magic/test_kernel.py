"""rust_gpu inside a real python3 kernel, driven as Jupyter drives it: output streams while the
Rust cell runs, the stop button (SIGINT to the Python kernel) interrupts the Rust cell, and the
evcxr_gpu process ends with the Python kernel."""

from __future__ import annotations

import os
import time

import pytest
from jupyter_client.manager import KernelManager


@pytest.fixture(scope="module")
def python_kernel(kernel_env, kernel_binary):
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=kernel_env)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=120)
    yield km, kc
    kc.stop_channels()
    if km.is_alive():
        km.shutdown_kernel(now=True)


def run(kc, code, timeout=900):
    """Executes ``code``; returns (reply content, [(msg_type, content, arrival time)])."""
    msgs = []
    reply = kc.execute_interactive(code, timeout=timeout, allow_stdin=False,
                                   output_hook=lambda m: msgs.append((m["msg_type"], m["content"], time.monotonic())))
    return reply["content"], msgs


def stdout(msgs):
    return "".join(c["text"] for t, c, _ in msgs if t == "stream" and c["name"] == "stdout")


def test_state_streaming_interrupt_and_shutdown(python_kernel):
    km, kc = python_kernel
    reply, _ = run(kc, "%load_ext rust_gpu")
    assert reply["status"] == "ok"
    reply, msgs = run(kc, "%%rust\nfn twice(v: i64) -> i64 { v * 2 }\nlet n = twice(21);")
    assert reply["status"] == "ok", msgs

    # output arrives while the cell runs, not at its end
    reply, msgs = run(kc, "%%rust\nprintln!(\"first {}\", n);\n"
                          "std::thread::sleep(std::time::Duration::from_millis(2500));\nprintln!(\"second\");")
    assert reply["status"] == "ok", msgs
    times = {c["text"].strip(): t for kind, c, t in msgs if kind == "stream"}
    assert {"first 42", "second"} <= set(times)
    assert times["second"] - times["first 42"] > 1.5

    # interrupt: the Python kernel gets SIGINT (what the stop button sends) and passes it on
    msg_id = kc.execute("%%rust\nprintln!(\"sleeping\");\nstd::thread::sleep(std::time::Duration::from_secs(300));")
    seen = []
    deadline = time.monotonic() + 300
    while "sleeping" not in "".join(seen):
        assert time.monotonic() < deadline, "the Rust cell never started"
        m = kc.get_iopub_msg(timeout=300)
        if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
            seen.append(m["content"]["text"])
    t0 = time.monotonic()
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=120)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=120)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - t0 < 60

    # the Rust kernel lives on: definitions stay (the kernel restarts its process on interrupt,
    # so variables go; it says so)
    reply, msgs = run(kc, "%rust twice(50)")
    assert reply["status"] == "ok", msgs
    assert any(c.get("data", {}).get("text/plain") == "100" for t, c, _ in msgs if t == "display_data"), msgs

    # the evcxr_gpu process ends with the Python kernel (atexit)
    reply, msgs = run(kc, "from rust_gpu import magics\nprint(magics.session().km.provisioner.pid)")
    pid = int(stdout(msgs).strip())
    os.kill(pid, 0)  # running now
    km.shutdown_kernel(now=False)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.2)
    assert not alive(pid), f"evcxr_gpu {pid} outlived the Python kernel"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False
