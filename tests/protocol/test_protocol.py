"""Protocol tests driving the real evcxr_gpu binary with jupyter_client."""

from __future__ import annotations

import os
import tempfile
import time
import uuid

from jupyter_client.session import Session

from conftest import run


def outputs(msgs, kind):
    return [c for t, c, _ in msgs if t == kind]


def test_kernel_info(kernel):
    _, kc = kernel
    reply = kc.kernel_info(reply=True, timeout=30)["content"]
    assert reply["status"] == "ok"
    assert reply["language_info"]["name"] == "rust"
    assert reply["implementation"] == "evcxr_gpu"


def test_execute_result_and_counts(kernel):
    _, kc = kernel
    r1, msgs = run(kc, "let a = 40;\na + 2")
    assert r1["status"] == "ok"
    results = outputs(msgs, "execute_result")
    assert results and results[0]["data"]["text/plain"] == "42"
    assert results[0]["execution_count"] == r1["execution_count"]
    r2, _ = run(kc, "a")
    assert r2["execution_count"] == r1["execution_count"] + 1
    # The value shown at the end of a cell stays in the session.
    r3, msgs = run(kc, "a * 2")
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "80"


def test_stdout_streams_while_the_cell_runs(kernel):
    _, kc = kernel
    code = 'println!("first");\nstd::thread::sleep(std::time::Duration::from_millis(2500));\nprintln!("second");\neprintln!("to stderr");'
    reply, msgs = run(kc, code)
    assert reply["status"] == "ok"
    streams = [(c["name"], c["text"], t) for k, c, t in msgs if k == "stream"]
    text = "".join(s[1] for s in streams if s[0] == "stdout")
    assert "first" in text and "second" in text
    assert any("to stderr" in s[1] for s in streams if s[0] == "stderr")
    first_at = next(t for n, s, t in streams if "first" in s)
    second_at = next(t for n, s, t in streams if "second" in s)
    assert second_at - first_at > 1.5, "stdout was not streamed while the cell ran"


DISPLAY = r'''
struct Show;
impl Show {
    fn evcxr_display(&self) {
        for (mime, body) in [
            ("text/plain", "plain show"),
            ("text/html", "<b>bold show</b>"),
            ("image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
            ("image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'></svg>"),
        ] {
            println!("EVCXR_BEGIN_CONTENT {mime}\n{body}\nEVCXR_END_CONTENT");
        }
    }
}
'''


def test_display_data_mime_types(kernel):
    _, kc = kernel
    reply, _ = run(kc, DISPLAY)
    assert reply["status"] == "ok"
    reply, msgs = run(kc, "Show.evcxr_display();")
    assert reply["status"] == "ok"
    shown = outputs(msgs, "display_data")
    assert shown, msgs
    data = shown[0]["data"]
    assert data["text/plain"] == "plain show"
    assert data["text/html"] == "<b>bold show</b>"
    assert data["image/png"].startswith("iVBOR")
    assert data["image/svg+xml"].startswith("<svg")
    # As the value of a cell it is an execute_result.
    reply, msgs = run(kc, "Show")
    assert outputs(msgs, "execute_result")[0]["data"]["text/html"] == "<b>bold show</b>"


LIVE = r'''
println!("before");
println!("EVCXR_GPU_DISPLAY {{\"display_id\":\"live-1\",\"update\":false,\"data\":{{\"text/plain\":\"first\"}}}}");
std::thread::sleep(std::time::Duration::from_millis(1500));
print!("partial ");
println!("EVCXR_GPU_DISPLAY {{\"display_id\":\"live-1\",\"update\":true,\"data\":{{\"text/plain\":\"second\",\"text/html\":\"<b>second</b>\"}}}}");
println!("after");
'''


