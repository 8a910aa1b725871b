"""The Jupyter project's kernel conformance suite (jupyter_kernel_test) against "Rust (GPU)".

Every test of `jupyter_kernel_test.KernelTests` runs: each attribute the suite reads is set, so
none is skipped for want of a sample. (The suite's other class, `IopubWelcomeTests`, checks the
optional JEP 65 `iopub_welcome` message, which needs an XPUB IOPub socket; the kernel has a
plain PUB socket, as most kernels do.)
"""

from __future__ import annotations

import jupyter_kernel_test as jkt

from conftest import KERNEL, plain_env, start

# Compiling a cell takes seconds where the suite expects an interpreter (its default is 15 s).
COMPILE_TIMEOUT = 300

HTML = 'println!("EVCXR_BEGIN_CONTENT text/html\\n<b>bold</b>\\nEVCXR_END_CONTENT");'
PNG = (
    'println!("EVCXR_BEGIN_CONTENT image/png\\n'
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    '\\nEVCXR_END_CONTENT");'
)


class RustGpuKernelTests(jkt.KernelTests):
    kernel_name = KERNEL
    language_name = "rust"
    file_extension = ".rs"

    code_hello_world = 'println!("hello, world");'
    code_stderr = 'eprintln!("a line on stderr");'
    completion_samples = [
        {"text": "%tim", "matches": {"%time", "%timeit"}},
        {"text": "std::mem::swa", "matches": {"swap(x, y)"}},
    ]
    complete_code_samples = ["1", "let x = 1;", "fn f() -> u8 { 1 }", 'println!("{}", "}");', "%lsmagic"]
    incomplete_code_samples = ["fn f() {", 'let s = "unterminated', "vec![1,", "/* open comment"]
    invalid_code_samples = ["}", "let x = (1];"]
    code_generate_error = 'let r: Result<(), String> = Err("boom".into());\nr?;'
    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": '"text"', "result": '"text"'},
        {"code": "vec![1, 2]", "result": "[1, 2]"},
    ]
    code_display_data = [
        {"code": HTML, "mime": "text/html"},
        {"code": PNG, "mime": "image/png"},
    ]
    # Matches "6 * 7" only (history search is a glob over the whole input).
    code_history_pattern = "6 *"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "Vec::new"
    code_clear_output = 'println!("EVCXR_GPU_CLEAR_OUTPUT");\nprintln!("after the clear");'
    code_page_something = "%doc Vec::new"

    @classmethod
    def setUpClass(cls) -> None:
        cls.km, cls.kc = start(plain_env())
        # The first cell pays for the session start, the first completion for loading the
        # analysis (the standard library's sources): both before the suite's timeouts apply.
        cls.kc.execute_interactive("1", timeout=COMPILE_TIMEOUT, output_hook=lambda _m: None)
        cls.kc.complete("Vec::ne", 7, reply=True, timeout=COMPILE_TIMEOUT)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)

    def execute_helper(self, code, timeout=COMPILE_TIMEOUT, **kwargs):
        return super().execute_helper(code, timeout=timeout, **kwargs)
