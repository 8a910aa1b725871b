//! Displays that change while a cell runs (gpukit's live GPU monitor).
//!
//! evcxr collects `EVCXR_BEGIN_CONTENT` blocks until a cell ends, so they cannot update
//! anything while it runs. The kernel sets [`UPDATES_VAR`] for the process that runs the cells
//! and reads one more kind of stdout line there,
//!
//! ```text
//! EVCXR_GPU_DISPLAY {"display_id":"...","update":false,"data":{"image/png":"...","text/plain":"..."}}
//! ```
//!
//! which it turns into `display_data` with `transient.display_id` (`"update": false`) or
//! `update_display_data` (`"update": true`) as soon as it arrives. gpukit writes these lines
//! (`gpukit::monitor::display`); the two crates share only this format, which the protocol tests
//! check end to end. A line that does not parse is ordinary output.

use jupyter_protocol::Media;

/// The variable the kernel sets to `1` in its environment (so that evcxr's child process, which
/// runs the cells, inherits it): display lines are understood here.
pub const UPDATES_VAR: &str = "EVCXR_GPU_DISPLAY_UPDATES";

/// The start of a display line, followed by a space and one line of JSON.
pub const MARKER: &str = "EVCXR_GPU_DISPLAY ";

/// A display to show or update.
#[derive(Debug, Clone)]
pub struct Display {
    /// The Jupyter display id.
    pub id: String,
    /// Whether this replaces an earlier display with the same id.
    pub update: bool,
    /// The MIME bundle.
    pub data: Media,
}

/// Splits a stdout line into the text before a display marker and the display, when the line
/// carries one that parses. (Text before the marker is what the cell printed without a newline
/// just before the display was written.)
pub fn split_display(line: &str) -> Option<(&str, Display)> {
    let at = line.find(MARKER)?;
    let json: serde_json::Value = serde_json::from_str(&line[at + MARKER.len()..]).ok()?;
    let id = json.get("display_id")?.as_str()?.to_string();
    if id.is_empty() {
        return None;
    }
    let update = json.get("update")?.as_bool()?;
    let data = json.get("data")?;
    if !data.as_object()?.values().all(|v| v.is_string()) {
        return None;
    }
    let data: Media = serde_json::from_value(data.clone()).ok()?;
    Some((&line[..at], Display { id, update, data }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(m: &Media) -> serde_json::Value {
        serde_json::to_value(m).unwrap()
    }

    #[test]
    fn display_lines_become_displays() {
        let (before, d) = split_display(
            "EVCXR_GPU_DISPLAY {\"display_id\":\"d1\",\"update\":false,\"data\":{\"text/plain\":\"a\\nb\",\"image/png\":\"iVBO\"}}",
        )
        .unwrap();
        assert_eq!(before, "");
        assert_eq!((d.id.as_str(), d.update), ("d1", false));
        let v = text(&d.data);
        assert_eq!(v["text/plain"], "a\nb");
        assert_eq!(v["image/png"], "iVBO");
        let (before, d) = split_display(
            "50%EVCXR_GPU_DISPLAY {\"display_id\":\"d1\",\"update\":true,\"data\":{\"text/plain\":\"\\u0045VCXR_END_CONTENT\"}}",
        )
        .unwrap();
        assert_eq!(before, "50%");
        assert!(d.update);
        assert_eq!(text(&d.data)["text/plain"], "EVCXR_END_CONTENT");
    }

    #[test]
    fn anything_else_is_ordinary_output() {
        for line in [
            "hello",
            "EVCXR_GPU_DISPLAY",
            "EVCXR_GPU_DISPLAY not json",
            "EVCXR_GPU_DISPLAY {\"display_id\":\"\",\"update\":false,\"data\":{}}",
            "EVCXR_GPU_DISPLAY {\"display_id\":\"x\",\"data\":{}}",
            "EVCXR_GPU_DISPLAY {\"display_id\":\"x\",\"update\":1,\"data\":{}}",
            "EVCXR_GPU_DISPLAY {\"display_id\":\"x\",\"update\":true,\"data\":[]}",
            "EVCXR_GPU_DISPLAY {\"display_id\":\"x\",\"update\":true,\"data\":{\"text/plain\":3}}",
            "EVCXR_GPU_DISPLAY {\"display_id\":\"x\",\"update\":true,\"data\":{}} trailing",
        ] {
            assert!(split_display(line).is_none(), "{line}");
        }
    }
}
