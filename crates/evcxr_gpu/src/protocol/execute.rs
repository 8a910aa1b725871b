//! One execute request: the cell's code on the session thread, its outputs and reply, the
//! `user_expressions` evaluated after it, and the pager payload of `%doc`.

use super::InputAsk;
use crate::publisher::{transient, Publisher};
use crate::session::{ExecuteOutcome, InputFn, Job, Session};
use jupyter_protocol::{
    DisplayData, ErrorOutput, ExecuteInput, ExecuteReply, ExecuteResult, ExecutionCount,
    ExpressionResult, JupyterMessage, Media, Payload, ReplyError, ReplyStatus,
};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// What an execute request asks for.
pub(super) struct Execute {
    pub(super) code: String,
    pub(super) allow_stdin: bool,
    pub(super) silent: bool,
    pub(super) user_expressions: HashMap<String, String>,
    pub(super) n: ExecutionCount,
}

/// Runs one execute request; returns its reply and the `text/plain` of its result (for the
/// history). Every output of the cell is queued on IOPub before this returns, so all of it goes
/// out before the `idle` status that follows.
pub(super) async fn execute(
    session: &Session,
    publisher: &Arc<Publisher>,
    ask: &mpsc::UnboundedSender<InputAsk>,
    msg: &JupyterMessage,
    req: Execute,
) -> (JupyterMessage, String) {
    let Execute {
        code,
        allow_stdin,
        silent,
        user_expressions,
        n,
    } = req;
    if !silent {
        publisher.send_to(
            msg,
            ExecuteInput {
                code: code.clone(),
                execution_count: n,
            },
        );
    }
    let input: Option<InputFn> = if allow_stdin {
        let ask = ask.clone();
        let parent = msg.clone();
        Some(Box::new(move |prompt: String, password: bool| {
            let (tx, rx) = std::sync::mpsc::channel();
            if ask.send((parent.clone(), prompt, password, tx)).is_err() {
                return String::new();
            }
            rx.recv().unwrap_or_default()
        }))
    } else {
        None
    };
    publisher.set_parent(Some(msg.clone()));
    let (tx, rx) = oneshot::channel();
    let outcome: ExecuteOutcome = if session.submit(Job::Execute {
        code,
        input,
        reply: tx,
    }) {
        rx.await.unwrap_or_default()
    } else {
        ExecuteOutcome::default()
    };
    let mut output = String::new();
    for (data, is_value) in outcome.results {
        if is_value {
            output = plain_text(&data);
        }
        if silent {
            continue;
        }
        if is_value {
            publisher.send_to(
                msg,
                ExecuteResult {
                    execution_count: n,
                    data,
                    metadata: Default::default(),
                    transient: Some(transient(None)),
                },
            );
        } else {
            publisher.send_to(
                msg,
                DisplayData {
                    data,
                    metadata: Default::default(),
                    transient: Some(transient(None)),
                },
            );
        }
    }
    publisher.set_parent(None);
    let reply = match outcome.error {
        None => {
            // Evaluated after the cell, in the session it left; their output goes to the log.
            let expressions = if user_expressions.is_empty() {
                HashMap::new()
            } else {
                evaluate_expressions(session, user_expressions).await
            };
            ExecuteReply {
                status: ReplyStatus::Ok,
                execution_count: n,
                payload: outcome.pages.into_iter().map(page).collect(),
                user_expressions: Some(expressions),
                error: None,
            }
        }
        Some(e) => {
            publisher.send_to(
                msg,
                ErrorOutput {
                    ename: e.ename.clone(),
                    evalue: e.evalue.clone(),
                    traceback: e.traceback.clone(),
                },
            );
            // As IPython does: no user expressions after an error.
            ExecuteReply {
                status: ReplyStatus::Error,
                execution_count: n,
                payload: Vec::new(),
                user_expressions: Some(HashMap::new()),
                error: Some(Box::new(ReplyError {
                    ename: e.ename,
                    evalue: e.evalue,
                    traceback: e.traceback,
                })),
            }
        }
    };
    (reply.as_child_of(msg), output)
}

/// A pager payload (what `%doc` shows).
fn page(data: Media) -> Payload {
    Payload::Page { data, start: 0 }
}

/// The `text/plain` of a MIME bundle, or "".
fn plain_text(data: &Media) -> String {
    serde_json::to_value(data)
        .ok()
        .and_then(|v| {
            v.get("text/plain")
                .and_then(|t| t.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Evaluates `user_expressions` in the session, each on its own.
async fn evaluate_expressions(
    session: &Session,
    expressions: HashMap<String, String>,
) -> HashMap<String, ExpressionResult> {
    let (tx, rx) = oneshot::channel();
    let names: Vec<String> = expressions.keys().cloned().collect();
    let asked: Vec<(String, String)> = expressions.into_iter().collect();
    if !session.submit(Job::Expressions {
        expressions: asked,
        reply: tx,
    }) {
        return names
            .into_iter()
            .map(|name| {
                (
                    name,
                    expression_error("SessionError", "the session has ended"),
                )
            })
            .collect();
    }
    match rx.await {
        Ok(results) => results
            .into_iter()
            .map(|(name, r)| {
                let value = match r {
                    Ok(data) => ExpressionResult::Ok {
                        data,
                        metadata: Default::default(),
                    },
                    Err(e) => ExpressionResult::Error {
                        ename: e.ename,
                        evalue: e.evalue,
                        traceback: e.traceback,
                    },
                };
                (name, value)
            })
            .collect(),
        Err(_) => names
            .into_iter()
            .map(|name| {
                (
                    name,
                    expression_error("SessionError", "the session has ended"),
                )
            })
            .collect(),
    }
}

fn expression_error(ename: &str, evalue: &str) -> ExpressionResult {
    ExpressionResult::Error {
        ename: ename.into(),
        evalue: evalue.into(),
        traceback: vec![format!("{ename}: {evalue}")],
    }
}
