//! Jupyter messaging: the five ZeroMQ sockets and the request handlers.
//!
//! Sockets and message signing come from `jupyter-zmq-client` (the maintained successor of
//! `runtimelib`), message types from `jupyter-protocol`. Every incoming message's HMAC is verified
//! by `jupyter-zmq-client` when it is read; a message that fails is logged and dropped. Sockets
//! bind to the IP and ports of the connection file only.

mod execute;
pub mod history;
pub mod is_complete;
pub mod kernel_info;

use crate::publisher::Publisher;
use crate::session::{CompletionResult, Interrupter, Job, Session};
use execute::{execute, Execute};
use is_complete::Completeness;
use jupyter_protocol::{
    CommInfoReply, CompleteReply, ConnectionInfo, ExecuteReply, ExecutionCount, Header,
    HistoryReply, InputRequest, InspectReply, InterruptReply, IsCompleteReply,
    IsCompleteReplyStatus, JupyterMessage, JupyterMessageContent, ReplyStatus, ShutdownReply,
    Status,
};
use jupyter_zmq_client::{KernelShellConnection, RawMessage, RuntimeError};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Byte offset of the `chars`-th character (Jupyter cursors count Unicode code points).
pub fn char_to_byte(code: &str, chars: usize) -> usize {
    code.char_indices()
        .nth(chars)
        .map(|(i, _)| i)
        .unwrap_or(code.len())
}

/// Number of characters before byte offset `byte`.
pub fn byte_to_char(code: &str, byte: usize) -> usize {
    let mut b = byte.min(code.len());
    while !code.is_char_boundary(b) {
        b -= 1;
    }
    code[..b].chars().count()
}

/// Reads the connection file Jupyter passes to the kernel.
pub fn read_connection_file(path: &std::path::Path) -> anyhow::Result<ConnectionInfo> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read connection file {}: {e}", path.display()))?;
    let info: ConnectionInfo = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("bad connection file {}: {e}", path.display()))?;
    if !info.key.is_empty() && info.signature_scheme != "hmac-sha256" {
        anyhow::bail!(
            "unsupported signature scheme `{}` (only hmac-sha256)",
            info.signature_scheme
        );
    }
    Ok(info)
}

/// The one-line warning for a connection file whose key is empty, or `None` when it has a key.
///
/// With an empty key jupyter-zmq-client neither signs nor verifies messages, so any process that
/// can reach the kernel's ports can run code as the user. The kernel prints this once, at start.
pub fn key_warning(info: &ConnectionInfo) -> Option<String> {
    info.key.is_empty().then(|| {
        format!(
            "evcxr_gpu: warning: the connection file's key is empty, so message authentication \
             (HMAC) is off: any process that can reach {}:{} can run code as this user",
            info.ip, info.shell_port
        )
    })
}

/// Logs a failed read; returns true if the socket itself failed (so the caller backs off).
fn log_read_error(publisher: &Publisher, channel: &str, e: &RuntimeError) -> bool {
    match e {
        RuntimeError::VerifyError(_) | RuntimeError::DecodeError(_) | RuntimeError::MissingHmac => {
            publisher.log(&format!(
                "evcxr_gpu: dropped a {channel} message with an invalid signature (HMAC)"
            ));
            false
        }
        RuntimeError::ZmqError(_) | RuntimeError::IoError(_) => {
            publisher.log(&format!("evcxr_gpu: {channel} socket error: {e}"));
            true
        }
        other => {
            publisher.log(&format!(
                "evcxr_gpu: dropped a bad {channel} message: {other}"
            ));
            false
        }
    }
}

pub(super) type InputAsk = (
    JupyterMessage,
    String,
    bool,
    std::sync::mpsc::Sender<String>,
);

