//! `%%graph [NAME] [-n N]`: captures the cell into a `gpukit::Graph` and replays it.
//!
//! The cell's kernel launches and in-place array operations are recorded once (nothing runs
//! during the capture), then the graph is launched `N` times (default: once without a name).
//! With `NAME` the graph is kept in the session variable `NAME` for later cells
//! (`NAME.launch()?`, `NAME.launch_n(100)?`, `NAME.update(|| ..)?`) and launched only with
//! `-n N`. Operations that cannot be captured (new arrays, reading data, synchronising) make the
//! cell fail with gpukit's "... cannot run inside a graph capture: ..." error. The cell's last
//! expression, if it has one, must be `()` or a `gpukit::Result<()>` (a `launch!(..)` without `;`).
//!
//! The lowering keeps the cell's lines where they were: the magic line becomes the start of the
//! capture closure, the body follows unchanged (its trailing expression wrapped in place), and the
//! closure ends on a line of its own.

use super::{require_gpukit, timeit, Context, MagicError, Step};
use crate::rewrite::{tail, Tail};

/// Parsed `%%graph` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Session variable to keep the graph in.
    pub name: Option<String>,
    /// Launches after the capture (`-n`).
    pub launches: Option<u64>,
}

/// Parses `[NAME] [-n N]` (in any order).
pub fn parse_options(args: &str) -> Result<Options, MagicError> {
    let mut opts = Options {
        name: None,
        launches: None,
    };
    let mut toks = args.split_whitespace();
    while let Some(tok) = toks.next() {
        if tok == "-n" {
            let v = toks
                .next()
                .ok_or_else(|| MagicError("%%graph: -n needs a number".into()))?;
            let n = v
                .parse::<u64>()
                .map_err(|_| MagicError(format!("%%graph: -n needs a whole number, got `{v}`")))?;
            opts.launches = Some(n);
        } else if tok.starts_with('-') {
            return Err(MagicError(format!(
                "%%graph: unknown option `{tok}` (use %%graph [NAME] [-n LAUNCHES])"
            )));
        } else if is_ident(tok) && opts.name.is_none() {
            opts.name = Some(tok.to_string());
        } else {
            return Err(MagicError(format!(
                "%%graph takes one variable name (a Rust identifier) and -n LAUNCHES, got `{tok}`"
            )));
        }
    }
    Ok(opts)
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        && s != "_"
}

/// `gpukit::Graph::capture(|| -> gpukit::Result<()> {` + `sep` + the body as the closure's
/// statements + `sep` + `})` (without `?`): the capture of `body` as one expression, the body's
/// lines kept (`sep` = "\n") and its trailing expression made the closure's result.
pub(crate) fn capture_expr(body: &str, sep: &str) -> String {
    let (inner, ret) = match tail(body) {
        Some(Tail::Expr { start, end }) => (
            format!(
                "{}gpukit::__private::GraphStep::into_step({}){}",
                &body[..start],
                &body[start..end],
                &body[end..]
            ),
            "",
        ),
        // Statements, nothing, or code that does not parse (rustc then says what is wrong).
        _ => (body.to_string(), "Ok(()) "),
    };
    format!("gpukit::Graph::capture(|| -> gpukit::Result<()> {{{sep}{inner}{sep}{ret}}})")
}

/// Lowers `%%graph [NAME] [-n N]` with the cell body.
pub fn lower(args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    let opts = parse_options(args)?;
    require_gpukit("%%graph", ctx)?;
    if body.trim().is_empty() {
        return Err(MagicError("%%graph needs code below the magic line".into()));
    }
    let capture = capture_expr(body, "\n");
    let (open, var, close) = match &opts.name {
        // A top-level `let`: evcxr keeps the variable for later cells.
        Some(name) => (format!("let {name}: gpukit::Graph = "), name.as_str(), ""),
        None => (
            "{ let __gk_graph: gpukit::Graph = ".to_string(),
            "__gk_graph",
            " }",
        ),
    };
    let launches = opts
        .launches
        .unwrap_or(if opts.name.is_some() { 0 } else { 1 });
    let label = opts
        .name
        .as_deref()
        .map(|n| format!(" {n}"))
        .unwrap_or_default();
    let replays = match launches {
        0 => String::new(),
        1 => ", launched once".into(),
        n => format!(", launched {n} times"),
    };
    let report = format!(
        "{var}.launch_n({launches})?; println!(\"%%graph{label}: {{}} step(s) captured on {{}}{replays}\", {var}.len(), {var}.device());"
    );
    Ok(Step::Rust(format!("{open}{capture}?; {report}{close}")))
}

