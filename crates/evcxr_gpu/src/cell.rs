//! Splitting a notebook cell into steps: Rust for evcxr, line magics, cell magics and `!cmd`.
//!
//! * A cell whose first non-blank line starts with `%%name` is a cell magic; the rest of the cell
//!   is its body.
//! * Otherwise lines starting (in column 0) with `%` are line magics and lines starting with `!`
//!   are shell commands; the lines between them are Rust (and evcxr `:` commands).
//!
//! Every Rust step keeps the cell's line numbers (earlier lines become blank lines), so evcxr's
//! error messages point at the right cell line.

use crate::magics::{self, Context, MagicError, Step};

/// Turns the source of a cell into the steps to run, in order.
pub fn parse(cell: &str, ctx: Context) -> Result<Vec<Step>, MagicError> {
    let lines: Vec<&str> = cell.split('\n').collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    if let Some(rest) = lines[first].trim_start().strip_prefix("%%") {
        let (name, args) = split_name(rest);
        if name.is_empty() {
            return Err(MagicError(format!(
                "`%%` needs a magic name. Known magics: {}",
                magics::known_magics()
            )));
        }
        let body = lines[first + 1..].join("\n");
        let step = magics::lower_cell(name, args, &body, ctx)?;
        return Ok(vec![align(step, first)]);
    }

    let mut steps = Vec::new();
    let mut rust_start: Option<usize> = None;
    let flush = |steps: &mut Vec<Step>, start: &mut Option<usize>, end: usize| {
        if let Some(s) = start.take() {
            let chunk = lines[s..end].join("\n");
            let meaningful = chunk
                .lines()
                .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"));
            if meaningful {
                steps.push(align(Step::Rust(chunk), s));
            }
        }
    };
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix('%') {
            flush(&mut steps, &mut rust_start, i);
            if rest.starts_with('%') {
                return Err(MagicError(format!(
                    "cell magic %{} must be on the first line of the cell",
                    rest.split_whitespace().next().unwrap_or("%")
                )));
            }
            let (name, args) = split_name(rest);
            if name.is_empty() {
                return Err(MagicError(format!(
                    "`%` needs a magic name. Known magics: {}",
                    magics::known_magics()
                )));
            }
            steps.push(align(magics::lower_line(name, args, ctx)?, i));
        } else if let Some(cmd) = line.strip_prefix('!') {
            flush(&mut steps, &mut rust_start, i);
            steps.push(magics::shell::lower(cmd)?);
        } else if rust_start.is_none() {
            rust_start = Some(i);
        }
    }
    flush(&mut steps, &mut rust_start, lines.len());
    Ok(steps)
}

/// Splits `name args` after the `%`/`%%`.
fn split_name(rest: &str) -> (&str, &str) {
    let rest = rest.trim_end_matches('\r');
    match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    }
}

/// Prefixes a Rust step with blank lines so that its first line is cell line `line + 1`.
fn align(step: Step, line: usize) -> Step {
    match step {
        Step::Rust(code) => Step::Rust(format!("{}{code}", "\n".repeat(line))),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn plain_rust_is_one_step() {
        assert_eq!(
            parse("let x = 1;\nx", GK).unwrap(),
            vec![Step::Rust("let x = 1;\nx".into())]
        );
        assert_eq!(parse("  \n\n", GK).unwrap(), vec![]);
    }

    #[test]
    fn evcxr_commands_stay_with_rust() {
        assert_eq!(
            parse(":dep rand\nlet x = 1;", GK).unwrap(),
            vec![Step::Rust(":dep rand\nlet x = 1;".into())]
        );
    }

    #[test]
    fn line_magics_split_and_keep_line_numbers() {
        let steps = parse("let a = 1;\n%lsmagic\n!echo hi\nlet b = 2;\nb", GK).unwrap();
        assert_eq!(steps.len(), 4);
        assert_eq!(steps[0], Step::Rust("let a = 1;".into()));
        assert!(matches!(steps[1], Step::Print(_)));
        assert_eq!(steps[2], Step::Shell("echo hi".into()));
        assert_eq!(steps[3], Step::Rust("\n\n\nlet b = 2;\nb".into()));
    }

    #[test]
    fn line_magic_code_lands_on_its_line() {
        let steps = parse("// first\n%device cpu", GK).unwrap();
        let Step::Rust(code) = &steps[0] else {
            panic!("not rust")
        };
        assert!(code.starts_with("\nlet __gk_device = gpukit::Device::cpu();"));
    }

    #[test]
    fn cell_magic_takes_the_whole_cell() {
        let steps = parse("\n%%time\nlet x = 1;", GK).unwrap();
        let Step::Rust(code) = &steps[0] else {
            panic!("not rust")
        };
        let line3 = code.lines().nth(2).unwrap();
        assert!(line3.starts_with("let x = 1; gpukit::synchronize()?;"));
        assert!(line3.contains("Wall time"));
    }

    #[test]
    fn misplaced_and_unknown_magics() {
        let e = parse("let x = 1;\n%%time", GK).unwrap_err();
        assert!(e.0.contains("must be on the first line"));
        let e = parse("%frobnicate", GK).unwrap_err();
        assert!(e.0.contains("unknown magic %frobnicate") && e.0.contains("%%cuda"));
        let e = parse("%%", GK).unwrap_err();
        assert!(e.0.contains("needs a magic name"));
        assert!(parse("!", GK).is_err());
    }

    #[test]
    fn indented_percent_is_rust() {
        let steps = parse("let x = 7\n    % 3;\nx", GK).unwrap();
        assert_eq!(steps, vec![Step::Rust("let x = 7\n    % 3;\nx".into())]);
    }
}