def test_display_lines_show_then_update_in_place_while_the_cell_runs(kernel):
    """The kernel's display lines (what gpukit's live monitor prints) become display_data with a
    display_id, then update_display_data with the same id, as they arrive."""
    _, kc = kernel
    reply, msgs = run(kc, LIVE)
    assert reply["status"] == "ok"
    kinds = [(t, c, at) for t, c, at in msgs if t in ("display_data", "update_display_data")]
    assert [t for t, _, _ in kinds] == ["display_data", "update_display_data"], msgs
    (_, shown, shown_at), (_, updated, updated_at) = kinds
    assert shown["transient"]["display_id"] == "live-1"
    assert shown["data"] == {"text/plain": "first"}
    assert updated["transient"]["display_id"] == "live-1"
    assert updated["data"] == {"text/plain": "second", "text/html": "<b>second</b>"}
    assert updated_at - shown_at > 1.0, "the first display was not sent while the cell ran"
    text = "".join(c["text"] for c in outputs(msgs, "stream"))
    assert text == "before\npartial after\n", repr(text)
    # Without the marker at a line's start or with bad JSON, it is ordinary output.
    reply, msgs = run(kc, 'println!("EVCXR_GPU_DISPLAY {{not json");')
    assert "EVCXR_GPU_DISPLAY {not json" in "".join(c["text"] for c in outputs(msgs, "stream"))
    assert not outputs(msgs, "display_data")


def test_compile_error_reply_has_traceback_with_cell_line(kernel):
    _, kc = kernel
    reply, msgs = run(kc, 'let ok = 1;\nlet bad: i32 = "text";')
    assert reply["status"] == "error"
    assert reply["ename"] == "CompilationError"
    tb = "\n".join(reply["traceback"])
    assert "mismatched types" in tb and "cell line 2" in tb
    errors = outputs(msgs, "error")
    assert errors and errors[0]["ename"] == "CompilationError"


def test_runtime_error_and_panic(kernel):
    _, kc = kernel
    reply, msgs = run(kc, 'let r: Result<i32, String> = Err("boom".into());\nr?;')
    assert reply["status"] == "error"
    assert "boom" in "\n".join(reply["traceback"]) + "".join(c["text"] for c in outputs(msgs, "stream"))
    reply, msgs = run(kc, 'panic!("deliberate panic");')
    assert reply["status"] == "error"
    everything = "\n".join(reply["traceback"]) + "".join(c["text"] for c in outputs(msgs, "stream"))
    assert "deliberate panic" in everything
    # The kernel is still usable afterwards.
    reply, _ = run(kc, "1 + 1")
    assert reply["status"] == "ok"


def test_unknown_magic_is_a_clear_error(kernel):
    _, kc = kernel
    reply, _ = run(kc, "%frobnicate")
    assert reply["status"] == "error" and reply["ename"] == "MagicError"
    assert "%%cuda" in reply["evalue"] and "%gpu" in reply["evalue"]


def test_shell_escape_and_lsmagic(kernel):
    _, kc = kernel
    reply, msgs = run(kc, "!echo from-the-shell")
    assert reply["status"] == "ok"
    assert "from-the-shell" in "".join(c["text"] for c in outputs(msgs, "stream"))
    reply, msgs = run(kc, "%lsmagic")
    assert "%%timeit" in "".join(c["text"] for c in outputs(msgs, "stream"))


def test_complete_and_inspect(kernel):
    _, kc = kernel
    run(kc, "let completion_target_value = 5;")
    code = "completion_tar"
    reply = kc.complete(code, len(code), reply=True, timeout=120)["content"]
    assert reply["status"] == "ok"
    assert "completion_target_value" in reply["matches"]
    assert reply["cursor_start"] == 0 and reply["cursor_end"] == len(code)
    reply = kc.complete("%tim", 4, reply=True, timeout=30)["content"]
    assert set(reply["matches"]) == {"%time", "%timeit"}
    reply = kc.inspect("let v: Vec<i32> = Vec::new();", 12, reply=True, timeout=120)["content"]
    assert reply["status"] == "ok"


def is_complete(kc, code):
    msg_id = kc.is_complete(code)
    while True:
        m = kc.get_shell_msg(timeout=30)
        if m["parent_header"].get("msg_id") == msg_id:
            return m["content"]


def test_is_complete(kernel):
    _, kc = kernel
    assert is_complete(kc, "fn f() {")["status"] == "incomplete"
    assert is_complete(kc, "let x = 1;")["status"] == "complete"


def test_interrupt_stops_an_endless_loop(fresh_kernel):
    km, kc = fresh_kernel
    run(kc, "let kept = 1;")
    msg_id = kc.execute("loop {}")
    time.sleep(8)  # compile and start the loop
    km.interrupt_kernel()
    deadline = time.monotonic() + 60
    reply = None
    while time.monotonic() < deadline:
        m = kc.get_shell_msg(timeout=60)
        if m["parent_header"].get("msg_id") == msg_id:
            reply = m["content"]
            break
    assert reply is not None and reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    again, _ = run(kc, "2 + 2")
    assert again["status"] == "ok"
    assert km.is_alive()


