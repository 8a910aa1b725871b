//! `:vars`, answered by the kernel: the session's variables and their types, as evcxr lists them,
//! less the kernel's own helper variables (names starting with [`RESERVED_PREFIX`], such as the
//! start time `%%time` keeps or the module a `%%cuda` cell loaded), as text and as an HTML table.

use jupyter_protocol::Media;

/// Names the kernel's magics give their own variables; `:vars` leaves them out.
pub const RESERVED_PREFIX: &str = "__gk_";

/// Whether `code` is the `:vars` command (alone in its cell).
pub fn is_vars_command(code: &str) -> bool {
    code.trim() == ":vars"
}

/// The `:vars` display of `vars` (name, type), in the session's order.
pub fn vars_media<'a>(vars: impl Iterator<Item = (&'a str, &'a str)>) -> Media {
    let mut text = String::new();
    let mut html = String::from("<table><tr><th>Variable</th><th>Type</th></tr>");
    for (name, ty) in vars.filter(|(name, _)| !name.starts_with(RESERVED_PREFIX)) {
        text.push_str(&format!("{name}: {ty}\n"));
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(name),
            escape(ty)
        ));
    }
    html.push_str("</table>");
    if text.is_empty() {
        text.push_str("no variables\n");
    }
    serde_json::from_value(serde_json::json!({ "text/plain": text, "text/html": html }))
        .unwrap_or_default()
}

/// `s` with HTML's special characters escaped (types hold `<`, `>` and `&`).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(media: &Media, mime: &str) -> String {
        serde_json::to_value(media).unwrap()[mime]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn only_the_command_alone_is_vars() {
        assert!(is_vars_command(":vars"));
        assert!(is_vars_command("  :vars\n"));
        assert!(!is_vars_command(":vars x"));
        assert!(!is_vars_command("let vars = 1;"));
    }

    #[test]
    fn kernel_variables_are_left_out_and_types_escaped() {
        let vars = [
            ("x", "Array<f64>"),
            ("__gk_t0", "std::time::Instant"),
            ("saxpy", "CudaKernel"),
            ("__gk_cuda_module_saxpy", "Module"),
            ("pair", "(u8, &'static str)"),
        ];
        let media = vars_media(vars.into_iter());
        assert_eq!(
            field(&media, "text/plain"),
            "x: Array<f64>\nsaxpy: CudaKernel\npair: (u8, &'static str)\n"
        );
        let html = field(&media, "text/html");
        assert!(html.contains("<tr><td>x</td><td>Array&lt;f64&gt;</td></tr>"));
        assert!(html.contains("<td>(u8, &amp;'static str)</td>"));
        assert!(!html.contains("__gk_"));
        assert!(html.ends_with("</table>"));
    }

    #[test]
    fn an_empty_session_says_so() {
        let media = vars_media([("__gk_t0", "Instant")].into_iter());
        assert_eq!(field(&media, "text/plain"), "no variables\n");
    }
}
