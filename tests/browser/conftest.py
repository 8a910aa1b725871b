"""Fixtures: JupyterLab started as `make lab` starts it, and Debian's Chromium driven by Playwright.

JupyterLab serves a temporary copy of `notebooks/` (so nothing it saves reaches the repository)
on a free loopback port with a random token, with fresh user settings (no news pop-up, no
autosave, every cell kept in the page) and fresh workspaces. It is shut down at the end of the
session, through its REST API and then by signal, whatever the tests did.

Environment:
  LAB_VENV   the virtual environment holding JupyterLab and the "Rust (GPU)" kernelspec
             (default: .venv of this checkout, as `make lab` uses)
  CHROMIUM   the Chromium binary (default: `chromium` on PATH, i.e. Debian's /usr/bin/chromium)
  BROWSER_SHOTS  where screenshots go (default: docs/browser)
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

# Flags that let Chromium run headless as root on a machine whose network is closed
# (without the background-networking ones it keeps trying to reach Google's hosts).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# JupyterLab user settings for the test: no news/update pop-up over the notebook, no autosave
# (the copy is thrown away anyway), no windowing so every cell and output is in the DOM, and no
# blank space past the last cell (the end-of-run screenshot shows the notebook's full height).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
        "scrollPastEnd": False,
    },
}


@dataclass
class Lab:
    """A running JupyterLab: its base URL, token and the folder it serves."""

    url: str
    token: str
    root: Path
    log: Path

    def api(self, method: str, path: str, body: dict | None = None, timeout: float = 10):
        """Calls the server's REST API; returns the decoded JSON (or None for an empty reply)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server's log, for failure messages."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_chromium() -> str:
    """The Chromium binary to drive; a clear failure when there is none."""
    named = os.environ.get("CHROMIUM")
    path = named or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(
            f"no Chromium binary ({'CHROMIUM=' + named if named else 'chromium is not on PATH'}): "
            "install Debian's package (`apt-get install chromium`; .ci/run does) or set CHROMIUM"
        )
    return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """JupyterLab on a copy of notebooks/, as `make lab` starts it; shut down at the end."""
    venv = Path(os.environ.get("LAB_VENV", ROOT / ".venv"))
    jupyter = venv / "bin" / "jupyter"
    if not jupyter.exists():
        pytest.fail(f"{jupyter} not found: run `make install` first (or set LAB_VENV)")
    spec = venv / "share" / "jupyter" / "kernels" / "rust-gpu" / "kernel.json"
    if not spec.exists():
        pytest.fail(f"the \"Rust (GPU)\" kernelspec is not installed at {spec}: run `make install`")

    base = tmp_path_factory.mktemp("lab")
    served = base / "notebooks"
    shutil.copytree(NOTEBOOKS, served, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = base / "user-settings"
    for rel, values in LAB_SETTINGS.items():
        f = settings / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(values))
    for d in ("workspaces", "config", "runtime"):
        (base / d).mkdir()

    token = secrets.token_hex(24)
    port = free_port()
    cmd = [str(jupyter), "lab"]
    if os.geteuid() == 0:  # as the Makefile's LAB_FLAGS: JupyterLab refuses root unless told
        cmd.append("--allow-root")
    cmd += [
        f"--notebook-dir={served}",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        # window.jupyterapp, so the test can read the notebook model the page holds
        "--LabApp.expose_app_in_browser=True",
    ]
    # No user or system Jupyter config may change what the test sees; the kernelspec is found
    # through the venv's data path, as for `make lab`. LD_LIBRARY_PATH (NVRTC) comes from make.
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
    }
    log = base / "lab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )
    server = Lab(url=f"http://127.0.0.1:{port}", token=token, root=served, log=log)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with status {proc.returncode}:\n{server.log_tail()}")
            try:
                server.api("GET", "/api/status", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on port {port} in 120 s:\n{server.log_tail()}")
                time.sleep(0.5)
        yield server
    finally:
        stop_lab(server, proc)


def stop_lab(server: Lab, proc: subprocess.Popen) -> None:
    """Shuts the server and its kernels down: kernels, then the server by its API, then signals."""
    if proc.poll() is None:
        try:
            for k in server.api("GET", "/api/kernels", timeout=5) or []:
                server.api("DELETE", f"/api/kernels/{k['id']}", timeout=30)
            server.api("POST", "/api/shutdown", timeout=10)
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            pass
        for sig, wait in ((None, 20), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            if sig is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
    # Whatever is left in the server's process group (a kernel that outlived it).
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, launched by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, lab):
    """A fresh browser context and page, 1280 x 900; its kernels are shut down afterwards."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()
        try:
            for s in lab.api("GET", "/api/sessions") or []:
                lab.api("DELETE", f"/api/sessions/{s['id']}", timeout=30)
        except (urllib.error.URLError, ConnectionError, OSError):
            pass  # the server is gone; the lab fixture reports and cleans up


@pytest.fixture(scope="session")
def shots():
    """The screenshot folder."""
    d = Path(os.environ.get("BROWSER_SHOTS", ROOT / "docs" / "browser"))
    d.mkdir(parents=True, exist_ok=True)
    return d
