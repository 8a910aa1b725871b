//! gpukit's modules stay in layers (docs/ARCHITECTURE.md): each top-level module refers only to
//! modules of lower layers, so there is no import cycle between them. This test reads every
//! `crate::...` path in `src/` (comments and `$crate` macro paths aside, root re-exports
//! resolved to the module they come from) and fails on any reference that goes up or sideways.
//!
//! It also holds source files to about 600 lines: a longer file says why at its top, in a line
//! starting `//! Why this file is long:`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module may refer to modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["element", "error", "log", "process"],
    &["backend"],
    &["device"],
    // Test support (skip or fail without a GPU) for the tests of every layer above.
    &["testing"],
    &["kernel"],
    &["array"],
    &["image", "nvml", "plot"],
    // Combines two leaves: NVML samples drawn as a chart.
    &["monitor"],
    // The crate root and the macros' re-export surface may use everything.
    &["lib", "private"],
];

/// The longest a source file may be without a written reason.
const MAX_LINES: usize = 600;

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to: `array` for `src/array/ops.rs`, `lib` for `src/lib.rs`.
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src_dir()).expect("file under src");
    let first = rel.components().next().expect("non-empty path");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The source without comments (line comments, doc comments, block comments) and string
/// literals, so that paths in prose or text are not counted.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'r' && (b[i..].starts_with(b"r\"") || b[i..].starts_with(b"r#")) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j < b.len() && b[j] == b'"' && (i == 0 || !is_ident(b[i - 1])) {
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                i = j + close.len();
                out.push_str("\"\"");
            } else {
                out.push('r');
                i += 1;
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Names `lib.rs` re-exports at the crate root, mapped to the module they come from.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = code_only(lib);
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let module = rest.split("::").next().unwrap_or("").trim().to_string();
        let names = match (rest.find('{'), rest.rfind('}')) {
            (Some(a), Some(b)) => rest[a + 1..b].to_string(),
            _ => rest.rsplit("::").next().unwrap_or("").to_string(),
        };
        for name in names.split(',') {
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() && name != "*" && name != "self" {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}

/// Every `crate::<name>` a piece of code refers to (`$crate::` excluded), including the
/// names inside `crate::{a, b::c}`.
fn referenced_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let b = code.as_bytes();
    let mut start = 0;
    while let Some(pos) = code[start..].find("crate::") {
        let at = start + pos;
        start = at + "crate::".len();
        if at > 0 && (b[at - 1] == b'$' || is_ident(b[at - 1])) {
            continue;
        }
        let rest = &code[start..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let first = part.trim().split("::").next().unwrap_or("").trim();
                if !first.is_empty() {
                    names.insert(first.to_string());
                }
            }
        } else {
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !ident.is_empty() {
                names.insert(ident);
            }
        }
    }
    names
}

/// `(file, from, to)` for every reference of a module to another module.
fn module_references() -> Vec<(PathBuf, String, String)> {
    let lib = fs::read_to_string(src_dir().join("lib.rs")).expect("read lib.rs");
    let reexports = root_reexports(&lib);
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    files.sort();
    let mut refs = Vec::new();
    for file in files {
        let from = top_module(&file);
        let code = code_only(&fs::read_to_string(&file).expect("read source"));
        for name in referenced_names(&code) {
            let to = match reexports.get(&name) {
                Some(module) => module.clone(),
                None => name,
            };
            if layer_of(&to).is_some() && to != from {
                refs.push((file.clone(), from.clone(), to));
            }
        }
    }
    refs
}

#[test]
fn every_module_is_in_a_layer() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let unknown: BTreeSet<String> = files
        .iter()
        .map(|f| top_module(f))
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS in tests/layers.rs (add each to its layer, and to \
         docs/ARCHITECTURE.md): {unknown:?}"
    );
}

#[test]
fn modules_refer_only_to_lower_layers() {
    let bad: Vec<String> = module_references()
        .into_iter()
        .filter(|(_, from, to)| layer_of(to) >= layer_of(from))
        .filter(|(_, from, to)| !(layer_of(from) == Some(0) && layer_of(to) == Some(0)))
        .map(|(file, from, to)| {
            format!(
                "{} ({from}, layer {}) refers to `{to}` (layer {})",
                file.strip_prefix(src_dir()).unwrap().display(),
                layer_of(&from).unwrap(),
                layer_of(&to).unwrap()
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "references that break gpukit's layers (see docs/ARCHITECTURE.md):\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn the_base_layer_has_no_cycle() {
    let edges: BTreeSet<(String, String)> = module_references()
        .into_iter()
        .filter(|(_, from, to)| layer_of(from) == Some(0) && layer_of(to) == Some(0))
        .map(|(_, from, to)| (from, to))
        .collect();
    for (a, b) in &edges {
        assert!(
            !edges.contains(&(b.clone(), a.clone())),
            "`{a}` and `{b}` refer to each other"
        );
    }
}

#[test]
fn long_files_say_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["gpukit", "gpukit-macros", "evcxr_gpu"] {
        for sub in ["src", "tests"] {
            let dir = root.join(krate).join(sub);
            if dir.is_dir() {
                rust_files(&dir, &mut files);
            }
        }
    }
    assert!(
        !files.is_empty(),
        "no sources found under {}",
        root.display()
    );
    let mut long = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).expect("read source");
        let lines = text.lines().count();
        let says_why = text
            .lines()
            .take(15)
            .any(|l| l.trim_start().starts_with("//! Why this file is long:"));
        if lines > MAX_LINES && !says_why {
            long.push(format!("{} ({lines} lines)", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines without `//! Why this file is long:` near the top:\n  {}",
        long.join("\n  ")
    );
}

#[test]
fn the_checker_sees_through_comments_strings_and_reexports() {
    let code = code_only(
        "use crate::array::Array; // crate::kernel\n/* crate::nvml */ let s = \"crate::image\";\n\
         let r = r#\"crate::device\"#; $crate::launch!(); use crate::{error::Error, backend};",
    );
    let names = referenced_names(&code);
    let expected: BTreeSet<String> = ["array", "error", "backend"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, expected);
    let map = root_reexports("pub use device::{default_device, Device};\npub use array::Array;");
    assert_eq!(map.get("Device").map(String::as_str), Some("device"));
    assert_eq!(map.get("Array").map(String::as_str), Some("array"));
}