def test_restart_forgets_variables(fresh_kernel):
    km, kc = fresh_kernel
    run(kc, "let before_restart = 7;")
    km.restart_kernel(now=False)
    kc.wait_for_ready(timeout=120)
    reply, _ = run(kc, "before_restart")
    assert reply["status"] == "error"
    reply, msgs = run(kc, "3 * 3")
    assert reply["status"] == "ok"
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "9"


def test_shutdown_ends_the_process(fresh_kernel):
    km, kc = fresh_kernel
    run(kc, "1")
    km.shutdown_kernel(now=False)
    assert not km.is_alive()


def test_message_with_bad_hmac_is_not_executed(kernel):
    _, kc = kernel
    marker = os.path.join(tempfile.gettempdir(), f"evcxr-gpu-hmac-{uuid.uuid4().hex}")
    code = f'std::fs::write("{marker}", "executed").unwrap();'
    forged = Session(key=b"not-the-kernel-key", username="attacker")
    before, _ = run(kc, "0")
    forged.send(kc.shell_channel.socket, "execute_request",
                {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                 "allow_stdin": False, "stop_on_error": True})
    time.sleep(5)
    after, _ = run(kc, "0")
    assert not os.path.exists(marker), "a message with a bad signature was executed"
    assert after["execution_count"] == before["execution_count"] + 1
    # The same code with the right key does run (so the check above is meaningful).
    reply, _ = run(kc, code)
    assert reply["status"] == "ok" and os.path.exists(marker)
    os.remove(marker)


def test_failed_startup_code_is_retried_then_reported_and_the_session_works(kernel_env, tmp_path):
    from conftest import start

    env = {**kernel_env, "EVCXR_GPU_PRELUDE": "let broken: u32 = \"not a number\";"}
    log = open(tmp_path / "kernel.stderr", "w")
    km, kc = start(env, stderr=log)
    try:
        reply, msgs = run(kc, "40 + 2")
        text = "".join(c.get("text", "") for c in outputs(msgs, "stream"))
        assert "the session start-up code failed" in text
        assert reply["status"] == "ok"
        assert any("42" in c["data"]["text/plain"] for c in outputs(msgs, "execute_result"))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        log.close()
    assert "trying once more" in (tmp_path / "kernel.stderr").read_text()


def test_vars_lists_the_users_variables_not_the_kernels(kernel):
    _, kc = kernel
    run(kc, "let answer: u64 = 42;")
    reply, _ = run(kc, "%%time\nlet timed = 1u8;")
    assert reply["status"] == "ok"
    reply, msgs = run(kc, ":vars")
    assert reply["status"] == "ok"
    shown = outputs(msgs, "display_data") + outputs(msgs, "execute_result")
    text = "".join(c["data"].get("text/plain", "") for c in shown)
    html = "".join(c["data"].get("text/html", "") for c in shown)
    assert "answer: u64" in text and "timed: u8" in text
    assert "__gk_" not in text and "__gk_" not in html
    assert "<tr><td>answer</td><td>u64</td></tr>" in html


def test_all_output_arrives_before_idle(kernel):
    """Output printed quickly at the end of a cell, on both streams, then a display: every line
    and the display come before the kernel says `idle` (nbclient and papermill stop reading
    there), and nothing of the cell comes after it."""
    km, kc = kernel
    n = 3000
    # stderr last: it travels through its own pipe and thread, and lagged behind the cell's end.
    code = (
        f"for i in 0..{n} {{ println!(\"out {{i}}\"); eprintln!(\"err {{i}}\"); }}\n"
        f"for i in {n}..{2 * n} {{ eprintln!(\"err {{i}}\"); }}\n"
        'println!("EVCXR_BEGIN_CONTENT text/html\\n<i>shown last</i>\\nEVCXR_END_CONTENT");'
    )
    msg_id = kc.execute(code)
    before_idle = []
    while True:
        m = kc.get_iopub_msg(timeout=300)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
        before_idle.append(m)
    reply = kc.get_shell_msg(timeout=60)
    assert reply["content"]["status"] == "ok"
    text = {"stdout": "", "stderr": ""}
    for m in before_idle:
        if m["msg_type"] == "stream":
            text[m["content"]["name"]] += m["content"]["text"]
    assert text["stdout"].splitlines() == [f"out {i}" for i in range(n)]
    assert text["stderr"].splitlines() == [f"err {i}" for i in range(2 * n)]
    shown = [m for m in before_idle if m["msg_type"] == "display_data"]
    assert len(shown) == 1 and shown[0]["content"]["data"]["text/html"] == "<i>shown last</i>"
    assert before_idle[-1]["msg_type"] == "display_data"
    time.sleep(2)
    late = []
    while True:
        try:
            m = kc.get_iopub_msg(timeout=0.2)
        except Exception:
            break
        if m["parent_header"].get("msg_id") == msg_id:
            late.append(m["msg_type"])
    assert late == [], f"output after idle: {late}"


