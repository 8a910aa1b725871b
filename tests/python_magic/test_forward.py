"""Unit tests of the output forwarding: kernel message -> display call, with fake messages."""

from __future__ import annotations

import pytest

from rust_gpu.forward import Forwarder, RustError


class Sink:
    """Records every call a Forwarder makes."""

    def __init__(self):
        self.calls = []
        self.fwd = Forwarder(
            stdout=lambda t: self.calls.append(("stdout", t)),
            stderr=lambda t: self.calls.append(("stderr", t)),
            publish=lambda data, metadata, transient=None, update=False: self.calls.append(
                ("publish", data, metadata, transient, update)),
            clear=lambda wait=False: self.calls.append(("clear", wait)),
        )


def msg(kind, **content):
    return {"msg_type": kind, "header": {"msg_type": kind}, "parent_header": {"msg_id": "m"}, "content": content}


HTML = {"text/plain": "array([0., 1.])", "text/html": "<div class=\"gpukit-array\">...</div>"}
PNG = {"text/plain": "Image 2x2", "image/png": "iVBORw0KGgo="}
SVG = {"image/svg+xml": "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"}


def test_streams_go_to_their_stream():
    s = Sink()
    assert s.fwd.handle(msg("stream", name="stdout", text="hi\n")) is None
    assert s.fwd.handle(msg("stream", name="stderr", text="warn\n")) is None
    assert s.calls == [("stdout", "hi\n"), ("stderr", "warn\n")]


@pytest.mark.parametrize("bundle", [HTML, PNG, SVG])
def test_display_data_keeps_the_mime_bundle_and_display_id(bundle):
    s = Sink()
    s.fwd.handle(msg("display_data", data=bundle, metadata={"image/png": {"width": 2}},
                     transient={"display_id": "d1"}))
    assert s.calls == [("publish", bundle, {"image/png": {"width": 2}}, {"display_id": "d1"}, False)]


def test_execute_result_is_published_without_transient():
    s = Sink()
    s.fwd.handle(msg("execute_result", execution_count=3, data=HTML, metadata={}, transient=None))
    assert s.calls == [("publish", HTML, {}, None, False)]


def test_update_display_data_updates_by_display_id():
    s = Sink()
    s.fwd.handle(msg("update_display_data", data={"text/plain": "compiled 1 crate"}, metadata={},
                     transient={"display_id": "build-1"}))
    assert s.calls == [("publish", {"text/plain": "compiled 1 crate"}, {}, {"display_id": "build-1"}, True)]
    s.calls.clear()
    s.fwd.handle(msg("update_display_data", data={"text/plain": "x"}, metadata={}, transient={}))
    assert s.calls == []  # nothing to update without a display id


def test_clear_output_passes_wait():
    s = Sink()
    s.fwd.handle(msg("clear_output", wait=True))
    s.fwd.handle(msg("clear_output"))
    assert s.calls == [("clear", True), ("clear", False)]


def test_error_is_returned_not_shown():
    s = Sink()
    err = s.fwd.handle(msg("error", ename="CompilationError", evalue="mismatched types",
                           traceback=["error[E0308]: mismatched types", " --> cell line 1"]))
    assert isinstance(err, RustError) and s.calls == []
    assert (err.ename, err.evalue) == ("CompilationError", "mismatched types")
    assert str(err) == "CompilationError: mismatched types"
    # IPython shows _render_traceback_ instead of Python frames
    assert err._render_traceback_() == ["error[E0308]: mismatched types", " --> cell line 1"]
    s.fwd.show_error_text(err)
    assert s.calls == [("stderr", "error[E0308]: mismatched types\n --> cell line 1\n")]


def test_error_without_traceback_still_has_a_line():
    err = Sink().fwd.handle(msg("error", ename="Error", evalue="boom"))
    assert err.traceback == ["Error: boom"]


@pytest.mark.parametrize("kind", ["status", "execute_input", "comm_open", "shutdown_reply"])
def test_other_messages_show_nothing(kind):
    s = Sink()
    assert s.fwd.handle(msg(kind, execution_state="busy", code="1")) is None
    assert s.calls == []


def test_default_forwarder_calls_ipython_display(monkeypatch):
    """Without fakes, publish/clear go to IPython.display with the same arguments."""
    import IPython.display as disp

    seen = []
    monkeypatch.setattr(disp, "publish_display_data",
                        lambda data, metadata=None, **kw: seen.append(("publish", data, metadata, kw)))
    monkeypatch.setattr(disp, "clear_output", lambda wait=False: seen.append(("clear", wait)))
    f = Forwarder()
    f.handle(msg("display_data", data=PNG, metadata={}, transient={"display_id": "x"}))
    f.handle(msg("update_display_data", data=PNG, metadata={}, transient={"display_id": "x"}))
    f.handle(msg("execute_result", data=HTML, metadata={}))
    f.handle(msg("clear_output", wait=True))
    assert seen == [
        ("publish", PNG, {}, {"transient": {"display_id": "x"}}),
        ("publish", PNG, {}, {"transient": {"display_id": "x"}, "update": True}),
        ("publish", HTML, {}, {"transient": None}),
        ("clear", True),
    ]


def test_default_streams_write_to_current_sys_streams(monkeypatch, capsys):
    f = Forwarder()
    f.handle(msg("stream", name="stdout", text="out\n"))
    f.handle(msg("stream", name="stderr", text="err\n"))
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("out\n", "err\n")


def test_pager_payloads_of_the_reply_are_shown():
    s = Sink()
    doc = {"text/plain": "pub fn new() -> Vec<T>"}
    s.fwd.payloads({"status": "ok", "payload": [{"source": "page", "data": doc, "start": 0},
                                                {"source": "set_next_input", "text": "x"}]})
    s.fwd.payloads({"status": "ok"})
    assert s.calls == [("publish", doc, {}, None, False)]
