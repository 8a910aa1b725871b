"""Variables bound from items that gpukit's attribute macros generate get their real types.

evcxr's analysis does not expand procedural macros, so it types `hypotenuse(&a, &b)?` from the
scalar signature written in the source (or not at all); the kernel then asks the compiler (see
crates/evcxr_gpu/src/annotate.rs). These tests need a session with gpukit, like a notebook's
(the compile cache `make install` warmed makes its start quick); its cells are few and batched.
"""

from __future__ import annotations

import pytest

from conftest import gpukit_env, run, start

# A cold compile cache builds gpukit and its dependencies first (minutes on two cores).
FIRST_CELL_TIMEOUT = 1800

DEFINITIONS = """
#[vectorize]
fn hypotenuse(a: f32, b: f32) -> f32 {
    (a * a + b * b).sqrt()
}

#[device]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[kernel]
fn bump(x: &mut [f32]) {
    let i = grid(1);
    if i < x.len() {
        x[i] = add(x[i], 1.0);
    }
}

fn plain(x: f32) -> f32 {
    x * 2.0
}

let a = Array::<f32>::full(5, 3.0)?;
let b = Array::<f32>::full(5, 4.0)?;
"""

# Siblings of the single-`let` cell, in one cell: a `#[device]` function's result, a `#[kernel]`'s
# source and the kernel itself, a chain through a `#[vectorize]` function, its `Result` kept
# whole, a destructured pair, a type the compiler names outside the cell's scope (ndarray's, left
# to the analysis), and a plain function as the control.
SIBLINGS = """
let r = add(1.0, 2.0);
let src = bump.source();
let kernel = bump;
let s = hypotenuse(&a, 2.0f32)?.sum()?;
let res = hypotenuse(&a, &b);
let (pair_array, pair_n) = (hypotenuse(&b, &a)?, 3usize);
let host = ndarray::Array1::<f32>::zeros(2);
let p = plain(2.0);
"""

CHECK = """
c.to_vec()? == vec![5.0f32; 5]
    && r == 3.0
    && src.contains("bump")
    && kernel.source() == src
    && (s - 5.0 * 13f32.sqrt()).abs() < 1e-3
    && res.is_ok()
    && pair_array.to_vec()? == vec![5.0f32; 5]
    && pair_n == 3
    && host.len() == 2
    && p == 4.0
"""


@pytest.fixture(scope="module")
def gpukit_kernel():
    km, kc = start(gpukit_env())
    reply, msgs = run(kc, DEFINITIONS, timeout=FIRST_CELL_TIMEOUT)
    assert reply["status"] == "ok", (reply, msgs)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def variables(kc):
    _, msgs = run(kc, ":vars")
    shown = [c for t, c, _ in msgs if t in ("display_data", "execute_result")]
    return "".join(c["data"].get("text/plain", "") for c in shown)


def test_variables_from_macro_generated_items(gpukit_kernel):
    _, kc = gpukit_kernel
    # The cell learners write first; it failed with "the `!` type is experimental".
    reply, msgs = run(kc, "let c = hypotenuse(&a, &b)?;")
    assert reply["status"] == "ok", (reply, msgs)
    reply, msgs = run(kc, SIBLINGS)
    assert reply["status"] == "ok", (reply, msgs)
    reply, msgs = run(kc, CHECK)
    assert reply["status"] == "ok", (reply, msgs)
    assert [c["data"]["text/plain"] for t, c, _ in msgs if t == "execute_result"] == ["true"]
    types = variables(kc)
    for line in [
        "c: Array<f32>",
        "r: f32",
        "src: String",
        "kernel: bump",
        "s: f32",
        "res: Result<Array<f32>, Error>",
        "pair_array: Array<f32>",
        "pair_n: usize",
        "p: f32",
    ]:
        assert line in types.splitlines(), (line, types)
    assert any(l.startswith("host: ") and "ArrayBase" in l for l in types.splitlines()), types


def test_ptx_of_a_kernel_binds(gpukit_kernel):
    """`let ptx = k.ptx()?;` types as a `String`. On a machine without a GPU the PTX comes from
    libnvrtc alone; without libnvrtc the call fails when it runs (after typing worked)."""
    _, kc = gpukit_kernel
    reply, msgs = run(kc, "let ptx = bump.ptx()?;")
    if reply["status"] == "ok":
        reply, msgs = run(kc, 'ptx.contains(".entry")')
        assert [c["data"]["text/plain"] for t, c, _ in msgs if t == "execute_result"] == ["true"]
        assert "ptx: String" in variables(kc).splitlines()
    else:
        assert reply["ename"] == "Error", reply
        assert "nvrtc" in reply["evalue"].lower(), reply


def test_a_real_error_beside_a_macro_binding_is_reported_as_written(gpukit_kernel):
    _, kc = gpukit_kernel
    reply, _ = run(kc, 'let d = hypotenuse(&a, &b)?;\nlet wrong: i32 = "text";')
    assert reply["status"] == "error" and reply["ename"] == "CompilationError"
    tb = "\n".join(reply["traceback"])
    assert "mismatched types" in tb and "cell line 2" in tb
    reply, _ = run(kc, "let e = hypotenuse(&a, &b)?.no_such_method();")
    assert reply["status"] == "error" and "no_such_method" in reply["evalue"]
