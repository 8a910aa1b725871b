//! Tests of the output forwarder ([`super`]).

use super::*;
use jupyter_protocol::{ExecuteRequest, JupyterMessage, JupyterMessageContent};

struct Rig {
    out: Sender<String>,
    err: Sender<String>,
    fwd: Forwarder,
    rx: tokio::sync::mpsc::UnboundedReceiver<JupyterMessage>,
}

fn rig() -> Rig {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let publisher = Arc::new(Publisher::new(tx, Box::new(|_| {})));
    let req: JupyterMessage = ExecuteRequest::new("1".into()).into();
    publisher.set_parent(Some(req));
    let (out, orx) = crossbeam_channel::unbounded();
    let (err, erx) = crossbeam_channel::unbounded();
    let fwd = Forwarder::spawn(orx, erx, publisher).unwrap();
    Rig { out, err, fwd, rx }
}

/// (kind, text) of every message published so far.
fn published(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<JupyterMessage>,
) -> Vec<(String, String)> {
    let mut v = Vec::new();
    while let Ok(m) = rx.try_recv() {
        let text = match &m.content {
            JupyterMessageContent::StreamContent(s) => s.text.clone(),
            JupyterMessageContent::ClearOutput(c) => format!("wait={}", c.wait),
            _ => String::new(),
        };
        v.push((m.header.msg_type.clone(), text));
    }
    v
}

fn send(tx: &Sender<String>, lines: &[&str]) {
    for l in lines {
        tx.send(l.to_string()).unwrap();
    }
}

#[test]
fn a_completed_step_publishes_all_its_output_in_order_without_markers() {
    let mut r = rig();
    r.fwd.reset();
    send(&r.out, &["one", "two"]);
    r.fwd.flush();
    send(&r.err, &["warn"]);
    r.fwd.flush();
    std::thread::sleep(Duration::from_millis(30));
    send(&r.out, &["three", COMPLETED_MARKER]);
    send(&r.err, &["late", STDERR_MARKER]);
    r.fwd.flush();
    assert!(r.fwd.completed());
    r.fwd.finish_completed(Duration::from_secs(2));
    let got = published(&mut r.rx);
    assert_eq!(
        got,
        vec![
            ("stream".into(), "one\ntwo\n".into()),
            ("stream".into(), "warn\n".into()),
            ("stream".into(), "three\n".into()),
            ("stream".into(), "late\n".into()),
        ]
    );
}

#[test]
fn held_stderr_is_published_after_the_hold() {
    let mut r = rig();
    send(&r.err, &["progress"]);
    std::thread::sleep(STDERR_HOLD + Duration::from_millis(100));
    assert_eq!(
        published(&mut r.rx),
        vec![("stream".into(), "progress\n".into())]
    );
}

#[test]
fn the_error_of_a_failed_step_is_handed_over_not_published() {
    let mut r = rig();
    r.fwd.reset();
    send(&r.out, &["before"]);
    r.fwd.flush();
    send(&r.err, &["boom: the message", "second line"]);
    r.fwd.flush();
    assert!(!r.fwd.completed());
    let f = r.fwd.take_failure(Duration::from_secs(1));
    assert_eq!(
        f,
        Some(Failure::Stderr("boom: the message\nsecond line\n".into()))
    );
    r.fwd.release();
    assert_eq!(
        published(&mut r.rx),
        vec![("stream".into(), "before\n".into())]
    );
}

#[test]
fn a_panic_report_becomes_the_failure_and_earlier_stderr_stays_output() {
    let mut r = rig();
    r.fwd.reset();
    send(
        &r.err,
        &[
            "user eprintln",
            PANIC_BEGIN,
            "thread panicked at x:",
            "oh no",
        ],
    );
    let waiter = {
        let err = r.err.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            send(&err, &["backtrace", PANIC_END]);
        })
    };
    let f = r.fwd.take_failure(Duration::from_secs(2));
    waiter.join().unwrap();
    assert_eq!(
        f,
        Some(Failure::Panic(
            "thread panicked at x:\noh no\nbacktrace\n".into()
        ))
    );
    assert_eq!(
        published(&mut r.rx),
        vec![("stream".into(), "user eprintln\n".into())]
    );
}

#[test]
fn a_panic_on_another_thread_of_a_completed_step_is_output() {
    let mut r = rig();
    r.fwd.reset();
    send(
        &r.err,
        &[PANIC_BEGIN, "worker panicked", PANIC_END, STDERR_MARKER],
    );
    send(&r.out, &[COMPLETED_MARKER]);
    r.fwd.finish_completed(Duration::from_secs(2));
    assert_eq!(
        published(&mut r.rx),
        vec![("stream".into(), "worker panicked\n".into())]
    );
}

#[test]
fn nothing_to_take_when_the_step_printed_nothing() {
    let r = rig();
    r.fwd.reset();
    assert_eq!(r.fwd.take_failure(Duration::from_millis(50)), None);
}

#[test]
fn clear_output_marker_becomes_a_message_between_the_streams() {
    let mut r = rig();
    send(
        &r.out,
        &[
            "old",
            CLEAR_OUTPUT,
            "new",
            &format!("{CLEAR_OUTPUT} wait"),
            "newer",
        ],
    );
    send(&r.out, &[&format!("{CLEAR_OUTPUT}x")]);
    r.fwd.release();
    assert_eq!(
        published(&mut r.rx),
        vec![
            ("stream".into(), "old\n".into()),
            ("clear_output".into(), "wait=false".into()),
            ("stream".into(), "new\n".into()),
            ("clear_output".into(), "wait=true".into()),
            ("stream".into(), format!("newer\n{CLEAR_OUTPUT}x\n")),
        ]
    );
}

#[test]
fn display_lines_become_displays_in_order_on_stdout_only() {
    let mut r = rig();
    let show =
        "EVCXR_GPU_DISPLAY {\"display_id\":\"m\",\"update\":false,\"data\":{\"text/plain\":\"x\"}}";
    let update =
        "EVCXR_GPU_DISPLAY {\"display_id\":\"m\",\"update\":true,\"data\":{\"text/plain\":\"y\"}}";
    let partial = format!("50%{update}");
    send(
        &r.out,
        &["a", show, "b", &partial, "c", "EVCXR_GPU_DISPLAY {oops"],
    );
    r.fwd.release();
    send(&r.err, &[show]);
    r.fwd.release();
    let bad = "EVCXR_GPU_DISPLAY {oops\n";
    assert_eq!(
        published(&mut r.rx),
        vec![
            ("stream".into(), "a\n".into()),
            ("display_data".into(), "".into()),
            ("stream".into(), "b\n50%".into()),
            ("update_display_data".into(), "".into()),
            ("stream".into(), format!("c\n{bad}")),
            ("stream".into(), format!("{show}\n")),
        ]
    );
}

#[test]
fn stdout_releases_earlier_stderr_first() {
    let mut r = rig();
    send(&r.err, &["err first"]);
    r.fwd.flush();
    send(&r.out, &["out second"]);
    r.fwd.flush();
    assert_eq!(
        published(&mut r.rx),
        vec![
            ("stream".into(), "err first\n".into()),
            ("stream".into(), "out second\n".into()),
        ]
    );
}
