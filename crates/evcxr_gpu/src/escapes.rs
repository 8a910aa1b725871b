//! Which lines of a cell are `%` magics and `!` shell commands: the ones that start a statement.
//!
//! Rust has no line structure, so a line beginning with `%` or `!` may be Rust: the middle of a
//! string (`"…\n!…"`, `r#"…"#`), a comment, the continuation of an expression (`let x = 10` then
//! `% 3;`, `let y =` then `!flag;`), or code inside a block. Like IPython, which looks at tokens
//! for the same reason, the kernel runs a small lexer over the cell. It knows strings (plain,
//! byte, C, raw with any number of `#`), char literals as opposed to lifetimes and labels, line
//! and nested block comments, and bracket depth, and it follows each top-level statement far
//! enough to know whether the last significant token ended it:
//!
//! * `;` ends any statement, and `]` an inner attribute (`#![…]`);
//! * the `}` that closes the outermost brace ends a statement that began with a block-like
//!   keyword (`fn`, `struct`, `enum`, `trait`, `impl`, `mod`, `if`, `else`, `match`, `loop`,
//!   `while`, `for`, after any attributes, labels and modifiers such as `pub`, `unsafe`, `const`,
//!   `extern "C"`), a bare block, or a brace macro (`m! { … }`, `macro_rules! m { … }`);
//! * any other statement (`let`, an expression, `S { … }`, `m!(…)`) continues until its `;`.
//!
//! A line is a magic or shell line when its first character (column 0) is `%` or `!`, it is at
//! bracket depth 0 outside any string or comment, and the previous statement has ended (or it is
//! the first statement). Its text is not lexed as Rust. evcxr `:` command lines at a statement
//! start are skipped the same way.
//!
//! So a `%` or `!` line right after an expression without `;` continues that expression, as Rust
//! reads it (`x` then `% 3` is `x % 3`): end the expression with `;` to put a magic after it.

/// How far the current top-level statement has got (only tokens at bracket depth 0 count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stmt {
    /// Nothing since the last statement ended: a `%` or `!` line here is a magic or command.
    Start,
    /// Only attributes, labels and modifiers (`pub`, `unsafe`, `extern "C"`, …) so far.
    Pending,
    /// The `#` of an attribute.
    Hash,
    /// `#!`: an inner attribute, a statement of its own that its `]` ends.
    Inner,
    /// A block-like statement: the `}` that closes its outermost brace ends it.
    Block,
    /// A path so far (`a`, `a::b`): a `!` next makes it a macro call.
    Path,
    /// A macro path and its `!` (and for `macro_rules!`, the name): `{` makes it a block.
    Bang,
    /// Anything else: it ends at `;`.
    Expr,
}

/// Keywords that start a statement ending with its outermost `}`.
const BLOCK_KEYWORDS: &[&str] = &[
    "fn", "struct", "enum", "trait", "impl", "mod", "if", "else", "match", "loop", "while", "for",
];

/// Keywords that may come before a block-like keyword (or a block) without deciding the kind.
const MODIFIERS: &[&str] = &["pub", "unsafe", "const", "static", "extern", "async"];

/// A significant token, as far as statements are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    /// An identifier or keyword (raw identifiers without their `r#`).
    Ident(&'a str),
    /// A lifetime or label (`'a`).
    Lifetime,
    /// A string, char or number literal.
    Literal,
    /// `(`, `[` or `{`.
    Open(char),
    /// `)`, `]` or `}`.
    Close(char),
    /// Any other punctuation character; `!` knows whether `=` follows it.
    Punct(char, Option<char>),
}

struct Lexer<'a> {
    chars: Vec<(usize, char)>,
    code: &'a str,
    depth: usize,
    stmt: Stmt,
}

