"""`%%graph` and `%%timeit --graph` through the real kernel, in a session with gpukit (like a
notebook's): the cell is captured into a gpukit::Graph, replayed, kept as a variable when named;
what cannot be captured fails the cell with gpukit's message. Runs on the CPU backend where there
is no GPU (a graph behaves the same there) and on the GPU where there is one.
"""

from __future__ import annotations

import re

import pytest

from conftest import gpukit_env, run, start

# A cold compile cache builds gpukit and its dependencies first (minutes on two cores).
FIRST_CELL_TIMEOUT = 1800

DEFINITIONS = """
#[kernel]
fn affine(x: &mut [f32], s: f32, b: f32) {
    let i = grid(1);
    if i < x.len() {
        x[i] = x[i] * s + b;
    }
}

let mut ga = Array::<f32>::ones(8)?;
"""


@pytest.fixture(scope="module")
def gpukit_kernel():
    km, kc = start(gpukit_env())
    reply, msgs = run(kc, DEFINITIONS, timeout=FIRST_CELL_TIMEOUT)
    assert reply["status"] == "ok", (reply, msgs)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def stdout(msgs):
    return "".join(c["text"] for t, c, _ in msgs if t == "stream" and c["name"] == "stdout")


def result(kc, expr):
    reply, msgs = run(kc, expr)
    assert reply["status"] == "ok", (reply, msgs)
    return [c["data"]["text/plain"] for t, c, _ in msgs if t == "execute_result"]


def test_graph_cell_is_captured_and_launched_once(gpukit_kernel):
    _, kc = gpukit_kernel
    run(kc, "ga.fill(1.0)?;")
    reply, msgs = run(kc, "%%graph\nlaunch!(affine[1, 32](&mut ga, 2.0f32, 1.0f32))?;\nga.add_in_place(1.0)?;")
    assert reply["status"] == "ok", (reply, msgs)
    assert re.search(r"%%graph: \d+ step\(s\) captured on (cpu|cuda:\d+), launched once", stdout(msgs)), msgs
    assert result(kc, "ga.to_vec()? == vec![4.0f32; 8]") == ["true"]


def test_named_graph_is_kept_for_later_cells(gpukit_kernel):
    _, kc = gpukit_kernel
    run(kc, "ga.fill(0.0)?;")
    # the trailing expression (a launch without `;`) is the capture's last step
    reply, msgs = run(kc, "%%graph step -n 2\nlaunch!(affine[1, 32](&mut ga, 1.0f32, 3.0f32))")
    assert reply["status"] == "ok", (reply, msgs)
    assert re.search(r"%%graph step: \d+ step\(s\) captured on \S+, launched 2 times", stdout(msgs)), msgs
    reply, msgs = run(kc, "step.launch()?;")
    assert reply["status"] == "ok", (reply, msgs)
    assert result(kc, "ga.to_vec()? == vec![9.0f32; 8]") == ["true"]


def test_timeit_graph_times_replays(gpukit_kernel):
    _, kc = gpukit_kernel
    reply, msgs = run(kc, "%%timeit --graph -n 3 -r 2\nga.add_in_place(1.0)?;")
    assert reply["status"] == "ok", (reply, msgs)
    out = stdout(msgs)
    assert "%%timeit --graph: the code was captured once" in out, out
    assert "per loop (mean ± std. dev. of 2 runs, 3 loops each)" in out, out


def test_what_cannot_be_captured_fails_the_cell_clearly(gpukit_kernel):
    _, kc = gpukit_kernel
    reply, _ = run(kc, "%%graph\nga.add_in_place(1.0)?;\nlet host = ga.to_vec()?;")
    assert reply["status"] == "error", reply
    assert "cannot run inside a graph capture" in reply["evalue"] + "\n".join(reply["traceback"]), reply
    # the session goes on: nothing of the failed capture ran
    run(kc, "ga.fill(5.0)?;")
    assert result(kc, "ga.to_vec()? == vec![5.0f32; 8]") == ["true"]
