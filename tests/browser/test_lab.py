"""The lessons in JupyterLab in a real browser: open, pick "Rust (GPU)", Run All Cells, read the page.

Lesson 2.0 is the one the course centres on: it must show an array repr (`array([...`) and
`%%time` lines, and its bar chart of the three ways to misuse a GPU (an inline SVG output of
`gpukit::plot`). Lesson 3.0, whose `imshow` cells put PNG images under the cells, covers the
inline image. Both must finish with every code cell executed and no error output. A control
notebook with a compile error proves the error check sees errors (stderr text alone is not one).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import time
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

KERNEL_NAME = "rust-gpu"
KERNEL_LABEL = "Rust (GPU)"
# The first cell builds gpukit into the kernel (the install warmed the cache); on the CPU
# backend lesson 2.0 takes about two minutes on two cores.
RUN_TIMEOUT = 1500

# Every cell as the page shows it, in order (windowing is off, so all cells are in the DOM).
CELLS_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return Array.from(panel.node.querySelectorAll('.jp-Notebook .jp-Cell')).map(c => ({
    kind: c.classList.contains('jp-CodeCell') ? 'code' : 'other',
    prompt: (c.querySelector('.jp-InputPrompt') || {innerText: ''}).innerText.trim(),
    source: (c.querySelector('.cm-content') || {innerText: ''}).innerText,
    outputs: Array.from(c.querySelectorAll('.jp-OutputArea-output')).map(o => ({
      mime: o.dataset.mimeType || '',
      text: o.innerText,
      visible: o.getBoundingClientRect().height > 0,
    })),
    images: Array.from(c.querySelectorAll('.jp-OutputArea-output img')).map(i => ({
      loaded: i.complete && i.naturalWidth > 0, width: i.naturalWidth, height: i.naturalHeight,
      shown: i.getBoundingClientRect().width > 0,
    })),
    svgs: c.querySelectorAll('.jp-OutputArea-output[data-mime-type="image/svg+xml"]').length,
  }));
}
"""

# The notebook model the page holds (nbformat JSON): output types, which the DOM does not tell
# apart (an error's traceback and a stream to stderr render alike).
MODEL_JS = "() => window.jupyterapp.shell.currentWidget.context.model.toJSON()"
STATUS_JS = "() => window.jupyterapp.shell.currentWidget.sessionContext.kernelDisplayStatus"

EXECUTED = re.compile(r"^\[\d+\]:$")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def serve_without_kernel(lab, name: str) -> None:
    """Drops the kernel choice from the served copy, so JupyterLab asks which kernel to start."""
    path = lab.root / name
    nb = json.loads(path.read_text())
    nb["metadata"].pop("kernelspec", None)
    nb["metadata"].pop("language_info", None)
    path.write_text(json.dumps(nb, indent=1))


def open_and_pick_kernel(page, lab, name: str) -> None:
    """Opens `name`, picks "Rust (GPU)" in the Select Kernel dialog and waits for an idle kernel."""
    page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}&reset")
    dialog = page.locator(".jp-Dialog")
    dialog.locator("select").wait_for(timeout=120_000)
    assert "Select Kernel" in dialog.locator(".jp-Dialog-header").inner_text()
    dialog.locator("select").select_option(label=KERNEL_LABEL)
    dialog.locator(".jp-mod-accept").click()
    dialog.wait_for(state="detached", timeout=30_000)
    page.locator(".jp-Toolbar-kernelName", has_text=KERNEL_LABEL).wait_for(timeout=30_000)
    wait_idle(page, 300)


