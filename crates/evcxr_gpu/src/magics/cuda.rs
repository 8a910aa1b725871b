//! `%%cuda`: a cell of CUDA C++ compiled with NVRTC through `gpukit::Module::from_cuda`; each
//! `extern "C" __global__` function becomes a variable holding a launchable gpukit kernel.
//! When the default device is the CPU the session does not run it and says so (see
//! [`Step::Cuda`]).
//!
//! The source handed to NVRTC starts with an empty line standing for the `%%cuda` line, so the
//! line numbers in NVRTC's messages are the cell's line numbers.

use super::{no_args, raw_string, require_gpukit, Context, MagicError, Step};

/// Rust keywords that can be used as names only as raw identifiers (`r#type`).
const RAW_OK: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "try", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof",
    "unsized", "virtual", "yield",
];

/// Keywords that cannot name a variable even as raw identifiers.
const NEVER: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Removes comments and string/char literals, keeping everything else (and line breaks).
fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            out.push(q as char);
            i += 1;
            while i < b.len() && b[i] != q && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                out.push(if i < b.len() && b[i] == b'C' {
                    'C'
                } else {
                    ' '
                });
                i += 1;
            }
            if i < b.len() && b[i] == q {
                out.push(q as char);
                i += 1;
            }
        } else {
            let ch = src[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Splits C++ source into identifiers, string literals and single punctuation characters.
fn tokens(src: &str) -> Vec<String> {
    let mut toks = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push(chars[start..i].iter().collect());
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            i += 1;
            toks.push(chars[start..i.min(chars.len())].iter().collect());
        } else {
            toks.push(c.to_string());
            i += 1;
        }
    }
    toks
}

/// The kernels of a CUDA source: `extern "C"` ones (become variables) and C++-linkage ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kernels {
    /// `extern "C" __global__` function names, in source order.
    pub extern_c: Vec<String>,
    /// `__global__` functions without C linkage (their names are mangled; not exported).
    pub mangled: Vec<String>,
}

