//! Splitting a notebook cell into steps: Rust for evcxr, line magics, cell magics and `!cmd`.
//!
//! * A cell whose first non-blank line starts with `%%name` is a cell magic; the rest of the cell
//!   is its body.
//! * Otherwise lines starting (in column 0) with `%` are line magics and lines starting with `!`
//!   are shell commands, where they start a statement: not inside a string, a comment or
//!   brackets, and not continuing an unfinished statement (see [`crate::escapes`]). The lines
//!   between them are Rust (and evcxr `:` commands).
//!
//! Every Rust step keeps the cell's line numbers (earlier lines become blank lines), so evcxr's
//! error messages point at the right cell line.

use crate::escapes::escape_lines;
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
    let escapes = escape_lines(cell);
    for (i, line) in lines.iter().enumerate() {
        if !escapes[i] {
            if rust_start.is_none() {
                rust_start = Some(i);
            }
        } else if let Some(rest) = line.strip_prefix('%') {
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

    /// Asserts that `cell` is one Rust step holding the whole cell (no magic or shell line).
    fn all_rust(cell: &str) {
        assert_eq!(
            parse(cell, GK).unwrap(),
            vec![Step::Rust(cell.into())],
            "cell: {cell:?}"
        );
    }

    /// The kinds of the steps, to compare shapes without the generated code.
    fn kinds(cell: &str) -> Vec<&'static str> {
        parse(cell, GK)
            .unwrap()
            .iter()
            .map(|s| match s {
                Step::Rust(_) => "rust",
                Step::Print(_) => "print",
                Step::Shell(_) => "shell",
                Step::Cuda { .. } => "cuda",
                Step::Reflect { .. } => "reflect",
                Step::Doc(_) => "doc",
                Step::Features(_) => "features",
                Step::Crate { .. } => "crate",
            })
            .collect()
    }

    #[test]
    fn doc_magic_is_its_own_step() {
        assert_eq!(
            kinds("let v = 1;\n%doc Vec::new\nv"),
            ["rust", "doc", "rust"]
        );
        assert_eq!(
            parse("%doc  Array::zeros ", GK).unwrap(),
            vec![Step::Doc("Array::zeros".into())]
        );
    }

    #[test]
    fn multi_line_string_lines_starting_with_bang_or_percent_are_rust() {
        all_rust("let s = \"first line\n!not a shell command\n%time not a magic\n\";\ns");
        all_rust("let b = b\"bytes\n%lsmagic\n!ls\";\nb.len()");
        all_rust("let e = \"escaped quote \\\"\n!ls\n\";\ne");
        all_rust("println!(\"{}\", \"text\n%gpu\n\");");
    }

    #[test]
    fn raw_string_lines_starting_with_bang_or_percent_are_rust() {
        all_rust("let s = r#\"a \"quoted\" word\n%time f()\n!ls -l\n\"#;\ns");
        all_rust("let s = r\"plain raw\n!echo\n\";\ns");
        all_rust("let s = br##\"bytes \"# still inside\n%lsmagic\n\"##;\ns.len()");
    }

    #[test]
    fn comment_lines_starting_with_bang_or_percent_are_rust() {
        all_rust("/* a note\n%time f()\n!rm -rf build\n*/\nlet a = 1;");
        all_rust("let a = 1; /* outer /* nested */\n!ls\n*/\na");
        all_rust("/// doc comment\n/** block doc\n%lsmagic */\nfn f() {}");
    }

    #[test]
    fn percent_continuing_an_arithmetic_expression_is_rust() {
        all_rust("let x = 10\n% 3;\nx");
        all_rust("let y = (10\n%3);\ny");
        all_rust("let z = [1, 2][1]\n%time;\nz");
    }

    #[test]
    fn bang_negation_continuing_an_expression_is_rust() {
        all_rust("let flag = true;\nlet y =\n!flag;\ny");
        all_rust("let flag = true;\nlet z = flag &&\n!flag;\nz");
        all_rust("let v = vec![\n!true,\n];\nv");
        all_rust("let a = 1;\nlet b = a\n!= 2;\nb");
    }

    #[test]
    fn shell_line_at_statement_start_after_other_statements() {
        let cell = "let s = \"a\n!b\";\nfn f() -> u32 { 1 }\n!ls\nlet t = r#\"\n!c\"#;";
        assert_eq!(kinds(cell), vec!["rust", "shell", "rust"]);
        let steps = parse(cell, GK).unwrap();
        assert_eq!(steps[1], Step::Shell("ls".into()));
        assert_eq!(steps[2], Step::Rust("\n\n\n\nlet t = r#\"\n!c\"#;".into()));
    }

    #[test]
    fn time_line_at_statement_start_after_other_statements() {
        let cell = "let s = \"\n%lsmagic\";\n/* x\n!ls */ let a = 1;\nif a > 0 { println!(\"pos\"); }\n%time a + 1\nlet c = '\"';";
        assert_eq!(kinds(cell), vec!["rust", "rust", "rust"]);
        let steps = parse(cell, GK).unwrap();
        let Step::Rust(timed) = &steps[1] else {
            panic!("not rust")
        };
        assert!(timed.starts_with("\n\n\n\n\nlet __gk_t0"), "{timed}");
        assert!(timed.contains("Wall time"), "{timed}");
    }

    #[test]
    fn statement_starts_after_items_macros_and_attributes() {
        assert_eq!(
            kinds("macro_rules! m { () => { 1 } }\n!ls"),
            vec!["rust", "shell"]
        );
        assert_eq!(
            kinds("#[derive(Debug)]\nstruct P { x: u8 }\n%lsmagic"),
            vec!["rust", "print"]
        );
        assert_eq!(
            kinds("fn f<'a>(s: &'a str) -> &'a str { s }\n!ls"),
            vec!["rust", "shell"]
        );
        assert_eq!(kinds("let c = '\\'';\n!ls"), vec!["rust", "shell"]);
        assert_eq!(kinds(":dep rand = \"0.9\"\n!ls"), vec!["rust", "shell"]);
        assert_eq!(kinds("!echo \"it's\"\n!ls"), vec!["shell", "shell"]);
        // A struct literal does not end a `let`: the `!` line continues it.
        all_rust("struct S { a: bool }\nlet s = S { a: true }\n!= S { a: false }.a;");
        // Inside a block, a `%` line is Rust (the kernel cannot split a block).
        all_rust("fn g() -> i32 {\n    let x = 5;\n%lsmagic\n}");
    }
}
