//! Displays that change while a cell runs: a [`LiveDisplay`] shows a MIME bundle once and then
//! replaces it in place, as Jupyter's `display_data` with a `display_id` followed by
//! `update_display_data` messages with the same id.
//!
//! evcxr's own display protocol (`EVCXR_BEGIN_CONTENT mime ... EVCXR_END_CONTENT` on stdout)
//! collects a cell's content until the cell ends, so it cannot update anything while the cell
//! runs. The `evcxr_gpu` kernel therefore reads one more kind of stdout line, which it turns
//! into a display message as soon as it arrives:
//!
//! ```text
//! EVCXR_GPU_DISPLAY {"display_id":"gpukit-...","update":false,"data":{"image/png":"...","text/plain":"..."}}
//! ```
//!
//! one line of JSON after the marker and a space: the display id, whether this replaces an
//! earlier display of that id (`update_display_data`) or shows it first (`display_data`), and
//! the MIME bundle. The kernel sets [`UPDATES_VAR`] in the environment of the process that runs
//! the cells; elsewhere (plain evcxr, a program) [`LiveDisplay::new`] returns `None`, and
//! callers show their final result through evcxr's protocol instead.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Set to `1` by the `evcxr_gpu` kernel: the process running the cells may print
/// [`MARKER`] lines.
pub const UPDATES_VAR: &str = "EVCXR_GPU_DISPLAY_UPDATES";

/// The start of a display line (followed by a space and one line of JSON).
pub const MARKER: &str = "EVCXR_GPU_DISPLAY";

/// Whether the kernel this process runs under turns [`MARKER`] lines into display messages.
pub fn updates_supported() -> bool {
    std::env::var(UPDATES_VAR).is_ok_and(|v| v.trim() == "1")
}

/// A display that can be replaced in place while the cell runs (see the module documentation).
#[derive(Debug)]
pub struct LiveDisplay {
    id: String,
    shown: bool,
    /// Where the lines go: stdout, or (tests) a buffer.
    capture: Option<Arc<Mutex<String>>>,
}

impl LiveDisplay {
    /// A new display with a fresh id, or `None` where the kernel cannot update displays.
    pub fn new() -> Option<LiveDisplay> {
        updates_supported().then(|| LiveDisplay {
            id: fresh_id(),
            shown: false,
            capture: None,
        })
    }

    /// A display whose lines go to `buffer` instead of stdout (tests).
    #[cfg(test)]
    pub(crate) fn capturing(buffer: Arc<Mutex<String>>) -> LiveDisplay {
        LiveDisplay {
            id: fresh_id(),
            shown: false,
            capture: Some(buffer),
        }
    }

    /// The Jupyter display id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Shows `bundle` (pairs of MIME type and content; binary content such as `image/png` in
    /// base64): the first call shows it, later calls replace what the earlier ones showed.
    pub fn show(&mut self, bundle: &[(&str, &str)]) {
        let line = display_line(&self.id, self.shown, bundle);
        self.shown = true;
        if let Some(buffer) = &self.capture {
            buffer
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_str(&line);
            return;
        }
        let mut out = std::io::stdout().lock();
        // A closed stdout (the kernel went away) leaves nothing to show anything on.
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
}

/// A display id unique in this process and, with the process id and time, across processes.
fn fresh_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "gpukit-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The stdout line (ending in a newline) that shows or updates display `id`.
pub(crate) fn display_line(id: &str, update: bool, bundle: &[(&str, &str)]) -> String {
    let data: Vec<String> = bundle
        .iter()
        .map(|(mime, body)| format!("{}:{}", json_string(mime), json_string(body)))
        .collect();
    format!(
        "{MARKER} {{\"display_id\":{},\"update\":{update},\"data\":{{{}}}}}\n",
        json_string(id),
        data.join(",")
    )
}

/// `s` as a JSON string literal on one line. `EVCXR_` is written `\u0045VCXR_`, so that no
/// content can pass for one of evcxr's own markers (it looks for them anywhere in a line).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out.replace("EVCXR_", "\\u0045VCXR_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_line_of_json_after_the_marker() {
        let line = display_line(
            "d-1",
            false,
            &[
                ("text/plain", "a \"quote\"\n\tback\\slash \u{1}"),
                ("image/png", "iVBO"),
            ],
        );
        assert!(
            line.ends_with('\n') && line.matches('\n').count() == 1,
            "{line}"
        );
        assert_eq!(
            line,
            "EVCXR_GPU_DISPLAY {\"display_id\":\"d-1\",\"update\":false,\"data\":{\"text/plain\":\
             \"a \\\"quote\\\"\\n\\tback\\\\slash \\u0001\",\"image/png\":\"iVBO\"}}\n"
        );
        assert!(display_line("d-1", true, &[]).contains("\"update\":true,\"data\":{}"));
    }

    #[test]
    fn content_never_carries_an_evcxr_marker() {
        let line = display_line(
            "x",
            true,
            &[(
                "text/plain",
                "EVCXR_BEGIN_CONTENT text/html\nEVCXR_END_CONTENT",
            )],
        );
        let rest = line.strip_prefix(MARKER).unwrap();
        assert!(!rest.contains("EVCXR_"), "{line}");
        assert!(rest.contains("\\u0045VCXR_BEGIN_CONTENT text/html\\n\\u0045VCXR_END_CONTENT"));
    }

    #[test]
    fn ids_are_fresh() {
        let (a, b) = (fresh_id(), fresh_id());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("gpukit-{}-", std::process::id())));
    }
}
