"""Unit tests of RustSession's cell loop with a fake kernel: ordering, errors, death, interrupts."""

from __future__ import annotations

import queue

import pytest

from rust_gpu.forward import Forwarder, RustError
from rust_gpu.session import KernelDied, RustSession


def iopub(kind, parent="m1", **content):
    return {"msg_type": kind, "parent_header": {"msg_id": parent}, "content": content}


def busy(parent="m1"):
    return iopub("status", parent, execution_state="busy")


def idle(parent="m1"):
    return iopub("status", parent, execution_state="idle")


def reply(status="ok", parent="m1", **extra):
    return {"msg_type": "execute_reply", "parent_header": {"msg_id": parent}, "content": {"status": status, **extra}}


class FakeClient:
    """Hands out scripted messages; an item that is an exception class is raised instead."""

    def __init__(self, iopub_msgs, shell_msgs=()):
        self.iopub = list(iopub_msgs)
        self.shell = list(shell_msgs)
        self.executed = []
        self.stopped = False

    def execute(self, code, **kw):
        self.executed.append((code, kw))
        return "m1"

    def _next(self, items):
        if not items:
            raise queue.Empty
        item = items.pop(0)
        if isinstance(item, type) and issubclass(item, BaseException):
            raise item
        return item

    def get_iopub_msg(self, timeout=None):
        return self._next(self.iopub)

    def get_shell_msg(self, timeout=None):
        return self._next(self.shell)

    def stop_channels(self):
        self.stopped = True


class FakeManager:
    def __init__(self, alive=True):
        self.alive = alive
        self.interrupts = 0
        self.shutdowns = []

    def is_alive(self):
        return self.alive

    def interrupt_kernel(self):
        self.interrupts += 1

    def shutdown_kernel(self, now=False):
        self.shutdowns.append(now)
        self.alive = False

    def cleanup_resources(self):
        pass


class Rec:
    def __init__(self):
        self.calls = []
        self.fwd = Forwarder(stdout=lambda t: self.calls.append(("stdout", t)),
                             stderr=lambda t: self.calls.append(("stderr", t)),
                             publish=lambda d, m, transient=None, update=False: self.calls.append(("publish", d)),
                             clear=lambda wait=False: self.calls.append(("clear", wait)))


def session(iopub_msgs, shell_msgs=None, alive=True, grace=0.5):
    s = RustSession(find=lambda: pytest.fail("the fake kernel is already running"), poll_interval=0.01,
                    interrupt_grace=grace, reply_timeout=0.2)
    s.km, s.kc = FakeManager(alive), FakeClient(iopub_msgs, [reply()] if shell_msgs is None else shell_msgs)
    return s


def test_outputs_in_order_and_other_cells_ignored():
    s = session([busy(), iopub("stream", "old", name="stdout", text="stale\n"),
                 iopub("stream", name="stdout", text="a\n"),
                 iopub("execute_result", data={"text/html": "<b>x</b>"}, metadata={}),
                 idle("old"), iopub("stream", name="stderr", text="b\n"), idle()])
    r = Rec()
    s.execute("let x = 1;", r.fwd)
    assert r.calls == [("stdout", "a\n"), ("publish", {"text/html": "<b>x</b>"}), ("stderr", "b\n")]
    code, kw = s.kc.executed[0]
    assert code == "let x = 1;" and kw["allow_stdin"] is False and kw["stop_on_error"] is False


def test_error_is_raised_after_the_output():
    s = session([busy(), iopub("stream", name="stdout", text="before\n"),
                 iopub("error", ename="CompilationError", evalue="mismatched types", traceback=["E0308"]),
                 idle()], [reply("error", ename="CompilationError", evalue="mismatched types")])
    r = Rec()
    with pytest.raises(RustError) as e:
        s.execute("let y: i32 = \"s\";", r.fwd)
    assert r.calls == [("stdout", "before\n")]
    assert (e.value.ename, e.value.traceback) == ("CompilationError", ["E0308"])
    assert s.running  # an error keeps the session


def test_several_errors_become_one_with_every_traceback():
    s = session([iopub("error", ename="A", evalue="first", traceback=["a1"]),
                 iopub("error", ename="B", evalue="second", traceback=["b1", "b2"]), idle()])
    with pytest.raises(RustError) as e:
        s.execute("x", Rec().fwd)
    assert (e.value.ename, e.value.evalue, e.value.traceback) == ("A", "first", ["a1", "b1", "b2"])


def test_error_reply_without_error_message_still_raises():
    s = session([busy(), idle()], [reply("other", parent="old"), reply("error", ename="Panic", evalue="boom")])
    with pytest.raises(RustError, match="Panic: boom"):
        s.execute("x", Rec().fwd)


def test_missing_reply_is_not_an_error():
    s = session([idle()], shell_msgs=())
    s.execute("x", Rec().fwd)


def test_dead_kernel_raises_and_resets():
    s = session([busy(), iopub("stream", name="stdout", text="partial\n")])
    s.km.is_alive = lambda: bool(s.kc.iopub)  # dies once it has sent everything
    r = Rec()
    with pytest.raises(KernelDied, match="next Rust cell starts a new kernel"):
        s.execute("std::process::abort()", r.fwd)
    assert r.calls == [("stdout", "partial\n")]
    assert s.km is None and not s.running


def test_ctrl_c_interrupts_the_kernel_and_shows_what_it_says():
    kernel_says = iopub("error", ename="KeyboardInterrupt", evalue="the cell was interrupted",
                        traceback=["KeyboardInterrupt: the cell was interrupted"])
    s = session([busy(), KeyboardInterrupt, iopub("stream", name="stdout", text="tick\n"), kernel_says, idle()])
    r = Rec()
    with pytest.raises(KeyboardInterrupt):
        s.execute("loop {}", r.fwd)
    assert s.km.interrupts == 1
    assert r.calls == [("stdout", "tick\n"), ("stderr", "KeyboardInterrupt: the cell was interrupted\n")]
    assert s.running  # the kernel stopped the cell: keep it


def test_kernel_that_ignores_the_interrupt_is_shut_down():
    s = session([busy(), KeyboardInterrupt], grace=0.2)
    km = s.km
    r = Rec()
    with pytest.raises(KeyboardInterrupt):
        s.execute("loop {}", r.fwd)
    assert km.interrupts == 1 and km.shutdowns == [True]
    assert s.km is None
    assert "did not stop; it was shut down" in r.calls[-1][1]


def test_second_ctrl_c_shuts_the_kernel_down_at_once():
    s = session([busy(), KeyboardInterrupt, KeyboardInterrupt], grace=60)
    km = s.km
    with pytest.raises(KeyboardInterrupt):
        s.execute("loop {}", Rec().fwd)
    assert km.shutdowns == [True] and s.km is None


def test_shutdown_is_polite_and_idempotent():
    s = session([])
    km, kc = s.km, s.kc
    s.shutdown()
    s.shutdown()
    assert km.shutdowns == [False] and kc.stopped and not s.running


def test_kernel_not_found_is_raised_at_first_use():
    from rust_gpu.locate import KernelNotFound

    def nothing():
        raise KernelNotFound("rust_gpu: no evcxr_gpu kernel found")

    s = RustSession(find=nothing)
    with pytest.raises(KernelNotFound, match="no evcxr_gpu kernel found"):
        s.execute("1", Rec().fwd)