def test_nbclient_keeps_every_output(kernel_env):
    """The same through nbclient (what papermill runs): the saved notebook has all of it."""
    import nbformat
    from nbclient import NotebookClient

    from conftest import KERNEL

    n = 2000
    code = (
        f"for i in 0..{n} {{ println!(\"out {{i}}\"); eprintln!(\"err {{i}}\"); }}\n"
        f"for i in {n}..{2 * n} {{ eprintln!(\"err {{i}}\"); }}\n"
        'println!("EVCXR_BEGIN_CONTENT text/html\\n<i>shown last</i>\\nEVCXR_END_CONTENT");'
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(nb, kernel_name=KERNEL, timeout=300, startup_timeout=120).execute(env=kernel_env)
    outs = nb.cells[0].outputs
    text = {"stdout": "", "stderr": ""}
    for o in outs:
        if o.output_type == "stream":
            text[o.name] += o.text
    assert text["stdout"].splitlines() == [f"out {i}" for i in range(n)]
    assert text["stderr"].splitlines() == [f"err {i}" for i in range(2 * n)]
    assert outs[-1].output_type == "display_data" and outs[-1].data["text/html"] == "<i>shown last</i>"


FAILING_CELLS = [
    # (code, ename, evalue)
    ('let r: Result<u8, String> = Err("boom".into());\nlet v = r?;', "Error", "boom"),
    ('eprintln!("said first");\nstd::thread::sleep(std::time::Duration::from_millis(500));\n'
     'let r: Result<(), String> = Err("later".into());\nr?;', "Error", "later"),
    ('panic!("deliberate panic");', "Panic", "deliberate panic"),
    ('let x: u8 = "text";', "CompilationError", "mismatched types"),
    ("std::process::abort();", "ProcessTerminated", None),
]


def test_a_failing_cell_shows_one_error(kernel):
    """A failing cell's message is its one `error` output, not a stream before it (output the cell
    printed well before it failed stays output)."""
    _, kc = kernel
    for code, ename, evalue in FAILING_CELLS:
        reply, msgs = run(kc, code)
        assert reply["status"] == "error", code
        assert reply["ename"] == ename, (code, reply)
        if evalue is not None:
            assert reply["evalue"] == evalue, (code, reply)
        errors = outputs(msgs, "error")
        assert len(errors) == 1 and errors[0]["ename"] == ename, (code, msgs)
        streams = "".join(c["text"] for c in outputs(msgs, "stream"))
        if "said first" in code:
            assert streams == "said first\n", msgs
        else:
            assert streams == "", (code, msgs)
        if ename == "Panic":
            tb = "\n".join(errors[0]["traceback"])
            assert "deliberate panic" in tb and "EVCXR_GPU_PANIC" not in tb
            assert "evcxr_gpu::main" not in tb, tb
    # After the crash the session works, and panics are still recognised in the new process.
    reply, msgs = run(kc, 'panic!("again");')
    assert reply["ename"] == "Panic" and reply["evalue"] == "again"
    assert len([m for m in msgs if m[0] not in ("status", "execute_input")]) == 1
    reply, _ = run(kc, "1 + 1")
    assert reply["status"] == "ok"


def test_a_panic_on_another_thread_is_output_not_the_error(kernel):
    _, kc = kernel
    reply, msgs = run(kc, 'std::thread::spawn(|| panic!("in a thread")).join().is_err()')
    assert reply["status"] == "ok"
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "true"
    stderr = "".join(c["text"] for c in outputs(msgs, "stream") if c["name"] == "stderr")
    assert "in a thread" in stderr and "EVCXR_GPU_PANIC" not in stderr


def test_user_expressions(kernel):
    _, kc = kernel
    run(kc, "let base = 40;")
    msg = kc.execute("let shown = 1;", user_expressions={"sum": "base + 2", "list": "vec![base; 2]",
                                                          "unit": "()", "bad": "no_such_name"})
    reply = kc.get_shell_msg(timeout=300)
    while reply["parent_header"].get("msg_id") != msg:
        reply = kc.get_shell_msg(timeout=300)
    ue = reply["content"]["user_expressions"]
    assert ue["sum"] == {"status": "ok", "data": {"text/plain": "42"}, "metadata": {}}
    assert ue["list"]["data"]["text/plain"] == "[40, 40]"
    assert ue["unit"]["data"]["text/plain"] == "()"
    assert ue["bad"]["status"] == "error" and ue["bad"]["ename"] == "CompilationError"
    assert "no_such_name" in ue["bad"]["evalue"]
    # Evaluating them moved nothing: `base` is still there.
    reply, msgs = run(kc, "base")
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "40"
    # None asked: an empty object; after an error: an empty object too.
    assert reply["user_expressions"] == {}
    msg = kc.execute("let broken: u8 = ();", user_expressions={"sum": "base + 2"})
    reply = kc.get_shell_msg(timeout=300)
    while reply["parent_header"].get("msg_id") != msg:
        reply = kc.get_shell_msg(timeout=300)
    assert reply["content"]["status"] == "error" and reply["content"]["user_expressions"] == {}


def test_displays_have_an_object_as_transient(kernel):
    _, kc = kernel
    _, msgs = run(kc, DISPLAY + "\nShow.evcxr_display();\nShow")
    shown = outputs(msgs, "display_data") + outputs(msgs, "execute_result")
    assert shown and all(isinstance(c.get("transient", {}), dict) for c in shown)


def test_doc_pages_and_clear_output(kernel):
    _, kc = kernel
    reply, _ = run(kc, "%doc Vec::new")
    assert reply["status"] == "ok"
    page = reply["payload"][0]
    assert page["source"] == "page" and "Vec" in page["data"]["text/plain"]
    reply, _ = run(kc, "%doc")
    assert reply["status"] == "error" and "%doc NAME" in reply["evalue"]
    reply, msgs = run(kc, 'println!("old");\nprintln!("EVCXR_GPU_CLEAR_OUTPUT wait");\nprintln!("new");')
    kinds = [(t, c.get("text", c.get("wait"))) for t, c, _ in msgs if t in ("stream", "clear_output")]
    assert kinds == [("stream", "old\n"), ("clear_output", True), ("stream", "new\n")]


def _queue(kc, cells, stop_on_error):
    """Sends every cell at once (as JupyterLab's Run All does); returns their replies in order."""
    ids = [kc.execute(code, stop_on_error=stop_on_error) for code in cells]
    replies = {}
    while len(replies) < len(ids):
        msg = kc.get_shell_msg(timeout=300)
        if msg["parent_header"].get("msg_id") in ids:
            replies[msg["parent_header"]["msg_id"]] = msg["content"]
    return [replies[i] for i in ids]


def test_stop_on_error_aborts_the_cells_queued_behind_a_failure(kernel):
    """Run All with a failing cell: the cells already queued behind it are answered `aborted`
    without running; the next request after the queue runs normally."""
    _, kc = kernel
    replies = _queue(
        kc,
        ['let stop_marker = 1;', 'let r: Result<(), String> = Err("stop here".into()); r?;',
         'let stop_marker = 2;', 'let stop_marker = 3;'],
        stop_on_error=True,
    )
    assert [r["status"] for r in replies] == ["ok", "error", "aborted", "aborted"], replies
    reply, msgs = run(kc, "stop_marker")
    assert reply["status"] == "ok"
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "1"


def test_without_stop_on_error_queued_cells_still_run(kernel):
    _, kc = kernel
    replies = _queue(
        kc,
        ['let r: Result<(), String> = Err("go on".into()); r?;', 'let go_on_marker = 7;'],
        stop_on_error=False,
    )
    assert [r["status"] for r in replies] == ["error", "ok"], replies
    reply, msgs = run(kc, "go_on_marker")
    assert outputs(msgs, "execute_result")[0]["data"]["text/plain"] == "7"
