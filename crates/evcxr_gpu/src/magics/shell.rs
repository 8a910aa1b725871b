//! `!cmd`: runs a shell command with `sh -c`, streaming its output into the cell.

use super::{MagicError, Step};

/// Lowers `!cmd` (the text after `!`).
pub fn lower(command: &str) -> Result<Step, MagicError> {
    let c = command.trim();
    if c.is_empty() {
        return Err(MagicError(
            "! needs a shell command, e.g. `!nvidia-smi`".into(),
        ));
    }
    Ok(Step::Shell(c.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands() {
        assert_eq!(lower(" ls -l ").unwrap(), Step::Shell("ls -l".into()));
        assert!(lower("  ").is_err());
    }
}
