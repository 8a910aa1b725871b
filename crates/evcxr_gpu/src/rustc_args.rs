//! Reading the rustc command line this binary receives as evcxr's rustc wrapper (rustc's path,
//! then rustc's arguments, as cargo passes them).

use std::ffi::OsString;

/// The crate being compiled: the value after `--crate-name`.
pub fn crate_name(args: &[OsString]) -> Option<&str> {
    args.windows(2)
        .find(|pair| pair[0] == "--crate-name")
        .and_then(|pair| pair[1].to_str())
}

/// The codegen options, in order, whether written `-C opt` or `-Copt` (those that are not
/// UTF-8 are left out).
pub fn codegen_options(args: &[OsString]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut iter = args.iter().map(|a| a.to_str());
    while let Some(arg) = iter.next() {
        match arg {
            Some("-C") => out.extend(iter.next().flatten()),
            Some(a) => out.extend(a.strip_prefix("-C")),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn crate_name_is_the_value_of_its_option() {
        assert_eq!(
            crate_name(&os("rustc --crate-name ctx --edition=2024")),
            Some("ctx")
        );
        assert_eq!(crate_name(&os("rustc --cfg ctx")), None);
        assert_eq!(crate_name(&os("rustc --crate-name")), None);
    }

    #[test]
    fn codegen_options_in_both_spellings() {
        let args = os("rustc -C opt-level=2 --cfg x -Cmetadata=ab -C lto=off -C");
        assert_eq!(
            codegen_options(&args),
            ["opt-level=2", "metadata=ab", "lto=off"]
        );
    }
}
