//! The IOPub side of a cell: everything a running cell shows goes through one [`Publisher`].
//!
//! Messages are queued to the task that owns the IOPub socket, in order. The publisher knows the
//! request being executed (its "parent"); output that arrives while no cell runs (for example
//! while the session starts) goes to the kernel's log instead.

use jupyter_protocol::{
    ClearOutput, DisplayData, JupyterMessage, JupyterMessageContent, Media, StreamContent,
    Transient, UpdateDisplayData,
};
use std::io::Write;
use std::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;

/// Sends IOPub messages on behalf of the request being executed.
pub struct Publisher {
    tx: UnboundedSender<JupyterMessage>,
    parent: Mutex<Option<JupyterMessage>>,
    log: Box<dyn Fn(&str) + Send + Sync>,
}

impl Publisher {
    /// A publisher feeding `tx`; `log` receives output that has no cell to go to.
    pub fn new(tx: UnboundedSender<JupyterMessage>, log: Box<dyn Fn(&str) + Send + Sync>) -> Self {
        Publisher {
            tx,
            parent: Mutex::new(None),
            log,
        }
    }

    /// Makes `parent` the request that output belongs to (`None`: no cell is running).
    pub fn set_parent(&self, parent: Option<JupyterMessage>) {
        *self.parent.lock().unwrap_or_else(|p| p.into_inner()) = parent;
    }

    /// The request output currently belongs to.
    pub fn parent(&self) -> Option<JupyterMessage> {
        self.parent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sends `content` as a child of `parent`.
    pub fn send_to(&self, parent: &JupyterMessage, content: impl Into<JupyterMessageContent>) {
        let _ = self
            .tx
            .send(JupyterMessage::new(content.into(), Some(parent)));
    }

    /// Sends `content` as a child of the current request; logs `fallback` if there is none.
    fn send_or_log(&self, content: impl Into<JupyterMessageContent>, fallback: &str) {
        match self.parent() {
            Some(p) => self.send_to(&p, content),
            None => (self.log)(fallback),
        }
    }

    /// Writes text to the cell's stdout.
    pub fn stdout(&self, text: &str) {
        self.send_or_log(StreamContent::stdout(text), text);
    }

    /// Writes text to the cell's stderr.
    pub fn stderr(&self, text: &str) {
        self.send_or_log(StreamContent::stderr(text), text);
    }

    /// Shows a display (a MIME bundle), updatable later through `display_id` if given.
    pub fn display(&self, data: Media, display_id: Option<&str>) {
        let text = plain_text(&data);
        self.send_or_log(
            DisplayData {
                data,
                metadata: Default::default(),
                transient: Some(transient(display_id)),
            },
            &text,
        );
    }

    /// Clears the cell's output (`wait`: when the next output arrives).
    pub fn clear_output(&self, wait: bool) {
        if let Some(p) = self.parent() {
            self.send_to(&p, ClearOutput { wait });
        }
    }

    /// Replaces the display shown earlier under `display_id`.
    pub fn update_display(&self, data: Media, display_id: &str) {
        let text = plain_text(&data);
        self.send_or_log(UpdateDisplayData::new(data, display_id), &text);
    }

    /// Logs a line to the kernel's log (the terminal of the Jupyter server).
    pub fn log(&self, text: &str) {
        (self.log)(text);
    }
}

/// The `transient` field of a display: `{}` or `{"display_id": ...}`, never `null` (the
/// message specification wants an object).
pub fn transient(display_id: Option<&str>) -> Transient {
    Transient {
        display_id: display_id.map(str::to_string),
    }
}

/// A MIME bundle with only `text/plain`.
pub fn text_media(text: &str) -> Media {
    serde_json::from_value(serde_json::json!({ "text/plain": text })).unwrap_or_default()
}

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

/// A logger writing to a file descriptor (the kernel's original stderr).
pub fn fd_logger(fd: i32) -> Box<dyn Fn(&str) + Send + Sync> {
    Box::new(move |text: &str| {
        use std::os::fd::FromRawFd;
        // The descriptor stays open for the life of the process; ManuallyDrop keeps it so.
        let mut f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let mut line = text.to_string();
        if !line.ends_with('\n') {
            line.push('\n');
        }
        let _ = f.write_all(line.as_bytes());
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jupyter_protocol::ExecuteRequest;
    use std::sync::{Arc, Mutex as M};

    #[test]
    fn routes_to_parent_or_log() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let logged = Arc::new(M::new(Vec::<String>::new()));
        let l2 = logged.clone();
        let p = Publisher::new(
            tx,
            Box::new(move |s| l2.lock().unwrap().push(s.to_string())),
        );
        p.stdout("before");
        assert_eq!(logged.lock().unwrap().as_slice(), ["before"]);
        let req: JupyterMessage = ExecuteRequest::new("1".into()).into();
        p.set_parent(Some(req.clone()));
        p.stderr("oops\n");
        let m = rx.try_recv().unwrap();
        assert_eq!(m.header.msg_type, "stream");
        assert_eq!(m.parent_header.unwrap().msg_id, req.header.msg_id);
        p.display(text_media("hi"), Some("d1"));
        let m = rx.try_recv().unwrap();
        assert_eq!(m.header.msg_type, "display_data");
        p.update_display(text_media("ho"), "d1");
        assert_eq!(
            rx.try_recv().unwrap().header.msg_type,
            "update_display_data"
        );
    }
}
