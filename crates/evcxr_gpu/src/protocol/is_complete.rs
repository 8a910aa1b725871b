//! `is_complete_request`: whether a console should run the code or wait for more lines.

/// The answer for a piece of code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// Ready to run.
    Complete,
    /// Brackets or a string are still open.
    Incomplete,
    /// A closing bracket has no opening one.
    Invalid,
}

/// Decides completeness from brackets, strings and comments (magics and commands are complete).
pub fn check(code: &str) -> Completeness {
    let t = code.trim_start();
    if t.starts_with('%') || t.starts_with('!') || t.starts_with(':') {
        return Completeness::Complete;
    }
    let b: Vec<char> = code.chars().collect();
    let mut stack = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            '/' if b.get(i + 1) == Some(&'/') => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            '/' if b.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                    i += 1;
                }
                if i + 1 >= b.len() {
                    return Completeness::Incomplete;
                }
                i += 1;
            }
            '"' => {
                i += 1;
                while i < b.len() && b[i] != '"' {
                    if b[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Completeness::Incomplete;
                }
            }
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return Completeness::Invalid;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if stack.is_empty() {
        Completeness::Complete
    } else {
        Completeness::Incomplete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_strings_comments() {
        assert_eq!(check("let x = 1;"), Completeness::Complete);
        assert_eq!(check("fn f() {"), Completeness::Incomplete);
        assert_eq!(check("let s = \"abc"), Completeness::Incomplete);
        assert_eq!(check("let s = \"{\";"), Completeness::Complete);
        assert_eq!(check("// {\nlet x = 1;"), Completeness::Complete);
        assert_eq!(check("/* open"), Completeness::Incomplete);
        assert_eq!(check("let x = (1]);"), Completeness::Invalid);
        assert_eq!(check("%%cuda\n{"), Completeness::Complete);
    }
}
