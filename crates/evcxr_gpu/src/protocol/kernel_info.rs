//! The `kernel_info_reply`: who this kernel is and which language it speaks.

use jupyter_protocol::{CodeMirrorMode, HelpLink, KernelInfoReply, LanguageInfo, ReplyStatus};

/// The banner shown by consoles.
pub const BANNER: &str = "evcxr_gpu: Rust in Jupyter with GPU magics (gpukit). %lsmagic lists the magics, :help the evcxr commands.";

/// The version of `rustc` on PATH, or an empty string.
pub fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_default()
}

/// Builds the reply.
pub fn reply(rustc: &str) -> KernelInfoReply {
    KernelInfoReply {
        status: ReplyStatus::Ok,
        protocol_version: "5.3".into(),
        implementation: "evcxr_gpu".into(),
        implementation_version: env!("CARGO_PKG_VERSION").into(),
        language_info: LanguageInfo {
            name: "rust".into(),
            version: rustc.into(),
            mimetype: Some("text/rust".into()),
            file_extension: Some(".rs".into()),
            pygments_lexer: Some("rust".into()),
            codemirror_mode: Some(CodeMirrorMode::Simple("rust".into())),
            nbconvert_exporter: None,
        },
        banner: BANNER.into(),
        help_links: vec![HelpLink {
            text: "evcxr commands".into(),
            url: "https://github.com/evcxr/evcxr/blob/main/COMMON.md".into(),
        }],
        debugger: false,
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_rust() {
        let r = serde_json::to_value(reply("1.95.0")).unwrap();
        assert_eq!(r["language_info"]["name"], "rust");
        assert_eq!(r["language_info"]["file_extension"], ".rs");
        assert_eq!(r["implementation"], "evcxr_gpu");
        assert_eq!(r["protocol_version"], "5.3");
    }
}