/// Finds the `__global__` functions in `src` and whether each has `extern "C"` linkage.
pub fn find_kernels(src: &str) -> Kernels {
    let toks = tokens(&strip_comments(src));
    let mut k = Kernels::default();
    let mut depth_extern_block: Vec<usize> = Vec::new();
    let mut brace_depth = 0usize;
    let mut decl_start = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match toks[i].as_str() {
            "{" => {
                if i >= 2 && toks[i - 2] == "extern" && toks[i - 1] == "\"C\"" {
                    depth_extern_block.push(brace_depth + 1);
                }
                brace_depth += 1;
                decl_start = i + 1;
            }
            "}" => {
                if depth_extern_block.last() == Some(&brace_depth) {
                    depth_extern_block.pop();
                }
                brace_depth = brace_depth.saturating_sub(1);
                decl_start = i + 1;
            }
            ";" => decl_start = i + 1,
            "__global__" => {
                let in_block = !depth_extern_block.is_empty();
                let prefix = &toks[decl_start..i];
                let extern_c = in_block
                    || prefix
                        .windows(2)
                        .any(|w| w[0] == "extern" && w[1] == "\"C\"");
                // The name is the identifier before the first `(` that is not __launch_bounds__'s.
                let mut j = i + 1;
                let mut name = None;
                while j < toks.len() && toks[j] != ";" && toks[j] != "{" {
                    if toks[j] == "__launch_bounds__" {
                        let mut d = 0;
                        j += 1;
                        while j < toks.len() {
                            if toks[j] == "(" {
                                d += 1;
                            } else if toks[j] == ")" {
                                d -= 1;
                                if d == 0 {
                                    break;
                                }
                            }
                            j += 1;
                        }
                    } else if toks[j] == "(" {
                        name = toks.get(j - 1).cloned();
                        break;
                    }
                    j += 1;
                }
                if let Some(n) =
                    name.filter(|n| n.starts_with(|c: char| c.is_alphabetic() || c == '_'))
                {
                    let list = if extern_c {
                        &mut k.extern_c
                    } else {
                        &mut k.mangled
                    };
                    if !list.contains(&n) {
                        list.push(n);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    k
}

/// The Rust variable name for kernel `name` (raw identifier for Rust keywords).
pub fn variable_name(name: &str) -> Result<String, MagicError> {
    if NEVER.contains(&name) {
        Err(MagicError(format!(
            "the kernel `{name}` cannot become a Rust variable (its name is reserved in Rust); rename it"
        )))
    } else if RAW_OK.contains(&name) {
        Ok(format!("r#{name}"))
    } else {
        Ok(name.to_string())
    }
}

/// Lowers `%%cuda` with the CUDA C++ body.
pub fn lower(args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    no_args("%%cuda", args)?;
    require_gpukit("%%cuda", ctx)?;
    let kernels = find_kernels(body);
    if kernels.extern_c.is_empty() {
        let hint = if kernels.mangled.is_empty() {
            String::new()
        } else {
            format!(
                " ({} has C++ linkage: declare it extern \"C\" __global__)",
                kernels.mangled.join(", ")
            )
        };
        return Err(MagicError(format!(
            "%%cuda found no extern \"C\" __global__ function in the cell{hint}"
        )));
    }
    // The string literal starts on the magic line, so NVRTC's line N is the cell's line N.
    // One module variable per first kernel name, so `%ptx` finds the module of each kernel.
    let module_var = format!("__gk_cuda_module_{}", kernels.extern_c[0]);
    let mut code = format!(
        "let {module_var} = gpukit::Module::from_cuda({})?;",
        raw_string(&format!("\n{body}\n"))
    );
    for name in &kernels.extern_c {
        let var = variable_name(name)?;
        code.push_str(&format!(" let {var} = {module_var}.kernel(\"{name}\")?;"));
    }
    let names: Vec<&str> = kernels.extern_c.iter().map(String::as_str).collect();
    code.push_str(&format!(
        " println!(\"CUDA kernels defined: {}\");",
        names.join(", ")
    ));
    if !kernels.mangled.is_empty() {
        code.push_str(&format!(
            " println!(\"note: {} not exported (no extern \\\"C\\\")\");",
            kernels.mangled.join(", ")
        ));
    }
    Ok(Step::Cuda {
        code,
        kernels: kernels.extern_c,
        module_var,
        source: body.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY: &str = r#"// y = a*x + y
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned long long n) {
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__device__ float helper(float v) { return v; }
extern "C" __global__ void __launch_bounds__(256) scale(float* y, float s) { y[threadIdx.x] *= s; }
template <typename T> __global__ void generic(T* p) {}
/* extern "C" __global__ void commented(int* p) {} */
extern "C" {
  __global__ void in_block(int* p) {}
}
"#;

    #[test]
    fn finds_extern_c_kernels_only() {
        let k = find_kernels(SAXPY);
        assert_eq!(k.extern_c, vec!["saxpy", "scale", "in_block"]);
        assert_eq!(k.mangled, vec!["generic"]);
    }

    #[test]
    fn lowering_defines_one_variable_per_kernel() {
        let Step::Cuda {
            code,
            kernels,
            module_var,
            source,
        } = lower("", SAXPY, Context { gpukit: true }).unwrap()
        else {
            panic!("not cuda")
        };
        assert_eq!(kernels, vec!["saxpy", "scale", "in_block"]);
        assert_eq!(module_var, "__gk_cuda_module_saxpy");
        assert_eq!(source, SAXPY);
        assert!(code.starts_with(
            "let __gk_cuda_module_saxpy = gpukit::Module::from_cuda(r#\"\n// y = a*x + y"
        ));
        assert!(code.contains("\"#)?; let saxpy = __gk_cuda_module_saxpy.kernel(\"saxpy\")?;"));
        assert!(code.contains("let scale = __gk_cuda_module_saxpy.kernel(\"scale\")?;"));
        assert!(code.contains("let in_block = "));
        assert!(code.contains("note: generic not exported"));
        // The body starts on line 2 of the lowered code, like in the cell.
        assert_eq!(code.lines().nth(1), Some("// y = a*x + y"));
    }

    #[test]
    fn keyword_names_become_raw_identifiers() {
        assert_eq!(variable_name("type").unwrap(), "r#type");
        assert_eq!(variable_name("saxpy").unwrap(), "saxpy");
        assert!(variable_name("self").is_err());
    }

    #[test]
    fn no_kernels_is_an_error() {
        let e = lower(
            "",
            "__device__ int f() { return 1; }",
            Context { gpukit: true },
        )
        .unwrap_err();
        assert!(e.0.contains("no extern \"C\" __global__"));
        let e = lower("", "__global__ void k(int* p) {}", Context { gpukit: true }).unwrap_err();
        assert!(e.0.contains("k has C++ linkage"));
        assert!(lower("-x", SAXPY, Context { gpukit: true }).is_err());
    }
}
