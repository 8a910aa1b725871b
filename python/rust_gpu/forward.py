"""Forwarding the Rust kernel's output messages to the Python notebook.

Each IOPub message of the Rust cell maps to one call on the Python side:

=====================  ==============================================================
``stream``             written to ``sys.stdout`` / ``sys.stderr`` (as it arrives)
``display_data``       ``publish_display_data(data, metadata, transient=...)``
``execute_result``     ``publish_display_data(data, metadata)`` (shown like a display)
``update_display_data``  ``publish_display_data(..., transient=..., update=True)``
``clear_output``       ``clear_output(wait=...)``
``error``              returned to the caller, which raises it (see :class:`RustError`)
=====================  ==============================================================

Other messages (``status``, ``execute_input``, comms) carry nothing to show.
The mime bundles (``text/html``, ``image/png``, ``image/svg+xml``, ...) pass unchanged.
"""

from __future__ import annotations

import sys
from typing import Callable, Optional


class RustError(Exception):
    """A Rust cell failed: compile error, panic, magic error, or a lost kernel.

    ``ename``, ``evalue`` and ``traceback`` are the kernel's (the traceback is the list of lines
    the notebook shows, ANSI colours included).
    """

    def __init__(self, ename: str, evalue: str, traceback: Optional[list] = None):
        super().__init__(f"{ename}: {evalue}")
        self.ename = ename
        self.evalue = evalue
        self.traceback = list(traceback or [f"{ename}: {evalue}"])

    def _render_traceback_(self):
        """What IPython shows for this exception: the kernel's traceback, no Python frames."""
        return list(self.traceback)


def _write(stream_name: str) -> Callable[[str], None]:
    def write(text: str) -> None:
        stream = getattr(sys, stream_name)  # looked up per call: IPython swaps the streams
        stream.write(text)
        stream.flush()

    return write


def _publish(data, metadata=None, transient=None, update=False):
    from IPython.display import publish_display_data

    kwargs = {"transient": transient}
    if update:
        kwargs["update"] = True
    publish_display_data(data, metadata, **kwargs)


def _clear(wait=False):
    from IPython.display import clear_output

    clear_output(wait=wait)


class Forwarder:
    """Maps kernel messages to output calls; every call is injectable (tests pass fakes)."""

    def __init__(
        self,
        stdout: Callable[[str], None] = _write("stdout"),
        stderr: Callable[[str], None] = _write("stderr"),
        publish: Callable[..., None] = _publish,
        clear: Callable[..., None] = _clear,
    ):
        self.stdout = stdout
        self.stderr = stderr
        self.publish = publish
        self.clear = clear

    def handle(self, msg: dict) -> Optional[RustError]:
        """Shows one IOPub message; returns the :class:`RustError` of an ``error`` message."""
        kind = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
        content = msg.get("content") or {}
        if kind == "stream":
            (self.stderr if content.get("name") == "stderr" else self.stdout)(content.get("text", ""))
        elif kind == "display_data":
            self.publish(content.get("data") or {}, content.get("metadata") or {},
                         transient=content.get("transient") or None)
        elif kind == "execute_result":
            self.publish(content.get("data") or {}, content.get("metadata") or {}, transient=None)
        elif kind == "update_display_data":
            transient = content.get("transient") or {}
            if transient.get("display_id"):
                self.publish(content.get("data") or {}, content.get("metadata") or {},
                             transient=transient, update=True)
        elif kind == "clear_output":
            self.clear(wait=bool(content.get("wait", False)))
        elif kind == "error":
            return RustError(str(content.get("ename", "Error")), str(content.get("evalue", "")),
                             content.get("traceback"))
        return None

    def payloads(self, reply: dict) -> None:
        """Shows the pager payloads of an execute reply (``%doc``) as the cell's output."""
        for p in reply.get("payload") or []:
            if p.get("source") == "page" and p.get("data"):
                self.publish(p["data"], {}, transient=None)

    def show_error_text(self, err: RustError) -> None:
        """Writes an error's traceback lines to stderr (when it is shown, not raised)."""
        self.stderr("\n".join(err.traceback) + "\n")