/// Serves the kernel until a shutdown request arrives (which exits the process).
pub async fn serve(
    info: ConnectionInfo,
    session: Session,
    publisher: Arc<Publisher>,
    mut iopub_rx: mpsc::UnboundedReceiver<JupyterMessage>,
) -> anyhow::Result<()> {
    let session_id = uuid::Uuid::new_v4().to_string();
    let mut iopub = jupyter_zmq_client::create_kernel_iopub_connection(&info, &session_id).await?;
    let mut shell = jupyter_zmq_client::create_kernel_shell_connection(&info, &session_id).await?;
    let mut control =
        jupyter_zmq_client::create_kernel_control_connection(&info, &session_id).await?;
    let mut stdin = jupyter_zmq_client::create_kernel_stdin_connection(&info, &session_id).await?;
    let mut heartbeat = jupyter_zmq_client::create_kernel_heartbeat_connection(&info).await?;

    let log = publisher.clone();
    tokio::spawn(async move {
        while let Some(msg) = iopub_rx.recv().await {
            if let Err(e) = iopub.send(msg).await {
                log.log(&format!("evcxr_gpu: iopub send failed: {e}"));
            }
        }
    });
    tokio::spawn(async move { while heartbeat.single_heartbeat().await.is_ok() {} });

    // stdin: the session thread asks for input through this channel.
    let (ask_tx, mut ask_rx) = mpsc::unbounded_channel::<InputAsk>();
    let log = publisher.clone();
    tokio::spawn(async move {
        while let Some((parent, prompt, password, answer)) = ask_rx.recv().await {
            let req = InputRequest { prompt, password }.as_child_of(&parent);
            if stdin.send(req).await.is_err() {
                let _ = answer.send(String::new());
                continue;
            }
            let value = loop {
                match stdin.read().await {
                    Ok(m) => {
                        if let JupyterMessageContent::InputReply(r) = m.content {
                            break r.value;
                        }
                    }
                    Err(e) => {
                        if log_read_error(&log, "stdin", &e) {
                            break String::new();
                        }
                    }
                }
            };
            let _ = answer.send(value);
        }
    });

    let interrupter = session.interrupter();
    let intr = interrupter.clone();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            intr.interrupt();
        }
    });

    let rustc = kernel_info::rustc_version();
    let ctl_pub = publisher.clone();
    let ctl_rustc = rustc.clone();
    let ctl_intr = interrupter.clone();
    tokio::spawn(async move {
        loop {
            let msg = match control.read().await {
                Ok(m) => m,
                Err(e) => {
                    if log_read_error(&ctl_pub, "control", &e) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            };
            ctl_pub.send_to(&msg, Status::busy());
            let reply: Option<JupyterMessage> = match &msg.content {
                JupyterMessageContent::InterruptRequest(_) => {
                    ctl_intr.interrupt();
                    Some(InterruptReply::new().as_child_of(&msg))
                }
                JupyterMessageContent::KernelInfoRequest(_) => {
                    Some(kernel_info::reply(&ctl_rustc).as_child_of(&msg))
                }
                JupyterMessageContent::ShutdownRequest(req) => {
                    let restart = req.restart;
                    let _ = control
                        .send(
                            ShutdownReply {
                                restart,
                                status: ReplyStatus::Ok,
                                error: None,
                            }
                            .as_child_of(&msg),
                        )
                        .await;
                    shutdown(&ctl_pub, &ctl_intr, &msg).await;
                }
                other => {
                    ctl_pub.log(&format!(
                        "evcxr_gpu: ignoring control message {}",
                        other.message_type()
                    ));
                    None
                }
            };
            if let Some(r) = reply {
                let _ = control.send(r).await;
            }
            ctl_pub.send_to(&msg, Status::idle());
        }
    });

    let mut count: usize = 0;
    let mut history = history::History::default();
    // Requests read off the socket while a failed cell's reply was held back, and whether
    // each is to be aborted (see `stop_on_error` below).
    let mut queued: VecDeque<(JupyterMessage, bool)> = VecDeque::new();
    loop {
        let (msg, abort) = match queued.pop_front() {
            Some(q) => q,
            None => match read_request(&mut shell).await {
                Ok(m) => (m, false),
                Err(e) => {
                    if log_read_error(&publisher, "shell", &e) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            },
        };
        publisher.send_to(&msg, Status::busy());
        let reply: Option<JupyterMessage> = match &msg.content {
            JupyterMessageContent::KernelInfoRequest(_) => {
                Some(kernel_info::reply(&rustc).as_child_of(&msg))
            }
            JupyterMessageContent::ExecuteRequest(_) if abort => Some(
                ExecuteReply {
                    status: ReplyStatus::Aborted,
                    execution_count: ExecutionCount::new(count),
                    payload: Vec::new(),
                    user_expressions: None,
                    error: None,
                }
                .as_child_of(&msg),
            ),
            JupyterMessageContent::ExecuteRequest(req) => {
                let store = req.store_history && !req.silent;
                if store {
                    count += 1;
                }
                let n = ExecutionCount::new(count);
                let (reply, output) = execute(
                    &session,
                    &publisher,
                    &ask_tx,
                    &msg,
                    Execute {
                        code: req.code.clone(),
                        allow_stdin: req.allow_stdin,
                        silent: req.silent,
                        user_expressions: req.user_expressions.clone().unwrap_or_default(),
                        n,
                    },
                )
                .await;
                if store {
                    history.record(count, &req.code, &output);
                }
                if req.stop_on_error && failed(&reply) {
                    // Before the reply goes out, whatever is already waiting on the socket was
                    // sent before the client knew of the failure (a "Run All" queues every
                    // cell at once): its execute requests are aborted, as ipykernel does.
                    // Requests sent after the reply run normally.
                    queued.extend(
                        read_waiting(&mut shell, &publisher)
                            .await
                            .into_iter()
                            .map(|m| (m, true)),
                    );
                }
                Some(reply)
            }
            JupyterMessageContent::CompleteRequest(req) => {
                let cursor = char_to_byte(&req.code, req.cursor_pos);
                let (tx, rx) = oneshot::channel();
                session.submit(Job::Complete {
                    code: req.code.clone(),
                    cursor,
                    reply: tx,
                });
                let r: CompletionResult = rx.await.unwrap_or_default();
                Some(
                    CompleteReply {
                        matches: r.matches,
                        cursor_start: byte_to_char(&req.code, r.start),
                        cursor_end: byte_to_char(&req.code, r.end),
                        metadata: Default::default(),
                        status: ReplyStatus::Ok,
                        error: None,
                    }
                    .as_child_of(&msg),
                )
            }
            JupyterMessageContent::InspectRequest(req) => {
                let cursor = char_to_byte(&req.code, req.cursor_pos);
                let (tx, rx) = oneshot::channel();
                session.submit(Job::Inspect {
                    code: req.code.clone(),
                    cursor,
                    reply: tx,
                });
                let found = rx.await.ok().flatten();
                let mut reply = InspectReply::default();
                if let Some((plain, html)) = found {
                    reply.found = true;
                    reply.data = serde_json::from_value(serde_json::json!({
                        "text/plain": plain, "text/html": html
                    }))
                    .unwrap_or_default();
                }
                Some(reply.as_child_of(&msg))
            }
            JupyterMessageContent::IsCompleteRequest(req) => {
                let (status, indent) = match is_complete::check(&req.code) {
                    Completeness::Complete => (IsCompleteReplyStatus::Complete, ""),
                    Completeness::Incomplete => (IsCompleteReplyStatus::Incomplete, "    "),
                    Completeness::Invalid => (IsCompleteReplyStatus::Invalid, ""),
                };
                Some(IsCompleteReply::new(status, indent.into()).as_child_of(&msg))
            }
            JupyterMessageContent::HistoryRequest(req) => {
                Some(HistoryReply::new(history.answer(req)).as_child_of(&msg))
            }
            JupyterMessageContent::CommInfoRequest(_) => Some(
                CommInfoReply {
                    status: ReplyStatus::Ok,
                    comms: Default::default(),
                    error: None,
                }
                .as_child_of(&msg),
            ),
            JupyterMessageContent::ShutdownRequest(req) => {
                let _ = shell
                    .send(
                        ShutdownReply {
                            restart: req.restart,
                            status: ReplyStatus::Ok,
                            error: None,
                        }
                        .as_child_of(&msg),
                    )
                    .await;
                shutdown(&publisher, &interrupter, &msg).await;
            }
            other => {
                publisher.log(&format!(
                    "evcxr_gpu: ignoring shell message {}",
                    other.message_type()
                ));
                None
            }
        };
        if let Some(r) = reply {
            if let Err(e) = shell.send(r).await {
                publisher.log(&format!("evcxr_gpu: shell send failed: {e}"));
            }
        }
        publisher.send_to(&msg, Status::idle());
    }
}

/// Stops the running cell, lets queued IOPub messages go out, and exits the process.
async fn shutdown(publisher: &Publisher, interrupter: &Interrupter, msg: &JupyterMessage) -> ! {
    interrupter.interrupt();
    publisher.send_to(msg, Status::idle());
    tokio::time::sleep(Duration::from_millis(200)).await;
    std::process::exit(0)
}

/// How long the shell waits for one more waiting request after a failed cell; quiet for this
/// long means nothing more is queued.
const ABORT_QUEUE_WAIT: Duration = Duration::from_millis(20);

/// The requests already waiting on the shell socket (each read within [`ABORT_QUEUE_WAIT`] of
/// the last).
async fn read_waiting(
    shell: &mut KernelShellConnection,
    publisher: &Publisher,
) -> Vec<JupyterMessage> {
    let mut waiting = Vec::new();
    while let Ok(read) = tokio::time::timeout(ABORT_QUEUE_WAIT, read_request(shell)).await {
        match read {
            Ok(m) => waiting.push(m),
            Err(e) => {
                log_read_error(publisher, "shell", &e);
            }
        }
    }
    waiting
}

/// Whether an execute reply reports an error.
fn failed(reply: &JupyterMessage) -> bool {
    matches!(&reply.content, JupyterMessageContent::ExecuteReply(r) if r.status == ReplyStatus::Error)
}

/// Reads the next request from the shell socket. Like jupyter-zmq-client's `read` (which
/// verifies the signature the same way, in `RawMessage::from_multipart`), except that a
/// `history_request` missing optional fields is completed before it is parsed.
async fn read_request(shell: &mut KernelShellConnection) -> Result<JupyterMessage, RuntimeError> {
    use zeromq::SocketRecv;
    let raw = RawMessage::from_multipart(shell.socket.recv().await?, &shell.mac)?;
    if raw.jparts.len() < 4 {
        return Err(RuntimeError::InsufficientMessageParts(raw.jparts.len()));
    }
    let header: Header = serde_json::from_slice(&raw.jparts[0])?;
    let mut content: serde_json::Value = serde_json::from_slice(&raw.jparts[3])?;
    if header.msg_type == "history_request" {
        history::complete_request(&mut content);
    }
    let content = JupyterMessageContent::from_type_and_content(&header.msg_type, content).map_err(
        |source| RuntimeError::ParseError {
            msg_type: header.msg_type.clone(),
            source,
        },
    )?;
    Ok(JupyterMessage {
        zmq_identities: raw.zmq_identities,
        header,
        // An empty parent header (`{}`) does not parse as a header: no parent.
        parent_header: serde_json::from_slice(&raw.jparts[1]).ok(),
        metadata: serde_json::from_slice(&raw.jparts[2])?,
        content,
        buffers: raw.jparts.get(4..).map(<[_]>::to_vec).unwrap_or_default(),
        channel: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_conversions() {
        let s = "é = 1; x";
        assert_eq!(char_to_byte(s, 1), 2);
        assert_eq!(char_to_byte(s, 100), s.len());
        assert_eq!(byte_to_char(s, 2), 1);
        assert_eq!(byte_to_char(s, 1), 0);
    }

    #[test]
    fn connection_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        std::fs::write(
            &p,
            r#"{"ip":"127.0.0.1","transport":"tcp","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"key":"k","signature_scheme":"hmac-sha256"}"#,
        )
        .unwrap();
        let c = read_connection_file(&p).unwrap();
        assert_eq!(c.shell_port, 1);
        std::fs::write(&p, "{}").unwrap();
        assert!(read_connection_file(&p)
            .unwrap_err()
            .to_string()
            .contains("bad connection file"));
        assert!(read_connection_file(&dir.path().join("none.json")).is_err());
    }

    #[test]
    fn empty_key_is_warned_about_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        let file = |key: &str| {
            format!(
                r#"{{"ip":"127.0.0.1","transport":"tcp","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"key":"{key}","signature_scheme":"hmac-sha256"}}"#
            )
        };
        std::fs::write(&p, file("")).unwrap();
        let w = key_warning(&read_connection_file(&p).unwrap()).unwrap();
        assert!(
            w.contains("key is empty") && w.contains("authentication"),
            "{w}"
        );
        assert!(w.contains("127.0.0.1:1") && !w.contains('\n'), "{w}");
        std::fs::write(&p, file("secret")).unwrap();
        assert_eq!(key_warning(&read_connection_file(&p).unwrap()), None);
    }
}
