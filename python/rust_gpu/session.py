"""One evcxr_gpu kernel per Python session, driven through jupyter_client.

The kernel is started on first use and kept: Rust variables, functions and ``:dep``s live on from
cell to cell. Output is forwarded while the cell runs; Ctrl-C (``KeyboardInterrupt`` in the Python
kernel, e.g. the notebook's stop button) is passed on as an interrupt request.
"""

from __future__ import annotations

import os
import queue
import time
from typing import Callable, Optional

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

from .forward import Forwarder, RustError
from .locate import KERNEL_NAME, PACKAGE_DIR, KernelCommand, find_kernel


class KernelDied(RustError):
    """The kernel process ended while a cell ran (its state is gone; the next cell starts a new one)."""


class _OneSpec(KernelSpecManager):
    """A kernelspec manager that knows a single spec, the one :func:`find_kernel` chose."""

    def __init__(self, spec: KernelSpec, **kwargs):
        super().__init__(**kwargs)
        self._spec = spec

    def get_kernel_spec(self, kernel_name, *args, **kwargs):
        return self._spec


class RustSession:
    """A lazily started evcxr_gpu kernel and the loop that runs cells on it."""

    def __init__(
        self,
        find: Callable[[], KernelCommand] = find_kernel,
        startup_timeout: float = 120.0,
        poll_interval: float = 0.2,
        interrupt_grace: float = 30.0,
        reply_timeout: float = 10.0,
    ):
        self.find = find
        self.startup_timeout = startup_timeout
        self.poll_interval = poll_interval
        self.interrupt_grace = interrupt_grace
        self.reply_timeout = reply_timeout
        self.km: Optional[KernelManager] = None
        self.kc = None
        self.command: Optional[KernelCommand] = None

    @property
    def running(self) -> bool:
        """Whether a kernel is started and alive."""
        return self.km is not None and self.km.is_alive()

    def start(self) -> None:
        """Starts the kernel unless one is running (raises ``KernelNotFound`` or :class:`RustError`)."""
        if self.running:
            return
        self.shutdown(now=True)
        cmd = self.find()
        spec = KernelSpec(argv=list(cmd.argv), display_name="Rust (GPU)", language="rust",
                          interrupt_mode=cmd.interrupt_mode, env={}, resource_dir=str(PACKAGE_DIR))
        km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=_OneSpec(spec))
        try:
            km.start_kernel(env={**os.environ, **cmd.env})
        except Exception as e:
            raise RustError("KernelStartError", f"cannot start the evcxr_gpu kernel from {cmd.source}: {e}") from None
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=self.startup_timeout)
        except RuntimeError as e:
            kc.stop_channels()
            if km.is_alive():
                km.shutdown_kernel(now=True)
            raise RustError("KernelStartError",
                            f"the evcxr_gpu kernel from {cmd.source} did not become ready: {e}") from None
        self.km, self.kc, self.command = km, kc, cmd

    def execute(self, code: str, forwarder: Optional[Forwarder] = None) -> None:
        """Runs ``code`` in the kernel, forwarding its output as it arrives.

        Raises :class:`RustError` when the cell fails (after its output was shown),
        :class:`KernelDied` when the kernel ended, and ``KeyboardInterrupt`` after passing an
        interrupt on.
        """
        forwarder = forwarder or Forwarder()
        self.start()
        msg_id = self.kc.execute(code, silent=False, store_history=True, allow_stdin=False,
                                 stop_on_error=False)
        try:
            _, errors = self._drain(msg_id, forwarder, deadline=None)
        except KeyboardInterrupt:
            self._interrupt(msg_id, forwarder)
            raise
        reply = self._reply(msg_id)
        forwarder.payloads(reply)
        if not errors and reply.get("status") == "error":
            errors.append(RustError(str(reply.get("ename", "Error")), str(reply.get("evalue", "")),
                                    reply.get("traceback")))
        if errors:
            first = errors[0]
            if len(errors) > 1:  # one raised error that shows everything the kernel reported
                lines = [line for e in errors for line in e.traceback]
                raise RustError(first.ename, first.evalue, lines)
            raise first

    def _drain(self, msg_id: str, forwarder: Forwarder, deadline: Optional[float], errors_as_text=False):
        """Forwards the cell's IOPub messages until the kernel is idle (``(True, errors)``) or the
        deadline passes (``(False, errors)``)."""
        errors = []
        while True:
            if deadline is not None and time.monotonic() > deadline:
                return False, errors
            try:
                msg = self.kc.get_iopub_msg(timeout=self.poll_interval)
            except queue.Empty:
                if not self.km.is_alive():
                    self._lost()
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue  # output of an earlier, interrupted cell
            if msg["msg_type"] == "status":
                if msg["content"].get("execution_state") == "idle":
                    return True, errors
                continue
            err = forwarder.handle(msg)
            if err is not None:
                if errors_as_text:
                    forwarder.show_error_text(err)
                else:
                    errors.append(err)

    def _reply(self, msg_id: str) -> dict:
        """The execute_reply content of ``msg_id`` (``{}`` if it does not come in time)."""
        deadline = time.monotonic() + self.reply_timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_shell_msg(timeout=self.poll_interval)
            except queue.Empty:
                if not self.km.is_alive():
                    return {}
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg.get("content") or {}
        return {}

    def _interrupt(self, msg_id: str, forwarder: Forwarder) -> None:
        """Passes an interrupt on and shows what the cell printed until it stopped; a kernel that
        does not stop within ``interrupt_grace`` seconds (or a second Ctrl-C) is shut down."""
        try:
            self.km.interrupt_kernel()
        except Exception as e:  # a dead kernel or a closed socket: nothing left to interrupt
            forwarder.stderr(f"rust_gpu: could not interrupt the Rust kernel: {e}\n")
        try:
            finished, _ = self._drain(msg_id, forwarder, time.monotonic() + self.interrupt_grace,
                                      errors_as_text=True)
        except KeyboardInterrupt:
            finished = False
        except KernelDied:
            return
        if not finished:
            forwarder.stderr("rust_gpu: the Rust kernel did not stop; it was shut down. The next "
                             "Rust cell starts a new one (variables from earlier cells are lost).\n")
            self.shutdown(now=True)

    def _lost(self) -> None:
        source = self.command.source if self.command else "evcxr_gpu"
        self.shutdown(now=True)
        raise KernelDied("KernelDied", f"the Rust kernel ({source}) exited while the cell ran; its "
                         "variables are lost and the next Rust cell starts a new kernel")

    def shutdown(self, now: bool = False) -> None:
        """Stops the kernel (politely unless ``now``); a later cell starts a new one."""
        km, kc = self.km, self.kc
        self.km = self.kc = None
        if kc is not None:
            try:
                kc.stop_channels()
            except Exception:
                pass  # channels already closed
        if km is not None:
            try:
                if km.is_alive():
                    km.shutdown_kernel(now=now)
                else:
                    km.cleanup_resources()
            except Exception:
                pass  # the process is gone already; nothing else to release