/// `%%timeit --graph`: `body` captured once, the loop replaying it (see [`timeit`]).
pub(crate) fn timed_replays(opts: timeit::Options, body: &str, ctx: Context, sep: &str) -> String {
    let capture = capture_expr(body, sep);
    let note = "println!(\"%%timeit --graph: the code was captured once into a graph of {} step(s); each loop replays it\", __gk_graph.len());";
    let timing = timeit::timing_loop(opts, "__gk_graph.launch()?", ctx, " ");
    format!("{{ let __gk_graph: gpukit::Graph = {capture}?; {note} {timing} }}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    fn rust(step: Step) -> String {
        match step {
            Step::Rust(code) => code,
            other => panic!("not rust: {other:?}"),
        }
    }

    #[test]
    fn options() {
        assert_eq!(
            parse_options("").unwrap(),
            Options {
                name: None,
                launches: None
            }
        );
        assert_eq!(
            parse_options("step -n 3").unwrap(),
            Options {
                name: Some("step".into()),
                launches: Some(3)
            }
        );
        assert_eq!(parse_options("-n 0 g").unwrap().name.as_deref(), Some("g"));
        assert!(parse_options("-n")
            .unwrap_err()
            .0
            .contains("needs a number"));
        assert!(parse_options("-n x")
            .unwrap_err()
            .0
            .contains("whole number"));
        assert!(parse_options("--fast")
            .unwrap_err()
            .0
            .contains("unknown option"));
        assert!(parse_options("a b")
            .unwrap_err()
            .0
            .contains("one variable name"));
        assert!(parse_options("1a").is_err());
    }

    #[test]
    fn unnamed_graph_is_captured_launched_once_and_not_kept() {
        let code = rust(
            lower(
                "",
                "launch!(k[1, 32](&mut a, 2.0))?;\na.add_in_place(1.0)?;",
                GK,
            )
            .unwrap(),
        );
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 4, "{code}");
        assert_eq!(
            lines[0],
            "{ let __gk_graph: gpukit::Graph = gpukit::Graph::capture(|| -> gpukit::Result<()> {"
        );
        assert_eq!(lines[1], "launch!(k[1, 32](&mut a, 2.0))?;");
        assert_eq!(lines[2], "a.add_in_place(1.0)?;");
        assert!(
            lines[3].starts_with("Ok(()) })?; __gk_graph.launch_n(1)?;"),
            "{}",
            lines[3]
        );
        assert!(lines[3].contains("launched once"));
        assert!(lines[3].ends_with(" }"));
    }

    #[test]
    fn named_graph_is_a_session_variable_and_a_trailing_result_is_the_step() {
        let code = rust(lower("step", "a.fill(0.0)?;\nlaunch!(k[1, 32](&mut a))", GK).unwrap());
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 4, "{code}");
        assert!(lines[0].starts_with("let step: gpukit::Graph = gpukit::Graph::capture("));
        assert_eq!(
            lines[2],
            "gpukit::__private::GraphStep::into_step(launch!(k[1, 32](&mut a)))"
        );
        assert!(
            lines[3].starts_with("})?; step.launch_n(0)?;"),
            "{}",
            lines[3]
        );
        assert!(!lines[3].contains("launched"));
        let code = rust(lower("step -n 5", "a.fill(0.0)?;", GK).unwrap());
        assert!(code.contains("step.launch_n(5)?;") && code.contains("launched 5 times"));
    }

    #[test]
    fn bad_input() {
        assert!(lower("", " \n", GK).unwrap_err().0.contains("needs code"));
        assert!(lower("", "x();", Context { gpukit: false })
            .unwrap_err()
            .0
            .contains("needs gpukit"));
    }
}
