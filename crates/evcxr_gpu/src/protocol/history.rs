//! The kernel's input history, for `history_request` (Jupyter's `%history`, the console's up
//! arrow, `jupyter_kernel_test`): every stored execution's input and the text of its result.
//! One session per kernel process; it lives in memory and ends with the kernel.

use jupyter_protocol::{HistoryEntry, HistoryRequest};

/// The session number this kernel reports (history is per kernel process).
pub const SESSION: usize = 1;

/// Stored executions in order: (line number, input, text output).
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<(usize, String, String)>,
}

impl History {
    /// Records execution `line` (its execution count) with its input and text output.
    pub fn record(&mut self, line: usize, input: &str, output: &str) {
        self.entries
            .push((line, input.to_string(), output.to_string()));
    }

    /// The entries a request asks for, oldest first.
    pub fn answer(&self, req: &HistoryRequest) -> Vec<HistoryEntry> {
        let (picked, output): (Vec<&(usize, String, String)>, bool) = match req {
            HistoryRequest::Tail { n, output, .. } => {
                (last(self.entries.iter().collect(), *n), *output)
            }
            HistoryRequest::Range {
                session,
                start,
                stop,
                output,
                ..
            } => {
                let ours = session.is_none_or(|s| s <= 0 || s as usize == SESSION);
                let picked = self
                    .entries
                    .iter()
                    .filter(|(line, _, _)| {
                        ours && *line as i64 >= *start as i64
                            && (*stop <= 0 || (*line as i64) < *stop as i64)
                    })
                    .collect();
                (picked, *output)
            }
            HistoryRequest::Search {
                pattern,
                unique,
                n,
                output,
                ..
            } => {
                let mut hits: Vec<&(usize, String, String)> = self
                    .entries
                    .iter()
                    .filter(|(_, input, _)| glob_match(pattern, input))
                    .collect();
                if *unique {
                    let mut seen = std::collections::HashSet::new();
                    let mut kept: Vec<_> = hits
                        .into_iter()
                        .rev()
                        .filter(|(_, input, _)| seen.insert(input.clone()))
                        .collect();
                    kept.reverse();
                    hits = kept;
                }
                (last(hits, *n), *output)
            }
        };
        picked
            .into_iter()
            .map(|(line, input, out)| {
                if output {
                    HistoryEntry::InputOutput(SESSION, *line, (input.clone(), out.clone()))
                } else {
                    HistoryEntry::Input(SESSION, *line, input.clone())
                }
            })
            .collect()
    }
}

/// The last `n` of `items` (all of them when `n <= 0`).
fn last<T>(mut items: Vec<T>, n: i32) -> Vec<T> {
    if n > 0 && items.len() > n as usize {
        items.drain(..items.len() - n as usize);
    }
    items
}

/// Glob matching as IPython's history search does it: `*` any run, `?` any one character,
/// everything else literal, the whole input matched.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> History {
        let mut h = History::default();
        h.record(1, "6 * 7", "42");
        h.record(2, "let x = 1;", "");
        h.record(3, "6 * 7", "42");
        h
    }

    fn inputs(entries: Vec<HistoryEntry>) -> Vec<(usize, String)> {
        entries
            .into_iter()
            .map(|e| match e {
                HistoryEntry::Input(_, l, i) => (l, i),
                HistoryEntry::InputOutput(_, l, (i, _)) => (l, i),
            })
            .collect()
    }

    #[test]
    fn tail_range_and_search() {
        let h = sample();
        let tail = HistoryRequest::Tail {
            n: 2,
            output: false,
            raw: true,
        };
        assert_eq!(
            inputs(h.answer(&tail)),
            [(2, "let x = 1;".into()), (3, "6 * 7".into())]
        );
        let range = HistoryRequest::Range {
            session: Some(1),
            start: 2,
            stop: 3,
            output: false,
            raw: true,
        };
        assert_eq!(inputs(h.answer(&range)), [(2, "let x = 1;".into())]);
        let other = HistoryRequest::Range {
            session: Some(7),
            start: 1,
            stop: 9,
            output: false,
            raw: true,
        };
        assert!(h.answer(&other).is_empty());
        let search = |unique, n| HistoryRequest::Search {
            pattern: "6*7".into(),
            unique,
            output: false,
            raw: true,
            n,
        };
        assert_eq!(inputs(h.answer(&search(false, 0))).len(), 2);
        assert_eq!(inputs(h.answer(&search(true, 0))), [(3, "6 * 7".into())]);
        assert_eq!(inputs(h.answer(&search(false, 1))), [(3, "6 * 7".into())]);
        let with_output = HistoryRequest::Tail {
            n: 1,
            output: true,
            raw: true,
        };
        assert!(
            matches!(&h.answer(&with_output)[0], HistoryEntry::InputOutput(1, 3, (_, o)) if o == "42")
        );
    }

    #[test]
    fn globs_match_the_whole_input() {
        assert!(glob_match("6*7", "6 * 7"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("6*", "let x = 6"));
        assert!(!glob_match("abc", "abcd"));
    }
}
