//! `%%timeit [-n N] [-r R] [--graph]` and `%timeit [-n N] [-r R] [--graph] STATEMENT`:
//! IPython-style timing.
//!
//! The code runs `N` loops per run and `R` runs (default: `N` grows 1, 2, 5, 10, ... until a run
//! takes 0.2 s; `R` = 7), synchronising the device after every loop, and the report reads
//! `1.23 ms ± 4.56 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)`. With `--graph`
//! the code is captured once into a `gpukit::Graph` (see `%%graph`) and each loop replays it.

use super::time::FMT_TIME;
use super::{graph, require_gpukit, Context, MagicError, Step};

/// Parsed `-n`/`-r`/`--graph` options; `loops == None` means calibrate automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Loops per run (`-n`).
    pub loops: Option<u64>,
    /// Runs (`-r`).
    pub runs: u64,
    /// Capture the code once into a graph and time its replays (`--graph`).
    pub graph: bool,
}

fn positive(flag: &str, v: Option<&str>) -> Result<u64, MagicError> {
    let v = v.ok_or_else(|| MagicError(format!("timeit: {flag} needs a number")))?;
    match v.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(MagicError(format!(
            "timeit: {flag} needs a positive whole number, got `{v}`"
        ))),
    }
}

/// Parses leading options; returns them and the rest of the text (the statement, for `%timeit`).
pub fn parse_options(args: &str) -> Result<(Options, String), MagicError> {
    let mut opts = Options {
        loops: None,
        runs: 7,
        graph: false,
    };
    let mut rest = args.trim_start();
    loop {
        let (tok, after) = rest
            .split_once(char::is_whitespace)
            .map(|(a, b)| (a, b.trim_start()))
            .unwrap_or((rest, ""));
        match tok {
            "--graph" => {
                opts.graph = true;
                rest = after;
            }
            "-n" | "-r" => {
                let (val, after2) = after
                    .split_once(char::is_whitespace)
                    .map(|(a, b)| (a, b.trim_start()))
                    .unwrap_or((after, ""));
                let n = positive(tok, (!val.is_empty()).then_some(val))?;
                if tok == "-n" {
                    opts.loops = Some(n);
                } else {
                    opts.runs = n;
                }
                rest = after2;
            }
            t if t.starts_with('-')
                && t.len() > 1
                && !t[1..].starts_with(|c: char| c.is_ascii_digit()) =>
            {
                return Err(MagicError(format!(
                    "timeit: unknown option `{t}` (use -n LOOPS, -r RUNS and --graph)"
                )))
            }
            _ => return Ok((opts, rest.trim().to_string())),
        }
    }
}

/// Builds the timed code for `body`, pieces joined by `sep` (a newline keeps cell lines): the
/// timing loop around it, or with `--graph` its capture and the loop around the replays.
fn lower_body(opts: Options, body: &str, ctx: Context, sep: &str) -> Result<String, MagicError> {
    if opts.graph {
        require_gpukit("timeit --graph", ctx)?;
        return Ok(graph::timed_replays(opts, body, ctx, sep));
    }
    Ok(timing_loop(opts, body, ctx, sep))
}

/// The timing loop around `body`, pieces joined by `sep`.
pub(crate) fn timing_loop(opts: Options, body: &str, ctx: Context, sep: &str) -> String {
    let n = opts.loops.unwrap_or(0);
    let r = opts.runs;
    let sync = if ctx.gpukit {
        " gpukit::synchronize()?;"
    } else {
        ""
    };
    let head = format!(
        "{{ let __gk_n: u64 = {n}; let __gk_r: usize = {r}; let mut __gk_loops: u64 = if __gk_n > 0 {{ __gk_n }} else {{ 1 }}; let mut __gk_calibrating = __gk_n == 0; let mut __gk_times: Vec<f64> = Vec::new(); while __gk_times.len() < __gk_r {{ let __gk_start = std::time::Instant::now(); for _ in 0..__gk_loops {{ let _ = {{"
    );
    let tail = format!(
        "}};{sync} }} let __gk_e = __gk_start.elapsed().as_secs_f64(); if __gk_calibrating {{ if __gk_e < 0.2 && __gk_loops < 1_000_000_000 {{ __gk_loops = if __gk_loops.to_string().starts_with('2') {{ __gk_loops / 2 * 5 }} else {{ __gk_loops * 2 }}; continue; }} __gk_calibrating = false; }} __gk_times.push(__gk_e / __gk_loops as f64); }} {FMT_TIME} let __gk_mean = __gk_times.iter().sum::<f64>() / __gk_times.len() as f64; let __gk_std = (__gk_times.iter().map(|t| (t - __gk_mean).powi(2)).sum::<f64>() / __gk_times.len() as f64).sqrt(); println!(\"{{}} ± {{}} per loop (mean ± std. dev. of {{}} run{{}}, {{}} loop{{}} each)\", __gk_fmt(__gk_mean), __gk_fmt(__gk_std), __gk_r, if __gk_r == 1 {{ \"\" }} else {{ \"s\" }}, __gk_loops, if __gk_loops == 1 {{ \"\" }} else {{ \"s\" }}); }}"
    );
    format!("{head}{sep}{body}{sep}{tail}")
}