def wait_idle(page, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        status = page.evaluate(STATUS_JS)
        if status == "idle":
            return
        time.sleep(1)
    pytest.fail(f"kernel not idle after {timeout} s (status {status!r})")


def run_all(page, timeout: float, on_progress=None) -> list[dict]:
    """Run > Run All Cells, then waits until no cell is queued or running and the kernel is idle.

    `on_progress(cells)` is called on every poll. Returns the cells as the page shows them.
    """
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    deadline = time.monotonic() + timeout
    while True:
        time.sleep(2)
        cells = page.evaluate(CELLS_JS)
        if on_progress:
            on_progress(cells)
        busy = [c for c in cells if c["kind"] == "code" and "*" in c["prompt"]]
        status = page.evaluate(STATUS_JS)
        if status == "dead":
            pytest.fail(f"the kernel died with {len(busy)} cells queued or running")
        if not busy and status == "idle":
            return cells
        if time.monotonic() > deadline:
            pytest.fail(f"{len(busy)} cells still queued or running after {timeout} s")


def errors_in_model(model: dict) -> list[str]:
    """One line per error output in the notebook model: cell index, ename, evalue."""
    found = []
    for i, cell in enumerate(model["cells"]):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                first = (out.get("evalue") or "").strip().splitlines()[:1]
                found.append(f"cell {i}: {out.get('ename')}: {first[0] if first else ''}")
    return found


def shot_whole_notebook(page, path: Path) -> None:
    """The whole JupyterLab page, grown tall enough to show every cell from the top at once.

    It is rendered at 3/4 scale (Chromium lays the page out at 1280 CSS pixels and draws it
    960 wide, text still sharp) and saved as a 64-colour PNG, so a long lesson stays a few
    hundred KB.
    """
    from PIL import Image

    scroller = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"
    to_top = f"() => {{ const s = document.querySelector('{scroller}'); s.scrollTop = 0; " \
        "return s.scrollHeight - s.clientHeight; }"
    hidden = page.evaluate(to_top)
    size = page.viewport_size
    height = min(size["height"] + hidden, 30_000)
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Emulation.setDeviceMetricsOverride",
                 {"width": size["width"], "height": height, "deviceScaleFactor": 0.75, "mobile": False})
        page.wait_for_timeout(1500)
        left = page.evaluate(to_top)
        assert left <= 2, f"the notebook still scrolls by {left} px in the tall page"
        raw = base64.b64decode(cdp.send("Page.captureScreenshot", {"format": "png"})["data"])
    finally:
        cdp.send("Emulation.clearDeviceMetricsOverride")
        cdp.detach()
    page.set_viewport_size(size)
    image = Image.open(io.BytesIO(raw)).convert("RGB")
    image.quantize(colors=64, dither=Image.Dither.NONE).save(path, optimize=True)


def scroll_to_last_executed(page) -> None:
    page.evaluate(
        """() => {
        const done = Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell'))
          .filter(c => /^\\[\\d+\\]:$/.test((c.querySelector('.jp-InputPrompt') || {innerText: ''}).innerText.trim()));
        if (done.length) done[done.length - 1].scrollIntoView({block: 'center'});
      }"""
    )
    page.wait_for_timeout(500)


def run_lesson(page, lab, shots: Path, name: str) -> tuple[list[dict], dict]:
    """Opens lesson `name` in the page, runs it all with screenshots; returns (cells, model)."""
    shipped = json.loads((NOTEBOOKS / name).read_text())
    assert shipped["metadata"]["kernelspec"]["name"] == KERNEL_NAME, (
        f"{name} does not name the {KERNEL_NAME} kernel, so JupyterLab would not start it unasked"
    )
    serve_without_kernel(lab, name)
    open_and_pick_kernel(page, lab, name)

    stem = Path(name).stem
    state = {"mid": False}

    def progress(cells):
        code = [c for c in cells if c["kind"] == "code"]
        done = sum(bool(EXECUTED.match(c["prompt"])) for c in code)
        if not state["mid"] and done >= len(code) // 2 and any("*" in c["prompt"] for c in code):
            scroll_to_last_executed(page)
            page.screenshot(path=str(shots / f"{stem}-mid-run.png"))
            state["mid"] = True

    cells = run_all(page, RUN_TIMEOUT, progress)
    model = page.evaluate(MODEL_JS)
    shot_whole_notebook(page, shots / f"{stem}-end.png")
    assert state["mid"], "the run finished before a mid-run screenshot could be taken"
    return cells, model


