//! Displaying a cell's value in one build instead of two, for common std types.
//!
//! evcxr shows a cell's trailing expression by first compiling `(expr).evcxr_display();` and,
//! when the type has no `evcxr_display` method (every std type), compiling the cell again with
//! `{:?}` formatting. The first build fails only at type checking, yet it is a whole cargo run and
//! most of a compile: with gpukit loaded, a cell ending in `a * 2` cost two builds. [`MODULE`]
//! gives the common std types (numbers, `bool`, `char`, `str`/`String`, slices and so `Vec`s and
//! arrays, `Option`, `Result`, tuples, maps and sets of `Debug` values, `()`) an
//! `evcxr_display` that prints exactly what evcxr's `{:?}` fallback prints, so the first build
//! succeeds. Types with their own `evcxr_display` (gpukit's arrays, plots, images) are
//! unchanged: inherent methods win over trait methods, and no smart pointer (`Box`, `Rc`, ...)
//! is given one, so auto-deref still reaches the inner value's method. Anything else takes evcxr's two builds
//! as before (so does an unsuffixed literal such as `1 + 1`, whose integer type is not known
//! when the method is looked up).
//!
//! evcxr's `:fmt` and `:types` change its fallback; after a cell uses either, [`OFF`] takes the
//! method away so every value goes through evcxr's own formatting again.

/// The module holding the trait and its impls. It is a file of its own, loaded with
/// `#[path]` (see [`items`]): when a type lacks the method, rustc's help names the trait's
/// definition, and evcxr, seeing that span in the cell crate's `lib.rs`, would report the error
/// instead of falling back to `{:?}`; a span in another file leaves the fallback to evcxr.
pub const MODULE: &str = r#"//! Written by evcxr_gpu: `evcxr_display` for common std types (see its session/show.rs).
use std::fmt::Debug;
pub trait EvcxrGpuShow { fn evcxr_display(&self); }
fn show<T: Debug + ?Sized>(value: &T) {
    print!("EVCXR_BEGIN_CONTENT text/plain\n{:?}\nEVCXR_END_CONTENT\n", value);
}
macro_rules! evcxr_gpu_show {
    ($($t:ty),*) => { $(impl EvcxrGpuShow for $t { fn evcxr_display(&self) { show(self) } })* };
}
evcxr_gpu_show!((), bool, char, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, str, String);
impl<T: Debug> EvcxrGpuShow for [T] { fn evcxr_display(&self) { show(self) } }
impl<T: Debug> EvcxrGpuShow for Option<T> { fn evcxr_display(&self) { show(self) } }
impl<T: Debug, E: Debug> EvcxrGpuShow for Result<T, E> { fn evcxr_display(&self) { show(self) } }
impl<A: Debug, B: Debug> EvcxrGpuShow for (A, B) { fn evcxr_display(&self) { show(self) } }
impl<A: Debug, B: Debug, C: Debug> EvcxrGpuShow for (A, B, C) { fn evcxr_display(&self) { show(self) } }
impl<A: Debug, B: Debug, C: Debug, D: Debug> EvcxrGpuShow for (A, B, C, D) { fn evcxr_display(&self) { show(self) } }
impl<K: Debug, V: Debug, S> EvcxrGpuShow for std::collections::HashMap<K, V, S> { fn evcxr_display(&self) { show(self) } }
impl<K: Debug, V: Debug> EvcxrGpuShow for std::collections::BTreeMap<K, V> { fn evcxr_display(&self) { show(self) } }
impl<T: Debug, S> EvcxrGpuShow for std::collections::HashSet<T, S> { fn evcxr_display(&self) { show(self) } }
impl<T: Debug> EvcxrGpuShow for std::collections::BTreeSet<T> { fn evcxr_display(&self) { show(self) } }
impl<T: Debug> EvcxrGpuShow for std::collections::VecDeque<T> { fn evcxr_display(&self) { show(self) } }
"#;

/// The file name of [`MODULE`] in the session's crate directory.
pub const FILE: &str = "evcxr_gpu_show.rs";

/// Writes [`MODULE`] into `crate_dir` and returns the items that load it (defined once at session
/// start; evcxr keeps them in every cell), or `None` if the file cannot be written (values are
/// then shown by evcxr alone).
pub fn items(crate_dir: &std::path::Path) -> Option<String> {
    let path = crate_dir.join(FILE);
    let path_text = path.to_str()?;
    if std::fs::read_to_string(&path).ok().as_deref() != Some(MODULE) {
        std::fs::write(&path, MODULE).ok()?;
    }
    Some(format!(
        "#[path = {path_text:?}] mod evcxr_gpu_show;\nuse evcxr_gpu_show::EvcxrGpuShow;"
    ))
}