/// Lowers `%%timeit [-n N] [-r R]` with the cell body.
pub fn lower_cell(args: &str, body: &str, ctx: Context) -> Result<Step, MagicError> {
    let (opts, rest) = parse_options(args)?;
    if !rest.is_empty() {
        return Err(MagicError(format!(
            "%%timeit takes only -n, -r and --graph on its line, got `{rest}`; put the code below"
        )));
    }
    if body.trim().is_empty() {
        return Err(MagicError(
            "%%timeit needs code below the magic line".into(),
        ));
    }
    Ok(Step::Rust(lower_body(opts, body, ctx, "\n")?))
}

/// Lowers `%timeit [-n N] [-r R] STATEMENT`.
pub fn lower_line(args: &str, ctx: Context) -> Result<Step, MagicError> {
    let (opts, stmt) = parse_options(args)?;
    if stmt.is_empty() {
        return Err(MagicError(
            "%timeit needs a statement: %timeit [-n N] [-r R] EXPR".into(),
        ));
    }
    Ok(Step::Rust(lower_body(opts, &stmt, ctx, " ")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GK: Context = Context { gpukit: true };

    #[test]
    fn options() {
        let (o, rest) = parse_options("-n 10 -r 3").unwrap();
        assert_eq!(
            o,
            Options {
                loops: Some(10),
                runs: 3,
                graph: false
            }
        );
        assert_eq!(rest, "");
        let (o, rest) = parse_options("-r 2 a.sum()").unwrap();
        assert_eq!(
            o,
            Options {
                loops: None,
                runs: 2,
                graph: false
            }
        );
        assert_eq!(rest, "a.sum()");
        let (o, rest) = parse_options("").unwrap();
        assert_eq!(
            o,
            Options {
                loops: None,
                runs: 7,
                graph: false
            }
        );
        assert_eq!(rest, "");
        let (_, rest) = parse_options("-1.0f64.abs()").unwrap();
        assert_eq!(rest, "-1.0f64.abs()");
    }

    #[test]
    fn bad_options() {
        assert!(parse_options("-n")
            .unwrap_err()
            .0
            .contains("needs a number"));
        assert!(parse_options("-n 0").unwrap_err().0.contains("positive"));
        assert!(parse_options("-r x").unwrap_err().0.contains("positive"));
        assert!(parse_options("-q 3")
            .unwrap_err()
            .0
            .contains("unknown option `-q`"));
        assert!(lower_cell("-n 2 extra", "x", GK)
            .unwrap_err()
            .0
            .contains("only -n, -r and --graph"));
        assert!(lower_cell("", "", GK).unwrap_err().0.contains("needs code"));
        assert!(lower_line("-n 3", GK)
            .unwrap_err()
            .0
            .contains("needs a statement"));
    }

    #[test]
    fn cell_lowering_keeps_body_lines_and_syncs_each_loop() {
        let Step::Rust(code) = lower_cell("-n 5 -r 2", "let x = 1;\nx + 1", GK).unwrap() else {
            panic!("not rust")
        };
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains("let __gk_n: u64 = 5; let __gk_r: usize = 2;"));
        assert_eq!(lines[1], "let x = 1;");
        assert_eq!(lines[2], "x + 1");
        assert!(lines[3].starts_with("}; gpukit::synchronize()?; }"));
        assert!(lines[3].contains("mean ± std. dev. of"));
    }

    #[test]
    fn graph_option_captures_once_and_times_replays() {
        let (o, rest) = parse_options("--graph -n 100 launch!(k[1, 1]())?").unwrap();
        assert!(o.graph && o.loops == Some(100));
        assert_eq!(rest, "launch!(k[1, 1]())?");
        let Step::Rust(code) = lower_cell(
            "-r 3 --graph",
            "a.add_in_place(1.0)?;
launch!(k[1, 32](&mut a))",
            GK,
        )
        .unwrap() else {
            panic!("not rust")
        };
        let lines: Vec<&str> = code.lines().collect();
        assert_eq!(lines.len(), 4, "{code}");
        assert_eq!(
            lines[0],
            "{ let __gk_graph: gpukit::Graph = gpukit::Graph::capture(|| -> gpukit::Result<()> {"
        );
        assert_eq!(lines[1], "a.add_in_place(1.0)?;");
        assert_eq!(
            lines[2],
            "gpukit::__private::GraphStep::into_step(launch!(k[1, 32](&mut a)))"
        );
        // captured once, before the loop; each loop replays and synchronises
        assert!(
            lines[3].starts_with("})?; println!(\"%%timeit --graph:"),
            "{}",
            lines[3]
        );
        assert!(lines[3].contains("let __gk_r: usize = 3;"));
        assert!(lines[3].contains("let _ = { __gk_graph.launch()? }; gpukit::synchronize()?;"));
        assert!(lines[3].ends_with(" }"));
        let Step::Rust(code) = lower_line("--graph -n 5 a.fill(1.0)?", GK).unwrap() else {
            panic!("not rust")
        };
        assert_eq!(code.lines().count(), 1);
        assert!(lower_line("--graph f()", Context { gpukit: false })
            .unwrap_err()
            .0
            .contains("needs gpukit"));
    }

    #[test]
    fn line_lowering_is_one_line() {
        let Step::Rust(code) = lower_line("-n 1 -r 1 f()", GK).unwrap() else {
            panic!("not rust")
        };
        assert_eq!(code.lines().count(), 1);
        assert!(code.contains("let _ = { f() };"));
    }
}
