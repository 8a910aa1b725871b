//! Session settings, read from environment variables (the kernelspec's `env` sets them).
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `EVCXR_GPU_GPUKIT` | the checkout this kernel was built from | path of `crates/gpukit`; `none` to not load it |
//! | `EVCXR_GPU_PRELUDE` | `use gpukit::prelude::*;` | Rust run at start (after loading gpukit) |
//! | `EVCXR_GPU_OPT` | `2` | optimisation level of cells and dependencies (`0`, `1`, `2`, `3`, `s`, `z`) |
//! | `EVCXR_GPU_CACHE_MIB` | `4096` | size of evcxr's compiled-dependency cache (0 disables it) |
//! | `EVCXR_GPU_WORKDIR` | `$XDG_CACHE_HOME/evcxr_gpu`, else `~/.cache/evcxr_gpu`, else `evcxr_gpu-UID` in the temporary directory | where session crates (and their build trees) live; made private (0700, owned by this user) or refused |

use std::path::PathBuf;

/// Everything that configures a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Path of the gpukit crate to load, or `None` for a plain Rust session.
    pub gpukit: Option<PathBuf>,
    /// Code evaluated once at start.
    pub prelude: String,
    /// evcxr `:opt` level.
    pub opt_level: String,
    /// evcxr `:cache` size in MiB.
    pub cache_mib: u64,
    /// Root of the per-session work directories.
    pub workdir: PathBuf,
}

/// Records the default device chosen at start in `GPUKIT_DEVICE`.
///
/// evcxr links each cell into its own shared object with its own copy of gpukit's statics; every
/// copy picks its default device on first use, from `GPUKIT_DEVICE` when set. Pinning it once
/// keeps the default (and `%device` changes) the same in every cell and probes CUDA only once.
pub const PIN_DEVICE: &str =
    "unsafe { std::env::set_var(\"GPUKIT_DEVICE\", gpukit::default_device().to_string()) }";

/// The gpukit of the checkout the kernel binary was built from.
pub fn built_in_gpukit() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("gpukit");
    p.canonicalize().unwrap_or(p)
}

impl Config {
    /// Reads the configuration through `get` (normally `std::env::var`).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let gpukit = match get("EVCXR_GPU_GPUKIT").map(|s| s.trim().to_string()) {
            Some(s) if s == "none" => None,
            Some(s) if !s.is_empty() => Some(PathBuf::from(s)),
            _ => Some(built_in_gpukit()),
        };
        if let Some(p) = &gpukit {
            if !p.join("Cargo.toml").is_file() {
                return Err(format!(
                    "EVCXR_GPU_GPUKIT: {} is not a crate directory (no Cargo.toml); set it to the gpukit crate or `none`",
                    p.display()
                ));
            }
        }
        let prelude = get("EVCXR_GPU_PRELUDE").unwrap_or_else(|| {
            if gpukit.is_some() {
                "use gpukit::prelude::*;".into()
            } else {
                String::new()
            }
        });
        let opt_level = get("EVCXR_GPU_OPT")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "2".into());
        if !["0", "1", "2", "3", "s", "z"].contains(&opt_level.as_str()) {
            return Err(format!(
                "EVCXR_GPU_OPT must be 0, 1, 2, 3, s or z, got `{opt_level}`"
            ));
        }
        let cache_mib = match get("EVCXR_GPU_CACHE_MIB") {
            Some(s) if !s.trim().is_empty() => s.trim().parse::<u64>().map_err(|_| {
                format!("EVCXR_GPU_CACHE_MIB must be a whole number of MiB, got `{s}`")
            })?,
            _ => 4096,
        };
        let workdir = get("EVCXR_GPU_WORKDIR")
            .filter(|s| !s.trim().is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                get("XDG_CACHE_HOME")
                    .filter(|s| !s.is_empty())
                    .map(|c| PathBuf::from(c).join("evcxr_gpu"))
            })
            .or_else(|| get("HOME").map(|h| PathBuf::from(h).join(".cache").join("evcxr_gpu")))
            .unwrap_or_else(|| {
                std::env::temp_dir().join(format!("evcxr_gpu-{}", super::workdir::euid()))
            });
        Ok(Config {
            gpukit,
            prelude,
            opt_level,
            cache_mib,
            workdir,
        })
    }

    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Config, String> {
        Config::from_lookup(|k| std::env::var(k).ok())
    }

    /// The evcxr commands and Rust that set up a session with this configuration.
    pub fn startup_code(&self) -> String {
        let mut code = format!(":opt {}\n:cache {}\n", self.opt_level, self.cache_mib);
        if let Some(p) = &self.gpukit {
            let path = p
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            code.push_str(&format!(":dep gpukit = {{ path = \"{path}\" }}\n"));
        }
        code.push_str(&self.prelude);
        if self.gpukit.is_some() {
            code.push('\n');
            code.push_str(PIN_DEVICE);
        }
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(vars: &[(&str, &str)]) -> Result<Config, String> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults_load_the_built_in_gpukit() {
        let c = cfg(&[("HOME", "/home/u")]).unwrap();
        assert_eq!(c.gpukit, Some(built_in_gpukit()));
        assert_eq!(c.prelude, "use gpukit::prelude::*;");
        assert_eq!(c.opt_level, "2");
        assert_eq!(c.cache_mib, 4096);
        assert_eq!(c.workdir, PathBuf::from("/home/u/.cache/evcxr_gpu"));
        let code = c.startup_code();
        assert!(code.starts_with(":opt 2\n:cache 4096\n:dep gpukit = { path = \""));
        assert!(code.ends_with(&format!("}}\nuse gpukit::prelude::*;\n{PIN_DEVICE}")));
    }

    #[test]
    fn plain_session_and_overrides() {
        let c = cfg(&[
            ("EVCXR_GPU_GPUKIT", "none"),
            ("EVCXR_GPU_OPT", "0"),
            ("EVCXR_GPU_CACHE_MIB", "0"),
            ("EVCXR_GPU_WORKDIR", "/w"),
        ])
        .unwrap();
        assert_eq!(c.gpukit, None);
        assert_eq!(c.prelude, "");
        assert_eq!(c.startup_code(), ":opt 0\n:cache 0\n");
        assert_eq!(c.workdir, PathBuf::from("/w"));
    }

    #[test]
    fn without_home_the_workdir_is_per_user() {
        let c = cfg(&[]).unwrap();
        let uid = crate::session::workdir::euid();
        assert_eq!(
            c.workdir,
            std::env::temp_dir().join(format!("evcxr_gpu-{uid}"))
        );
        let c = cfg(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/home/u")]).unwrap();
        assert_eq!(c.workdir, PathBuf::from("/x/evcxr_gpu"));
    }

    #[test]
    fn bad_values_are_explained() {
        assert!(cfg(&[("EVCXR_GPU_OPT", "fast")])
            .unwrap_err()
            .contains("EVCXR_GPU_OPT"));
        assert!(cfg(&[("EVCXR_GPU_CACHE_MIB", "lots")])
            .unwrap_err()
            .contains("MiB"));
        assert!(cfg(&[("EVCXR_GPU_GPUKIT", "/nonexistent")])
            .unwrap_err()
            .contains("no Cargo.toml"));
    }
}
