"""The magics rust_gpu registers on a real IPython shell, and that they match the kernel's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from rust_gpu import magics

ROOT = Path(__file__).resolve().parents[2]


def rust_table(name: str) -> list:
    """The magic names of LINE_MAGICS or CELL_MAGICS in crates/evcxr_gpu/src/magics/mod.rs."""
    src = (ROOT / "crates" / "evcxr_gpu" / "src" / "magics" / "mod.rs").read_text()
    block = re.search(rf"pub const {name}: &\[\(&str, &str\)\] = &\[(.*?)\n\];", src, re.S)
    assert block, f"{name} not found in magics/mod.rs"
    return re.findall(r'\(\s*"(\w+)",', block.group(1))


def test_every_kernel_magic_is_forwarded():
    assert sorted(magics.KERNEL_LINE_MAGICS) == sorted(rust_table("LINE_MAGICS"))
    assert sorted(magics.KERNEL_CELL_MAGICS) == sorted(rust_table("CELL_MAGICS"))


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    yield ip
    InteractiveShell.clear_instance()


def test_registration_keeps_ipythons_own_magics(shell):
    own_time = shell.find_line_magic("time")
    import rust_gpu

    rust_gpu.load_ipython_extension(shell)
    lines = shell.magics_manager.magics["line"]
    cells = shell.magics_manager.magics["cell"]
    for name in ("rust", "gpu", "memory", "device", "ptx", "source", "rust_time", "rust_timeit",
                 "rust_lsmagic", "rust_gpu", "rust_restart", "rust_kernel"):
        assert name in lines, name
    for name in ("rust", "cuda", "profile", "rust_cuda", "rust_time", "rust_timeit", "rust_profile"):
        assert name in cells, name
    assert shell.find_line_magic("time") == own_time  # IPython's %time stays
    assert getattr(cells["time"], "_rust_gpu", False) is False
    assert getattr(lines["lsmagic"], "_rust_gpu", False) is False
    # loading again re-registers its own bare names, still leaves IPython's alone
    rust_gpu.load_ipython_extension(shell)
    assert getattr(shell.find_line_magic("gpu"), "_rust_gpu", False)
    assert shell.find_line_magic("time") == own_time


def test_a_name_taken_by_another_extension_is_left_to_it(shell):
    def other_cuda(line, cell):
        """another extension's %%cuda"""

    shell.register_magic_function(other_cuda, magic_kind="cell", magic_name="cuda")
    done = magics.register(shell)
    assert "cuda" not in done["cell"] and "rust_cuda" in done["cell"]
    assert shell.find_cell_magic("cuda") is other_cuda


def test_kernel_cells_are_written_as_the_kernel_expects():
    assert magics.line_code("gpu", "") == "%gpu"
    assert magics.line_code("device", "  cpu ") == "%device cpu"
    assert magics.cell_code("timeit", "-n 3", "let v = 1;\n") == "%%timeit -n 3\nlet v = 1;\n"
    cuda = 'extern "C" __global__ void k() {}'
    assert magics.cell_code("cuda", "", cuda) == "%%cuda\n" + cuda


def test_magics_send_their_cells_to_the_session(monkeypatch, shell):
    sent = []
    monkeypatch.setattr(magics, "run", lambda code, forwarder=None: sent.append(code))
    magics.register(shell)
    shell.run_line_magic("gpu", "")
    shell.run_line_magic("rust_time", "x + 1")
    shell.run_cell_magic("rust", "", "let x = 1;\n")
    shell.run_line_magic("rust", "x * 2")
    shell.run_cell_magic("profile", "", "f();")
    assert sent == ["%gpu", "%time x + 1", "let x = 1;\n", "x * 2", "%%profile\nf();"]


def test_rust_cell_magic_takes_no_arguments():
    with pytest.raises(magics.RustError, match="takes no arguments"):
        magics.rust("--release", "let x = 1;")