def check_ran_cleanly(cells: list[dict], model: dict) -> None:
    code = [c for c in cells if c["kind"] == "code"]
    assert code, "no code cells in the page"
    not_run = [i for i, c in enumerate(code) if not EXECUTED.match(c["prompt"])]
    assert not not_run, f"code cells not executed (0-based among code cells): {not_run}"
    errors = errors_in_model(model)
    assert not errors, "error outputs:\n" + "\n".join(errors)
    model_code = [c for c in model["cells"] if c["cell_type"] == "code"]
    assert len(model_code) == len(code), "the page and the notebook model disagree on the cells"


def check_time_lines(cells: list[dict]) -> None:
    timed = [c for c in cells if c["kind"] == "code" and c["source"].split("\n", 1)[0].strip() == "%%time"]
    assert timed, "no %%time cell in the page"
    for c in timed:
        texts = [o["text"] for o in c["outputs"] if o["visible"]]
        assert any(re.search(r"^Wall time: \d", t, re.M) for t in texts), (
            f"a %%time cell shows no `Wall time:` line: {c['source'][:80]!r} -> {texts!r}"
        )


@pytest.fixture(scope="module")
def unchanged_lessons():
    """The shipped lessons must be byte-for-byte the same after the browser ran them."""
    before = {p.name: digest(p) for p in NOTEBOOKS.glob("*.ipynb")}
    yield
    after = {p.name: digest(p) for p in NOTEBOOKS.glob("*.ipynb")}
    assert after == before, "a lesson in notebooks/ changed while the browser test ran"


def test_lesson_2_0_kernels(page, lab, shots, unchanged_lessons):
    cells, model = run_lesson(page, lab, shots, "2.0_Kernels.ipynb")
    check_ran_cleanly(cells, model)
    check_time_lines(cells)
    arrays = [o for c in cells for o in c["outputs"] if o["visible"] and "array([" in o["text"]]
    assert arrays, "no array repr (`array([`) in any output"
    assert any(re.search(r"array\(\[.*\], dtype=\w+, device=\w+", o["text"], re.S) for o in arrays), (
        f"the array outputs lack the dtype/device suffix: {arrays[0]['text'][:200]!r}"
    )
    charts = sum(c["svgs"] for c in cells)
    assert charts >= 1, "the bar chart (an SVG output) is not in the page"


def test_lesson_3_0_gaussian_blur(page, lab, shots, unchanged_lessons):
    cells, model = run_lesson(page, lab, shots, "3.0_Gaussian_blur.ipynb")
    check_ran_cleanly(cells, model)
    check_time_lines(cells)
    images = [i for c in cells for i in c["images"]]
    svgs = sum(c["svgs"] for c in cells)
    assert images or svgs, "no image or SVG output in the page"
    for i in images:
        assert i["loaded"] and i["shown"] and i["width"] > 1 and i["height"] > 1, f"an image output did not render: {i}"
    # imshow of the logo, once blurred, and five times blurred
    assert len(images) >= 3, f"expected the three imshow outputs, the page shows {len(images)} images"


def test_error_output_is_seen(page, lab):
    """Control: a compile error is reported, a line on stderr is not."""
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": 'let not_a_number: i32 = "seven";'},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": 'eprintln!("a line on stderr");'},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (lab.root / "browser_control.ipynb").write_text(json.dumps(nb))
    open_and_pick_kernel(page, lab, "browser_control.ipynb")
    cells = run_all(page, 600)
    model = page.evaluate(MODEL_JS)
    errors = errors_in_model(model)
    assert len(errors) == 1 and errors[0].startswith("cell 0:"), errors
    # The page shows the compiler's message under the first cell.
    assert any("mismatched types" in o["text"] for o in cells[0]["outputs"]), cells[0]["outputs"]
    stderr = model["cells"][1]["outputs"]
    if stderr:  # a kernel that stops after an error leaves the second cell unrun
        assert [o["output_type"] for o in stderr] == ["stream"], stderr
