"""tests/notebooks/python_rust_magic.ipynb, a Python notebook with %%rust cells, run by nbclient.

Checks what the notebook shows: state kept across cells, a gpukit Array's repr (HTML and text),
an inline PNG, %gpu, a kernel magic inside %%rust, the Rust error of the cell tagged
raises-exception (and that the session survives it), and no other error.
"""

from __future__ import annotations

import base64
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "python_rust_magic.ipynb"


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata.kernelspec.name == "python3" and nb.metadata.kernelspec.language == "python"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source


def outputs_of(cells, first_line):
    matches = [c for c in cells if c.source.startswith(first_line)]
    assert len(matches) == 1, first_line
    return matches[0].outputs


def texts(outputs, mime="text/plain"):
    found = []
    for o in outputs:
        if o.output_type == "stream":
            found.append(o.text)
        elif o.output_type in ("display_data", "execute_result") and mime in o.data:
            found.append(o.data[mime])
    return "".join(found)


def test_python_notebook_with_rust_cells(kernel_env, kernel_binary):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=900, startup_timeout=120,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute(env=kernel_env)
    cells = [c for c in nb.cells if c.cell_type == "code"]

    assert "42" in texts(outputs_of(cells, "%%rust\nx + 1"))
    array = outputs_of(cells, "%%rust\nlet a = Array::arange")
    assert "array([0., 1., 2., 3., 4., 5., 6., 7.], dtype=float64" in texts(array)
    assert "gpukit-array" in texts(array, "text/html")
    image = outputs_of(cells, "%%rust\nprintln!(\"sum")
    assert "sum = 28" in texts(image)
    png = [o.data["image/png"] for o in image if o.output_type == "display_data" and "image/png" in o.data]
    assert len(png) == 1 and base64.b64decode(png[0])[:8] == b"\x89PNG\r\n\x1a\n"
    gpu = outputs_of(cells, "%gpu")
    assert any(o.output_type == "display_data" and o.data.get("text/plain") for o in gpu)
    assert "Wall time" in texts(outputs_of(cells, "%%rust\n%%time"))

    failing = [c for c in cells if "raises-exception" in c.metadata.get("tags", [])]
    assert len(failing) == 1
    errors = [o for o in failing[0].outputs if o.output_type == "error"]
    assert len(errors) == 1
    assert errors[0].ename == "RustError" and "mismatched types" in errors[0].evalue
    assert "expected `i32`" in "\n".join(errors[0].traceback)
    assert not any("File " in line for line in errors[0].traceback)  # no Python frames

    assert "1082" in texts(outputs_of(cells, "%%rust\nx * 2 + squares.len()"))
    for c in cells:
        if c is not failing[0]:
            assert not [o for o in c.outputs if o.output_type == "error"], c.source