/// Redefines the module with a trait that has no method: every value is shown by evcxr's own
/// fallback again (the `use` of the trait still resolves).
pub const OFF: &str = "mod evcxr_gpu_show { pub trait EvcxrGpuShow {} }";

/// Whether `code` has an evcxr command that changes how values are formatted (`:fmt`, `:types`).
pub fn changes_formatting(code: &str) -> bool {
    code.lines().any(|l| {
        let cmd = l.split_whitespace().next().unwrap_or("");
        cmd == ":fmt" || cmd == ":types"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_commands_are_recognised() {
        assert!(changes_formatting(":fmt {:#?}\nvec![1]"));
        assert!(changes_formatting("  :types"));
        assert!(!changes_formatting(":timing\nlet fmt = 1;"));
        assert!(!changes_formatting("let s = \":fmtx\";"));
    }

    /// The items as evcxr's crate gets them, compiled here: the value prints as `{:?}` between
    /// evcxr's content markers, and an inherent `evcxr_display` still wins.
    #[test]
    #[allow(clippy::needless_borrow)] // the kernel's rewrite hands evcxr a reference
    fn items_show_like_evcxrs_fallback_and_leave_inherent_methods_alone() {
        // A copy of the items with the printing captured.
        mod copy {
            thread_local!(pub static OUT: std::cell::RefCell<String> = Default::default());
            pub trait EvcxrGpuShow {
                fn evcxr_display(&self);
            }
            pub fn show<T: std::fmt::Debug + ?Sized>(value: &T) {
                OUT.with(|o| {
                    o.borrow_mut().push_str(&format!(
                        "EVCXR_BEGIN_CONTENT text/plain\n{value:?}\nEVCXR_END_CONTENT\n"
                    ))
                });
            }
            impl EvcxrGpuShow for i32 {
                fn evcxr_display(&self) {
                    show(self)
                }
            }
            impl<T: std::fmt::Debug> EvcxrGpuShow for [T] {
                fn evcxr_display(&self) {
                    show(self)
                }
            }
            #[derive(Debug)]
            pub struct Own;
            impl Own {
                pub fn evcxr_display(&self) {
                    OUT.with(|o| o.borrow_mut().push_str("own"));
                }
            }
        }
        use copy::EvcxrGpuShow;
        let take = || copy::OUT.with(|o| std::mem::take(&mut *o.borrow_mut()));
        // The kernel's rewrite hands evcxr a reference (`ref __gk_value`).
        let x = 42i32;
        (&x).evcxr_display();
        assert_eq!(
            take(),
            "EVCXR_BEGIN_CONTENT text/plain\n42\nEVCXR_END_CONTENT\n"
        );
        let v = vec![1, 2];
        (&v).evcxr_display();
        assert_eq!(
            take(),
            format!(
                "EVCXR_BEGIN_CONTENT text/plain\n{:?}\nEVCXR_END_CONTENT\n",
                &v
            )
        );
        (&copy::Own).evcxr_display();
        assert_eq!(take(), "own");
        // The real module carries the same format string and no impl for a smart pointer.
        assert!(MODULE.contains(r#""EVCXR_BEGIN_CONTENT text/plain\n{:?}\nEVCXR_END_CONTENT\n""#));
        for ptr in ["Box", "Rc", "Arc", "Cow"] {
            assert!(!MODULE.contains(ptr), "{ptr}");
        }
        assert!(OFF.starts_with("mod evcxr_gpu_show {") && OFF.contains("pub trait EvcxrGpuShow"));
    }

    #[test]
    fn items_load_the_written_module_by_absolute_path() {
        let dir = tempfile::tempdir().unwrap();
        let items = items(dir.path()).unwrap();
        let file = dir.path().join(FILE);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), MODULE);
        assert!(items.starts_with(&format!(
            "#[path = {:?}] mod evcxr_gpu_show;",
            file.to_str().unwrap()
        )));
        assert!(items.ends_with("use evcxr_gpu_show::EvcxrGpuShow;"));
        assert!(super::items(&dir.path().join("missing")).is_none());
    }
}
