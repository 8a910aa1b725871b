//! Writing the Jupyter kernelspec: `kernel.json` from the template in `kernels/rust-gpu/` with
//! the absolute path of this binary, plus the logos. The binary loads the gpukit of the checkout
//! it was built from (see `session::config`), so the kernelspec needs no other setting.

use std::path::{Path, PathBuf};

/// Name of the kernelspec directory (what `jupyter kernelspec list` shows).
pub const KERNEL_NAME: &str = "rust-gpu";

/// Fills the template's `@BINARY@` placeholder (JSON-escaped).
pub fn render(template: &str, binary: &Path) -> Result<String, String> {
    let esc = |s: &str| {
        let quoted = serde_json::to_string(s).unwrap_or_default();
        quoted[1..quoted.len() - 1].to_string()
    };
    if !template.contains("@BINARY@") {
        return Err("kernel.json template has no @BINARY@ placeholder".into());
    }
    let text = template.replace("@BINARY@", &esc(&binary.display().to_string()));
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("kernel.json template is not JSON: {e}"))?;
    if v["display_name"].as_str().is_none() || v["language"] != "rust" {
        return Err("kernel.json template needs display_name and language \"rust\"".into());
    }
    Ok(text)
}

/// Writes `<kernels_dir>/rust-gpu/` from `template_dir`; returns the directory written.
pub fn install(kernels_dir: &Path, template_dir: &Path, binary: &Path) -> Result<PathBuf, String> {
    let template_path = template_dir.join("kernel.json");
    let template = std::fs::read_to_string(&template_path)
        .map_err(|e| format!("cannot read {}: {e}", template_path.display()))?;
    let binary = binary
        .canonicalize()
        .map_err(|e| format!("kernel binary {}: {e}", binary.display()))?;
    let json = render(&template, &binary)?;
    let dest = kernels_dir.join(KERNEL_NAME);
    std::fs::create_dir_all(&dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    std::fs::write(dest.join("kernel.json"), json)
        .map_err(|e| format!("cannot write kernel.json: {e}"))?;
    for logo in ["logo-32x32.png", "logo-64x64.png"] {
        let src = template_dir.join(logo);
        if src.is_file() {
            std::fs::copy(&src, dest.join(logo)).map_err(|e| format!("cannot copy {logo}: {e}"))?;
        }
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = r#"{"argv": ["@BINARY@", "--connection-file", "{connection_file}"], "display_name": "Rust (GPU)", "language": "rust"}"#;

    #[test]
    fn renders_absolute_paths_escaped() {
        let out = render(T, Path::new("/opt/x \"q\"/evcxr_gpu")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["argv"][0], "/opt/x \"q\"/evcxr_gpu");
        assert_eq!(v["argv"][2], "{connection_file}");
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(render("{}", Path::new("/b"))
            .unwrap_err()
            .contains("@BINARY@"));
        assert!(render("[\"@BINARY@\"", Path::new("/b"))
            .unwrap_err()
            .contains("not JSON"));
    }

    #[test]
    fn installs_into_kernels_dir() {
        let dir = tempfile::tempdir().unwrap();
        let tpl = dir.path().join("tpl");
        std::fs::create_dir_all(&tpl).unwrap();
        std::fs::write(tpl.join("kernel.json"), T).unwrap();
        std::fs::write(tpl.join("logo-32x32.png"), b"png").unwrap();
        let bin = dir.path().join("bin");
        std::fs::write(&bin, b"").unwrap();
        let dest = install(&dir.path().join("kernels"), &tpl, &bin).unwrap();
        assert!(dest.join("kernel.json").is_file() && dest.join("logo-32x32.png").is_file());
        // Idempotent.
        install(&dir.path().join("kernels"), &tpl, &bin).unwrap();
        assert!(install(&dir.path().join("k"), &tpl, &dir.path().join("missing")).is_err());
    }
}