impl<'a> Lexer<'a> {
    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|&(_, c)| c)
    }

    /// The index of the next `\n` at or after `i` (or the end).
    fn line_end(&self, mut i: usize) -> usize {
        while i < self.chars.len() && self.chars[i].1 != '\n' {
            i += 1;
        }
        i
    }

    /// Skips a block comment starting at `i` (on its `/*`); block comments nest in Rust.
    fn block_comment(&self, mut i: usize) -> usize {
        let mut nest = 0usize;
        while i < self.chars.len() {
            match (self.at(i), self.at(i + 1)) {
                (Some('/'), Some('*')) => {
                    nest += 1;
                    i += 2;
                }
                (Some('*'), Some('/')) => {
                    nest -= 1;
                    i += 2;
                    if nest == 0 {
                        return i;
                    }
                }
                _ => i += 1,
            }
        }
        i
    }

    /// Skips a quoted literal whose opening quote `q` is at `i`, honouring `\` escapes.
    fn quoted(&self, mut i: usize, q: char) -> usize {
        i += 1;
        while let Some(c) = self.at(i) {
            match c {
                '\\' => i += 2,
                c if c == q => return i + 1,
                _ => i += 1,
            }
        }
        self.chars.len()
    }

    /// Skips a raw string whose `#`s (possibly none) start at `i`, just after its `r`.
    /// Returns `None` when no `"` follows the `#`s (then it is a raw identifier, `r#name`).
    fn raw_string(&self, mut i: usize) -> Option<usize> {
        let mut hashes = 0;
        while self.at(i) == Some('#') {
            hashes += 1;
            i += 1;
        }
        if self.at(i) != Some('"') {
            return None;
        }
        i += 1;
        while i < self.chars.len() {
            if self.at(i) == Some('"') && (1..=hashes).all(|k| self.at(i + k) == Some('#')) {
                return Some(i + 1 + hashes);
            }
            i += 1;
        }
        Some(self.chars.len())
    }

    /// Lexes what starts at `'`: a char literal (`'a'`, `'\n'`, `'\u{1F600}'`) or a lifetime.
    fn quote(&self, i: usize) -> (usize, Tok<'a>) {
        match (self.at(i + 1), self.at(i + 2)) {
            (Some('\\'), _) => (self.quoted(i, '\''), Tok::Literal),
            (Some(c), Some('\'')) if c != '\n' => (i + 3, Tok::Literal),
            _ => {
                let mut j = i + 1;
                while self.at(j).is_some_and(is_ident_char) {
                    j += 1;
                }
                (j, Tok::Lifetime)
            }
        }
    }

    /// Lexes an identifier, keyword or prefixed literal (`b"…"`, `r#"…"#`, `b'x'`) at `i`.
    fn word(&self, i: usize) -> (usize, Tok<'a>) {
        let mut j = i;
        while self.at(j).is_some_and(is_ident_char) {
            j += 1;
        }
        let text = self.slice(i, j);
        let next = self.at(j);
        match (text, next) {
            ("b" | "c", Some('"')) => return (self.quoted(j, '"'), Tok::Literal),
            ("b", Some('\'')) => return (self.quoted(j, '\''), Tok::Literal),
            ("r" | "br" | "cr", Some('"' | '#')) => {
                if let Some(end) = self.raw_string(j) {
                    return (end, Tok::Literal);
                }
                if text == "r" {
                    // A raw identifier: `r#type`.
                    let mut k = j + 1;
                    while self.at(k).is_some_and(is_ident_char) {
                        k += 1;
                    }
                    return (k, Tok::Ident(self.slice(j + 1, k)));
                }
            }
            _ => {}
        }
        (j, Tok::Ident(text))
    }

    /// Lexes a number (`1`, `1.5e3`, `0xff_u8`) at `i`; `1..2` stops before the `..`.
    fn number(&self, i: usize) -> usize {
        let mut j = i;
        loop {
            match self.at(j) {
                Some(c) if is_ident_char(c) => j += 1,
                Some('.') if self.at(j + 1).is_some_and(|c| c.is_ascii_digit()) => j += 1,
                _ => return j,
            }
        }
    }

    fn slice(&self, from: usize, to: usize) -> &'a str {
        let start = self.chars.get(from).map_or(self.code.len(), |&(b, _)| b);
        let end = self.chars.get(to).map_or(self.code.len(), |&(b, _)| b);
        &self.code[start..end]
    }

    /// Advances the statement state over one token.
    fn token(&mut self, tok: Tok<'_>) {
        match tok {
            Tok::Open(c) => {
                if self.depth == 0 {
                    self.stmt = match (self.stmt, c) {
                        (Stmt::Start | Stmt::Pending | Stmt::Bang, '{') => Stmt::Block,
                        (Stmt::Pending, _) | (Stmt::Hash, '[') => Stmt::Pending,
                        (Stmt::Inner, '[') => Stmt::Inner,
                        (Stmt::Block, _) => Stmt::Block,
                        _ => Stmt::Expr,
                    };
                }
                self.depth += 1;
            }
            Tok::Close(c) => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0
                    && (c == '}' && self.stmt == Stmt::Block
                        || c == ']' && self.stmt == Stmt::Inner)
                {
                    self.stmt = Stmt::Start;
                }
            }
            _ if self.depth > 0 => {}
            Tok::Punct(';', _) => self.stmt = Stmt::Start,
            tok => {
                self.stmt = match (self.stmt, tok) {
                    (Stmt::Start | Stmt::Pending, Tok::Ident(w)) if BLOCK_KEYWORDS.contains(&w) => {
                        Stmt::Block
                    }
                    (Stmt::Start | Stmt::Pending, Tok::Ident(w)) if MODIFIERS.contains(&w) => {
                        Stmt::Pending
                    }
                    (Stmt::Start, Tok::Ident(_)) => Stmt::Path,
                    (Stmt::Start | Stmt::Pending, Tok::Punct('#', _)) => Stmt::Hash,
                    (Stmt::Hash, Tok::Punct('!', _)) => Stmt::Inner,
                    (Stmt::Start | Stmt::Pending, Tok::Lifetime) => Stmt::Pending,
                    (Stmt::Pending, Tok::Literal | Tok::Punct(':', _)) => Stmt::Pending,
                    (Stmt::Path, Tok::Ident(_) | Tok::Punct(':', _)) => Stmt::Path,
                    (Stmt::Path, Tok::Punct('!', next)) if next != Some('=') => Stmt::Bang,
                    (Stmt::Bang, Tok::Ident(_)) => Stmt::Bang,
                    (Stmt::Block, _) => Stmt::Block,
                    _ => Stmt::Expr,
                };
            }
        }
    }

    /// Runs over the whole cell; returns for each line whether it is a magic or shell line.
    fn run(mut self) -> Vec<bool> {
        let mut escapes = vec![false; self.code.split('\n').count()];
        let mut line = 0;
        let mut i = 0;
        let mut line_start = true;
        while i < self.chars.len() {
            if std::mem::take(&mut line_start) && self.depth == 0 && self.stmt == Stmt::Start {
                let mut j = i;
                while self.at(j) == Some(' ') {
                    j += 1;
                }
                let command = self.at(j) == Some(':') && self.at(j + 1) != Some(':');
                if matches!(self.at(i), Some('%' | '!')) || command {
                    escapes[line] = !command;
                    i = self.line_end(i);
                    continue;
                }
            }
            let c = self.chars[i].1;
            let (next, tok) = match c {
                '\n' => {
                    line_start = true;
                    (i + 1, None)
                }
                c if c.is_whitespace() => (i + 1, None),
                '/' if self.at(i + 1) == Some('/') => (self.line_end(i), None),
                '/' if self.at(i + 1) == Some('*') => (self.block_comment(i), None),
                '"' => (self.quoted(i, '"'), Some(Tok::Literal)),
                '\'' => {
                    let (end, tok) = self.quote(i);
                    (end, Some(tok))
                }
                c if c.is_ascii_digit() => (self.number(i), Some(Tok::Literal)),
                c if is_ident_char(c) => {
                    let (end, tok) = self.word(i);
                    (end, Some(tok))
                }
                '(' | '[' | '{' => (i + 1, Some(Tok::Open(c))),
                ')' | ']' | '}' => (i + 1, Some(Tok::Close(c))),
                c => (i + 1, Some(Tok::Punct(c, self.at(i + 1)))),
            };
            let next = next.min(self.chars.len());
            // Counts every newline passed, including those inside strings and comments.
            line += self.chars[i..next]
                .iter()
                .filter(|&&(_, c)| c == '\n')
                .count();
            if let Some(tok) = tok {
                self.token(tok);
            }
            i = next;
        }
        escapes
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// For each line of `cell` (split at `\n`), whether it is a `%` magic or `!` shell line: it
/// starts with `%` or `!` in column 0 where a new top-level statement may start (see the module
/// documentation), not inside a string, a comment, brackets or an unfinished statement.
pub fn escape_lines(cell: &str) -> Vec<bool> {
    Lexer {
        chars: cell.char_indices().collect(),
        code: cell,
        depth: 0,
        stmt: Stmt::Start,
    }
    .run()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indices of the magic and shell lines of `cell`.
    fn marked(cell: &str) -> Vec<usize> {
        let e = escape_lines(cell);
        assert_eq!(e.len(), cell.split('\n').count());
        e.iter()
            .enumerate()
            .filter(|(_, &m)| m)
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn statement_starts_are_marked() {
        assert_eq!(marked("%lsmagic"), vec![0]);
        assert_eq!(marked("!ls\n%gpu\n!pwd"), vec![0, 1, 2]);
        assert_eq!(marked("let a = 1;\n!ls\nlet b = 2;\n%time a"), vec![1, 3]);
        assert_eq!(marked(""), Vec::<usize>::new());
    }

    #[test]
    fn strings_of_every_kind_hide_their_lines() {
        for cell in [
            "let s = \"\n!a\";\n!ls",
            "let s = \"\\\"\n!a\";\n!ls",
            "let s = b\"\n!a\";\n!ls",
            "let s = c\"\n!a\";\n!ls",
            "let s = r\"\n!a\";\n!ls",
            "let s = r#\"\"\n!a\"#;\n!ls",
            "let s = br###\"\"##\n!a\"###;\n!ls",
            "let s = cr#\"\n!a\"#;\n!ls",
        ] {
            assert_eq!(marked(cell), vec![2], "{cell:?}");
        }
    }

    #[test]
    fn chars_are_not_lifetimes_and_lifetimes_are_not_chars() {
        assert_eq!(marked("let q = '\"';\n!ls"), vec![1]);
        assert_eq!(marked("let q = b'\"';\n!ls"), vec![1]);
        assert_eq!(marked("let q = '\\'';\n!ls"), vec![1]);
        assert_eq!(marked("let q = '\\u{22}';\n!ls"), vec![1]);
        assert_eq!(marked("let q = 'é';\n!ls"), vec![1]);
        assert_eq!(
            marked("fn f<'a>(s: &'a str) -> &'a str { s }\n!ls\nlet s = \"\n!x\";"),
            vec![1]
        );
        assert_eq!(marked("'outer: loop { break 'outer; }\n!ls"), vec![1]);
        assert_eq!(marked("let r#type = 1;\n!ls"), vec![1]);
    }

    #[test]
    fn comments_hide_their_lines() {
        assert_eq!(marked("// \"\n!ls"), vec![1]);
        assert_eq!(marked("/* /* */\n!a */\n!ls"), vec![2]);
        assert_eq!(marked("/* unterminated\n!a"), Vec::<usize>::new());
    }

    #[test]
    fn unfinished_statements_continue() {
        assert_eq!(marked("let x = 10\n% 3;"), Vec::<usize>::new());
        assert_eq!(marked("let y = a &&\n!b;"), Vec::<usize>::new());
        assert_eq!(marked("let p = P { x: 1 }\n!= q;"), Vec::<usize>::new());
        assert_eq!(
            marked("x = if a { 1 } else { 2 }\n% 3;"),
            Vec::<usize>::new()
        );
        assert_eq!(marked("println!(\"a\")\n!= ();"), Vec::<usize>::new());
        assert_eq!(marked("a != b\n!ls"), Vec::<usize>::new());
        assert_eq!(marked("f(\n!x)"), Vec::<usize>::new());
        assert_eq!(marked("fn f() {\n%lsmagic\n}"), Vec::<usize>::new());
        assert_eq!(marked("let s = \"unterminated\n!ls"), Vec::<usize>::new());
        assert_eq!(marked("#[derive(Debug)]\n!ls"), Vec::<usize>::new());
    }

    #[test]
    fn block_like_statements_end_at_their_brace() {
        for cell in [
            "fn f() -> [u8; 2] { [1; 2] }\n!ls",
            "pub(crate) struct S { a: u8 }\n!ls",
            "#[derive(Debug)]\n#[allow(dead_code)]\nenum E { A, B }\n!ls",
            "#![allow(unused)]\n!ls",
            "impl S { fn g(&self) {} }\n!ls",
            "unsafe extern \"C\" fn h() {}\n!ls",
            "if a { b() } else if c { d() } else { e() }\n!ls",
            "for i in 0..3 { println!(\"{i}\"); }\n!ls",
            "while x < 3 { x += 1; }\n!ls",
            "match x { 1 => {} _ => {} }\n!ls",
            "{ let t = 1; }\n!ls",
            "unsafe { f() }\n!ls",
            "macro_rules! m { ($e:expr) => { $e }; }\n!ls",
            "thread_local! { static X: u8 = 0; }\n!ls",
            "struct U;\n!ls",
            "use std::{fmt, io};\n!ls",
            ";\n!ls",
        ] {
            let last = cell.split('\n').count() - 1;
            assert_eq!(marked(cell), vec![last], "{cell:?}");
        }
    }

    #[test]
    fn evcxr_commands_are_skipped_at_statement_starts() {
        assert_eq!(marked(":dep foo = { version = \"1\" }\n!ls"), vec![1]);
        assert_eq!(marked("  :vars\n%lsmagic"), vec![1]);
        assert_eq!(marked(":dep it's\n!ls"), vec![1]);
        assert_eq!(marked("::std::mem::drop(1)\n!= 2;"), Vec::<usize>::new());
    }

    #[test]
    fn magic_lines_are_not_lexed() {
        assert_eq!(marked("!echo \"it's {\n!ls"), vec![0, 1]);
        assert_eq!(marked("%time f(\"(\")\n%gpu"), vec![0, 1]);
    }

    #[test]
    fn only_column_zero_counts() {
        assert_eq!(marked("let a = 1;\n  !ls\n\t%gpu"), Vec::<usize>::new());
    }
}
