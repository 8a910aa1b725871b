//! `history_request`: the cells executed in this kernel process, as IPython answers it.
//!
//! The kernel keeps the cells run with `store_history` in memory, numbered by execution count, in
//! session 1 (a restarted kernel is a new process and starts with an empty history). The three
//! access types are served: `tail` (the last `n`), `range` (lines `start..stop` of a session;
//! `stop` 0 means to the end) and `search` (a glob pattern over the whole input, `*`, `?` and
//! `[...]` as in SQLite's GLOB, which IPython uses; `unique` keeps the latest of equal inputs and
//! `n` the last `n` matches). With `output`, each entry carries the `text/plain` of the cell's
//! result (empty if it had none).

use jupyter_protocol::{HistoryEntry, HistoryRequest};

/// The number of this kernel process's history session.
pub const SESSION: usize = 1;

/// One executed cell.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    line: usize,
    input: String,
    output: String,
}

/// The history of this kernel process.
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<Entry>,
}

impl History {
    /// Records cell `line` (its execution count) with its input and `text/plain` result.
    pub fn record(&mut self, line: usize, input: &str, output: &str) {
        self.entries.push(Entry {
            line,
            input: input.to_string(),
            output: output.to_string(),
        });
    }

    /// The entries a request asks for, oldest first.
    pub fn answer(&self, request: &HistoryRequest) -> Vec<HistoryEntry> {
        let (picked, output): (Vec<&Entry>, bool) = match request {
            HistoryRequest::Tail { n, output, .. } => {
                let n = usize::try_from(*n).unwrap_or(0);
                let skip = self.entries.len().saturating_sub(n);
                (self.entries.iter().skip(skip).collect(), *output)
            }
            HistoryRequest::Range {
                session,
                start,
                stop,
                output,
                ..
            } => {
                // Positive: an absolute session number; zero or negative: relative to this one.
                let this = match session {
                    None | Some(0) => true,
                    Some(s) if *s > 0 => *s as usize == SESSION,
                    Some(_) => false,
                };
                let picked = if this {
                    self.entries
                        .iter()
                        .filter(|e| {
                            e.line as i64 >= i64::from(*start)
                                && (*stop <= 0 || (e.line as i64) < i64::from(*stop))
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                (picked, *output)
            }
            HistoryRequest::Search {
                pattern,
                unique,
                output,
                n,
                ..
            } => {
                let pattern: Vec<char> = pattern.chars().collect();
                let mut picked: Vec<&Entry> = self
                    .entries
                    .iter()
                    .filter(|e| glob_match(&pattern, &e.input.chars().collect::<Vec<_>>()))
                    .collect();
                if *unique {
                    let mut seen = std::collections::HashSet::new();
                    let mut latest_first: Vec<&Entry> = picked
                        .into_iter()
                        .rev()
                        .filter(|e| seen.insert(e.input.as_str()))
                        .collect();
                    latest_first.reverse();
                    picked = latest_first;
                }
                if let Ok(n) = usize::try_from(*n) {
                    if n > 0 && picked.len() > n {
                        picked.drain(..picked.len() - n);
                    }
                }
                (picked, *output)
            }
        };
        picked
            .into_iter()
            .map(|e| {
                if output {
                    HistoryEntry::InputOutput(SESSION, e.line, (e.input.clone(), e.output.clone()))
                } else {
                    HistoryEntry::Input(SESSION, e.line, e.input.clone())
                }
            })
            .collect()
    }
}

/// Fills in what clients may leave out of a `history_request` (jupyter_client sends a search
/// without `n` and `unique`, a range without `stop`), as IPython's defaults do.
pub fn complete_request(content: &mut serde_json::Value) {
    let Some(map) = content.as_object_mut() else {
        return;
    };
    let defaults: &[(&str, serde_json::Value)] = &[
        ("output", false.into()),
        ("raw", true.into()),
        ("session", 0.into()),
        ("start", 0.into()),
        ("stop", 0.into()),
        (
            "n",
            if map.get("hist_access_type").and_then(|t| t.as_str()) == Some("tail") {
                10.into()
            } else {
                0.into()
            },
        ),
        ("unique", false.into()),
        ("pattern", "*".into()),
    ];
    for (key, value) in defaults {
        if map.get(*key).is_none_or(|v| v.is_null()) {
            map.insert(key.to_string(), value.clone());
        }
    }
}

/// Whether `text` matches the glob `pattern` as a whole (`*`, `?`, `[abc]`, `[a-z]`, `[^...]`).
pub fn glob_match(pattern: &[char], text: &[char]) -> bool {
    // Iterative matching with backtracking to the last `*`.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() {
            match pattern[p] {
                '*' => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                '?' => {
                    p += 1;
                    t += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = class(pattern, p, text[t]) {
                        if matched {
                            p = next;
                            t += 1;
                            continue;
                        }
                    } else if text[t] == '[' {
                        // An unclosed `[` is a literal.
                        p += 1;
                        t += 1;
                        continue;
                    }
                }
                c if c == text[t] => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// Whether `c` is in the class starting at `pattern[open] == '['`, and the index after it;
/// `None` if the class is not closed.
fn class(pattern: &[char], open: usize, c: char) -> Option<(bool, usize)> {
    let mut i = open + 1;
    let negate = pattern.get(i) == Some(&'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pattern.len() {
        let x = pattern[i];
        if x == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|&e| e != ']') {
            if (x..=pattern[i + 2]).contains(&c) {
                matched = true;
            }
            i += 3;
        } else {
            if x == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str, t: &str) -> bool {
        glob_match(
            &p.chars().collect::<Vec<_>>(),
            &t.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn globs_match_the_whole_input() {
        assert!(glob("6 *", "6 * 7"));
        assert!(!glob("6 *", "16 * 7"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc") && !glob("a?c", "ac"));
        assert!(glob("[a-c]x", "bx") && !glob("[a-c]x", "dx"));
        assert!(glob("[^a-c]x", "dx") && !glob("[^a-c]x", "ax"));
        assert!(glob("[]]", "]"));
        assert!(glob("*let*=*", "let x = 1;"));
        assert!(glob("[abc", "[abc"));
        assert!(!glob("abc", "abcd") && !glob("abcd", "abc"));
    }

    fn history() -> History {
        let mut h = History::default();
        for (i, (input, out)) in [
            ("6 * 7", "42"),
            ("let a = 1;", ""),
            ("6 * 7", "42"),
            ("a", "1"),
        ]
        .iter()
        .enumerate()
        {
            h.record(i + 1, input, out);
        }
        h
    }

    fn lines(entries: &[HistoryEntry]) -> Vec<usize> {
        entries
            .iter()
            .map(|e| match e {
                HistoryEntry::Input(_, l, _) | HistoryEntry::InputOutput(_, l, _) => *l,
            })
            .collect()
    }

    #[test]
    fn tail_range_and_search() {
        let h = history();
        let tail = h.answer(&HistoryRequest::Tail {
            n: 2,
            output: true,
            raw: true,
        });
        assert_eq!(lines(&tail), [3, 4]);
        match &tail[1] {
            HistoryEntry::InputOutput(s, 4, (i, o)) => {
                assert_eq!((*s, i.as_str(), o.as_str()), (SESSION, "a", "1"))
            }
            other => panic!("{other:?}"),
        }
        assert!(h
            .answer(&HistoryRequest::Tail {
                n: 0,
                output: false,
                raw: true
            })
            .is_empty());
        let range = |session, start, stop| {
            lines(&h.answer(&HistoryRequest::Range {
                session,
                start,
                stop,
                output: false,
                raw: true,
            }))
        };
        assert_eq!(range(Some(1), 2, 3), [2]);
        assert_eq!(range(Some(0), 2, 0), [2, 3, 4]);
        assert_eq!(range(None, 0, 0), [1, 2, 3, 4]);
        assert!(range(Some(2), 0, 0).is_empty() && range(Some(-1), 0, 0).is_empty());
        let search = |pattern: &str, unique, n| {
            lines(&h.answer(&HistoryRequest::Search {
                pattern: pattern.into(),
                unique,
                output: false,
                raw: true,
                n,
            }))
        };
        assert_eq!(search("6 *", false, 0), [1, 3]);
        assert_eq!(search("6 *", true, 0), [3]);
        assert_eq!(search("*", false, 3), [2, 3, 4]);
        assert_eq!(search("*", true, 0), [2, 3, 4]);
        assert!(search("nothing", false, 0).is_empty());
    }

    #[test]
    fn requests_missing_optional_fields_are_completed() {
        let mut search = serde_json::json!({"hist_access_type": "search", "pattern": "6*", "raw": true, "output": false});
        complete_request(&mut search);
        let r: HistoryRequest = serde_json::from_value(search).unwrap();
        assert!(matches!(
            r,
            HistoryRequest::Search {
                n: 0,
                unique: false,
                ..
            }
        ));
        let mut range = serde_json::json!({"hist_access_type": "range", "session": 0, "start": 2});
        complete_request(&mut range);
        let r: HistoryRequest = serde_json::from_value(range).unwrap();
        assert!(matches!(
            r,
            HistoryRequest::Range {
                start: 2,
                stop: 0,
                raw: true,
                ..
            }
        ));
        let mut tail = serde_json::json!({"hist_access_type": "tail", "n": null});
        complete_request(&mut tail);
        let r: HistoryRequest = serde_json::from_value(tail).unwrap();
        assert!(matches!(r, HistoryRequest::Tail { n: 10, .. }));
        let mut odd = serde_json::json!([1]);
        complete_request(&mut odd);
        assert_eq!(odd, serde_json::json!([1]));
    }
}
