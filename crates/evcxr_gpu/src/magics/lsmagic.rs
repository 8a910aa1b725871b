//! `%lsmagic`: lists the magics with one line each.

use super::{no_args, MagicError, Step, CELL_MAGICS, LINE_MAGICS};

/// The listing `%lsmagic` prints.
pub fn listing() -> String {
    let mut s = String::from("Line magics:\n");
    for (name, help) in LINE_MAGICS {
        s.push_str(&format!("  %{name:<10} {help}\n"));
    }
    s.push_str("Cell magics:\n");
    for (name, help) in CELL_MAGICS {
        s.push_str(&format!("  %%{name:<9} {help}\n"));
    }
    s.push_str("Other:\n  !cmd        run a shell command\n  :help       evcxr commands (:dep, :vars, :opt, ...)\n");
    s
}

/// Lowers `%lsmagic` to text the kernel prints.
pub fn lower(args: &str) -> Result<Step, MagicError> {
    no_args("%lsmagic", args)?;
    Ok(Step::Print(listing()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_magic() {
        let Step::Print(text) = lower("").unwrap() else {
            panic!("not print")
        };
        for (n, _) in LINE_MAGICS {
            assert!(text.contains(&format!("%{n} ")), "{n}");
        }
        for (n, _) in CELL_MAGICS {
            assert!(text.contains(&format!("%%{n} ")), "{n}");
        }
        assert!(text.contains("!cmd"));
    }
}
