//! `%doc NAME`: the documentation of a Rust item, shown in the pager (like IPython's `NAME?`).
//!
//! The kernel answers it with rust-analyzer's hover text for `NAME` (the same text as the
//! inspector, Shift+Tab), sent as a `page` payload of the execute reply.

use super::{MagicError, Step};

/// Lowers `%doc NAME` (a path such as `Vec::new`, or `value.method`).
pub fn lower(args: &str) -> Result<Step, MagicError> {
    let name = args.trim();
    if name.is_empty() {
        return Err(MagicError(
            "%doc needs something to document: %doc NAME (e.g. %doc Vec::new)".into(),
        ));
    }
    Ok(Step::Doc(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_one_name() {
        assert_eq!(lower(" Vec::new ").unwrap(), Step::Doc("Vec::new".into()));
        assert!(lower("  ").unwrap_err().0.contains("%doc NAME"));
    }
}
